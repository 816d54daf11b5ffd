// SPDX-License-Identifier: Apache-2.0
/*
 * Entering the rootfs: pivot_root(2) with the old root stacked under the new one and
 * detached (no put_old directory needed), or MS_MOVE + chroot for --no-pivot (ramfs roots,
 * where pivot_root is not possible), with the host's procfs and sysfs mounts hidden first.
 */
#include "ns-internal.h"
#include "hutch-sys.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/statfs.h>
#include <sys/syscall.h>

static int do_pivot(struct hutch_err *err)
{
	_cleanup_close_ int oldroot = open("/", O_DIRECTORY | O_RDONLY | O_CLOEXEC);
	if (oldroot < 0)
		return hutch_fail_errno(err, errno, "open /");
	_cleanup_close_ int newroot = open(".", O_DIRECTORY | O_RDONLY | O_CLOEXEC);
	if (newroot < 0)
		return hutch_fail_errno(err, errno, "open rootfs");
	/* pivot_root(".", ".") puts the old root on top of the new one at "/"; it is then
	 * reachable only through oldroot and can be detached from there. */
	if (syscall(SYS_pivot_root, ".", ".") < 0)
		return hutch_fail_errno(err, errno, "pivot_root");
	if (fchdir(oldroot) < 0)
		return hutch_fail_errno(err, errno, "fchdir old root");
	/* Slave first, or the unmount would propagate to the host's mounts. */
	if (hutch_sys->mount(NULL, ".", NULL, MS_SLAVE | MS_REC, NULL) < 0)
		return hutch_fail_errno(err, errno, "make old root rslave");
	if (hutch_sys->umount2(".", MNT_DETACH) < 0)
		return hutch_fail_errno(err, errno, "detach old root");
	if (fchdir(newroot) < 0)
		return hutch_fail_errno(err, errno, "fchdir new root");
	return 0;
}

/* mountinfo's octal escapes (\040 for a space) undone in place. */
static void unescape(char *s)
{
	char *w = s;
	for (char *r = s; *r; r++, w++) {
		if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' &&
		    r[3] >= '0' && r[3] <= '7') {
			*w = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
			r += 3;
		} else {
			*w = *r;
		}
	}
	*w = '\0';
}

static bool under_root(const char *path, const char *rootfs)
{
	size_t n = strlen(rootfs);
	while (n > 1 && rootfs[n - 1] == '/')
		n--;
	return strncmp(path, rootfs, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

/*
 * Without pivot_root the old root stays in the mount namespace, below the chroot. A whole
 * procfs or sysfs there would let a user namespace made inside the container mount a fresh,
 * unmasked one (the kernel allows that while a fully visible one exists: mount_too_revealing),
 * so every one outside the rootfs is detached first, or covered where it cannot be, as runc.
 */
static int hide_kernel_fs(const char *rootfs, struct hutch_err *err)
{
	_cleanup_free_ char *text = NULL;
	TRY(hutch_read_file_at(AT_FDCWD, "/proc/self/mountinfo", 1 << 24, &text, NULL, err));
	/* Deepest first, so that a submount goes before the mount it sits on. */
	char *lines[4096];
	size_t n = 0;
	char *save = NULL;
	for (char *l = strtok_r(text, "\n", &save); l && n < ARRAY_SIZE(lines);
	     l = strtok_r(NULL, "\n", &save))
		lines[n++] = l;
	while (n-- > 0) {
		char root[PATH_MAX], point[PATH_MAX], type[64];
		const char *dash = strstr(lines[n], " - ");
		if (!dash || sscanf(lines[n], "%*s %*s %*s %4095s %4095s", root, point) != 2 ||
		    sscanf(dash + 3, "%63s", type) != 1)
			continue;
		unescape(point);
		if (strcmp(root, "/") || (strcmp(type, "proc") && strcmp(type, "sysfs")) ||
		    under_root(point, rootfs))
			continue;
		if (hutch_sys->umount2(point, MNT_DETACH) == 0 || errno == ENOENT)
			continue;
		if (errno != EINVAL && errno != EPERM)
			return hutch_fail_errno(err, errno, "--no-pivot: detach %s", point);
		/* Locked (inherited into our user namespace), or gone with its parent. */
		struct statfs sf;
		if (statfs(point, &sf) == 0 &&
		    (sf.f_type == PROC_SUPER_MAGIC || sf.f_type == SYSFS_MAGIC) &&
		    hutch_sys->mount("tmpfs", point, "tmpfs", MS_RDONLY, "size=0") < 0)
			return hutch_fail_errno(err, errno, "--no-pivot: cover %s", point);
	}
	return 0;
}

static int do_move(const char *rootfs, struct hutch_err *err)
{
	TRY(hide_kernel_fs(rootfs, err));
	if (hutch_sys->mount(rootfs, "/", NULL, MS_MOVE, NULL) < 0)
		return hutch_fail_errno(err, errno, "move rootfs to /");
	if (chroot(".") < 0)
		return hutch_fail_errno(err, errno, "chroot");
	return 0;
}

int ns_pivot_root(const char *rootfs, bool no_pivot, struct hutch_err *err)
{
	if (chdir(rootfs) < 0)
		return hutch_fail_errno(err, errno, "chdir %s", rootfs);
	int r = no_pivot ? do_move(rootfs, err) : do_pivot(err);
	if (r < 0)
		return r;
	if (chdir("/") < 0)
		return hutch_fail_errno(err, errno, "chdir /");
	return 0;
}

int ns_chroot_root(const char *rootfs, struct hutch_err *err)
{
	if (chdir(rootfs) < 0)
		return hutch_fail_errno(err, errno, "chdir %s", rootfs);
	if (chroot(".") < 0)
		return hutch_fail_errno(err, errno, "chroot");
	if (chdir("/") < 0)
		return hutch_fail_errno(err, errno, "chdir /");
	return 0;
}
