// SPDX-License-Identifier: Apache-2.0
/*
 * The root filesystem of an OCI bundle: root.path, relative to the bundle when relative,
 * resolved once to an absolute, symlink-free directory so that every later step (mounts,
 * pivot_root, state) works on the same path whatever the cwd is.
 */
#include "img.h"

#include <limits.h>
#include <string.h>
#include <sys/stat.h>

int img_resolve_rootfs(const char *bundle, const char *root_path, char **out, struct hutch_err *err)
{
	_cleanup_free_ char *joined = NULL;
	char real[PATH_MAX];
	struct stat st;

	if (!root_path || !root_path[0])
		return hutch_fail(err, EINVAL, "root.path: required");
	if (root_path[0] == '/' || !bundle)
		joined = hutch_xstrdup(root_path);
	else
		joined = hutch_xasprintf("%s/%s", bundle, root_path);

	if (!realpath(joined, real))
		return hutch_fail_errno(err, errno, "root.path: %s", joined);
	if (stat(real, &st) < 0)
		return hutch_fail_errno(err, errno, "root.path: %s", real);
	if (!S_ISDIR(st.st_mode))
		return hutch_fail_errno(err, ENOTDIR, "root.path: %s", real);
	*out = hutch_xstrdup(real);
	return 0;
}
