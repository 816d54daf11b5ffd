// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target: what images/ reads from an image. The first byte picks: r a reference
 * (img_parse_ref), c an image config (img_run_config_parse), p a tar entry name
 * (img_clean_path, img_whiteout_kind, held to a model), o / d an OCI layout / docker-archive
 * directory imported into a fresh store and read back, u a User against /etc/passwd and
 * /etc/group. Uppercase: import with --name. The rest is NUL-separated pieces (see import).
 */
#include "fuzz.h"
#include "img-internal.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_PIECES 10

static char root[PATH_MAX]; /* one temp dir per process; each input cleans up in it */
static int rootfd = -1;

static void remove_root(void)
{
	if (root[0])
		img_remove_tree_at(AT_FDCWD, root);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *tmp = getenv("TMPDIR");
	(void)argc;
	(void)argv;
	snprintf(root, sizeof(root), "%s/hutch-fuzz-image-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(root) || (rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0) {
		perror(root);
		exit(1);
	}
	atexit(remove_root);
	return 0;
}

/*
 * Layers are never unpacked here: this process writes to the host's real filesystem, and tar
 * contents are fuzzed through their names alone (path mode). Linked with
 * -Wl,--wrap=img_unpack_layer, import calls this instead: it takes the stream as an
 * uncompressed layer (diff_id = blob digest) and writes nothing into the layer.
 */
int __wrap_img_unpack_layer(int fd, int layerfd, enum img_unpack_kind kind,
			    struct img_budget *budget, char diff_id[IMG_DIGEST_MAX],
			    char blob[IMG_DIGEST_MAX], struct img_unpack_stats *st,
			    struct hutch_err *err);
int __wrap_img_unpack_layer(int fd, int layerfd, enum img_unpack_kind kind,
			    struct img_budget *budget, char diff_id[IMG_DIGEST_MAX],
			    char blob[IMG_DIGEST_MAX], struct img_unpack_stats *st,
			    struct hutch_err *err)
{
	struct img_unpack_stats dummy;
	struct img_sha h;
	char buf[4096];
	ssize_t n;

	(void)layerfd;
	(void)kind;
	(void)budget;
	st = st ? st : &dummy;
	memset(st, 0, sizeof(*st));
	img_sha_init(&h);
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		img_sha_update(&h, buf, (size_t)n);
		st->tar_size += (uint64_t)n;
	}
	if (n < 0)
		return hutch_fail_errno(err, errno, "layer: read");
	st->bytes = st->tar_size;
	char d[IMG_DIGEST_MAX];
	img_sha_final(&h, d);
	if (diff_id)
		memcpy(diff_id, d, IMG_DIGEST_MAX);
	if (blob)
		memcpy(blob, d, IMG_DIGEST_MAX);
	return 0;
}

/* ---- r: references ---- */

static void fuzz_ref(const char *ref)
{
	struct hutch_err err = { 0 };
	char *name = NULL, *tag = NULL, *n2 = NULL, *t2 = NULL;

	if (img_parse_ref(ref, &name, &tag, &err) < 0) {
		FUZZ_CHECK(err.msg[0], "no message");
		return;
	}
	FUZZ_CHECK(name[0] && (!tag || tag[0]), "'%s': empty name or tag", ref);
	/* NAME:TAG as hutch writes it back (import, tag) names the same image */
	char *again = tag ? hutch_xasprintf("%s:%s", name, tag) : hutch_xstrdup(name);
	FUZZ_CHECK(img_parse_ref(again, &n2, &t2, &err) == 0 && !strcmp(name, n2) && !tag == !t2 &&
			   (!tag || !strcmp(tag, t2)),
		   "'%s' -> '%s' does not parse back (%s)", ref, again, err.msg);
	free(again);
	free(name);
	free(tag);
	free(n2);
	free(t2);
}

/* ---- p: tar entry names ---- */

/* The reference: components split on '/', "" and "." dropped, ".." refused, joined by '/'.
 * *kept is the length of what was kept up to the end or the "..". */
static int model_clean(const char *in, char *out, size_t *kept)
{
	size_t o = 0;
	for (const char *p = in; *p;) {
		size_t n = strcspn(p, "/");
		if (n == 2 && !strncmp(p, "..", 2)) {
			*kept = o;
			return -EPERM;
		}
		if (n && !(n == 1 && *p == '.')) {
			if (o)
				out[o++] = '/';
			memcpy(out + o, p, n);
			o += n;
		}
		p += n;
		p += *p == '/';
	}
	out[o] = '\0';
	*kept = o;
	return 0;
}

