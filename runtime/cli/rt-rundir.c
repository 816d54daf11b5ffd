// SPDX-License-Identifier: Apache-2.0
/*
 * Where hutch keeps its runtime state (containers, sandboxes, locks, names). Host root uses
 * /run/hutch. A rootless caller cannot write there, and must not share it: it gets
 * $XDG_RUNTIME_DIR/hutch, else /run/user/UID/hutch, else $TMPDIR/hutch-UID (as tmux does),
 * made 0700 and refused when someone else owns it.
 */
#include "rt.h"
#include "hutch-ids.h"
#include "hutch-path.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static bool own_dir(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid();
}

const char *rt_run_dir(void)
{
	static char *dir;
	if (dir)
		return dir;
	if (!hutch_rootless())
		return dir = hutch_xstrdup(RT_DEFAULT_ROOT);
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	char user_run[64];
	snprintf(user_run, sizeof(user_run), "/run/user/%u", (unsigned)geteuid());
	if (xdg && xdg[0] == '/')
		dir = hutch_xasprintf("%s/hutch", xdg);
	else if (own_dir(user_run))
		dir = hutch_xasprintf("%s/hutch", user_run);
	else {
		const char *tmp = getenv("TMPDIR");
		dir = hutch_xasprintf("%s/hutch-%u", tmp && tmp[0] == '/' ? tmp : "/tmp",
				      (unsigned)geteuid());
	}
	return dir;
}

const char *rt_run_path(const char *sub)
{
	static struct {
		const char *sub;
		char *path;
	} cache[8];
	size_t i = 0;
	for (; i < ARRAY_SIZE(cache) && cache[i].sub; i++)
		if (!strcmp(cache[i].sub, sub))
			return cache[i].path;
	char *path = hutch_xasprintf("%s/%s", rt_run_dir(), sub);
	if (i < ARRAY_SIZE(cache)) /* the few fixed names hutch uses: kept for the run */
		cache[i].sub = sub, cache[i].path = path;
	return path;
}

/* "what path: a symlink" when name in dir is one, else the errno of the failed open. */
static int open_failed(const char *what, const char *path, int dir, const char *name, int e,
		       struct hutch_err *err)
{
	struct stat st;
	if ((e == ELOOP || e == ENOTDIR) && fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISLNK(st.st_mode))
		return hutch_fail(err, ELOOP, "%s %s: a symlink (give the path it points to)", what,
				  path);
	return hutch_fail_errno(err, e, "%s %s", what, path);
}

int rt_make_dir(const char *what, const char *path, mode_t mode, bool parents,
		struct hutch_err *err)
{
	_cleanup_free_ char *name = NULL;
	_cleanup_close_ int dir = hutch_chase(what, path, HUTCH_CHASE_PARENT, &name, err);
	if (dir == -ENOENT && parents) { /* mkdir -p: its parent first, made the same way */
		_cleanup_free_ char *up = hutch_xstrdup(path);
		char *slash = strrchr(up, '/');
		while (slash && slash > up && slash[1] == '\0') /* trailing slashes */
			*slash = '\0', slash = strrchr(up, '/');
		if (slash && slash > up) {
			*slash = '\0';
			int fd = rt_make_dir(what, up, mode, true, err);
			if (fd < 0)
				return fd;
			close(fd);
			dir = hutch_chase(what, path, HUTCH_CHASE_PARENT, &name, err);
		}
	}
	if (dir < 0)
		return dir;
	if (mkdirat(dir, name, mode) < 0 && errno != EEXIST)
		return hutch_fail_errno(err, errno, "%s: mkdir %s", what, path);
	int fd = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return fd >= 0 ? fd : open_failed(what, path, dir, name, errno, err);
}

/* The run dir is held open for the run: every state, lock and name beneath it is opened from
 * this fd. A process that closed it (--detach's supervisor closes every fd) opens it again. */
static struct {
	int fd;
	dev_t dev;
	ino_t ino;
} held = { .fd = -1 };

static bool still_held(void)
{
	struct stat st;
	return held.fd >= 0 && fstat(held.fd, &st) == 0 && st.st_dev == held.dev &&
	       st.st_ino == held.ino;
}

/* The run dir, made when make, else only found (ENOENT when missing); then held. */
static int open_run_dir(bool make, struct hutch_err *err)
{
	const char *dir = rt_run_dir();
	bool rootless = hutch_rootless();
	struct stat st;
	if (still_held())
		return held.fd;
	/* 0711: a mapped sandbox root traverses it to its rootfs */
	int fd =
		make ? rt_make_dir("state dir", dir, rootless ? 0700 : 0711, false, err)
		     : hutch_chase_type("state dir", dir, HUTCH_CHASE_NOFOLLOW, S_IFDIR, NULL, err);
	if (fd < 0)
		return rootless && fd != -ENOENT
			       ? hutch_err_prefix(
					 err,
					 "rootless state (set XDG_RUNTIME_DIR or give --root): ")
			       : fd;
	if (fstat(fd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & (rootless ? 077 : 022))) {
		close(fd);
		return hutch_fail(err, EPERM,
				  "%s: not a directory of uid %u's alone (mode %s); remove it%s",
				  dir, (unsigned)geteuid(), rootless ? "0700" : "0711",
				  rootless ? ", or set XDG_RUNTIME_DIR" : "");
	}
	held.fd = fd, held.dev = st.st_dev, held.ino = st.st_ino;
	return fd;
}

int rt_run_dir_make(struct hutch_err *err)
{
	int fd = open_run_dir(true, err);
	return fd < 0 ? fd : 0;
}

int rt_run_subdir(const char *sub, bool make, struct hutch_err *err)
{
	int run = open_run_dir(make, err);
	if (run < 0)
		return run;
	if (make && mkdirat(run, sub, 0700) < 0 && errno != EEXIST)
		return hutch_fail_errno(err, errno, "mkdir %s", rt_run_path(sub));
	int fd = openat(run, sub, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return fd >= 0 ? fd : open_failed("state dir", rt_run_path(sub), run, sub, errno, err);
}

bool rt_regular(int fd)
{
	struct stat st;
	return fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
}
