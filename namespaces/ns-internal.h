/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Helpers shared between the files of namespaces/ and nothing else (ns-mount-util.c unless
 * said): the locked-flag preserving bind remount, the procfs check, /dev setup, path
 * splitting and comparing, tmpcopyup's copy.
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

/* ns-dev.c: creates /dev content inside rootfd: standard nodes, fd links, ptmx, then cfg->devices. */
int ns_setup_dev(int rootfd, const struct ns_rootfs *cfg, struct hutch_err *err);
/* Pure: whether the mount that path is on (the deepest mount point above it in the text of
 * a /proc/PID/mountinfo, which is cut up) is shared. */
bool ns_on_shared_mount(const char *path, char *text);

/* "/a/b/c" -> dir "/a/b", base "c". Fails for "/", "", ".." and over-long paths. */
int ns_split_path(const char *path, char dir[PATH_MAX], char base[NAME_MAX + 1],
		  struct hutch_err *err);

/* dest's first components are name's ("/proc/sys" is under "proc"); dest is name itself. */
bool ns_path_under(const char *dest, const char *name);
bool ns_path_is(const char *dest, const char *name);

/* ns-mount-plan.c: an op appended to p (tree and slots -1), and s (malloc'd) kept as long as
 * p, for the ops to point to. */
struct ns_mount_op *ns_plan_add(struct ns_mount_plan *p, enum ns_mount_op_kind kind,
				const char *target);
const char *ns_plan_own(struct ns_mount_plan *p, char *s);

/* tmpcopyup (ns-mount-copy.c): copies the directory sfd's content (dirs, files, symlinks,
 * nodes; mode and owner) into dfd. */
int ns_copy_tree(int sfd, int dfd, int depth, struct hutch_err *err);

#endif
