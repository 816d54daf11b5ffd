// SPDX-License-Identifier: Apache-2.0
/*
 * --lock NAME: one sandbox per name at a time, with a kernel lock (flock) on a file under
 * hutch's state dir, so a holder that dies frees it. The holder writes its pid there so a
 * waiter can say who holds it.
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

int rt_sb_lock(const struct rt_sb_opts *o, int *out, struct hutch_err *err)
{
	char path[512];
	mkdir(RT_DEFAULT_ROOT, 0711);
	if (mkdir(RT_SB_LOCKS, 0700) < 0 && errno != EEXIST)
		return hutch_fail_errno(err, errno, "--lock: create %s", RT_SB_LOCKS);
	snprintf(path, sizeof(path), "%s/%s", RT_SB_LOCKS, o->lock);
	_cleanup_close_ int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return hutch_fail_errno(err, errno, "--lock %s", o->lock);
	double start = hutch_now_ms();
	bool poll_mode = o->no_wait || o->lock_timeout >= 0;
	/* Without a limit, block in the kernel; with one, poll every 10 ms. */
	while (flock(fd, poll_mode ? LOCK_EX | LOCK_NB : LOCK_EX) < 0) {
		if (errno == EINTR)
			continue;
		if (errno != EWOULDBLOCK)
			return hutch_fail_errno(err, errno, "--lock %s", o->lock);
		if (o->no_wait || (hutch_now_ms() - start) / 1e3 >= o->lock_timeout)
			return hutch_fail(err, EWOULDBLOCK, "--lock %s: held by pid %d", o->lock,
					  holder(fd));
		usleep(10000);
	}
	char pid[32];
	int n = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	if (ftruncate(fd, 0) == 0)
		(void)!pwrite(fd, pid, (size_t)n, 0);
	*out = steal_fd(fd);
	return 0;
}
