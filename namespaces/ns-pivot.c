// SPDX-License-Identifier: Apache-2.0
/*
 * Entering the rootfs: pivot_root(2) with the old root stacked under the new one and
 * detached (no put_old directory needed), or MS_MOVE + chroot for --no-pivot (ramfs roots,
 * where pivot_root is not possible).
 */
#include "ns-internal.h"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/syscall.h>

static int do_pivot(struct hutch_err *err)
{
	_cleanup_close_ int oldroot = open("/", O_DIRECTORY | O_RDONLY | O_CLOEXEC);
	if (oldroot < 0)
		return hutch_fail_errno(err, errno, "open /");
	_cleanup_close_ int newroot = open(".", O_DIRECTORY | O_RDONLY | O_CLOEXEC);
	if (newroot < 0)
		return hutch_fail_errno(err, errno, "open rootfs");
	/* pivot_root(".", ".") puts the old root on top of the new one at "/"; it is then
	 * reachable only through oldroot and can be detached from there. */
	if (syscall(SYS_pivot_root, ".", ".") < 0)
		return hutch_fail_errno(err, errno, "pivot_root");
	if (fchdir(oldroot) < 0)
		return hutch_fail_errno(err, errno, "fchdir old root");
	/* Slave first, or the unmount would propagate to the host's mounts. */
	if (mount(NULL, ".", NULL, MS_SLAVE | MS_REC, NULL) < 0)
		return hutch_fail_errno(err, errno, "make old root rslave");
	if (umount2(".", MNT_DETACH) < 0)
		return hutch_fail_errno(err, errno, "detach old root");
	if (fchdir(newroot) < 0)
		return hutch_fail_errno(err, errno, "fchdir new root");
	return 0;
}

static int do_move(const char *rootfs, struct hutch_err *err)
{
	if (mount(rootfs, "/", NULL, MS_MOVE, NULL) < 0)
		return hutch_fail_errno(err, errno, "move rootfs to /");
	if (chroot(".") < 0)
		return hutch_fail_errno(err, errno, "chroot");
	return 0;
}

int ns_pivot_root(const char *rootfs, bool no_pivot, struct hutch_err *err)
{
	if (chdir(rootfs) < 0)
		return hutch_fail_errno(err, errno, "chdir %s", rootfs);
	int r = no_pivot ? do_move(rootfs, err) : do_pivot(err);
	if (r < 0)
		return r;
	if (chdir("/") < 0)
		return hutch_fail_errno(err, errno, "chdir /");
	return 0;
}
