// SPDX-License-Identifier: Apache-2.0
/*
 * Becoming the container's process: the steps the init (rt-child.c) and an exec'd process
 * (rt-exec.c) share between clone and execve, and the one privilege drop that they and host
 * mode (rt-host-view.c) use.
 */
#include "rt.h"
#include "rt-process.h"
#include "ll.h"

#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/keyctl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <termios.h>
#include <time.h>

#define DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

int rt_setup_terminal(const struct rt_process *p, const struct rt_terminal *t,
		      struct hutch_err *err)
{
	/* Without a pty of its own, a new session: the caller's terminal must not be the
	 * process's controlling terminal, or TIOCSTI could type into it. */
	if (!p->terminal)
		return setsid() < 0 ? hutch_fail_errno(err, errno, "setsid") : 0;
	struct winsize ws = { .ws_row = p->console_height, .ws_col = p->console_width };
	/* An exec relayed from our terminal: its size, set before the process can ask. */
	if (!t->console && t->console_fd < 0 && !ws.ws_row && !ws.ws_col)
		ioctl(0, TIOCGWINSZ, &ws);
	_cleanup_close_ int master =
		ns_setup_pty(ws.ws_row, ws.ws_col, t->console, p->user.uid, err);
	if (master < 0)
		return master;
	if (t->console_fd >= 0) /* --console-socket */
		return ns_send_fd(t->console_fd, master, "/dev/console", err);
	TRY(rt_sync_send(t->sync_fd, RT_SYNC_PTY, NULL, err)); /* the caller relays */
	return ns_send_fd(t->sync_fd, master, "/dev/console", err);
}

int rt_close_fds_but(int preserve_fds, const int *keep, size_t n_keep, struct hutch_err *err)
{
	int from = 3 + preserve_fds;
	for (size_t i = 0; i < n_keep; i++)
		if (keep[i] >= 3 && keep[i] < from) /* rt_count_caller_fds rules it out */
			return hutch_fail(err, EBADF, "--preserve-fds: fd %d is hutch's own",
					  keep[i]);
	/* --debug's lines go on until the execve, which closes their fd */
	int with_log[16];
	size_t n = 0;
	for (; n < n_keep && n + 1 < ARRAY_SIZE(with_log); n++)
		with_log[n] = keep[n];
	with_log[n++] = hutch_phase_fd();
	int r = hutch_close_fds_from(from, with_log, n);
	return r < 0 ? hutch_fail_errno(err, r, "close inherited fds") : 0;
}

int rt_make_cwd(const char *cwd, struct hutch_err *err)
{
	struct hutch_err ignored = { 0 };
	_cleanup_close_ int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return hutch_fail_errno(err, errno, "process.cwd %s: open /", cwd);
	_cleanup_close_ int fd = hutch_open_in_root(root, cwd, O_PATH, 0, &ignored);
	if (fd != -ENOENT)
		return 0; /* there (or not reachable): rt_enter_cwd says what is wrong */
	/* As runc: as the container's root, 0755, each component in the root. */
	fd = hutch_mkdir_in_root(root, cwd, 0755, err);
	return fd < 0 ? hutch_err_prefix(err, "process.cwd %s: ", cwd) : 0;
}

int rt_enter_cwd(const char *cwd, struct hutch_err *err)
{
	char buf[PATH_MAX];
	if (chdir(cwd) < 0)
		return hutch_fail_errno(err, errno, "process.cwd %s", cwd);
	/* getcwd() says "(unreachable)" for a directory outside our root: a leaked host fd. */
	if (!getcwd(buf, sizeof(buf)) || buf[0] != '/')
		return hutch_fail(err, EPERM, "process.cwd %s: resolves outside the container",
				  cwd);
	return 0;
}

/*
 * The process's user, keeping capabilities for the steps left (rt_drop_privileges trims
 * them). The credential change resets dumpable to the suid_dumpable sysctl, so it is
 * cleared again at once. The new session keyring comes after the switch, so that it is the
 * process's user's (owner and quota), not root's: for the init and an exec alike.
 */
int rt_become_user(const struct rt_process *p, bool new_keyring, struct hutch_err *err)
{
	TRY(ns_switch_user(&p->user, err));
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	if (new_keyring && syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, NULL) < 0 &&
	    errno != ENOSYS)
		return hutch_fail_errno(err, errno, "join a new session keyring");
	return 0;
}

static const char *env_path(char *const *env)
{
	for (; env && *env; env++)
		if (hutch_str_has_prefix(*env, "PATH="))
			return *env + 5;
	return DEFAULT_PATH;
}

