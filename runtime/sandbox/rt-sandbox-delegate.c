// SPDX-License-Identifier: Apache-2.0
/*
 * --runtime runc|crun|runsc|PATH: the same sandbox through another OCI runtime. The bundle
 * (config.json with the default seccomp profile written out) and the runtime's state live in
 * hutch's private scratch tmpfs, so nothing reaches the disk and nothing outlives hutch.
 * hutch keeps the parent cgroup, so the timeout can kill the whole tree and the report has
 * the same figures as a native run.
 */
#include "rt-sandbox.h"
#include "rt-sandbox-plan.h"
#include "rt-sandbox-delegate.h"
#include "rt-process.h"
#include "rt-json.h"
#include "hutch-path.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/sysmacros.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

static int find_runtime(const char *name, struct delegate *d, struct hutch_err *err)
{
	if (strchr(name, '/')) {
		snprintf(d->path, sizeof(d->path), "%s", name);
	} else {
		const char *path = getenv("PATH");
		_cleanup_free_ char *dirs =
			hutch_xstrdup(path ? path : "/usr/sbin:/usr/bin:/sbin:/bin");
		char *save = NULL;
		d->path[0] = '\0';
		for (char *dir = strtok_r(dirs, ":", &save); dir;
		     dir = strtok_r(NULL, ":", &save)) {
			snprintf(d->path, sizeof(d->path), "%s/%s", dir, name);
			if (access(d->path, X_OK) == 0)
				break;
			d->path[0] = '\0';
		}
	}
	if (!d->path[0] || access(d->path, X_OK) < 0)
		return hutch_fail(err, ENOENT, "--runtime %s: not found (no fallback to native)",
				  name);
	/* Run as root, several times (run, delete, the keeper's delete): a name swapped in
	 * between would run someone else's program. */
	struct stat st;
	d->fd = hutch_chase_type("--runtime", d->path, 0, S_IFREG, &st, err);
	if (d->fd < 0)
		return d->fd;
	if (!(st.st_mode & 0111)) {
		close(d->fd);
		return hutch_fail(err, EACCES, "--runtime %s: not executable", d->path);
	}
	const char *base = strrchr(d->path, '/') ? strrchr(d->path, '/') + 1 : d->path;
	d->kind = strstr(base, "runsc") ? KIND_RUNSC : strstr(base, "crun") ? KIND_CRUN : KIND_RUNC;
	return 0;
}

/* execv of the binary find_runtime resolved, through its fd (close-on-exec: a binary, never a
 * script, whose interpreter would need the fd after exec). */
static void exec_fd(const struct delegate *d, const char *const *argv)
{
	extern char **environ;
	syscall(SYS_execveat, d->fd, "", (char *const *)argv, environ, AT_EMPTY_PATH);
}

/*
 * runsc before release-20240801 takes a network namespace for the host's own when
 * /proc/sys/net/core/rmem_default is visible in it, which on kernels that made that sysctl
 * per namespace is every one: its netstack then refuses to start ("cannot run with network
 * enabled in root network namespace"). Such a runsc runs in the namespace hutch wired with
 * its host stack (--network=host) instead: the same veth, addresses and firewall, with the
 * sentry making the socket calls there. The version's date decides.
 */
static bool runsc_netstack_works(const struct delegate *d)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return true;
	pid_t pid = fork();
	if (pid == 0) {
		const char *argv[] = { d->path, "--version", NULL };
		dup2(p[1], 1);
		exec_fd(d, argv);
		_exit(127);
	}
	close(p[1]);
	char buf[256] = "";
	ssize_t n = pid > 0 ? read(p[0], buf, sizeof(buf) - 1) : -1;
	close(p[0]);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	buf[n > 0 ? n : 0] = '\0';
	const char *v = strstr(buf, "release-");
	v = v ? v + 8 : strstr(buf, "0.0~") ? strstr(buf, "0.0~") + 4 : NULL;
	unsigned long date = v ? strtoul(v, NULL, 10) : 0;
	return date == 0 || date >= 20240801;
}

