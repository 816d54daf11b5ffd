// SPDX-License-Identifier: Apache-2.0
/*
 * Where hutch keeps its runtime state (containers, sandboxes, locks, names). Host root uses
 * /run/hutch. A rootless caller cannot write there, and must not share it: it gets
 * $XDG_RUNTIME_DIR/hutch, else /run/user/UID/hutch, else $TMPDIR/hutch-UID (as tmux does),
 * made 0700 and refused when someone else owns it.
 */
#include "rt.h"
#include "hutch-ids.h"

#include <errno.h>
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

int rt_run_dir_make(struct hutch_err *err)
{
	const char *dir = rt_run_dir();
	if (!hutch_rootless()) { /* 0711: a mapped sandbox root traverses it to its rootfs */
		if (mkdir(dir, 0711) < 0 && errno != EEXIST)
			return hutch_fail_errno(err, errno, "mkdir %s", dir);
		return 0;
	}
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return hutch_fail_errno(
			err, errno, "mkdir %s (rootless state; set XDG_RUNTIME_DIR or give --root)",
			dir);
	struct stat st;
	if (lstat(dir, &st) < 0)
		return hutch_fail_errno(err, errno, "%s", dir);
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 0077))
		return hutch_fail(
			err, EPERM,
			"%s: not a directory of uid %u's alone (mode 0700); remove it, or "
			"set XDG_RUNTIME_DIR",
			dir, (unsigned)geteuid());
	return 0;
}
