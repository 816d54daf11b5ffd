/* SPDX-License-Identifier: Apache-2.0 */
/*
 * images/: where a container's root filesystem comes from: an OCI bundle's root.path, or an
 * image that hutch imports, stores, builds and mounts itself. The store, its names and
 * import are here; builds are in img-build.h, the root filesystems in img-rootfs.h.
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
/* Opens (create: makes) the store and takes its lock: shared, or exclusive for prune, which
 * waits up to 10 s for the imports, builds and sandbox starts that hold it shared. */
int img_store_open(const char *path, bool create, bool exclusive, struct img_store **out,
		   struct hutch_err *err);
void img_store_free(struct img_store *s);
/* Pins an image (its manifest digest) for as long as the returned fd stays open, in
 * STORE/pins (*path, malloc'd), flock'ed: prune keeps what a live pin references and removes
 * a pin whose holder is gone. Made under the store's lock (img_store_open), which may then go (the
 * store freed): a running sandbox holds its pin, not the store. */
int img_pin(struct img_store *s, const char *digest, char **path, struct hutch_err *err);
/* The holder's end of a pin: unlinked, then closed (prune removes those of the dead). */
void img_unpin(int fd, char *path);
/* An exclusive lock of the store's for key (a build's NAME:TAG: identical builds run one at
 * a time, so the second finds the first's image), in STORE/locks. Returns its fd; without
 * wait, -EWOULDBLOCK (no error set) when another holds it. */
int img_lock_key(struct img_store *s, const char *key, bool wait, struct hutch_err *err);
/* STORE/cache/<base's hex>/, a build's download cache for packages on that base (digest),
 * kept between builds and removed by prune once no name reaches the base. Made owned by
 * uid:gid (the build's root in its user namespace), mode 0755; one whose owner is another is
 * emptied first (the ids changed: its files would be unwritable). *path: malloc'd. */
int img_cache_dir(struct img_store *s, const char *base, uid_t uid, gid_t gid, char **path,
		  struct hutch_err *err);
void img_store_freep(struct img_store **s);
const char *img_store_path(const struct img_store *s);

/* "name[:tag]" -> name, tag (NULL when absent). Validates both. Pure. */
int img_parse_ref(const char *ref, char **name, char **tag, struct hutch_err *err);
/* Names as Docker reads them (distribution/reference): a first component holding '.' or ':',
 * or "localhost", is a registry; any other name is docker.io's, where a one-component name
 * is library/'s. img_full_name("busybox") is "docker.io/library/busybox"; img_short_name
 * leaves docker.io/ and library/ off again, as docker shows names. NAME without a tag;
 * malloc'd. Pure. */
char *img_full_name(const char *name);
char *img_short_name(const char *name);
/* NAME:TAG as `image ls` shows it: the short name and the tag. Pure. */
char *img_display_name(const char *name_tag);
/* Whether a shell pattern matches a stored NAME:TAG by its short or its full name; a pattern
 * without a tag (no ':' after its last '/') matches the name, whatever the tag. Pure. */
bool img_name_matches(const char *pattern, const char *name_tag);
/* A reference to NAME[:TAG] (no tag: latest), NAME@DIGEST, or a manifest digest "sha256:HEX".
 * NAME is looked up by its full name first, then as given and by its short name (names
 * stored before they were stored full). name_tag (may be NULL) gets the stored NAME:TAG,
 * NULL by digest; digest gets the manifest digest. */
int img_resolve(struct img_store *s, const char *ref, char **name_tag, char digest[IMG_DIGEST_MAX],
		struct hutch_err *err);
/* Points NAME:TAG (no tag: latest), stored by its full name, at digest; the same name stored
 * the older way goes. */
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
	size_t blobs, layers, tmp, caches;
	uint64_t bytes;
};
/* Drops blobs and layers no name references, the download caches of bases no name
 * references, and what interrupted imports left behind.
 * Needs the store opened exclusive. */
int img_prune(struct img_store *s, struct img_prune_result *res, struct hutch_err *err);

/* A work directory STORE/tmp/KIND-... (*name is relative to the store), left alone by prune
 * while lockfd is open; img_tmp_remove deletes it and closes lockfd. */
int img_tmp_create(struct img_store *s, const char *kind, char **name, int *lockfd,
		   struct hutch_err *err);
void img_tmp_remove(struct img_store *s, const char *name, int lockfd);
/* Copies in to out (a new file in the store's tmp) to its end, within lim (--max-size, and
 * the store's reserve of free space, looked at more often as it nears): a pipe may never
 * end. Blocks of zeros stay holes. what names the source in errors. */
int img_tmp_fill(struct img_store *s, int in, int out, const struct img_limits *lim,
		 const char *what, struct hutch_err *err);

/* ---- import (img-import.c, img-unpack.c, img-limits.c) ---- */

