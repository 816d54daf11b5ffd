// SPDX-License-Identifier: Apache-2.0
/*
 * Names and what they point at: NAME:TAG -> manifest -> config and layers. Resolving a
 * bare name, listing, inspecting, removing a name, and prune (everything no name reaches).
 * A name is a file in STORE/names, so setting one is an atomic rename.
 */
#include "img-internal.h"

#include <ctype.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>

static bool name_char(char c)
{
	return islower((unsigned char)c) || isdigit((unsigned char)c) || strchr("._-/:", c);
}

static bool tag_valid(const char *t)
{
	size_t n = strlen(t);
	if (n == 0 || n > 128 || t[0] == '.' || t[0] == '-')
		return false;
	for (const char *p = t; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr("_.-", *p))
			return false;
	return true;
}

static char *escape(const char *name, const char *tag);

int img_parse_ref(const char *ref, char **name, char **tag, struct hutch_err *err)
{
	size_t n = strlen(ref);
	const char *slash = strrchr(ref, '/');
	const char *colon = strrchr(ref, ':');
	if (colon && slash && colon < slash)
		colon = NULL; /* host:port/name */
	size_t nlen = colon ? (size_t)(colon - ref) : n;
	if (nlen == 0 || nlen > 255 || !isalnum((unsigned char)ref[0]))
		return hutch_fail(err, EINVAL, "invalid image name '%s'", ref);
	/* Each component of the path something: no "a//b", "a/", "a/./b" or "a/../b". */
	for (size_t i = 0; i < nlen; i++)
		if (ref[i] == '/' && (i + 1 == nlen || ref[i + 1] == '/' || ref[i + 1] == '.' ||
				      ref[i + 1] == '-' || ref[i + 1] == '_'))
			return hutch_fail(err, EINVAL,
					  "invalid image name '%s': an empty path component, or "
					  "one that starts with . - or _",
					  ref);
	/* img_resolve reads "sha256:..." as a manifest digest: a name so made (an archive's
	 * RepoTags, --name) could be stored but never found again. */
	if (!strncmp(ref, "sha256:", 7))
		return hutch_fail(err, EINVAL, "invalid image name '%s': sha256: starts a digest",
				  ref);
	for (size_t i = 0; i < nlen; i++)
		if (!name_char(ref[i]))
			return hutch_fail(err, EINVAL,
					  "invalid image name '%s': use lowercase letters, digits "
					  "and . _ - /",
					  ref);
	if (colon && !tag_valid(colon + 1))
		return hutch_fail(err, EINVAL, "invalid tag in '%s'", ref);
	_cleanup_free_ char *nm = hutch_xmalloc(nlen + 1);
	memcpy(nm, ref, nlen);
	nm[nlen] = '\0';
	/* Stored by its full name, escaped, as one file name: refused here, not once the
	 * image's layers are in. */
	_cleanup_free_ char *full = img_full_name(nm);
	_cleanup_free_ char *file = escape(full, colon ? colon + 1 : "latest");
	if (strlen(file) > 255)
		return hutch_fail(err, ENAMETOOLONG, "image name '%s': too long", ref);
	*name = steal_ptr(nm);
	*tag = colon ? hutch_xstrdup(colon + 1) : NULL;
	return 0;
}

char *img_full_name(const char *name)
{
	const char *slash = strchr(name, '/');
	size_t first = slash ? (size_t)(slash - name) : strlen(name);
	bool registry = slash && (memchr(name, '.', first) || memchr(name, ':', first) ||
				  (first == 9 && !strncmp(name, "localhost", 9)));
	if (!registry)
		return hutch_xasprintf("docker.io/%s%s", slash ? "" : "library/", name);
	if (!strncmp(name, "index.docker.io/", 16))
		name += strlen("index.");
	if (!strncmp(name, "docker.io/", 10) && !strchr(name + 10, '/'))
		return hutch_xasprintf("docker.io/library/%s", name + 10);
	return hutch_xstrdup(name);
}

char *img_short_name(const char *name)
{
	_cleanup_free_ char *full = img_full_name(name);
	const char *p = full;
	if (!strncmp(p, "docker.io/", 10)) {
		p += 10;
		if (!strncmp(p, "library/", 8) && !strchr(p + 8, '/'))
			p += 8;
	}
	/* Only a short form that reads back as the same name: docker.io/quay.io/app is not
	 * quay.io/app, and is shown (and looked up) full. */
	_cleanup_free_ char *back = img_full_name(p);
	return hutch_xstrdup(strcmp(back, full) ? full : p);
}

char *img_display_name(const char *name_tag)
{
	_cleanup_free_ char *name = NULL, *tag = NULL, *shrt = NULL;
	struct hutch_err e = { 0 };
	if (img_parse_ref(name_tag, &name, &tag, &e) < 0)
		return hutch_xstrdup(name_tag);
	shrt = img_short_name(name);
	return tag ? hutch_xasprintf("%s:%s", shrt, tag) : steal_ptr(shrt);
}

