// SPDX-License-Identifier: Apache-2.0
/*
 * The real calls behind hutch_sys (hutch-sys.h). The new mount API goes through syscall(2)
 * so that the seam does not depend on the C library having wrappers for it.
 */
#include "hutch-sys.h"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static int sys_openat2(int dirfd, const char *path, struct open_how *how, size_t size)
{
	return (int)syscall(SYS_openat2, dirfd, path, how, size);
}

static int sys_open_tree(int dirfd, const char *path, unsigned int flags)
{
	return (int)syscall(SYS_open_tree, dirfd, path, flags);
}

static int sys_move_mount(int from_dirfd, const char *from, int to_dirfd, const char *to,
			  unsigned int flags)
{
	return (int)syscall(SYS_move_mount, from_dirfd, from, to_dirfd, to, flags);
}

static int sys_mount_setattr(int dirfd, const char *path, unsigned int flags, void *attr,
			     size_t size)
{
	return (int)syscall(SYS_mount_setattr, dirfd, path, flags, attr, size);
}

static int sys_fsopen(const char *fstype, unsigned int flags)
{
	return (int)syscall(SYS_fsopen, fstype, flags);
}

static int sys_fsconfig(int fd, unsigned int cmd, const char *key, const void *value, int aux)
{
	return (int)syscall(SYS_fsconfig, fd, cmd, key, value, aux);
}

static int sys_fsmount(int fd, unsigned int flags, unsigned int attrs)
{
	return (int)syscall(SYS_fsmount, fd, flags, attrs);
}

const struct hutch_sys hutch_sys_real = {
	.mount = mount,
	.umount2 = umount2,
	.mkdirat = mkdirat,
	.symlinkat = symlinkat,
	.openat2 = sys_openat2,
	.open_tree = sys_open_tree,
	.move_mount = sys_move_mount,
	.mount_setattr = sys_mount_setattr,
	.fsopen = sys_fsopen,
	.fsconfig = sys_fsconfig,
	.fsmount = sys_fsmount,
};

const struct hutch_sys *hutch_sys = &hutch_sys_real;
