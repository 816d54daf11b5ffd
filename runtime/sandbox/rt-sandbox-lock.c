// SPDX-License-Identifier: Apache-2.0
/*
 * --lock NAME: one sandbox per name at a time, with a kernel lock (flock) on a file under
 * hutch's state dir, so a holder that dies frees it. The holder writes its pid there so a
 * waiter can say who holds it, and removes the file as it lets go, so that lock files do not
 * pile up (a holder that is killed leaves its file, which the next holder removes).
 */
#include "rt-sandbox.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>

static int holder(int fd)
{
	char buf[32] = "";
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	return n > 0 ? atoi(buf) : 0;
}

/* Still the file name in dir? A holder unlinks it before it lets go (rt_sb_unlock), so the
 * inode a waiter finally locks may be one nobody else will ever look at. */
static bool still_there(int fd, int dir, const char *name)
{
	struct stat a, b;
	return fstat(fd, &a) == 0 && fstatat(dir, name, &b, AT_SYMLINK_NOFOLLOW) == 0 &&
	       a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* The lock file, never a wait in open (O_NONBLOCK: a FIFO planted there) nor a symlink
 * followed; only a regular file is a lock. */
static int open_lock(int dir, const struct rt_sb_opts *o, struct hutch_err *err)
{
	int fd = openat(dir, o->lock, O_RDWR | O_CREAT | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return hutch_fail_errno(err, errno, "--lock %s: %s/%s", o->lock, RT_SB_LOCKS,
					o->lock);
	if (!rt_regular(fd)) {
		close(fd);
		return hutch_fail(err, EINVAL, "--lock %s: %s/%s is not a regular file", o->lock,
				  RT_SB_LOCKS, o->lock);
	}
	return fd;
}

int rt_sb_lock(const struct rt_sb_opts *o, int *out, struct hutch_err *err)
{
	_cleanup_close_ int dir = rt_sb_subdir("locks", true, err);
	if (dir < 0)
		return hutch_err_prefix(err, "--lock: ");
	double start = hutch_now_ms();
	bool poll_mode = o->no_wait || o->lock_timeout >= 0;
	for (;;) {
		_cleanup_close_ int fd = open_lock(dir, o, err);
		if (fd < 0)
			return fd;
		/* Without a limit, block in the kernel; with one, poll every 10 ms. */
		while (flock(fd, poll_mode ? LOCK_EX | LOCK_NB : LOCK_EX) < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EWOULDBLOCK)
				return hutch_fail_errno(err, errno, "--lock %s", o->lock);
			if (o->no_wait || (hutch_now_ms() - start) / 1e3 >= o->lock_timeout)
				return hutch_fail(err, EWOULDBLOCK, "--lock %s: held by pid %d",
						  o->lock, holder(fd));
			usleep(10000);
		}
		if (!still_there(fd, dir, o->lock))
			continue; /* its holder removed it as it finished: lock the new one */
		char pid[32];
		int n = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
		if (ftruncate(fd, 0) == 0)
			(void)!pwrite(fd, pid, (size_t)n, 0);
		*out = steal_fd(fd);
		return 0;
	}
}

void rt_sb_unlock(const struct rt_sb_opts *o, int fd)
{
	struct hutch_err e = { 0 };
	if (fd < 0)
		return;
	_cleanup_close_ int dir = rt_sb_subdir("locks", false, &e);
	if (dir >= 0 &&
	    still_there(fd, dir, o->lock)) /* a waiter that locks it next sees it gone */
		unlinkat(dir, o->lock, 0);
	close(fd);
}
