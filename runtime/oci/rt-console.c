// SPDX-License-Identifier: Apache-2.0
/*
 * Waiting for a foreground container: signals sent to hutch are forwarded to the
 * container's init, and with a terminal we relay our stdin/stdout to its pty (raw mode,
 * window size kept in sync) until it exits. The relay never blocks: a caller that stops
 * reading, or a command that never reads its input, pauses that direction alone, and the
 * timeout, the report and the exit status happen whatever the terminal does.
 */
#include "rt.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
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

/* Forwards the pending signals (the last one's number: 0 for none); SIGWINCH resizes the pty
 * instead. */
static int forward(int sfd, int pidfd, int master)
{
	struct signalfd_siginfo si;
	int last = 0;
	while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGWINCH && master >= 0)
			copy_winsize(master);
		else if (si.ssi_signo != SIGWINCH)
			syscall(SYS_pidfd_send_signal, pidfd, last = (int)si.ssi_signo, NULL, 0);
	}
	return last;
}

/* What one direction holds between a read and the write that takes it: at most RELAY_MAX
 * bytes, after which it stops reading (a paused direction; the other one goes on). */
#define RELAY_MAX 65536
struct relay {
	int in, out;
	bool eof; /* nothing more will be read */
	size_t len;
	char buf[RELAY_MAX];
};

static void relay_read(struct relay *r)
{
	ssize_t n = read(r->in, r->buf + r->len, RELAY_MAX - r->len);
	if (n > 0 && r->out < 0)
		return; /* nowhere to write it (no stdout, or one not open for writing): dropped */
	if (n > 0)
		r->len += (size_t)n;
	else if (n == 0 || (errno != EAGAIN && errno != EINTR))
		r->eof = true; /* EOF, or EIO: the pty's other side is gone */
}

/* A write that can't go on (the reader is gone) drops what is held: nobody will read it. */
static void relay_write(struct relay *r)
{
	ssize_t n = write(r->out, r->buf, r->len);
	if (n > 0) {
		memmove(r->buf, r->buf + n, r->len - (size_t)n);
		r->len -= (size_t)n;
	} else if (n < 0 && errno != EAGAIN && errno != EINTR) {
		r->len = 0;
		r->eof = true;
	}
}

/*
 * An fd of ours for fd's file in direction mode (O_RDONLY or O_WRONLY) that never blocks,
 * without changing the caller's own file description (an O_NONBLOCK set on a shared
 * terminal would outlive hutch in the shell), or -1. Never wider than the caller's fd: one it
 * opened read-only is never written (hutch may be root, and a reopen would ask again as
 * root). A regular file never blocks: its own fd, with the caller's offset and O_APPEND. A
 * pipe, FIFO or terminal is opened anew; a socket can't be, and gets O_NONBLOCK, put back by
 * relays_close (*restore).
 */
static int relay_fd(int fd, int mode, int *restore)
{
	struct stat st;
	char link[HUTCH_FD_PATH_MAX];
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fstat(fd, &st) < 0 ||
	    ((fl & O_ACCMODE) != mode && (fl & O_ACCMODE) != O_RDWR))
		return -1;
	if (S_ISREG(st.st_mode))
		return fcntl(fd, F_DUPFD_CLOEXEC, 3);
	int r = open(hutch_fd_path(fd, link), mode | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (r >= 0)
		return r;
	if (!(fl & O_NONBLOCK) && fcntl(fd, F_SETFL, fl | O_NONBLOCK) == 0)
		*restore = fl;
	return fcntl(fd, F_DUPFD_CLOEXEC, 3);
}

/* The poll events of the relays' fds: reads only where there is room, writes only where
 * something is held. An fd with nothing wanted leaves the set: a hang-up on it would wake
 * poll at once, forever, while its direction waits on the other end. */
static void relay_set(struct pollfd *p, int fd, short events)
{
	p->fd = events ? fd : -1;
	p->events = events;
}

static void relay_events(struct pollfd *p, const struct relay *out, const struct relay *in)
{
	relay_set(&p[2], out->in,
		  (!out->eof && out->len < RELAY_MAX ? POLLIN : 0) | (in->len ? POLLOUT : 0));
	relay_set(&p[3], in->in, !in->eof && in->len < RELAY_MAX ? POLLIN : 0);
	relay_set(&p[4], out->out, out->len ? POLLOUT : 0);
}

static void relay_step(struct pollfd *p, struct relay *out, struct relay *in)
{
	if (p[2].revents & (POLLIN | POLLHUP | POLLERR) && (p[2].events & POLLIN))
		relay_read(out);
	if (p[4].revents & (POLLOUT | POLLERR))
		relay_write(out);
	if (p[3].revents & (POLLIN | POLLHUP | POLLERR))
		relay_read(in);
	if (p[2].revents & POLLOUT)
		relay_write(in);
	else if ((p[2].revents & (POLLERR | POLLHUP)) && in->len)
		in->len = 0; /* the pty is gone: its input with it */
}

