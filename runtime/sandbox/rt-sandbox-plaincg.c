// SPDX-License-Identifier: Apache-2.0
/*
 * The plain directories a delegated runtime makes on a v1 host's /sys/fs/cgroup tmpfs. Where
 * a controller is not mounted but its directory is there (hugetlb, net_cls, net_prio,
 * perf_event on some machines), runsc makes its cgroup path under it all the same, and
 * removes only the leaf. hutch removes what carries the sandbox's own name there, after the
 * run, in the keeper, and in the next sweep after a SIGKILL: empty directories only, by rmdir.
 * The parent path goes after the run and in the keeper, as far as it was missing before; the
 * sweep cannot tell whose it is, and leaves it.
 */
#include "rt-sandbox.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#define CGROUP_ROOT "/sys/fs/cgroup"
#define MAX_PLAIN 32
#define MAX_DEPTH 8

/* The directories right under the cgroup tmpfs that are not mount points: on a pure v2 host
 * (/sys/fs/cgroup is cgroup2) every one is a cgroup, and there are none. */
static size_t plain_dirs(char names[][NAME_MAX + 1], size_t max)
{
	struct statfs sfs;
	struct stat root, st;
	size_t n = 0;
	if (statfs(CGROUP_ROOT, &sfs) < 0 || sfs.f_type != TMPFS_MAGIC ||
	    stat(CGROUP_ROOT, &root) < 0)
		return 0;
	_cleanup_(hutch_closedirp) DIR *d = opendir(CGROUP_ROOT);
	struct dirent *de;
	while (d && n < max && (de = readdir(d))) {
		if (de->d_name[0] == '.' ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISDIR(st.st_mode) || st.st_dev != root.st_dev)
			continue;
		snprintf(names[n++], NAME_MAX + 1, "%s", de->d_name);
	}
	return n;
}

/* rmdir of the empty directories beneath dfd/name, deepest first, then of name itself: a
 * directory that still holds a file stays, and so do its parents. */
static void rmdir_tree(int dfd, const char *name, int depth)
{
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	_cleanup_(hutch_closedirp) DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	struct dirent *de;
	while (depth < MAX_DEPTH && (de = readdir(d)))
		if (de->d_type == DT_DIR && strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			rmdir_tree(dirfd(d), de->d_name, depth + 1);
	unlinkat(dfd, name, AT_REMOVEDIR);
}

void rt_sb_plaincg_remove(const char *cgroup)
{
	char names[MAX_PLAIN][NAME_MAX + 1];
	const char *leaf = strrchr(cgroup, '/');
	if (!leaf || strncmp(leaf + 1, "hutch-sb-", 9) != 0)
		return; /* only what the sandbox's name says is its own */
	size_t n = plain_dirs(names, MAX_PLAIN);
	for (size_t i = 0; i < n; i++) {
		char parent[PATH_MAX];
		int len = snprintf(parent, sizeof(parent), CGROUP_ROOT "/%s%.*s", names[i],
				   (int)(leaf - cgroup), cgroup);
		if (len < 0 || (size_t)len >= sizeof(parent))
			continue;
		_cleanup_close_ int dfd =
			open(parent, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (dfd >= 0)
			rmdir_tree(dfd, leaf + 1, 0);
	}
}

size_t rt_sb_plaincg_missing(const char *cgroup, char ***dirs)
{
	char names[MAX_PLAIN][NAME_MAX + 1];
	const char *leaf = strrchr(cgroup, '/');
	size_t n = 0, np = leaf ? plain_dirs(names, MAX_PLAIN) : 0;
	struct stat st;
	*dirs = NULL;
	for (size_t i = 0; i < np; i++) {
		char path[PATH_MAX];
		int len = snprintf(path, sizeof(path), CGROUP_ROOT "/%s%.*s", names[i],
				   (int)(leaf - cgroup), cgroup);
		if (len < 0 || (size_t)len >= sizeof(path))
			continue;
		char *p = path + strlen(CGROUP_ROOT) + 1 + strlen(names[i]);
		for (int depth = 0; p && *p && depth < MAX_DEPTH; depth++, p = strchr(p + 1, '/')) {
			char *next = strchr(p + 1, '/');
			char saved = next ? *next : '\0';
			if (next)
				*next = '\0';
			if (stat(path, &st) < 0 && errno == ENOENT) {
				*dirs = hutch_xrealloc(*dirs, (n + 1) * sizeof(**dirs));
				(*dirs)[n++] = hutch_xstrdup(path);
			}
			if (next)
				*next = saved;
		}
	}
	return n;
}

/* Deepest first (each controller's list is shallowest first), and only while empty: what
 * someone else put there since keeps its parents. */
void rt_sb_plaincg_remove_parents(char **dirs, size_t n)
{
	for (size_t i = n; i > 0; i--)
		rmdir(dirs[i - 1]);
}

static void add(struct cg_child **v, size_t *n, const char *name, time_t made)
{
	for (size_t i = 0; i < *n; i++)
		if (strcmp((*v)[i].name, name) == 0) {
			if (made < (*v)[i].made)
				(*v)[i].made = made;
			return;
		}
	*v = hutch_xrealloc(*v, (*n + 1) * sizeof(**v));
	(*v)[(*n)++] = (struct cg_child){ .name = hutch_xstrdup(name), .made = made };
}

void rt_sb_plaincg_list(const char *base, struct cg_child **v, size_t *n)
{
	char names[MAX_PLAIN][NAME_MAX + 1];
	size_t np = plain_dirs(names, MAX_PLAIN);
	for (size_t i = 0; i < np; i++) {
		char dir[PATH_MAX];
		int len = snprintf(dir, sizeof(dir), CGROUP_ROOT "/%s%s", names[i],
				   strcmp(base, "/") ? base : "");
		if (len < 0 || (size_t)len >= sizeof(dir))
			continue;
		_cleanup_(hutch_closedirp) DIR *d = opendir(dir);
		struct dirent *de;
		struct stat st;
		while (d && (de = readdir(d)))
			if (strncmp(de->d_name, "hutch-sb-", 9) == 0 &&
			    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			    S_ISDIR(st.st_mode))
				add(v, n, de->d_name, st.st_ctim.tv_sec);
	}
}
