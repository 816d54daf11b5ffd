// SPDX-License-Identifier: Apache-2.0
/*
 * `hutch pool serve --name NAME --profile FILE -n N`: the only daemon hutch has, run by the
 * operator in the foreground. It keeps N sandboxes made ahead, each by a supervisor of its own
 * (a child in its own process group running the sandbox recipe with o->pool_slot set), hands
 * each root client's connection to a ready one and makes a replacement at once. Its socket is
 * ROOT/.sandbox/pools/NAME.sock (a 0700 directory of root's); every peer is checked with
 * SO_PEERCRED. SIGTERM or SIGINT: the socket goes, and every supervisor, told by the end of its
 * channel, kills and tears down its sandbox before the pool exits.
 */
#include "rt-sandbox-pool.h"
#include "hutch-ids.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#define POOL_MAX 64	   /* -n */
#define POOL_RETRY_MS 1000 /* after a supervisor failed before it was ready */
#define POOL_HELD 64
/* A replacement is made this long after its sandbox went to a request: on a small machine
 * making one would compete with that request's start for the CPUs. */
#define POOL_DEFER_MS 20

struct sup {
	pid_t pid;
	int chan;
	bool ready, busy;
	double handed_at; /* when it got its client */
	bool replaced;	  /* busy, and its replacement made (or due) */
};

struct pool {
	const char *name;
	struct rt_global *g;
	struct rt_sb_opts *o;
	int listen_fd;
	struct sup *s; /* every live supervisor: n_idle of them not busy */
	size_t n, n_idle, want;
	int held[POOL_HELD];  /* refused clients' connections, until they close (or -1) */
	int failures;	      /* in a row, before any was ready */
	bool any_ready, full; /* full: every one ready, said on stdout */
	double retry_at;
};

/* The supervisor: stdio /dev/null (the init inherits it; the command gets the client's), its
 * own process group (the operator's ^C is the pool's), errors to the pool on chan. */
static __attribute__((noreturn)) void supervise(struct pool *pl, int chan)
{
	struct hutch_err err = { 0 };
	int null = open("/dev/null", O_RDWR);
	for (int i = 0; i < 3 && null >= 0; i++)
		dup2(null, i);
	setpgid(0, 0);
	signal(SIGINT, SIG_IGN); /* the channel's end says when to stop */
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	struct rt_sb_pool_slot slot = { .pool = pl->name,
					.chan = chan,
					.conn = -1,
					.hangup = { chan, -1, -1 },
					.o = pl->o,
					.shape = rt_sb_pool_shape(pl->o) };
	pl->o->pool_slot = &slot;
	int r = rt_sandbox_run(pl->g, pl->o, NULL, &err);
	if (slot.conn >= 0)
		rt_sb_pool_reply(slot.conn, NULL, 'X',
				 r < 0 ? (err.status ? err.status : RT_SB_EXIT_FAIL) : r,
				 r < 0 ? &err : NULL);
	else if (r < 0 && err.code != ECANCELED)
		(void)!write(chan, &err, sizeof(err));
	_exit(r < 0);
}

static int spawn(struct pool *pl, struct hutch_err *err)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return hutch_fail_errno(err, errno, "pool: socketpair");
	pid_t pid = fork();
	if (pid == 0) {
		close(sv[0]);
		close(pl->listen_fd);
		for (size_t i = 0; i < pl->n; i++)
			close(pl->s[i].chan);
		sigset_t all;
		sigfillset(&all);
		sigprocmask(SIG_UNBLOCK, &all, NULL);
		supervise(pl, sv[1]);
	}
	close(sv[1]);
	if (pid < 0) {
		close(sv[0]);
		return hutch_fail_errno(err, errno, "pool: fork");
	}
	pl->s = hutch_xrealloc(pl->s, (pl->n + 1) * sizeof(*pl->s));
	pl->s[pl->n++] = (struct sup){ .pid = pid, .chan = sv[0] };
	pl->n_idle++;
	return 0;
}

/* A supervisor's channel: 'R' (ready), its error, or its end. */
static void on_chan(struct pool *pl, size_t i)
{
	struct sup *s = &pl->s[i];
	struct hutch_err e = { 0 };
	ssize_t n = recv(s->chan, &e, sizeof(e), MSG_DONTWAIT);
	if (n == 1 && ((char *)&e)[0] == 'R') {
		s->ready = pl->any_ready = true;
		pl->failures = 0;
		if (s->busy) /* the request did not fit: it ran cold, this one waits again */
			s->busy = false, pl->n_idle++;
		return;
	}
	if (n < 0 && errno == EAGAIN)
		return;
	if (n == (ssize_t)sizeof(e)) {
		e.msg[sizeof(e.msg) - 1] = '\0';
		hutch_warn("pool %s: a sandbox could not be made: %s", pl->name, e.msg);
	}
	if (!s->busy) { /* it ended before it served anyone: try again, later */
		pl->n_idle--;
		pl->failures++;
		pl->retry_at = hutch_now_ms() + POOL_RETRY_MS;
	}
	close(s->chan);
	pl->s[i] = pl->s[--pl->n];
}

