// SPDX-License-Identifier: Apache-2.0
/*
 * Host files into an image (`image build --copy`): the digest of a host tree as a build input
 * (paths, types, modes, contents and link targets; never owners or times), and the copy of it
 * into a mounted root. Only directories, regular files and symlinks are content: a device,
 * FIFO or socket is refused, and a symlink is copied as a link, never followed.
 */
#include "img-internal.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#define TREE_DEPTH_MAX 256
/* "SRC" or "SRC/REL", for "%s%s%s" */
#define WHERE(src, rel) (src), (rel)[0] ? "/" : "", (rel)

struct tree {
	struct img_sha h;
	char path[PATH_MAX]; /* of the entry at hand, relative to SRC: for errors and the hash */
	char buf[65536];
};

static const char *kind_of(mode_t m)
{
	return S_ISFIFO(m) ? "a FIFO" : S_ISSOCK(m) ? "a socket" : "a device node";
}

static int check_type(const char *src, const char *rel, const struct stat *st,
		      struct hutch_err *err)
{
	if (S_ISDIR(st->st_mode) || S_ISREG(st->st_mode) || S_ISLNK(st->st_mode))
		return 0;
	return hutch_fail(err, EINVAL, "%s%s%s: %s cannot be copied", WHERE(src, rel),
			  kind_of(st->st_mode));
}

static void put(struct img_sha *h, const char *s)
{
	img_sha_update(h, s, strlen(s) + 1);
}

/* Sorted names: the same tree always gives the same digest. */
static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int dir_names(int dfd, char ***out, size_t *n)
{
	int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	_cleanup_(hutch_closedirp) DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	*out = NULL;
	*n = 0;
	for (struct dirent *e; (e = readdir(d));)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			hutch_strv_push(out, n, e->d_name);
	if (*n)
		qsort(*out, *n, sizeof(char *), cmp_name);
	return 0;
}

static int hash_entry(struct tree *t, const char *src, int dfd, const char *name, int depth,
		      struct hutch_err *err);

static int hash_dir(struct tree *t, const char *src, int fd, int depth, struct hutch_err *err)
{
	_cleanup_strv_ char **names = NULL;
	size_t n = 0, len = strlen(t->path);
	if (depth > TREE_DEPTH_MAX)
		return hutch_fail(err, ELOOP, "%s%s%s: nested too deep", WHERE(src, t->path));
	int r = dir_names(fd, &names, &n);
	if (r < 0)
		return hutch_fail_errno(err, r, "%s%s%s", WHERE(src, t->path));
	for (size_t i = 0; i < n; i++) {
		if (len + strlen(names[i]) + 2 > sizeof(t->path))
			return hutch_fail(err, ENAMETOOLONG, "%s%s%s: name too long",
					  WHERE(src, t->path));
		snprintf(t->path + len, sizeof(t->path) - len, "%s%s", len ? "/" : "", names[i]);
		r = hash_entry(t, src, fd, names[i], depth + 1, err);
		t->path[len] = '\0';
		if (r < 0)
			return r;
	}
	return 0;
}

static int hash_data(struct tree *t, const char *src, int fd, struct hutch_err *err)
{
	struct img_sha h;
	char d[IMG_DIGEST_MAX];
	img_sha_init(&h);
	for (ssize_t n; (n = read(fd, t->buf, sizeof(t->buf)));) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return hutch_fail_errno(err, errno, "%s%s%s: read", WHERE(src, t->path));
		img_sha_update(&h, t->buf, (size_t)n);
	}
	img_sha_final(&h, d);
	put(&t->h, d);
	return 0;
}

/* path, type and mode, then the content: a file's digest, a link's target, a dir's entries. */
static int hash_entry(struct tree *t, const char *src, int dfd, const char *name, int depth,
		      struct hutch_err *err)
{
	struct stat st;
	char mode[16];
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return hutch_fail_errno(err, errno, "%s%s%s", WHERE(src, t->path));
	TRY(check_type(src, t->path, &st, err));
	snprintf(mode, sizeof(mode), "%c%04o",
		 S_ISDIR(st.st_mode)   ? 'd'
		 : S_ISLNK(st.st_mode) ? 'l'
				       : 'f',
		 (unsigned)(st.st_mode & 07777));
	put(&t->h, t->path);
	put(&t->h, mode);
	if (S_ISLNK(st.st_mode)) {
		char target[PATH_MAX];
		ssize_t n = readlinkat(dfd, name, target, sizeof(target) - 1);
		if (n < 0)
			return hutch_fail_errno(err, errno, "%s%s%s: readlink",
						WHERE(src, t->path));
		target[n] = '\0';
		put(&t->h, target);
		return 0;
	}
	int flags = O_RDONLY | O_NOFOLLOW | O_CLOEXEC | (S_ISDIR(st.st_mode) ? O_DIRECTORY : 0);
	_cleanup_close_ int fd = openat(dfd, name, flags);
	if (fd < 0)
		return hutch_fail_errno(err, errno, "%s%s%s", WHERE(src, t->path));
	return S_ISDIR(st.st_mode) ? hash_dir(t, src, fd, depth, err) : hash_data(t, src, fd, err);
}

