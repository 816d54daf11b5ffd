// SPDX-License-Identifier: Apache-2.0
/*
 * The container's /dev: the standard nodes every process expects, the fd links, /dev/ptmx
 * pointing into the container's devpts, and linux.devices. All created relative to a
 * directory fd resolved inside the rootfs. In a user namespace mknod is not allowed, so
 * nodes are bind mounts of the host's node at the same path, as runc does.
 */
#include "ns-internal.h"
#include "hutch-sys.h"

#include <fcntl.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

static const struct ns_device std_devices[] = {
	{ .path = "/dev/null", .type = 'c', .major = 1, .minor = 3, .file_mode = 0666 },
	{ .path = "/dev/zero", .type = 'c', .major = 1, .minor = 5, .file_mode = 0666 },
	{ .path = "/dev/full", .type = 'c', .major = 1, .minor = 7, .file_mode = 0666 },
	{ .path = "/dev/random", .type = 'c', .major = 1, .minor = 8, .file_mode = 0666 },
	{ .path = "/dev/urandom", .type = 'c', .major = 1, .minor = 9, .file_mode = 0666 },
	{ .path = "/dev/tty", .type = 'c', .major = 5, .minor = 0, .file_mode = 0666 },
};

static const struct {
	const char *target, *name;
} dev_links[] = {
	{ "/proc/self/fd", "fd" },
	{ "/proc/self/fd/0", "stdin" },
	{ "/proc/self/fd/1", "stdout" },
	{ "/proc/self/fd/2", "stderr" },
};

/*
 * Bind the host's node at the same path onto an empty file in the rootfs, then make the bind
 * nosuid,noexec, as crun does (runc leaves it a plain MS_BIND). A bind takes the flags of its
 * source's mount, the host's /dev (devtmpfs: not noexec, and on some hosts not nosuid), not
 * those the spec gave the container's /dev. noexec is the one that matters: the kernel then
 * refuses mmap(PROT_EXEC) of the node, so device memory (a linux.devices node that can be
 * mapped) cannot be made executable through a mount of the host's. nosuid keeps the bind no
 * looser than the spec's /dev (nosuid in every default config). A node is never a program.
 */