static int write_bundle(struct sandbox_delegate_in *in, struct delegate *d, struct hutch_err *err)
{
	snprintf(d->bundle, sizeof(d->bundle), "%s/bundle", in->scratch);
	snprintf(d->state, sizeof(d->state), "%s/state", in->scratch);
	snprintf(d->log, sizeof(d->log), "%s/runtime.log", in->scratch);
	if (mkdir(d->bundle, 0700) < 0 || mkdir(d->state, 0700) < 0)
		return hutch_fail_errno(err, errno, "sandbox: bundle dir");
	_cleanup_close_ int dfd = open(d->bundle, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return hutch_fail_errno(err, errno, "sandbox: open bundle dir");
	return hutch_write_atomic_at(dfd, "config.json", in->config, strlen(in->config), 0600, err);
}

/* crun 1.8 refuses hybrid hosts; without the cgroup2 mount (in our private namespace, for
 * this child only) it sees plain v1. */
static void hide_unified(const struct delegate *d)
{
	struct stat st;
	struct hutch_err ignored = { 0 };
	const struct ns_mount_op umount =
		NS_MOUNT_OP(NS_OP_UMOUNT, .target = "/sys/fs/cgroup/unified");
	if (d->kind == KIND_CRUN && !cg_is_v2() && stat("/sys/fs/cgroup/unified", &st) == 0)
		(void)ns_mount_apply_host(&umount, 1, &ignored);
}

static void exec_runtime(const struct sandbox_delegate_in *in, const struct delegate *d)
{
	const char *argv[16];
	size_t n = 0;
	argv[n++] = d->path;
	argv[n++] = "--root";
	argv[n++] = d->state;
	if (d->kind == KIND_RUNSC) {
		/* gVisor: apply the OCI seccomp profile too, and never use the host's network
		 * namespace for "none" (runsc refuses to run networked there). For bridge, its
		 * own netstack takes over the namespace hutch wired (eth0, address, routes). */
		argv[n++] = in->network_none			       ? "--network=none"
			    : in->network_bridge && !d->runsc_hostinet ? "--network=sandbox"
								       : "--network=host";
		argv[n++] = "--oci-seccomp";
	}
	argv[n++] = "--log";
	argv[n++] = d->log;
	argv[n++] = "--log-format";
	argv[n++] = "json";
	argv[n++] = "run";
	argv[n++] = "--bundle";
	argv[n++] = d->bundle;
	argv[n++] = in->id;
	argv[n] = NULL;
	if (in->cgroup2_procs >= 0 && write(in->cgroup2_procs, "0", 1) != 1) {
		dprintf(2, "hutch: error: join the sandbox's cgroup2 cgroup: %s\n",
			strerror(errno));
		_exit(RT_SB_EXIT_FAIL);
	}
	hide_unified(d);
	/* The user namespace copies its maker's soft limits (ns-misc.c): runc makes it before
	 * it sets process.rlimits (crun after, for which this changes nothing). runsc's sentry
	 * queues the sandbox's signals and messages itself. */
	struct ns_userns_limits saved;
	struct hutch_err e = { 0 };
	if (d->kind != KIND_RUNSC &&
	    ns_userns_limits_lower(in->rlimits, in->n_rlimits, &saved, &e) < 0) {
		dprintf(2, "hutch: error: %s\n", e.msg);
		_exit(RT_SB_EXIT_FAIL);
	}
	if (d->runsc_hostinet && setns(in->netns_fd, CLONE_NEWNET) < 0) {
		dprintf(2, "hutch: error: enter the sandbox's network namespace: %s\n",
			strerror(errno));
		_exit(RT_SB_EXIT_FAIL);
	}
	rt_reset_signals();
	rt_sb_run_inherit(); /* the run is ours to sweep until the runtime is gone too */
	exec_fd(d, argv);
	dprintf(2, "hutch: error: exec %s: %s\n", d->path, strerror(errno));
	_exit(RT_SB_EXIT_FAIL);
}

/* 126/127 only when the message is about executing the command (runc: exec: "X": ...;
 * crun: executable file `X` ... / open executable; runsc: error finding executable /
 * failed to load); a failed mkdir or chdir is the sandbox failing to start: 0 (125). */
static int exec_status(const char *msg)
{
	bool about_exec =
		strstr(msg, "exec: ") || strstr(msg, "executable") || strstr(msg, "failed to load");
	if (!about_exec)
		return 0;
	if (strcasestr(msg, "not found") || strcasestr(msg, "no such file"))
		return 127;
	if (strcasestr(msg, "permission denied") || strcasestr(msg, "exec format error"))
		return 126;
	return 0;
}

/* An error the runtime logged means the sandbox never ran the command: 125, or 126/127 when
 * it says the command could not be executed or found. */
static int runtime_error(const struct delegate *d, struct hutch_err *err)
{
	_cleanup_free_ char *text = NULL;
	struct hutch_err e = { 0 };
	if (hutch_read_file_at(AT_FDCWD, d->log, 1 << 20, &text, NULL, &e) < 0)
		return 0;
	char *line = NULL;
	for (char *save = NULL, *l = strtok_r(text, "\n", &save); l;
	     l = strtok_r(NULL, "\n", &save))
		if (strstr(l, "\"level\":\"error\""))
			line = l;
	if (!line)
		return 0;
	_cleanup_json_ yajl_val doc = NULL;
	char *msg = NULL;
	if (hutch_json_parse(line, "runtime log", &doc, &e) < 0 ||
	    hutch_json_string(doc, "msg", "msg", true, &msg, &e) < 0)
		return hutch_fail(err, EIO, "%s failed: %s", d->path, line);
	int r = hutch_fail(err, EIO, "%s: %s", d->path, msg);
	err->status = exec_status(msg);
	free(msg);
	return r;
}

static void delete_container(const struct sandbox_delegate_in *in, const struct delegate *d)
{
	pid_t pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);
		dup2(null, 1);
		dup2(null, 2);
		hide_unified(d);
		const char *argv[] = { d->path,	  "--root", d->state, "delete",
				       "--force", in->id,   NULL };
		exec_fd(d, argv);
		_exit(1);
	}
	if (pid > 0)
		waitpid(pid, NULL, 0);
}