/* A refused client's connection is closed once the client closed it: its request, sent
 * at once and never read, would otherwise reset the connection before it read why. */
static void hold(struct pool *pl, int c)
{
	size_t i = 0;
	while (i < POOL_HELD && pl->held[i] >= 0)
		i++;
	if (i == POOL_HELD) { /* the oldest goes */
		close(pl->held[0]);
		memmove(pl->held, pl->held + 1, (POOL_HELD - 1) * sizeof(int));
		i = POOL_HELD - 1;
	}
	pl->held[i] = c;
}

/* A refused client's connection: closed at its end only. Its request is read and dropped
 * first: a close with it unread would reset the connection, and the client, which may not
 * have read the answer yet, would see no answer at all. */
static void on_held(struct pool *pl, size_t i)
{
	char b;
	while (recv(pl->held[i], &b, 1, MSG_DONTWAIT | MSG_TRUNC) > 0)
		;
	struct pollfd p = { .fd = pl->held[i], .events = POLLRDHUP };
	if (poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL))) {
		close(pl->held[i]);
		pl->held[i] = -1;
	}
}

/* A client: root's (SO_PEERCRED) go to a ready sandbox, else back to run cold. */
static void on_client(struct pool *pl)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);
	struct hutch_err e = { 0 };
	int one = 1;
	int c = accept4(pl->listen_fd, NULL, NULL, SOCK_CLOEXEC);
	if (c < 0)
		return;
	if (setsockopt(c, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) < 0) {
		close(c);
		return;
	}
	if (getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0 || cr.uid != 0) {
		snprintf(e.msg, sizeof(e.msg), "uid %u refused: the pool serves root (uid 0) alone",
			 (unsigned)cr.uid);
		rt_sb_pool_reply(c, NULL, 'D', RT_SB_EXIT_FAIL, &e);
		hold(pl, c);
		return;
	}
	for (size_t i = 0; i < pl->n; i++) {
		struct sup *s = &pl->s[i];
		if (!s->ready || s->busy)
			continue;
		if (ns_send_fd(s->chan, c, "pool client", &e) < 0)
			continue; /* it is gone: its end comes next */
		s->busy = true;
		s->handed_at = hutch_now_ms();
		s->replaced = false;
		pl->n_idle--;
		close(c);
		return;
	}
	snprintf(e.msg, sizeof(e.msg), "pool %s had no sandbox ready", pl->name);
	rt_sb_pool_reply(c, pl->o, 'C', 0, &e);
	hold(pl, c);
}

static int listen_at(struct pool *pl, int dir, struct hutch_err *err)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	char name[72];
	snprintf(name, sizeof(name), "%s.sock", pl->name);
	snprintf(a.sun_path, sizeof(a.sun_path), "/proc/self/fd/%d/%s", dir, name);
	if (unlinkat(dir, name, 0) < 0 && errno != ENOENT) /* a killed pool's: ours, locked */
		return hutch_fail_errno(err, errno, "pool %s: remove the old socket", pl->name);
	/* SO_PASSCRED before any client: the kernel stamps each request with its sender's ids
	 * as it is sent (sent before the accept too), which a supervisor checks: a root
	 * client's connection handed on to another process carries that one's. */
	int one = 1;
	pl->listen_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (pl->listen_fd < 0 ||
	    setsockopt(pl->listen_fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) < 0 ||
	    bind(pl->listen_fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    fchmodat(dir, name, 0600, 0) < 0 || listen(pl->listen_fd, 128) < 0)
		return hutch_fail_errno(err, errno, "pool %s: listen at %s/%s", pl->name,
					rt_sb_path("pools"), name);
	return 0;
}