static int bind_device(int parent, const char *name, const char *path, struct hutch_err *err)
{
	int fd = openat(parent, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0);
	if (fd < 0 && errno != EEXIST)
		return hutch_fail_errno(err, errno, "create %s", path);
	if (fd >= 0)
		close(fd);
	_cleanup_close_ int target = openat(parent, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (target < 0)
		return hutch_fail_errno(err, errno, "open %s", path);
	struct stat st;
	if (fstat(target, &st) < 0)
		return hutch_fail_errno(err, errno, "stat %s", path);
	if (S_ISLNK(st.st_mode) || S_ISDIR(st.st_mode))
		return hutch_fail(err, EEXIST, "%s exists and is not a file", path);
	char p[HUTCH_FD_PATH_MAX];
	if (hutch_sys->mount(path, hutch_fd_path(target, p), NULL, MS_BIND, NULL) < 0)
		return hutch_fail_errno(err, errno, "bind %s from the host", path);
	/* target still names the file beneath: a new open reaches the bind on top of it. */
	_cleanup_close_ int bound = openat(parent, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (bound < 0)
		return hutch_fail_errno(err, errno, "open %s", path);
	int r = ns_remount_bind(hutch_fd_path(bound, p), MS_NOSUID | MS_NOEXEC, 0, err);
	if (r < 0)
		return hutch_err_prefix(err, "%s nosuid,noexec: ", path);
	return 0;
}

static int device_type(char t, mode_t *out)
{
	switch (t) {
	case 'c':
	case 'u':
		*out = S_IFCHR;
		return 0;
	case 'b':
		*out = S_IFBLK;
		return 0;
	case 'p':
		*out = S_IFIFO;
		return 0;
	default:
		return -EINVAL;
	}
}

static int create_device(int rootfd, const struct ns_device *d, bool in_userns,
			 struct hutch_err *err)
{
	char dir[PATH_MAX], name[NAME_MAX + 1];
	mode_t type;
	if (!d->path || d->path[0] != '/')
		return hutch_fail(err, EINVAL, "device path must be absolute");
	if (device_type(d->type, &type) < 0)
		return hutch_fail(err, EINVAL, "device %s: unknown type '%c'", d->path, d->type);
	if (d->major < 0 || d->minor < 0 || d->major > UINT32_MAX || d->minor > UINT32_MAX)
		return hutch_fail(err, EINVAL, "device %s: bad major/minor", d->path);
	int r = ns_split_path(d->path, dir, name, err);
	if (r < 0)
		return r;
	_cleanup_close_ int parent = hutch_mkdir_in_root(rootfd, dir, 0755, err);
	if (parent < 0)
		return parent;
	if (in_userns)
		return bind_device(parent, name, d->path, err);
	mode_t mode = (d->file_mode & 07777) ? (d->file_mode & 07777) : 0666;
	dev_t rdev = type == S_IFIFO ? 0 : makedev((unsigned)d->major, (unsigned)d->minor);
	if (mknodat(parent, name, type | mode, rdev) < 0) {
		if (errno == EEXIST) /* the image or an earlier entry made it: keep it, as runc */
			return 0;
		if (errno == EPERM) /* e.g. a nodev-locked mount: the host's node still works */
			return bind_device(parent, name, d->path, err);
		return hutch_fail_errno(err, errno, "mknod %s", d->path);
	}
	if (fchownat(parent, name, d->uid, d->gid, AT_SYMLINK_NOFOLLOW) < 0)
		return hutch_fail_errno(err, errno, "chown %s", d->path);
	return 0;
}

static int create_links(int rootfd, struct hutch_err *err)
{
	_cleanup_close_ int dev = hutch_mkdir_in_root(rootfd, "/dev", 0755, err);
	if (dev < 0)
		return dev;
	for (size_t i = 0; i < ARRAY_SIZE(dev_links); i++)
		if (symlinkat(dev_links[i].target, dev, dev_links[i].name) < 0 && errno != EEXIST)
			return hutch_fail_errno(err, errno, "symlink /dev/%s", dev_links[i].name);
	if (access("/proc/kcore", F_OK) == 0 && symlinkat("/proc/kcore", dev, "core") < 0 &&
	    errno != EEXIST)
		return hutch_fail_errno(err, errno, "symlink /dev/core");
	/* The container's devpts is mounted newinstance: its ptmx, not the host's, must serve. */
	if (unlinkat(dev, "ptmx", 0) < 0 && errno != ENOENT)
		return hutch_fail_errno(err, errno, "remove /dev/ptmx");
	if (symlinkat("pts/ptmx", dev, "ptmx") < 0)
		return hutch_fail_errno(err, errno, "symlink /dev/ptmx");
	return 0;
}

static int populate(int rootfd, const struct ns_rootfs *cfg, struct hutch_err *err)
{
	int r;
	for (size_t i = 0; i < ARRAY_SIZE(std_devices); i++) {
		r = create_device(rootfd, &std_devices[i], cfg->in_userns, err);
		if (r < 0)
			return r;
	}
	for (size_t i = 0; i < cfg->n_devices; i++) {
		r = create_device(rootfd, &cfg->devices[i], cfg->in_userns, err);
		if (r < 0)
			return r;
	}
	return create_links(rootfd, err);
}

int ns_setup_dev(int rootfd, const struct ns_rootfs *cfg, struct hutch_err *err)
{
	/* Node modes are the spec's, not filtered through our umask. */
	mode_t old = umask(0);
	int r = populate(rootfd, cfg, err);
	umask(old);
	if (r < 0)
		return hutch_err_prefix(err, "/dev: ");
	return 0;
}
