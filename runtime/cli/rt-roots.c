// SPDX-License-Identifier: Apache-2.0
/*
 * The roots this caller's hutch has used (--root, HUTCH_ROOT), each a file in the run dir's
 * ".roots" directory: RT_DEFAULT_ROOT/.roots for host root, the rootless caller's own run dir
 * otherwise. A root's state is trusted by its next run (its sweep deletes what a dead
 * sandbox left, named by that state), so every root is one of hutch's own directories, not
 * only the current one: a sandbox of one root given another root (or a directory holding
 * it) as a workspace, rw bind or --allow-rw could plant state there.
 *
 * An entry is named HASH-DEV-INO (the path's FNV-1a hash, the directory's device and inode)
 * and holds the path: a root made anew at the same path is a new entry, so pruning a stale
 * one (its path gone, or another directory now) never removes a live root's.
 */
#include "rt.h"
#include "hutch-path.h"

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ROOTS ".roots" /* a dot-name: no container id (ROOT/ID) takes it, list skips it */

static uint64_t fnv1a(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

/* The registry's directory in the run dir, made when make (-errno when there is none). */
static int roots_dir(bool make)
{
	struct hutch_err e = { 0 };
	const char *run = rt_run_dir();
	if (make && rt_run_dir_make(&e) < 0) /* made, and checked to be the caller's alone */
		return -e.code;
	int fd = open(run, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (make && mkdirat(fd, ROOTS, 0700) < 0 && errno != EEXIST) {
		int r = -errno;
		close(fd);
		return r;
	}
	int dir = openat(fd, ROOTS, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int r = dir < 0 ? -errno : dir;
	close(fd);
	return r;
}

void rt_roots_register(int rootfd)
{
	struct stat st;
	struct hutch_err e = { 0 };
	_cleanup_free_ char *path = hutch_fd_realpath(rootfd);
	if (!path || path[0] != '/' || fstat(rootfd, &st) < 0)
		return;
	char name[80];
	snprintf(name, sizeof(name), "%016" PRIx64 "-%" PRIx64 "-%" PRIx64, fnv1a(path),
		 (uint64_t)st.st_dev, (uint64_t)st.st_ino);
	_cleanup_close_ int dir = roots_dir(true);
	if (dir < 0) {
		hutch_debug("%s: not registered (%s)", path, strerror(-dir));
		return;
	}
	if (faccessat(dir, name, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
		return; /* the usual case: one stat */
	_cleanup_free_ char *line = hutch_xasprintf("%s\n", path);
	if (hutch_write_atomic_at(dir, name, line, strlen(line), 0600, &e) < 0)
		hutch_debug("%s: not registered (%s)", path, e.msg);
}

/* The root an entry names, when it is still that directory; else the entry goes. */
static char *entry_root(int dir, const char *name)
{
	uint64_t hash, dev, ino;
	int end = 0;
	if (sscanf(name, "%" SCNx64 "-%" SCNx64 "-%" SCNx64 "%n", &hash, &dev, &ino, &end) != 3 ||
	    name[end])
		return NULL;
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	struct hutch_err e = { 0 };
	struct stat st;
	if (hutch_read_file_at(dir, name, RT_ROOT_MAX * 8, &text, &len, &e) < 0)
		return NULL;
	if (len < 2 || text[0] != '/' || text[len - 1] != '\n')
		return NULL;
	text[len - 1] = '\0';
	int r = stat(text, &st) < 0 ? -errno : 0;
	bool same = r == 0 && st.st_dev == dev && st.st_ino == ino;
	if (same && S_ISDIR(st.st_mode) && fnv1a(text) == hash)
		return steal_ptr(text);
	if (r == -ENOENT || r == -ENOTDIR || (r == 0 && !same))
		unlinkat(dir, name, 0); /* gone, or made anew (its own entry) */
	return NULL;
}

char **rt_roots_registered(void)
{
	char **v = hutch_xcalloc(1, sizeof(char *));
	size_t n = 0;
	int dir = roots_dir(false);
	DIR *d = dir < 0 ? NULL : fdopendir(dir);
	if (!d) {
		if (dir >= 0)
			close(dir);
		return v;
	}
	struct dirent *de;
	while ((de = readdir(d))) {
		char *root = de->d_name[0] == '.' ? NULL : entry_root(dirfd(d), de->d_name);
		if (!root)
			continue;
		v = hutch_xrealloc(v, (n + 2) * sizeof(char *));
		v[n++] = root;
		v[n] = NULL;
	}
	closedir(d);
	return v;
}