bool img_name_matches(const char *pattern, const char *name_tag)
{
	_cleanup_free_ char *name = NULL, *tag = NULL;
	struct hutch_err e = { 0 };
	if (img_parse_ref(name_tag, &name, &tag, &e) < 0)
		return !fnmatch(pattern, name_tag, 0);
	const char *slash = strrchr(pattern, '/'), *colon = strrchr(pattern, ':');
	bool with_tag = colon && (!slash || colon > slash);
	_cleanup_free_ char *full = img_full_name(name), *shrt = img_short_name(name);
	const char *forms[] = { full, shrt, name };
	for (size_t i = 0; i < ARRAY_SIZE(forms); i++) {
		_cleanup_free_ char *c =
			with_tag ? hutch_xasprintf("%s:%s", forms[i], tag ? tag : "latest")
				 : hutch_xstrdup(forms[i]);
		if (!fnmatch(pattern, c, 0))
			return true;
	}
	return false;
}

/* NAME:TAG as a file name: '/', ':' and '%' of the name escaped, so the last ':' is the
 * tag's. */
static char *escape(const char *name, const char *tag)
{
	size_t cap = strlen(name) * 3 + (tag ? strlen(tag) : 0) + 4, o = 0;
	char *out = hutch_xmalloc(cap);
	for (const char *p = name; *p; p++) {
		if (*p == '/' || *p == ':' || *p == '%')
			o += (size_t)snprintf(out + o, cap - o, "%%%02X", (unsigned char)*p);
		else
			out[o++] = *p;
	}
	out[o] = '\0';
	if (tag)
		snprintf(out + o, cap - o, ":%s", tag);
	return out;
}

static char *unescape(const char *file)
{
	char *out = hutch_xmalloc(strlen(file) + 1), *o = out;
	for (const char *p = file; *p; p++) {
		unsigned v;
		if (*p == '%' && sscanf(p + 1, "%2X", &v) == 1) {
			*o++ = (char)v;
			p += 2;
		} else {
			*o++ = *p;
		}
	}
	*o = '\0';
	return out;
}

static int read_name(struct img_store *s, const char *file, char digest[IMG_DIGEST_MAX],
		     int64_t *mtime)
{
	_cleanup_close_ int d = openat(s->dirfd, "names", O_PATH | O_DIRECTORY | O_CLOEXEC);
	_cleanup_free_ char *text = NULL;
	struct hutch_err e = { 0 };
	struct stat st;
	if (d < 0)
		return -errno;
	int r = hutch_read_file_at(d, file, 256, &text, NULL, &e);
	if (r < 0)
		return r;
	text[strcspn(text, "\n")] = '\0';
	if (!img_digest_valid(text))
		return -EBADMSG;
	snprintf(digest, IMG_DIGEST_MAX, "%s", text);
	if (mtime && fstatat(d, file, &st, 0) == 0)
		*mtime = st.st_mtim.tv_sec;
	return 0;
}