/*
 * On a hybrid host runc also tracks the container in the cgroup2 hierarchy, creating the
 * path's missing ancestors there and leaving them behind: remove the ones that did not exist
 * before the run (deepest first), and only while empty.
 */
#define UNIFIED "/sys/fs/cgroup/unified"
#define MAX_DEPTH 32

static size_t missing_unified(const char *cgroup, char dirs[][512])
{
	struct stat st;
	size_t n = 0;
	if (cg_is_v2() || stat(UNIFIED "/cgroup.procs", &st) < 0)
		return 0;
	char path[512];
	snprintf(path, sizeof(path), UNIFIED "%s", cgroup);
	for (char *p = path + strlen(UNIFIED) + 1; p && n < MAX_DEPTH; p = strchr(p + 1, '/')) {
		char saved = *p;
		*p = '\0';
		if (stat(path, &st) < 0)
			snprintf(dirs[n++], 512, "%s", path);
		*p = saved;
	}
	if (n < MAX_DEPTH && stat(path, &st) < 0)
		snprintf(dirs[n++], 512, "%s", path);
	return n;
}

static void remove_unified(char dirs[][512], size_t n)
{
	for (size_t i = n; i > 0; i--)
		rmdir(dirs[i - 1]);
}

/* Whether the first of them, the top of what this run made, is still there. */
static bool unified_left(char dirs[][512], size_t n)
{
	return n > 0 && access(dirs[0], F_OK) == 0;
}

/*
 * Runtimes chown the container's stdio to its user (runc's fixStdioPermissions; crun and
 * runsc alike), so they must never be handed a file of the caller's: the host's /dev/null
 * included. A null device becomes a private node in our scratch tmpfs; a regular file or a
 * device goes through a pipe that a small copier process relays; pipes, sockets (chowning
 * those touches no file) and terminals are passed as they are.
 */
