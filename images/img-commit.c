// SPDX-License-Identifier: Apache-2.0
/*
 * A build's result into the store: the sandbox's overlay upper directory becomes a layer as
 * it is (it already holds overlayfs whiteouts), and its diff_id is the sha256 of the OCI tar
 * it stands for, written through libarchive into a hash and nowhere else. The new config is
 * the base's with one more layer, one more history line and the build's labels.
 */
#include "img-internal.h"
#include "hutch-json.h"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>

struct walk {
	struct archive *a;
	struct img_sha h;
	uint64_t tar_size, bytes;
	struct {
		dev_t dev;
		ino_t ino;
		char *path;
	} * links;
	size_t n_links;
	char buf[65536];
};

static la_ssize_t hash_out(struct archive *a, void *arg, const void *buf, size_t n)
{
	struct walk *w = arg;
	(void)a;
	img_sha_update(&w->h, buf, n);
	w->tar_size += n;
	return (la_ssize_t)n;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in a directory, sorted: the same tree always gives the same diff_id. */
static int sorted_names(int dfd, char ***out, size_t *n)
{
	int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	_cleanup_(hutch_closedirp) DIR *d = fdopendir(fd);
	char **v = NULL;
	size_t k = 0;
	for (struct dirent *e; d && (e = readdir(d));) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		v = hutch_xrealloc(v, (k + 2) * sizeof(char *));
		v[k++] = hutch_xstrdup(e->d_name);
		v[k] = NULL;
	}
	if (k)
		qsort(v, k, sizeof(char *), cmp_name);
	*out = v;
	*n = k;
	return 0;
}

/* Drops overlayfs' own bookkeeping (origin, impure, ...): it describes the build's lower
 * layers, not this one. The opaque flag is content and stays. */
static bool opaque_and_clean(int fd)
{
	char fdp[HUTCH_FD_PATH_MAX], names[4096], val[4];
	bool opaque = false;
	hutch_fd_path(fd, fdp);
	ssize_t n = listxattr(fdp, names, sizeof(names));
	for (ssize_t i = 0; i < n; i += (ssize_t)strlen(names + i) + 1) {
		const char *x = names + i;
		if (!hutch_str_has_prefix(x, "trusted.overlay.") &&
		    !hutch_str_has_prefix(x, "user.overlay."))
			continue;
		if (strstr(x, ".overlay.opaque"))
			opaque |= getxattr(fdp, x, val, sizeof(val)) >= 1 && val[0] == 'y';
		else
			removexattr(fdp, x);
	}
	return opaque;
}

static int emit(struct walk *w, const char *path, const struct stat *st, const char *link,
		const char *hardlink, int datafd, struct hutch_err *err)
{
	struct archive_entry *e = archive_entry_new();
	archive_entry_set_pathname(e, path);
	archive_entry_copy_stat(e, st);
	archive_entry_set_atime(e, 0, 0);
	archive_entry_set_ctime(e, 0, 0);
	if (link)
		archive_entry_set_symlink(e, link);
	if (hardlink) {
		archive_entry_set_hardlink(e, hardlink);
		archive_entry_set_size(e, 0);
	}
	if (!S_ISREG(st->st_mode) || hardlink)
		archive_entry_set_size(e, 0);
	int r = archive_write_header(w->a, e);
	archive_entry_free(e);
	if (r != ARCHIVE_OK)
		return hutch_fail(err, EIO, "layer tar %s: %s", path, archive_error_string(w->a));
	for (ssize_t n; datafd >= 0 && !hardlink && (n = read(datafd, w->buf, sizeof(w->buf)));) {
		if (n < 0)
			return hutch_fail_errno(err, errno, "read %s", path);
		if (archive_write_data(w->a, w->buf, (size_t)n) != n)
			return hutch_fail(err, EIO, "layer tar %s: %s", path,
					  archive_error_string(w->a));
		w->bytes += (uint64_t)n;
	}
	return 0;
}