/* The tags stored under name in any of its forms, for an error: "a, b" (at most 4). */
static void known_tags(struct img_store *s, const char *name, char *out, size_t cap)
{
	_cleanup_free_ char *full = img_full_name(name);
	size_t o = 0, k = 0;
	out[0] = '\0';
	int d = openat(s->dirfd, "names", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (d < 0)
		return;
	_cleanup_(hutch_closedirp) DIR *dir = fdopendir(d);
	for (struct dirent *e; dir && (e = readdir(dir)) && o < cap;) {
		_cleanup_free_ char *nt = unescape(e->d_name), *n = NULL, *t = NULL, *f = NULL;
		struct hutch_err ignored = { 0 };
		if (e->d_name[0] == '.' || img_parse_ref(nt, &n, &t, &ignored) < 0 || !t)
			continue;
		f = img_full_name(n);
		if (strcmp(f, full))
			continue;
		if (k++ == 4) {
			o += (size_t)snprintf(out + o, cap - o, ", ...");
			break;
		}
		o += (size_t)snprintf(out + o, cap - o, "%s%s", k > 1 ? ", " : "", t);
	}
}

/* NAME@sha256:HEX: the manifest itself, which must be in the store. */
static int resolve_digest(struct img_store *s, const char *ref, const char *digest,
			  char out[IMG_DIGEST_MAX], struct hutch_err *err)
{
	char path[96];
	struct stat st;
	if (!img_digest_valid(digest))
		return hutch_fail(err, EINVAL, "invalid digest in '%s'", ref);
	snprintf(path, sizeof(path), "blobs/sha256/%s", IMG_HEX(digest));
	if (fstatat(s->dirfd, path, &st, 0) < 0)
		return hutch_fail(err, ENOENT, "image %s: not in the store (%s)", ref, s->path);
	snprintf(out, IMG_DIGEST_MAX, "%s", digest);
	return 0;
}

int img_resolve(struct img_store *s, const char *ref, char **name_tag, char digest[IMG_DIGEST_MAX],
		struct hutch_err *err)
{
	_cleanup_free_ char *name = NULL, *tag = NULL, *file = NULL, *before = NULL;
	if (name_tag)
		*name_tag = NULL;
	if (!strncmp(ref, "sha256:", 7))
		return resolve_digest(s, ref, ref, digest, err);
	const char *at = strchr(ref, '@');
	if (at) {
		before = hutch_xasprintf("%.*s", (int)(at - ref), ref);
		char *colon = strrchr(before, ':'), *slash = strrchr(before, '/');
		if (colon && (!slash || colon > slash)) /* NAME:TAG@DIGEST: the digest decides */
			*colon = '\0';
	}
	TRY(img_parse_ref(before ? before : ref, &name, &tag, err));
	if (at)
		return resolve_digest(s, ref, at + 1, digest, err);
	/* Docker's rule: no tag is latest, never whichever tag came last. */
	const char *t = tag ? tag : "latest";
	_cleanup_free_ char *full = img_full_name(name), *shrt = img_short_name(name);
	const char *forms[] = { full, name, shrt };
	int r = -ENOENT;
	for (size_t i = 0; r == -ENOENT && i < ARRAY_SIZE(forms); i++) {
		if ((i == 1 && !strcmp(name, full)) ||
		    (i == 2 && (!strcmp(shrt, full) || !strcmp(shrt, name))))
			continue;
		free(file);
		file = escape(forms[i], t);
		r = read_name(s, file, digest, NULL);
	}
	if (r == -ENOENT) {
		char tags[256];
		known_tags(s, name, tags, sizeof(tags));
		if (*tags)
			return hutch_fail(err, ENOENT,
					  "image %s: not in the store (%s); %s has %s (no tag is "
					  ":latest)",
					  ref, s->path, shrt, tags);
		return hutch_fail(err, ENOENT, "image %s: not in the store (%s)", ref, s->path);
	}
	if (r < 0)
		return hutch_fail_errno(err, r, "image %s", ref);
	if (name_tag)
		*name_tag = unescape(file);
	return 0;
}

int img_tag(struct img_store *s, const char *name_tag, const char *digest, struct hutch_err *err)
{
	_cleanup_free_ char *name = NULL, *tag = NULL, *file = NULL, *line = NULL, *full = NULL,
			    *shrt = NULL;
	TRY(img_parse_ref(name_tag, &name, &tag, err));
	const char *t = tag ? tag : "latest";
	full = img_full_name(name);
	shrt = img_short_name(name);
	file = escape(full, t);
	line = hutch_xasprintf("%s\n", digest);
	_cleanup_close_ int d = openat(s->dirfd, "names", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (d < 0)
		return hutch_fail_errno(err, errno, "store: names");
	int r = hutch_write_atomic_at(d, file, line, strlen(line), 0644, err);
	if (r < 0)
		return hutch_err_prefix(err, "tag %s: ", name_tag);
	/* The same name stored as given or short (before names were stored full) would list
	 * twice, once stale. */
	const char *older[] = { name, shrt };
	for (size_t i = 0; i < ARRAY_SIZE(older); i++) {
		_cleanup_free_ char *f = escape(older[i], t);
		if (strcmp(f, file))
			(void)unlinkat(d, f, 0);
	}
	return 0;
}

int img_store_image(struct img_store *s, const char *config, const char *manifest,
		    const char *name_tag, char digest[IMG_DIGEST_MAX], struct hutch_err *err)
{
	char cdigest[IMG_DIGEST_MAX];
	TRY(img_blob_put(s, config, strlen(config), cdigest, err));
	TRY(img_blob_put(s, manifest, strlen(manifest), digest, err));
	return name_tag ? img_tag(s, name_tag, digest, err) : 0;
}

int img_load_image(struct img_store *s, const char *digest, char **manifest, char **config,
		   char ***diff_ids, size_t *n, struct hutch_err *err)
{
	_cleanup_json_ yajl_val m = NULL, c = NULL;
	_cleanup_free_ char *mtext = NULL, *ctext = NULL;
	TRY(img_blob_read(s, digest, &mtext, NULL, err));
	TRY(hutch_json_parse(mtext, "manifest", &m, err));
	const char *cd = img_json_str(hutch_json_get(m, "config"), "digest");
	if (!cd)
		return hutch_fail(err, EINVAL, "manifest %s: no config digest", digest);
	TRY(img_blob_read(s, cd, &ctext, NULL, err));
	TRY(hutch_json_parse(ctext, "config", &c, err));
	yajl_val ids = hutch_json_get(hutch_json_get(c, "rootfs"), "diff_ids");
	if (!YAJL_IS_ARRAY(ids))
		return hutch_fail(err, EINVAL, "config %s: no rootfs.diff_ids", cd);
	char **v = hutch_xcalloc(ids->u.array.len + 1, sizeof(char *));
	for (size_t i = 0; i < ids->u.array.len; i++) {
		yajl_val x = ids->u.array.values[i];
		if (!YAJL_IS_STRING(x) || !img_digest_valid(x->u.string)) {
			hutch_strv_free(v);
			return hutch_fail(err, EINVAL, "config %s: invalid diff_id", cd);
		}
		v[i] = hutch_xstrdup(x->u.string);
	}
	*n = ids->u.array.len;
	*diff_ids = v;
	if (manifest)
		*manifest = steal_ptr(mtext);
	if (config)
		*config = steal_ptr(ctext);
	return 0;
}

void img_info_clear(struct img_info *i)
{
	free(i->name);
	free(i->created);
	free(i->arch);
	free(i->os);
	hutch_strv_free(i->diff_ids);
	free(i->config);
	free(i->manifest);
	memset(i, 0, sizeof(*i));
}

static int info_fill(struct img_store *s, struct img_info *i, struct hutch_err *err)
{
	TRY(img_load_image(s, i->digest, &i->manifest, &i->config, &i->diff_ids, &i->n_layers,
			   err));
	_cleanup_json_ yajl_val c = NULL;
	TRY(hutch_json_parse(i->config, "config", &c, err));
	const char *v;
	if ((v = img_json_str(c, "created")))
		i->created = hutch_xstrdup(v);
	if ((v = img_json_str(c, "architecture")))
		i->arch = hutch_xstrdup(v);
	if ((v = img_json_str(c, "os")))
		i->os = hutch_xstrdup(v);
	for (size_t k = 0; k < i->n_layers; k++)
		i->size += img_layer_size(s, i->diff_ids[k]);
	return 0;
}

int img_inspect(struct img_store *s, const char *ref, struct img_info *out, struct hutch_err *err)
{
	memset(out, 0, sizeof(*out));
	TRY(img_resolve(s, ref, &out->name, out->digest, err));
	if (out->name) {
		_cleanup_free_ char *n = NULL, *t = NULL, *file = NULL;
		TRY(img_parse_ref(out->name, &n, &t, err));
		file = escape(n, t);
		read_name(s, file, out->digest, &out->tagged_at);
	}
	int r = info_fill(s, out, err);
	return r < 0 ? hutch_err_prefix(err, "image %s: ", ref) : 0;
}

static int cmp_info(const void *a, const void *b)
{
	return strcmp(((const struct img_info *)a)->name, ((const struct img_info *)b)->name);
}

int img_list(struct img_store *s, struct img_info **out, size_t *n, struct hutch_err *err)
{
	int d = openat(s->dirfd, "names", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (d < 0)
		return hutch_fail_errno(err, errno, "store: names");
	_cleanup_(hutch_closedirp) DIR *dir = fdopendir(d);
	struct img_info *v = NULL;
	size_t k = 0;
	for (struct dirent *e; dir && (e = readdir(dir));) {
		if (e->d_name[0] == '.')
			continue; /* "." "..", and temp files of a tag being written */
		struct img_info i = { 0 };
		if (read_name(s, e->d_name, i.digest, &i.tagged_at) < 0)
			continue;
		i.name = unescape(e->d_name);
		struct hutch_err e2 = { 0 };
		if (info_fill(s, &i, &e2) < 0) { /* list what can be listed */
			img_info_clear(&i);
			continue;
		}
		v = hutch_xrealloc(v, (k + 1) * sizeof(*v));
		v[k++] = i;
	}
	if (k)
		qsort(v, k, sizeof(*v), cmp_info);
	*out = v;
	*n = k;
	return 0;
}

int img_remove(struct img_store *s, const char *ref, struct hutch_err *err)
{
	_cleanup_free_ char *name_tag = NULL, *n = NULL, *t = NULL, *file = NULL;
	char digest[IMG_DIGEST_MAX];
	TRY(img_resolve(s, ref, &name_tag, digest, err));
	if (!name_tag)
		return hutch_fail(err, EINVAL, "rm %s: give NAME[:TAG], not a digest", ref);
	TRY(img_parse_ref(name_tag, &n, &t, err));
	file = escape(n, t);
	_cleanup_close_ int d = openat(s->dirfd, "names", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (d < 0 || unlinkat(d, file, 0) < 0)
		return hutch_fail_errno(err, errno, "rm %s", name_tag);
	return 0;
}
