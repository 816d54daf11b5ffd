/* SPDX-License-Identifier: Apache-2.0 */
/* Root filesystems from images: a bundle's root.path, a stored image's layers (mounted, under
 * a throw-away layer, or copied), and what the image says about running it. Included
 * through img.h. */
#ifndef HUTCH_IMG_ROOTFS_H
#define HUTCH_IMG_ROOTFS_H

#include "hutch-base.h"

#include <stdint.h>
#include <sys/types.h>

struct img_store;

/* Resolves root.path (relative to the bundle when relative) to an absolute, symlink-free
 * path of an existing directory. */
int img_resolve_rootfs(const char *bundle, const char *root_path, char **out,
		       struct hutch_err *err);

/* ---- layers and the rootfs (img-layers.c) ---- */

/* The unpacked layer directories of an image, bottom -> top (NULL-terminated). */
int img_layer_dirs(struct img_store *s, const char *ref, char ***dirs, size_t *n,
		   struct hutch_err *err);
/* A sandbox's root: the image (lower, a directory, or ref in store) under a throw-away layer
 * (upper and work, made when missing, on one filesystem), mounted at root. A stored image
 * whose overlay cannot be made (or copy: none wanted) is copied into a tmpfs at root instead
 * when may_copy: then 1 is returned. store_view: an idmapped copy of the store's tree, through
 * which the layers are taken (it cannot be copied). upper_uid: non-zero, the layer's owner. */
struct img_layered {
	const char *lower;
	struct img_store *store;
	const char *ref, *store_view;
	const char *root, *upper, *work;
	uid_t upper_uid;
	gid_t upper_gid;
	bool copy, may_copy;
};
int img_mount_layered(const struct img_layered *l, struct hutch_err *err);

/* ---- the layers as one plain directory (img-copy.c) ---- */

/* Copies the image's layers, bottom to top, into dstfd (an empty directory), applying their
 * whiteouts and opaque directories: the result is what an overlay of them shows. For bundles,
 * and for sandboxes where overlayfs is unavailable. Holes stay holes, and a layer's hard
 * links stay links. Device nodes are never made; skipped_devices (may be NULL) counts them.
 * lim (NULL: none; a bundle's) bounds what is written, on dstfd's filesystem, as an import's
 * limits bound the store (max_ratio does not apply). */
struct img_limits;
int img_copy_rootfs(struct img_store *s, const char *ref, int dstfd, const struct img_limits *lim,
		    size_t *skipped_devices, struct hutch_err *err);

/* rm -rf dirfd/name without following symlinks (a failed bundle's leftovers). */
int img_remove_tree_at(int dirfd, const char *name);

/* ---- what the image says about running it (img-config.c) ---- */

struct img_run_config {
	char **env, **entrypoint, **cmd; /* NULL-terminated, NULL when absent */
	char *working_dir, *user;	 /* NULL when absent or empty */
};
void img_run_config_clear(struct img_run_config *c);
/* The "config" object of an image config blob (JSON text). Pure. */
int img_run_config_parse(const char *config_json, struct img_run_config *out,
			 struct hutch_err *err);
int img_run_config(struct img_store *s, const char *ref, struct img_run_config *out,
		   struct hutch_err *err);
/* An image's User ("uid", "uid:gid", "name", "name:group", ...) as numeric ids; names are
 * looked up in rootfd's /etc/passwd and /etc/group, resolved inside rootfd. A user without a
 * group gets its passwd gid (a number: 0). NULL or "" is 0:0. */
int img_resolve_user(int rootfd, const char *user, uint32_t *uid, uint32_t *gid,
		     struct hutch_err *err);

#endif