/* A second name of an inode already written is a hardlink to the first. */
static const char *seen(struct walk *w, const struct stat *st, const char *path)
{
	if (st->st_nlink < 2 || S_ISDIR(st->st_mode))
		return NULL;
	for (size_t i = 0; i < w->n_links; i++)
		if (w->links[i].dev == st->st_dev && w->links[i].ino == st->st_ino)
			return w->links[i].path;
	w->links = hutch_xrealloc(w->links, (w->n_links + 1) * sizeof(*w->links));
	w->links[w->n_links].dev = st->st_dev;
	w->links[w->n_links].ino = st->st_ino;
	w->links[w->n_links++].path = hutch_xstrdup(path);
	return NULL;
}

static int walk_dir(struct walk *w, int dfd, const char *rel, struct hutch_err *err);

static int walk_one(struct walk *w, int dfd, const char *name, const char *rel,
		    struct hutch_err *err)
{
	struct stat st;
	_cleanup_free_ char *path =
		rel[0] ? hutch_xasprintf("%s/%s", rel, name) : hutch_xstrdup(name);
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return hutch_fail_errno(err, errno, "stat %s", path);
	if (S_ISCHR(st.st_mode) && st.st_rdev == 0) { /* an overlayfs whiteout */
		_cleanup_free_ char *wh = rel[0] ? hutch_xasprintf("%s/.wh.%s", rel, name)
						 : hutch_xasprintf(".wh.%s", name);
		struct stat z = { .st_mode = S_IFREG | 0644, .st_mtim = st.st_mtim };
		return emit(w, wh, &z, NULL, NULL, -1, err);
	}
	if (S_ISLNK(st.st_mode)) {
		char target[4096];
		ssize_t n = readlinkat(dfd, name, target, sizeof(target) - 1);
		if (n < 0)
			return hutch_fail_errno(err, errno, "readlink %s", path);
		target[n] = '\0';
		return emit(w, path, &st, target, seen(w, &st, path), -1, err);
	}
	if (S_ISSOCK(st.st_mode))
		return 0; /* a socket left by a build step: not content */
	if (!S_ISDIR(st.st_mode)) {
		_cleanup_close_ int fd =
			S_ISREG(st.st_mode) ? openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
					    : -1;
		if (S_ISREG(st.st_mode) && fd < 0)
			return hutch_fail_errno(err, errno, "open %s", path);
		return emit(w, path, &st, NULL, seen(w, &st, path), fd, err);
	}
	_cleanup_close_ int sub =
		openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sub < 0)
		return hutch_fail_errno(err, errno, "open %s", path);
	bool opaque = opaque_and_clean(sub);
	TRY(emit(w, path, &st, NULL, NULL, -1, err));
	if (opaque) {
		_cleanup_free_ char *wh = hutch_xasprintf("%s/.wh..wh..opq", path);
		struct stat z = { .st_mode = S_IFREG | 0644, .st_mtim = st.st_mtim };
		TRY(emit(w, wh, &z, NULL, NULL, -1, err));
	}
	return walk_dir(w, sub, path, err);
}

static int walk_dir(struct walk *w, int dfd, const char *rel, struct hutch_err *err)
{
	_cleanup_strv_ char **names = NULL;
	size_t n = 0;
	int r = sorted_names(dfd, &names, &n);
	if (r < 0)
		return hutch_fail_errno(err, r, "read directory %s", rel[0] ? rel : "/");
	for (size_t i = 0; i < n; i++)
		TRY(walk_one(w, dfd, names[i], rel, err));
	return 0;
}

/* diff_id (and sizes) of the layer a directory stands for. */
static int layer_digest(int dirfd, char diff[IMG_DIGEST_MAX], uint64_t *tar_size, uint64_t *bytes,
			struct hutch_err *err)
{
	struct walk *w = hutch_xcalloc(1, sizeof(*w));
	img_sha_init(&w->h);
	w->a = archive_write_new();
	archive_write_set_format_pax_restricted(w->a);
	/* Names are bytes, not text in hutch's locale (C, which knows no UTF-8): a pax header
	 * carries them as they are (ca-certificates' links have accented names). */
	archive_write_set_format_option(w->a, "pax", "hdrcharset", "BINARY");
	archive_write_set_bytes_in_last_block(w->a, 1);
	int r = archive_write_open(w->a, w, NULL, hash_out, NULL) == ARCHIVE_OK
			? 0
			: hutch_fail(err, EIO, "layer tar: %s", archive_error_string(w->a));
	if (r >= 0)
		r = walk_dir(w, dirfd, "", err);
	if (r >= 0 && archive_write_close(w->a) != ARCHIVE_OK)
		r = hutch_fail(err, EIO, "layer tar: %s", archive_error_string(w->a));
	archive_write_free(w->a);
	img_sha_final(&w->h, diff);
	*tar_size = w->tar_size;
	*bytes = w->bytes;
	for (size_t i = 0; i < w->n_links; i++)
		free(w->links[i].path);
	free(w->links);
	free(w);
	return r;
}

