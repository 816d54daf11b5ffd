/* SPDX-License-Identifier: Apache-2.0 */
/* Images in the runtime: `image` and `bundle` help, --image resolution and mounting, and
 * `image build`'s options and steps (rt-verb-image.c, rt-image-build.c, rt-sandbox*.c). */
#ifndef HUTCH_RT_IMAGE_H
#define HUTCH_RT_IMAGE_H

#include "rt.h"

void rt_image_print_help(int fd);

struct img_store;
struct rt_build {
	const char *from, *tag, *network, *store, *timeout, *memory;
	struct rt_strv packages, steps, env; /* env is K=V */
	bool no_cache;
};
/* The flags of build and status, into a struct rt_build; then the checks of what they
 * gave (argv[first..] are the positionals, of which there must be none). */
extern const struct rt_flags rt_build_flags;
int rt_build_check(int argc, char **argv, int first, const struct rt_build *b,
		   struct hutch_err *err);
/* NAME:<inputs hash> for these inputs; base gets the base image's manifest digest. */
int rt_build_target(struct img_store *s, const struct rt_build *b, char **name_tag, char base[72],
		    struct hutch_err *err);
/* Runs the build's sandbox and stores its result as name_tag. */
int rt_build_run(const struct rt_global *g, struct img_store *s, const struct rt_build *b,
		 const char *name_tag, const char *base, char digest[72], struct hutch_err *err);

#endif
