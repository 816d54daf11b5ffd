// SPDX-License-Identifier: Apache-2.0
/*
 * import: an OCI image layout (dir or tar), a docker-archive (`docker save`) or a plain
 * rootfs tar (`docker import`) into the store. Every digest the source names is checked
 * against the bytes, the architecture against the host's, and layers already in the store
 * (same diff_id) are not unpacked again. New layers wait in STORE/tmp until the whole image
 * is unpacked within its limits: one that passes a limit leaves nothing in the store.
 */
#include "img-internal.h"
#include "hutch-json.h"
#include "hutch-path.h"

#include <archive.h>
#include <archive_entry.h>
#include <ctype.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>
#include <time.h>

/* A layer unpacked into STORE/tmp, moved to STORE/layers when the image is complete. */
struct pending {
	char *tmp;
	int lockfd;
	char diff[IMG_DIGEST_MAX], blob[IMG_DIGEST_MAX]; /* blob: the bytes it was unpacked from */
	uint64_t bytes, tar_size;
};

struct import {
	struct img_store *s;
	int srcfd; /* the layout or archive directory */
	const char *src, *name;
	const struct img_limits *lim;
	struct img_platform want; /* --platform, else the host's */
	size_t total_layers;	  /* for progress: the manifest's count */
	uint64_t layer_bytes;	  /* for progress: the last new layer's unpacked bytes */
	bool foreign;		  /* want is not the host's */
	struct img_budget budget; /* every layer of the image */
	struct pending *pending;
	size_t n_pending;
	struct img_import_result *res;
};

const char *img_host_arch(void)
{
	static const char *const map[][2] = {
		{ "x86_64", "amd64" },	  { "aarch64", "arm64" }, { "armv7l", "arm" },
		{ "armv6l", "arm" },	  { "i686", "386" },	  { "i386", "386" },
		{ "ppc64le", "ppc64le" }, { "s390x", "s390x" },	  { "riscv64", "riscv64" },
	};
	static struct utsname u;
	if (uname(&u) < 0)
		return "unknown";
	for (size_t i = 0; i < ARRAY_SIZE(map); i++)
		if (!strcmp(u.machine, map[i][0]))
			return map[i][1];
	return u.machine;
}

void img_import_result_clear(struct img_import_result *r)
{
	free(r->name);
	r->name = NULL;
}

static bool platform_word(const char *w, size_t n, size_t cap)
{
	if (n == 0 || n >= cap)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!islower((unsigned char)w[i]) && !isdigit((unsigned char)w[i]) && w[i] != '_')
			return false;
	return true;
}

int img_parse_platform(const char *text, struct img_platform *out, struct hutch_err *err)
{
	memset(out, 0, sizeof(*out));
	const char *a = strchr(text, '/'), *v = a ? strchr(a + 1, '/') : NULL;
	size_t on = a ? (size_t)(a - text) : 0,
	       an = a ? (v ? (size_t)(v - a - 1) : strlen(a + 1)) : 0;
	if (!a || !platform_word(text, on, sizeof(out->os)) ||
	    !platform_word(a + 1, an, sizeof(out->arch)) ||
	    (v && !platform_word(v + 1, strlen(v + 1), sizeof(out->variant))))
		return hutch_fail(err, EINVAL,
				  "--platform %s: expected OS/ARCH[/VARIANT] (linux/amd64, "
				  "linux/arm64/v8)",
				  text);
	memcpy(out->os, text, on);
	memcpy(out->arch, a + 1, an);
	if (v)
		snprintf(out->variant, sizeof(out->variant), "%s", v + 1);
	return 0;
}

void img_host_platform(struct img_platform *out)
{
	struct utsname u;
	memset(out, 0, sizeof(*out));
	snprintf(out->os, sizeof(out->os), "linux");
	snprintf(out->arch, sizeof(out->arch), "%s", img_host_arch());
	if (!strcmp(out->arch, "arm64"))
		snprintf(out->variant, sizeof(out->variant), "v8");
	else if (!strcmp(out->arch, "arm") && uname(&u) == 0 && !strncmp(u.machine, "armv", 4))
		snprintf(out->variant, sizeof(out->variant), "v%c", u.machine[4]);
}

const char *img_platform_str(const struct img_platform *p, char buf[96])
{
	snprintf(buf, 96, "%s/%s%s%s", *p->os ? p->os : "linux", *p->arch ? p->arch : "?",
		 *p->variant ? "/" : "", p->variant);
	return buf;
}

bool img_platform_matches(const struct img_platform *want, const struct img_platform *have)
{
	return !strcmp(want->os, *have->os ? have->os : "linux") &&
	       !strcmp(want->arch, have->arch) &&
	       (!*want->variant || !*have->variant || !strcmp(want->variant, have->variant));
}

/* The platform of a config, or of a descriptor's "platform" object. */
static void platform_of(yajl_val v, struct img_platform *p)
{
	const char *os = img_json_str(v, "os"), *arch = img_json_str(v, "architecture"),
		   *variant = img_json_str(v, "variant");
	memset(p, 0, sizeof(*p));
	snprintf(p->os, sizeof(p->os), "%s", os ? os : "");
	snprintf(p->arch, sizeof(p->arch), "%s", arch ? arch : "");
	snprintf(p->variant, sizeof(p->variant), "%s", variant ? variant : "");
}

