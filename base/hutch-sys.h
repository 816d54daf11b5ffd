/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The syscall seam: the mount-related calls that namespaces/ and runtime/ make go through
 * hutch_sys, which points at the real calls. A unit test points it at a recorder to see what
 * would be mounted, in what order, without root.
 */
#ifndef HUTCH_SYS_H
#define HUTCH_SYS_H

#include <stddef.h>
#include <sys/types.h>

struct open_how;

struct hutch_sys {
	int (*mount)(const char *source, const char *target, const char *fstype,
		     unsigned long flags, const void *data);
	int (*umount2)(const char *target, int flags);
	int (*mkdirat)(int dirfd, const char *path, mode_t mode);
	int (*symlinkat)(const char *content, int dirfd, const char *path);
	int (*openat2)(int dirfd, const char *path, struct open_how *how, size_t size);
	int (*open_tree)(int dirfd, const char *path, unsigned int flags);
	int (*move_mount)(int from_dirfd, const char *from, int to_dirfd, const char *to,
			  unsigned int flags);
	int (*mount_setattr)(int dirfd, const char *path, unsigned int flags, void *attr,
			     size_t size);
	int (*fsopen)(const char *fstype, unsigned int flags);
	int (*fsconfig)(int fd, unsigned int cmd, const char *key, const void *value, int aux);
	int (*fsmount)(int fd, unsigned int flags, unsigned int attrs);
};

/* The real calls; hutch_sys points here unless a test swaps it. */
extern const struct hutch_sys hutch_sys_real;
extern const struct hutch_sys *hutch_sys;

#endif