static pid_t copier(int from, int to)
{
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	int keep[] = { from, to };
	hutch_close_fds_from(3, keep, ARRAY_SIZE(keep));
	char buf[65536];
	ssize_t n;
	while ((n = read(from, buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR))
		if (n > 0 && hutch_write_all(to, buf, (size_t)n) < 0)
			break;
	_exit(0);
}

/* The scratch tmpfs is nodev: the private null node gets a tiny tmpfs of its own. */
static int private_null(const char *scratch, char *path, size_t len, struct hutch_err *err)
{
	char dir[200];
	snprintf(dir, sizeof(dir), "%s/dev", scratch);
	snprintf(path, len, "%s/null", dir);
	if (access(path, F_OK) == 0)
		return 0;
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return hutch_fail_errno(err, errno, "sandbox: mkdir %s", dir);
	char label[220];
	snprintf(label, sizeof(label), "sandbox: mount %s", dir);
	const struct ns_mount_op tmpfs = NS_MOUNT_OP(
		NS_OP_MOUNT_AT, .target = dir, .source = "tmpfs", .fstype = "tmpfs",
		.flags = MS_NOSUID | MS_NOEXEC, .data = "mode=0755,size=4k", .label = label);
	int r = ns_mount_apply_host(&tmpfs, 1, err);
	if (r < 0)
		return r;
	if (mknod(path, S_IFCHR | 0666, makedev(1, 3)) < 0)
		return hutch_fail_errno(err, errno, "sandbox: mknod %s", path);
	return 0;
}

static int plan_stdio(const char *scratch, struct stdio_plan *sp, struct hutch_err *err)
{
	char null[256];
	for (int i = 0; i < 3; i++) {
		struct stat st;
		sp->fd[i] = -1;
		sp->copier[i] = 0;
		if (fstat(i, &st) < 0 || S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) || isatty(i))
			continue;
		if (S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3)) {
			TRY(private_null(scratch, null, sizeof(null), err));
			sp->fd[i] = open(null, (i == 0 ? O_RDONLY : O_WRONLY) | O_CLOEXEC);
			if (sp->fd[i] < 0)
				return hutch_fail_errno(err, errno, "sandbox: open %s", null);
			continue;
		}
		int p[2];
		if (pipe2(p, O_CLOEXEC) < 0)
			return hutch_fail_errno(err, errno, "sandbox: pipe");
		sp->copier[i] = i == 0 ? copier(0, p[1]) : copier(p[0], i);
		close(i == 0 ? p[1] : p[0]);
		sp->fd[i] = i == 0 ? p[0] : p[1];
	}
	return 0;
}

static void use_stdio(const struct stdio_plan *sp)
{
	for (int i = 0; i < 3; i++)
		if (sp->fd[i] >= 0)
			dup2(sp->fd[i], i);
}

/* After the run: outputs end when the sandbox's last writer is gone; stdin may never. */
static void end_stdio(struct stdio_plan *sp)
{
	for (int i = 0; i < 3; i++) {
		if (sp->fd[i] >= 0)
			close(sp->fd[i]);
		if (sp->copier[i] <= 0)
			continue;
		if (i == 0)
			kill(sp->copier[i], SIGKILL);
		waitpid(sp->copier[i], NULL, 0);
	}
}

/*
 * A keeper process ties the delegated sandbox to hutch's life: runc, crun and runsc keep
 * running if hutch is SIGKILLed, and they have no state hutch's next run could find. It
 * waits on a socket only hutch writes; end of file without the "done" byte means hutch died,
 * and the keeper kills the tree, deletes the container and removes the cgroups.
 */
