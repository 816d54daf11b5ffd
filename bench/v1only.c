// SPDX-License-Identifier: Apache-2.0
/*
 * Runs a command where the host looks like plain cgroup v1: in a private mount namespace
 * with the cgroup2 mount of a hybrid host (/sys/fs/cgroup/unified) detached. Debian's crun
 * 1.8 refuses hybrid hosts; the suite runs every runtime under this same wrapper so that
 * none pays for it alone, and times the wrapper by itself so its cost can be taken off.
 * It does what `unshare -m sh -c 'umount /sys/fs/cgroup/unified && CMD'` does, less the
 * shell and util-linux's start-up.
 * Usage: v1only CMD [ARGS...]   (build static: cc -O2 -static)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <sys/mount.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: v1only CMD [ARGS...]\n");
		return 2;
	}
	if (unshare(CLONE_NEWNS) < 0) {
		perror("unshare");
		return 125;
	}
	/* As unshare(1) does: a private tree, so that the umount does not reach the host. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
		perror("make / private");
		return 125;
	}
	if (umount2("/sys/fs/cgroup/unified", MNT_DETACH) < 0 && errno != EINVAL &&
	    errno != ENOENT) {
		perror("umount /sys/fs/cgroup/unified");
		return 125;
	}
	execvp(argv[1], argv + 1);
	perror(argv[1]);
	return 127;
}
