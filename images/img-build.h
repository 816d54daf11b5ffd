/* SPDX-License-Identifier: Apache-2.0 */
/* An image build as images/ sees it (img-commit.c, img-layers.c, img-copyin.c,
 * img-idshift.c): runtime/ runs the sandbox, images/ hashes the build's inputs and stores
 * its result as a new layer. The store it writes to is in img.h. */
#ifndef HUTCH_IMG_BUILD_H
#define HUTCH_IMG_BUILD_H

#include "img.h"

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
