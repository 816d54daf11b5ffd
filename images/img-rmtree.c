// SPDX-License-Identifier: Apache-2.0
/*
 * rm -rf for the store's trees: layers, their temp dirs, a failed bundle. A layer can be far
 * deeper than PATH_MAX (its symlinks let one name reach below another's end), so the walk
 * holds a bounded number of fds: a directory below RM_DEPTH is renamed up into the tree's
 * top, and removed from there in a later pass. One fd per level, however deep, made prune
 * fail with EMFILE on every run.
 */
#include "img-internal.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#define RM_DEPTH 32 /* fds (and DIR buffers) a walk holds at most */

struct rm {
	int top;	 /* the tree's top directory: where deep subtrees are moved */
	unsigned moved;	 /* subtrees moved into top, all passes */
	bool again;	 /* this pass moved one: top needs another */
	uint64_t *bytes; /* may be NULL: the files' sizes, counted */
};

/* Renames dfd/name into the top under a free name: a subtree to remove from there. */
static int move_up(struct rm *rm, int dfd, const char *name)
{
	char to[32];
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0) { /* a non-root owner must write its ".." entry to move it */
		(void)!fchmod(fd, 0700);
		close(fd);
	}
	for (;;) {
		snprintf(to, sizeof(to), ".hutch-rm-%u", rm->moved++);
		if (renameat2(dfd, name, rm->top, to, RENAME_NOREPLACE) == 0)
			break;
		if (errno != EEXIST)
			return -errno;
	}
	rm->again = true;
	return 0;
}

static int remove_entries(struct rm *rm, int fd, unsigned depth);

static int remove_dir(struct rm *rm, int dfd, const char *name, unsigned depth)
{
	if (depth >= RM_DEPTH)
		return move_up(rm, dfd, name);
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	int r = remove_entries(rm, fd, depth + 1);
	if (r < 0)
		return r;
	return unlinkat(dfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT ? -errno : 0;
}

static int remove_file(struct rm *rm, int dfd, const char *name)
{
	struct stat st;
	if (rm->bytes && fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
		*rm->bytes += (uint64_t)st.st_size;
	return unlinkat(dfd, name, 0) < 0 && errno != ENOENT ? -errno : 0;
}

/* Empties fd (at depth; the walk's own: closed here), going on past an entry that fails: the
 * first error is returned. One fd per level: the DIR's. */
static int remove_entries(struct rm *rm, int fd, unsigned depth)
{
	fchmod(fd, 0700); /* a 0555 dir from an image would refuse the unlinks below */
	DIR *d = fdopendir(fd);
	if (!d) {
		int e = errno;
		close(fd);
		return -e;
	}
	fd = dirfd(d);
	int r = 0;
	for (struct dirent *e; (e = readdir(d));) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		struct stat st;
		bool dir = e->d_type == DT_DIR;
		if (e->d_type == DT_UNKNOWN)
			dir = fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			      S_ISDIR(st.st_mode);
		int q = dir ? remove_dir(rm, fd, e->d_name, depth) : remove_file(rm, fd, e->d_name);
		if (q < 0 && r == 0)
			r = q;
	}
	closedir(d);
	return r;
}

int img_remove_tree_counted(int at, const char *name, uint64_t *bytes)
{
	int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		if (errno != ENOTDIR && errno != ELOOP)
			return -errno;
		struct rm one = { .top = -1, .bytes = bytes };
		return remove_file(&one, at, name);
	}
	struct rm rm = { .top = fd, .bytes = bytes };
	int r;
	/* A pass that moved a subtree up leaves it for the next; one that moved none emptied
	 * the top, or failed. */
	do {
		rm.again = false;
		int pass = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		r = pass < 0 ? -errno : remove_entries(&rm, pass, 0);
	} while (r >= 0 && rm.again);
	close(fd);
	if (unlinkat(at, name, AT_REMOVEDIR) < 0 && errno != ENOENT && r >= 0)
		r = -errno;
	return r;
}

int img_remove_tree_at(int at, const char *name)
{
	return img_remove_tree_counted(at, name, NULL);
}