static pid_t spawn_keeper(const struct sandbox_delegate_in *in, const struct delegate *d,
			  char unified[][512], size_t n_unified, char **plain, size_t n_plain,
			  int *done_fd)
{
	int p[2]; /* a socket, not a pipe: the "done" byte to a dead keeper raises no SIGPIPE */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p) < 0)
		return -1;
	pid_t pid = fork();
	if (pid != 0) {
		close(p[0]);
		*done_fd = p[1];
		return pid;
	}
	int keep[] = { p[0], d->fd }; /* its delete runs the runtime */
	hutch_close_fds_from(3, keep, ARRAY_SIZE(keep));
	setsid(); /* a kill of hutch's process group closes the pipe, it does not end the keeper */
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP && sig != SIGCHLD)
			signal(sig, SIG_IGN); /* only the pipe decides */
	/* Opened now: crun's child unmounts the cgroup2 hierarchy in the mount namespace we
	 * share (hide_unified), where a later open would miss that cgroup and leave it. */
	struct hutch_err e = { 0 };
	struct cg *cg = NULL;
	if (cg_open(in->parent_cgroup, &cg, &e) < 0)
		cg = NULL;
	char c;
	ssize_t n;
	while ((n = read(p[0], &c, 1)) < 0 && errno == EINTR)
		;
	if (n == 1)
		_exit(0);
	if (cg)
		cg_signal_all(cg, SIGKILL, &e);
	delete_container(in, d);
	remove_unified(unified, n_unified);
	rt_sb_plaincg_remove(in->parent_cgroup);
	rt_sb_plaincg_remove_parents(plain, n_plain);
	if (cg) {
		cg_destroy(cg, &e);
		cg_free(cg);
	}
	/* The cgroup2 directories were busy while the killed tree was still exiting, which
	 * cg_destroy waited for: once more, for up to a second. */
	for (int tries = 0; tries < 50 && unified_left(unified, n_unified); tries++) {
		remove_unified(unified, n_unified);
		usleep(20000);
	}
	_exit(0);
}

/*
 * What the runtime cannot give of what the options ask, listed in the report's weakened
 * (docs/runtimes.md has the table). seccomp, the user namespace, the egress firewall,
 * --memory's limit and --cpus are the same under every runtime. Only the network fallback is
 * said on stderr too: the others hold for every run of that runtime with the defaults.
 */
static void note_weakened(const struct sandbox_delegate_in *in, const struct delegate *d)
{
	if (d->runsc_hostinet) {
		_cleanup_free_ char *msg = hutch_xasprintf(
			"network: %s predates release-20240801, whose netstack cannot start on "
			"this kernel: its host stack serves the sandbox's namespace instead",
			d->path);
		hutch_warn("%s", msg);
		if (in->plan)
			rt_sb_weaken_report(in->plan, msg);
	}
	if (!in->plan || !in->o)
		return;
	if (d->kind == KIND_RUNSC && in->o->pids > 0)
		rt_sb_weaken_report(in->plan, "--pids: under runsc it bounds runsc's host threads, "
					      "not the sandbox's processes: reaching it ends the "
					      "whole sandbox");
	if (d->kind == KIND_RUNSC && in->o->memory > 0)
		rt_sb_weaken_report(in->plan, "--memory: under runsc running out ends the whole "
					      "sandbox (137), not only the process that asked");
	if (d->kind == KIND_RUNSC && in->session)
		rt_sb_weaken_report(in->plan, "sandbox exec: runsc applies the seccomp profile "
					      "to the session's first process only, not to what "
					      "sandbox exec runs");
	if (in->o->timeout > 0 && d->kind != KIND_RUNSC) /* gVisor's PID 1 dies of it */
		rt_sb_weaken_report(in->plan, "--timeout: the command is PID 1, which ignores a "
					      "SIGTERM it has no handler for: it is killed at "
					      "--timeout plus --grace");
}

/*
 * runsc: the timeout's SIGTERM through `runsc kill ID TERM`, to the container's first process
 * in gVisor's kernel, whose handler then runs. Sent to `runsc run` it never reached the
 * command: the sandbox ended of it at once, --grace unused.
 */
struct runsc_term {
	const struct sandbox_delegate_in *in;
	const struct delegate *d;
};

static void runsc_term(void *arg)
{
	const struct runsc_term *t = arg;
	pid_t pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
		const char *argv[] = { t->d->path, "--root", t->d->state, "kill",
				       t->in->id,  "TERM",   NULL };
		exec_fd(t->d, argv);
		_exit(1);
	}
	if (pid > 0)
		waitpid(pid, NULL, 0);
}

static void free_plain(char **plain, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(plain[i]);
	free(plain);
}

static void child_stats(struct sandbox_delegate_in *in)
{
	struct cg *cg = NULL;
	struct hutch_err e = { 0 };
	if (cg_open(in->cgroup, &cg, &e) < 0)
		return;
	in->has_stats = cg_get_stats(cg, &in->stats, &e) >= 0;
	cg_free(cg);
}

