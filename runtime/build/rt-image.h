/* SPDX-License-Identifier: Apache-2.0 */
/* Images in the runtime: `image` and `bundle` help, --image resolution and mounting, and
 * `image build`'s options and steps (rt-verb-image.c, rt-image-build.c, rt-sandbox*.c). */
#ifndef HUTCH_RT_IMAGE_H
#define HUTCH_RT_IMAGE_H

#include "rt.h"

void rt_image_print_help(int fd);
/* --max-size and --max-entries into a uint64_t of struct img_limits (0: IMG_NO_LIMIT), for
 * import and bundle. */
int rt_image_set_max_size(void *field, const char *v, struct hutch_err *err);
int rt_image_set_max_entries(void *field, const char *v, struct hutch_err *err);

struct img_store;
struct rt_build {
	const char *from, *tag, *network, *store, *timeout, *memory, *progress;
	const char *workdir, *entrypoint, *cmd, *user; /* the new image's config */
	struct rt_strv packages, steps, env, copies;   /* env is K=V, copies SRC:DST */
	bool no_cache;
};
/* The flags of build and status, into a struct rt_build; then the checks of what they
 * gave (argv[first..] are the positionals, of which there must be none). */
extern const struct rt_flags rt_build_flags;
int rt_build_check(int argc, char **argv, int first, const struct rt_build *b,
		   struct hutch_err *err);
/* --entrypoint/--cmd: a JSON array of strings, else a command for /bin/sh -c. Pure. */
int rt_build_parse_argv(const char *flag, const char *value, char ***out, struct hutch_err *err);

/* What the flags resolve to: the base's digest, each --copy's tree digest, the config's
 * argv, stdin (read to its end: a file of the store's, -1 when it gave nothing), the tag. */
struct rt_build_copy {
	char *src, *dst, digest[72];
};
struct rt_build_plan {
	char base[72];
	char *name_tag; /* NAME:<inputs hash>, NAME being --tag's name or the base's */
	struct rt_build_copy *copies;
	size_t n_copies;
	char **entrypoint, **cmd;
	int stdin_fd;
	bool progress; /* --progress: say each phase as it starts */
};
/* keep_stdin: stdin is kept for the steps (build), else only hashed (status). */
int rt_build_target(struct img_store *s, const struct rt_build *b, bool keep_stdin,
		    struct rt_build_plan *p, struct hutch_err *err);
void rt_build_plan_clear(struct rt_build_plan *p);
/* Runs the build (its sandbox, its copies) and stores its result as p->name_tag. */
int rt_build_run(const struct rt_global *g, struct img_store *s, const struct rt_build *b,
		 const struct rt_build_plan *p, char digest[72], struct hutch_err *err);

#endif
