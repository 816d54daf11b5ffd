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
#include <time.h>

static const int forwarded[] = { SIGHUP,  SIGINT,   SIGQUIT, SIGTERM, SIGUSR1,
				 SIGUSR2, SIGWINCH, SIGCONT, SIGTSTP };

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

static int reap(pid_t pid, int *raw, struct hutch_err *err)
{
	int status = 0;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return hutch_fail_errno(err, errno, "wait for container");
	*raw = status;
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

/* Copies what is readable from in to out; false at EOF or error. */
static bool pump(int in, int out)
{
	char buf[8192];
	ssize_t n = read(in, buf, sizeof(buf));
	if (n <= 0)
		return n < 0 && (errno == EAGAIN || errno == EINTR);
	return hutch_write_all(out, buf, (size_t)n) == 0;
}

/* The next deadline, or -1: the timeout sends SIGTERM, the grace after it kills the tree. */
static int poll_timeout(struct rt_waiter *w, int64_t start)
{
	int64_t deadline = -1;
	if (w->timeout_ms > 0 && !w->timed_out)
		deadline = start + w->timeout_ms;
	else if (w->timed_out && w->grace_ms >= 0 && !w->killed)
		deadline = w->term_at + w->grace_ms;
	if (deadline < 0)
		return -1;
	int64_t left = deadline - (int64_t)hutch_now_ms();
	return left < 0 ? 0 : (int)(left > INT32_MAX ? INT32_MAX : left);
}

static void on_deadline(struct rt_waiter *w)
{
	if (!w->timed_out) {
		w->timed_out = true;
		w->term_at = (int64_t)hutch_now_ms();
		syscall(SYS_pidfd_send_signal, w->pidfd, SIGTERM, NULL, 0);
		return;
	}
	w->killed = true;
	if (w->kill_tree)
		w->kill_tree(w->kill_arg);
	else
		syscall(SYS_pidfd_send_signal, w->pidfd, SIGKILL, NULL, 0);
}

int rt_wait_container(struct rt_waiter *w, struct hutch_err *err)
{
	struct termios saved, raw;
	bool tty = w->master >= 0 && tcgetattr(0, &saved) == 0;
	if (tty) {
		raw = saved;
		cfmakeraw(&raw);
		tcsetattr(0, TCSANOW, &raw);
		copy_winsize(w->master);
	}
	sigset_t old;
	_cleanup_close_ int sfd = block_signals(&old, err);
	if (sfd < 0)
		return sfd;
	struct pollfd p[4] = { { .fd = w->pidfd, .events = POLLIN },
			       { .fd = sfd, .events = POLLIN },
			       { .fd = w->master, .events = POLLIN },
			       { .fd = w->master >= 0 ? 0 : -1, .events = POLLIN } };
	int64_t start = (int64_t)hutch_now_ms();
	for (;;) {
		int n = poll(p, 4, poll_timeout(w, start));
		if (n < 0 && errno != EINTR)
			break;
		if (n == 0) {
			on_deadline(w);
			continue;
		}
		if (p[1].revents)
			forward(sfd, w->pidfd, w->master);
		if ((p[2].revents & (POLLIN | POLLHUP)) && !pump(w->master, 1))
			p[2].fd = -1;
		if ((p[3].revents & (POLLIN | POLLHUP)) && !pump(0, w->master))
			p[3].fd = -1;
		if (p[0].revents)
			break;
	}
	/* Drain what the container wrote before exiting. */
	while (p[2].fd >= 0 && poll(&p[2], 1, 0) > 0 && (p[2].revents & POLLIN) &&
	       pump(w->master, 1))
		;
	if (tty)
		tcsetattr(0, TCSANOW, &saved);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return reap(w->pid, &w->status, err);
}

int rt_wait_forward(int pidfd, pid_t pid, struct hutch_err *err)
{
	struct rt_waiter w = { .pidfd = pidfd, .pid = pid, .master = -1, .grace_ms = -1 };
	return rt_wait_container(&w, err);
}

int rt_relay_and_wait(int master, int pidfd, pid_t pid, struct hutch_err *err)
{
	struct rt_waiter w = { .pidfd = pidfd, .pid = pid, .master = master, .grace_ms = -1 };
	return rt_wait_container(&w, err);
}
