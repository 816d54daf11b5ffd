// SPDX-License-Identifier: Apache-2.0
/*
 * The container's terminal: a pty from its own devpts, the slave as controlling terminal,
 * stdio and /dev/console, and passing the master over a unix socket (SCM_RIGHTS) as the
 * OCI console-socket protocol wants.
 */
#include "ns-internal.h"
#include "hutch-sys.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <termios.h>

#ifndef TIOCGPTPEER
#define TIOCGPTPEER _IO('T', 0x41)
#endif

static int open_slave(int master, bool by_path, struct hutch_err *err)
{
	/* TIOCGPTPEER opens the peer of this very master: no path lookup to race with. */
	int fd = ioctl(master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (fd >= 0 || !by_path)
		return fd >= 0 ? fd : hutch_fail_errno(err, errno, "open the pty's slave");
	char name[64];
	if (ptsname_r(master, name, sizeof(name)) != 0)
		return hutch_fail_errno(err, errno, "ptsname");
	fd = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return hutch_fail_errno(err, errno, "open %s", name);
	return fd;
}

/* runc binds the pty over /dev/console so programs that open it reach the terminal. */
static int bind_console(int slave, struct hutch_err *err)
{
	int fd = open("/dev/console", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
	if (fd < 0 && errno == EROFS)
		return 0; /* a read-only /dev: no console, as runc */
	if (fd < 0 && errno != EEXIST)
		return hutch_fail_errno(err, errno, "create /dev/console");
	if (fd >= 0)
		close(fd);
	_cleanup_close_ int target = open("/dev/console", O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (target < 0)
		return hutch_fail_errno(err, errno, "open /dev/console");
	struct stat st;
	if (fstat(target, &st) < 0)
		return hutch_fail_errno(err, errno, "stat /dev/console");
	if (!S_ISREG(st.st_mode) && !S_ISCHR(st.st_mode))
		return hutch_fail(err, EINVAL, "/dev/console is not a file or device");
	char src[HUTCH_FD_PATH_MAX], dst[HUTCH_FD_PATH_MAX];
	if (hutch_sys->mount(hutch_fd_path(slave, src), hutch_fd_path(target, dst), NULL, MS_BIND,
			     NULL) < 0)
		return hutch_fail_errno(err, errno, "bind pty to /dev/console");
	return 0;
}

static int become_tty(int slave, unsigned short rows, unsigned short cols, struct hutch_err *err)
{
	if (rows || cols) {
		struct winsize ws = { .ws_row = rows, .ws_col = cols };
		if (ioctl(slave, TIOCSWINSZ, &ws) < 0)
			return hutch_fail_errno(err, errno, "set terminal size");
	}
	/* EPERM: already a process group leader; fine if it leads its own session. */
	if (setsid() < 0 && !(errno == EPERM && getsid(0) == getpid()))
		return hutch_fail_errno(err, errno, "setsid");
	if (ioctl(slave, TIOCSCTTY, 0) < 0)
		return hutch_fail_errno(err, errno, "set controlling terminal");
	for (int i = 0; i <= 2; i++) {
		/* dup2 onto itself would keep the slave's O_CLOEXEC. */
		int r = i == slave ? fcntl(i, F_SETFD, 0) : dup2(slave, i);
		if (r < 0)
			return hutch_fail_errno(err, errno, "dup2 pty to fd %d", i);
	}
	return 0;
}

static int open_at2(int dirfd, const char *path, uint64_t flags, uint64_t resolve)
{
	struct open_how how = { .flags = flags, .resolve = resolve };
	return (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
}

/*
 * /dev/pts/ptmx of the current root, verified before it is opened for real: an exec joins a
 * /dev that the container's root may have rearranged (a symlink, a FIFO that blocks the open,
 * another device node). /dev/pts must be a devpts reached without symlinks, and ptmx the 5:2
 * node of that very mount (RESOLVE_NO_XDEV: nothing bound over it); a devpts holds nothing a
 * container can create, so the open can only reach its ptmx.
 */
int ns_open_ptmx(struct hutch_err *err)
{
	const uint64_t strict = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
	_cleanup_close_ int pts =
		open_at2(AT_FDCWD, "/dev/pts", O_PATH | O_DIRECTORY | O_CLOEXEC, strict);
	if (pts < 0)
		return hutch_fail_errno(err, errno, "open /dev/pts");
	struct statfs sf;
	if (fstatfs(pts, &sf) < 0 || sf.f_type != DEVPTS_SUPER_MAGIC)
		return hutch_fail(err, EINVAL, "/dev/pts is not a devpts");
	_cleanup_close_ int fd = open_at2(pts, "ptmx", O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC,
					  strict | RESOLVE_BENEATH | RESOLVE_NO_XDEV);
	if (fd < 0)
		return hutch_fail_errno(err, errno, "open /dev/pts/ptmx");
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISCHR(st.st_mode) || st.st_rdev != makedev(5, 2))
		return hutch_fail(err, EINVAL, "/dev/pts/ptmx is not the pty multiplexer");
	if (fcntl(fd, F_SETFL, 0) < 0) /* O_NONBLOCK only for the open */
		return hutch_fail_errno(err, errno, "/dev/pts/ptmx: fcntl");
	return steal_fd(fd);
}

int ns_setup_pty(unsigned short rows, unsigned short cols, bool console, uid_t owner,
		 struct hutch_err *err)
{
	_cleanup_close_ int master = ns_open_ptmx(err);
	if (master < 0)
		return master;
	if (unlockpt(master) < 0)
		return hutch_fail_errno(err, errno, "unlockpt");
	_cleanup_close_ int slave = open_slave(master, console, err);
	if (slave < 0)
		return slave;
	/* Else a non-root user could not reopen its own terminal (/dev/tty, $(tty)). EINVAL:
	 * owner is not mapped in our user namespace; EPERM/EROFS: a devpts we may not change.
	 * Then the terminal stays root's, as under runc. */
	if (fchown(slave, owner, (gid_t)-1) < 0 && errno != EINVAL && errno != EPERM &&
	    errno != EROFS)
		return hutch_fail_errno(err, errno, "chown the pty to uid %u", (unsigned)owner);
	int r = console ? bind_console(slave, err) : 0;
	if (r < 0)
		return r;
	r = become_tty(slave, rows, cols, err);
	if (r < 0)
		return r;
	if (slave <= 2)
		slave = -1; /* now one of our stdio fds */
	return steal_fd(master);
}

int ns_send_fd(int sock, int fd, const char *name, struct hutch_err *err)
{
	/* A stream socket needs at least one byte of data to carry the control message. */
	const char *data = name && *name ? name : "";
	struct iovec iov = { .iov_base = (void *)data, .iov_len = strlen(data) + (*data ? 0 : 1) };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	memset(&u, 0, sizeof(u));
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = u.buf,
		.msg_controllen = sizeof(u.buf),
	};
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	ssize_t n;
	do
		n = sendmsg(sock, &msg, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return hutch_fail_errno(err, errno, "send fd");
	return 0;
}

static void close_received(struct msghdr *msg)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(msg); c; c = CMSG_NXTHDR(msg, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < n; i++) {
			int fd;
			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			close(fd);
		}
	}
}

int ns_recv_fd(int sock, struct hutch_err *err)
{
	char data[4096];
	struct iovec iov = { .iov_base = data, .iov_len = sizeof(data) };
	union {
		char buf[CMSG_SPACE(sizeof(int) * 4)];
		struct cmsghdr align;
	} u;
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = u.buf,
		.msg_controllen = sizeof(u.buf),
	};
	ssize_t n;
	do
		n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return hutch_fail_errno(err, errno, "receive fd");
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	if (n == 0 || !c || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
	    c->cmsg_len != CMSG_LEN(sizeof(int)) || (msg.msg_flags & MSG_CTRUNC) ||
	    CMSG_NXTHDR(&msg, c)) {
		close_received(&msg);
		return hutch_fail(err, EBADMSG, "expected exactly one file descriptor");
	}
	int fd;
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}