static void check_clean(const char *in, size_t cap)
{
	struct hutch_err err = { 0 };
	char *out = malloc(cap), *ref = malloc(strlen(in) + 1); /* exact: ASan sees overruns */
	size_t kept;

	int r = img_clean_path(in, out, cap, &err);
	int m = model_clean(in, ref, &kept);
	/* "Too long" when what it keeps would not fit (it keeps a byte to spare) */
	if (kept + 2 <= cap)
		FUZZ_CHECK(r == m, "'%s' (cap %zu): %d, the model %d", in, cap, r, m);
	else
		FUZZ_CHECK(r == m || r == -ENAMETOOLONG, "'%s' (cap %zu): %d", in, cap, r);
	FUZZ_CHECK(r >= 0 || err.msg[0], "no message");
	if (r == 0) {
		FUZZ_CHECK(!strcmp(out, ref), "'%s' -> '%s', the model '%s'", in, out, ref);
		const char *base = strrchr(out, '/') ? strrchr(out, '/') + 1 : out, *hidden;
		enum img_whiteout k = img_whiteout_kind(base, &hidden);
		FUZZ_CHECK((k == IMG_WH_NONE) == !hutch_str_has_prefix(base, ".wh."), "%s", base);
		FUZZ_CHECK((k == IMG_WH_OPAQUE) == !strcmp(base, ".wh..wh..opq"), "%s", base);
		FUZZ_CHECK((k == IMG_WH_HIDE) == !!hidden, "%s", base);
		/* what a whiteout hides is one name of this directory */
		if (hidden)
			FUZZ_CHECK(hidden == base + 4 && *hidden && !strchr(hidden, '/') &&
					   strcmp(hidden, ".") && strcmp(hidden, ".."),
				   "'%s' hides '%s'", base, hidden);
	}
	free(out);
	free(ref);
}

static void fuzz_path(const char *in)
{
	check_clean(in, PATH_MAX);
	check_clean(in, 16); /* the length checks, within reach of short inputs */
}

/* ---- o, d: OCI layouts and docker-archives ---- */

