// SPDX-License-Identifier: Apache-2.0
/*
 * An image's layers merged into one plain directory, bottom layer first, with the layers'
 * overlayfs whiteouts (0:0 character devices) and opaque directories applied as overlayfs
 * would: for bundles, and for sandboxes where overlayfs is unavailable. Every open is
 * relative to a directory fd and O_NOFOLLOW, so a layer's symlinks are copied, never followed.
 */
#include "img-internal.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>

#define COPY_BUF (128 * 1024)

struct copy {
	bool root;
	char path[PATH_MAX]; /* of the entry at hand, relative to the rootfs: for errors */
	size_t skipped_devices;
};

static bool is_whiteout(const struct stat *st)
{
	return S_ISCHR(st->st_mode) && st->st_rdev == makedev(0, 0);
}

static bool is_opaque(int fd)
{
	static const char *const names[] = { "trusted.overlay.opaque", "user.overlay.opaque" };
	char v[4];
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (fgetxattr(fd, names[i], v, sizeof(v)) == 1 && v[0] == 'y')
			return true;
	return false;
}

/* The same policy as unpacking: overlay.* would make the copy mean something else. */
static void copy_xattrs(int src, int dst)
{
	char list[4096], val[4096];
	ssize_t n = flistxattr(src, list, sizeof(list));
	for (char *k = list; n > 0 && k < list + n; k += strlen(k) + 1) {
		if (strcmp(k, "security.capability") &&
		    (!hutch_str_has_prefix(k, "user.") || hutch_str_has_prefix(k, "user.overlay.")))
			continue;
		ssize_t len = fgetxattr(src, k, val, sizeof(val));
		if (len >= 0)
			fsetxattr(dst, k, val, (size_t)len, 0);
	}
}

/* Owner (root only), mode and mtime; xattrs when both fds are at hand. An id that our user
 * namespace does not map (EINVAL) leaves the file ours, as it always did. */
static int apply_meta(struct copy *c, int dfd, const char *name, const struct stat *st, int sfd,
		      int fd, struct hutch_err *err)
{
	struct timespec ts[2] = { { .tv_nsec = UTIME_OMIT }, st->st_mtim };
	mode_t mode = st->st_mode & 07777;
	if (!c->root && S_ISDIR(st->st_mode))
		mode |= 0700; /* a later layer must still write into it */
	/* before chmod: chown clears setuid bits */
	if (c->root && fchownat(dfd, name, st->st_uid, st->st_gid, AT_SYMLINK_NOFOLLOW) < 0 &&
	    errno != EINVAL)
		return hutch_fail_errno(err, errno, "copy: chown %s", c->path);
	if (!S_ISLNK(st->st_mode) && fchmodat(dfd, name, mode, 0) < 0)
		return hutch_fail_errno(err, errno, "copy: chmod %s", c->path);
	if (sfd >= 0 && fd >= 0)
		copy_xattrs(sfd, fd);
	utimensat(dfd, name, ts, AT_SYMLINK_NOFOLLOW);
	return 0;
}

static int remove_name(struct copy *c, int dfd, const char *name, bool dir, struct hutch_err *err)
{
	int r = dir ? img_remove_tree_at(dfd, name) : (unlinkat(dfd, name, 0) < 0 ? -errno : 0);
	if (r < 0 && r != -ENOENT)
		return hutch_fail_errno(err, r, "copy: remove %s", c->path);
	return 0;
}

static int copy_data(struct copy *c, int sfd, int dfd, struct hutch_err *err)
{
	ssize_t n;
	while ((n = copy_file_range(sfd, NULL, dfd, NULL, 1 << 30, 0)) > 0)
		;
	if (n == 0)
		return 0;
	if (errno != EXDEV && errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP)
		return hutch_fail_errno(err, errno, "copy: %s", c->path);
	/* Both offsets moved with what was copied: read/write carries on from there. */
	_cleanup_free_ char *buf = hutch_xmalloc(COPY_BUF);
	while ((n = read(sfd, buf, COPY_BUF)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || hutch_write_all(dfd, buf, (size_t)n) < 0)
			return hutch_fail_errno(err, errno, "copy: %s", c->path);
	}
	return 0;
}

