// SPDX-License-Identifier: Apache-2.0
/*
 * prune: what no name and no live pin reaches goes, blobs and layers alike, the download
 * caches of bases (STORE/cache/<base>) too, and so does everything under STORE/tmp. The store is locked exclusively, so no import or build is
 * running and anything in tmp was left by one that died; a running sandbox holds a pin
 * (img_pin), which keeps its image's layers under its mounts.
 */
#include "img-internal.h"

#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* What an image reaches: its manifest, config and layers. */
static void refs_add_image(struct img_store *s, struct refs *r, const char *digest)
{
	_cleanup_free_ char *manifest = NULL;
	_cleanup_strv_ char **ids = NULL;
	_cleanup_json_ yajl_val m = NULL;
	struct hutch_err e = { 0 };
	size_t n = 0;
	refs_add(r, IMG_HEX(digest));
	if (img_load_image(s, digest, &manifest, NULL, &ids, &n, &e) < 0)
		return;
	if (hutch_json_parse(manifest, "manifest", &m, &e) >= 0) {
		const char *cd = img_json_str(hutch_json_get(m, "config"), "digest");
		if (cd && img_digest_valid(cd))
			refs_add(r, IMG_HEX(cd));
	}
	for (size_t k = 0; k < n; k++)
		refs_add(r, IMG_HEX(ids[k]));
}

/* STORE/pins: a pin whose holder is gone (its flock free) goes; a live one keeps its image,
 * whatever name it ran under, or none left. */
static int collect_pins(struct img_store *s, struct refs *r, size_t *stale, struct hutch_err *err)
{
	int fd = openat(s->dirfd, "pins", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : hutch_fail_errno(err, errno, "prune: pins");
	_cleanup_(hutch_closedirp) DIR *d = fdopendir(fd);
	for (struct dirent *e; d && (e = readdir(d));) {
		if (e->d_name[0] == '.')
			continue;
		_cleanup_close_ int pin =
			openat(dirfd(d), e->d_name, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		struct stat st;
		if (pin < 0 || fstat(pin, &st) < 0 || !S_ISREG(st.st_mode)) {
			unlinkat(dirfd(d), e->d_name, 0);
			continue;
		}
		if (flock(pin, LOCK_EX | LOCK_NB) == 0) { /* nobody holds it */
			unlinkat(dirfd(d), e->d_name, 0);
			(*stale)++;
			continue;
		}
		char buf[IMG_DIGEST_MAX + 2] = "";
		ssize_t n = pread(pin, buf, sizeof(buf) - 1, 0);
		buf[n > 0 ? n : 0] = '\0';
		buf[strcspn(buf, "\n")] = '\0';
		if (img_digest_valid(buf))
			refs_add_image(s, r, buf);
	}
	return 0;
}

/* STORE/locks: a build's lock nobody holds (prune runs alone: no build is between its open
 * and its flock). */
static void drop_free_locks(struct img_store *s)
{
	int fd = openat(s->dirfd, "locks", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	_cleanup_(hutch_closedirp) DIR *d = fdopendir(fd);
	for (struct dirent *e; d && (e = readdir(d));) {
		if (e->d_name[0] == '.')
			continue;
		_cleanup_close_ int l =
			openat(dirfd(d), e->d_name, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (l < 0 || flock(l, LOCK_EX | LOCK_NB) == 0)
			unlinkat(dirfd(d), e->d_name, 0);
	}
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
	size_t stale = 0;
	int rc = collect(s, &r, err);
	if (rc >= 0)
		rc = collect_pins(s, &r, &stale, err);
	if (rc >= 0)
		drop_free_locks(s);
	if (rc >= 0)
		rc = sweep(s, "blobs/sha256", &r, &res->blobs, &res->bytes, err);
	if (rc >= 0)
		rc = sweep(s, "layers", &r, &res->layers, &res->bytes, err);
	if (rc >= 0)
		rc = sweep(s, "tmp", NULL, &res->tmp, &res->bytes, err);
	if (rc >= 0 && faccessat(s->dirfd, "cache", F_OK, AT_SYMLINK_NOFOLLOW) == 0)
		rc = sweep(s, "cache", &r, &res->caches, &res->bytes, err);
	hutch_strv_free(r.v);
	return rc;
}
