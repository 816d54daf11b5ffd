// SPDX-License-Identifier: Apache-2.0
/*
 * PID 1 of a native sandbox, without re-executing anything: the set-up child forks the
 * command and stays as init. It forwards signals to the command, reaps orphans, and when the
 * command ends writes its raw wait status to hutch and exits (the kernel then kills what is
 * left in the pid namespace). If hutch dies, the pipe to it breaks and init kills everything.
 */
#include "rt-sandbox.h"
#include "rt-sandbox-pool.h"
#include "rt-process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>

static const int forwarded[] = { SIGHUP,   SIGINT,  SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2,
				 SIGWINCH, SIGCONT, SIGTSTP, SIGTTIN, SIGTTOU, SIGALRM };

/* A pooled sandbox's command (rt_sb_pool_init): the request's stdio and cwd, and its
 * program looked up in the request's PATH, here, as the sandbox user; else the errno for
 * errfd, and 126 or 127 as a shell would. */
static int pool_prepare(const struct rt_sb_pool_cmd *c, char *exe, size_t len)
{
	for (int i = 0; i < 3; i++)
		if (dup2(c->stdio[i], i) < 0)
			return -errno;
	if (chdir(c->cwd) < 0) /* not made, as a cold run makes it: said as the cwd's */
		return -(errno | RT_SB_POOL_CWD_ERR);
	const char *name = c->argv[0], *path = "/usr/local/bin:/usr/bin:/bin";
	for (char **e = c->env; *e; e++)
		if (!strncmp(*e, "PATH=", 5))
			path = *e + 5;
	if (strchr(name, '/')) {
		snprintf(exe, len, "%s", name);
		return 0;
	}
	for (const char *d = path; *d;) {
		size_t n = strcspn(d, ":");
		struct stat st;
		int w = snprintf(exe, len, "%.*s/%s", (int)n, n ? d : ".", name);
		if (w > 0 && (size_t)w < len && stat(exe, &st) == 0 && !S_ISDIR(st.st_mode) &&
		    (st.st_mode & 0111))
			return 0;
		d += n + (d[n] == ':');
	}
	return -ENOENT;
}

/* The trampoline writes execve's errno to errfd when the command cannot be run; the fd is
 * close-on-exec in the init, and the trampoline makes it so again before the exec. Pooled, the
 * child is forked before there is a command: it waits for it on sync_fd (the init only polls
 * that for its supervisor's end), then finds its program. */
static pid_t spawn_command(int tramp_fd, char **targv, char *const *envp, int sync_fd, int errfd,
			   bool pooled)
{
	pid_t pid = fork();
	if (pid == 0) {
		char exe[4096];
		struct rt_sb_pool_cmd pc;
		rt_reset_signals();
		if (pooled && rt_sb_pool_cmd_recv(sync_fd, &pc) < 0)
			_exit(RT_SB_EXIT_FAIL); /* no request: the supervisor is gone */
		close(sync_fd);
		if (pooled) {
			int e = pool_prepare(&pc, exe, sizeof(exe));
			if (e < 0) {
				e = -e;
				(void)!write(errfd, &e, sizeof(e));
				_exit(e == ENOENT ? 127 : 126); /* a cwd's failure: 126 */
			}
			targv = rt_trampoline_argv(exe, pc.argv);
			envp = pc.env;
		}
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

static __attribute__((noreturn)) void init_main(int tramp_fd, char **targv, char *const *envp,
						int sync_fd, bool pooled)
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
	pid_t cmd = spawn_command(tramp_fd, targv, envp, sync_fd, errp[1], pooled);
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

void rt_sb_init(int tramp_fd, char **targv, char *const *envp, int sync_fd)
{
	init_main(tramp_fd, targv, envp, sync_fd, false);
}

/* A pooled sandbox's init: started (privileges dropped, filter loaded) before its request
 * existed, with the command's process forked already; the supervisor sends that process the
 * command. Without one (the supervisor is gone), it ends, and with it the sandbox. */
void rt_sb_pool_init(int tramp_fd, char **targv, char *const *envp, int sync_fd)
{
	init_main(tramp_fd, targv, envp, sync_fd, true);
}