static int refill(struct pool *pl, struct hutch_err *err)
{
	if (pl->failures >= 3 && !pl->any_ready)
		return hutch_fail(err, EINVAL, "pool %s: its sandboxes cannot be made (above)",
				  pl->name);
	double now = hutch_now_ms();
	size_t waiting = 0; /* replacements not due yet, each its own sandbox's start later */
	for (size_t i = 0; i < pl->n; i++) {
		struct sup *x = &pl->s[i];
		if (x->busy && !x->replaced && now < x->handed_at + POOL_DEFER_MS)
			waiting++;
		else if (x->busy)
			x->replaced = true; /* made below, if the pool is short */
	}
	while (pl->n_idle + waiting < pl->want && now >= pl->retry_at)
		if (spawn(pl, err) < 0)
			return -err->code;
	size_t ready = 0;
	for (size_t i = 0; i < pl->n; i++)
		ready += pl->s[i].ready && !pl->s[i].busy;
	if (!pl->full && ready >= pl->want) /* for whoever waits for the pool to be warm */
		printf("pool %s: %zu sandboxes ready at %s/%s.sock\n", pl->name, ready,
		       rt_sb_path("pools"), pl->name);
	fflush(stdout);
	pl->full = ready >= pl->want;
	return 0;
}

static int loop(struct pool *pl, int sfd, struct hutch_err *err)
{
	for (;;) {
		int r = refill(pl, err);
		if (r < 0)
			return r;
		size_t n = pl->n, h = 2 + n;
		_cleanup_free_ struct pollfd *p = hutch_xcalloc(h + POOL_HELD, sizeof(*p));
		p[0] = (struct pollfd){ .fd = sfd, .events = POLLIN };
		p[1] = (struct pollfd){ .fd = pl->listen_fd, .events = POLLIN };
		for (size_t i = 0; i < n; i++)
			p[i + 2] = (struct pollfd){ .fd = pl->s[i].chan, .events = POLLIN };
		for (size_t i = 0; i < POOL_HELD; i++) /* no POLLIN: its request comes too */
			p[h + i] = (struct pollfd){ .fd = pl->held[i], .events = POLLRDHUP };
		int wait = pl->n_idle < pl->want ? 10 : -1;
		if (poll(p, h + POOL_HELD, wait) < 0 && errno != EINTR)
			return hutch_fail_errno(err, errno, "pool: poll");
		for (size_t i = 0; i < POOL_HELD; i++)
			if (p[h + i].revents)
				on_held(pl, i);
		struct signalfd_siginfo si;
		while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
			if (si.ssi_signo != SIGCHLD)
				return 0;
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		for (size_t i = n; i-- > 0;) /* backwards: on_chan moves the last into i */
			if (p[i + 2].revents)
				on_chan(pl, i);
		if (p[1].revents)
			on_client(pl);
	}
}

/* Every supervisor told (its channel's end), then waited for: each removes its sandbox. */
static void stop(struct pool *pl, int dir)
{
	char name[72];
	snprintf(name, sizeof(name), "%s.sock", pl->name);
	unlinkat(dir, name, 0);
	close(pl->listen_fd);
	for (size_t i = 0; i < pl->n; i++)
		close(pl->s[i].chan);
	for (size_t i = 0; i < POOL_HELD; i++)
		if (pl->held[i] >= 0)
			close(pl->held[i]);
	while (wait(NULL) > 0 || errno == EINTR)
		;
}

/* What a pool cannot make ahead, or would give every request alike. */
static int check_profile(struct rt_sb_opts *o, struct hutch_err *err)
{
	static const char *const no = "pool serve --profile: %s is the request's, not the pool's";
	if (o->workspace || o->n_binds)
		return hutch_fail(err, EINVAL, no, o->workspace ? "workspace" : "bind");
	if (o->report || o->report_fd >= 0 || o->lock || o->name || o->detach || o->pool)
		return hutch_fail(err, EINVAL, no, "report, lock, name, detach or pool");
	if (o->tty || o->as_root || o->host_root || o->isolation != RT_SB_ISO_NAMESPACES ||
	    (o->runtime && strcmp(o->runtime, "native")) || o->network == RT_SB_NET_HOST)
		return hutch_fail(err, ENOTSUP,
				  "pool serve --profile: tty, as-root, host-root, isolation, "
				  "runtime and network host are not pooled (run those cold)");
	if (!o->command) { /* found by each request; never run */
		o->command = hutch_xcalloc(2, sizeof(char *));
		o->command[0] = hutch_xstrdup("true");
		o->n_command = 1;
	}
	o->network_set = true; /* its shape names the network */
	return 0;
}

struct serve_flags {
	const char *name, *profile;
	int64_t n;
};

