// SPDX-License-Identifier: Apache-2.0
/*
 * Caller paths into fds (hutch-path.h): one walk, component by component, that follows a
 * symlink only where nobody but root or the caller could have put it, and the reading of a
 * caller's file that can neither block on a FIFO nor follow a planted link.
 */
#include "hutch-path.h"

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_HOPS 40 /* the kernel's own limit on symlinks in one lookup */

char *hutch_fd_realpath(int fd)
{
	char link[HUTCH_FD_PATH_MAX], buf[PATH_MAX];
	ssize_t n = readlink(hutch_fd_path(fd, link), buf, sizeof(buf) - 1);
	if (n < 0)
		return hutch_xstrdup("?");
	buf[n] = '\0';
	return hutch_xstrdup(buf);
}

/* A link in dir is one root or the caller put there: nobody else owns or can write dir. */
static bool dir_trusted(int dirfd)
{
	struct stat st;
	if (fstat(dirfd, &st) < 0)
		return false;
	return (st.st_uid == 0 || st.st_uid == geteuid()) && !(st.st_mode & 0022);
}

/* "dir/name" as it stands now, for an error about name in dirfd. */
static int fail_at(struct hutch_err *err, int code, const char *what, int dirfd, const char *name,
		   const char *why)
{
	_cleanup_free_ char *dir = hutch_fd_realpath(dirfd);
	return hutch_fail(err, code, "%s %s%s%s: %s", what, dir, strcmp(dir, "/") ? "/" : "", name,
			  why);
}

/* Splits off the first component of *rest (slashes skipped): its length, 0 at the end. */
static size_t next_component(char **rest)
{
	while (**rest == '/')
		(*rest)++;
	return strcspn(*rest, "/");
}

static bool only_slashes(const char *s)
{
	return s[strspn(s, "/")] == '\0';
}

/* A followed link: its target, then what was left of the path. */
static int follow(const char *what, int *dirfd, int linkfd, const char *name, char **todo,
		  const char *rest, struct hutch_err *err)
{
	char target[PATH_MAX];
	ssize_t n = readlinkat(linkfd, "", target, sizeof(target) - 1);
	if (n <= 0)
		return fail_at(err, n < 0 ? errno : ENOENT, what, *dirfd, name,
			       "unreadable symlink");
	target[n] = '\0';
	char *next = hutch_xasprintf("%s/%s", target, rest);
	free(*todo);
	*todo = next;
	if (target[0] == '/') {
		int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (root < 0)
			return hutch_fail_errno(err, errno, "%s: open /", what);
		close(*dirfd);
		*dirfd = root;
	}
	return 0;
}

/* One step of the walk: name opened in *dirfd, which it replaces (0), or a link followed,
 * which replaces *todo (1). */
