// SPDX-License-Identifier: Apache-2.0
/*
 * prune: what no name reaches goes, blobs and layers alike, and so does everything under
 * STORE/tmp. The store is locked exclusively, so no import, build or sandbox is running
 * and anything in tmp was left by one that died.
 */
#include "img-internal.h"

#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

struct refs {
	char **v;
	size_t n;
};

static void refs_add(struct refs *r, const char *hex)
{
	r->v = hutch_xrealloc(r->v, (r->n + 2) * sizeof(char *));
	r->v[r->n++] = hutch_xstrdup(hex);
	r->v[r->n] = NULL;
}

static bool refs_has(const struct refs *r, const char *hex)
{
	for (size_t i = 0; i < r->n; i++)
		if (!strcmp(r->v[i], hex))
			return true;
	return false;
}

static int collect(struct img_store *s, struct refs *r, struct hutch_err *err)
{
	struct img_info *list = NULL;
	size_t n = 0;
	/* An image whose blobs cannot be read is left out of the list: its name keeps
	 * nothing alive, which is what prune should do with a broken image anyway. */
	TRY(img_list(s, &list, &n, err));
	for (size_t i = 0; i < n; i++) {
		_cleanup_json_ yajl_val m = NULL;
		struct hutch_err e = { 0 };
		refs_add(r, IMG_HEX(list[i].digest));
		if (hutch_json_parse(list[i].manifest, "manifest", &m, &e) >= 0) {
			const char *cd = img_json_str(hutch_json_get(m, "config"), "digest");
			if (cd && img_digest_valid(cd))
				refs_add(r, IMG_HEX(cd));
		}
		for (size_t k = 0; k < list[i].n_layers; k++)
			refs_add(r, IMG_HEX(list[i].diff_ids[k]));
		img_info_clear(&list[i]);
	}
	free(list);
	return 0;
}

/* Removes the entries of STORE/sub that keep() refuses; counts them in *count. */
static int sweep(struct img_store *s, const char *sub, const struct refs *keep, size_t *count,
		 uint64_t *bytes, struct hutch_err *err)
{
	int fd = openat(s->dirfd, sub, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return hutch_fail_errno(err, errno, "prune: %s", sub);
	_cleanup_(hutch_closedirp) DIR *d = fdopendir(fd);
	for (struct dirent *e; d && (e = readdir(d));) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (keep && refs_has(keep, e->d_name))
			continue;
		int r = img_remove_tree_counted(dirfd(d), e->d_name, bytes);
		if (r < 0)
			return hutch_fail_errno(err, r, "prune: remove %s/%s", sub, e->d_name);
		(*count)++;
	}
	return 0;
}

int img_prune(struct img_store *s, struct img_prune_result *res, struct hutch_err *err)
{
	struct refs r = { 0 };
	memset(res, 0, sizeof(*res));
	int rc = collect(s, &r, err);
	if (rc >= 0)
		rc = sweep(s, "blobs/sha256", &r, &res->blobs, &res->bytes, err);
	if (rc >= 0)
		rc = sweep(s, "layers", &r, &res->layers, &res->bytes, err);
	if (rc >= 0)
		rc = sweep(s, "tmp", NULL, &res->tmp, &res->bytes, err);
	hutch_strv_free(r.v);
	return rc;
}
