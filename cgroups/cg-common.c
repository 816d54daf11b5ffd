// SPDX-License-Identifier: Apache-2.0
/*
 * One absolute cgroup path that lies beneath our own cgroup in every hierarchy. A delegate
 * runtime that reads a relative cgroupsPath against the hierarchy root (crun, runsc) must be
 * given such a path, or it would create cgroups outside our subtree on a v1 host whose
 * hierarchies place us differently.
 */
#include "cg-internal.h"

#include <fcntl.h>
#include <string.h>

static bool is_prefix(const char *p, const char *of)
{
	size_t n = strlen(p);
	return !strcmp(p, "/") || (!strncmp(p, of, n) && (of[n] == '/' || of[n] == '\0'));
}

int cg_own_common(char **out, struct hutch_err *err)
{
	_cleanup_free_ char *pc = NULL, *mi = NULL;
	int r = hutch_read_file_at(AT_FDCWD, "/proc/self/cgroup", 1 << 20, &pc, NULL, err);
	if (r == 0)
		r = hutch_read_file_at(AT_FDCWD, "/proc/self/mountinfo", 1 << 24, &mi, NULL, err);
	if (r < 0)
		return r;
	struct cg_hier *h = NULL;
	size_t n = 0;
	r = cg_parse_hierarchies(pc, mi, cg_is_v2(), &h, &n, err);
	if (r < 0)
		return r;
	const char *longest = "/";
	for (size_t i = 0; i < n; i++)
		if (strlen(h[i].own) > strlen(longest))
			longest = h[i].own;
	for (size_t i = 0; i < n && r == 0; i++)
		if (!is_prefix(h[i].own, longest))
			r = hutch_fail(err, ENOTSUP,
				       "cgroups: our cgroups %s and %s are in different places; no "
				       "path is beneath both",
				       h[i].own, longest);
	if (r == 0)
		*out = hutch_xstrdup(longest);
	cg_hier_free(h, n);
	return r;
}