static int step(const char *what, int *dirfd, const char *name, bool last, unsigned flags,
		char **todo, const char *rest, unsigned *hops, struct hutch_err *err)
{
	int fd = openat(*dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (fd < 0)
		return fail_at(err, errno, what, *dirfd, name, strerror(errno));
	if (fstat(fd, &st) < 0) {
		int r = -errno;
		close(fd);
		return fail_at(err, -r, what, *dirfd, name, strerror(-r));
	}
	if (S_ISLNK(st.st_mode)) {
		int r = 0;
		if (last && (flags & HUTCH_CHASE_NOFOLLOW))
			r = fail_at(err, ELOOP, what, *dirfd, name,
				    "a symlink (give the path it points to)");
		else if (!dir_trusted(*dirfd))
			r = fail_at(err, ELOOP, what, *dirfd, name,
				    "a symlink in a directory that another user can write: "
				    "not followed");
		else if (++*hops > MAX_HOPS)
			r = fail_at(err, ELOOP, what, *dirfd, name, "too many symlinks");
		else
			r = follow(what, dirfd, fd, name, todo, rest, err);
		close(fd);
		return r < 0 ? r : 1;
	}
	if (!last && !S_ISDIR(st.st_mode)) {
		close(fd);
		return fail_at(err, ENOTDIR, what, *dirfd, name, strerror(ENOTDIR));
	}
	close(*dirfd);
	*dirfd = fd;
	return 0;
}

int hutch_chase(const char *what, const char *path, unsigned flags, char **ret_name,
		struct hutch_err *err)
{
	if (!path || !*path)
		return hutch_fail(err, EINVAL, "%s: empty path", what);
	_cleanup_close_ int dirfd =
		open(path[0] == '/' ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		return hutch_fail_errno(err, errno, "%s %s", what, path);
	_cleanup_free_ char *todo = hutch_xstrdup(path);
	size_t pos = 0;
	unsigned hops = 0;
	for (;;) {
		char *rest = todo + pos;
		size_t len = next_component(&rest);
		if (!len)
			break;
		char name[NAME_MAX + 1];
		if (len > NAME_MAX)
			return hutch_fail(err, ENAMETOOLONG, "%s %s: a name too long", what, path);
		memcpy(name, rest, len);
		name[len] = '\0';
		rest += len;
		bool last = only_slashes(rest);
		if (last && (flags & HUTCH_CHASE_PARENT)) {
			if (!strcmp(name, ".") || !strcmp(name, "..") || *rest)
				break; /* refused below: no file name */
			*ret_name = hutch_xstrdup(name);
			return steal_fd(dirfd);
		}
		/* follow() rewrites todo: what remains is copied before it is freed. */
		_cleanup_free_ char *after = hutch_xstrdup(rest);
		pos = (size_t)(rest - todo);
		if (!strcmp(name, "."))
			continue;
		int r = step(what, &dirfd, name, last, flags, &todo, after, &hops, err);
		if (r < 0)
			return r;
		if (r == 1)
			pos = 0;
	}
	if (flags & HUTCH_CHASE_PARENT)
		return hutch_fail(err, EISDIR, "%s %s: names no file", what, path);
	return steal_fd(dirfd);
}

int hutch_chase_type(const char *what, const char *path, unsigned flags, mode_t type,
		     struct stat *st, struct hutch_err *err)
{
	struct stat buf;
	st = st ? st : &buf;
	_cleanup_close_ int fd = hutch_chase(what, path, flags & ~HUTCH_CHASE_PARENT, NULL, err);
	if (fd < 0)
		return fd;
	if (fstat(fd, st) < 0)
		return hutch_fail_errno(err, errno, "%s %s", what, path);
	if ((st->st_mode & S_IFMT) != type) {
		_cleanup_free_ char *real = hutch_fd_realpath(fd);
		return hutch_fail(err, type == S_IFDIR ? ENOTDIR : EINVAL, "%s %s: not a %s", what,
				  real, type == S_IFDIR ? "directory" : "regular file");
	}
	return steal_fd(fd);
}

/* "/dev/fd/N", "/proc/self/fd/N", "/dev/stdin": the caller's own fd, which hutch inherited. */
static int inherited_fd(const char *path)
{
	int n = -1, end = 0;
	if (!strcmp(path, "/dev/stdin"))
		return 0;
	if ((sscanf(path, "/dev/fd/%d%n", &n, &end) == 1 ||
	     sscanf(path, "/proc/self/fd/%d%n", &n, &end) == 1) &&
	    !path[end] && n >= 0)
		return n;
	return -1;
}

static int open_caller_file(const char *what, const char *path, struct hutch_err *err)
{
	int n = inherited_fd(path);
	struct stat st;
	if (n >= 0 && fstat(n, &st) < 0)
		return hutch_fail_errno(err, errno, "%s %s", what, path);
	if (n >= 0 && !S_ISREG(st.st_mode)) {
		int fd = fcntl(n, F_DUPFD_CLOEXEC, 3);
		return fd >= 0 ? fd : hutch_fail_errno(err, errno, "%s %s", what, path);
	}
	if (n >= 0) { /* a file: opened anew, read from its start however often it is named */
		char link[HUTCH_FD_PATH_MAX];
		int fd = open(hutch_fd_path(n, link), O_RDONLY | O_NOCTTY | O_CLOEXEC);
		return fd >= 0 ? fd : hutch_fail_errno(err, errno, "%s %s", what, path);
	}
	_cleanup_close_ int pfd = hutch_chase(what, path, 0, NULL, err);
	if (pfd < 0)
		return pfd;
	/* Reopened through the fd just resolved: no second lookup of the name. O_NONBLOCK: a
	 * FIFO without a writer opens at once. */
	char link[HUTCH_FD_PATH_MAX];
	int fd = open(hutch_fd_path(pfd, link), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	return fd >= 0 ? fd : hutch_fail_errno(err, errno, "%s %s", what, path);
}

/* Waits for more of a pipe until the deadline: 1 readable, 0 timed out. */
static int wait_readable(int fd, double deadline)
{
	int left = (int)(deadline - hutch_now_ms());
	struct pollfd p = { .fd = fd, .events = POLLIN };
	if (left <= 0)
		return 0;
	int r = poll(&p, 1, left);
	return r < 0 ? (errno == EINTR ? 1 : -errno) : r;
}

static int read_to_eof(int fd, size_t max, int timeout_ms, char **buf, size_t *len)
{
	double deadline = hutch_now_ms() + timeout_ms;
	size_t cap = 4096;
	*buf = hutch_xmalloc(cap + 1);
	for (;;) {
		if (*len == cap) {
			if (cap > max)
				return -EFBIG;
			cap *= 2;
			*buf = hutch_xrealloc(*buf, cap + 1);
		}
		ssize_t n = read(fd, *buf + *len, cap - *len);
		if (n > 0) {
			*len += (size_t)n;
			if (*len > max)
				return -EFBIG;
		} else if (n == 0) {
			return 0;
		} else if (errno == EAGAIN) {
			int r = wait_readable(fd, deadline);
			if (r <= 0)
				return r < 0 ? r : -ETIMEDOUT;
		} else if (errno != EINTR) {
			return -errno;
		}
	}
}

int hutch_read_caller_file(const char *what, const char *path, size_t max, int timeout_ms,
			   char **ret_buf, size_t *ret_len, struct hutch_err *err)
{
	_cleanup_close_ int fd = open_caller_file(what, path, err);
	struct stat st;
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0)
		return hutch_fail_errno(err, errno, "%s %s", what, path);
	if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode))
		return hutch_fail(err, EINVAL, "%s %s: not a regular file or a pipe", what, path);
	if (S_ISFIFO(st.st_mode) && fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0)
		return hutch_fail_errno(err, errno, "%s %s", what, path);
	_cleanup_free_ char *buf = NULL;
	size_t len = 0;
	int r = read_to_eof(fd, max, timeout_ms, &buf, &len);
	if (r == -EFBIG)
		return hutch_fail(err, EFBIG, "%s %s: larger than %zu bytes", what, path, max);
	if (r == -ETIMEDOUT)
		return hutch_fail(err, ETIMEDOUT, "%s %s: a pipe still open after %d ms", what,
				  path, timeout_ms);
	if (r < 0)
		return hutch_fail_errno(err, r, "%s %s: read", what, path);
	if (S_ISFIFO(st.st_mode) && len == 0)
		return hutch_fail(err, ENODATA, "%s %s: a pipe that gave nothing (no writer)", what,
				  path);
	buf[len] = '\0';
	*ret_buf = steal_ptr(buf);
	if (ret_len)
		*ret_len = len;
	return 0;
}
