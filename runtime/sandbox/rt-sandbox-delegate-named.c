// SPDX-License-Identifier: Apache-2.0
/*
 * `sandbox exec|stop|rm|ls` on a named session under --runtime runc|crun|runsc (its supervisor's
 * side is rt-sandbox-delegate-session.c): they reach it through the runtime's own exec and
 * kill. The runtime's state and the bundle live in the supervisor's scratch tmpfs, visible
 * only in its mount namespace: those commands run the runtime there (setns through a pidfd of
 * the supervisor, whose held owner lock says it is still the one), so a session leaves nothing
 * on the disk and everything it made goes with its supervisor, as a foreground run's does.
 */
#include "rt-sandbox-delegate.h"
#include "rt-process.h"
#include "rt-json.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

/* Its supervisor still holds the owner lock (taking it here would mean it is gone). */
static bool supervisor_alive(int dir)
{
	_cleanup_close_ int fd =
		openat(dir, "owner.lock", O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	return fd >= 0 && rt_regular(fd) && flock(fd, LOCK_SH | LOCK_NB) < 0 &&
	       errno == EWOULDBLOCK;
}

int rt_sb_session_load(const char *id, struct rt_sb_dl_ref *s)
{
	struct hutch_err e = { 0 };
	_cleanup_close_ int dir = rt_sb_session_dir(id, &e);
	_cleanup_close_ int fd =
		dir < 0 ? -1
			: openat(dir, DL_RECORD, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	_cleanup_free_ char *text = NULL, *runtime = NULL, *scratch = NULL, *cgroup2 = NULL;
	_cleanup_json_ yajl_val doc = NULL;
	char link[HUTCH_FD_PATH_MAX];
	int64_t pid = 0;
	*s = (struct rt_sb_dl_ref){ 0 };
	if (fd < 0 || !rt_regular(fd) ||
	    hutch_read_file_at(AT_FDCWD, hutch_fd_path(fd, link), 1 << 16, &text, NULL, &e) < 0 ||
	    hutch_json_parse(text, DL_RECORD, &doc, &e) < 0 ||
	    hutch_json_string(doc, "runtime", "runtime", true, &runtime, &e) < 0 ||
	    hutch_json_string(doc, "scratch", "scratch", true, &scratch, &e) < 0 ||
	    scratch[0] != '/' || strlen(scratch) >= sizeof(s->scratch))
		return -ENOENT;
	snprintf(s->runtime, sizeof(s->runtime), "%s", runtime);
	snprintf(s->scratch, sizeof(s->scratch), "%s", scratch);
	if (hutch_json_int(doc, "pid", "pid", 0, INT32_MAX, NULL, &pid, &e) >= 0)
		s->pid = (pid_t)pid;
	hutch_json_string(doc, "created", "created", false, &s->created, &e);
	if (hutch_json_string(doc, "cgroup2", "cgroup2", false, &cgroup2, &e) >= 0 && cgroup2)
		snprintf(s->cgroup2, sizeof(s->cgroup2), "%s", cgroup2);
	s->alive = supervisor_alive(dir);
	return 0;
}

void rt_sb_session_ref_free(struct rt_sb_dl_ref *s)
{
	free(s->created);
	s->created = NULL;
}

/*
 * Into the supervisor's mount namespace, through a pidfd that is the supervisor's: its start
 * time checked once the pidfd pins the pid. The owner lock alone proves nothing (a sweep
 * holds it for a moment after the supervisor was killed), and the process that took a dead
 * supervisor's pid may be anyone's, with a mount namespace of its own whose ld.so the
 * runtime's exec would load as host root.
 */
static int enter_supervisor(const struct rt_sb_dl_ref *s, const char *id, pid_t supervisor,
			    struct hutch_err *err)
{
	struct rt_sb_dl_ref again;
	_cleanup_close_ int pidfd = (int)syscall(SYS_pidfd_open, supervisor, 0);
	int r = rt_sb_session_load(id, &again);
	rt_sb_session_ref_free(&again);
	if (pidfd < 0 || r < 0 || !again.alive || !s->supervisor_start ||
	    !rt_pid_alive(supervisor, s->supervisor_start))
		return hutch_fail(err, ESRCH, "sandbox %s: not running", id);
	if (setns(pidfd, CLONE_NEWNS) < 0)
		return hutch_fail_errno(err, errno, "sandbox %s: enter its supervisor's mounts",
					id);
	return 0;
}

/* key=... of an entry of env among extra (an -e of exec's that replaces it). */
static bool overridden(const char *entry, const struct rt_strv *extra)
{
	size_t k = strcspn(entry, "=");
	for (size_t i = 0; i < extra->n; i++)
		if (!strncmp(extra->v[i], entry, k) && (extra->v[i][k] == '=' || !extra->v[i][k]))
			return true;
	return false;
}

static void gen_env(yajl_gen g, yajl_val old, const struct rt_strv *extra)
{
	hutch_json_gen_str(g, "env");
	yajl_gen_array_open(g);
	for (size_t i = 0; YAJL_IS_ARRAY(old) && i < old->u.array.len; i++) {
		const char *v = YAJL_GET_STRING(old->u.array.values[i]);
		if (v && !overridden(v, extra))
			hutch_json_gen_str(g, v);
	}
	for (size_t i = 0; i < extra->n; i++)
		hutch_json_gen_str(g, extra->v[i]);
	yajl_gen_array_close(g);
}

/* The session's own process (user, capabilities, no_new_privs, rlimits, env) from the spec it
 * runs with, running cmd instead; the runtime adds the container's seccomp, cgroup and
 * namespaces as for any exec. */
static int process_json(const char *id, char **cmd, bool tty, const char *cwd,
			const struct rt_strv *env, char **out, struct hutch_err *err)
{
	_cleanup_close_ int dir = rt_sb_session_dir(id, err);
	_cleanup_free_ char *text = NULL;
	_cleanup_json_ yajl_val doc = NULL;
	if (dir < 0)
		return dir;
	TRY(hutch_read_file_at(dir, "config.json", 1 << 22, &text, NULL, err));
	TRY(hutch_json_parse(text, "config.json", &doc, err));
	const char *path[] = { "process", NULL };
	yajl_val proc = yajl_tree_get(doc, path, yajl_t_object), old_env = NULL;
	if (!proc)
		return hutch_fail(err, EINVAL, "sandbox %s: config.json: no process", id);
	_cleanup_gen_ yajl_gen g = yajl_gen_alloc(NULL);
	yajl_gen_map_open(g);
	for (size_t i = 0; i < proc->u.object.len; i++) {
		const char *k = proc->u.object.keys[i];
		if (!strcmp(k, "env"))
			old_env = proc->u.object.values[i];
		if (!strcmp(k, "args") || !strcmp(k, "terminal") || !strcmp(k, "consoleSize") ||
		    !strcmp(k, "env") || (cwd && !strcmp(k, "cwd")))
			continue;
		hutch_json_gen_str(g, k);
		hutch_json_gen_value(g, proc->u.object.values[i]);
	}
	hutch_json_gen_strv(g, "args", (const char *const *)cmd, SIZE_MAX);
	hutch_json_gen_bool(g, "terminal", tty);
	if (cwd)
		hutch_json_gen_kv(g, "cwd", cwd);
	gen_env(g, old_env, env);
	yajl_gen_map_close(g);
	*out = hutch_json_gen_finish(g, NULL);
	return 0;
}

/* The process file as /proc/self/fd/N (a memfd the runtime inherits: nothing on a disk). */
static int process_fd(const char *json, char *path, size_t len, struct hutch_err *err)
{
	int fd = (int)syscall(SYS_memfd_create, "process.json", 0);
	if (fd < 0)
		return hutch_fail_errno(err, errno, "sandbox exec: memfd");
	if (hutch_write_all(fd, json, strlen(json)) < 0) {
		close(fd);
		return hutch_fail_errno(err, errno, "sandbox exec: process.json");
	}
	snprintf(path, len, "/proc/self/fd/%d", fd);
	return fd;
}

/*
 * -t: runc's exec and runsc's want a controlling terminal of their own before they make the
 * container's (runc opens /dev/tty), whatever our stdin is: a pty whose slave is the runtime's
 * terminal, relayed to our stdio as a native exec's is. The master, or -1 with err.
 */
static int open_pty(char *name, size_t len, struct hutch_err *err)
{
	_cleanup_close_ int m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (m < 0 || grantpt(m) < 0 || unlockpt(m) < 0 || ptsname_r(m, name, len) != 0)
		return hutch_fail_errno(err, errno, "sandbox exec -t: pty");
	struct winsize ws;
	if (ioctl(0, TIOCGWINSZ, &ws) == 0)
		ioctl(m, TIOCSWINSZ, &ws);
	return steal_fd(m);
}

static void use_pty(const char *name)
{
	int s;
	if (setsid() < 0 || (s = open(name, O_RDWR)) < 0 || ioctl(s, TIOCSCTTY, 0) < 0 ||
	    dup2(s, 0) < 0 || dup2(s, 1) < 0 || dup2(s, 2) < 0)
		_exit(RT_SB_EXIT_FAIL);
	if (s > 2)
		close(s);
}

/* The command the runtime's exec started (pidfile: runsc's pid inside its sandbox, else the
 * host's), killed: runsc's through its kill --pid; a host pid only while it is in the
 * session's cgroup, so never a pid reused since the command ended. */
static void kill_command(const struct delegate *d, const char *id, const char *pidfile,
			 pid_t supervisor)
{
	_cleanup_free_ char *text = NULL, *cgroups = NULL;
	struct hutch_err e = { 0 };
	char path[64], needle[64];
	int pid = 0;
	if (hutch_read_file_at(AT_FDCWD, pidfile, 64, &text, NULL, &e) < 0 ||
	    sscanf(text, "%d", &pid) != 1 || pid <= 0)
		return;
	if (d->kind == KIND_RUNSC) {
		const char *argv[] = { d->path, "--root", d->state, "kill", "--pid",
				       text,	id,	  "KILL",   NULL };
		text[strcspn(text, "\n")] = '\0';
		pid_t k = fork();
		if (k == 0) {
			rt_sb_dl_exec(d, argv);
			_exit(1);
		}
		if (k > 0)
			waitpid(k, NULL, 0);
		return;
	}
	snprintf(path, sizeof(path), "/proc/%d/cgroup", pid);
	snprintf(needle, sizeof(needle), "/hutch-sb-%d/", (int)supervisor);
	if (hutch_read_file_at(AT_FDCWD, path, 1 << 16, &cgroups, NULL, &e) >= 0 &&
	    strstr(cgroups, needle))
		kill(pid, SIGKILL);
}

/*
 * The runtime's exec, killed with a SIGKILLed `sandbox exec`, leaves its command running in
 * the session: a watcher (as the delegate's keeper) waits on a socket only we write, and its end
 * without the "done" byte means we died: it kills the command. *done is that pipe.
 */
static pid_t spawn_watcher(const struct delegate *d, const char *id, const char *pidfile,
			   pid_t supervisor, int *done)
{
	int p[2]; /* a socket, not a pipe: the "done" byte to a dead watcher raises no SIGPIPE */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p) < 0)
		return -1;
	pid_t pid = fork();
	if (pid != 0) {
		close(p[0]);
		*done = p[1];
		return pid;
	}
	int keep[] = { p[0], d->fd };
	int null = open("/dev/null", O_RDWR | O_CLOEXEC); /* holds none of the caller's pipes */
	for (int i = 0; i < 3 && null >= 0; i++)
		dup2(null, i);
	hutch_close_fds_from(3, keep, ARRAY_SIZE(keep));
	setsid(); /* a kill of our process group must leave it to kill the command */
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP && sig != SIGCHLD)
			signal(sig, SIG_IGN);
	char c;
	ssize_t n;
	while ((n = read(p[0], &c, 1)) < 0 && errno == EINTR)
		;
	if (n != 1)
		kill_command(d, id, pidfile, supervisor);
	unlink(pidfile);
	_exit(0);
}