int rt_sb_delegate(struct sandbox_delegate_in *in, struct rt_waiter *w, struct hutch_err *err)
{
	struct delegate d = { .fd = -1 };
	char unified[MAX_DEPTH][512];
	TRY(find_runtime(in->runtime, &d, err));
	_cleanup_close_ _unused_ int bin = d.fd; /* closed when the runtime is done */
	if (in->network_bridge && d.kind == KIND_RUNSC && !runsc_netstack_works(&d))
		d.runsc_hostinet = true;
	note_weakened(in, &d);
	TRY(write_bundle(in, &d, err));
	if (in->session) /* --name: its records, before the runtime runs */
		TRY(rt_sb_session_begin(in, &d, err));
	size_t n_unified = missing_unified(in->cgroup, unified);
	char **plain = NULL; /* runsc makes the parent path in plain directories too */
	size_t n_plain = rt_sb_plaincg_missing(in->parent_cgroup, &plain);
	struct stdio_plan sp = { { -1, -1, -1 }, { 0, 0, 0 } };
	int done = -1, r;
	pid_t keeper = spawn_keeper(in, &d, unified, n_unified, plain, n_plain, &done);
	if (keeper < 0) {
		r = hutch_fail_errno(err, errno, "sandbox: keeper process");
		free_plain(plain, n_plain);
		return r;
	}
	r = plan_stdio(in->scratch, &sp, err);
	pid_t pid = r < 0 ? -1 : fork();
	if (pid == 0) {
		use_stdio(&sp);
		exec_runtime(in, &d);
	}
	if (pid < 0 && r >= 0)
		r = hutch_fail_errno(err, errno, "sandbox: fork %s", d.path);
	_cleanup_close_ int pidfd = pid > 0 ? (int)syscall(SYS_pidfd_open, pid, 0) : -1;
	w->pidfd = pidfd;
	w->pid = pid;
	w->master = -1;
	struct runsc_term term = { in, &d };
	if (d.kind == KIND_RUNSC) {
		w->term = runsc_term;
		w->term_arg = &term;
	}
	if (r >= 0 && in->session) /* --detach returns once the container runs */
		r = rt_sb_session_started(in, &d, pidfd, w->timeout_ms, err);
	if (r >= 0)
		r = rt_wait_container(w, err);
	child_stats(in);
	delete_container(in, &d);
	remove_unified(unified, n_unified);
	rt_sb_plaincg_remove(in->parent_cgroup); /* runsc leaves its path but for the leaf */
	rt_sb_plaincg_remove_parents(plain, n_plain);
	free_plain(plain, n_plain);
	end_stdio(&sp);
	(void)!send(done, "d", 1, MSG_NOSIGNAL); /* a killed keeper: we clean up all the same */
	close(done);
	waitpid(keeper, NULL, 0);
	if (in->session)
		rt_sb_session_end(in);
	if (r < 0)
		return r;
	if (!w->timed_out && WIFEXITED(w->status) && WEXITSTATUS(w->status) != 0)
		TRY(runtime_error(&d, err));
	struct hutch_err e = { 0 };
	if (in->session) /* ended before it was seen running: it ran, as --detach's caller hears */
		(void)rt_sb_notify_started(in->session->notify_fd, &e);
	return 0;
}

/* ---- for sessions (rt-sandbox-delegate-named.c) ---- */

int rt_sb_dl_find(const char *name, struct delegate *d, struct hutch_err *err)
{
	return find_runtime(name, d, err);
}

void rt_sb_dl_exec(const struct delegate *d, const char *const *argv)
{
	exec_fd(d, argv);
}

void rt_sb_dl_hide_unified(const struct delegate *d)
{
	hide_unified(d);
}

int rt_sb_dl_plan_stdio(const char *scratch, struct stdio_plan *sp, struct hutch_err *err)
{
	return plan_stdio(scratch, sp, err);
}

void rt_sb_dl_use_stdio(const struct stdio_plan *sp)
{
	use_stdio(sp);
}

void rt_sb_dl_end_stdio(struct stdio_plan *sp)
{
	end_stdio(sp);
}

int rt_sb_dl_runtime_error(const struct delegate *d, struct hutch_err *err)
{
	return runtime_error(d, err);
}
