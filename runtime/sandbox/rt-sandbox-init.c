// SPDX-License-Identifier: Apache-2.0
/*
 * PID 1 of a native sandbox, without re-executing anything: the set-up child forks the
 * command and stays as init. It forwards signals to the command, reaps orphans, and when the
 * command ends writes its raw wait status to hutch and exits (the kernel then kills what is
 * left in the pid namespace). If hutch dies, the pipe to it breaks and init kills everything.
 */
#include "rt-sandbox.h"
#include "rt-process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>

static const int forwarded[] = { SIGHUP,   SIGINT,  SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2,
				 SIGWINCH, SIGCONT, SIGTSTP, SIGTTIN, SIGTTOU, SIGALRM };

/* The trampoline writes execve's errno to errfd when the command cannot be run; the fd is
 * close-on-exec in the init, and the trampoline makes it so again before the exec. */
static pid_t spawn_command(int tramp_fd, char **targv, char *const *envp, int sync_fd, int errfd)
{
	pid_t pid = fork();
	if (pid == 0) {
		close(sync_fd);
		rt_reset_signals();
		size_t n = 0;
		while (targv[n])
			n++;
		char fd_arg[16], **argv = hutch_xcalloc(n + 2, sizeof(char *));
		snprintf(fd_arg, sizeof(fd_arg), "\1%d", errfd);
		argv[0] = fd_arg;
		memcpy(argv + 1, targv, n * sizeof(char *));
		if (fcntl(errfd, F_SETFD, 0) < 0)
			argv++; /* then without it */
		int e = -rt_trampoline_exec(tramp_fd, argv, envp);
		dprintf(2, "hutch: error: exec %s through the trampoline: %s\n", targv[0],
			strerror(e));
		_exit(126);
	}
	return pid;
}

/* Reaps every exited child; true once the command itself is among them. */
static bool reap_all(pid_t cmd, int *status)
{
	bool done = false;
	int st;
	pid_t p;
	while ((p = waitpid(-1, &st, WNOHANG)) > 0)
		if (p == cmd) {
			*status = st;
			done = true;
		}
	return done;
}

void rt_sb_init(int tramp_fd, char **targv, char *const *envp, int sync_fd)
{
	sigset_t set;
	sigemptyset(&set);
	for (size_t i = 0; i < ARRAY_SIZE(forwarded); i++)
		sigaddset(&set, forwarded[i]);
	sigaddset(&set, SIGCHLD);
	/* Blocked before the fork, so no signal is lost between fork and signalfd. */
	sigprocmask(SIG_BLOCK, &set, NULL);
	int sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	/* Before the command exists: it must never see hutch's host command line or env. */
	hutch_set_proctitle("hutch-init");
	int errp[2] = { -1, -1 };
	if (pipe2(errp, O_CLOEXEC | O_NONBLOCK) < 0)
		_exit(RT_SB_EXIT_FAIL);
	pid_t cmd = spawn_command(tramp_fd, targv, envp, sync_fd, errp[1]);
	close(tramp_fd);
	close(errp[1]);
	if (cmd < 0 || sfd < 0)
		_exit(RT_SB_EXIT_FAIL);
	/* The write end reports POLLERR once hutch (the only reader) is gone. */
	struct pollfd p[2] = { { .fd = sfd, .events = POLLIN }, { .fd = sync_fd, .events = 0 } };
	int status = 0;
	for (;;) {
		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		if (p[1].revents & (POLLERR | POLLHUP)) {
			kill(-1, SIGKILL);
			_exit(128 + SIGKILL);
		}
		struct signalfd_siginfo si;
		while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
			if (si.ssi_signo != SIGCHLD)
				kill(cmd, (int)si.ssi_signo);
		if (reap_all(cmd, &status))
			break;
	}
	/* The wait status, and execve's errno when the command never ran (else 0). */
	int msg[2] = { status, 0 };
	if (read(errp[0], &msg[1], sizeof(msg[1])) != (ssize_t)sizeof(msg[1]))
		msg[1] = 0;
	(void)!write(sync_fd, msg, sizeof(msg));
	_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
}