/* The image's config against the platform asked for; another one than the host's is
 * imported when asked for, with a warning that it will not run here by itself. */
static int check_arch(const struct import *im, const char *config, struct hutch_err *err)
{
	_cleanup_json_ yajl_val c = NULL;
	struct img_platform have;
	char h[96], w[96];
	TRY(hutch_json_parse(config, "image config", &c, err));
	platform_of(c, &have);
	if (!*have.arch) /* a config that does not say: as asked */
		return 0;
	if (!img_platform_matches(&im->want, &have))
		return hutch_fail(err, ENOEXEC, "image is for %s, %s %s",
				  img_platform_str(&have, h),
				  im->foreign ? "--platform asked for" : "this host is",
				  img_platform_str(&im->want, w));
	return 0;
}

/* A file of the source, opened without leaving it (names come from the source itself), and
 * only a regular file: O_NONBLOCK so that a FIFO cannot hang the open, and a device node
 * (/dev/zero: an endless blob; /dev/kmsg: the host's) is refused before it is read. */
static int open_src(struct import *im, const char *path, struct hutch_err *err)
{
	struct stat st;
	int fd = hutch_open_in_root(im->srcfd, path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW, 0, err);
	if (fd < 0)
		return hutch_err_prefix(err, "%s: ", im->src);
	int r = fd;
	if (fstat(fd, &st) < 0)
		r = hutch_fail_errno(err, errno, "%s: %s", im->src, path);
	else if (!S_ISREG(st.st_mode))
		r = hutch_fail(err, EINVAL, "%s: %s: not a regular file", im->src, path);
	if (r < 0)
		close(fd);
	return r;
}

static int read_src(struct import *im, const char *path, char **out, size_t *len,
		    struct hutch_err *err)
{
	_cleanup_close_ int fd = open_src(im, path, err);
	if (fd < 0)
		return fd;
	char fdp[HUTCH_FD_PATH_MAX];
	return hutch_read_file_at(AT_FDCWD, hutch_fd_path(fd, fdp), IMG_BLOB_MAX, out, len, err);
}

/* An OCI blob of the layout, checked against its digest. */
static int read_blob(struct import *im, const char *digest, char **out, struct hutch_err *err)
{
	char path[128], got[IMG_DIGEST_MAX];
	size_t len;
	if (!img_digest_valid(digest))
		return hutch_fail(err, EINVAL, "unsupported digest %s", digest);
	snprintf(path, sizeof(path), "blobs/sha256/%s", IMG_HEX(digest));
	TRY(read_src(im, path, out, &len, err));
	img_sha_buf(*out, len, got);
	if (strcmp(got, digest)) {
		free(steal_ptr(*out));
		return hutch_fail(err, EBADMSG, "blob %s: digest mismatch (content is %s)", digest,
				  got);
	}
	return 0;
}

static int hash_fd(int fd, char out[IMG_DIGEST_MAX], uint64_t *size)
{
	struct img_sha h;
	char buf[65536];
	ssize_t n;
	*size = 0;
	img_sha_init(&h);
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		img_sha_update(&h, buf, (size_t)n);
		*size += (uint64_t)n;
	}
	if (n < 0)
		return -errno;
	img_sha_final(&h, out);
	return 0;
}

static const struct pending *pending_find(const struct import *im, const char *diff)
{
	for (size_t i = 0; i < im->n_pending; i++)
		if (!strcmp(im->pending[i].diff, diff))
			return &im->pending[i];
	return NULL;
}

/* The image's new layers into STORE/layers, once all of them are unpacked. */
static int commit_layers(struct import *im, struct hutch_err *err)
{
	for (size_t i = 0; i < im->n_pending; i++) {
		struct pending *p = &im->pending[i];
		int r = img_layer_add(im->s, p->tmp, p->diff, p->bytes, err);
		if (r >= 0 && img_layer_note_blob(im->s, p->diff, p->blob, p->tar_size, err) < 0)
			r = -err->code;
		if (r < 0)
			return r;
		im->res->n_new_layers += (size_t)r;
		im->res->bytes += r ? p->bytes : 0;
	}
	return 0;
}

/* What is left of the new layers' temp dirs (all of them when the import failed). */
static void drop_pending(struct import *im)
{
	for (size_t i = 0; i < im->n_pending; i++) {
		img_tmp_remove(im->s, im->pending[i].tmp, im->pending[i].lockfd);
		free(im->pending[i].tmp);
	}
	free(im->pending);
	im->pending = NULL;
	im->n_pending = 0;
}

/* Unpacks one layer into STORE/tmp, its digests checked; on success it waits there for
 * commit_layers. */
static const struct img_progress *progress;

static uint64_t steal_u64(uint64_t *v)
{
	uint64_t x = *v;
	*v = 0;
	return x;
}

void img_import_set_progress(const struct img_progress *p)
{
	progress = p;
}

static void progress_tick(void *arg, uint64_t bytes)
{
	const struct import *im = arg;
	progress->fn(progress->arg, im->res->n_layers + 1, im->total_layers, bytes, false, NULL);
}

