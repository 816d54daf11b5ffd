// SPDX-License-Identifier: Apache-2.0
/*
 * OCI hooks: each runs with the container state on stdin, its own args and env, and an
 * optional timeout after which it is killed. A failing hook fails the operation. A hook
 * without env gets the runtime's environment (runc's: Go's exec with a nil Env); an empty
 * env list is an empty environment.
 */
#include "rt.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int spawn_hook(const struct rt_hook *h, const struct rt_hook_where *w, int *stdin_w,
		      int *pidfd, pid_t *pid, struct hutch_err *err)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return hutch_fail_errno(err, errno, "hook %s: pipe", h->path);
	pid_t child = fork();
	if (child < 0) {
		close(p[0]);
		close(p[1]);
		return hutch_fail_errno(err, errno, "hook %s: fork", h->path);
	}
	if (child == 0) {
		char *const def_args[] = { h->path, NULL };
		char *const *env = h->env ? h->env : w && w->env ? w->env : environ;
		dup2(p[0], 0);
		hutch_close_fds_from(3, NULL, 0);
		if (w && w->cwd && chdir(w->cwd) < 0)
			_exit(127);
		execve(h->path, h->args ? h->args : def_args, env);
		_exit(127);
	}
	close(p[0]);
	*stdin_w = p[1];
	*pid = child;
	*pidfd = (int)syscall(SYS_pidfd_open, child, 0);
	return 0;
}

/* Waits for the hook, killing it after timeout seconds (0 = none). */
static int wait_hook(const struct rt_hook *h, const char *name, int pidfd, pid_t pid,
		     struct hutch_err *err)
{
	int status = 0;
	if (h->timeout > 0 && pidfd >= 0) {
		struct pollfd pfd = { .fd = pidfd, .events = POLLIN };
		int n;
		do
			n = poll(&pfd, 1, h->timeout * 1000);
		while (n < 0 && errno == EINTR);
		if (n == 0) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			return hutch_fail(err, ETIMEDOUT, "%s hook %s: timed out after %d s", name,
					  h->path, h->timeout);
		}
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	if (WIFSIGNALED(status))
		return hutch_fail(err, ECANCELED, "%s hook %s: killed by signal %d", name, h->path,
				  WTERMSIG(status));
	return hutch_fail(err, ECANCELED, "%s hook %s: exited with status %d", name, h->path,
			  WEXITSTATUS(status));
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
		_cleanup_close_ int pidfd = -1;
		int w = -1;
		pid_t pid = 0;
		int r = spawn_hook(h, where, &w, &pidfd, &pid, err);
		if (r < 0)
			return r;
		/* A hook need not read its stdin: ignore SIGPIPE only around this write, so no
		 * process we start inherits an ignored SIGPIPE. */
		struct sigaction ign = { .sa_handler = SIG_IGN }, old;
		sigaction(SIGPIPE, &ign, &old);
		hutch_write_all(w, state_json, strlen(state_json));
		close(w);
		sigaction(SIGPIPE, &old, NULL);
		r = wait_hook(h, name, pidfd, pid, err);
		if (r < 0)
			return r;
	}
	return 0;
}
