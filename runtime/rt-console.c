// SPDX-License-Identifier: Apache-2.0
/*
 * Waiting for a foreground container: signals sent to hutch are forwarded to the
 * container's init, and with a terminal we relay our stdin/stdout to its pty (raw mode,
 * window size kept in sync) until it exits.
 */
#include "rt.h"

#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>

static const int forwarded[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGWINCH,
				 SIGCONT, SIGTSTP };

static int block_signals(sigset_t *old, struct hutch_err *err)
{
	sigset_t set;
	sigemptyset(&set);
	for (size_t i = 0; i < ARRAY_SIZE(forwarded); i++)
		sigaddset(&set, forwarded[i]);
	sigprocmask(SIG_BLOCK, &set, old);
	int fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (fd < 0)
		return hutch_fail_errno(err, errno, "signalfd");
	return fd;
}

static int reap(pid_t pid, struct hutch_err *err)
{
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return hutch_fail_errno(err, errno, "wait for container");
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

static void copy_winsize(int master)
{
	struct winsize ws;
	if (ioctl(0, TIOCGWINSZ, &ws) == 0)
		ioctl(master, TIOCSWINSZ, &ws);
}

/* Forwards one pending signal; SIGWINCH resizes the pty instead. */
static void forward(int sfd, int pidfd, int master)
{
	struct signalfd_siginfo si;
	while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGWINCH && master >= 0)
			copy_winsize(master);
		else if (si.ssi_signo != SIGWINCH)
			syscall(SYS_pidfd_send_signal, pidfd, si.ssi_signo, NULL, 0);
	}
}

int rt_wait_forward(int pidfd, pid_t pid, struct hutch_err *err)
{
	sigset_t old;
	_cleanup_close_ int sfd = block_signals(&old, err);
	if (sfd < 0)
		return sfd;
	struct pollfd p[2] = { { .fd = pidfd, .events = POLLIN }, { .fd = sfd, .events = POLLIN } };
	for (;;) {
		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		if (p[1].revents)
			forward(sfd, pidfd, -1);
		if (p[0].revents)
			break;
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	return reap(pid, err);
}

/* Copies what is readable from in to out; false at EOF or error. */
static bool pump(int in, int out)
{
	char buf[8192];
	ssize_t n = read(in, buf, sizeof(buf));
	if (n <= 0)
		return n < 0 && (errno == EAGAIN || errno == EINTR);
	return hutch_write_all(out, buf, (size_t)n) == 0;
}

int rt_relay_and_wait(int master, int pidfd, pid_t pid, struct hutch_err *err)
{
	struct termios saved, raw;
	bool tty = tcgetattr(0, &saved) == 0;
	if (tty) {
		raw = saved;
		cfmakeraw(&raw);
		tcsetattr(0, TCSANOW, &raw);
		copy_winsize(master);
	}
	sigset_t old;
	_cleanup_close_ int sfd = block_signals(&old, err);
	if (sfd < 0)
		return sfd;
	struct pollfd p[4] = { { .fd = pidfd, .events = POLLIN },
			       { .fd = sfd, .events = POLLIN },
			       { .fd = master, .events = POLLIN },
			       { .fd = 0, .events = POLLIN } };
	bool exited = false;
	while (!exited) {
		if (poll(p, 4, -1) < 0 && errno != EINTR)
			break;
		if (p[1].revents)
			forward(sfd, pidfd, master);
		if ((p[2].revents & (POLLIN | POLLHUP)) && !pump(master, 1))
			p[2].fd = -1;
		if ((p[3].revents & (POLLIN | POLLHUP)) && !pump(0, master))
			p[3].fd = -1;
		exited = p[0].revents != 0;
	}
	/* Drain what the container wrote before exiting. */
	while (p[2].fd >= 0 && poll(&p[2], 1, 0) > 0 && (p[2].revents & POLLIN) && pump(master, 1))
		;
	if (tty)
		tcsetattr(0, TCSANOW, &saved);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return reap(pid, err);
}
