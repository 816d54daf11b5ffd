// SPDX-License-Identifier: Apache-2.0
/*
 * Finishing the rootfs after pivot_root: masked paths (an empty read-only tmpfs or the
 * verified /dev/null bound over them), read-only paths, the read-only root and the final
 * root propagation. Runs with / being the container's root, so paths are plain paths, but
 * mounts still go through /proc/self/fd/N of what we opened and checked.
 */
#include "ns-internal.h"
#include "hutch-sys.h"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

/* The /dev/null we bind over masked files: it must really be the null device, or a crafted
 * rootfs could make "masking" expose something (CVE-2025-31133). */
static int open_dev_null(struct hutch_err *err)
{
	_cleanup_close_ int fd = open("/dev/null", O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return hutch_fail_errno(err, errno, "open /dev/null");
	struct stat st;
	if (fstat(fd, &st) < 0)
		return hutch_fail_errno(err, errno, "stat /dev/null");
	if (!S_ISCHR(st.st_mode) || st.st_rdev != makedev(1, 3))
		return hutch_fail(err, EINVAL, "/dev/null is not the null device");
	return steal_fd(fd);
}

static int mask_one(const char *path, int nullfd, struct hutch_err *err)
{
	_cleanup_close_ int fd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT)
		return 0; /* nothing to hide */
	if (fd < 0)
		return hutch_fail_errno(err, errno, "open %s", path);
	struct stat st;
	if (fstat(fd, &st) < 0)
		return hutch_fail_errno(err, errno, "stat %s", path);
	if (S_ISLNK(st.st_mode))
		return hutch_fail(err, ELOOP, "masked path %s is a symlink", path);
	char target[HUTCH_FD_PATH_MAX], src[HUTCH_FD_PATH_MAX];
	hutch_fd_path(fd, target);
	if (S_ISDIR(st.st_mode)) {
		if (hutch_sys->mount("tmpfs", target, "tmpfs", MS_RDONLY, NULL) < 0)
			return hutch_fail_errno(err, errno, "mask %s", path);
	} else if (hutch_sys->mount(hutch_fd_path(nullfd, src), target, NULL, MS_BIND, NULL) < 0) {
		return hutch_fail_errno(err, errno, "mask %s", path);
	}
	return 0;
}

int ns_mask_paths(char *const *paths, size_t n, struct hutch_err *err)
{
	if (n == 0)
		return 0;
	int r = ns_check_procfs(-1, "/proc", err);
	if (r < 0)
		return r;
	_cleanup_close_ int nullfd = open_dev_null(err);
	if (nullfd < 0)
		return nullfd;
	for (size_t i = 0; i < n; i++) {
		r = mask_one(paths[i], nullfd, err);
		if (r < 0)
			return r;
	}
	return 0;
}

static int readonly_one(const char *path, struct hutch_err *err)
{
	_cleanup_close_ int fd = open(path, O_PATH | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT)
		return 0;
	if (fd < 0)
		return hutch_fail_errno(err, errno, "open %s", path);
	char p[HUTCH_FD_PATH_MAX];
	if (hutch_sys->mount(hutch_fd_path(fd, p), p, NULL, MS_BIND | MS_REC, NULL) < 0)
		return hutch_fail_errno(err, errno, "bind %s", path);
	/* fd still names the covered file: the remount must act on the new mount on top. */
	_cleanup_close_ int top = open(path, O_PATH | O_CLOEXEC);
	if (top < 0)
		return hutch_fail_errno(err, errno, "open %s", path);
	int r = ns_remount_bind(hutch_fd_path(top, p), MS_RDONLY, 0, err);
	if (r < 0)
		return hutch_err_prefix(err, "%s: ", path);
	return 0;
}

int ns_readonly_paths(char *const *paths, size_t n, struct hutch_err *err)
{
	for (size_t i = 0; i < n; i++) {
		int r = readonly_one(paths[i], err);
		if (r < 0)
			return r;
	}
	return 0;
}

int ns_finish_rootfs(bool readonly, unsigned long propagation, struct hutch_err *err)
{
	if (readonly) {
		int r = ns_remount_bind("/", MS_RDONLY, 0, err);
		if (r < 0)
			return hutch_err_prefix(err, "make / read-only: ");
	}
	if (propagation && hutch_sys->mount(NULL, "/", NULL, propagation, NULL) < 0)
		return hutch_fail_errno(err, errno, "set propagation of /");
	return 0;
}
