// SPDX-License-Identifier: Apache-2.0
/*
 * A layer written by a user namespace's root (an image build runs as root inside, whose ids
 * are a subordinate range on the host) holds the host's view of its ids: shift..shift+span-1
 * for 0..span-1. Before it becomes a layer they are taken back, so that the store holds the
 * ids the image means, as any other layer does: file owners (lchown, never through a link),
 * and file capabilities, which a namespace's root writes as version 3 with its host id as
 * rootid and which the chown would drop: rewritten as plain version 2.
 */
#include "img-internal.h"

#include <dirent.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#define CAP_XATTR "security.capability"
#define VFS_CAP_V2 0x02000000u
#define VFS_CAP_V3 0x03000000u
#define VFS_CAP_MASK 0xff000000u
#define VFS_CAP_V2_SIZE 20
#define VFS_CAP_V3_SIZE 24

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static bool inside(uint32_t id, uint32_t shift, uint32_t span)
{
	return id >= shift && id - shift < span;
}

/* A regular file's v3 capability of the namespace's root, as the v2 it stands for. */
static int read_cap(int dirfd, const char *name, const struct img_idshift *sh, unsigned char v2[20],
		    bool *has)
{
	*has = false;
	_cleanup_close_ int fd =
		openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return 0; /* unreadable is no capability of ours to keep */
	unsigned char buf[VFS_CAP_V3_SIZE];
	ssize_t n = fgetxattr(fd, CAP_XATTR, buf, sizeof(buf));
	if (n < 0)
		return 0;
	uint32_t rev = le32(buf) & VFS_CAP_MASK;
	if (rev == VFS_CAP_V3 && n == VFS_CAP_V3_SIZE && le32(buf + 20) == sh->uid) {
		memcpy(v2, buf, VFS_CAP_V2_SIZE);
		v2[3] = 0x02; /* magic_etc's revision byte (little-endian: the top one) */
		*has = true;
	} else if (rev == VFS_CAP_V2 && n == VFS_CAP_V2_SIZE) {
		memcpy(v2, buf, VFS_CAP_V2_SIZE);
		*has = true;
	}
	return 0;
}

/* back: the namespace's host ids to the image's (a commit); else the image's ids that a
 * mount without the namespace's view wrote (a build's --copy) to the namespace's. */
static uint32_t map_id(uint32_t id, uint32_t shift, uint32_t span, bool back)
{
	if (back)
		return inside(id, shift, span) ? id - shift : id;
	return id < span && !inside(id, shift, span) ? id + shift : id;
}

static int shift_entry(int dirfd, const char *name, const struct img_idshift *sh, bool back,
		       int depth, struct hutch_err *err);

static int shift_dir(int fd, const struct img_idshift *sh, bool back, int depth,
		     struct hutch_err *err)
{
	int dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (dup_fd < 0)
		return hutch_fail_errno(err, errno, "commit: dup");
	_cleanup_(hutch_closedirp) DIR *d = fdopendir(dup_fd);
	if (!d) {
		close(dup_fd);
		return hutch_fail_errno(err, errno, "commit: opendir");
	}
	struct dirent *e;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			TRY(shift_entry(fd, e->d_name, sh, back, depth + 1, err));
	return 0;
}

static int shift_entry(int dirfd, const char *name, const struct img_idshift *sh, bool back,
		       int depth, struct hutch_err *err)
{
	struct stat st;
	if (depth > 256)
		return hutch_fail(err, ELOOP, "commit: %s: nested too deep", name);
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return hutch_fail_errno(err, errno, "commit: stat %s", name);
	if (S_ISDIR(st.st_mode)) {
		_cleanup_close_ int fd =
			openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			return hutch_fail_errno(err, errno, "commit: open %s", name);
		TRY(shift_dir(fd, sh, back, depth, err));
	}
	uid_t u = map_id(st.st_uid, sh->uid, sh->span, back);
	gid_t g = map_id(st.st_gid, sh->gid, sh->span, back);
	if (u == st.st_uid && g == st.st_gid)
		return 0;
	unsigned char cap[VFS_CAP_V2_SIZE];
	bool has_cap = false;
	if (S_ISREG(st.st_mode) && back) /* forward: only directories (copy-ups) and copies */
		TRY(read_cap(dirfd, name, sh, cap, &has_cap));
	if (fchownat(dirfd, name, u, g, AT_SYMLINK_NOFOLLOW) < 0)
		return hutch_fail_errno(err, errno, "commit: chown %s", name);
	/* chown clears setuid/setgid bits of executables: put the mode back (not for links). */
	if (!S_ISLNK(st.st_mode) && (st.st_mode & (S_ISUID | S_ISGID)) &&
	    fchmodat(dirfd, name, st.st_mode & 07777, 0) < 0)
		return hutch_fail_errno(err, errno, "commit: chmod %s", name);
	if (has_cap) {
		_cleanup_close_ int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 || fsetxattr(fd, CAP_XATTR, cap, sizeof(cap), 0) < 0)
			return hutch_fail_errno(err, errno, "commit: file capabilities of %s",
						name);
	}
	return 0;
}

static int shift_tree(int dirfd, const struct img_idshift *sh, bool back, struct hutch_err *err)
{
	if (!sh || !sh->span)
		return 0;
	TRY(shift_dir(dirfd, sh, back, 0, err));
	struct stat st;
	if (fstat(dirfd, &st) < 0)
		return hutch_fail_errno(err, errno, "commit: stat");
	uid_t u = map_id(st.st_uid, sh->uid, sh->span, back);
	gid_t g = map_id(st.st_gid, sh->gid, sh->span, back);
	if (fchown(dirfd, u, g) < 0)
		return hutch_fail_errno(err, errno, "commit: chown the layer's top");
	return 0;
}

int img_unshift_ids(int dirfd, const struct img_idshift *sh, struct hutch_err *err)
{
	return shift_tree(dirfd, sh, true, err);
}

int img_shift_ids(int dirfd, const struct img_idshift *sh, struct hutch_err *err)
{
	return shift_tree(dirfd, sh, false, err);
}