/*
 * Whether execve of path will pass its permission check: access(2) as the final user. A
 * file that passes only through CAP_DAC_OVERRIDE (any x bit will do for the kernel then)
 * would pass under runc, which execs the program with the process's effective set; hutch
 * execs it from its trampoline, which a non-root user enters without capabilities, so that
 * is refused up front rather than left to fail at start.
 */
static int check_exec(const struct rt_process *p, const char *path, const struct stat *st,
		      struct hutch_err *err)
{
	if (access(path, X_OK) == 0)
		return 0;
	bool dac = p->has_caps && (p->caps.effective & (1ULL << CAP_DAC_OVERRIDE));
	if (dac && S_ISREG(st->st_mode) && (st->st_mode & 0111))
		return hutch_fail(err, ENOTSUP,
				  "process.args[0] %s: not executable by uid %u but through "
				  "CAP_DAC_OVERRIDE, which hutch's exec trampoline does not carry "
				  "to a non-root user: not supported",
				  path, (unsigned)p->user.uid);
	return hutch_fail(err, EACCES, "exec %s: permission denied", p->args[0]);
}

/*
 * Finds args[0] as runc does, so a bad binary fails at create, not at start, with the error
 * texts that podman and containerd map to exit codes 127 and 126. A bare name is the first
 * PATH entry that is a file with an x bit (as Go's exec.LookPath: one without is skipped);
 * then it must be executable by the process.
 */
int rt_find_executable(const struct rt_process *p, char *out, size_t len, struct hutch_err *err)
{
	const char *name = p->args[0];
	bool found = false;
	struct stat st;
	if (strchr(name, '/')) {
		snprintf(out, len, "%s", name);
		found = stat(out, &st) == 0;
	} else {
		_cleanup_free_ char *path = hutch_xstrdup(env_path(p->env));
		char *save = NULL;
		for (char *d = strtok_r(path, ":", &save); d && !found;
		     d = strtok_r(NULL, ":", &save)) {
			int w = snprintf(out, len, "%s/%s", *d ? d : ".", name);
			found = w >= 0 && (size_t)w < len && stat(out, &st) == 0 &&
				!S_ISDIR(st.st_mode) && (st.st_mode & 0111);
		}
	}
	int r;
	if (found && S_ISDIR(st.st_mode)) /* execve says EACCES too */
		r = hutch_fail(err, EACCES, "exec %s: permission denied", name);
	else if (found)
		r = check_exec(p, out, &st, err);
	else if (strchr(name, '/') && errno == EACCES) /* a directory on the way */
		r = hutch_fail(err, EACCES, "exec %s: permission denied", name);
	else
		r = hutch_fail(err, ENOENT, "exec %s: no such file or directory", name);
	if (r < 0)
		err->status = r == -ENOENT ? 127 : 126;
	return r;
}

bool rt_passwd_home(const char *line, uid_t uid, char *out, size_t len)
{
	size_t end = strcspn(line, "\n"), n = 1;
	const char *f[8] = { line }; /* where each field starts; f[n] ends the last at end */
	for (size_t i = 0; i < end && n < 7; i++)
		if (line[i] == ':')
			f[n++] = line + i + 1;
	if (n < 6)
		return false;
	f[n] = line + end + 1;
	char num[24];
	uint64_t u;
	int w = snprintf(num, sizeof(num), "%.*s", (int)(f[3] - 1 - f[2]), f[2]);
	if (w <= 0 || (size_t)w >= sizeof(num) || hutch_parse_u64(num, &u) < 0 || u != uid)
		return false;
	size_t l = (size_t)(f[6] - 1 - f[5]);
	if (l == 0 || l >= len)
		return false; /* no home: "/", as when there is no entry */
	memcpy(out, f[5], l);
	out[l] = '\0';
	return true;
}

/* uid's home in the container's /etc/passwd, opened in the root (so that a symlink in the
 * image cannot point it at a file outside), or "/". */
static void passwd_home(uid_t uid, char *out, size_t len)
{
	struct hutch_err ignored = { 0 };
	_cleanup_close_ int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	_cleanup_close_ int fd = -1;
	if (root >= 0)
		fd = hutch_open_in_root(root, "/etc/passwd", O_RDONLY, 0, &ignored);
	_cleanup_fclose_ FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;
	if (f)
		fd = -1; /* the FILE owns it */
	while (f && getline(&line, &cap, f) >= 0)
		if (rt_passwd_home(line, uid, out, len))
			return;
	snprintf(out, len, "/");
}