static bool key_is(const char *kv, const char *key, size_t len)
{
	return !strncmp(kv, key, len) && kv[len] == '=';
}

/* Labels extended by K=V pairs. */
static void gen_labels(yajl_gen g, yajl_val old, char *const *labels)
{
	hutch_json_gen_str(g, "Labels");
	yajl_gen_map_open(g);
	for (size_t i = 0; YAJL_IS_OBJECT(old) && i < old->u.object.len; i++) {
		const char *k = old->u.object.keys[i];
		bool replaced = false;
		for (char *const *l = labels; l && *l; l++)
			replaced |= key_is(*l, k, strlen(k));
		if (replaced)
			continue;
		hutch_json_gen_str(g, k);
		hutch_json_gen_value(g, old->u.object.values[i]);
	}
	for (char *const *l = labels; l && *l; l++) {
		const char *eq = strchr(*l, '=');
		if (!eq)
			continue;
		yajl_gen_string(g, (const unsigned char *)*l, (size_t)(eq - *l));
		hutch_json_gen_str(g, eq + 1);
	}
	yajl_gen_map_close(g);
}

static size_t key_len(const char *kv)
{
	const char *eq = strchr(kv, '=');
	return eq ? (size_t)(eq - kv) : strlen(kv);
}

/* The last of env[0..n) that sets kv's key, else -1: a key given twice takes its last value. */
static ssize_t last_of(char *const *env, size_t n, const char *kv)
{
	for (size_t j = n; j-- > 0;)
		if (key_is(env[j], kv, key_len(kv)))
			return (ssize_t)j;
	return -1;
}

/* Env as Docker's ENV sets it: a base entry of the same key takes the new value in place,
 * new keys are appended in order. */
static void gen_env(yajl_gen g, yajl_val old, char *const *env)
{
	size_t n = 0, nb = YAJL_IS_ARRAY(old) ? old->u.array.len : 0;
	while (env[n])
		n++;
	hutch_json_gen_str(g, "Env");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < nb; i++) {
		yajl_val v = old->u.array.values[i];
		ssize_t k = YAJL_IS_STRING(v) ? last_of(env, n, v->u.string) : -1;
		if (k >= 0)
			hutch_json_gen_str(g, env[k]);
		else
			hutch_json_gen_value(g, v);
	}
	for (size_t j = 0; j < n; j++) {
		bool in_base = false;
		for (size_t i = 0; i < nb; i++) {
			yajl_val v = old->u.array.values[i];
			in_base |= YAJL_IS_STRING(v) &&
				   key_is(env[j], v->u.string, key_len(v->u.string));
		}
		if (!in_base && last_of(env, n, env[j]) == (ssize_t)j)
			hutch_json_gen_str(g, env[j]);
	}
	yajl_gen_array_close(g);
}

static void gen_strv(yajl_gen g, const char *key, char *const *v)
{
	hutch_json_gen_str(g, key);
	yajl_gen_array_open(g);
	for (; *v; v++)
		hutch_json_gen_str(g, *v);
	yajl_gen_array_close(g);
}

/* Whether the build replaces config.KEY (Cmd too when only the entrypoint is given). */
static bool edited(const struct img_config_edit *e, const char *k)
{
	if (!strcmp(k, "Labels"))
		return true;
	if (!e)
		return false;
	return (!strcmp(k, "Env") && e->env) || (!strcmp(k, "WorkingDir") && e->working_dir) ||
	       (!strcmp(k, "User") && e->user) || (!strcmp(k, "Entrypoint") && e->entrypoint) ||
	       (!strcmp(k, "Cmd") && (e->cmd || e->entrypoint));
}

