// SPDX-License-Identifier: Apache-2.0
/*
 * The content-addressed store: opening and locking it, blobs, unpacked layers, names and
 * temp dirs. Every write lands in STORE/tmp first and is renamed into place, so another
 * hutch (or a crash) never sees half an image; prune takes the lock exclusively.
 */
#include "img-internal.h"
#include "hutch-ids.h"

#include <fcntl.h>
#include <sys/random.h>
#include <time.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>

const char *img_store_default(const char *flag)
{
	static const char *own;
	const char *env = getenv("HUTCH_STORE");
	if (flag && *flag)
		return flag;
	if (env && *env)
		return env;
	if (!hutch_rootless())
		return IMG_STORE_DEFAULT;
	/* A rootless caller's own store (root's is not writable, and its lock is shared). */
	if (!own)
		own = hutch_rootless_dir("XDG_DATA_HOME", ".local/share", "hutch");
	return own ? own : IMG_STORE_DEFAULT;
}

static int mkdirs(const char *path, mode_t mode)
{
	char buf[4096];
	if (strlen(path) >= sizeof(buf))
		return -ENAMETOOLONG;
	strcpy(buf, path);
	for (char *p = buf + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			if (mkdir(buf, 0755) < 0 && errno != EEXIST)
				return -errno;
			*p = '/';
		}
	if (mkdir(buf, mode) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

void img_store_free(struct img_store *s)
{
	if (!s)
		return;
	if (s->dirfd >= 0)
		close(s->dirfd);
	if (s->lockfd >= 0)
		close(s->lockfd);
	free(s->path);
	free(s);
}

void img_store_freep(struct img_store **s)
{
	img_store_free(*s);
}

const char *img_store_path(const struct img_store *s)
{
	return s->path;
}

int img_store_open(const char *path, bool create, bool exclusive, struct img_store **out,
		   struct hutch_err *err)
{
	static const char *const subdirs[] = { "blobs", "blobs/sha256", "layers", "names", "tmp" };
	/* overlayfs options separate lowerdirs with ':' and options with ','. */
	if (path[0] != '/' || strpbrk(path, ":,\\"))
		return hutch_fail(err, EINVAL,
				  "store %s: must be an absolute path without ':' or ','", path);
	if (create) {
		int r = mkdirs(path, 0700);
		if (r < 0)
			return hutch_fail_errno(err, r, "store %s", path);
	}
	_cleanup_(img_store_freep) struct img_store *s = hutch_xcalloc(1, sizeof(*s));
	s->lockfd = -1;
	s->path = hutch_xstrdup(path);
	s->dirfd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (s->dirfd < 0)
		return hutch_fail_errno(err, errno, "store %s", path);
	for (size_t i = 0; create && i < ARRAY_SIZE(subdirs); i++)
		if (mkdirat(s->dirfd, subdirs[i], 0700) < 0 && errno != EEXIST)
			return hutch_fail_errno(err, errno, "store %s/%s", path, subdirs[i]);
	/* Read-only unless made: flock needs no write, and a store may be on a read-only
	 * mount (a sandbox then holds the lock for its run: no pin can be written there). */
	s->lockfd = openat(s->dirfd, "lock",
			   (create ? O_RDWR | O_CREAT : O_RDONLY) | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (s->lockfd < 0)
		return hutch_fail_errno(err, errno, "store %s/lock", path);
	/* Running sandboxes hold pins, not the lock (img_pin): prune waits out a sandbox's
	 * start, an import or a build for a while, then says what holds it. */
	int r = flock(s->lockfd, exclusive ? LOCK_EX | LOCK_NB : LOCK_SH);
	for (int i = 0; exclusive && r < 0 && errno == EWOULDBLOCK && i < 100; i++) {
		struct timespec ts = { 0, 100 * 1000 * 1000 };
		nanosleep(&ts, NULL);
		r = flock(s->lockfd, LOCK_EX | LOCK_NB);
	}
	if (r < 0)
		return errno == EWOULDBLOCK
			       ? hutch_fail(err, EBUSY,
					    "store %s: an import or build has held it for 10 s; "
					    "try again when it is done",
					    path)
			       : hutch_fail_errno(err, errno, "store %s: lock", path);
	*out = steal_ptr(s);
	return 0;
}

/* STORE/SUB, made if missing, opened without following a link (prune opens it so too). */
static int store_subdir(struct img_store *s, const char *sub, struct hutch_err *err)
{
	if (mkdirat(s->dirfd, sub, 0700) < 0 && errno != EEXIST)
		return hutch_fail_errno(err, errno, "store %s/%s", s->path, sub);
	int fd = openat(s->dirfd, sub, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return fd < 0 ? hutch_fail_errno(err, errno, "store %s/%s", s->path, sub) : fd;
}

int img_lock_key(struct img_store *s, const char *key, bool wait, struct hutch_err *err)
{
	char digest[IMG_DIGEST_MAX], name[40];
	img_sha_buf(key, strlen(key), digest);
	snprintf(name, sizeof(name), "%.32s", IMG_HEX(digest));
	_cleanup_close_ int dir = store_subdir(s, "locks", err);
	if (dir < 0)
		return dir;
	int fd = openat(dir, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return hutch_fail_errno(err, errno, "store %s/locks/%s", s->path, name);
	if (flock(fd, wait ? LOCK_EX : LOCK_EX | LOCK_NB) == 0)
		return fd;
	int e = errno;
	close(fd);
	return e == EWOULDBLOCK && !wait
		       ? -EWOULDBLOCK
		       : hutch_fail_errno(err, e, "store %s/locks/%s: lock", s->path, name);
}

int img_cache_dir(struct img_store *s, const char *base, uid_t uid, gid_t gid, char **path,
		  struct hutch_err *err)
{
	if (!img_digest_valid(base))
		return hutch_fail(err, EINVAL, "store: cache for %s: not a digest", base);
	_cleanup_close_ int dir = store_subdir(s, "cache", err);
	if (dir < 0)
		return dir;
	const char *hex = IMG_HEX(base);
	struct stat st;
	_cleanup_close_ int fd = -1;
	for (int tries = 0; fd < 0 && tries < 2; tries++) {
		if (mkdirat(dir, hex, 0755) < 0 && errno != EEXIST)
			return hutch_fail_errno(err, errno, "store %s/cache/%s", s->path, hex);
		fd = openat(dir, hex, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			return hutch_fail_errno(err, errno, "store %s/cache/%s", s->path, hex);
		if (fstat(fd, &st) < 0)
			return hutch_fail_errno(err, errno, "store %s/cache/%s", s->path, hex);
		if (st.st_uid == uid && st.st_gid == gid)
			break;
		/* Made now (root's), or by a build under other ids: from scratch, then ours. */
		close(fd);
		fd = -1;
		int r = img_remove_tree_at(dir, hex);
		if (r < 0 && r != -ENOENT)
			return hutch_fail_errno(err, -r, "store %s/cache/%s", s->path, hex);
		if (mkdirat(dir, hex, 0755) < 0)
			return hutch_fail_errno(err, errno, "store %s/cache/%s", s->path, hex);
		fd = openat(dir, hex, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 || fchown(fd, uid, gid) < 0 || fchmod(fd, 0755) < 0)
			return hutch_fail_errno(err, errno, "store %s/cache/%s", s->path, hex);
	}
	*path = hutch_xasprintf("%s/cache/%s", s->path, hex);
	return 0;
}

int img_pin(struct img_store *s, const char *digest, char **path, struct hutch_err *err)
{
	_cleanup_close_ int dir = store_subdir(s, "pins", err);
	if (dir < 0)
		return dir;
	for (int tries = 0; tries < 16; tries++) {
		uint64_t rnd;
		char name[64];
		if (getrandom(&rnd, sizeof(rnd), 0) != sizeof(rnd))
			return hutch_fail_errno(err, errno, "getrandom");
		/* Random: pids repeat (pid namespaces, wrap-around), pins of the dead stay until
		 * a prune. */
		snprintf(name, sizeof(name), "%d-%016llx", (int)getpid(), (unsigned long long)rnd);
		int fd =
			openat(dir, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0 && errno == EEXIST)
			continue;
		if (fd < 0)
			return hutch_fail_errno(err, errno, "store %s/pins/%s", s->path, name);
		_cleanup_free_ char *line = hutch_xasprintf("%s\n", digest);
		int r = flock(fd, LOCK_SH) < 0 ? -errno : hutch_write_all(fd, line, strlen(line));
		if (r < 0) {
			unlinkat(dir, name, 0);
			close(fd);
			return hutch_fail_errno(err, r, "store %s/pins/%s", s->path, name);
		}
		*path = hutch_xasprintf("%s/pins/%s", s->path, name);
		return fd;
	}
	return hutch_fail(err, EEXIST, "store %s: no free pin name", s->path);
}

void img_unpin(int fd, char *path)
{
	if (path)
		unlink(path);
	free(path);
	if (fd >= 0)
		close(fd);
}

/* ---- blobs ---- */

static void blob_path(const char *digest, char buf[96])
{
	snprintf(buf, 96, "blobs/sha256/%s", IMG_HEX(digest));
}

int img_blob_put(struct img_store *s, const void *buf, size_t len, char digest[IMG_DIGEST_MAX],
		 struct hutch_err *err)
{
	char path[96], tmp[128];
	static unsigned counter;
	img_sha_buf(buf, len, digest);
	blob_path(digest, path);
	snprintf(tmp, sizeof(tmp), "tmp/blob-%d-%u", (int)getpid(), counter++);
	_cleanup_close_ int fd =
		openat(s->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return hutch_fail_errno(err, errno, "store: create %s", tmp);
	int r = hutch_write_all(fd, buf, len);
	if (r >= 0 && fsync(fd) < 0)
		r = -errno;
	if (r >= 0 && renameat(s->dirfd, tmp, s->dirfd, path) < 0)
		r = -errno;
	if (r < 0) {
		unlinkat(s->dirfd, tmp, 0);
		return hutch_fail_errno(err, r, "store: write blob %s", digest);
	}
	return 0;
}

int img_blob_read(struct img_store *s, const char *digest, char **out, size_t *len,
		  struct hutch_err *err)
{
	char path[96];
	if (!img_digest_valid(digest))
		return hutch_fail(err, EINVAL, "invalid digest %s", digest);
	blob_path(digest, path);
	int r = hutch_read_file_at(s->dirfd, path, IMG_BLOB_MAX, out, len, err);
	if (r < 0)
		return hutch_err_prefix(err, "blob %s: ", digest);
	return 0;
}

/* ---- temp dirs ---- */

int img_tmp_create(struct img_store *s, const char *kind, char **name, int *lockfd,
		   struct hutch_err *err)
{
	static unsigned counter;
	for (int tries = 0; tries < 100; tries++) {
		_cleanup_free_ char *n =
			hutch_xasprintf("tmp/%s-%d-%u", kind, (int)getpid(), counter++);
		_cleanup_free_ char *lock = hutch_xasprintf("%s.lock", n);
		/* The lock first: prune removes a dir whose lock nobody holds or that has none. */
		_cleanup_close_ int fd = openat(
			s->dirfd, lock, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (fd < 0 && errno == EEXIST)
			continue;
		if (fd < 0 || flock(fd, LOCK_EX) < 0)
			return hutch_fail_errno(err, errno, "store: %s", lock);
		if (mkdirat(s->dirfd, n, 0700) < 0) {
			int e = errno;
			unlinkat(s->dirfd, lock, 0);
			if (e == EEXIST)
				continue;
			return hutch_fail_errno(err, e, "store: mkdir %s", n);
		}
		*lockfd = steal_fd(fd);
		*name = steal_ptr(n);
		return 0;
	}
	return hutch_fail(err, EEXIST, "store: no free temp directory");
}

void img_tmp_remove(struct img_store *s, const char *name, int lockfd)
{
	if (!name)
		return;
	img_remove_tree_at(s->dirfd, name);
	_cleanup_free_ char *lock = hutch_xasprintf("%s.lock", name);
	unlinkat(s->dirfd, lock, 0);
	if (lockfd >= 0)
		close(lockfd);
}

/* ---- layers ---- */

bool img_layer_exists(struct img_store *s, const char *diff_id)
{
	char path[128];
	struct stat st;
	snprintf(path, sizeof(path), "layers/%s/root", IMG_HEX(diff_id));
	return fstatat(s->dirfd, path, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
}

int img_layer_note_blob(struct img_store *s, const char *diff_id, const char *blob,
			uint64_t tar_size, struct hutch_err *err)
{
	char path[160], num[32];
	snprintf(path, sizeof(path), "layers/%s/blobs", IMG_HEX(diff_id));
	if (mkdirat(s->dirfd, path, 0700) < 0 && errno != EEXIST)
		return hutch_fail_errno(err, errno, "store: mkdir %s", path);
	_cleanup_close_ int d =
		openat(s->dirfd, path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (d < 0)
		return hutch_fail_errno(err, errno, "store: %s", path);
	snprintf(num, sizeof(num), "%" PRIu64 "\n", tar_size);
	if (hutch_write_atomic_at(d, IMG_HEX(blob), num, strlen(num), 0600, err) < 0)
		return hutch_err_prefix(err, "store: %s: ", path);
	return 0;
}

bool img_layer_blob_known(struct img_store *s, const char *diff_id, const char *blob,
			  uint64_t *tar_size)
{
	char path[240];
	_cleanup_free_ char *text = NULL;
	struct hutch_err e = { 0 };
	snprintf(path, sizeof(path), "layers/%s/blobs/%s", IMG_HEX(diff_id), IMG_HEX(blob));
	if (hutch_read_file_at(s->dirfd, path, 64, &text, NULL, &e) < 0)
		return false;
	const char *num = strtok(text, "\n");
	return num && hutch_parse_u64(num, tar_size) >= 0;
}

uint64_t img_layer_size(struct img_store *s, const char *diff_id)
{
	char path[128];
	_cleanup_free_ char *text = NULL;
	struct hutch_err e = { 0 };
	uint64_t v = 0;
	snprintf(path, sizeof(path), "layers/%s/size", IMG_HEX(diff_id));
	if (hutch_read_file_at(s->dirfd, path, 64, &text, NULL, &e) >= 0)
		hutch_parse_u64(strtok(text, "\n"), &v);
	return v;
}

int img_layer_add(struct img_store *s, const char *tmpdir, const char *diff_id, uint64_t size,
		  struct hutch_err *err)
{
	char path[128], num[32];
	snprintf(num, sizeof(num), "%" PRIu64 "\n", size);
	_cleanup_close_ int d = openat(s->dirfd, tmpdir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (d < 0)
		return hutch_fail_errno(err, errno, "store: %s", tmpdir);
	if (hutch_write_atomic_at(d, "size", num, strlen(num), 0644, err) < 0)
		return hutch_err_prefix(err, "store: ");
	snprintf(path, sizeof(path), "layers/%s", IMG_HEX(diff_id));
	if (renameat(s->dirfd, tmpdir, s->dirfd, path) < 0) {
		if (errno != EEXIST && errno != ENOTEMPTY)
			return hutch_fail_errno(err, errno, "store: rename %s", path);
		img_remove_tree_at(s->dirfd, tmpdir); /* a concurrent import got there first */
		return 0;
	}
	return 1;
}
