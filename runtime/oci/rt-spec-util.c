// SPDX-License-Identifier: Apache-2.0
/*
 * The small checks and lookups that every section's parser uses (paths, env, namespaces):
 * apart from rt-spec.c, which calls the sections, so that no two spec files call each other.
 */
#include "rt-spec-internal.h"

#include <string.h>

int rt_spec_check_abs(const char *path, const char *field, struct hutch_err *err)
{
	if (path[0] != '/')
		return hutch_fail(err, EINVAL, "%s: %s: must be an absolute path", field, path);
	return 0;
}

int rt_spec_check_env(char *const *env, const char *field, struct hutch_err *err)
{
	for (size_t i = 0; env && env[i]; i++)
		if (!strchr(env[i], '='))
			return hutch_fail(err, EINVAL, "%s[%zu]: %s: expected KEY=VALUE", field, i,
					  env[i]);
	return 0;
}

const struct rt_namespace *rt_spec_ns(const struct rt_spec *spec, int clone_flag)
{
	for (size_t i = 0; i < spec->n_namespaces; i++)
		if (spec->namespaces[i].flag == clone_flag)
			return &spec->namespaces[i];
	return NULL;
}

bool rt_spec_new_ns(const struct rt_spec *spec, int clone_flag)
{
	const struct rt_namespace *ns = rt_spec_ns(spec, clone_flag);
	return ns && !ns->path;
}
