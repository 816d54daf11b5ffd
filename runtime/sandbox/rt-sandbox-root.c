// SPDX-License-Identifier: Apache-2.0
/*
 * A hutch instance's sandbox state: ROOT/.sandbox (ROOT is --root, HUTCH_ROOT or the run
 * dir), holding the locks, the names, the sb-N state dirs, scratch and host runs' records of
 * that root alone. A dot-name: `hutch list` skips it, and no container id may take it. What
 * belongs to a network namespace (rt-sandbox-net.c) and the image store are every root's.
 */
#include "rt-sandbox.h"
#include "hutch-ids.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

const char *rt_sb_path(const char *sub)
{
	static struct {
		const char *root, *sub;
		char *path;
	} cache[16];
	const char *root = rt_root();
	size_t i = 0;
	for (; i < ARRAY_SIZE(cache) && cache[i].path; i++)
		if (cache[i].root == root &&
		    (cache[i].sub == sub || (sub && cache[i].sub && !strcmp(cache[i].sub, sub))))
			return cache[i].path;
	char *path = sub ? hutch_xasprintf("%s/" RT_SANDBOX_DIR "/%s", root, sub)
			 : hutch_xasprintf("%s/" RT_SANDBOX_DIR, root);
	if (i < ARRAY_SIZE(cache)) /* the few fixed names hutch uses: kept for the run */
		cache[i].root = root, cache[i].sub = sub, cache[i].path = path;
	return path;
}

/* ROOT/.sandbox, held as the root is: a process that closed every fd (--detach's
 * supervisor) opens it again. */
static struct {
	int fd;
	dev_t dev;
	ino_t ino;
} held = { .fd = -1 };

static int open_failed(const char *path, int dir, const char *name, int e, struct hutch_err *err)
{
	struct stat st;
	if ((e == ELOOP || e == ENOTDIR) && fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISLNK(st.st_mode))
		return hutch_fail(err, ELOOP, "state dir %s: a symlink", path);
	return hutch_fail_errno(err, e, "state dir %s", path);
}