/* After the container exited: what it wrote, as far as the caller takes it within 2 s. */
static void relay_drain(struct relay *out)
{
	double until = hutch_now_ms() + 2000;
	for (;;) {
		if (!out->eof && out->len < RELAY_MAX)
			relay_read(out);
		if (!out->len)
			return; /* nothing left in the pty, nothing held */
		struct pollfd p = { .fd = out->out, .events = POLLOUT };
		int left = (int)(until - hutch_now_ms());
		if (left <= 0 || poll(&p, 1, left) <= 0)
			return;
		relay_write(out);
	}
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
		if (w->term)
			w->term(w->term_arg);
		else
			syscall(SYS_pidfd_send_signal, w->pidfd, SIGTERM, NULL, 0);
		return;
	}
	w->killed = true;
	if (w->kill_tree)
		w->kill_tree(w->kill_arg);
	else
		syscall(SYS_pidfd_send_signal, w->pidfd, SIGKILL, NULL, 0);
}

/* The two directions of a terminal: the pty's output to our stdout, our stdin to the pty. */
struct relays {
	struct relay out, in;
	int stdout_flags, stdin_flags; /* to put back on fd 1 and fd 0, or -1 */
	sigset_t mask;		       /* before SIGPIPE was blocked */
};

static int relays_open(struct relays *r, int master)
{
	/* A caller that closed its end makes our write EPIPE, not a SIGPIPE that would end
	 * hutch before its report: blocked here, and the pending one taken in relays_close (an
	 * ignored disposition would be inherited by what hutch starts later). */
	sigset_t pipe;
	sigemptyset(&pipe);
	sigaddset(&pipe, SIGPIPE);
	sigprocmask(SIG_BLOCK, &pipe, &r->mask);
	r->stdout_flags = r->stdin_flags = -1;
	r->out = (struct relay){ .in = master, .out = relay_fd(1, O_WRONLY, &r->stdout_flags) };
	r->in = (struct relay){ .in = relay_fd(0, O_RDONLY, &r->stdin_flags), .out = master };
	r->in.eof = r->in.in < 0; /* no stdin to read */
	int fl = fcntl(master, F_GETFL);
	if (fl < 0 || fcntl(master, F_SETFL, fl | O_NONBLOCK) < 0)
		return -errno;
	return 0;
}

static void relays_close(struct relays *r)
{
	if (r->out.out >= 0)
		close(r->out.out);
	if (r->in.in >= 0)
		close(r->in.in);
	if (r->stdout_flags >= 0)
		fcntl(1, F_SETFL, r->stdout_flags);
	if (r->stdin_flags >= 0)
		fcntl(0, F_SETFL, r->stdin_flags);
	sigset_t pipe;
	sigemptyset(&pipe);
	sigaddset(&pipe, SIGPIPE);
	const struct timespec now = { 0, 0 };
	while (sigtimedwait(&pipe, NULL, &now) == SIGPIPE)
		;
	sigprocmask(SIG_SETMASK, &r->mask, NULL);
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
	_cleanup_free_ struct relays *r = w->master >= 0 ? hutch_xcalloc(1, sizeof(*r)) : NULL;
	if (r && relays_open(r, w->master) < 0)
		return hutch_fail_errno(err, errno, "terminal relay");
	struct pollfd p[7] = { { .fd = w->pidfd, .events = POLLIN },
			       { .fd = sfd, .events = POLLIN },
			       { .fd = w->master },
			       { .fd = -1 },
			       { .fd = r ? r->out.out : -1 },
			       { .fd = -1, .events = POLLIN },
			       { .fd = -1, .events = POLLIN } };
	for (size_t i = 0; w->hangup && i < 2 && w->hangup[i] >= 0; i++)
		p[5 + i].fd = w->hangup[i];
	int64_t start = (int64_t)hutch_now_ms();
	for (;;) {
		if (r)
			relay_events(p, &r->out, &r->in);
		int n = poll(p, 7, poll_timeout(w, start));
		if (n < 0 && errno != EINTR)
			break;
		if (n == 0) {
			on_deadline(w);
			continue;
		}
		if (p[1].revents) {
			int sig = forward(sfd, w->pidfd, w->master);
			w->forwarded = sig ? sig : w->forwarded;
		}
		if (r && n > 0)
			relay_step(p, &r->out, &r->in);
		if ((p[5].revents || p[6].revents) && !w->hung_up) {
			w->hung_up = true; /* whoever waits for the command is gone */
			p[5].fd = p[6].fd = -1;
			if (w->kill_tree)
				w->kill_tree(w->kill_arg);
		}
		if (p[0].revents)
			break;
	}
	if (r) {
		relay_drain(&r->out);
		relays_close(r);
	}
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
