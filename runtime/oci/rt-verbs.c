// SPDX-License-Identifier: Apache-2.0
/*
 * The lifecycle verbs after create: start (exec.fifo), state, kill and delete, with runc's
 * messages and exit codes, which podman, containerd's shim and Docker depend on.
 */
#include "rt.h"
#include "cg-systemd.h"

#include <ctype.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/syscall.h>
#include <sys/wait.h>

struct locked {
	int dirfd;
	struct rt_state st;
};

static void locked_free(struct locked *l)
{
	if (l->dirfd >= 0)
		close(l->dirfd);
	rt_state_clear(&l->st);
}

static int open_locked(struct rt_global *g, const char *id, struct locked *l, struct hutch_err *err)
{
	l->dirfd = -1;
	memset(&l->st, 0, sizeof(l->st));
	TRY(rt_validate_id(id, err));
	TRY(rt_state_open(g->root, id, &l->dirfd, err));
	return rt_state_load(l->dirfd, id, &l->st, err);
}

/*
 * After READY the init loads the filter and runs the startContainer hooks: an ERROR should
 * either fail, else the end of the fifo, which its execve closes (as runc's start reads its
 * fifo to the end). An init that dies meanwhile ends it too: a stopped container, as under
 * runc, whose status tells. The hooks may take as long as they like, so the id's lock is let
 * go meanwhile: state (created, as runc's), kill, delete --force, ps and events are not held
 * up, and kill or delete end the wait. A second start is kept off by the fifo's own flock.
 */
static int await_exec(struct locked *l, int fifo, struct rt_sync_msg *m, struct hutch_err *err)
{
	int fl = fcntl(fifo, F_GETFL);
	if (fl < 0 || fcntl(fifo, F_SETFL, fl & ~O_NONBLOCK) < 0)
		return hutch_fail_errno(err, errno, "exec.fifo");
	struct rt_sync_msg more;
	rt_state_unlock(l->dirfd);
	ssize_t got = hutch_read_all(fifo, &more, sizeof(more));
	if (rt_state_relock(l->dirfd, l->st.id, err) < 0)
		return hutch_fail(err, ENOENT, "container %s was deleted while it started",
				  l->st.id);
	if (got < 0)
		return hutch_fail_errno(err, (int)-got, "read exec.fifo");
	if (got == (ssize_t)sizeof(more))
		*m = more;
	else if (got != 0)
		return hutch_fail(err, EPROTO, "exec.fifo: a short answer (%zd bytes)", got);
	return 0;
}

/* exec.fifo, opened without blocking, and held: its flock marks the start in progress. */
static int open_fifo(const struct locked *l, struct hutch_err *err)
{
	int fifo = openat(l->dirfd, "exec.fifo", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fifo < 0)
		return hutch_fail_errno(err, errno, "open exec.fifo");
	if (flock(fifo, LOCK_EX | LOCK_NB) < 0) {
		int e = errno;
		close(fifo);
		if (e == EWOULDBLOCK)
			return hutch_fail(err, EBUSY,
					  "cannot start container %s: another start is in progress",
					  l->st.id);
		return hutch_fail_errno(err, e, "lock exec.fifo");
	}
	return fifo;
}

