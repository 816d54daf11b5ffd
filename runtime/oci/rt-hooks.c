// SPDX-License-Identifier: Apache-2.0
/*
 * OCI hooks: each runs with the container state on stdin, its own args and env, and an
 * optional timeout after which it is killed. A failing hook fails the operation. A hook
 * without env gets the runtime's environment (runc's: Go's exec with a nil Env); an empty
 * env list is an empty environment. startContainer hooks run under the container's seccomp
 * filter, so their stdin is filled first (rt_hooks_fill_stdin) and running them takes only
 * fork, execve and wait4. Container hooks (createContainer, startContainer) are forks of the
 * init, itself a fork of hutch: they are exec'd through the trampoline, as the process is.
 */
#include "rt.h"
#include "rt-process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/*
 * Forks the hook with stdin_fd as its stdin. The fork is the bare clone syscall, as glibc's
 * child would call set_robust_list too: under the container's filter (startContainer) the
 * hook's side is then clone, dup2 (or fcntl), close_range and execveat, and nothing else. The
 * child calls nothing that needs glibc's view of its thread (no lock, no malloc) before it.
 * A container hook (w) runs through the trampoline with targv (rt_trampoline_argv), so that
 * /proc/self/exe is not hutch's binary while the kernel resolves its "#!" (CVE-2019-5736: a
 * hook in the image of "#!/proc/self/exe" ran hutch in the container, dumpable).
 */
static int spawn_hook(const struct rt_hook *h, const struct rt_hook_where *w, int stdin_fd,
		      char **targv, pid_t *pid, struct hutch_err *err)
{
	pid_t child = (pid_t)syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
	if (child < 0)
		return hutch_fail_errno(err, errno, "hook %s: fork", h->path);
	if (child == 0) {
		char *const def_args[] = { h->path, NULL };
		char *const *env = h->env ? h->env : w && w->env ? w->env : environ;
		/* (fd 0 itself when stdin was closed: then only its close-on-exec goes) */
		if ((stdin_fd == 0 ? fcntl(0, F_SETFD, 0) : dup2(stdin_fd, 0)) < 0)
			_exit(127);
		hutch_close_fds_from(3, w ? &w->tramp_fd : NULL, w ? 1 : 0);
		if (w && w->cwd && chdir(w->cwd) < 0)
			_exit(127);
		if (w)
			rt_trampoline_exec(w->tramp_fd, targv, env);
		else
			execve(h->path, h->args ? h->args : def_args, env);
		_exit(127);
	}
	*pid = child;
	return 0;
}

/* The trampoline's argv for a container hook (NULL for one in the runtime's namespace). */
static char **hook_targv(const struct rt_hook *h, const struct rt_hook_where *w)
{
	char *const def_args[] = { h->path, NULL };
	return w ? rt_trampoline_argv(h->path, h->args ? h->args : def_args) : NULL;
}

/* poll() of one fd, as the raw syscall that hook_calls names (glibc's may be another). */
static int poll_one(struct pollfd *p, int ms)
{
#ifdef SYS_poll
	return (int)syscall(SYS_poll, p, 1, ms);
#else
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };
	return (int)syscall(SYS_ppoll, p, 1, &ts, NULL, 0);
#endif
}

/* What keeping a hook's timeout makes, under the container's filter for startContainer
 * (rt_hooks_check_filter); the pid is the hook's, unknown before, here 2. */
static const struct hook_call {
	long nr;
	const char *name;
	uint64_t args[6];
} hook_calls[] = {
	{ SYS_pidfd_open, "pidfd_open", { 2, 0 } },
#ifdef SYS_poll
	{ SYS_poll, "poll", { 0, 1 } },
#else
	{ SYS_ppoll, "ppoll", { 0, 1 } },
#endif
	{ SYS_kill, "kill", { 2, SIGKILL } },
	{ SYS_wait4, "wait4", { 2, 0, 0, 0 } },
};

/* The hook is past its timeout, or cannot be timed (no pidfd): killed, then reaped, unless
 * the kill failed, as the wait would then be as long as the hook. */
static int kill_hook(const struct rt_hook *h, const char *name, pid_t pid, const char *why,
		     struct hutch_err *err)
{
	if (kill(pid, SIGKILL) < 0)
		return hutch_fail_errno(err, errno, "%s hook %s: %s; kill", name, h->path, why);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	return hutch_fail(err, ETIMEDOUT, "%s hook %s: %s", name, h->path, why);
}

/* Waits for the hook, killing it after timeout seconds (0 = none): only then is a pidfd
 * opened and polled (the pid cannot be reused before we reap it). */
