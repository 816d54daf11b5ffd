// SPDX-License-Identifier: Apache-2.0
/*
 * Layer extraction. libarchive only reads: one reader undoes the compression (hashed for the
 * diff_id), a second one parses tar from it. Every write is ours, relative to the layer's
 * directory fd, with parents resolved by openat2(RESOLVE_IN_ROOT): a hostile entry can name
 * nothing outside the layer however its paths and symlinks are made. Every entry, byte and
 * directory is charged to the import's budget (img-limits.c) before it is made.
 */
#include "img-internal.h"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>

#define BUF_SIZE (256 * 1024)

struct unpack {
	int rootfd;
	bool whiteouts, archive, root;
	struct img_unpack_stats *st;
	struct img_budget *b;
	/* a limit passed in a libarchive callback: err holds why, whatever libarchive says */
	struct hutch_err *err;
	bool over;
	char parent[PATH_MAX]; /* the parent fd cache: consecutive files share a directory */
	int parentfd;
	/* the compressed bytes (blob digest) and the tar stream (diff_id) */
	int fd;
	struct img_sha blob, diff;
	struct archive *raw;
	char *buf;
};

static void archive_freep(struct archive **a)
{
	if (*a)
		archive_read_free(*a);
}

int img_clean_path(const char *in, char *out, size_t cap, struct hutch_err *err)
{
	size_t o = 0;
	for (const char *p = in; *p;) {
		while (*p == '/')
			p++;
		const char *e = strchrnul(p, '/');
		size_t n = (size_t)(e - p);
		if (n == 2 && p[0] == '.' && p[1] == '.')
			return hutch_fail(err, EPERM, "entry %s: '..' would leave the layer", in);
		if (n && !(n == 1 && p[0] == '.')) {
			if (o + n + 2 > cap)
				return hutch_fail(err, ENAMETOOLONG, "entry %s: name too long", in);
			if (o)
				out[o++] = '/';
			memcpy(out + o, p, n);
			o += n;
		}
		p = e;
	}
	out[o] = '\0';
	return 0;
}

/* Directories the tar did not list, made for an entry below them: one name of a few KiB can
 * make two thousand, so each counts as an entry and as the block the last one took. The
 * count is of dir's components, an upper bound: those that existed are counted too. */
static int make_parents(struct unpack *u, const char *dir, struct hutch_err *err)
{
	uint64_t n = 1;
	struct stat st;
	for (const char *p = dir; *p; p++)
		n += *p == '/';
	int r = img_budget_add_entries(u->b, n, err);
	if (r < 0)
		return r;
	int fd = hutch_mkdir_in_root(u->rootfd, dir, 0755, err);
	if (fd >= 0 && fstat(fd, &st) == 0) {
		img_budget_charge(u->b, n * (uint64_t)st.st_blocks * 512);
		u->st->allocated += n * (uint64_t)st.st_blocks * 512;
	}
	return fd;
}

/* A name fits in PATH_MAX (img_clean_path), and so must the directory it reaches through the
 * layer's own symlinks ("l2 -> l1/d/.../d", then "l2/d/.../d/x"): a tree the kernel cannot
 * name is no layer, and every walk of it (prune's, a bundle's copy) would need a fd per
 * level. The directory's full path in the store counts. */
static int check_reach(int fd, const char *dir, struct hutch_err *err)
{
	char fdp[HUTCH_FD_PATH_MAX], buf[PATH_MAX];
	ssize_t n = readlink(hutch_fd_path(fd, fdp), buf, sizeof(buf));
	if ((n < 0 && errno == ENAMETOOLONG) || n >= (ssize_t)sizeof(buf))
		return hutch_fail(
			err, ENAMETOOLONG,
			"entry %.64s...: deeper than PATH_MAX through the layer's symlinks", dir);
	return 0;
}

/* The directory holding path (made when missing, inside the root), and path's last name. */
static int open_parent(struct unpack *u, char *path, const char **base, struct hutch_err *err)
{
	char *slash = strrchr(path, '/');
	const char *dir = slash ? path : "";
	if (slash)
		*slash = '\0';
	*base = slash ? slash + 1 : path;
	if (u->parentfd >= 0 && !strcmp(u->parent, dir))
		return u->parentfd;
	if (u->parentfd >= 0)
		close(u->parentfd);
	u->parentfd = -1;
	int fd = hutch_open_in_root(u->rootfd, dir, O_PATH | O_DIRECTORY, 0, err);
	if (fd == -ENOENT)
		fd = make_parents(u, dir, err);
	if (fd < 0)
		return fd;
	int r = check_reach(fd, dir, err);
	if (r < 0) {
		close(fd);
		return r;
	}
	snprintf(u->parent, sizeof(u->parent), "%s", dir);
	u->parentfd = fd;
	return fd;
}