/* Opens exec.fifo, then waits for the child's answer or its death. */
static int release_child(struct locked *l, struct hutch_err *err)
{
	_cleanup_close_ int fifo = open_fifo(l, err);
	if (fifo < 0)
		return fifo;
	hutch_fault_point("start:fifo-opened");
	_cleanup_close_ int pidfd = (int)syscall(SYS_pidfd_open, l->st.pid, 0);
	struct pollfd p[2] = { { .fd = fifo, .events = POLLIN },
			       { .fd = pidfd, .events = POLLIN } };
	for (;;) {
		int n = poll(p, pidfd >= 0 ? 2 : 1, -1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return hutch_fail_errno(err, errno, "wait for container start");
		if (p[0].revents & POLLIN)
			break;
		if (p[1].revents & POLLIN)
			return hutch_fail(err, ESRCH, "container init exited before start");
		if (p[0].revents & POLLHUP) /* writer not there yet: keep waiting */
			usleep(1000);
	}
	struct rt_sync_msg m;
	ssize_t got = hutch_read_all(fifo, &m, sizeof(m));
	hutch_phase("start_answer"); /* then the init's execve closes exec.fifo */
	int r = got == (ssize_t)sizeof(m) && m.type == RT_SYNC_READY ? await_exec(l, fifo, &m, err)
								     : 0;
	if (r == -ENOENT) /* deleted: its state dir, exec.fifo with it, is gone */
		return r;
	hutch_fault_point("start:answered");
	unlinkat(l->dirfd, "exec.fifo", 0);
	if (r < 0)
		return r;
	if (got != (ssize_t)sizeof(m))
		return hutch_fail(err, EPIPE, "container init exited before start");
	if (m.type == RT_SYNC_ERROR) {
		*err = m.err;
		return -(m.err.code ? m.err.code : EINVAL);
	}
	return 0;
}

static void poststart(struct locked *l)
{
	struct rt_spec *spec = NULL;
	struct hutch_err e = { 0 };
	if (!l->st.poststart || rt_state_load_spec(l->dirfd, &l->st, &spec, &e) < 0)
		return;
	{
		size_t len;
		_cleanup_free_ char *json = rt_state_json(&l->st, RT_RUNNING, &len);
		if (rt_hooks_run(&spec->hooks[RT_HOOK_POSTSTART], "poststart", json, &e) < 0)
			hutch_warn("%s", e.msg); /* the spec: log a warning and go on */
	}
	rt_spec_free(spec);
}

static int start_locked(struct locked *l, struct hutch_err *err)
{
	TRY(release_child(l, err));
	hutch_phase("start"); /* exec.fifo opened, the init's answer read */
	poststart(l);
	return 0;
}

int rt_container_start(struct rt_global *g, const char *id, struct hutch_err *err)
{
	_cleanup_(locked_free) struct locked l = { .dirfd = -1 };
	TRY(open_locked(g, id, &l, err));
	enum rt_status s = rt_state_status(l.dirfd, &l.st);
	hutch_phase("start_state");
	if (s != RT_CREATED)
		return hutch_fail(err, EINVAL, "cannot start a container that is %s (%s)",
				  rt_status_name(s), id);
	return start_locked(&l, err);
}

/* The status check (the init's /proc stat, the freezer's state, exec.fifo) is left out: the
 * lock was never let go since create, so the container is created unless its init died,
 * which release_child sees through its pidfd. */
int rt_container_start_held(const char *id, int dirfd, struct hutch_err *err)
{
	_cleanup_(locked_free) struct locked l = { .dirfd = dirfd };
	TRY(rt_state_load(l.dirfd, id, &l.st, err));
	hutch_phase("start_state");
	return start_locked(&l, err);
}

static RT_VERB_RUN(verb_start)
{
	const char *id;
	(void)flags;
	TRY(rt_one_id(argc, argv, first, &id, err));
	TRY(rt_container_start(g, id, err));
	return 0;
}

static RT_VERB_RUN(verb_state)
{
	const char *id;
	_cleanup_(locked_free) struct locked l = { .dirfd = -1 };
	(void)flags;
	TRY(rt_one_id(argc, argv, first, &id, err));
	TRY(open_locked(g, id, &l, err));
	enum rt_status s = rt_state_status(l.dirfd, &l.st);
	hutch_phase("state");
	if (s == RT_STOPPED)
		l.st.pid = 0;
	size_t len;
	_cleanup_free_ char *json = rt_state_json(&l.st, s, &len);
	printf("%s\n", json);
	return 0;
}

static int parse_signal(const char *s, struct hutch_err *err)
{
	static const struct {
		const char *name;
		int sig;
	} sigs[] = {
		{ "HUP", SIGHUP },   { "INT", SIGINT },	      { "QUIT", SIGQUIT },
		{ "ILL", SIGILL },   { "TRAP", SIGTRAP },     { "ABRT", SIGABRT },
		{ "IOT", SIGIOT },   { "BUS", SIGBUS },	      { "FPE", SIGFPE },
		{ "KILL", SIGKILL }, { "USR1", SIGUSR1 },     { "SEGV", SIGSEGV },
		{ "USR2", SIGUSR2 }, { "PIPE", SIGPIPE },     { "ALRM", SIGALRM },
		{ "TERM", SIGTERM }, { "STKFLT", SIGSTKFLT }, { "CHLD", SIGCHLD },
		{ "CONT", SIGCONT }, { "STOP", SIGSTOP },     { "TSTP", SIGTSTP },
		{ "TTIN", SIGTTIN }, { "TTOU", SIGTTOU },     { "URG", SIGURG },
		{ "XCPU", SIGXCPU }, { "XFSZ", SIGXFSZ },     { "VTALRM", SIGVTALRM },
		{ "PROF", SIGPROF }, { "WINCH", SIGWINCH },   { "IO", SIGIO },
		{ "POLL", SIGPOLL }, { "PWR", SIGPWR },	      { "SYS", SIGSYS },
	};
	int64_t n;
	if (hutch_parse_i64(s, &n) == 0) {
		if (n < 0 || n >= NSIG) /* 0: a check that it runs, as kill(2) and runc */
			return hutch_fail(err, EINVAL, "invalid signal %s", s);
		return (int)n;
	}
	const char *name = hutch_str_has_prefix(s, "SIG") ? s + 3 : s;
	for (size_t i = 0; i < ARRAY_SIZE(sigs); i++)
		if (!strcasecmp(sigs[i].name, name))
			return sigs[i].sig;
	if (!strncasecmp(name, "RTMIN", 5) || !strncasecmp(name, "RTMAX", 5)) {
		int64_t off = 0;
		if (name[5] && hutch_parse_i64(name + 5, &off) < 0)
			return hutch_fail(err, EINVAL, "invalid signal %s", s);
		int sig = (toupper(name[3]) == 'I' ? SIGRTMIN : SIGRTMAX) + (int)off;
		if (sig >= SIGRTMIN && sig <= SIGRTMAX)
			return sig;
	}
	return hutch_fail(err, EINVAL, "invalid signal %s", s);
}

struct kill_flags {
	bool all;
};

static RT_VERB_RUN(verb_kill)
{
	const struct kill_flags *f = flags;
	_cleanup_(locked_free) struct locked l = { .dirfd = -1 };
	int n = argc - first;
	if (n < 1 || n > 2)
		return hutch_fail(err, EINVAL, "kill: usage: hutch kill [--all] ID [SIGNAL]");
	int sig = n == 2 ? parse_signal(argv[first + 1], err) : SIGTERM;
	if (sig < 0)
		return sig;
	TRY(open_locked(g, argv[first], &l, err));
	enum rt_status s = rt_state_status(l.dirfd, &l.st);
	hutch_phase("state");
	if (f->all && (l.st.cgroup_path || l.st.n_cgroup_paths)) {
		struct cg *cg = NULL;
		int r = rt_state_cgroup(&l.st, &cg, err);
		/* A stopped container's cgroup may be gone: systemd removes an emptied scope at
		 * once, before containerd's shim signals what the init left. A cgroup with a
		 * process in it cannot be removed, so nothing is left to signal (runc: 0 too). */
		if (r == -ENOENT && s == RT_STOPPED) {
			*err = (struct hutch_err){ 0 };
			return 0;
		}
		if (r < 0)
			return r;
		r = cg_signal_all(cg, sig, err);
		cg_free(cg);
		return r < 0 ? r : 0;
	}
	if (s == RT_STOPPED)
		return hutch_fail(err, ESRCH, "container not running");
	_cleanup_close_ int pidfd = (int)syscall(SYS_pidfd_open, l.st.pid, 0);
	/* The start time was checked by the status above; the pidfd pins that process. */
	if (pidfd < 0 || !rt_pid_alive(l.st.pid, l.st.start_time))
		return hutch_fail(err, ESRCH, "container not running");
	if (syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0) < 0)
		return hutch_fail_errno(err, errno, "kill container %s", l.st.id);
	/* A frozen v1 task only dies once thawed. */
	if (sig == SIGKILL && s == RT_PAUSED)
		return rt_ctr_thaw_for_kill(&l.st, err);
	return 0;
}

