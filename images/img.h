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

#endif
