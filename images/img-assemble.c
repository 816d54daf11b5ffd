// SPDX-License-Identifier: Apache-2.0
/*
 * A sandbox's root filesystem: an image under a throw-away layer. The image is a directory
 * or a stored image (its layers); the layer is an overlay upper directory, in the sandbox's
 * scratch tmpfs or (image build) on the store's disk. Where overlayfs is missing, a stored
 * image is copied into a tmpfs of its own instead, which dies with the sandbox's mount
 * namespace as the upper layer would.
 */
#include "img-internal.h"

#include <fcntl.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>

static int make_dir(const char *path, uid_t uid, gid_t gid, struct hutch_err *err)
{
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		return hutch_fail_errno(err, errno, "mkdir %s", path);
	if (uid && chown(path, uid, gid) < 0)
		return hutch_fail_errno(err, errno, "chown %s", path);
	return 0;
}

/* The layers copied into a tmpfs at root, sized for the image plus room to write. */
static int copy_layers(const struct img_layered *l, struct hutch_err *err)
{
	struct img_info i;
	TRY(img_inspect(l->store, l->ref, &i, err));
	uint64_t size = i.size + i.size / 8 + (64ULL << 20); /* + metadata, + writes */
	img_info_clear(&i);
	_cleanup_free_ char *opts =
		hutch_xasprintf("mode=0755,size=%llu", (unsigned long long)size);
	/* nodev, as the overlay (img_mount_rootfs): the sandbox's /dev is its own */
	if (mount("tmpfs", l->root, "tmpfs", MS_NODEV, opts) < 0)
		return hutch_fail_errno(err, errno, "tmpfs for the image copy");
	_cleanup_close_ int fd = open(l->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return hutch_fail_errno(err, errno, "open %s", l->root);
	/* No limits: the tmpfs's size bounds the copy. */
	return img_copy_rootfs(l->store, l->ref, fd, NULL, NULL, err);
}

static int overlay_dir(const struct img_layered *l, struct hutch_err *err)
{
	_cleanup_free_ char *data =
		hutch_xasprintf("lowerdir=%s,upperdir=%s,workdir=%s", l->lower, l->upper, l->work);
	/* nodev, as the store's roots: the sandbox's /dev is its own, and a caller's directory
	 * image may hold a device node of the host */
	if (mount("overlay", l->root, "overlay", MS_NODEV, data) < 0)
		return hutch_fail_errno(err, errno, "overlay over %s", l->lower);
	return 0;
}

int img_mount_layered(const struct img_layered *l, struct hutch_err *err)
{
	TRY(make_dir(l->root, 0, 0, err));
	TRY(make_dir(l->work, 0, 0, err));
	TRY(make_dir(l->upper, l->upper_uid, l->upper_gid, err)); /* the layer's top is root's */
	if (l->lower)
		return overlay_dir(l, err);
	if (l->copy && l->store_view) /* a copy keeps the host's ids, which root inside lacks */
		return hutch_fail(err, ENODEV,
				  "a view of the store as root's inside needs overlayfs");
	if (l->copy && !l->may_copy)
		return hutch_fail(err, ENODEV, "no overlayfs, and this root cannot be a copy");
	int r = l->copy ? -ENODEV
			: img_mount_rootfs(l->store, l->ref, l->root, l->upper, l->work,
					   l->store_view, err);
	/* ENODEV: no overlay filesystem; EINVAL: one that cannot stack these layers. */
	if ((r == -ENODEV || r == -EINVAL) && l->may_copy && !l->store_view) {
		TRY(copy_layers(l, err));
		return 1;
	}
	return r;
}