static void poststop(int dirfd, const struct rt_state *st)
{
	struct rt_spec *spec = NULL;
	struct hutch_err e = { 0 };
	if (!st->poststop || rt_state_load_spec(dirfd, st, &spec, &e) < 0)
		return;
	size_t len;
	_cleanup_free_ char *json = rt_state_json(st, RT_STOPPED, &len);
	if (rt_hooks_run(&spec->hooks[RT_HOOK_POSTSTOP], "poststop", json, &e) < 0)
		hutch_warn("%s", e.msg);
	rt_spec_free(spec);
}

static int check_deletable(const struct locked *l, bool force, struct hutch_err *err)
{
	enum rt_status s = rt_state_status(l->dirfd, &l->st);
	if (s != RT_STOPPED && s != RT_CREATED && !force)
		return hutch_fail(err, EBUSY, "cannot delete container %s that is %s (use --force)",
				  l->st.id, rt_status_name(s));
	if (s != RT_STOPPED && rt_pid_alive(l->st.pid, l->st.start_time))
		kill(l->st.pid, SIGKILL);
	return 0;
}

/* Destroying the cgroup kills whatever is still in it (what the init forked, exec's). A
 * systemd scope is stopped once it is empty (systemd may have collected it already). */
static int remove_cgroup(const struct locked *l, struct hutch_err *err)
{
	if (!l->st.cgroup_path && !l->st.n_cgroup_paths)
		return 0;
	struct cg *cg = NULL;
	int r = 0;
	if (rt_state_cgroup(&l->st, &cg, err) >= 0) { /* else already gone */
		/* No init was ever cloned into it: remove it only where it is empty. */
		bool never_used = l->st.creating && l->st.pid <= 0;
		r = never_used ? cg_remove_unused(cg, err) : cg_destroy(cg, err);
		cg_free(cg);
	}
	*err = r < 0 ? *err : (struct hutch_err){ 0 };
	if (r >= 0 && l->st.systemd_unit)
		r = cg_sd_stop(l->st.systemd_unit, err);
	return r;
}

