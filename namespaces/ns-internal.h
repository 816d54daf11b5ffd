/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Helpers shared between the files of namespaces/ and nothing else: the locked-flag
 * preserving bind remount, the procfs check, /dev setup and path splitting.
 */
#ifndef HUTCH_NS_INTERNAL_H
#define HUTCH_NS_INTERNAL_H

#include "ns.h"

#include <limits.h>
#include <stdint.h>

/* Changes a bind mount's per-mount flags to flags, keeping the ones already set on it (the
 * kernel locks ro/nosuid/nodev/noexec/atime of mounts inherited into a user namespace, and a
 * remount that drops them fails EPERM) unless they are in clear. target may be a fd path. */
int ns_remount_bind(const char *target, unsigned long flags, unsigned long clear,
		    struct hutch_err *err);

/* Fails unless path (or the file behind fd when fd >= 0) lives on a real procfs. */
int ns_check_procfs(int fd, const char *path, struct hutch_err *err);

/* Creates /dev content inside rootfd: standard nodes, fd links, ptmx, then cfg->devices. */
int ns_setup_dev(int rootfd, const struct ns_rootfs *cfg, struct hutch_err *err);

/* "/a/b/c" -> dir "/a/b", base "c". Fails for "/", "", ".." and over-long paths. */
int ns_split_path(const char *path, char dir[PATH_MAX], char base[NAME_MAX + 1],
		  struct hutch_err *err);

#endif