static int open_sandbox_dir(bool make, struct hutch_err *err)
{
	struct stat st;
	bool rootless = hutch_rootless();
	if (held.fd >= 0 && fstat(held.fd, &st) == 0 && st.st_dev == held.dev &&
	    st.st_ino == held.ino)
		return held.fd;
	int root = rt_root_open(make, err);
	if (root < 0)
		return root;
	rt_roots_register(root); /* one of hutch's own directories for every later sandbox */
	/* 0711: a mapped sandbox root traverses it to its rootfs, in scratch */
	if (make && mkdirat(root, RT_SANDBOX_DIR, rootless ? 0700 : 0711) < 0 && errno != EEXIST)
		return hutch_fail_errno(err, errno, "mkdir %s", rt_sb_path(NULL));
	int fd = openat(root, RT_SANDBOX_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return open_failed(rt_sb_path(NULL), root, RT_SANDBOX_DIR, errno, err);
	if (fstat(fd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & (rootless ? 077 : 022))) {
		close(fd);
		return hutch_fail(
			err, EPERM, "%s: not a directory of uid %u's alone (mode %s); remove it",
			rt_sb_path(NULL), (unsigned)geteuid(), rootless ? "0700" : "0711");
	}
	held.fd = fd, held.dev = st.st_dev, held.ino = st.st_ino;
	return fd;
}

int rt_sb_subdir(const char *sub, bool make, struct hutch_err *err)
{
	int dir = open_sandbox_dir(make, err);
	if (dir < 0)
		return dir;
	if (make && mkdirat(dir, sub, 0700) < 0 && errno != EEXIST)
		return hutch_fail_errno(err, errno, "mkdir %s", rt_sb_path(sub));
	int fd = openat(dir, sub, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return fd >= 0 ? fd : open_failed(rt_sb_path(sub), dir, sub, errno, err);
}

/* ---- runs/PID: which cgroups (hutch-sb-PID) are this root's to sweep ---- */

/* Whether fd is still the file name in dir (a holder unlinks its record before it lets go). */
static bool still_there(int fd, int dir, const char *name)
{
	struct stat a, b;
	return fstat(fd, &a) == 0 && fstatat(dir, name, &b, AT_SYMLINK_NOFOLLOW) == 0 &&
	       a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

static int run_fd = -1;	   /* this run's record, for rt_sb_run_inherit */
static pid_t run_pid = -1; /* the pid it is named for */

/* runs/NAME, made and flocked: -errno (EWOULDBLOCK: held), or the fd. */
static int take_record(int dir, const char *name)
{
	int fd = openat(dir, name, O_RDWR | O_CREAT | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	int r = !rt_regular(fd) ? -EINVAL : flock(fd, LOCK_EX | LOCK_NB) < 0 ? -errno : 0;
	if (r == 0 && !still_there(fd, dir, name))
		r = -EAGAIN; /* its last holder unlinked it as we opened it: again */
	if (r < 0)
		close(fd);
	return r < 0 ? r : fd;
}

int rt_sb_run_take(struct hutch_err *err)
{
	_cleanup_close_ int dir = rt_sb_subdir("runs", true, err);
	if (dir < 0)
		return dir;
	char name[16];
	snprintf(name, sizeof(name), "%d", (int)getpid());
	/* Held: an earlier hutch of our pid (reused) whose teardown helper finishes its run
	 * (within ms): up to 2 s. */
	int fd = take_record(dir, name);
	for (int i = 0; (fd == -EWOULDBLOCK || fd == -EAGAIN) && i < 200; i++) {
		usleep(10000);
		fd = take_record(dir, name);
	}
	if (fd < 0)
		return hutch_fail_errno(err, -fd, "%s/%s", rt_sb_path("runs"), name);
	run_pid = getpid();
	return run_fd = fd;
}

void rt_sb_run_inherit(void)
{
	if (run_fd >= 0)
		fcntl(run_fd, F_SETFD, 0);
}

void rt_sb_run_release(int fd, bool keep)
{
	struct hutch_err e = { 0 };
	char name[16];
	if (fd < 0)
		return;
	if (keep) {
		run_fd = fd == run_fd ? -1 : run_fd;
		close(fd);
		return;
	}
	snprintf(name, sizeof(name), "%d", (int)run_pid); /* a teardown helper's too */
	_cleanup_close_ int dir = rt_sb_subdir("runs", false, &e);
	if (dir >= 0 && still_there(fd, dir, name))
		unlinkat(dir, name, 0);
	close(fd);
	run_fd = fd == run_fd ? -1 : run_fd;
}

/* The record of pid, when its hutch is gone (nobody holds it): an fd holding it, else -1. */
static int dead_record(int dir, const char *name)
{
	int fd = openat(dir, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0 && rt_regular(fd) && flock(fd, LOCK_EX | LOCK_NB) == 0 &&
	    still_there(fd, dir, name))
		return fd;
	if (fd >= 0)
		close(fd);
	return -1;
}

void rt_sb_run_drop_wait(int pid, int ms, int (*again)(void *), void *ctx)
{
	struct hutch_err e = { 0 };
	char name[16];
	snprintf(name, sizeof(name), "%d", pid);
	_cleanup_close_ int dir = rt_sb_subdir("runs", false, &e);
	for (double until = hutch_now_ms() + ms; dir >= 0;) {
		_cleanup_close_ int rec = dead_record(dir, name);
		if (rec >= 0) {
			if (again(ctx) >= 0)
				unlinkat(dir, name, 0);
			return;
		}
		if (faccessat(dir, name, F_OK, AT_SYMLINK_NOFOLLOW) < 0 || hutch_now_ms() >= until)
			return;
		usleep(20000);
	}
}

bool rt_sb_run_ours(int pid)
{
	struct hutch_err e = { 0 };
	struct stat st;
	char name[16];
	snprintf(name, sizeof(name), "%d", pid);
	_cleanup_close_ int dir = rt_sb_subdir("runs", false, &e);
	return dir >= 0 && fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
}

bool rt_sb_runs_other(void)
{
	struct hutch_err e = { 0 };
	char mine[16];
	snprintf(mine, sizeof(mine), "%d", run_pid);
	_cleanup_close_ int dir = rt_sb_subdir("runs", false, &e);
	int fd = dir >= 0 ? openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	_cleanup_(hutch_closedirp) DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;
	if (!d && fd >= 0)
		close(fd);
	if (!d)
		return dir >= 0; /* unreadable: assume there are */
	while ((de = readdir(d)))
		if (de->d_name[0] != '.' && (run_pid <= 0 || strcmp(de->d_name, mine)))
			return true;
	return false;
}

/* Whether keep (NULL-terminated cgroup names) holds hutch-sb-NAME. */
static bool kept(char *const *keep, const char *name)
{
	for (; keep && *keep; keep++)
		if (hutch_str_has_prefix(*keep, "hutch-sb-") && !strcmp(*keep + 9, name))
			return true;
	return false;
}

void rt_sb_runs_prune(int pid, char **(*keep)(void *), void *ctx)
{
	struct hutch_err e = { 0 };
	_cleanup_close_ int dir = rt_sb_subdir("runs", false, &e);
	int fd = dir >= 0 ? openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	_cleanup_(hutch_closedirp) DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;
	char want[16];
	snprintf(want, sizeof(want), "%d", pid);
	if (!d && fd >= 0)
		close(fd);
	/* The dead records are held first and the cgroups listed after: a runtime that held a
	 * record may have made its cgroup after an earlier listing, and once the record is ours
	 * nothing that could make one is left. */
	_cleanup_strv_ char **dead = NULL;
	_cleanup_free_ int *held = NULL;
	size_t n = 0;
	while (d && n < 256 && (de = readdir(d))) { /* fds: the rest is the next sweep's */
		if (de->d_name[0] == '.' || (pid > 0 && strcmp(de->d_name, want)))
			continue;
		int rec = dead_record(dir, de->d_name);
		if (rec < 0)
			continue;
		dead = hutch_xrealloc(dead, (n + 2) * sizeof(*dead));
		held = hutch_xrealloc(held, (n + 1) * sizeof(*held));
		dead[n] = hutch_xstrdup(de->d_name), dead[n + 1] = NULL, held[n++] = rec;
	}
	_cleanup_strv_ char **left = n && keep ? keep(ctx) : NULL;
	for (size_t i = 0; i < n; i++) {
		bool stays = keep && (!left || kept(left, dead[i])); /* !left: nothing is known */
		if (!stays)
			unlinkat(dir, dead[i], 0);
		close(held[i]);
	}
}
