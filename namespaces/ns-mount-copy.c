// SPDX-License-Identifier: Apache-2.0
/*
 * tmpcopyup: the image's directory content copied into the tmpfs mounted over it (dirs,
 * files, symlinks, nodes; mode and owner), never following a symlink, bounded in depth.
 */
#include "ns-internal.h"

#include <dirent.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#define COPY_MAX_DEPTH 128

static int copy_data(int sfd, int dfd, const char *name, mode_t mode, struct hutch_err *err)
{
	_cleanup_close_ int in = openat(sfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (in < 0)
		return hutch_fail_errno(err, errno, "open %s", name);
	_cleanup_close_ int out =
		openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	if (out < 0)
		return hutch_fail_errno(err, errno, "create %s", name);
	char buf[16384];
	for (;;) {
		ssize_t n = hutch_read_all(in, buf, sizeof(buf));
		if (n < 0)
			return hutch_fail_errno(err, (int)n, "read %s", name);
		if (n == 0)
			return 0;
		int r = hutch_write_all(out, buf, (size_t)n);
		if (r < 0)
			return hutch_fail_errno(err, r, "write %s", name);
	}
}

static int copy_entry(int sfd, int dfd, const char *name, int depth, struct hutch_err *err)
{
	struct stat st;
	int r = 0;
	if (fstatat(sfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return hutch_fail_errno(err, errno, "stat %s", name);
	if (S_ISDIR(st.st_mode)) {
		if (mkdirat(dfd, name, 0700) < 0 && errno != EEXIST)
			return hutch_fail_errno(err, errno, "mkdir %s", name);
		_cleanup_close_ int s =
			openat(sfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		_cleanup_close_ int d =
			openat(dfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (s < 0 || d < 0)
			return hutch_fail_errno(err, errno, "open %s", name);
		r = ns_copy_tree(s, d, depth + 1, err);
	} else if (S_ISREG(st.st_mode)) {
		r = copy_data(sfd, dfd, name, 0600, err);
	} else if (S_ISLNK(st.st_mode)) {
		char target[PATH_MAX];
		ssize_t n = readlinkat(sfd, name, target, sizeof(target) - 1);
		if (n < 0)
			return hutch_fail_errno(err, errno, "readlink %s", name);
		target[n] = '\0';
		if (symlinkat(target, dfd, name) < 0)
			return hutch_fail_errno(err, errno, "symlink %s", name);
	} else if (mknodat(dfd, name, st.st_mode & ~07777, st.st_rdev) < 0) {
		return hutch_fail_errno(err, errno, "mknod %s", name);
	}
	if (r < 0)
		return r;
	if (fchownat(dfd, name, st.st_uid, st.st_gid, AT_SYMLINK_NOFOLLOW) < 0)
		return hutch_fail_errno(err, errno, "chown %s", name);
	/* After chown, which clears setuid bits. */
	if (!S_ISLNK(st.st_mode) && fchmodat(dfd, name, st.st_mode & 07777, 0) < 0)
		return hutch_fail_errno(err, errno, "chmod %s", name);
	return 0;
}

int ns_copy_tree(int sfd, int dfd, int depth, struct hutch_err *err)
{
	if (depth > COPY_MAX_DEPTH)
		return hutch_fail(err, ELOOP, "tmpcopyup: directories nested too deep");
	int dup = fcntl(sfd, F_DUPFD_CLOEXEC, 3);
	if (dup < 0)
		return hutch_fail_errno(err, errno, "dup");
	DIR *d = fdopendir(dup);
	if (!d) {
		close(dup);
		return hutch_fail_errno(err, errno, "opendir");
	}
	int r = 0;
	struct dirent *e;
	while (r >= 0 && (e = readdir(d)))
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			r = copy_entry(sfd, dfd, e->d_name, depth, err);
	closedir(d);
	return r;
}