static void forget_parent(struct unpack *u)
{
	if (u->parentfd >= 0)
		close(u->parentfd);
	u->parentfd = -1;
}

/* Makes room for a new entry: an existing directory stays when the new one is too. */
static int clear_name(int dfd, const char *base, bool keep_dir, struct hutch_err *err)
{
	struct stat st;
	if (fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : hutch_fail_errno(err, errno, "stat %s", base);
	if (S_ISDIR(st.st_mode) && keep_dir)
		return 1;
	int r = S_ISDIR(st.st_mode) ? img_remove_tree_at(dfd, base)
				    : (unlinkat(dfd, base, 0) < 0 ? -errno : 0);
	if (r < 0)
		return hutch_fail_errno(err, r, "replace %s", base);
	/* The cached parent stays: it is dfd itself, base's parent, which the caller goes on
	 * using (closing it here failed every name a layer gave twice with EBADF). */
	return 0;
}

/* Only xattrs that cannot steer overlayfs or the host: overlay.* would forge whiteouts,
 * redirects and metacopy, which are ours to write. */
static bool xattr_allowed(const char *name)
{
	if (!strcmp(name, "security.capability"))
		return true;
	return hutch_str_has_prefix(name, "user.") && !hutch_str_has_prefix(name, "user.overlay.");
}

/* An id that our user namespace does not map (EINVAL) leaves the file ours, as it always did. */
static int apply_meta(struct unpack *u, int dfd, const char *base, int fd, struct archive_entry *e,
		      struct hutch_err *err)
{
	struct timespec ts[2] = { { .tv_nsec = UTIME_OMIT },
				  { archive_entry_mtime(e), archive_entry_mtime_nsec(e) } };
	mode_t mode = archive_entry_perm(e) & 07777;
	if (!u->root && S_ISDIR(archive_entry_filetype(e)))
		mode |= 0700; /* we must still write into it */
	/* before chmod: chown clears setuid bits */
	if (u->root &&
	    fchownat(dfd, base, (uid_t)archive_entry_uid(e), (gid_t)archive_entry_gid(e),
		     AT_SYMLINK_NOFOLLOW) < 0 &&
	    errno != EINVAL)
		return hutch_fail_errno(err, errno, "chown %s", base);
	if (archive_entry_filetype(e) != AE_IFLNK && fchmodat(dfd, base, mode, 0) < 0)
		return hutch_fail_errno(err, errno, "chmod %s", base);
	if (fd >= 0 && u->root) {
		const char *name;
		const void *val;
		size_t len;
		archive_entry_xattr_reset(e);
		while (archive_entry_xattr_next(e, &name, &val, &len) == ARCHIVE_OK)
			if (xattr_allowed(name))
				fsetxattr(fd, name, val, len, 0);
	}
	utimensat(dfd, base, ts, AT_SYMLINK_NOFOLLOW);
	return 0;
}

/* libarchive failed: because a callback of ours passed a limit (err says which), or not. */
static int archive_failed(struct unpack *u, struct archive *a, const char *what,
			  struct hutch_err *err)
{
	if (u->over)
		return -err->code;
	return hutch_fail(err, EIO, "%s: %s", what, archive_error_string(a));
}

static bool all_zero(const char *p, size_t n)
{
	return n == 0 || (p[0] == 0 && !memcmp(p, p + 1, n - 1));
}

/* buf at off, but for its 4 KiB blocks of zeros past *end (the furthest byte written so
 * far), which stay holes in the new file (a tar without a sparse map, as GNU tar makes one
 * without -S, holds a sparse file's holes as zeros); put_file's ftruncate gives the file its
 * size. Before *end a block of zeros is written: a sparse map whose regions overlap must
 * leave the zeros it gives last, as tar does. */
static int write_sparse(int fd, const char *buf, size_t len, off_t off, off_t *end,
			const char *name, struct hutch_err *err)
{
	enum { BLOCK = 4096 };
	for (size_t done = 0; done < len;) {
		off_t at = off + (off_t)done;
		size_t k = BLOCK - (size_t)(at % BLOCK); /* to the next boundary */
		k = k < len - done ? k : len - done;
		if (k == BLOCK && at >= *end && all_zero(buf + done, k)) {
			done += k;
			continue;
		}
		ssize_t n = pwrite(fd, buf + done, k, off + (off_t)done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return hutch_fail_errno(err, errno, "write %s", name);
		done += (size_t)n;
		if (at + n > *end)
			*end = at + n;
	}
	return 0;
}

/* The data libarchive gives, at its offsets: a sparse entry's holes stay holes, and cost
 * nothing. The budget is charged the 4 KiB blocks the data touches, never the entry's
 * apparent size: a sparse map of one-byte regions a block apart allocates a block each. */
static int write_data(struct unpack *u, int fd, struct archive *a, const char *name,
		      struct hutch_err *err)
{
	const void *buf;
	size_t len;
	la_int64_t off;
	uint64_t written = 0, last_block = UINT64_MAX;
	off_t end = 0;
	int r;
	while ((r = archive_read_data_block(a, &buf, &len, &off)) == ARCHIVE_OK) {
		if (len) {
			uint64_t first = (uint64_t)off / 4096,
				 last = ((uint64_t)off + len - 1) / 4096;
			if (first ==
			    last_block) /* data going on in the block the last one ended in */
				first++;
			if (last >= first)
				written += (last - first + 1) * 4096;
			last_block = last;
		}
		int q = img_budget_check_bytes(u->b, written, err);
		if (q < 0)
			return q;
		TRY(write_sparse(fd, buf, len, (off_t)off, &end, name, err));
		u->st->bytes += len;
		if (u->st->tick)
			u->st->tick(u->st->tick_arg, u->st->bytes);
	}
	if (r != ARCHIVE_EOF) {
		char what[PATH_MAX + 8];
		snprintf(what, sizeof(what), "read %s", name);
		return archive_failed(u, a, what, err);
	}
	return 0;
}

/* What a file or directory took on disk: blocks, so a hole costs nothing and the smallest
 * file costs one block. */
static void charge(struct unpack *u, int fd)
{
	struct stat st;
	if (fstat(fd, &st) == 0) {
		img_budget_charge(u->b, (uint64_t)st.st_blocks * 512);
		u->st->allocated += (uint64_t)st.st_blocks * 512;
	}
}

static int put_file(struct unpack *u, int dfd, const char *base, struct archive *a,
		    struct archive_entry *e, struct hutch_err *err)
{
	TRY(clear_name(dfd, base, false, err));
	/* O_EXCL|O_NOFOLLOW: the name was just cleared, so a symlink raced in is refused. */
	_cleanup_close_ int fd =
		openat(dfd, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return hutch_fail_errno(err, errno, "create %s", base);
	TRY(write_data(u, fd, a, base, err));
	if (ftruncate(fd, archive_entry_size(e)) < 0) /* a sparse file ending in a hole */
		return hutch_fail_errno(err, errno, "truncate %s", base);
	charge(u, fd);
	return apply_meta(u, dfd, base, fd, e, err);
}

static int put_dir(struct unpack *u, int dfd, const char *base, struct archive_entry *e,
		   struct hutch_err *err)
{
	int r = clear_name(dfd, base, true, err);
	if (r < 0)
		return r;
	if (r == 0 && mkdirat(dfd, base, 0700) < 0)
		return hutch_fail_errno(err, errno, "mkdir %s", base);
	_cleanup_close_ int fd = openat(dfd, base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return hutch_fail_errno(err, errno, "open %s", base);
	if (r == 0)
		charge(u, fd);
	TRY(apply_meta(u, dfd, base, fd, e, err));
	forget_parent(u);
	return 0;
}

static int put_symlink(struct unpack *u, int dfd, const char *base, struct archive_entry *e,
		       struct hutch_err *err)
{
	const char *target = archive_entry_symlink(e);
	if (!target || !*target)
		return hutch_fail(err, EINVAL, "symlink %s: no target", base);
	TRY(clear_name(dfd, base, false, err));
	/* Stored as given: at run time it resolves inside the container's root, and here we
	 * never follow it (every lookup is RESOLVE_IN_ROOT). */
	if (symlinkat(target, dfd, base) < 0)
		return hutch_fail_errno(err, errno, "symlink %s", base);
	TRY(apply_meta(u, dfd, base, -1, e, err));
	forget_parent(u);
	return 0;
}

static int put_hardlink(struct unpack *u, int dfd, const char *base, const char *target,
			struct hutch_err *err)
{
	char clean[PATH_MAX], fdp[HUTCH_FD_PATH_MAX];
	struct stat st;
	TRY(img_clean_path(target, clean, sizeof(clean), err));
	/* Resolved in the layer's root: "/etc/passwd" means the layer's own, never the host's. */
	_cleanup_close_ int t = hutch_open_in_root(u->rootfd, clean, O_PATH | O_NOFOLLOW, 0, err);
	if (t < 0)
		return hutch_fail_errno(err, -t, "hardlink %s -> %s: target not in this layer",
					base, target);
	if (fstat(t, &st) < 0 || S_ISDIR(st.st_mode))
		return hutch_fail(err, EPERM, "hardlink %s -> %s: not a file", base, target);
	TRY(clear_name(dfd, base, false, err));
	if (linkat(AT_FDCWD, hutch_fd_path(t, fdp), dfd, base, AT_SYMLINK_FOLLOW) < 0)
		return hutch_fail_errno(err, errno, "hardlink %s -> %s", base, target);
	return 0;
}

static int put_special(struct unpack *u, int dfd, const char *base, struct archive_entry *e,
		       struct hutch_err *err)
{
	mode_t type = archive_entry_filetype(e);
	if (type == AE_IFSOCK)
		return 0; /* a socket in an image is meaningless */
	/* A device node is never made, whoever unpacks: the sandbox's /dev is hutch's own, its
	 * root is mounted nodev, and an image's 0666 node for the host's console or disk is no
	 * file to keep in the store. (Made by real root, one opened the host's /dev/console.) */
	if (type == AE_IFCHR || type == AE_IFBLK) {
		u->st->skipped_devices++;
		return 0;
	}
	TRY(clear_name(dfd, base, false, err));
	if (mknodat(dfd, base, type | 0600, 0) < 0)
		return hutch_fail_errno(err, errno, "mknod %s", base);
	return apply_meta(u, dfd, base, -1, e, err);
}

enum img_whiteout img_whiteout_kind(const char *base, const char **hidden)
{
	*hidden = NULL;
	if (!hutch_str_has_prefix(base, ".wh."))
		return IMG_WH_NONE;
	if (!strcmp(base, ".wh..wh..opq"))
		return IMG_WH_OPAQUE;
	if (hutch_str_has_prefix(base, ".wh..wh."))
		return IMG_WH_AUFS; /* .wh..wh.plnk, ...: nothing for overlayfs */
	const char *name = base + 4;
	if (!*name || !strcmp(name, ".") || !strcmp(name, ".."))
		return IMG_WH_INVALID;
	*hidden = name;
	return IMG_WH_HIDE;
}

/* ".wh.NAME" hides NAME of the layers below (overlayfs: a 0:0 char device) and
 * ".wh..wh..opq" hides everything below in its directory (overlayfs: the opaque xattr). */
static int put_whiteout(struct unpack *u, int dfd, const char *base, struct hutch_err *err)
{
	const char *xattr = u->root ? "trusted.overlay.opaque" : "user.overlay.opaque";
	const char *name;
	switch (img_whiteout_kind(base, &name)) {
	case IMG_WH_OPAQUE: {
		_cleanup_close_ int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0 || fsetxattr(fd, xattr, "y", 1, 0) < 0)
			return hutch_fail_errno(err, errno, "opaque directory: set %s", xattr);
		return 0;
	}
	case IMG_WH_HIDE:
		break;
	case IMG_WH_INVALID:
		return hutch_fail(err, EINVAL, "whiteout %s: invalid", base);
	case IMG_WH_AUFS:
	case IMG_WH_NONE:
		return 0;
	}
	TRY(clear_name(dfd, name, false, err));
	/* Linux >= 5.8 lets anyone create the whiteout device; older ones need CAP_MKNOD. */
	if (mknodat(dfd, name, S_IFCHR | 0000, makedev(0, 0)) < 0)
		return hutch_fail_errno(err, errno, "whiteout %s", name);
	return 0;
}

/* An image archive holds blobs, their directories and links to them: anything else would be
 * opened as a blob later (a FIFO blocks the import, a 1:5 node is an endless blob, 1:11 the
 * host's /dev/kmsg), so it fails the import before it is made. */
static int check_archive_entry(const char *name, struct archive_entry *e, struct hutch_err *err)
{
	static const struct {
		mode_t type;
		const char *what;
	} kinds[] = { { AE_IFCHR, "a character device" },
		      { AE_IFBLK, "a block device" },
		      { AE_IFIFO, "a FIFO" },
		      { AE_IFSOCK, "a socket" } };
	mode_t type = archive_entry_filetype(e);
	if (archive_entry_hardlink(e) || type == AE_IFREG || type == AE_IFDIR || type == AE_IFLNK)
		return 0;
	const char *what = "of an unknown type";
	for (size_t i = 0; i < ARRAY_SIZE(kinds); i++)
		if (kinds[i].type == type)
			what = kinds[i].what;
	return hutch_fail(err, EINVAL,
			  "entry %s: %s in an image archive (only files, directories and links)",
			  name, what);
}

static int put_entry(struct unpack *u, struct archive *a, struct archive_entry *e,
		     struct hutch_err *err)
{
	char path[PATH_MAX];
	const char *base;
	TRY(img_clean_path(archive_entry_pathname(e), path, sizeof(path), err));
	if (!path[0])
		return 0; /* "./": the layer's root itself keeps our mode */
	int r = img_budget_add_entries(u->b, 1, err);
	if (r < 0)
		return r;
	int dfd = open_parent(u, path, &base, err);
	if (dfd < 0)
		return dfd;
	u->st->entries++;
	if (u->archive)
		TRY(check_archive_entry(archive_entry_pathname(e), e, err));
	if (u->whiteouts && hutch_str_has_prefix(base, ".wh."))
		return put_whiteout(u, dfd, base, err);
	const char *hl = archive_entry_hardlink(e);
	if (hl)
		return put_hardlink(u, dfd, base, hl, err);
	switch (archive_entry_filetype(e)) {
	case AE_IFREG:
		return put_file(u, dfd, base, a, e, err);
	case AE_IFDIR:
		return put_dir(u, dfd, base, e, err);
	case AE_IFLNK:
		return put_symlink(u, dfd, base, e, err);
	default:
		return put_special(u, dfd, base, e, err);
	}
}

/* libarchive callbacks: the file's bytes (blob digest) and the uncompressed stream. */
static la_ssize_t read_fd(struct archive *a, void *arg, const void **buf)
{
	struct unpack *u = arg;
	ssize_t n;
	(void)a;
	do
		n = read(u->fd, u->buf, BUF_SIZE);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		archive_set_error(a, errno, "read: %s", strerror(errno));
		return -1;
	}
	img_sha_update(&u->blob, u->buf, (size_t)n);
	u->b->compressed += (uint64_t)n;
	*buf = u->buf;
	return n;
}

static la_ssize_t read_raw(struct archive *a, void *arg, const void **buf)
{
	struct unpack *u = arg;
	static __thread char data[BUF_SIZE];
	la_ssize_t n = archive_read_data(u->raw, data, sizeof(data));
	if (n < 0) {
		archive_set_error(a, archive_errno(u->raw), "%s", archive_error_string(u->raw));
		return -1;
	}
	img_sha_update(&u->diff, data, (size_t)n);
	u->st->tar_size += (uint64_t)n;
	u->b->stream += (uint64_t)n;
	/* Here, not per entry: a bomb is one entry, and its zeros pass through this alone. */
	if (img_budget_check_ratio(u->b, u->err) < 0) {
		u->over = true;
		archive_set_error(a, u->err->code, "%s", u->err->msg);
		return -1;
	}
	*buf = data;
	return n;
}

static int open_raw(struct unpack *u, struct hutch_err *err)
{
	struct archive_entry *e;
	u->raw = archive_read_new();
	archive_read_support_filter_gzip(u->raw);
	archive_read_support_filter_zstd(u->raw);
	archive_read_support_filter_xz(u->raw);
	archive_read_support_filter_bzip2(u->raw);
	archive_read_support_format_raw(u->raw);
	if (archive_read_open(u->raw, u, NULL, read_fd, NULL) != ARCHIVE_OK ||
	    archive_read_next_header(u->raw, &e) != ARCHIVE_OK)
		return hutch_fail(err, EINVAL, "layer: %s", archive_error_string(u->raw));
	return 0;
}

/* Hashes what the tar reader left: the end-of-archive padding and any trailing bytes. */
/* After the end of the archive, at most this much more of its stream is read (and hashed):
 * padding is a few KiB, and a sparse file of zeros made to look like a long tar would
 * otherwise keep the import reading for hours. */
#define IMG_TRAILER_MAX (64ULL << 20)

static int drain(struct unpack *u, struct hutch_err *err)
{
	const void *b;
	la_ssize_t n;
	uint64_t trailing = 0;
	while ((n = read_raw(u->raw, u, &b)) > 0)
		if ((trailing += (uint64_t)n) > IMG_TRAILER_MAX)
			return hutch_fail(err, EFBIG,
					  "layer: more than %llu MiB after the end of the archive",
					  IMG_TRAILER_MAX >> 20);
	if (n < 0)
		return archive_failed(u, u->raw, "layer", err);
	while ((n = read_fd(u->raw, u, &b)) > 0)
		;
	return n < 0 ? hutch_fail_errno(err, errno, "layer: read") : 0;
}

int img_unpack_layer(int fd, int rootfd, enum img_unpack_kind kind, struct img_budget *budget,
		     char diff_id[IMG_DIGEST_MAX], char blob[IMG_DIGEST_MAX],
		     struct img_unpack_stats *st, struct hutch_err *err)
{
	struct img_unpack_stats dummy;
	struct img_budget unlimited;
	_cleanup_free_ char *buf = hutch_xmalloc(BUF_SIZE);
	if (!budget)
		img_budget_init(&unlimited, NULL, -1, err);
	struct unpack u = { .rootfd = rootfd,
			    .whiteouts = kind == IMG_UNPACK_LAYER,
			    .archive = kind == IMG_UNPACK_ARCHIVE,
			    .root = geteuid() == 0,
			    .st = st ? st : &dummy,
			    .b = budget ? budget : &unlimited,
			    .err = err,
			    .parentfd = -1,
			    .fd = fd,
			    .buf = buf };
	memset(u.st, 0, sizeof(*u.st));
	img_sha_init(&u.blob);
	img_sha_init(&u.diff);
	_cleanup_(archive_freep) struct archive *raw = NULL, *tar = NULL;
	int r = open_raw(&u, err);
	raw = u.raw;
	if (r < 0)
		return r;
	tar = archive_read_new();
	archive_read_support_format_tar(tar);
	if (archive_read_open(tar, &u, NULL, read_raw, NULL) != ARCHIVE_OK)
		return u.over ? -err->code
			      : hutch_fail(err, EINVAL, "layer: %s", archive_error_string(tar));
	struct archive_entry *e;
	while ((r = archive_read_next_header(tar, &e)) == ARCHIVE_OK || r == ARCHIVE_WARN) {
		int q = put_entry(&u, tar, e, err);
		if (q < 0) {
			forget_parent(&u);
			return q;
		}
	}
	forget_parent(&u);
	if (r != ARCHIVE_EOF)
		return u.over ? -err->code
			      : hutch_fail(err, EINVAL, "layer: %s", archive_error_string(tar));
	TRY(drain(&u, err));
	if (diff_id)
		img_sha_final(&u.diff, diff_id);
	if (blob)
		img_sha_final(&u.blob, blob);
	return 0;
}

int img_hash_layer(int fd, struct img_budget *budget, char diff_id[IMG_DIGEST_MAX],
		   char blob[IMG_DIGEST_MAX], uint64_t *tar_size, struct hutch_err *err)
{
	struct img_unpack_stats st = { 0 };
	_cleanup_free_ char *buf = hutch_xmalloc(BUF_SIZE);
	/* No rootfd: nothing is written. The budget's ratio still stops a bomb's zeros. */
	struct unpack u = { .rootfd = -1,
			    .st = &st,
			    .b = budget,
			    .err = err,
			    .parentfd = -1,
			    .fd = fd,
			    .buf = buf };
	img_sha_init(&u.blob);
	img_sha_init(&u.diff);
	_cleanup_(archive_freep) struct archive *raw = NULL;
	int r = open_raw(&u, err);
	raw = u.raw;
	if (r < 0)
		return r;
	TRY(drain(&u, err));
	img_sha_final(&u.diff, diff_id);
	img_sha_final(&u.blob, blob);
	*tar_size = st.tar_size;
	return 0;
}