char **rt_env_with_home(char *const *env, uid_t uid)
{
	size_t n = 0, o = 0;
	for (; env && env[n]; n++)
		if (hutch_str_has_prefix(env[n], "HOME=") && env[n][5])
			return (char **)env;
	char home[PATH_MAX];
	passwd_home(uid, home, sizeof(home));
	char **out = hutch_xcalloc(n + 2, sizeof(char *));
	for (size_t i = 0; i < n; i++)
		if (!hutch_str_has_prefix(env[i], "HOME=")) /* an empty one is replaced, as runc */
			out[o++] = env[i];
	out[o] = hutch_xasprintf("HOME=%s", home);
	return out;
}

char **rt_listen_env(char *const *env, int preserve_fds)
{
	size_t n = 0;
	while (env && env[n])
		n++;
	if (preserve_fds <= 0)
		return (char **)env;
	char **out = hutch_xcalloc(n + 3, sizeof(char *));
	for (size_t i = 0; i < n; i++)
		out[i] = env[i];
	out[n] = hutch_xasprintf("LISTEN_FDS=%d", preserve_fds);
	out[n + 1] = hutch_xasprintf("LISTEN_PID=%d", (int)getpid());
	return out;
}

/* --debug's lines after the filter, only when it lets their write through (clock_gettime is
 * the vDSO's, but falls back to the syscall with some clock sources). */
static void phases_past(const struct sc_filter *f)
{
	uint64_t w[6] = { (uint64_t)hutch_phase_fd(), 0, 1 };
	uint64_t mono[6] = { CLOCK_MONOTONIC }, real[6] = { CLOCK_REALTIME };
	if (hutch_phase_fd() >= 0 &&
	    !(sc_filter_allows(f, SYS_write, w) && sc_filter_allows(f, SYS_clock_gettime, mono) &&
	      sc_filter_allows(f, SYS_clock_gettime, real)))
		hutch_phase_quiet();
}

static int load_filter(const struct rt_drop *d, struct hutch_err *err)
{
	phases_past(d->filter);
	if (!sc_filter_needs_listener(d->filter))
		return sc_load(d->filter, err);
	if (!d->notify_fd)
		return hutch_fail(err, ENOTSUP,
				  "linux.seccomp: SCMP_ACT_NOTIFY is not supported here");
	return sc_load_listener(d->filter, d->notify_fd, err);
}

/*
 * The kernel's order, written down once:
 * 1. Without no_new_privs, loading a seccomp filter needs CAP_SYS_ADMIN, so the filter comes
 *    first, while the capability is there (raised into the effective set, which a switch to
 *    a non-root user emptied).
 * 2. Capabilities: the bounding set, then effective/permitted/inheritable, then ambient.
 * 3. no_new_privs: from here on, nothing execve'd can gain a privilege.
 * 4. Landlock: restrict_self needs no_new_privs (or CAP_SYS_ADMIN, gone by now).
 * 5. With no_new_privs, the filter last: it may deny the very calls of steps 2-4.
 */
int rt_drop_privileges(const struct rt_drop *d, struct hutch_err *err)
{
	if (d->filter && !d->no_new_privs) {
		ns_raise_effective();
		TRY(load_filter(d, err));
		hutch_phase("seccomp");
	}
	if (d->caps)
		TRY(ns_apply_caps(d->caps, err));
	if (d->no_new_privs)
		TRY(ns_set_no_new_privs(err));
	if (d->landlock_fd >= 0)
		TRY(ll_restrict(d->landlock_fd, err));
	hutch_phase("caps"); /* with no_new_privs and Landlock */
	if (d->filter && d->no_new_privs) {
		TRY(load_filter(d, err));
		hutch_phase("seccomp");
	}
	return 0;
}

int rt_drop_process_privileges(const struct rt_process *p, const struct sc_filter *filter,
			       int *notify_fd, struct hutch_err *err)
{
	struct rt_drop d = { .caps = p->has_caps ? &p->caps : NULL,
			     .no_new_privs = p->no_new_privs,
			     .landlock_fd = -1,
			     .filter = filter,
			     .notify_fd = notify_fd };
	return rt_drop_privileges(&d, err);
}

void rt_reset_signals_in(const sigset_t *which)
{
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	for (int s = 1; s < NSIG; s++)
		if (s != SIGKILL && s != SIGSTOP && (!which || sigismember(which, s)))
			signal(s, SIG_DFL);
}

void rt_reset_signals(void)
{
	rt_reset_signals_in(NULL);
}