static int copy_file(struct copy *c, int src, int dst, const char *name, const struct stat *st,
		     struct hutch_err *err)
{
	_cleanup_close_ int s = openat(src, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (s < 0)
		return hutch_fail_errno(err, errno, "copy: open %s", c->path);
	/* O_EXCL|O_NOFOLLOW: the name was cleared, so nothing may stand there now. */
	_cleanup_close_ int d =
		openat(dst, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (d < 0)
		return hutch_fail_errno(err, errno, "copy: create %s", c->path);
	TRY(copy_data(c, s, d, err));
	return apply_meta(c, dst, name, st, s, d, err);
}

static int copy_other(struct copy *c, int src, int dst, const char *name, const struct stat *st,
		      struct hutch_err *err)
{
	if (S_ISLNK(st->st_mode)) {
		char target[PATH_MAX];
		ssize_t n = readlinkat(src, name, target, sizeof(target) - 1);
		if (n < 0)
			return hutch_fail_errno(err, errno, "copy: readlink %s", c->path);
		target[n] = '\0';
		if (symlinkat(target, dst, name) < 0)
			return hutch_fail_errno(err, errno, "copy: symlink %s", c->path);
	} else if (S_ISSOCK(st->st_mode)) {
		return 0; /* as unpacking: a socket in an image is meaningless */
	} else if (!S_ISFIFO(st->st_mode)) {
		/* A device node: never made (a layer that an older hutch unpacked as root may hold one). A
		 * bundle's runtime and a sandbox make their own /dev. */
		c->skipped_devices++;
		return 0;
	} else if (mknodat(dst, name, S_IFIFO, 0) < 0) {
		return hutch_fail_errno(err, errno, "copy: mkfifo %s", c->path);
	}
	return apply_meta(c, dst, name, st, -1, -1, err);
}

static int copy_tree(struct copy *c, int src, int dst, struct hutch_err *err);

/* A directory merges into one already there, unless it is opaque (it hides what is below)
 * or the name below is not a directory. */
static int copy_subdir(struct copy *c, int src, int dst, const char *name, const struct stat *st,
		       bool exists, const struct stat *dt, struct hutch_err *err)
{
	_cleanup_close_ int s = openat(src, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (s < 0)
		return hutch_fail_errno(err, errno, "copy: open %s", c->path);
	if (exists && (!S_ISDIR(dt->st_mode) || is_opaque(s))) {
		TRY(remove_name(c, dst, name, S_ISDIR(dt->st_mode), err));
		exists = false;
	}
	if (!exists && mkdirat(dst, name, 0700) < 0)
		return hutch_fail_errno(err, errno, "copy: mkdir %s", c->path);
	_cleanup_close_ int d = openat(dst, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (d < 0)
		return hutch_fail_errno(err, errno, "copy: open %s", c->path);
	TRY(copy_tree(c, s, d, err));
	return apply_meta(c, dst, name, st, s, d, err); /* after its entries: they change mtime */
}

static int copy_entry(struct copy *c, int src, int dst, const char *name, struct hutch_err *err)
{
	struct stat st, dt;
	if (fstatat(src, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return hutch_fail_errno(err, errno, "copy: stat %s", c->path);
	bool exists = fstatat(dst, name, &dt, AT_SYMLINK_NOFOLLOW) == 0;
	if (S_ISDIR(st.st_mode))
		return copy_subdir(c, src, dst, name, &st, exists, &dt, err);
	if (exists)
		TRY(remove_name(c, dst, name, S_ISDIR(dt.st_mode), err));
	if (is_whiteout(&st))
		return 0; /* it hid the name in the layers below: removed, and that is all */
	if (S_ISREG(st.st_mode))
		return copy_file(c, src, dst, name, &st, err);
	return copy_other(c, src, dst, name, &st, err);
}

static int copy_tree(struct copy *c, int src, int dst, struct hutch_err *err)
{
	int fd = dup(src);
	if (fd < 0)
		return hutch_fail_errno(err, errno, "copy: %s", c->path);
	_cleanup_(hutch_closedirp) DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return hutch_fail_errno(err, errno, "copy: %s", c->path);
	}
	size_t len = strlen(c->path);
	struct dirent *e;
	while ((errno = 0, e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (len + strlen(e->d_name) + 2 > sizeof(c->path))
			return hutch_fail(err, ENAMETOOLONG, "copy: %s/%s: name too long", c->path,
					  e->d_name);
		snprintf(c->path + len, sizeof(c->path) - len, "/%s", e->d_name);
		int r = copy_entry(c, src, dst, e->d_name, err);
		c->path[len] = '\0';
		if (r < 0)
			return r;
	}
	if (errno)
		return hutch_fail_errno(err, errno, "copy: read %s", c->path);
	return 0;
}

int img_copy_rootfs(struct img_store *s, const char *ref, int dstfd, size_t *skipped_devices,
		    struct hutch_err *err)
{
	_cleanup_strv_ char **dirs = NULL;
	size_t n = 0;
	struct copy c = { .root = geteuid() == 0 };
	TRY(img_layer_dirs(s, ref, &dirs, &n, err));
	for (size_t i = 0; i < n; i++) {
		_cleanup_close_ int src =
			open(dirs[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (src < 0)
			return hutch_fail_errno(err, errno, "copy: open layer %s", dirs[i]);
		c.path[0] = '\0';
		int r = copy_tree(&c, src, dstfd, err);
		if (r < 0)
			return hutch_err_prefix(err, "image %s: ", ref);
	}
	if (skipped_devices)
		*skipped_devices = c.skipped_devices;
	return 0;
}
