// SPDX-License-Identifier: Apache-2.0
/*
 * The user namespace and credentials: writing a child's uid/gid maps from the parent, and
 * switching the container process to its user while keeping the capabilities that
 * ns_apply_caps trims afterwards.
 */
#include "ns-internal.h"

#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>

/* The kernel takes a map in exactly one write(2); later writes fail EPERM. */
static int write_map(pid_t pid, const char *file, const struct ns_idmap *v, size_t n,
		     struct hutch_err *err)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	size_t cap = n * 36 + 1, len = 0;
	_cleanup_free_ char *buf = hutch_xmalloc(cap);
	for (size_t i = 0; i < n; i++)
		len += (size_t)snprintf(buf + len, cap - len, "%u %u %u\n", v[i].container_id,
					v[i].host_id, v[i].size);
	_cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return hutch_fail_errno(err, errno, "open %s", path);
	ssize_t w = write(fd, buf, len);
	if (w < 0)
		return hutch_fail_errno(err, errno, "write %s", path);
	if ((size_t)w != len)
		return hutch_fail(err, EIO, "write %s: short write", path);
	return 0;
}

int ns_write_idmaps(pid_t pid, const struct ns_idmap *uids, size_t n_uids,
		    const struct ns_idmap *gids, size_t n_gids, struct hutch_err *err)
{
	int r;
	if (n_uids > 0) {
		r = write_map(pid, "uid_map", uids, n_uids, err);
		if (r < 0)
			return r;
	}
	if (n_gids == 0)
		return 0;
	/* Without CAP_SETGID in the parent namespace, the kernel only takes a gid_map once
	 * setgroups is denied (otherwise dropping groups could grant access). */
	if (geteuid() != 0) {
		char path[64];
		snprintf(path, sizeof(path), "/proc/%d/setgroups", (int)pid);
		_cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd < 0 && errno != ENOENT)
			return hutch_fail_errno(err, errno, "open %s", path);
		if (fd >= 0 && write(fd, "deny", 4) != 4)
			return hutch_fail_errno(err, errno, "write %s", path);
	}
	return write_map(pid, "gid_map", gids, n_gids, err);
}

static int set_ids(const struct ns_user *u, struct hutch_err *err)
{
	if (u->n_additional_gids > 0) {
		if (setgroups(u->n_additional_gids, u->additional_gids) < 0)
			return hutch_fail_errno(err, errno, "setgroups");
	} else if (setgroups(0, NULL) < 0 && errno != EPERM) {
		/* EPERM: setgroups is denied in this user namespace; nothing to drop then. */
		return hutch_fail_errno(err, errno, "setgroups");
	}
	if (setresgid(u->gid, u->gid, u->gid) < 0)
		return hutch_fail_errno(err, errno, "setresgid %u", (unsigned)u->gid);
	if (setresuid(u->uid, u->uid, u->uid) < 0)
		return hutch_fail_errno(err, errno, "setresuid %u", (unsigned)u->uid);
	return 0;
}

int ns_switch_user(const struct ns_user *user, struct hutch_err *err)
{
	/* Keep the permitted set across setresuid to a non-zero uid: ns_apply_caps sets the
	 * spec's capabilities from it afterwards. */
	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
		return hutch_fail_errno(err, errno, "set keepcaps");
	int r = set_ids(user, err);
	if (r < 0)
		return r;
	if (prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) < 0)
		return hutch_fail_errno(err, errno, "clear keepcaps");
	if (user->has_umask)
		umask(user->umask & 0777);
	return 0;
}