/* SRC's parent directory and last name, for the *at calls (SRC itself may be a link). */
static int open_parent(const char *src, char **name, struct hutch_err *err)
{
	_cleanup_free_ char *copy = hutch_xstrdup(src);
	size_t len = strlen(copy);
	while (len > 1 && copy[len - 1] == '/')
		copy[--len] = '\0';
	char *slash = strrchr(copy, '/');
	const char *dir = slash ? (slash == copy ? "/" : copy) : ".";
	*name = hutch_xstrdup(slash ? slash + 1 : copy);
	if (slash)
		*slash = '\0';
	if (!**name || !strcmp(*name, "..") || !strcmp(*name, ".")) { /* "/", "a/..", "." */
		free(*name);
		*name = hutch_xstrdup(".");
		dir = src;
	}
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return hutch_fail_errno(err, errno, "%s", src);
	return fd;
}

int img_tree_digest(const char *src, char out[IMG_DIGEST_MAX], struct hutch_err *err)
{
	_cleanup_free_ char *name = NULL;
	_cleanup_close_ int pfd = open_parent(src, &name, err);
	if (pfd < 0)
		return pfd;
	_cleanup_free_ struct tree *t = hutch_xcalloc(1, sizeof(*t));
	img_sha_init(&t->h);
	int r = hash_entry(t, src, pfd, name, 0, err);
	img_sha_final(&t->h, out);
	return r;
}

/* ---- the copy ---- */

struct put {
	uid_t uid;
	gid_t gid;
	const char *src;
	char path[PATH_MAX]; /* relative to SRC, as in the digest */
	char buf[65536];
};

/* Owner first: chown clears setuid bits, which the mode then puts back. */
static int own(struct put *p, int dfd, const char *name, const struct stat *st,
	       struct hutch_err *err)
{
	if (fchownat(dfd, name, p->uid, p->gid, AT_SYMLINK_NOFOLLOW) < 0)
		return hutch_fail_errno(err, errno, "%s%s%s: chown", WHERE(p->src, p->path));
	if (!S_ISLNK(st->st_mode) && fchmodat(dfd, name, st->st_mode & 07777, 0) < 0)
		return hutch_fail_errno(err, errno, "%s%s%s: chmod", WHERE(p->src, p->path));
	return 0;
}

static int put_file(struct put *p, int sdir, const char *sname, int ddir, const char *dname,
		    const struct stat *st, struct hutch_err *err)
{
	_cleanup_close_ int s = openat(sdir, sname, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (s < 0)
		return hutch_fail_errno(err, errno, "%s%s%s", WHERE(p->src, p->path));
	/* O_EXCL|O_NOFOLLOW: the name was cleared, so nothing may stand there now. */
	_cleanup_close_ int d =
		openat(ddir, dname, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (d < 0)
		return hutch_fail_errno(err, errno, "%s%s%s: create", WHERE(p->src, p->path));
	for (ssize_t n; (n = read(s, p->buf, sizeof(p->buf)));) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || hutch_write_all(d, p->buf, (size_t)n) < 0)
			return hutch_fail_errno(err, errno, "%s%s%s", WHERE(p->src, p->path));
	}
	return own(p, ddir, dname, st, err);
}

static int put_entry(struct put *p, int sdir, const char *sname, int ddir, const char *dname,
		     int depth, struct hutch_err *err);

static int put_dir(struct put *p, int sfd, int dfd, int depth, struct hutch_err *err)
{
	_cleanup_strv_ char **names = NULL;
	size_t n = 0, len = strlen(p->path);
	if (depth > TREE_DEPTH_MAX)
		return hutch_fail(err, ELOOP, "%s%s%s: nested too deep", WHERE(p->src, p->path));
	int r = dir_names(sfd, &names, &n);
	if (r < 0)
		return hutch_fail_errno(err, r, "%s%s%s", WHERE(p->src, p->path));
	for (size_t i = 0; i < n; i++) {
		if (len + strlen(names[i]) + 2 > sizeof(p->path))
			return hutch_fail(err, ENAMETOOLONG, "%s%s%s: name too long",
					  WHERE(p->src, p->path));
		snprintf(p->path + len, sizeof(p->path) - len, "%s%s", len ? "/" : "", names[i]);
		r = put_entry(p, sfd, names[i], dfd, names[i], depth + 1, err);
		p->path[len] = '\0';
		if (r < 0)
			return r;
	}
	return 0;
}