static int unpack_new_layer(struct import *im, int fd, const char *want_blob, const char *want_diff,
			    char diff[IMG_DIGEST_MAX], char blob[IMG_DIGEST_MAX], uint64_t *size,
			    struct hutch_err *err)
{
	_cleanup_free_ char *tmp = NULL;
	struct img_unpack_stats st = { .tick = progress ? progress_tick : NULL, .tick_arg = im };
	int lockfd = -1, r = 0;
	TRY(img_tmp_create(im->s, "layer", &tmp, &lockfd, err));
	_cleanup_free_ char *root = hutch_xasprintf("%s/root", tmp);
	_cleanup_close_ int rootfd = -1;
	if (mkdirat(im->s->dirfd, root, 0755) < 0 ||
	    (rootfd = openat(im->s->dirfd, root, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		r = hutch_fail_errno(err, errno, "store: %s", root);
	if (r >= 0)
		r = img_unpack_layer(fd, rootfd, IMG_UNPACK_LAYER, &im->budget, diff, blob, &st,
				     err);
	*size = st.tar_size;
	im->layer_bytes = st.bytes;
	if (r >= 0 && want_diff && strcmp(diff, want_diff))
		r = hutch_fail(err, EBADMSG, "layer %s: diff_id mismatch (content is %s)",
			       want_diff, diff);
	if (r >= 0 && want_blob && strcmp(blob, want_blob))
		r = hutch_fail(err, EBADMSG, "layer %s: digest mismatch (content is %s)", want_blob,
			       blob);
	if (r < 0) {
		img_tmp_remove(im->s, tmp, lockfd);
		return r;
	}
	im->pending = hutch_xrealloc(im->pending, (im->n_pending + 1) * sizeof(*im->pending));
	struct pending *p = &im->pending[im->n_pending++];
	*p = (struct pending){
		.tmp = steal_ptr(tmp), .lockfd = lockfd, .bytes = st.bytes, .tar_size = st.tar_size
	};
	snprintf(p->diff, IMG_DIGEST_MAX, "%s", diff);
	snprintf(p->blob, IMG_DIGEST_MAX, "%s", blob);
	im->res->skipped_devices += st.skipped_devices;
	return 0;
}

/* Whether blob is known to unpack to the layer want_diff: unpacked from it in this import or
 * an earlier one (the store's record). *size gets the tar's size. */
static bool blob_proven(struct import *im, const char *blob, const char *want_diff, uint64_t *size)
{
	const struct pending *p = pending_find(im, want_diff);
	if (p && !strcmp(p->blob, blob)) {
		*size = p->tar_size;
		return true;
	}
	return img_layer_blob_known(im->s, want_diff, blob, size);
}

/* A layer whose diff_id is stored (or earlier in this image): its tree is reused, but only
 * for a blob proven to make it. An image's config names any diff_id it likes, so a claim
 * alone would hand it another image's layer (its secrets): an unproven blob is decompressed
 * and hashed, nothing written, and diff gets what it really is. */
static int reuse_layer(struct import *im, int fd, const char *path, const char *want_blob,
		       const char *want_diff, char diff[IMG_DIGEST_MAX], char blob[IMG_DIGEST_MAX],
		       uint64_t *size, struct hutch_err *err)
{
	char again[IMG_DIGEST_MAX];
	if (hash_fd(fd, blob, size) < 0)
		return hutch_fail_errno(err, errno, "read layer %s", path);
	snprintf(diff, IMG_DIGEST_MAX, "%s", want_diff);
	/* A wrong blob fails as such (the caller); an uncompressed tar's hash is its diff_id. */
	if ((want_blob && strcmp(blob, want_blob)) || !strcmp(blob, want_diff))
		return 0;
	if (blob_proven(im, blob, want_diff, size))
		return 0;
	if (lseek(fd, 0, SEEK_SET) < 0)
		return hutch_fail_errno(err, errno, "seek layer %s", path);
	if (img_hash_layer(fd, &im->budget, diff, again, size, err) < 0)
		return hutch_err_prefix(err, "%s: ", path);
	if (strcmp(diff, want_diff) || !img_layer_exists(im->s, want_diff))
		return 0; /* a mismatch (the caller says so), or a layer pending in this import */
	return img_layer_note_blob(im->s, want_diff, blob, *size, err);
}

/* One layer file: unpacked (unless its diff_id is in the store, or earlier in this image,
 * and this blob makes it), both digests checked. want_blob may be NULL (docker-archive). */
static int import_layer_fd(struct import *im, int fd, const char *path, const char *want_blob,
			   const char *want_diff, struct img_desc *desc, struct hutch_err *err)
{
	char blob[IMG_DIGEST_MAX], diff[IMG_DIGEST_MAX];
	uint64_t size = 0;
	if (want_diff && (img_layer_exists(im->s, want_diff) || pending_find(im, want_diff))) {
		if (reuse_layer(im, fd, path, want_blob, want_diff, diff, blob, &size, err) < 0)
			return -err->code;
	} else if (unpack_new_layer(im, fd, want_blob, want_diff, diff, blob, &size, err) < 0) {
		return hutch_err_prefix(err, "%s: ", path);
	}
	if (want_blob && strcmp(blob, want_blob))
		return hutch_fail(err, EBADMSG, "layer %s: digest mismatch (content is %s)",
				  want_blob, blob);
	if (want_diff && strcmp(diff, want_diff))
		return hutch_fail(err, EBADMSG, "layer %s: diff_id mismatch (content is %s)",
				  want_diff, diff);
	im->res->n_layers++;
	if (progress)
		progress->fn(progress->arg, im->res->n_layers, im->total_layers,
			     steal_u64(&im->layer_bytes), true, diff);
	if (desc) {
		desc->media_type = "application/vnd.oci.image.layer.v1.tar";
		snprintf(desc->digest, sizeof(desc->digest), "%s", diff);
		desc->size = size;
	}
	return 0;
}

static int import_layer(struct import *im, const char *path, const char *want_blob,
			const char *want_diff, struct img_desc *desc, struct hutch_err *err)
{
	_cleanup_close_ int fd = open_src(im, path, err);
	if (fd < 0)
		return fd;
	return import_layer_fd(im, fd, path, want_blob, want_diff, desc, err);
}

/* The default name: the source's file name without extensions, tagged latest. */
static char *default_name(const char *src, const char *tag)
{
	_cleanup_free_ char *copy = hutch_xstrdup(src);
	char *b = basename(copy);
	char *dot = strchr(b, '.');
	if (dot && dot != b)
		*dot = '\0';
	for (char *p = b; *p; p++)
		*p = (char)(strchr("abcdefghijklmnopqrstuvwxyz0123456789._-", *p) ? *p
			    : (*p >= 'A' && *p <= 'Z')				  ? *p + 32
										  : '-');
	return hutch_xasprintf("%s:%s", *b && *b != '.' ? b : "image", tag ? tag : "latest");
}

static int finish(struct import *im, const char *config, const char *manifest,
		  const char *fallback_name, struct hutch_err *err)
{
	_cleanup_free_ char *n = NULL, *t = NULL;
	const char *name = im->name ? im->name : fallback_name;
	TRY(img_parse_ref(name, &n, &t, err));
	TRY(commit_layers(im, err)); /* every layer is in: the image fits its limits */
	im->res->name = hutch_xasprintf("%s:%s", n, t ? t : "latest");
	return img_store_image(im->s, config, manifest, im->res->name, im->res->digest, err);
}

/* A descriptor's platform: its own, else (skopeo's oci: layouts give none) its manifest's
 * config's. false for a nested index without one, or a manifest that cannot be read. */
static bool desc_platform(struct import *im, yajl_val d, struct img_platform *p)
{
	yajl_val pl = hutch_json_get(d, "platform");
	const char *mt = img_json_str(d, "mediaType"), *digest = img_json_str(d, "digest");
	if (YAJL_IS_OBJECT(pl)) {
		platform_of(pl, p);
		return true;
	}
	if ((mt && strstr(mt, "index")) || !digest)
		return false;
	_cleanup_free_ char *mtext = NULL, *ctext = NULL;
	_cleanup_json_ yajl_val m = NULL, c = NULL;
	struct hutch_err ignored = { 0 };
	if (read_blob(im, digest, &mtext, &ignored) < 0 ||
	    hutch_json_parse(mtext, "manifest", &m, &ignored) < 0)
		return false;
	const char *cd = img_json_str(hutch_json_get(m, "config"), "digest");
	if (!cd || read_blob(im, cd, &ctext, &ignored) < 0 ||
	    hutch_json_parse(ctext, "image config", &c, &ignored) < 0)
		return false;
	platform_of(c, p);
	return true;
}

/* The manifest for the platform asked for in an index (nested indexes followed once); with
 * several, --name's tag picks by ref.name (skopeo's oci:DIR:TAG). None: an error listing
 * what the index offers. */
static int pick_manifest(struct import *im, yajl_val index, int depth, char **manifest,
			 char **ref_name, struct hutch_err *err)
{
	yajl_val list = hutch_json_get(index, "manifests");
	if (!YAJL_IS_ARRAY(list) || list->u.array.len == 0)
		return hutch_fail(err, EINVAL, "index.json: no manifests");
	/* Each descriptor without a platform costs a manifest's and a config's read: a bound,
	 * and each digest read once. */
	enum { MAX_MANIFESTS = 256 };
	if (list->u.array.len > MAX_MANIFESTS)
		return hutch_fail(err, E2BIG, "image index: more than %d manifests", MAX_MANIFESTS);
	struct seen {
		const char *digest;
		bool known;
		struct img_platform p;
	} seen[MAX_MANIFESTS];
	size_t n_seen = 0;
	yajl_val pick = NULL, nested = NULL;
	const char *want = im->name && strrchr(im->name, ':') ? strrchr(im->name, ':') + 1 : NULL;
	char offers[256] = "", w[96], h[96];
	size_t o = 0;
	for (size_t i = 0; i < list->u.array.len; i++) {
		yajl_val d = list->u.array.values[i];
		const char *rn = img_json_str(hutch_json_get(d, "annotations"),
					      "org.opencontainers.image.ref.name");
		const char *mt = img_json_str(d, "mediaType");
		struct img_platform p;
		const char *dg = img_json_str(d, "digest");
		bool known = false, cached = false;
		for (size_t k = 0; dg && k < n_seen && !cached; k++)
			if (!strcmp(seen[k].digest, dg)) {
				cached = true;
				known = seen[k].known;
				p = seen[k].p;
			}
		if (!cached) {
			known = desc_platform(im, d, &p);
			if (dg)
				seen[n_seen++] = (struct seen){ dg, known, p };
		}
		if (!known && mt && strstr(mt, "index") && depth < 2) { /* looked into if nothing */
			if (!nested)					/* here matches */
				nested = d;
			continue;
		}
		if (known && *p.arch && !img_platform_matches(&im->want, &p)) { /* none: any */
			img_platform_str(&p, h);
			if (o < sizeof(offers) && !strstr(offers, h)) /* each platform once */
				o += (size_t)snprintf(offers + o, sizeof(offers) - o, "%s%s",
						      o ? ", " : "", h);
			continue;
		}
		if (!pick || (want && rn && !strcmp(rn, want)))
			pick = d;
	}
	if (!pick)
		pick = nested;
	if (!pick)
		return hutch_fail(err, ENOEXEC,
				  "the index has no image for %s; it offers %s (--platform picks "
				  "one)",
				  img_platform_str(&im->want, w), *offers ? offers : "none");
	const char *digest = img_json_str(pick, "digest");
	const char *mt = img_json_str(pick, "mediaType");
	const char *rn = img_json_str(hutch_json_get(pick, "annotations"),
				      "org.opencontainers.image.ref.name");
	if (rn && !*ref_name)
		*ref_name = hutch_xstrdup(rn);
	_cleanup_free_ char *text = NULL;
	TRY(read_blob(im, digest ? digest : "", &text, err));
	if (mt && strstr(mt, "index") && depth < 2) {
		_cleanup_json_ yajl_val sub = NULL;
		TRY(hutch_json_parse(text, "image index", &sub, err));
		return pick_manifest(im, sub, depth + 1, manifest, ref_name, err);
	}
	*manifest = steal_ptr(text);
	return 0;
}

static int import_oci(struct import *im, struct hutch_err *err)
{
	_cleanup_free_ char *index_text = NULL, *mtext = NULL, *ctext = NULL, *ref = NULL;
	_cleanup_json_ yajl_val index = NULL, m = NULL, c = NULL;
	TRY(read_src(im, "index.json", &index_text, NULL, err));
	TRY(hutch_json_parse(index_text, "index.json", &index, err));
	TRY(pick_manifest(im, index, 0, &mtext, &ref, err));
	TRY(hutch_json_parse(mtext, "manifest", &m, err));
	const char *cd = img_json_str(hutch_json_get(m, "config"), "digest");
	TRY(read_blob(im, cd ? cd : "", &ctext, err));
	TRY(check_arch(im, ctext, err));
	TRY(hutch_json_parse(ctext, "image config", &c, err));
	yajl_val layers = hutch_json_get(m, "layers");
	yajl_val ids = hutch_json_get(hutch_json_get(c, "rootfs"), "diff_ids");
	if (!YAJL_IS_ARRAY(layers) || !YAJL_IS_ARRAY(ids) ||
	    layers->u.array.len != ids->u.array.len)
		return hutch_fail(err, EINVAL, "manifest: layers do not match rootfs.diff_ids");
	im->total_layers = layers->u.array.len;
	for (size_t i = 0; i < layers->u.array.len; i++) {
		yajl_val l = layers->u.array.values[i], id = ids->u.array.values[i];
		const char *d = img_json_str(l, "digest"), *mt = img_json_str(l, "mediaType");
		char path[128];
		if (!d || !img_digest_valid(d) || !YAJL_IS_STRING(id) ||
		    !img_digest_valid(id->u.string))
			return hutch_fail(err, EINVAL, "manifest: layer %zu: invalid digest", i);
		if (mt && (!strstr(mt, "tar") || strstr(mt, "encrypted") ||
			   strstr(mt, "nondistributable")))
			return hutch_fail(err, ENOTSUP, "layer %s: media type %s not supported", d,
					  mt);
		snprintf(path, sizeof(path), "blobs/sha256/%s", IMG_HEX(d));
		TRY(import_layer(im, path, d, id->u.string, NULL, err));
	}
	_cleanup_free_ char *fallback = NULL;
	if (ref && !strchr(ref, ':') && !strchr(ref, '/'))
		fallback = default_name(im->src, ref); /* ref.name is usually just a tag */
	else
		fallback = ref ? hutch_xstrdup(ref) : default_name(im->src, NULL);
	im->res->kind = "oci";
	return finish(im, ctext, mtext, fallback, err);
}

static int import_docker(struct import *im, struct hutch_err *err)
{
	_cleanup_free_ char *text = NULL, *ctext = NULL, *mtext = NULL, *fallback = NULL;
	_cleanup_json_ yajl_val top = NULL, c = NULL;
	size_t clen;
	TRY(read_src(im, "manifest.json", &text, NULL, err));
	TRY(hutch_json_parse(text, "manifest.json", &top, err));
	yajl_val m = YAJL_IS_ARRAY(top) && top->u.array.len ? top->u.array.values[0] : NULL;
	const char *cpath = img_json_str(m, "Config");
	yajl_val layers = hutch_json_get(m, "Layers"), tags = hutch_json_get(m, "RepoTags");
	if (!cpath || !YAJL_IS_ARRAY(layers))
		return hutch_fail(err, EINVAL, "manifest.json: no Config or Layers");
	TRY(read_src(im, cpath, &ctext, &clen, err));
	struct img_desc cdesc = { .media_type = "application/vnd.oci.image.config.v1+json",
				  .size = clen };
	img_sha_buf(ctext, clen, cdesc.digest);
	/* The config's file name is its digest ("HEX.json" or "blobs/sha256/HEX"). */
	const char *hex = strrchr(cpath, '/') ? strrchr(cpath, '/') + 1 : cpath;
	if (strlen(hex) >= 64 && strncmp(hex, IMG_HEX(cdesc.digest), 64))
		return hutch_fail(err, EBADMSG, "config %s: digest mismatch (content is %s)", cpath,
				  cdesc.digest);
	TRY(check_arch(im, ctext, err));
	TRY(hutch_json_parse(ctext, "image config", &c, err));
	yajl_val ids = hutch_json_get(hutch_json_get(c, "rootfs"), "diff_ids");
	if (!YAJL_IS_ARRAY(ids) || ids->u.array.len != layers->u.array.len)
		return hutch_fail(err, EINVAL,
				  "manifest.json: layers do not match rootfs.diff_ids");
	size_t n = layers->u.array.len;
	im->total_layers = n;
	_cleanup_free_ struct img_desc *descs = hutch_xcalloc(n + 1, sizeof(*descs));
	for (size_t i = 0; i < n; i++) {
		yajl_val l = layers->u.array.values[i], id = ids->u.array.values[i];
		if (!YAJL_IS_STRING(l) || !YAJL_IS_STRING(id) || !img_digest_valid(id->u.string))
			return hutch_fail(err, EINVAL, "manifest.json: layer %zu: invalid", i);
		TRY(import_layer(im, l->u.string, NULL, id->u.string, &descs[i], err));
	}
	mtext = img_manifest_json(&cdesc, descs, n);
	if (YAJL_IS_ARRAY(tags) && tags->u.array.len && YAJL_IS_STRING(tags->u.array.values[0]))
		fallback = hutch_xstrdup(tags->u.array.values[0]->u.string);
	else
		fallback = default_name(im->src, NULL);
	im->res->kind = "docker-archive";
	return finish(im, ctext, mtext, fallback, err);
}

static void now_rfc3339(char buf[HUTCH_UTC_MAX])
{
	struct timespec ts = { .tv_sec = time(NULL) };
	hutch_utc_stamp(&ts, false, buf);
}

/* The config of a rootfs tar: the platform asked for (the host's), a default PATH, one
 * layer. */
static char *rootfs_config(const char *diff_id, const char *src, const struct img_platform *p)
{
	char created[HUTCH_UTC_MAX];
	now_rfc3339(created);
	_cleanup_gen_ yajl_gen g = yajl_gen_alloc(NULL);
	yajl_gen_map_open(g);
	hutch_json_gen_str(g, "created");
	hutch_json_gen_str(g, created);
	hutch_json_gen_str(g, "architecture");
	hutch_json_gen_str(g, p->arch);
	hutch_json_gen_str(g, "os");
	hutch_json_gen_str(g, p->os);
	if (*p->variant) {
		hutch_json_gen_str(g, "variant");
		hutch_json_gen_str(g, p->variant);
	}
	hutch_json_gen_str(g, "config");
	yajl_gen_map_open(g);
	hutch_json_gen_str(g, "Env");
	yajl_gen_array_open(g);
	hutch_json_gen_str(g, "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
	yajl_gen_array_close(g);
	yajl_gen_map_close(g);
	hutch_json_gen_str(g, "rootfs");
	yajl_gen_map_open(g);
	hutch_json_gen_str(g, "type");
	hutch_json_gen_str(g, "layers");
	hutch_json_gen_str(g, "diff_ids");
	yajl_gen_array_open(g);
	hutch_json_gen_str(g, diff_id);
	yajl_gen_array_close(g);
	yajl_gen_map_close(g);
	hutch_json_gen_str(g, "history");
	yajl_gen_array_open(g);
	yajl_gen_map_open(g);
	hutch_json_gen_str(g, "created");
	hutch_json_gen_str(g, created);
	hutch_json_gen_str(g, "created_by");
	_cleanup_free_ char *by = hutch_xasprintf("hutch image import %s", src);
	hutch_json_gen_str(g, by);
	yajl_gen_map_close(g);
	yajl_gen_array_close(g);
	yajl_gen_map_close(g);
	const unsigned char *buf;
	size_t len;
	yajl_gen_get_buf(g, &buf, &len);
	return strndup((const char *)buf, len);
}

static int import_rootfs(struct import *im, int fd, struct hutch_err *err)
{
	struct img_desc layer = { 0 };
	im->total_layers = 1;
	TRY(import_layer_fd(im, fd, im->src, NULL, NULL, &layer, err));
	_cleanup_free_ char *config = rootfs_config(layer.digest, im->src, &im->want);
	struct img_desc cdesc = { .media_type = "application/vnd.oci.image.config.v1+json",
				  .size = strlen(config) };
	img_sha_buf(config, cdesc.size, cdesc.digest);
	_cleanup_free_ char *manifest = img_manifest_json(&cdesc, &layer, 1);
	_cleanup_free_ char *fallback = default_name(im->src, NULL);
	im->res->kind = "rootfs";
	return finish(im, config, manifest, fallback, err);
}

static bool all_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strchr("0123456789abcdef", s[i]) || !s[i])
			return false;
	return true;
}

/* Names an OCI layout or a docker-archive may hold at its top. */
static bool image_archive_name(const char *n)
{
	static const char *const fixed[] = {
		"", "oci-layout", "index.json", "manifest.json", "repositories", "blobs"
	};
	for (size_t i = 0; i < ARRAY_SIZE(fixed); i++)
		if (!strcmp(n, fixed[i]))
			return true;
	if (hutch_str_has_prefix(n, "blobs/"))
		return true;
	return strlen(n) >= 64 && all_hex(n, 64) && (!n[64] || n[64] == '/' || n[64] == '.');
}

/* Reads a tar's names until one says what it is: "oci", "docker" or "rootfs". */
static int classify_tar(int fd, const char **kind, struct hutch_err *err)
{
	struct archive *a = archive_read_new();
	struct archive_entry *e;
	bool oci = false, docker = false, other = false;
	archive_read_support_filter_gzip(a);
	archive_read_support_filter_zstd(a);
	archive_read_support_filter_xz(a);
	archive_read_support_filter_bzip2(a);
	archive_read_support_format_tar(a);
	int r = archive_read_open_fd(a, fd, 65536);
	/* ARCHIVE_WARN is a name not in the locale's charset (a UTF-8 "café" in C): the tar is
	 * fine, and the unpack takes it as it comes. */
	while ((r == ARCHIVE_OK || r == ARCHIVE_WARN) && !other &&
	       ((r = archive_read_next_header(a, &e)) == ARCHIVE_OK || r == ARCHIVE_WARN)) {
		const char *n = archive_entry_pathname(e);
		if (!n) { /* not convertible: no name of an image archive's */
			other = true;
			break;
		}
		while (n[0] == '.' && n[1] == '/')
			n += 2;
		oci |= !strcmp(n, "oci-layout");
		docker |= !strcmp(n, "manifest.json");
		other = !image_archive_name(n) && strcmp(n, ".");
	}
	if (r != ARCHIVE_OK && r != ARCHIVE_EOF && r != ARCHIVE_WARN) {
		hutch_fail(err, EINVAL, "not a tar archive: %s", archive_error_string(a));
		archive_read_free(a);
		return -EINVAL;
	}
	archive_read_free(a);
	*kind = other ? "rootfs" : oci ? "oci" : docker ? "docker" : "rootfs";
	return lseek(fd, 0, SEEK_SET) < 0 ? hutch_fail_errno(err, errno, "seek") : 0;
}

static bool zero_block(const char *p, size_t n)
{
	return p[0] == 0 && !memcmp(p, p + 1, n - 1);
}

int img_tmp_fill(struct img_store *s, int in, int out, const struct img_limits *lim,
		 const char *what, struct hutch_err *err)
{
	/* The import's limits hold for its copy too (a pipe may never end; a directory's sparse
	 * file costs its maker nothing and tar sends its holes as zeros), counted by the bytes
	 * that come; blocks of zeros are left as holes in the copy. */
	struct img_budget b;
	TRY(img_budget_init(&b, lim, s->dirfd, err));
	b.size_is = "the copy in the store's tmp";
	_cleanup_free_ char *buf = hutch_xmalloc(65536);
	uint64_t total = 0;
	for (;;) {
		/* whole 4 KiB blocks (a pipe gives what it has), so a block of zeros is one */
		ssize_t n = hutch_read_all(in, buf, 65536);
		if (n < 0)
			return hutch_fail_errno(err, (int)-n, "%s: read", what);
		size_t got = (size_t)n;
		if (got == 0)
			return ftruncate(out, (off_t)total) < 0
				       ? hutch_fail_errno(err, errno, "%s: the store's tmp", what)
				       : 0;
		if (img_budget_check_bytes(&b, total + got, err) < 0)
			return hutch_err_prefix(err, "%s: ", what);
		for (size_t k = 0; k < got; k += 4096) {
			size_t len = got - k < 4096 ? got - k : 4096;
			if (len == 4096 && zero_block(buf + k, len))
				continue;
			for (size_t done = 0; done < len;) {
				ssize_t w = pwrite(out, buf + k + done, len - done,
						   (off_t)(total + k + done));
				if (w < 0 && errno == EINTR)
					continue;
				if (w < 0)
					return hutch_fail_errno(
						err, errno, "%s: write to the store's tmp", what);
				done += (size_t)w;
			}
		}
		total += got;
	}
}

/* GNU tar in the directory dirfd, the archive to out: the exact command the docs give for
 * a rootfs, so that a directory and `tar -C DIR --numeric-owner --xattrs -cf - . | hutch
 * image import -` make the same layer, byte for byte (GNU tar's order and headers; no
 * symlink in the tree is followed). Never returns. */
static void run_tar(int dirfd, int out)
{
	static char *const argv[] = { "tar", "--numeric-owner", "--xattrs", "-cf", "-", ".", NULL };
	static char *const env[] = { "LC_ALL=C", "PATH=/usr/bin:/bin", NULL };
	int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fchdir(dirfd) < 0 || null < 0 || dup2(null, 0) < 0 || dup2(out, 1) < 0)
		_exit(127);
	execve("/usr/bin/tar", argv, env);
	execve("/bin/tar", argv, env);
	dprintf(2, "hutch: error: image import: cannot run tar: %s\n", strerror(errno));
	_exit(127);
}

/* A plain root filesystem directory: tar'd into the store's tmp (as a pipe would be), then
 * imported as the rootfs tar it is. */
static int import_plain_dir(struct import *im, struct hutch_err *err)
{
	_cleanup_free_ char *tmp = NULL, *path = NULL;
	int lockfd = -1, p[2] = { -1, -1 }, out = -1;
	pid_t pid = -1;
	TRY(img_tmp_create(im->s, "import", &tmp, &lockfd, err));
	path = hutch_xasprintf("%s/dir.tar", tmp);
	out = openat(im->s->dirfd, path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	int r = out < 0 ? hutch_fail_errno(err, errno, "store: %s", path) : 0;
	if (r >= 0 && pipe2(p, O_CLOEXEC) < 0)
		r = hutch_fail_errno(err, errno, "pipe");
	if (r >= 0 && (pid = fork()) < 0)
		r = hutch_fail_errno(err, errno, "fork tar");
	if (pid == 0)
		run_tar(im->srcfd, p[1]);
	if (p[1] >= 0)
		close(p[1]);
	if (r >= 0)
		r = img_tmp_fill(im->s, p[0], out, im->lim, im->src, err);
	if (p[0] >= 0)
		close(p[0]); /* a tar still writing gets SIGPIPE */
	int status = 0;
	if (pid > 0 && waitpid(pid, &status, 0) == pid && r >= 0 &&
	    (!WIFEXITED(status) || WEXITSTATUS(status)))
		r = hutch_fail(err, EIO,
			       "tar of the directory failed (%s %d; its message is above)",
			       WIFEXITED(status) ? "exit status" : "signal",
			       WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
	if (r >= 0 && lseek(out, 0, SEEK_SET) < 0)
		r = hutch_fail_errno(err, errno, "seek");
	if (r >= 0)
		r = import_rootfs(im, out, err);
	if (r >= 0)
		im->res->kind = "directory";
	if (out >= 0)
		close(out);
	img_tmp_remove(im->s, tmp, lockfd);
	return r;
}

/* A directory: an OCI layout, a docker-archive's, or (the source itself: plain) a rootfs. */
static int import_dir(struct import *im, bool plain_ok, struct hutch_err *err)
{
	struct stat st;
	if (fstatat(im->srcfd, "oci-layout", &st, AT_SYMLINK_NOFOLLOW) == 0)
		return import_oci(im, err);
	if (fstatat(im->srcfd, "manifest.json", &st, AT_SYMLINK_NOFOLLOW) == 0)
		return import_docker(im, err);
	if (plain_ok)
		return import_plain_dir(im, err);
	return hutch_fail(err, EINVAL,
			  "%s: neither an OCI layout (oci-layout) nor a docker-archive "
			  "(manifest.json)",
			  im->src);
}

/* An image archive: unpacked (safely, it is just as hostile) into tmp, then read as a dir.
 * The archive has its own budget (the same limits), and the layers' is made after it, so
 * that the free space they may take half of is what the archive left. */
static int import_archive(struct import *im, int fd, struct hutch_err *err)
{
	_cleanup_free_ char *tmp = NULL;
	struct img_budget outer;
	int lockfd = -1;
	TRY(img_tmp_create(im->s, "archive", &tmp, &lockfd, err));
	int r = img_budget_init(&outer, im->lim, im->s->dirfd, err);
	im->srcfd = r < 0 ? -1 : openat(im->s->dirfd, tmp, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (r >= 0 && im->srcfd < 0)
		r = hutch_fail_errno(err, errno, "store: %s", tmp);
	if (r >= 0)
		r = img_unpack_layer(fd, im->srcfd, IMG_UNPACK_ARCHIVE, &outer, NULL, NULL, NULL,
				     err);
	if (r >= 0)
		r = img_budget_init(&im->budget, im->lim, im->s->dirfd, err);
	if (r >= 0)
		r = import_dir(im, false, err);
	if (im->srcfd >= 0)
		close(im->srcfd);
	img_tmp_remove(im->s, tmp, lockfd);
	return r;
}

int img_import(struct img_store *s, const char *src, const char *name, const struct img_limits *lim,
	       const struct img_platform *platform, struct img_import_result *res,
	       struct hutch_err *err)
{
	struct import im = {
		.s = s, .srcfd = -1, .src = src, .name = name, .lim = lim, .res = res
	};
	struct img_platform host;
	img_host_platform(&host);
	im.want = platform ? *platform : host;
	im.foreign = !img_platform_matches(&host, &im.want);
	memset(res, 0, sizeof(*res));
	/* Resolved once (a symlink only where root or the caller alone could have put it), of
	 * a type checked before anything reads it: a FIFO is refused, not waited on. */
	struct stat st;
	_cleanup_close_ int at = hutch_chase("import", src, 0, NULL, err);
	if (at < 0)
		return at;
	if (fstat(at, &st) < 0)
		return hutch_fail_errno(err, errno, "import %s", src);
	if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
		return hutch_fail(err, EINVAL,
				  "import %s: not a file or a directory (an OCI layout, a "
				  "docker-archive, a rootfs tar or a rootfs directory)",
				  src);
	char fdp[HUTCH_FD_PATH_MAX];
	_cleanup_close_ int fd =
		open(hutch_fd_path(at, fdp),
		     (S_ISDIR(st.st_mode) ? O_DIRECTORY : 0) | O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return hutch_fail_errno(err, errno, "import %s", src);
	int r = img_budget_init(&im.budget, lim, s->dirfd, err);
	if (r >= 0 && S_ISDIR(st.st_mode)) {
		im.srcfd = fd;
		r = import_dir(&im, true, err);
	} else if (r >= 0) {
		const char *kind;
		r = classify_tar(fd, &kind, err);
		if (r >= 0)
			r = strcmp(kind, "rootfs") ? import_archive(&im, fd, err)
						   : import_rootfs(&im, fd, err);
	}
	drop_pending(&im);
	return r < 0 ? hutch_err_prefix(err, "import %s: ", src) : 0;
}
