// SPDX-License-Identifier: Apache-2.0
/*
 * Parent/child synchronisation over a SOCK_SEQPACKET pair: one fixed-size message per step,
 * so a failing child sends its struct hutch_err and the parent reports exactly why. Also the
 * clone itself, shared by create and exec.
 */
#include "rt.h"
#include "hutch-ids.h"

#include <fcntl.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>

int rt_sync_send(int fd, enum rt_sync_type type, const struct hutch_err *e, struct hutch_err *err)
{
	struct rt_sync_msg m = { .type = type };
	if (e)
		m.err = *e;
	ssize_t n;
	do
		n = send(fd, &m, sizeof(m), MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(m))
		return hutch_fail_errno(err, n < 0 ? errno : EPIPE, "sync: send");
	return 0;
}

int rt_sync_recv(int fd, struct rt_sync_msg *msg, struct hutch_err *err)
{
	ssize_t n;
	bool reset = false;
	/* A child that exits without reading what we sent (the seccomp program, after it
	 * failed) makes our next recv fail once with ECONNRESET; what it sent before exiting,
	 * its error, is still queued behind that. */
	for (;;) {
		n = recv(fd, msg, sizeof(*msg), 0);
		if (n < 0 && (errno == EINTR || (errno == ECONNRESET && !reset))) {
			reset |= errno == ECONNRESET;
			continue;
		}
		break;
	}
	if (n < 0)
		return hutch_fail_errno(err, errno, "sync: receive");
	if (n == 0)
		return hutch_fail(err, EPIPE, "container init exited during setup");
	if (n != (ssize_t)sizeof(*msg))
		return hutch_fail(err, EPROTO, "sync: short message");
	return 0;
}

int rt_sync_expect(int fd, enum rt_sync_type type, struct hutch_err *err)
{
	struct rt_sync_msg m;
	int r = rt_sync_recv(fd, &m, err);
	if (r < 0)
		return r;
	if (m.type == RT_SYNC_ERROR) {
		*err = m.err;
		return -(m.err.code ? m.err.code : EINVAL);
	}
	if (m.type != type)
		return hutch_fail(err, EPROTO, "sync: expected message %d, got %u", type, m.type);
	return 0;
}

int rt_sync_send_filter(int fd, const struct sc_filter *f, struct hutch_err *err)
{
	size_t size;
	const void *p = sc_filter_bytes(f, &size);
	ssize_t n;
	do
		n = send(fd, p, size, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)size)
		return hutch_fail_errno(err, n < 0 ? errno : EPROTO, "sync: send seccomp program");
	return 0;
}

/* The packet's length first (a peek), then the packet into a buffer of that size: in a
 * freshly cloned init that is ~1 µs cheaper than one recv into room for the longest. */
int rt_sync_recv_filter(int fd, struct sc_filter **out, struct hutch_err *err)
{
	ssize_t n;
	do
		n = recv(fd, NULL, 0, MSG_PEEK | MSG_TRUNC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return hutch_fail_errno(err, errno, "sync: receive seccomp program");
	if (n == 0)
		return hutch_fail(err, EPIPE, "sync: no seccomp program");
	if ((size_t)n > sc_filter_max_bytes())
		return hutch_fail(err, EPROTO, "sync: seccomp program too long (%zd bytes)", n);
	size_t size = (size_t)n;
	_cleanup_free_ void *buf = hutch_xmalloc(size);
	do
		n = recv(fd, buf, size, 0);
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)size)
		return hutch_fail_errno(err, n < 0 ? errno : EPROTO,
					"sync: receive seccomp program");
	TRY(sc_filter_unpack(buf, size, out, err));
	buf = NULL; /* it is *out now */
	return 0;
}

pid_t rt_clone(uint64_t flags, int cgfd, int pidns_fd, int *pidfd, struct hutch_err *err)
{
	struct clone_args args = {
		.flags = flags | CLONE_PIDFD,
		.pidfd = (uint64_t)(uintptr_t)pidfd,
		/* CLONE_PARENT takes the caller's own exit signal (clone3 insists on 0 then). */
		.exit_signal = (flags & CLONE_PARENT) ? 0 : SIGCHLD,
	};
	if (cgfd >= 0) {
		args.flags |= CLONE_INTO_CGROUP;
		args.cgroup = (uint64_t)cgfd;
	}
	/* Joining a pid namespace only changes where children go: the parent joins it for
	 * this clone and returns to its own right after. */
	_cleanup_close_ int own = -1;
	if (pidns_fd >= 0) {
		own = open("/proc/self/ns/pid_for_children", O_RDONLY | O_CLOEXEC);
		if (own < 0)
			return hutch_fail_errno(err, errno, "open own pid namespace");
		if (setns(pidns_fd, CLONE_NEWPID) < 0)
			return hutch_fail_errno(err, errno, "join the pid namespace");
	}
	pid_t pid = (pid_t)syscall(SYS_clone3, &args, sizeof(args));
	int e = errno;
	/* Rootless, from inside the container's user namespace there is no way back: that is
	 * exec's middle process (clone_rootless), which exits once the process is cloned. */
	if (pid != 0 && own >= 0 && setns(own, CLONE_NEWPID) < 0 &&
	    !(errno == EPERM && hutch_rootless())) {
		/* Our later children (hooks) would land in the container: stop here. */
		if (pid > 0) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
		}
		return hutch_fail_errno(err, errno, "return to own pid namespace");
	}
	if (pid < 0)
		return hutch_fail_errno(err, e, "clone");
	return pid;
}
