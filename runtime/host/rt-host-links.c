// SPDX-License-Identifier: Apache-2.0
/*
 * Host mode's policy paths and their other names. A path the policy names is resolved when a
 * run starts, and a symlink that an earlier sandbox left inside an rw tree would point it
 * elsewhere: a deny at a decoy while the denied file sits at its old place, an allow at what
 * was never allowed. This finds such a link on the way to a path. And a directory may have
 * other names (a symlink given as an allowed path, another mount of it, another spelling on a
 * case-insensitive file system): a cover is on a name, so each name a tree shows a denied
 * path at gets one. Names are compared by what they are (device and inode), not as text.
 */
#include "rt-host.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_HOPS 40 /* the kernel's own limit: past it the path doesn't resolve at all */

/* Splits the next component off *rest into name: false at the end, or when too long (the
 * path then fails to resolve anyway). */
static bool next_name(char **rest, char name[NAME_MAX + 1])
{
	*rest += strspn(*rest, "/");
	size_t len = strcspn(*rest, "/");
	if (!len || len > NAME_MAX)
		return false;
	memcpy(name, *rest, len);
	name[len] = '\0';
	*rest += len;
	return true;
}

static bool same(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* path's directory, cut in place ("/a/b" -> "/a", "/a" -> "/"); false for "/": none. */
static bool up(char *path)
{
	char *slash = strrchr(path, '/');
	if (!slash || !path[1])
		return false;
	if (slash == path)
		slash[1] = '\0';
	else
		*slash = '\0';
	return true;
}

/* The directory the link lies in, or one above it, is an rw root: by name, or by what it is
 * (a case-insensitive file system takes a name spelt otherwise for the same directory). */
static bool in_rw_tree(const char *link, const struct rt_host_paths *rw)
{
	if (rt_host_under_any(link, rw))
		return true;
	_cleanup_free_ struct stat *roots = hutch_xcalloc(rw->n + 1, sizeof(*roots));
	for (size_t i = 0; i < rw->n; i++)
		if (stat(rw->v[i], &roots[i]) < 0)
			roots[i].st_ino = 0; /* gone: matches nothing */
	_cleanup_free_ char *dir = hutch_xstrdup(link);
	struct stat st;
	while (up(dir))
		for (size_t i = 0; i < rw->n && stat(dir, &st) == 0; i++)
			if (roots[i].st_ino && same(&st, &roots[i]))
				return true;
	return false;
}

/*
 * Walks path as the kernel resolves it (a ".." after a link is the parent of where the link
 * led), by name: this is an audit of what an earlier run left, made before this run's
 * sandbox exists, not the resolution the run uses. A missing component ends it: nothing
 * beyond exists, so no link is on the way.
 */
char *rt_host_planted_link(const char *path, const struct rt_host_paths *rw)
{
	char cur[PATH_MAX] = ""; /* resolved so far: "" is / (the options take absolute paths) */
	_cleanup_free_ char *walk = hutch_xstrdup(path);
	char *rest = walk, name[NAME_MAX + 1];
	unsigned hops = 0;
	while (next_name(&rest, name)) {
		char next[PATH_MAX], target[PATH_MAX];
		struct stat st;
		if (!strcmp(name, "."))
			continue;
		if (!strcmp(name, "..")) {
			*(strrchr(cur, '/') ?: cur) = '\0';
			continue;
		}
		if (snprintf(next, sizeof(next), "%s/%s", cur, name) >= (int)sizeof(next) ||
		    lstat(next, &st) < 0)
			return NULL;
		if (!S_ISLNK(st.st_mode)) {
			memcpy(cur, next, sizeof(cur));
			continue;
		}
		if (in_rw_tree(next, rw))
			return hutch_xstrdup(next);
		ssize_t n = readlink(next, target, sizeof(target) - 1);
		if (n <= 0 || ++hops > MAX_HOPS)
			return NULL;
		target[n] = '\0';
		char *more = hutch_xasprintf("%s/%s", target, rest);
		free(walk);
		walk = rest = more;
		if (target[0] == '/')
			cur[0] = '\0';
	}
	return NULL;
}

/* path without "//", "/." and a trailing "/"; NULL when it has "..", which only the kernel can
 * follow (after a symlink it is not the directory above). */
static char *clean(const char *path)
{
	char *out = hutch_xcalloc(strlen(path) + 2, 1), *w = out;
	for (const char *p = path; *p;) {
		size_t len = strcspn(p += strspn(p, "/"), "/");
		if (len == 2 && !strncmp(p, "..", 2)) {
			free(out);
			return NULL;
		}
		if (len && !(len == 1 && *p == '.')) {
			*w++ = '/';
			memcpy(w, p, len);
			w += len;
		}
		p += len;
	}
	if (w == out)
		*w = '/';
	return out;
}

char *rt_host_given_name(const char *given)
{
	_cleanup_free_ char *real = realpath(given, NULL);
	char *name = real ? clean(given) : NULL;
	if (name && !strcmp(name, real)) {
		free(name);
		return NULL;
	}
	return name;
}

struct named {
	char *cover; /* the name to cover when st is a denied directory */
	struct stat st;
};

static void push_named(struct named **a, size_t *n, size_t *cap, const char *cover,
		       const struct stat *st)
{
	if (*n == *cap)
		*a = hutch_xrealloc(*a, (*cap = *cap * 2 + 16) * sizeof(**a));
	(*a)[(*n)++] = (struct named){ hutch_xstrdup(cover), *st };
}

/*
 * What each tree is, and what lies above it: a directory above a tree's name is covered by that
 * name (another mount of a denied directory, above the tree); a directory above the tree's real
 * path is covered by the tree's name (a symlink given as the tree, into a denied directory).
 */
static struct named *stat_trees(char *const *trees, size_t n, bool above, size_t *count)
{
	struct named *a = NULL;
	size_t cap = 0;
	struct stat st;
	for (size_t i = 0; i < n; i++) {
		_cleanup_free_ char *p = hutch_xstrdup(trees[i]), *real = realpath(trees[i], NULL);
		do
			if (stat(p, &st) == 0) /* a given name's symlink followed: what it shows */
				push_named(&a, count, &cap, p, &st);
		while (above && up(p));
		while (above && real && up(real))
			if (stat(real, &st) == 0)
				push_named(&a, count, &cap, trees[i], &st);
	}
	return a;
}

static void free_named(struct named *a, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(a[i].cover);
	free(a);
}

/* alias, unless a denied path or an alias already covers it (a cover under a cover would be
 * made through it: deny wins there already). */
static void add_alias(struct rt_host_paths *out, char *const *deny, size_t n_deny, char *alias)
{
	if (!rt_host_under_any(alias, &(struct rt_host_paths){ (char **)deny, n_deny }) &&
	    !rt_host_under_any(alias, out))
		hutch_strv_push(&out->v, &out->n, alias);
	free(alias);
}

/* A tree that shows d (is a directory above d, or d, under another name): d at that name. */
static void aliases_in_trees(const char *d, const struct named *trees, size_t n_trees,
			     char *const *deny, size_t n_deny, struct rt_host_paths *out)
{
	_cleanup_free_ char *p = hutch_xstrdup(d);
	struct stat st;
	do {
		if (stat(p, &st) < 0)
			continue;
		size_t len = strcmp(p, "/") ? strlen(p) : 0;
		for (size_t i = 0; i < n_trees; i++)
			if (same(&st, &trees[i].st) && strcmp(trees[i].cover, p))
				add_alias(out, deny, n_deny,
					  hutch_xasprintf("%s%s", trees[i].cover, d + len));
	} while (up(p));
}

void rt_host_deny_aliases(char *const *deny, size_t n_deny, char *const *trees, size_t n_trees,
			  struct rt_host_paths *out)
{
	if (!n_deny)
		return;
	size_t n_roots = 0, n_above = 0;
	struct named *roots = stat_trees(trees, n_trees, false, &n_roots);
	struct named *above = stat_trees(trees, n_trees, true, &n_above);
	for (size_t i = 0; i < n_deny; i++) {
		struct stat st;
		if (stat(deny[i], &st) < 0)
			continue; /* nothing there to show */
		aliases_in_trees(deny[i], roots, n_roots, deny, n_deny, out);
		/* A tree beneath d under another name: what covers it. */
		for (size_t j = 0; j < n_above; j++)
			if (same(&st, &above[j].st))
				add_alias(out, deny, n_deny, hutch_xstrdup(above[j].cover));
	}
	free_named(roots, n_roots);
	free_named(above, n_above);
}