/*
 * The session's cgroup2 cgroup.procs (--deny-host-loopback on a hybrid host, where its
 * connect filters are attached), opened in the host's mounts: the runtime's exec joins it
 * before it runs, as the session's run did, so what exec starts is filtered too (crun's exec
 * leaves its command in its own cgroup2 cgroup, the hierarchy's root). *fd is -1 without one.
 */
static int open_cgroup2(const struct rt_sb_dl_ref *s, const char *id, int *fd,
			struct hutch_err *err)
{
	static const char unified[] = "/sys/fs/cgroup/unified/";
	*fd = -1;
	if (!s->cgroup2[0])
		return 0;
	if (strncmp(s->cgroup2, unified, strlen(unified)) || strstr(s->cgroup2, "/.."))
		return hutch_fail(err, EINVAL, "sandbox %s: %s: cgroup2 %s: not a cgroup2 cgroup",
				  id, DL_RECORD, s->cgroup2);
	_cleanup_close_ int dir = open(s->cgroup2, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	*fd = dir < 0 ? -1 : openat(dir, "cgroup.procs", O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	if (*fd < 0)
		return hutch_fail_errno(err, errno, "sandbox %s: open %s/cgroup.procs", id,
					s->cgroup2);
	return 0;
}

static pid_t spawn_exec(const struct delegate *d, const char *id, const char *process,
			const char *pidfile, const struct stdio_plan *sp, const char *pty,
			int cgroup2_procs)
{
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	if (cgroup2_procs >= 0 && write(cgroup2_procs, "0", 1) != 1) {
		dprintf(2, "hutch: error: join the sandbox's cgroup2 cgroup: %s\n",
			strerror(errno));
		_exit(RT_SB_EXIT_FAIL);
	}
	const char *argv[] = {
		d->path, "--root",    d->state,
		"--log", d->log,      "--log-format",
		"json",	 "exec",      d->kind == KIND_RUNSC ? "--internal-pid-file" : "--pid-file",
		pidfile, "--process", process,
		id,	 NULL
	};
	if (pty)
		use_pty(pty);
	else
		rt_sb_dl_use_stdio(sp);
	prctl(PR_SET_PDEATHSIG, SIGKILL); /* a killed `sandbox exec` leaves no runtime */
	rt_reset_signals();
	rt_sb_dl_exec(d, argv);
	dprintf(2, "hutch: error: exec %s: %s\n", d->path, strerror(errno));
	_exit(RT_SB_EXIT_FAIL);
}

/* The runtime's exec, in the supervisor's mount namespace (this process enters it: the stdio
 * plan's null node and the exec's log are in scratch too). */
int rt_sb_session_exec(const struct rt_sb_dl_ref *s, const char *id, pid_t supervisor, bool tty,
		       const char *cwd, const struct rt_strv *env, char **cmd,
		       struct hutch_err *err)
{
	struct delegate d = { .fd = -1 };
	struct stdio_plan sp = { { -1, -1, -1 }, { 0, 0, 0 } };
	_cleanup_free_ char *json = NULL;
	char process[64];
	TRY(process_json(id, cmd, tty, cwd, env, &json, err));
	TRY(rt_sb_dl_find(s->runtime, &d, err)); /* the binary the supervisor ran */
	if (tty && d.kind == KIND_RUNSC) {
		close(d.fd);
		return hutch_fail(err, ENOTSUP,
				  "sandbox exec -t: not supported under runsc (its exec gives the "
				  "command no terminal)");
	}
	_cleanup_close_ _unused_ int bin = d.fd;
	_cleanup_close_ int cgroup2_procs = -1;
	TRY(open_cgroup2(s, id, &cgroup2_procs, err));
	TRY(enter_supervisor(s, id, supervisor, err));
	snprintf(d.state, sizeof(d.state), "%s/state", s->scratch);
	snprintf(d.log, sizeof(d.log), "%s/exec-%d.log", s->scratch, (int)getpid());
	char pidfile[256], pty[64];
	snprintf(pidfile, sizeof(pidfile), "%s/exec-%d.pid", s->scratch, (int)getpid());
	_cleanup_close_ int pfd = process_fd(json, process, sizeof(process), err);
	if (pfd < 0)
		return pfd;
	_cleanup_close_ int done = -1;
	pid_t watcher = spawn_watcher(&d, id, pidfile, supervisor, &done);
	if (watcher < 0)
		return hutch_fail_errno(err, errno, "sandbox exec: watcher process");
	_cleanup_close_ int master = tty ? open_pty(pty, sizeof(pty), err) : -1;
	int r = tty ? master : rt_sb_dl_plan_stdio(s->scratch, &sp, err);
	pid_t pid =
		r < 0 ? -1
		      : spawn_exec(&d, id, process, pidfile, &sp, tty ? pty : NULL, cgroup2_procs);
	if (pid < 0 && r >= 0)
		r = hutch_fail_errno(err, errno, "sandbox exec: fork %s", d.path);
	_cleanup_close_ int pidfd = pid > 0 ? (int)syscall(SYS_pidfd_open, pid, 0) : -1;
	if (r >= 0)
		r = tty ? rt_relay_and_wait(master, pidfd, pid, err)
			: rt_wait_forward(pidfd, pid, err);
	rt_sb_dl_end_stdio(&sp);
	if (r > 0) { /* the command's status, unless the runtime logged why it never ran */
		struct hutch_err e = { 0 };
		if (rt_sb_dl_runtime_error(&d, &e) < 0) {
			*err = e;
			r = -e.code;
		}
	}
	unlink(d.log);
	(void)!send(done, "d", 1, MSG_NOSIGNAL);
	waitpid(watcher, NULL, 0); /* it removes the pid file */
	return r;
}

/* kill SIGNAL (KILL: every process of it, kill --all), run in the supervisor's mount
 * namespace, whose own delete follows as its run ends (runsc's delete --force of a running
 * sandbox waits 5 s and fails); the container already gone is no error here. */
int rt_sb_session_signal(const struct rt_sb_dl_ref *s, const char *id, pid_t supervisor,
			 const char *signal, struct hutch_err *err)
{
	struct delegate d = { .fd = -1 };
	TRY(rt_sb_dl_find(s->runtime, &d, err));
	_cleanup_close_ _unused_ int bin = d.fd;
	snprintf(d.state, sizeof(d.state), "%s/state", s->scratch);
	pid_t pid = fork();
	if (pid < 0)
		return hutch_fail_errno(err, errno, "sandbox: fork %s", d.path);
	if (pid == 0) {
		struct hutch_err e = { 0 };
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);
		dup2(null, 1);
		dup2(null, 2);
		if (enter_supervisor(s, id, supervisor, &e) < 0)
			_exit(1);
		rt_sb_dl_hide_unified(&d);
		bool all = !strcmp(signal, "KILL");
		const char *argv[] = { d.path,
				       "--root",
				       d.state,
				       "kill",
				       all ? "--all" : id,
				       all ? id : signal,
				       all ? signal : NULL,
				       NULL };
		rt_sb_dl_exec(&d, argv);
		_exit(1);
	}
	waitpid(pid, NULL, 0);
	return 0;
}