static int serve(struct rt_global *g, const struct serve_flags *f, struct hutch_err *err)
{
	struct hutch_err e = { 0 };
	struct rt_sb_opts o;
	struct pool pl = {
		.name = f->name, .g = g, .o = &o, .listen_fd = -1, .want = (size_t)f->n
	};
	if (geteuid() != 0)
		return hutch_fail(err, EPERM, "pool serve: only root may run a pool");
	if (!f->name || strlen(f->name) > 64 || rt_validate_id(f->name, &e) < 0)
		return hutch_fail(err, EINVAL, "--name: a pool name (1-64 of [a-zA-Z0-9_+.-])");
	if (!f->profile)
		return hutch_fail(err, EINVAL, "--profile: required");
	if (f->n < 1 || f->n > POOL_MAX)
		return hutch_fail(err, EINVAL, "-n: 1 to %d sandboxes", POOL_MAX);
	rt_sb_opts_init(&o);
	int r = rt_sb_load_profile(&o, f->profile, err);
	if (r >= 0) /* first: it names the placeholder command rt_sb_check wants */
		r = check_profile(&o, err);
	if (r >= 0)
		r = rt_sb_check(&o, err);
	_cleanup_close_ int dir = r >= 0 ? rt_sb_pools_dir(true, err) : -1;
	if (r >= 0 && dir < 0)
		r = dir;
	char lname[96];
	snprintf(lname, sizeof(lname), "%s.lock", f->name);
	_cleanup_close_ int lock =
		r >= 0 ? openat(dir, lname, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600) : -1;
	if (r >= 0 && (lock < 0 || flock(lock, LOCK_EX | LOCK_NB) < 0))
		r = hutch_fail_errno(err, lock < 0 || errno != EWOULDBLOCK ? errno : EEXIST,
				     "pool %s: %s", f->name,
				     lock >= 0 && errno == EWOULDBLOCK
					     ? "already served on this root"
					     : "its lock");
	if (r >= 0)
		r = listen_at(&pl, dir, err);
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM), sigaddset(&set, SIGINT), sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGCHLD);
	sigprocmask(SIG_BLOCK, &set, NULL);
	_cleanup_close_ int sfd = r >= 0 ? signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK) : -1;
	if (r >= 0)
		r = sfd < 0 ? hutch_fail_errno(err, errno, "pool: signalfd") : loop(&pl, sfd, err);
	if (pl.listen_fd >= 0)
		stop(&pl, dir);
	free(pl.s);
	rt_sb_opts_free(&o);
	return r;
}

static const struct rt_flag serve_table[] = {
	{ "name", 0, RT_FLAG_STR, "the pool's name (clients: hutch sandbox --pool NAME)",
	  offsetof(struct serve_flags, name), NULL },
	{ "profile", 0, RT_FLAG_STR, "the sandbox profile every pooled sandbox is made from",
	  offsetof(struct serve_flags, profile), NULL },
	{ "n", 'n', RT_FLAG_INT, "sandboxes kept ready (default 4)",
	  offsetof(struct serve_flags, n), NULL },
};
static const struct rt_flags serve_def = RT_FLAGS(serve_table, 0);

static void pool_help(int fd)
{
	dprintf(fd, "usage: hutch pool serve --name NAME --profile FILE [-n N]\n\n"
		    "Keeps N sandboxes of the profile made ahead (image mounted, namespaces,\n"
		    "cgroup, /tmp, /proc, /dev, network, privileges dropped, seccomp loaded),\n"
		    "each for one `hutch sandbox --pool NAME` request, then torn down. Runs in\n"
		    "the foreground, as root only; SIGTERM or SIGINT removes every sandbox and\n"
		    "the socket (ROOT/.sandbox/pools/NAME.sock, root's alone). A request that\n"
		    "needs what the profile does not give runs cold (docs/pool.md).\n\n"
		    "options:\n");
	rt_flags_help(fd, &serve_def, 16, RT_HELP_SHORT);
}

static RT_VERB_RUN(verb_pool)
{
	(void)first, (void)flags;
	struct serve_flags f = { .n = 4 };
	bool help = argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h");
	if (help) {
		pool_help(1);
		return argc < 2 ? hutch_fail(err, EINVAL, "pool: expected serve") : 0;
	}
	if (strcmp(argv[1], "serve"))
		return hutch_fail(err, EINVAL, "pool: unknown subcommand %s (expected serve)",
				  argv[1]);
	int i = rt_parse_flags(&serve_def, argc - 1, argv + 1, &f, &help, err);
	if (i >= 0 && help) {
		pool_help(1);
		return 0;
	}
	if (i >= 0 && i < argc - 1)
		return hutch_fail(err, EINVAL, "pool serve: takes no arguments (%s)", argv[i + 1]);
	return i < 0 ? i : serve(g, &f, err);
}

const struct rt_verb rt_pool_verb = {
	.name = "pool",
	.summary = "keep sandboxes made ahead for `hutch sandbox --pool` (pool serve)",
	.usage = "serve --name NAME --profile FILE [-n N]",
	.run = verb_pool,
	.raw_args = true,
	.help = pool_help,
};