/* config.config: the base's, with the build's edits and Labels extended by K=V pairs. */
static void gen_runconfig(yajl_gen g, yajl_val rc, char *const *labels,
			  const struct img_config_edit *e)
{
	yajl_gen_map_open(g);
	for (size_t i = 0; YAJL_IS_OBJECT(rc) && i < rc->u.object.len; i++) {
		if (edited(e, rc->u.object.keys[i]))
			continue;
		hutch_json_gen_str(g, rc->u.object.keys[i]);
		hutch_json_gen_value(g, rc->u.object.values[i]);
	}
	if (e && e->env)
		gen_env(g, hutch_json_get(rc, "Env"), e->env);
	if (e && e->working_dir)
		hutch_json_gen_kv(g, "WorkingDir", e->working_dir);
	if (e && e->user)
		hutch_json_gen_kv(g, "User", e->user);
	if (e && e->entrypoint)
		gen_strv(g, "Entrypoint", e->entrypoint);
	if (e && e->cmd)
		gen_strv(g, "Cmd", e->cmd);
	gen_labels(g, hutch_json_get(rc, "Labels"), labels);
	yajl_gen_map_close(g);
}

static void gen_array_plus(yajl_gen g, yajl_val arr, void (*add)(yajl_gen, const void *),
			   const void *arg)
{
	yajl_gen_array_open(g);
	for (size_t i = 0; YAJL_IS_ARRAY(arr) && i < arr->u.array.len; i++)
		hutch_json_gen_value(g, arr->u.array.values[i]);
	add(g, arg);
	yajl_gen_array_close(g);
}

struct hist {
	const char *created, *by;
};

static void add_hist(yajl_gen g, const void *arg)
{
	const struct hist *h = arg;
	yajl_gen_map_open(g);
	hutch_json_gen_str(g, "created");
	hutch_json_gen_str(g, h->created);
	hutch_json_gen_str(g, "created_by");
	hutch_json_gen_str(g, h->by);
	yajl_gen_map_close(g);
}

static void add_str(yajl_gen g, const void *arg)
{
	hutch_json_gen_str(g, arg);
}

static char *new_config(yajl_val base, const struct img_commit *c, const char *diff)
{
	char created[HUTCH_UTC_MAX];
	struct timespec now = { .tv_sec = time(NULL) };
	hutch_utc_stamp(&now, false, created);
	_cleanup_free_ char *by = NULL;
	size_t len = 0;
	for (char *const *h = c->history; h && *h; h++)
		len += strlen(*h) + 4;
	by = hutch_xcalloc(len + 1, 1);
	for (char *const *h = c->history; h && *h; h++)
		strcat(strcat(by, by[0] ? " && " : ""), *h);
	struct hist hist = { created, by[0] ? by : "hutch image build" };
	_cleanup_gen_ yajl_gen g = yajl_gen_alloc(NULL);
	yajl_gen_map_open(g);
	for (size_t i = 0; i < base->u.object.len; i++) {
		const char *k = base->u.object.keys[i];
		if (!strcmp(k, "created") || !strcmp(k, "rootfs") || !strcmp(k, "history") ||
		    !strcmp(k, "config"))
			continue;
		hutch_json_gen_str(g, k);
		hutch_json_gen_value(g, base->u.object.values[i]);
	}
	hutch_json_gen_str(g, "created");
	hutch_json_gen_str(g, created);
	hutch_json_gen_str(g, "config");
	gen_runconfig(g, hutch_json_get(base, "config"), c->labels, c->edit);
	hutch_json_gen_str(g, "rootfs");
	yajl_gen_map_open(g);
	hutch_json_gen_str(g, "type");
	hutch_json_gen_str(g, "layers");
	hutch_json_gen_str(g, "diff_ids");
	gen_array_plus(g, hutch_json_get(hutch_json_get(base, "rootfs"), "diff_ids"), add_str,
		       diff);
	yajl_gen_map_close(g);
	hutch_json_gen_str(g, "history");
	gen_array_plus(g, hutch_json_get(base, "history"), add_hist, &hist);
	yajl_gen_map_close(g);
	const unsigned char *buf;
	yajl_gen_get_buf(g, &buf, &len);
	return strndup((const char *)buf, len);
}

