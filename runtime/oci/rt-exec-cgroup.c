// SPDX-License-Identifier: Apache-2.0
/*
 * exec --cgroup (runc 1.1's): the sub-cgroups of the container's an exec'd process joins,
 * as "[CONTROLLER[,CONTROLLER...]:]PATH", planned from the container's per-hierarchy cgroup
 * paths without touching the kernel. rt-exec.c opens the result (each must exist).
 */
#include "rt.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

/* PATH made relative and clean; -EINVAL when its ".." climbs out of where it starts. */
static int clean_sub(const char *arg, const char *path, char *out, size_t cap,
		     struct hutch_err *err)
{
	size_t o = 0;
	out[0] = '\0';
	for (const char *p = path; *p;) {
		while (*p == '/')
			p++;
		size_t n = strcspn(p, "/");
		if (n == 2 && p[0] == '.' && p[1] == '.') {
			if (o == 0)
				return hutch_fail(
					err, EINVAL,
					"--cgroup %s: not a sub-cgroup of the container's "
					"cgroup",
					arg);
			while (o > 0 && out[--o] != '/')
				;
			out[o] = '\0';
		} else if (n && !(n == 1 && p[0] == '.')) {
			if (o + n + 2 > cap)
				return hutch_fail(err, ENAMETOOLONG, "--cgroup %s: too long", arg);
			o += (size_t)snprintf(out + o, cap - o, "%s%.*s", o ? "/" : "", (int)n, p);
		}
		p += n;
	}
	return 0;
}

static bool has_controller(const char *hierarchy, const char *ctrl, size_t len)
{
	for (const char *h = hierarchy; *h;) {
		size_t n = strcspn(h, ",");
		if (n == len && !strncmp(h, ctrl, len))
			return true;
		h += n + (h[n] == ',');
	}
	return false;
}

/* Where one --cgroup value puts the process: the sub path into subs[i] of each hierarchy it
 * names (all of them without a controller). */
static int plan_one(const char *arg, const struct cg_kv *paths, size_t n, bool v2, char **subs,
		    struct hutch_err *err)
{
	char sub[PATH_MAX];
	const char *colon = strchr(arg, ':');
	const char *path = colon ? colon + 1 : arg;
	if (colon && strchr(path, ':'))
		return hutch_fail(err, EINVAL, "--cgroup %s: expected [CONTROLLER,...:]PATH", arg);
	if (colon && v2)
		return hutch_fail(err, ENOTSUP,
				  "--cgroup %s: a controller prefix needs cgroup v1 (on v2 every "
				  "controller shares one cgroup)",
				  arg);
	int r = clean_sub(arg, path, sub, sizeof(sub), err);
	if (r < 0)
		return r;
	for (const char *c = arg; colon && c <= colon;) {
		size_t len = strcspn(c, ",:");
		bool found = false;
		if (len == 0)
			return hutch_fail(err, EINVAL, "--cgroup %s: an empty controller", arg);
		for (size_t i = 0; i < n; i++) {
			if (!has_controller(paths[i].key, c, len))
				continue;
			if (subs[i] && strcmp(subs[i], sub))
				return hutch_fail(err, EINVAL,
						  "--cgroup %s: hierarchy %s is given twice", arg,
						  paths[i].key);
			free(subs[i]);
			subs[i] = hutch_xstrdup(sub);
			found = true;
		}
		if (!found)
			return hutch_fail(
				err, EINVAL,
				"--cgroup %s: the container has no cgroup with controller "
				"%.*s",
				arg, (int)len, c);
		c += len + 1;
	}
	for (size_t i = 0; !colon && i < n; i++) {
		free(subs[i]);
		subs[i] = hutch_xstrdup(sub);
	}
	return 0;
}

static void free_subs(char **subs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(subs[i]);
	free(subs);
}

int rt_exec_cgroup_paths(const struct cg_kv *paths, size_t n, bool v2, char *const *args,
			 size_t n_args, struct cg_kv **out, struct hutch_err *err)
{
	char **subs = hutch_xcalloc(n + 1, sizeof(char *));
	int r = n ? 0 : hutch_fail(err, ENOENT, "--cgroup: the container's cgroup is not known");
	for (size_t a = 0; r >= 0 && a < n_args; a++) {
		/* as runc: one PATH for every hierarchy stands alone */
		if (!strchr(args[a], ':') && n_args > 1)
			r = hutch_fail(
				err, EINVAL,
				"--cgroup %s: without CONTROLLER: it must be the only --cgroup",
				args[a]);
		else
			r = plan_one(args[a], paths, n, v2, subs, err);
	}
	if (r < 0) {
		free_subs(subs, n);
		return r;
	}
	*out = hutch_xcalloc(n + 1, sizeof(**out));
	for (size_t i = 0; i < n; i++) {
		bool deeper = subs[i] && *subs[i];
		(*out)[i].key = hutch_xstrdup(paths[i].key);
		(*out)[i].value =
			deeper ? hutch_xasprintf("%s/%s",
						 strcmp(paths[i].value, "/") ? paths[i].value : "",
						 subs[i])
			       : hutch_xstrdup(paths[i].value);
	}
	free_subs(subs, n);
	return 0;
}