/* delete's recipe, in this order: the id's lock, the init (--force), the cgroup with what is
 * left in it, poststop hooks once nothing runs, and last the state dir, so the id is free
 * only when everything of it is gone. */
int rt_container_delete(struct rt_global *g, const char *id, bool force, struct hutch_err *err)
{
	_cleanup_(locked_free) struct locked l = { .dirfd = -1 };
	int r = open_locked(g, id, &l, err);
	/* Locked but without state.json: a create killed before its first state save (it
	 * holds the lock until then). Nothing of it runs; free the id. */
	if (r == -ENOENT && l.dirfd >= 0)
		return rt_state_remove(g->root, id, l.dirfd, err);
	if (r == -ENOENT && force)
		return 0;
	if (r < 0)
		return r;
	TRY(check_deletable(&l, force, err)); /* created or stopped; --force kills the init */
	hutch_phase("delete_state");
	hutch_fault_point("delete:killed");
	TRY(remove_cgroup(&l, err));
	hutch_phase("cgroup_remove");
	hutch_fault_point("delete:cgroup-removed");
	TRY(ns_undo_host_rootfs(l.st.rootfs, l.st.rootfs_mnt_id, err)); /* no mount ns */
	waitpid(l.st.pid, NULL, WNOHANG); /* our own child (a foreground run): no zombie */
	poststop(l.dirfd, &l.st);
	hutch_phase("unmount"); /* and poststop hooks */
	r = rt_state_remove(g->root, id, l.dirfd, err);
	hutch_phase("state_remove");
	return r;
}

/* Whether pid's process is in cgroup, or beneath it, in some hierarchy (/proc/PID/cgroup's
 * "N:controllers:/path" lines). */