/* The base manifest's layer descriptors plus the new layer. */
static int new_manifest(yajl_val base, const char *config, const struct img_desc *layer, char **out,
			struct hutch_err *err)
{
	yajl_val layers = hutch_json_get(base, "layers");
	size_t n = YAJL_IS_ARRAY(layers) ? layers->u.array.len : 0;
	_cleanup_free_ struct img_desc *d = hutch_xcalloc(n + 1, sizeof(*d));
	for (size_t i = 0; i < n; i++) {
		yajl_val l = layers->u.array.values[i], sz = hutch_json_get(l, "size");
		const char *dg = img_json_str(l, "digest");
		if (!dg || !img_digest_valid(dg))
			return hutch_fail(err, EINVAL, "base manifest: layer %zu: no digest", i);
		d[i].media_type =
			img_json_str(l, "mediaType") ?: "application/vnd.oci.image.layer.v1.tar";
		snprintf(d[i].digest, sizeof(d[i].digest), "%s", dg);
		d[i].size = YAJL_IS_INTEGER(sz) ? (uint64_t)YAJL_GET_INTEGER(sz) : 0;
	}
	d[n] = *layer;
	struct img_desc cd = { .media_type = "application/vnd.oci.image.config.v1+json",
			       .size = strlen(config) };
	img_sha_buf(config, cd.size, cd.digest);
	*out = img_manifest_json(&cd, d, n + 1);
	return 0;
}

int img_commit_layer(struct img_store *s, const struct img_commit *c, char digest[IMG_DIGEST_MAX],
		     char layer[IMG_DIGEST_MAX], struct hutch_err *err)
{
	char base_digest[IMG_DIGEST_MAX];
	_cleanup_free_ char *mtext = NULL, *ctext = NULL, *config = NULL, *manifest = NULL;
	_cleanup_free_ char *tmp = NULL, *root = NULL;
	_cleanup_strv_ char **ids = NULL;
	_cleanup_json_ yajl_val m = NULL, cfg = NULL;
	size_t n;
	TRY(img_resolve(s, c->base, NULL, base_digest, err));
	TRY(img_load_image(s, base_digest, &mtext, &ctext, &ids, &n, err));
	TRY(hutch_json_parse(mtext, "base manifest", &m, err));
	TRY(hutch_json_parse(ctext, "base config", &cfg, err));
	if (!YAJL_IS_OBJECT(cfg))
		return hutch_fail(err, EINVAL, "base config: not an object");
	_cleanup_close_ int upfd = open(c->upper, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (upfd < 0)
		return hutch_fail_errno(err, errno, "commit: %s", c->upper);
	TRY(img_unshift_ids(upfd, c->ids, err)); /* before the digest: it hashes the owners */
	uint64_t tar_size, bytes;
	TRY(layer_digest(upfd, layer, &tar_size, &bytes, err));
	int lockfd = -1;
	TRY(img_tmp_create(s, "commit", &tmp, &lockfd, err));
	root = hutch_xasprintf("%s/root", tmp);
	/* A rename: the upper dir is on the store's filesystem (the build made it in tmp). */
	int r = renameat(AT_FDCWD, c->upper, s->dirfd, root) < 0
			? hutch_fail_errno(err, errno, "commit: move %s into the store", c->upper)
			: img_layer_add(s, tmp, layer, bytes, err);
	img_tmp_remove(s, tmp, lockfd);
	if (r < 0)
		return r;
	struct img_desc ld = { .media_type = "application/vnd.oci.image.layer.v1.tar",
			       .size = tar_size };
	snprintf(ld.digest, sizeof(ld.digest), "%s", layer);
	config = new_config(cfg, c, layer);
	TRY(new_manifest(m, config, &ld, &manifest, err));
	return img_store_image(s, config, manifest, c->name_tag, digest, err);
}