/* What one import may unpack: image content is hostile, and a small compressed layer can
 * expand without bound. 0 takes the default, IMG_NO_LIMIT lifts the limit. Whatever they
 * are, an import stops before the store's filesystem falls below a reserve of free space
 * (IMG_RESERVE_MAX or 5% of it, whichever is smaller). */
#define IMG_NO_LIMIT UINT64_MAX
#define IMG_MAX_SIZE_CAP (64ULL << 30)	 /* and half the free space at the start */
#define IMG_MAX_ENTRIES_DEFAULT 2000000u /* entries (and directories made) per image */
#define IMG_MAX_RATIO_DEFAULT 100u	 /* uncompressed tar / compressed bytes... */
#define IMG_RATIO_FROM (1ULL << 30)	 /* ...once the tar stream is past this */
#define IMG_RESERVE_MAX (1ULL << 30)
struct img_limits {
	uint64_t max_size;    /* bytes allocated on disk by the new layers (holes are free) */
	uint64_t max_entries; /* entries of the new layers */
	uint64_t max_ratio;   /* tar stream bytes per compressed byte, past IMG_RATIO_FROM */
};
/* Fails (ENOSPC) when the store's filesystem has less free than the reserve. */
int img_store_check_room(struct img_store *s, struct hutch_err *err);

struct img_import_result {
	char digest[IMG_DIGEST_MAX];
	char *name; /* NAME:TAG it was stored under */
	size_t n_layers, n_new_layers;
	uint64_t bytes;		/* unpacked bytes written */
	size_t skipped_devices; /* device nodes not created (never are) */
	const char *kind;	/* "oci", "docker-archive", "rootfs" */
};
/* A platform in OCI terms: os/architecture[/variant] ("linux/arm64/v8"). */
struct img_platform {
	char os[32], arch[32], variant[16];
};
/* "OS/ARCH[/VARIANT]", lowercase letters, digits and _ each. Pure. */
int img_parse_platform(const char *text, struct img_platform *out, struct hutch_err *err);
/* This host's: linux, the architecture, and the variant for arm ("v8" on arm64). */
void img_host_platform(struct img_platform *out);
/* "os/arch[/variant]" into buf. */
const char *img_platform_str(const struct img_platform *p, char buf[96]);
/* Whether an image of platform have runs as want: os (none: linux) and architecture equal,
 * and the variant, when both name one. Pure. */
bool img_platform_matches(const struct img_platform *want, const struct img_platform *have);

/* An OCI image layout (dir or tar), a docker-archive tar, or a plain rootfs tar. name may be
 * NULL (the archive's own tag, else the file name), lim too (the defaults), platform too
 * (the host's): an index's manifest for that platform is taken (by the descriptor's platform,
 * else by the manifest's config), and another platform's image is refused. No new layer
 * reaches STORE/layers before every layer of the image is unpacked within the limits. */
int img_import(struct img_store *s, const char *src, const char *name, const struct img_limits *lim,
	       const struct img_platform *platform, struct img_import_result *res,
	       struct hutch_err *err);
void img_import_result_clear(struct img_import_result *r);
/* What an import reports as it goes, for `--progress`: fn(arg, layer, layers, bytes, done)
 * as the bytes of layer (1-based) of layers are unpacked, and once more when it is done
 * (done true; bytes then that layer's, digest its diff_id). Set for this process's imports. */
struct img_progress {
	void (*fn)(void *arg, size_t layer, size_t layers, uint64_t bytes, bool done,
		   const char *digest);
	void *arg;
};
void img_import_set_progress(const struct img_progress *p);

/* The host's architecture in OCI terms ("amd64", "arm64", ...). */
const char *img_host_arch(void);

struct img_unpack_stats {
	/* Called after each block of a file's data is written, with bytes so far (may be
	 * NULL): an import's progress. */
	void (*tick)(void *arg, uint64_t bytes);
	void *tick_arg;
	uint64_t bytes, entries;
	uint64_t allocated; /* bytes of disk the files and directories took (holes are free) */
	uint64_t tar_size;  /* bytes of the uncompressed stream */
	size_t skipped_devices;
};
struct img_budget;
/* A layer: OCI whiteouts become overlayfs ones. An image archive's own tar (OCI layout,
 * docker-archive): no whiteouts, and only files, directories and links, since its entries
 * are then opened and read as blobs (a FIFO would block, a device node would be the host's). */
enum img_unpack_kind { IMG_UNPACK_LAYER, IMG_UNPACK_ARCHIVE };
/* Extracts a tar (any compression) read from fd into rootfd, never outside it. diff_id (may
 * be NULL) gets the sha256 of the uncompressed stream, blob (may be NULL) that of the bytes
 * read. budget (may be NULL: no limits) is charged, and the layer stops at the first limit
 * it passes. */
int img_unpack_layer(int fd, int rootfd, enum img_unpack_kind kind, struct img_budget *budget,
		     char diff_id[IMG_DIGEST_MAX], char blob[IMG_DIGEST_MAX],
		     struct img_unpack_stats *st, struct hutch_err *err);

#endif
