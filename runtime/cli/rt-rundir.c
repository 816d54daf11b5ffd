// SPDX-License-Identifier: Apache-2.0
/*
 * Where hutch keeps its runtime state (containers, sandboxes, locks, names). Host root uses
 * /run/hutch. A rootless caller cannot write there, and must not share it: it gets
 * $XDG_RUNTIME_DIR/hutch, else /run/user/UID/hutch, else $TMPDIR/hutch-UID (as tmux does),
 * made 0700. That last name is guessable, and anyone may make it first in a sticky /tmp: then
 * (another owner, a link, a loose mode) the caller gets a fresh private directory instead,
 * whose name is remembered in its own ~/.cache/hutch/run-dir for the invocations after.
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

/* Whether path is a directory of ours alone, reached without a symlink. */
static bool private_dir(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() &&
	       !(st.st_mode & 077);
}

/* ~/.cache/hutch (or $XDG_CACHE_HOME/hutch), made, as an fd: where the fallback is noted. */
static int cache_dir(struct hutch_err *err)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	_cleanup_free_ char *dir = xdg && xdg[0] == '/' ? hutch_xasprintf("%s/hutch", xdg)
				   : home && home[0] == '/'
					   ? hutch_xasprintf("%s/.cache/hutch", home)
					   : NULL;
	if (!dir)
		return hutch_fail(err, ENOENT, "no HOME or XDG_CACHE_HOME");
	return rt_make_dir("cache dir", dir, 0700, true, err);
}

/*
 * $TMPDIR/hutch-UID was taken by someone else: the remembered fallback if it is still ours,
 * else a new one (mkdtemp: a name nobody can make first), remembered. Without a place to
 * remember it, a new one each time, said once: state then lasts one invocation.
 */
static char *fallback_dir(const char *tmp, const char *taken)
{
	struct hutch_err err = { 0 };
	_cleanup_close_ int cache = cache_dir(&err);
	_cleanup_free_ char *noted = NULL;
	size_t len = 0;
	if (cache >= 0 && hutch_read_file_at(cache, "run-dir", PATH_MAX, &noted, &len, &err) >= 0 &&
	    len && noted[len - 1] == '\n') {
		noted[len - 1] = '\0';
		if (noted[0] == '/' && private_dir(noted))
			return steal_ptr(noted);
	}
	char *dir = hutch_xasprintf("%s/hutch-%u.XXXXXX", tmp, (unsigned)geteuid());
	if (!mkdtemp(dir))
		return dir; /* the error comes from making the state dir */
	_cleanup_free_ char *line = hutch_xasprintf("%s\n", dir);
	if (cache < 0 ||
	    hutch_write_atomic_at(cache, "run-dir", line, strlen(line), 0600, &err) < 0)
		hutch_warn("%s is not a directory of uid %u's alone: state goes to %s, which the "
			   "next invocation will not find (%s; set XDG_RUNTIME_DIR or give --root)",
			   taken, (unsigned)geteuid(), dir, err.msg);
	return dir;
}

/* $TMPDIR/hutch-UID, made now unless it exists: then it must be ours alone. */
static char *tmp_dir(void)
{
	const char *tmp = getenv("TMPDIR");
	tmp = tmp && tmp[0] == '/' ? tmp : "/tmp";
	char *dir = hutch_xasprintf("%s/hutch-%u", tmp, (unsigned)geteuid());
	if (mkdir(dir, 0700) == 0 || private_dir(dir))
		return dir;
	char *other = fallback_dir(tmp, dir);
	hutch_debug("%s is not a directory of uid %u's alone: state in %s", dir,
		    (unsigned)geteuid(), other);
	free(dir);
	return other;
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
	else
		dir = tmp_dir();
	return dir;
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

/* The instance root (--root, else HUTCH_ROOT, else the run dir), set once by main, and the
 * name its errors go by. */
static const char *instance_root, *root_from = "--root";
static bool root_default = true;

int rt_root_resolve(const char *flag, const char **out, struct hutch_err *err)
{
	const char *env = getenv("HUTCH_ROOT");
	root_default = false;
	if (flag && flag[0] && flag[0] != '/') { /* as runc: a --detach'd supervisor moves to / */
		_cleanup_free_ char *cwd = getcwd(NULL, 0);
		*out = cwd ? hutch_xasprintf("%s/%s", cwd, flag) : flag; /* kept for the run */
	} else if (flag)
		*out = flag;
	else if (!env || !*env) /* set but empty: unset, as a shell's VAR= says */
		*out = rt_run_dir(), root_default = true;
	else if (env[0] != '/')
		return hutch_fail(err, EINVAL, "HUTCH_ROOT: expected an absolute path, got %s",
				  env);
	else if (strlen(env) > RT_ROOT_MAX)
		return hutch_fail(err, ENAMETOOLONG, "HUTCH_ROOT: longer than %d characters",
				  RT_ROOT_MAX);
	else
		*out = env, root_from = "HUTCH_ROOT";
	instance_root = *out;
	return 0;
}

const char *rt_root(void)
{
	return instance_root ? instance_root : rt_run_dir();
}

const char *rt_root_flag(void)
{
	return root_from;
}

/* A root given by --root or HUTCH_ROOT, held as the run dir is: made (mkdir -p, 0711 as
 * the OCI state root is: a mapped sandbox root traverses it), never a symlink, and refused
 * unless it is the caller's and nobody else may write it. */
static struct {
	int fd;
	dev_t dev;
	ino_t ino;
} held_root = { .fd = -1 };

int rt_root_open(bool make, struct hutch_err *err)
{
	const char *root = rt_root();
	const char *what = root_from;
	struct stat st;
	if (root_default) /* the run dir's own checks: a rootless caller's is 0700 */
		return open_run_dir(make, err);
	if (held_root.fd >= 0 && fstat(held_root.fd, &st) == 0 && st.st_dev == held_root.dev &&
	    st.st_ino == held_root.ino)
		return held_root.fd;
	if (strlen(root) > RT_ROOT_MAX)
		return hutch_fail(err, ENAMETOOLONG, "%s: longer than %d characters", what,
				  RT_ROOT_MAX);
	int fd = make ? rt_make_dir(what, root, hutch_rootless() ? 0700 : 0711, true, err)
		      : hutch_chase_type(what, root, HUTCH_CHASE_NOFOLLOW, S_IFDIR, NULL, err);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 022)) {
		close(fd);
		return hutch_fail(err, EPERM,
				  "%s %s: not a directory of uid %u's that only it may write", what,
				  root, (unsigned)geteuid());
	}
	held_root.fd = fd, held_root.dev = st.st_dev, held_root.ino = st.st_ino;
	return fd;
}

bool rt_regular(int fd)
{
	struct stat st;
	return fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
}