/* A directory merges into one already there; anything else replaces what stands there (a
 * link of the image included: it is removed, never followed). */
static int put_subdir(struct put *p, int sdir, const char *sname, int ddir, const char *dname,
		      const struct stat *st, bool exists, int depth, struct hutch_err *err)
{
	_cleanup_close_ int s =
		openat(sdir, sname, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (s < 0)
		return hutch_fail_errno(err, errno, "%s%s%s", WHERE(p->src, p->path));
	if (!exists && mkdirat(ddir, dname, 0700) < 0)
		return hutch_fail_errno(err, errno, "%s%s%s: mkdir", WHERE(p->src, p->path));
	_cleanup_close_ int d =
		openat(ddir, dname, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (d < 0)
		return hutch_fail_errno(err, errno, "%s%s%s", WHERE(p->src, p->path));
	TRY(put_dir(p, s, d, depth, err));
	return own(p, ddir, dname, st, err);
}

static int put_entry(struct put *p, int sdir, const char *sname, int ddir, const char *dname,
		     int depth, struct hutch_err *err)
{
	struct stat st, dt;
	if (fstatat(sdir, sname, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return hutch_fail_errno(err, errno, "%s%s%s", WHERE(p->src, p->path));
	TRY(check_type(p->src, p->path, &st, err)); /* again: the tree may have changed */
	bool exists = fstatat(ddir, dname, &dt, AT_SYMLINK_NOFOLLOW) == 0;
	if (exists && (!S_ISDIR(st.st_mode) || !S_ISDIR(dt.st_mode))) {
		int r = S_ISDIR(dt.st_mode) ? img_remove_tree_at(ddir, dname)
					    : (unlinkat(ddir, dname, 0) < 0 ? -errno : 0);
		if (r < 0)
			return hutch_fail_errno(err, r, "%s%s%s: replace", WHERE(p->src, p->path));
		exists = false;
	}
	if (S_ISDIR(st.st_mode))
		return put_subdir(p, sdir, sname, ddir, dname, &st, exists, depth, err);
	if (S_ISREG(st.st_mode))
		return put_file(p, sdir, sname, ddir, dname, &st, err);
	char target[PATH_MAX];
	ssize_t n = readlinkat(sdir, sname, target, sizeof(target) - 1);
	if (n < 0)
		return hutch_fail_errno(err, errno, "%s%s%s: readlink", WHERE(p->src, p->path));
	target[n] = '\0';
	if (symlinkat(target, ddir, dname) < 0)
		return hutch_fail_errno(err, errno, "%s%s%s: symlink", WHERE(p->src, p->path));
	return own(p, ddir, dname, &st, err);
}

/* The directory DST names, made (0755) with its parents when missing. */
static int dst_dir(int rootfd, const char *dst, struct hutch_err *err)
{
	int fd = hutch_mkdir_in_root(rootfd, dst, 0755, err);
	if (fd < 0)
		return hutch_err_prefix(err, "%s: ", dst);
	return fd;
}

int img_copy_in(int rootfd, const char *src, const char *dst, uid_t uid, gid_t gid,
		struct hutch_err *err)
{
	_cleanup_free_ char *name = NULL, *parent = NULL;
	_cleanup_close_ int pfd = open_parent(src, &name, err), dfd = -1;
	struct stat st;
	if (pfd < 0)
		return pfd;
	if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return hutch_fail_errno(err, errno, "%s", src);
	_cleanup_free_ struct put *p = hutch_xcalloc(1, sizeof(*p));
	*p = (struct put){ .uid = uid, .gid = gid, .src = src };
	if (S_ISDIR(st.st_mode)) { /* as Docker's COPY: the contents, into DST */
		_cleanup_close_ int s =
			openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (s < 0)
			return hutch_fail_errno(err, errno, "%s", src);
		dfd = dst_dir(rootfd, dst, err);
		return dfd < 0 ? dfd : put_dir(p, s, dfd, 0, err);
	}
	/* A file: into DST when it ends in / or is a directory of the image, else as DST. */
	_cleanup_close_ int isdir =
		dst[strlen(dst) - 1] == '/'
			? -1
			: hutch_open_in_root(rootfd, dst, O_PATH | O_DIRECTORY, 0, err);
	bool into = dst[strlen(dst) - 1] == '/' || isdir >= 0;
	const char *slash = strrchr(dst, '/');
	parent = into ? hutch_xstrdup(dst) : hutch_xasprintf("%.*s", (int)(slash - dst) + 1, dst);
	dfd = dst_dir(rootfd, parent, err);
	if (dfd < 0)
		return dfd;
	return put_entry(p, pfd, name, dfd, into ? name : slash + 1, 0, err);
}
