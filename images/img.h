/* SPDX-License-Identifier: Apache-2.0 */
/*
 * images/: where a container's root filesystem comes from: an OCI bundle's root.path, or an
 * image that hutch imports, stores, builds and mounts itself. The store and its names,
 * import and builds are here; the root filesystems in img-rootfs.h.
 */
#ifndef HUTCH_IMG_H
#define HUTCH_IMG_H

#include "hutch-base.h"
#include "img-rootfs.h"

/* ---- the image store (img-store.c): blobs by sha256, layers unpacked once by diff_id,
 * names NAME:TAG -> manifest digest. Writes are atomic (temp, then rename). ---- */

#define IMG_STORE_DEFAULT "/var/lib/hutch"
#define IMG_DIGEST_MAX 72 /* "sha256:" + 64 hex + NUL */

struct img_store;
/* --store, else $HUTCH_STORE, else IMG_STORE_DEFAULT (a rootless caller's: $XDG_DATA_HOME/hutch,
 * else ~/.local/share/hutch). */
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

/* ---- builds (img-commit.c): runtime/ runs the sandbox, images/ stores its result ---- */

/* A build's inputs; the tag is the sha256 of them (16 hex digits). packages are a set
 * (sorted, de-duplicated), the rest in order; copies and config are lines the caller made
 * (a --copy's tree digest and DST; "Key=value" of the config it sets), stdin_digest NULL
 * when stdin gave nothing. An absent input adds nothing: older tags stay. Pure. */
struct img_inputs {
	const char *base_digest, *stdin_digest;
	char *const *packages, *const *steps, *const *env, *const *copies, *const *config;
	size_t n_packages, n_steps, n_env, n_copies, n_config;
};
void img_inputs_hash(const struct img_inputs *in, char out[17]);
/* sha256 of a host tree (paths, types, modes, contents, link targets; not owners or times);
 * a device, FIFO or socket in it fails. img_copy_in copies it into rootfd at dst (absolute,
 * resolved in rootfd): a directory's contents into dst, a file into dst when dst ends in /
 * or is a directory, else as dst; owned uid:gid, links copied as links. */
int img_tree_digest(const char *src, char out[IMG_DIGEST_MAX], struct hutch_err *err);
int img_copy_in(int rootfd, const char *src, const char *dst, uid_t uid, gid_t gid,
		struct hutch_err *err);
/* Reads fd to its end into out (may be -1) and its sha256 into digest; *n gets the size. */
int img_digest_stream(int fd, int out, char digest[IMG_DIGEST_MAX], uint64_t *n,
		      struct hutch_err *err);
/* A user namespace's ids as the host sees them: shift+N for N in 0..span-1 (span 0: none). */
struct img_idshift {
	uint32_t uid, gid, span;
};
/* The image's own ids (below span) that a write without the namespace's view left in dirfd's
 * tree, to the namespace's: before the namespace writes there again. */
int img_shift_ids(int dirfd, const struct img_idshift *sh, struct hutch_err *err);

/* What a build sets in config.config; NULL keeps the base's. env (K=V) replaces a base entry
 * of its key, else is appended. An entrypoint without a cmd clears the base's Cmd. */
struct img_config_edit {
	char *const *env, *const *entrypoint, *const *cmd; /* NULL-terminated */
	const char *working_dir, *user;
};

struct img_commit {
	const struct img_idshift *ids; /* who wrote upper: their ids are taken back (may be NULL) */
	const char *base;	       /* reference of the base image */
	const char *name_tag;	       /* NAME:TAG to store the result under */
	const char *upper;   /* an overlay upper dir on the store's filesystem: moved, not copied */
	char *const *labels; /* K=V pairs for config.Labels (NULL-terminated, may be NULL) */
	char *const *history;		    /* created_by lines */
	const struct img_config_edit *edit; /* may be NULL */
};
/* Turns an overlay upper directory into a new layer over base and tags the image. digest gets
 * the new manifest digest, layer the layer's diff_id. */
int img_commit_layer(struct img_store *s, const struct img_commit *c, char digest[IMG_DIGEST_MAX],
		     char layer[IMG_DIGEST_MAX], struct hutch_err *err);

#endif