static int wait_hook(const struct rt_hook *h, const char *name, pid_t pid, struct hutch_err *err)
{
	int status = 0;
	_cleanup_close_ int pidfd = h->timeout > 0 ? (int)syscall(SYS_pidfd_open, pid, 0) : -1;
	char why[64];
	if (h->timeout > 0 && pidfd < 0) {
		snprintf(why, sizeof(why), "pidfd_open: %s: its timeout cannot be kept",
			 strerror(errno));
		return kill_hook(h, name, pid, why, err);
	}
	if (pidfd >= 0) {
		struct pollfd pfd = { .fd = pidfd, .events = POLLIN };
		int n;
		do
			n = poll_one(&pfd, h->timeout * 1000);
		while (n < 0 && errno == EINTR);
		snprintf(why, sizeof(why), "timed out after %d s", h->timeout);
		if (n == 0)
			return kill_hook(h, name, pid, why, err);
		if (n < 0)
			return kill_hook(h, name, pid, "poll failed: its timeout cannot be kept",
					 err);
	}
	int r;
	while ((r = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
		;
	if (r < 0) /* e.g. SIGCHLD ignored: the status is gone, so is any proof it succeeded */
		return hutch_fail_errno(err, errno, "%s hook %s: wait", name, h->path);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	if (WIFSIGNALED(status))
		return hutch_fail(err, ECANCELED, "%s hook %s: killed by signal %d", name, h->path,
				  WTERMSIG(status));
	return hutch_fail(err, ECANCELED, "%s hook %s: exited with status %d", name, h->path,
			  WEXITSTATUS(status));
}

int rt_hooks_check_filter(const struct rt_hooks *hooks, const char *name,
			  const struct sc_filter *filter, struct hutch_err *err)
{
	for (size_t i = 0; filter && i < hooks->n; i++) {
		const struct rt_hook *h = &hooks->v[i];
		for (size_t k = 0; h->timeout > 0 && k < ARRAY_SIZE(hook_calls); k++)
			if (!sc_filter_allows(filter, hook_calls[k].nr, hook_calls[k].args))
				return hutch_fail(err, EPERM,
						  "hooks.%s[%zu].timeout: linux.seccomp denies %s, "
						  "which killing the hook %s after %d s needs",
						  name, i, hook_calls[k].name, h->path, h->timeout);
	}
	return 0;
}

int rt_hooks_run(const struct rt_hooks *hooks, const char *name, const char *state_json,
		 struct hutch_err *err)
{
	return rt_hooks_run_in(hooks, NULL, name, state_json, err);
}

int rt_hooks_run_in(const struct rt_hooks *hooks, const struct rt_hook_where *where,
		    const char *name, const char *state_json, struct hutch_err *err)
{
	for (size_t i = 0; i < hooks->n; i++) {
		const struct rt_hook *h = &hooks->v[i];
		int p[2];
		pid_t pid = 0;
		if (pipe2(p, O_CLOEXEC) < 0)
			return hutch_fail_errno(err, errno, "hook %s: pipe", h->path);
		_cleanup_free_ char **targv = hook_targv(h, where);
		int r = spawn_hook(h, where, p[0], targv, &pid, err);
		close(p[0]);
		if (r < 0) {
			close(p[1]);
			return r;
		}
		/* A hook need not read its stdin: ignore SIGPIPE only around this write, so no
		 * process we start inherits an ignored SIGPIPE. */
		struct sigaction ign = { .sa_handler = SIG_IGN }, old;
		sigaction(SIGPIPE, &ign, &old);
		hutch_write_all(p[1], state_json, strlen(state_json));
		close(p[1]);
		sigaction(SIGPIPE, &old, NULL);
		r = wait_hook(h, name, pid, err);
		if (r < 0)
			return r;
	}
	return 0;
}

/* A pipe already holding all of the state, its write end closed: the hook reads the state,
 * then EOF, and nobody writes while it runs. The write end does not block: a state the pipe
 * cannot hold, even enlarged, fails here rather than hang. */
static int state_pipe(const char *state, size_t len, struct hutch_err *err)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return hutch_fail_errno(err, errno, "pipe");
	int cap = fcntl(p[1], F_GETPIPE_SZ), r = 0;
	if (cap >= 0 && (size_t)cap < len && fcntl(p[1], F_SETPIPE_SZ, (int)len) < 0)
		r = -errno;
	if (r == 0 && fcntl(p[1], F_SETFL, O_NONBLOCK) < 0)
		r = -errno;
	if (r == 0)
		r = hutch_write_all(p[1], state, len);
	close(p[1]);
	if (r < 0) {
		close(p[0]);
		return hutch_fail_errno(err, -r, "the state (%zu bytes) into a pipe", len);
	}
	return p[0];
}

int rt_hooks_prepare(const struct rt_hooks *hooks, const struct rt_hook_where *where,
		     const char *name, const char *state_json, struct rt_hook_ready *ready,
		     struct hutch_err *err)
{
	for (size_t i = 0; i < hooks->n; i++)
		ready[i] = (struct rt_hook_ready){ .stdin_fd = -1 };
	for (size_t i = 0; i < hooks->n; i++) {
		ready[i].targv = hook_targv(&hooks->v[i], where);
		ready[i].stdin_fd = state_pipe(state_json, strlen(state_json), err);
		if (ready[i].stdin_fd < 0) {
			int r = hutch_err_prefix(err, "%s hook %s: ", name, hooks->v[i].path);
			for (size_t j = 0; j <= i; j++) {
				if (j < i)
					close(ready[j].stdin_fd);
				free(ready[j].targv);
			}
			return r;
		}
	}
	return 0;
}

int rt_hooks_run_ready(const struct rt_hooks *hooks, const struct rt_hook_where *where,
		       const char *name, const struct rt_hook_ready *ready, struct hutch_err *err)
{
	for (size_t i = 0; i < hooks->n; i++) {
		pid_t pid = 0;
		int r = spawn_hook(&hooks->v[i], where, ready[i].stdin_fd, ready[i].targv, &pid,
				   err);
		if (r >= 0)
			r = wait_hook(&hooks->v[i], name, pid, err);
		if (r < 0)
			return r;
	}
	return 0;
}
