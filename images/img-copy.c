// SPDX-License-Identifier: Apache-2.0
/*
 * An image's layers merged into one plain directory, bottom layer first, with the layers'
 * overlayfs whiteouts (0:0 character devices) and opaque directories applied as overlayfs
 * would: for bundles, and for sandboxes where overlayfs is unavailable. Every open is
 * relative to a directory fd and O_NOFOLLOW, so a layer's symlinks are copied, never followed.
 * The copy takes no more than the store does: holes stay holes, hard links stay links, and a
 * bundle's writes are charged to a budget (img-limits.c) on its own filesystem.
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
#define COPY_CHUNK (1 << 20) /* data copied between two looks at the budget */

/* A file of the layer being copied with more than one name, and its first copy. */
struct link {
	dev_t dev;
	ino_t ino;
	dev_t copy_dev;
	ino_t copy_ino;
	char *path; /* relative to the copy's root; NULL: a free slot */
};

struct copy {
	bool root;
	int rootfd;	     /* the copy's root, where a link's first copy is looked up */
	struct img_budget b; /* what it writes (no limits for a sandbox's tmpfs) */
	struct link *links;  /* open addressing, by source inode; one layer's */
	size_t n_links, cap_links;
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

/* [off, off+len) of sfd to the same offsets of dfd: copy_file_range (a reflink or an
 * in-kernel copy), else read and write. */
static int copy_range(struct copy *c, int sfd, int dfd, off_t off, off_t len, struct hutch_err *err)
{
	loff_t in = off, out = off;
	while (len > 0) {
		ssize_t n = copy_file_range(sfd, &in, dfd, &out, (size_t)len, 0);
		if (n > 0) {
			len -= n;
			continue;
		}
		if (n == 0) /* the source is shorter than it said: what there is was copied */
			return 0;
		if (errno == EINTR)
			continue;
		if (errno != EXDEV && errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP)
			return hutch_fail_errno(err, errno, "copy: %s", c->path);
		break;
	}
	_cleanup_free_ char *buf = len > 0 ? hutch_xmalloc(COPY_BUF) : NULL;
	while (len > 0) {
		ssize_t n = pread(sfd, buf, (size_t)(len < COPY_BUF ? len : COPY_BUF), in);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? hutch_fail_errno(err, errno, "copy: %s", c->path) : 0;
		for (ssize_t done = 0; done < n;) {
			ssize_t w = pwrite(dfd, buf + done, (size_t)(n - done), out + done);
			if (w < 0 && errno != EINTR)
				return hutch_fail_errno(err, errno, "copy: %s", c->path);
			done += w > 0 ? w : 0;
		}
		in += n;
		out += n;
		len -= n;
	}
	return 0;
}

/* The file's data, extent by extent (SEEK_DATA, SEEK_HOLE): a hole stays a hole, so a 2 GiB
 * sparse file of the store (a few KB of blocks, as unpacking kept it) is a few KB here too,
 * where copy_file_range filled it. Each extent is charged before it is written. */
static int copy_data(struct copy *c, int sfd, int dfd, off_t size, struct hutch_err *err)
{
	uint64_t data_bytes = 0;
	for (off_t pos = 0; pos < size;) {
		off_t data = lseek(sfd, pos, SEEK_DATA), end = size;
		if (data < 0 && errno == ENXIO)
			break; /* the rest is a hole */
		if (data < 0 && errno != EINVAL)
			return hutch_fail_errno(err, errno, "copy: %s", c->path);
		if (data < 0) /* no SEEK_DATA here: all of it is data */
			data = pos;
		else if ((end = lseek(sfd, data, SEEK_HOLE)) < 0 || end > size)
			end = size;
		/* In chunks: the free space is looked at as it goes (img_budget_check_bytes). */
		for (off_t n; data < end; data += n) {
			n = end - data < COPY_CHUNK ? end - data : COPY_CHUNK;
			data_bytes += (uint64_t)n;
			int r = img_budget_check_bytes(&c->b, data_bytes, err);
			if (r < 0)
				return hutch_err_prefix(err, "copy %s: ", c->path);
			TRY(copy_range(c, sfd, dfd, data, n, err));
		}
		pos = end;
	}
	if (ftruncate(dfd, size) < 0) /* a file that ends in a hole */
		return hutch_fail_errno(err, errno, "copy: truncate %s", c->path);
	return 0;
}

static void charge(struct copy *c, int fd)
{
	struct stat st;
	if (fstat(fd, &st) == 0)
		img_budget_charge(&c->b, (uint64_t)st.st_blocks * 512);
}

/* ---- hard links: a file with more names in a layer is copied once, then linked ---- */

static struct link *link_slot(struct link *v, size_t cap, dev_t dev, ino_t ino)
{
	size_t i = (size_t)((ino ^ dev) * 0x9E3779B97F4A7C15ULL) & (cap - 1);
	while (v[i].path && (v[i].ino != ino || v[i].dev != dev))
		i = (i + 1) & (cap - 1);
	return &v[i];
}

static void links_clear(struct copy *c)
{
	for (size_t i = 0; i < c->cap_links; i++)
		free(c->links[i].path);
	free(c->links);
	c->links = NULL;
	c->n_links = c->cap_links = 0;
}

static void link_remember(struct copy *c, const struct stat *st, int copy_fd)
{
	struct stat dt;
	if (fstat(copy_fd, &dt) < 0)
		return;
	if (2 * (c->n_links + 1) > c->cap_links) { /* at most half full: doubled, rehashed */
		size_t cap = c->cap_links ? 2 * c->cap_links : 64;
		struct link *v = hutch_xcalloc(cap, sizeof(*v));
		for (size_t i = 0; i < c->cap_links; i++)
			if (c->links[i].path)
				*link_slot(v, cap, c->links[i].dev, c->links[i].ino) = c->links[i];
		free(c->links);
		c->links = v;
		c->cap_links = cap;
	}
	*link_slot(c->links, c->cap_links, st->st_dev, st->st_ino) =
		(struct link){ st->st_dev, st->st_ino, dt.st_dev, dt.st_ino,
			       hutch_xstrdup(c->path) };
	c->n_links++;
}

/* True when name was made a link to the first copy of st's file; false when it must be
 * copied: no copy yet, the name it had no longer holds that copy (resolved in the root,
 * checked by inode), or the link failed (EMLINK, ...). */
static bool link_to_copy(struct copy *c, int dst, const char *name, const struct stat *st)
{
	char fdp[HUTCH_FD_PATH_MAX];
	struct stat dt;
	struct hutch_err e = { 0 };
	if (st->st_nlink < 2 || !c->cap_links)
		return false;
	const struct link *l = link_slot(c->links, c->cap_links, st->st_dev, st->st_ino);
	if (!l->path)
		return false;
	_cleanup_close_ int fd = hutch_open_in_root(c->rootfd, l->path, O_PATH | O_NOFOLLOW, 0, &e);
	if (fd < 0 || fstat(fd, &dt) < 0 || dt.st_dev != l->copy_dev || dt.st_ino != l->copy_ino)
		return false;
	return linkat(AT_FDCWD, hutch_fd_path(fd, fdp), dst, name, AT_SYMLINK_FOLLOW) == 0;
}

static int copy_file(struct copy *c, int src, int dst, const char *name, const struct stat *st,
		     struct hutch_err *err)
{
	if (link_to_copy(c, dst, name, st))
		return 0; /* its data, owner and mode are the first copy's: the same file's */
	_cleanup_close_ int s = openat(src, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (s < 0)
		return hutch_fail_errno(err, errno, "copy: open %s", c->path);
	/* O_EXCL|O_NOFOLLOW: the name was cleared, so nothing may stand there now. */
	_cleanup_close_ int d =
		openat(dst, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (d < 0)
		return hutch_fail_errno(err, errno, "copy: create %s", c->path);
	TRY(copy_data(c, s, d, st->st_size, err));
	charge(c, d);
	if (st->st_nlink > 1)
		link_remember(c, st, d);
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
		/* A device node: never made (a layer an older hutch unpacked as root may hold
		 * one). A bundle's runtime and a sandbox make their own /dev. */
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
	if (!exists)
		charge(c, d);
	TRY(copy_tree(c, s, d, err));
	return apply_meta(c, dst, name, st, s, d, err); /* after its entries: they change mtime */
}

static int copy_entry(struct copy *c, int src, int dst, const char *name, struct hutch_err *err)
{
	struct stat st, dt;
	if (fstatat(src, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return hutch_fail_errno(err, errno, "copy: stat %s", c->path);
	if (img_budget_add_entries(&c->b, 1, err) < 0)
		return hutch_err_prefix(err, "copy %s: ", c->path);
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

/* A bundle's budget: the limits on DIR's filesystem, and messages that say so. */
static int budget_init(struct copy *c, const struct img_limits *lim, int dstfd,
		       struct hutch_err *err)
{
	int r = img_budget_init(&c->b, lim, lim ? dstfd : -1, err);
	c->b.size_is = "the copied rootfs";
	c->b.fs_is = "DIR's filesystem";
	c->b.elsewhere = "write DIR on another filesystem";
	return r;
}

int img_copy_rootfs(struct img_store *s, const char *ref, int dstfd, const struct img_limits *lim,
		    size_t *skipped_devices, struct hutch_err *err)
{
	_cleanup_strv_ char **dirs = NULL;
	size_t n = 0;
	struct copy c = { .root = geteuid() == 0, .rootfd = dstfd };
	TRY(img_layer_dirs(s, ref, &dirs, &n, err));
	TRY(budget_init(&c, lim, dstfd, err));
	int r = 0;
	for (size_t i = 0; i < n && r >= 0; i++) {
		_cleanup_close_ int src =
			open(dirs[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (src < 0)
			r = hutch_fail_errno(err, errno, "copy: open layer %s", dirs[i]);
		c.path[0] = '\0';
		if (r >= 0 && (r = copy_tree(&c, src, dstfd, err)) < 0)
			hutch_err_prefix(err, "image %s: ", ref);
		links_clear(&c); /* a layer's inodes are its own: no name of a later one links */
	}
	if (skipped_devices)
		*skipped_devices = c.skipped_devices;
	return r;
}
