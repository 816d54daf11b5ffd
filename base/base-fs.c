// SPDX-License-Identifier: Apache-2.0
/*
 * fd-relative file helpers. Everything that touches a container's rootfs goes through
 * hutch_open_in_root / hutch_mkdir_in_root, so a symlink planted in an image is resolved
 * as if the rootfs were / and can never lead hutch to a host path.
 */
#include "hutch-base.h"
#include "hutch-sys.h"

#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <time.h>

int hutch_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

ssize_t hutch_read_all(int fd, void *buf, size_t len)
{
	size_t got = 0;
	while (got < len) {
		ssize_t n = read(fd, (char *)buf + got, len - got);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

int hutch_write_file_at(int dirfd, const char *path, const void *buf, size_t len,
			struct hutch_err *err)
{
	_cleanup_close_ int fd = openat(dirfd, path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return hutch_fail_errno(err, errno, "open %s", path);
	int r = hutch_write_all(fd, buf, len);
	if (r < 0)
		return hutch_fail_errno(err, r, "write %s", path);
	return 0;
}

int hutch_write_str_at(int dirfd, const char *path, const char *s, struct hutch_err *err)
{
	return hutch_write_file_at(dirfd, path, s, strlen(s), err);
}

int hutch_read_file_at(int dirfd, const char *path, size_t max, char **out, size_t *len,
		       struct hutch_err *err)
{
	_cleanup_close_ int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return hutch_fail_errno(err, errno, "open %s", path);
	/* Most files fit the first 4 KiB. One that fills it is sized by fstat, so that the
	 * rest comes in one read (Docker's profile makes config.json ~16 KiB); the doubling
	 * still copes with files that grow or report no size (/proc). */
	size_t cap = 4096, used = 0;
	bool sized = false;
	_cleanup_free_ char *buf = hutch_xmalloc(cap + 1);
	for (;;) {
		if (used == cap) {
			struct stat st;
			if (cap >= max)
				return hutch_fail(err, EFBIG, "%s: larger than %zu bytes", path,
						  max);
			if (!sized && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
			    (uint64_t)st.st_size >= cap && (uint64_t)st.st_size < max)
				cap = (size_t)st.st_size + 1; /* + 1: the read that sees the end */
			else
				cap = cap * 2 > max ? max : cap * 2;
			sized = true;
			buf = hutch_xrealloc(buf, cap + 1);
		}
		ssize_t n = read(fd, buf + used, cap - used);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return hutch_fail_errno(err, errno, "read %s", path);
		if (n == 0)
			break;
		used += (size_t)n;
	}
	buf[used] = '\0';
	if (len)
		*len = used;
	*out = steal_ptr(buf);
	return 0;
}

/* A fresh temp file in dirfd: O_EXCL, so that a name planted there first (a FIFO, a link)
 * is never opened, only skipped; the name is random, so it can't be planted for sure. */
static int create_temp(int dirfd, const char *name, mode_t mode, char tmp[PATH_MAX])
{
	for (int tries = 0; tries < 16; tries++) {
		uint64_t rnd = 0;
		if (getrandom(&rnd, sizeof(rnd), 0) != sizeof(rnd)) {
			struct timespec ts;
			clock_gettime(CLOCK_MONOTONIC, &ts);
			rnd = (uint64_t)ts.tv_nsec * 2654435761u + (uint64_t)tries;
		}
		snprintf(tmp, PATH_MAX, ".%s.tmp.%d.%016llx", name, (int)getpid(),
			 (unsigned long long)rnd);
		int fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
				mode);
		if (fd >= 0 || errno != EEXIST)
			return fd >= 0 ? fd : -errno;
	}
	return -EEXIST;
}

int hutch_write_atomic_at(int dirfd, const char *name, const void *buf, size_t len, mode_t mode,
			  struct hutch_err *err)
{
	char tmp[PATH_MAX];
	_cleanup_close_ int fd = create_temp(dirfd, name, mode, tmp);
	if (fd < 0)
		return hutch_fail_errno(err, fd, "create a temporary file for %s", name);
	int r = hutch_write_all(fd, buf, len);
	if (r < 0) {
		unlinkat(dirfd, tmp, 0);
		return hutch_fail_errno(err, r, "write %s", name);
	}
	if (renameat(dirfd, tmp, dirfd, name) < 0) {
		r = -errno;
		unlinkat(dirfd, tmp, 0);
		return hutch_fail_errno(err, r, "rename %s", name);
	}
	return 0;
}

int hutch_write_atomic(const char *path, const void *buf, size_t len, mode_t mode,
		       struct hutch_err *err)
{
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');
	const char *name = slash ? path + (slash - dir) + 1 : path;
	if (slash == dir)
		strcpy(dir, "/");
	else if (slash)
		*slash = '\0';
	_cleanup_close_ int dfd = open(slash ? dir : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return hutch_fail_errno(err, errno, "%s", path);
	int r = hutch_write_atomic_at(dfd, name, buf, len, mode, err);
	return r < 0 ? hutch_err_prefix(err, "%s: ", path) : 0;
}

int hutch_open_in_root(int rootfd, const char *path, int flags, mode_t mode, struct hutch_err *err)
{
	struct open_how how = {
		.flags = (uint64_t)(flags | O_CLOEXEC),
		.mode = (flags & O_CREAT) ? mode : 0,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	while (*path == '/')
		path++;
	if (!*path)
		path = ".";
	int fd;
	do
		fd = hutch_sys->openat2(rootfd, path, &how, sizeof(how));
	while (fd < 0 && errno == EAGAIN);
	if (fd < 0)
		return hutch_fail_errno(err, errno, "open /%s in rootfs", path);
	return fd;
}

/* Lexically cleans an absolute path inside a root: "." dropped, ".." clamped at "/". */
static void clean_in_root(const char *in, char *out, size_t cap)
{
	size_t o = 0;
	out[0] = '\0';
	while (*in) {
		while (*in == '/')
			in++;
		const char *e = strchrnul(in, '/');
		size_t n = (size_t)(e - in);
		if (n == 0 || (n == 1 && in[0] == '.')) {
			/* skip */
		} else if (n == 2 && in[0] == '.' && in[1] == '.') {
			while (o > 0 && out[--o] != '/')
				;
			out[o] = '\0';
		} else if (o + n + 2 < cap) {
			out[o++] = '/';
			memcpy(out + o, in, n);
			o += n;
			out[o] = '\0';
		}
		in = e;
	}
	if (o == 0)
		snprintf(out, cap, "/");
}

/* One component at a time, each re-resolved from the root. A symlinked component is
 * followed as the container would see it (its target created inside the root if missing,
 * as runc's MkdirAllInRoot does), never out of the root. */
static int mkdir_walk(int rootfd, const char *path, mode_t mode, int depth, struct hutch_err *err)
{
	char buf[PATH_MAX], done[PATH_MAX] = "";
	if (depth > 40)
		return hutch_fail(err, ELOOP, "mkdir %s: too many symlinks", path);
	clean_in_root(path, buf, sizeof(buf));
	_cleanup_close_ int cur = hutch_open_in_root(rootfd, "/", O_PATH | O_DIRECTORY, 0, err);
	if (cur < 0)
		return cur;
	for (char *c = buf + 1; *c;) {
		char *slash = strchr(c, '/');
		if (slash)
			*slash = '\0';
		if (hutch_sys->mkdirat(cur, c, mode) < 0 && errno != EEXIST)
			return hutch_fail_errno(err, errno, "mkdir %s", path);
		size_t l = strlen(done);
		snprintf(done + l, sizeof(done) - l, "/%s", c);
		int next = hutch_open_in_root(rootfd, done, O_PATH | O_DIRECTORY, 0, err);
		if (next == -ENOENT) {
			/* A dangling symlink: create its target (inside the root), then go on. */
			char target[PATH_MAX], joined[PATH_MAX * 3 + 8];
			ssize_t n = readlinkat(cur, c, target, sizeof(target) - 1);
			if (n < 0)
				return next;
			target[n] = '\0';
			done[l] = '\0';
			int w = snprintf(joined, sizeof(joined), "%s/%s/%s",
					 target[0] == '/' ? "" : done, target,
					 slash ? slash + 1 : "");
			if (w < 0 || (size_t)w >= PATH_MAX)
				return hutch_fail(err, ENAMETOOLONG, "mkdir %s: path too long",
						  path);
			return mkdir_walk(rootfd, joined, mode, depth + 1, err);
		}
		if (next < 0)
			return next;
		close(cur);
		cur = next;
		c = slash ? slash + 1 : c + strlen(c);
	}
	return steal_fd(cur);
}

/* The usual missing mount point: its parent is there (/dev/pts, /sys/fs/cgroup/memory). One
 * open of the parent, resolved in the root as the walk's would be, a mkdir and an open, rather
 * than a mkdir, an open and a close per component. Anything else (a missing or dangling parent,
 * a dangling link as the last component, an error to report) is left to the walk: < 0. */
static int mkdir_last(int rootfd, const char *path, mode_t mode)
{
	char buf[PATH_MAX];
	struct hutch_err ignored = { 0 };
	clean_in_root(path, buf, sizeof(buf));
	char *slash = strrchr(buf, '/');
	if (!slash || !slash[1])
		return -EINVAL; /* "/" itself */
	*slash = '\0';
	_cleanup_close_ int dir =
		hutch_open_in_root(rootfd, *buf ? buf : "/", O_PATH | O_DIRECTORY, 0, &ignored);
	if (dir < 0)
		return dir;
	if (hutch_sys->mkdirat(dir, slash + 1, mode) < 0 && errno != EEXIST)
		return -errno;
	*slash = '/';
	return hutch_open_in_root(rootfd, buf, O_PATH | O_DIRECTORY, 0, &ignored);
}

int hutch_mkdir_in_root(int rootfd, const char *path, mode_t mode, struct hutch_err *err)
{
	if (strlen(path) >= PATH_MAX)
		return hutch_fail(err, ENAMETOOLONG, "path too long: %s", path);
	/* ".." in a path we are asked to create is a config error, not something to clamp. */
	for (const char *p = path; (p = strstr(p, "..")); p += 2)
		if ((p == path || p[-1] == '/') && (p[2] == '/' || p[2] == '\0'))
			return hutch_fail(err, EINVAL, "path %s: '..' is not allowed", path);
	/* Usually it is there already (an image's /proc, /dev and /sys, a mount point an earlier
	 * step made): one open, resolved in the root as the walk's last would be, rather than a
	 * mkdir and an open of each component. */
	struct hutch_err ignored = { 0 };
	int fd = hutch_open_in_root(rootfd, path, O_PATH | O_DIRECTORY, 0, &ignored);
	if (fd == -ENOENT)
		fd = mkdir_last(rootfd, path, mode);
	return fd >= 0 ? fd : mkdir_walk(rootfd, path, mode, 0, err);
}

const char *hutch_fd_path(int fd, char buf[HUTCH_FD_PATH_MAX])
{
	snprintf(buf, HUTCH_FD_PATH_MAX, "/proc/self/fd/%d", fd);
	return buf;
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

int hutch_close_fds_from(int from, const int *keep, size_t n_keep)
{
	int sorted[64];
	size_t n = 0;
	for (size_t i = 0; i < n_keep && n < ARRAY_SIZE(sorted); i++)
		if (keep[i] >= from)
			sorted[n++] = keep[i];
	qsort(sorted, n, sizeof(int), cmp_int);
	unsigned int lo = (unsigned int)from;
	for (size_t i = 0; i <= n; i++) {
		unsigned int hi = i < n ? (unsigned int)sorted[i] - 1 : ~0U;
		if (i < n && (unsigned int)sorted[i] < lo) /* duplicate keep entry */
			continue;
		if (hi >= lo && syscall(SYS_close_range, lo, hi, 0) < 0)
			return -errno;
		if (i < n)
			lo = (unsigned int)sorted[i] + 1;
	}
	/* --debug's fd closed with the rest: its number may be reused for a file of the child's */
	if (hutch_phase_fd() >= from && fcntl(hutch_phase_fd(), F_GETFD) < 0)
		hutch_phase_quiet();
	return 0;
}

/* A small /proc file into buf, NUL-terminated (what does not fit is left out). */
static int read_proc(const char *path, char *buf, size_t size)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = hutch_read_all(fd, buf, size - 1);
	if (n < 0)
		return (int)n;
	buf[n] = '\0';
	return 0;
}

int hutch_proc_stat(pid_t pid, uint64_t *start_time, char *state)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	int r = read_proc(path, buf, sizeof(buf));
	if (r < 0)
		return r;
	/* comm may hold spaces and parentheses: fields start after the last ')'. */
	char *p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		return -EINVAL;
	p += 2;
	if (state)
		*state = *p;
	for (int field = 3; field < 22; field++) {
		p = strchr(p, ' ');
		if (!p)
			return -EINVAL;
		p++;
	}
	if (start_time)
		*start_time = strtoull(p, NULL, 10);
	return 0;
}

/* The hex mask after "key:\t" in /proc/self/status, into set (bit n - 1 is signal n). */
static int add_mask(const char *status, const char *key, sigset_t *set)
{
	const char *p = strstr(status, key);
	if (!p)
		return -EINVAL;
	char *end;
	unsigned long long m = strtoull(p + strlen(key), &end, 16);
	if (end == p + strlen(key))
		return -EINVAL;
	for (int s = 1; s <= 64 && s < NSIG; s++)
		if (m & (1ULL << (s - 1)))
			sigaddset(set, s);
	return 0;
}

int hutch_signals_not_default(sigset_t *out)
{
	char buf[4096];
	int r = read_proc("/proc/self/status", buf, sizeof(buf));
	if (r < 0)
		return r;
	sigemptyset(out);
	r = add_mask(buf, "\nSigIgn:", out);
	return r < 0 ? r : add_mask(buf, "\nSigCgt:", out);
}
