// SPDX-License-Identifier: Apache-2.0
/*
 * The parent cgroups a create made (cgroupsPath a/b/c where a and b did not exist): named in
 * the state by their outermost level, so that a later delete, in another process, removes
 * them as well once they are empty, and never a parent that existed before.
 */
#include "cg-internal.h"

#include <string.h>

size_t cg_made_parents(const struct cg *cg, struct cg_kv **out)
{
	size_t n = 0;
	*out = hutch_xcalloc(cg->n ? cg->n : 1, sizeof(**out));
	for (size_t i = 0; i < cg->n; i++) {
		const struct cg_hier *h = &cg->h[i];
		if (h->n_created < 2) /* none, or the container's cgroup alone */
			continue;
		struct cg_hier top = *h;
		top.dir = h->created[0];
		(*out)[n++] = (struct cg_kv){ hutch_xstrdup(h->name), cg_hier_cgroup_path(&top) };
	}
	return n;
}

static void add_created(struct cg_hier *h, char *dir)
{
	h->created = hutch_xrealloc(h->created, (h->n_created + 2) * sizeof(char *));
	h->created[h->n_created++] = dir;
	h->created[h->n_created] = NULL;
}

/* h->created: top, each level beneath it, down to h->dir, outermost first (as cg_make). */
static int adopt(struct cg_hier *h, const char *top, struct hutch_err *err)
{
	_cleanup_free_ char *dir = NULL;
	int r = cg_saved_dir(h, top, &dir, err);
	if (r < 0)
		return r;
	size_t len = strlen(dir);
	if (strncmp(h->dir, dir, len) != 0 || h->dir[len] != '/')
		return hutch_fail(err, EINVAL, "saved parent cgroup %s is not above %s", dir,
				  h->dir);
	hutch_strv_free(h->created);
	h->created = NULL;
	h->n_created = 0;
	for (const char *p = h->dir + len; p; p = strchr(p + 1, '/'))
		add_created(h, hutch_xasprintf("%.*s", (int)(p - h->dir), h->dir));
	add_created(h, hutch_xstrdup(h->dir));
	return 0;
}

int cg_adopt_parents(struct cg *cg, const struct cg_kv *tops, size_t n, struct hutch_err *err)
{
	for (size_t k = 0; k < n; k++)
		for (size_t i = 0; i < cg->n; i++) {
			if (strcmp(tops[k].key, cg->h[i].name) != 0)
				continue;
			int r = adopt(&cg->h[i], tops[k].value, err);
			if (r < 0)
				return r;
		}
	return 0;
}
