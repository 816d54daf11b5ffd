// SPDX-License-Identifier: Apache-2.0
/*
 * A hutch instance's sandbox state: ROOT/.sandbox (ROOT is --root, HUTCH_ROOT or the run
 * dir), holding the locks, the names, the sb-N state dirs, scratch and host runs' records of
 * that root alone. A dot-name: `hutch list` skips it, and no container id may take it. What
 * belongs to a network namespace (rt-sandbox-net.c) and the image store are every root's.
 */
#include "rt-sandbox.h"
#include "hutch-ids.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
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
