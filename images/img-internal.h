/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the images/ files share and nothing else sees: the store's on-disk layout, sha256
 * through libcrypto, and the few yajl helpers that reading manifests needs.
 */
#ifndef HUTCH_IMG_INTERNAL_H
#define HUTCH_IMG_INTERNAL_H

#include "img.h"
#include "img-build.h"
#include "hutch-json.h"

#include <openssl/sha.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

/*
 * STORE/lock             flock: shared while importing/reading, exclusive for prune
 * STORE/blobs/sha256/HEX manifests and configs
 * STORE/layers/HEX/root  a layer unpacked (HEX = its diff_id), STORE/layers/HEX/size
 * STORE/layers/HEX/blobs/BLOBHEX  a blob proven to unpack to it (the tar's size)
 * STORE/names/ESCAPED    one file per NAME:TAG holding the manifest digest
 * STORE/tmp/KIND-...     work in progress, each with a held KIND-....lock
 */
struct img_store {
	char *path;
	int dirfd;
	int lockfd;
};

/* img-idshift.c: the ids of a tree written in a user namespace, back to the namespace's. */
int img_unshift_ids(int dirfd, const struct img_idshift *sh, struct hutch_err *err);

#define IMG_BLOB_MAX (4U << 20) /* manifests and configs are small: refuse huge ones */

/* img-limits.c: what one import has taken so far, against its limits (struct img_limits).
 * Every layer of an image is charged to one budget; an image archive's own tar to another. */
struct img_budget {
	uint64_t max_size, max_entries, max_ratio; /* resolved: IMG_NO_LIMIT is none */
	bool half_free;				   /* max_size is half the free space */
	int fsfd;	  /* on the store's filesystem (-1: never looked at) */
	uint64_t reserve; /* bytes kept free there whatever the limits */
	uint64_t bytes, entries, stream, compressed; /* so far */
	uint64_t next_bytes, next_entries;	     /* when the free space is looked at again */
	/* Its messages' words: "unpacked size", "the store's filesystem", and what to do when
	 * that fills ("use a --store on another filesystem"); a bundle's say its own. */
	const char *size_is, *fs_is, *elsewhere;
};
/* lim NULL: the defaults; fsfd -1: no limits at all (tests, a tree outside the store). */
int img_budget_init(struct img_budget *b, const struct img_limits *lim, int fsfd,
		    struct hutch_err *err);
/* Before writing: the bytes so far plus pending (of the file being written) must fit. */
int img_budget_check_bytes(struct img_budget *b, uint64_t pending, struct hutch_err *err);
/* After writing: what a file or directory took on disk. */
void img_budget_charge(struct img_budget *b, uint64_t allocated);
/* n more entries (an entry, or directories made for one). */
int img_budget_add_entries(struct img_budget *b, uint64_t n, struct hutch_err *err);
/* The tar stream against the compressed bytes read (b->stream, b->compressed). */
int img_budget_check_ratio(struct img_budget *b, struct hutch_err *err);

/* sha256 */
struct img_sha {
	SHA256_CTX c;
};
void img_sha_init(struct img_sha *h);
void img_sha_update(struct img_sha *h, const void *p, size_t n);
void img_sha_final(struct img_sha *h, char out[IMG_DIGEST_MAX]); /* "sha256:hex" */
void img_sha_buf(const void *p, size_t n, char out[IMG_DIGEST_MAX]);
/* "sha256:" + 64 lowercase hex. */
bool img_digest_valid(const char *d);
#define IMG_HEX(d) ((d) + 7)

/* yajl: base/'s helpers, and a string member or NULL */
const char *img_json_str(yajl_val obj, const char *key); /* NULL unless a string */

/* store internals (img-store.c) */
int img_blob_put(struct img_store *s, const void *buf, size_t len, char digest[IMG_DIGEST_MAX],
		 struct hutch_err *err);
int img_blob_read(struct img_store *s, const char *digest, char **out, size_t *len,
		  struct hutch_err *err);
/* rm -rf dirfd/name without following symlinks; permissions are widened as it goes
 * (img-rmtree.c: however deep, with at most 64 fds). _counted adds the files' sizes. */
int img_remove_tree_at(int dirfd, const char *name);
int img_remove_tree_counted(int dirfd, const char *name, uint64_t *bytes);
bool img_layer_exists(struct img_store *s, const char *diff_id);
/* A blob (a layer's bytes as a source holds them, compressed or not) proven to unpack to
 * diff_id's layer: STORE/layers/HEX/blobs/BLOBHEX, holding the tar's size. A stored layer is
 * reused for an image only through such a pair, else after its blob is hashed. */
int img_layer_note_blob(struct img_store *s, const char *diff_id, const char *blob,
			uint64_t tar_size, struct hutch_err *err);
bool img_layer_blob_known(struct img_store *s, const char *diff_id, const char *blob,
			  uint64_t *tar_size);
/* img-unpack.c: the digests of a layer's bytes (blob) and of its tar (diff_id), and the tar's
 * size, read through the decompression and written nowhere. */
int img_hash_layer(int fd, struct img_budget *budget, char diff_id[IMG_DIGEST_MAX],
		   char blob[IMG_DIGEST_MAX], uint64_t *tar_size, struct hutch_err *err);
/* Moves STORE/tmp/tmpdir (holding root/) to STORE/layers/HEX; a concurrent import that got
 * there first wins and ours is dropped. */
int img_layer_add(struct img_store *s, const char *tmpdir, const char *diff_id, uint64_t size,
		  struct hutch_err *err);
uint64_t img_layer_size(struct img_store *s, const char *diff_id);
/* Writes manifest + config blobs for an image (config/manifest are JSON text). */
int img_store_image(struct img_store *s, const char *config, const char *manifest,
		    const char *name_tag, char digest[IMG_DIGEST_MAX], struct hutch_err *err);
/* Manifest and config of a manifest digest; diff_ids from the config (NULL-terminated). */
int img_load_image(struct img_store *s, const char *digest, char **manifest, char **config,
		   char ***diff_ids, size_t *n, struct hutch_err *err);

/*
 * Layer entry names (img-unpack.c), exposed for tests/fuzz. img_clean_path: "./a//b/" ->
 * "a/b", "/abs" -> "abs" (neutralised), any ".." refused. img_whiteout_kind: what a cleaned
 * name's last component says, with *hidden the name a ".wh.NAME" hides.
 */
int img_clean_path(const char *in, char *out, size_t cap, struct hutch_err *err);
enum img_whiteout { IMG_WH_NONE, IMG_WH_OPAQUE, IMG_WH_AUFS, IMG_WH_HIDE, IMG_WH_INVALID };
enum img_whiteout img_whiteout_kind(const char *base, const char **hidden);

/* A manifest (JSON text) for config + layers of the given descriptors. */
struct img_desc {
	const char *media_type;
	char digest[IMG_DIGEST_MAX];
	uint64_t size;
};
char *img_manifest_json(const struct img_desc *config, const struct img_desc *layers, size_t n);

/* Mounts the image at target: an overlay of its layers with upper/work when given (they must
 * be on one filesystem), else read-only (one layer: a read-only bind mount). view: NULL, or
 * where a copy of the store's tree is mounted (an idmapped one), through which the layers
 * are then taken. */
int img_mount_rootfs(struct img_store *s, const char *ref, const char *target, const char *upper,
		     const char *work, const char *view, struct hutch_err *err);

#endif