static bool in_cgroup(pid_t pid, const char *cgroup)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	_cleanup_free_ char *text = NULL;
	struct hutch_err e = { 0 };
	if (hutch_read_file_at(AT_FDCWD, path, 1 << 16, &text, NULL, &e) < 0)
		return false;
	char *save = NULL;
	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char *at = strchr(l, ':');
		at = at ? strchr(at + 1, ':') : NULL;
		if (at && rt_path_under(at + 1, cgroup))
			return true;
	}
	return false;
}

/*
 * A sweep's delete of a state it found in the root (a sandbox whose hutch died). That state
 * may be a sandbox's forgery (one that could write some root's state dir), so nothing it
 * names is trusted: no hook runs, no mount is undone, no systemd unit stopped; the cgroup is
 * the one hutch makes for that sandbox (cgroup, BASE/hutch-sb-N: NULL when it has none), and
 * its pid is killed only when that process is in it (the purge kills it anyway).
 */
int rt_container_reap(struct rt_global *g, const char *id, const char *cgroup,
		      struct hutch_err *err)
{
	_cleanup_(locked_free) struct locked l = { .dirfd = -1 };
	int r = open_locked(g, id, &l, err);
	if (r == -ENOENT && l.dirfd >= 0)
		return rt_state_remove(g->root, id, l.dirfd, err);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return r;
	bool ours = cgroup && l.st.pid > 0 && rt_pid_alive(l.st.pid, l.st.start_time) &&
		    in_cgroup(l.st.pid, cgroup);
	if (ours)
		kill(l.st.pid, SIGKILL);
	r = cgroup ? cg_purge(cgroup, err) : 0;
	if (r < 0 && r != -ENOENT)
		return r; /* still there: the next sweep tries again */
	if (ours)
		waitpid(l.st.pid, NULL, WNOHANG); /* our own child (a foreground run): no zombie */
	return rt_state_remove(g->root, id, l.dirfd, err);
}

struct delete_flags {
	bool force;
};

static RT_VERB_RUN(verb_delete)
{
	const struct delete_flags *f = flags;
	const char *id;
	TRY(rt_one_id(argc, argv, first, &id, err));
	return rt_container_delete(g, id, f->force, err);
}

static const struct rt_flag kill_flags[] = {
	{ "all", 'a', RT_FLAG_BOOL, "signal every process in the container's cgroup",
	  offsetof(struct kill_flags, all), NULL },
};
static const struct rt_flag delete_flags[] = {
	{ "force", 'f', RT_FLAG_BOOL, "kill a running container first",
	  offsetof(struct delete_flags, force), NULL },
};

const struct rt_verb rt_start_verb = {
	.name = "start",
	.summary = "start a created container's process",
	.usage = "ID",
	.run = verb_start,
};
const struct rt_verb rt_state_verb = {
	.name = "state",
	.summary = "print a container's OCI state as JSON",
	.usage = "ID",
	.run = verb_state,
};
const struct rt_verb rt_kill_verb = {
	.name = "kill",
	.summary = "send a signal (default SIGTERM) to a container's init",
	.usage = "[--all] ID [SIGNAL]",
	.flags = RT_FLAGS(kill_flags, RT_PARSE_ANYWHERE),
	.flags_size = sizeof(struct kill_flags),
	.run = verb_kill,
};
const struct rt_verb rt_delete_verb = {
	.name = "delete",
	.summary = "delete a container and everything it holds",
	.usage = "[--force] ID",
	.flags = RT_FLAGS(delete_flags, RT_PARSE_ANYWHERE),
	.flags_size = sizeof(struct delete_flags),
	.run = verb_delete,
};

/* Listed, as runc's, so that a caller learns why rather than "unknown command". */
static RT_VERB_RUN(verb_unsupported)
{
	(void)g, (void)argc, (void)first, (void)flags;
	return hutch_fail(err, ENOTSUP, "%s: not supported by this version of hutch", argv[0]);
}

const struct rt_verb rt_checkpoint_verb = {
	.name = "checkpoint",
	.summary = "checkpoint with CRIU (not supported: built without CRIU)",
	.usage = "ID",
	.run = verb_unsupported,
};
const struct rt_verb rt_restore_verb = {
	.name = "restore",
	.summary = "restore with CRIU (not supported: built without CRIU)",
	.usage = "ID",
	.run = verb_unsupported,
};