static void write_at(int dfd, const char *path, const char *text)
{
	int fd = openat(dfd, path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	FUZZ_CHECK(fd >= 0, "create %s: %s", path, strerror(errno));
	FUZZ_CHECK(hutch_write_all(fd, text, strlen(text)) == 0, "write %s", path);
	close(fd);
}

/* In piece k, "@N" becomes piece N's digest and "#N" its hex, for pieces after k. */
static char *substitute(const char *in, size_t k, size_t n, char digests[][IMG_DIGEST_MAX])
{
	size_t len = strlen(in), o = 0;
	char *out = hutch_xmalloc(len * 36 + 1); /* "@1" (2 bytes) -> 71 */
	for (const char *p = in; *p; p++) {
		size_t ref = p[0] == '@' || p[0] == '#' ? (size_t)(p[1] - '0') : 0;
		if (ref > k && ref < n) {
			const char *d = p[0] == '@' ? digests[ref] : IMG_HEX(digests[ref]);
			memcpy(out + o, d, strlen(d));
			o += strlen(d);
			p++;
		} else {
			out[o++] = *p;
		}
	}
	out[o] = '\0';
	return out;
}

/* What import stored reads back: by name, its config, its layers, and in the list. */
static void read_back(struct img_store *s, const struct img_import_result *res)
{
	struct hutch_err err = { 0 };
	struct img_info info;
	struct img_run_config rc;
	char digest[IMG_DIGEST_MAX];
	char **dirs = NULL, *name = NULL, *tag = NULL;
	size_t n;

	FUZZ_CHECK(res->name && img_parse_ref(res->name, &name, &tag, &err) == 0,
		   "imported under a name that does not parse: %s", res->name);
	free(name);
	free(tag);
	FUZZ_CHECK(img_resolve(s, res->name, NULL, digest, &err) == 0 &&
			   !strcmp(digest, res->digest),
		   "%s: %s", res->name, err.msg);
	FUZZ_CHECK(img_inspect(s, res->name, &info, &err) == 0, "inspect: %s", err.msg);
	FUZZ_CHECK(info.n_layers == res->n_layers, "%zu layers, imported %zu", info.n_layers,
		   res->n_layers);
	img_info_clear(&info);
	if (img_run_config(s, res->name, &rc, &err) == 0)
		img_run_config_clear(&rc);
	FUZZ_CHECK(img_layer_dirs(s, res->name, &dirs, &n, &err) == 0, "layers: %s", err.msg);
	hutch_strv_free(dirs);
	struct img_info *v = NULL;
	FUZZ_CHECK(img_list(s, &v, &n, &err) == 0 && n == 1, "list: %zu", n);
	for (size_t i = 0; i < n; i++)
		img_info_clear(&v[i]);
	free(v);
}

/*
 * Piece 0 is index.json (o) or manifest.json (d); piece N (1-9) is stored as a blob,
 * blobs/sha256/<its digest>, which "@N" and "#N" in earlier pieces name. The layout and the
 * store are made afresh for each input and removed after it.
 */
static void fuzz_import(char **pieces, size_t n, bool oci, bool named)
{
	char digests[MAX_PIECES][IMG_DIGEST_MAX], path[PATH_MAX + 64];
	struct hutch_err err = { 0 };
	struct img_store *s = NULL;
	struct img_import_result res;

	FUZZ_CHECK(mkdirat(rootfd, "layout", 0755) == 0 &&
			   mkdirat(rootfd, "layout/blobs", 0755) == 0 &&
			   mkdirat(rootfd, "layout/blobs/sha256", 0755) == 0,
		   "mkdir: %s", strerror(errno));
	int dfd = openat(rootfd, "layout", O_PATH | O_DIRECTORY | O_CLOEXEC);
	for (size_t k = n; k-- > 0;) {
		char *text = substitute(pieces[k], k, n, digests);
		img_sha_buf(text, strlen(text), digests[k]);
		snprintf(path, sizeof(path), "blobs/sha256/%s", IMG_HEX(digests[k]));
		write_at(dfd, k ? path : oci ? "index.json" : "manifest.json", text);
		free(text);
	}
	if (oci)
		write_at(dfd, "oci-layout", "{\"imageLayoutVersion\": \"1.0.0\"}");
	close(dfd);

	snprintf(path, sizeof(path), "%s/store", root);
	FUZZ_CHECK(img_store_open(path, true, false, &s, &err) == 0, "store: %s", err.msg);
	snprintf(path, sizeof(path), "%s/layout", root);
	if (img_import(s, path, named ? "fuzz/named:tag" : NULL, NULL, NULL, &res, &err) == 0)
		read_back(s, &res);
	else
		FUZZ_CHECK(err.msg[0], "import failed without a message");
	img_import_result_clear(&res);
	img_store_free(s);
	img_remove_tree_at(rootfd, "store");
	img_remove_tree_at(rootfd, "layout");
}

/* ---- u: User against the image's /etc/passwd and /etc/group ---- */

static void fuzz_user(char **pieces, size_t n)
{
	struct hutch_err err = { 0 };
	uint32_t uid, gid;

	FUZZ_CHECK(mkdirat(rootfd, "rootfs", 0755) == 0 && mkdirat(rootfd, "rootfs/etc", 0755) == 0,
		   "mkdir: %s", strerror(errno));
	if (n > 1)
		write_at(rootfd, "rootfs/etc/passwd", pieces[1]);
	if (n > 2)
		write_at(rootfd, "rootfs/etc/group", pieces[2]);
	int fd = openat(rootfd, "rootfs", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (img_resolve_user(fd, pieces[0], &uid, &gid, &err) < 0)
		FUZZ_CHECK(err.msg[0], "no message");
	close(fd);
	img_remove_tree_at(rootfd, "rootfs");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char modes[] = "rcpodu";
	char *pieces[MAX_PIECES];
	size_t n = 0;

	if (size < 1)
		return 0;
	const char *m = strchr(modes, data[0] | 0x20);
	int mode = m && *m ? (int)(m - modes) : data[0] % 6;
	bool named = !(data[0] & 0x20);
	char *text = hutch_xmalloc(size); /* the rest, NUL-terminated */
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	for (char *p = text; n < MAX_PIECES; p += strlen(p) + 1) {
		pieces[n++] = p;
		if (p + strlen(p) >= text + size - 1)
			break;
	}

	switch (mode) {
	case 0:
		fuzz_ref(text);
		break;
	case 1: {
		struct img_run_config c;
		struct hutch_err err = { 0 };
		if (img_run_config_parse(text, &c, &err) == 0)
			img_run_config_clear(&c);
		else
			FUZZ_CHECK(err.msg[0], "no message");
		break;
	}
	case 2:
		fuzz_path(text);
		break;
	case 3:
	case 4:
		fuzz_import(pieces, n, mode == 3, named);
		break;
	default:
		fuzz_user(pieces, n);
		break;
	}
	free(text);
	return 0;
}
