// SPDX-License-Identifier: Apache-2.0
/*
 * hutch's own directories: what it keeps and trusts on later runs (the state directory with
 * named sandboxes' specs and locks, the image store, the compiled seccomp filters that every
 * sandbox loads). No sandbox may write there, whoever it runs as: a native or delegated one
 * refuses a workspace or rw bind that holds one or lies in one (rt-sandbox-check.c), and host
 * mode covers them as --deny does (runtime/host/rt-host.c).
 */
#include "rt.h"
#include "hutch-ids.h"
#include "img.h"
#include "sc.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

static void add(char ***v, size_t *n, const char *p)
{
	if (!p || p[0] != '/')
		return;
	for (size_t i = 0; i < *n; i++)
		if (!strcmp((*v)[i], p))
			return;
	*v = hutch_xrealloc(*v, (*n + 2) * sizeof(char *));
	(*v)[(*n)++] = hutch_xstrdup(p);
	(*v)[*n] = NULL;
}

/* A cache in a directory named hutch (/var/cache/hutch/seccomp, ~/.cache/hutch/seccomp):
 * that directory, which is hutch's too. */
static void add_cache(char ***v, size_t *n, const char *dir)
{
	if (!dir)
		return;
	_cleanup_free_ char *parent = hutch_xstrdup(dir);
	char *slash = strrchr(parent, '/');
	if (slash && slash != parent) {
		*slash = '\0';
		const char *name = strrchr(parent, '/') + 1;
		if (!strcmp(name, "hutch")) {
			add(v, n, parent);
			return;
		}
	}
	add(v, n, dir);
}

char **rt_own_dirs(void)
{
	char **v = hutch_xcalloc(1, sizeof(char *));
	size_t n = 0;
	add(&v, &n, rt_run_dir());
	/* The instance's containers (ROOT/ID), locks, names and sandboxes' state; and every
	 * other root of this caller's, whose next sweep trusts the state it finds. */
	add(&v, &n, rt_root());
	_cleanup_strv_ char **roots = rt_roots_registered();
	for (char **r = roots; *r; r++)
		add(&v, &n, *r);
	add(&v, &n, img_store_default(NULL)); /* $HUTCH_STORE or the caller's default */
	if (!hutch_rootless())
		add(&v, &n, IMG_STORE_DEFAULT); /* root's, whatever the environment says */
	add_cache(&v, &n, sc_cache_dir());
	add_cache(&v, &n, sc_cache_default_dir());
	return v;
}

char *rt_path_resolve(const char *path)
{
	_cleanup_free_ char *p = hutch_xstrdup(path);
	for (size_t len = strlen(p); len > 0;) {
		_cleanup_free_ char *real = realpath(p, NULL);
		if (real) /* path + len: what does not exist yet, from its "/" on */
			return hutch_xasprintf("%s%s", strcmp(real, "/") ? real : "", path + len);
		char *slash = strrchr(p, '/');
		if (!slash || slash == p)
			break;
		*slash = '\0';
		len = (size_t)(slash - p);
	}
	return hutch_xstrdup(path);
}

bool rt_path_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	while (n > 1 && dir[n - 1] == '/')
		n--;
	if (n == 1 && dir[0] == '/')
		return path[0] == '/';
	return !strncmp(path, dir, n) && (path[n] == '\0' || path[n] == '/');
}
