/* SPDX-License-Identifier: Apache-2.0 */
/*
 * images/: where a container's root filesystem comes from. For an OCI bundle that is
 * root.path, checked here and handed to runtime/ as an absolute path.
 */
#ifndef HUTCH_IMG_H
#define HUTCH_IMG_H

#include "hutch-base.h"

/* Resolves root.path (relative to the bundle when relative) to an absolute, symlink-free
 * path of an existing directory. */
int img_resolve_rootfs(const char *bundle, const char *root_path, char **out,
		       struct hutch_err *err);

/* ---- the image store (img-store.c): blobs by sha256, layers unpacked once by diff_id,
 * names NAME:TAG -> manifest digest. Writes are atomic (temp, then rename). ---- */

#define IMG_STORE_DEFAULT "/var/lib/hutch"
#define IMG_DIGEST_MAX 72 /* "sha256:" + 64 hex + NUL */

struct img_store;
/* --store, else $HUTCH_STORE, else IMG_STORE_DEFAULT. */
const char *img_store_default(const char *flag);
/* Opens (create: makes) the store and takes its lock: shared, or exclusive for prune. */
int img_store_open(const char *path, bool create, bool exclusive, struct img_store **out,
		   struct hutch_err *err);
void img_store_free(struct img_store *s);
void img_store_freep(struct img_store **s);
const char *img_store_path(const struct img_store *s);

/* "name[:tag]" -> name, tag (NULL when absent). Validates both. Pure. */
int img_parse_ref(const char *ref, char **name, char **tag, struct hutch_err *err);
/* A reference to NAME:TAG (a name alone: latest when it exists, else the newest tag) or to a
 * manifest digest "sha256:HEX". name_tag may be NULL; digest gets the manifest digest. */
int img_resolve(struct img_store *s, const char *ref, char **name_tag, char digest[IMG_DIGEST_MAX],
		struct hutch_err *err);
int img_tag(struct img_store *s, const char *name_tag, const char *digest, struct hutch_err *err);

struct img_info {
	char *name; /* NAME:TAG, NULL when looked up by digest */
	char digest[IMG_DIGEST_MAX];
	char *created, *arch, *os;
	uint64_t size;	 /* unpacked bytes of all layers */
	char **diff_ids; /* bottom -> top, NULL-terminated */
	size_t n_layers;
	char *config;	   /* the config blob (JSON text) */
	char *manifest;	   /* the manifest blob (JSON text) */
	int64_t tagged_at; /* when the name was last set (seconds) */
};
void img_info_clear(struct img_info *i);
int img_inspect(struct img_store *s, const char *ref, struct img_info *out, struct hutch_err *err);
/* Every name, sorted; *out malloc'd, clear each then free. */
int img_list(struct img_store *s, struct img_info **out, size_t *n, struct hutch_err *err);
int img_remove(struct img_store *s, const char *ref, struct hutch_err *err);

struct img_prune_result {
	size_t blobs, layers, tmp;
	uint64_t bytes;
};
/* Drops blobs and layers no name references, and what interrupted imports left behind.
 * Needs the store opened exclusive. */
int img_prune(struct img_store *s, struct img_prune_result *res, struct hutch_err *err);

/* A work directory STORE/tmp/KIND-... (*name is relative to the store), left alone by prune
 * while lockfd is open; img_tmp_remove deletes it and closes lockfd. */
int img_tmp_create(struct img_store *s, const char *kind, char **name, int *lockfd,
		   struct hutch_err *err);
void img_tmp_remove(struct img_store *s, const char *name, int lockfd);

/* ---- import (img-import.c, img-unpack.c) ---- */

struct img_import_result {
	char digest[IMG_DIGEST_MAX];
	char *name; /* NAME:TAG it was stored under */
	size_t n_layers, n_new_layers;
	uint64_t bytes;		/* unpacked bytes written */
	size_t skipped_devices; /* device nodes not created (not real root) */
	const char *kind;	/* "oci", "docker-archive", "rootfs" */
};
/* An OCI image layout (dir or tar), a docker-archive tar, or a plain rootfs tar. name may be
 * NULL (the archive's own tag, else the file name). */
int img_import(struct img_store *s, const char *src, const char *name,
	       struct img_import_result *res, struct hutch_err *err);
void img_import_result_clear(struct img_import_result *r);

/* The host's architecture in OCI terms ("amd64", "arm64", ...). */
const char *img_host_arch(void);

struct img_unpack_stats {
	uint64_t bytes, entries;
	uint64_t tar_size; /* bytes of the uncompressed stream */
	size_t skipped_devices;
};
/* Extracts a layer tar (any compression) read from fd into rootfd, never outside it; OCI
 * whiteouts become overlayfs whiteouts when whiteouts is set. diff_id (may be NULL) gets the
 * sha256 of the uncompressed stream, blob (may be NULL) that of the bytes read. */
int img_unpack_layer(int fd, int rootfd, bool whiteouts, char diff_id[IMG_DIGEST_MAX],
		     char blob[IMG_DIGEST_MAX], struct img_unpack_stats *st, struct hutch_err *err);

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
 * and for sandboxes where overlayfs is unavailable. skipped_devices (may be NULL) counts the
 * device nodes that could not be made (not real root). Hardlinks become separate copies. */
int img_copy_rootfs(struct img_store *s, const char *ref, int dstfd, size_t *skipped_devices,
		    struct hutch_err *err);

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

/* ---- builds (img-commit.c): runtime/ runs the sandbox, images/ stores its result ---- */

/* The tag for a build's inputs: sha256 over the base digest, the sorted packages, the steps
 * and the env, as 16 hex digits. Pure. */
void img_inputs_hash(const char *base_digest, char *const *packages, size_t n_packages,
		     char *const *steps, size_t n_steps, char *const *env, size_t n_env,
		     char out[17]);
/* A user namespace's ids as the host sees them: shift+N for N in 0..span-1 (span 0: none). */
struct img_idshift {
	uint32_t uid, gid, span;
};

struct img_commit {
	const struct img_idshift *ids; /* who wrote upper: their ids are taken back (may be NULL) */
	const char *base;	       /* reference of the base image */
	const char *name_tag;	       /* NAME:TAG to store the result under */
	const char *upper;   /* an overlay upper dir on the store's filesystem: moved, not copied */
	char *const *labels; /* K=V pairs for config.Labels (NULL-terminated, may be NULL) */
	char *const *history; /* created_by lines */
};
/* Turns an overlay upper directory into a new layer over base and tags the image. digest gets
 * the new manifest digest, layer the layer's diff_id. */
int img_commit_layer(struct img_store *s, const struct img_commit *c, char digest[IMG_DIGEST_MAX],
		     char layer[IMG_DIGEST_MAX], struct hutch_err *err);

#endif
