// SPDX-License-Identifier: Apache-2.0
/*
 * images/: reference parsing and the inputs hash (pure), then hostile layers unpacked into
 * temp dirs (traversal, absolute names, symlink and hardlink escapes, devices, whiteouts),
 * a store round trip: import a rootfs tar, resolve, list, remove, prune; and a --copy tree's
 * digest and copy.
 */
#include "img-internal.h"
#include "tap.h"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/xattr.h>

struct ent {
	const char *name;
	char type;	  /* f file, d dir, l symlink, h hardlink, c char device */
	const char *data; /* content, or link target */
};

/* A tar of ents at path (gzip when gz). */
static void mktar(const char *path, const struct ent *e, size_t n, bool gz)
{
	struct archive *a = archive_write_new();
	archive_write_set_format_pax_restricted(a);
	if (gz)
		archive_write_add_filter_gzip(a);
	archive_write_open_filename(a, path);
	for (size_t i = 0; i < n; i++) {
		struct archive_entry *x = archive_entry_new();
		archive_entry_set_pathname(x, e[i].name);
		archive_entry_set_perm(x, 0755);
		switch (e[i].type) {
		case 'f':
			archive_entry_set_filetype(x, AE_IFREG);
			archive_entry_set_size(x, (la_int64_t)strlen(e[i].data));
			break;
		case 'd':
			archive_entry_set_filetype(x, AE_IFDIR);
			break;
		case 'l':
			archive_entry_set_filetype(x, AE_IFLNK);
			archive_entry_set_symlink(x, e[i].data);
			break;
		case 'h':
			archive_entry_set_filetype(x, AE_IFREG);
			archive_entry_set_hardlink(x, e[i].data);
			break;
		case 'c':
			archive_entry_set_filetype(x, AE_IFCHR);
			archive_entry_set_rdevmajor(x, 1);
			archive_entry_set_rdevminor(x, 3);
			break;
		}
		archive_write_header(a, x);
		if (e[i].type == 'f')
			archive_write_data(a, e[i].data, strlen(e[i].data));
		archive_entry_free(x);
	}
	archive_write_close(a);
	archive_write_free(a);
}

static char tmpdir[] = "/tmp/test-img-XXXXXX";

/* Unpacks the tar tmpdir/NAME.tar into a fresh dir tmpdir/NAME/root, charged to b. */
static int unpack_tar(const char *name, struct img_budget *b, struct img_unpack_stats *st,
		      struct hutch_err *err)
{
	char path[512], tar[512];
	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%s/root", tmpdir, name);
	mkdir(path, 0755);
	snprintf(tar, sizeof(tar), "%s/%s.tar", tmpdir, name);
	int fd = open(tar, O_RDONLY | O_CLOEXEC);
	int root = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	int r = img_unpack_layer(fd, root, IMG_UNPACK_LAYER, b, NULL, NULL, st, err);
	close(fd);
	close(root);
	return r;
}

/* Unpacks ents into a fresh dir tmpdir/NAME/root; returns unpack's result. */
static int unpack(const char *name, const struct ent *e, size_t n, struct img_unpack_stats *st,
		  struct hutch_err *err)
{
	char tar[512];
	snprintf(tar, sizeof(tar), "%s/%s.tar", tmpdir, name);
	mktar(tar, e, n, false);
	return unpack_tar(name, NULL, st, err);
}

static bool exists(const char *fmt, const char *a)
{
	char p[512];
	struct stat st;
	snprintf(p, sizeof(p), fmt, tmpdir, a);
	return lstat(p, &st) == 0;
}

static void test_refs(void)
{
	struct hutch_err err = { 0 };
	char *n = NULL, *t = NULL;
	ok(img_parse_ref("debian:12", &n, &t, &err) == 0 && !strcmp(n, "debian") &&
		   !strcmp(t, "12"),
	   "name:tag");
	free(n), free(t);
	ok(img_parse_ref("localhost:5000/a/b", &n, &t, &err) == 0 &&
		   !strcmp(n, "localhost:5000/a/b") && !t,
	   "host:port/name has no tag");
	free(n), free(t);
	ok(img_parse_ref("Upper", &n, &t, &err) == -EINVAL, "uppercase names are refused");
	ok(img_parse_ref("a:b/c", &n, &t, &err) == 0 && !t, "a colon before a slash is a port");
	free(n), free(t);
	ok(img_parse_ref("a:-x", &n, &t, &err) == -EINVAL, "a tag starting with - is refused");
	ok(img_parse_ref("../x", &n, &t, &err) == -EINVAL, "a name starting with . is refused");
	ok(img_parse_ref("sha256:ab/busybox:1.36", &n, &t, &err) == -EINVAL &&
		   img_parse_ref("sha256:latest", &n, &t, &err) == -EINVAL,
	   "a name starting sha256: is refused: img_resolve takes it for a digest");
	ok(img_parse_ref("sha256", &n, &t, &err) == 0 && !t, "sha256 alone is a name");
	free(n), free(t);

	static const struct {
		const char *in, *full, *shrt;
	} names[] = {
		{ "busybox", "docker.io/library/busybox", "busybox" },
		{ "library/busybox", "docker.io/library/busybox", "busybox" },
		{ "docker.io/busybox", "docker.io/library/busybox", "busybox" },
		{ "index.docker.io/library/busybox", "docker.io/library/busybox", "busybox" },
		{ "me/app", "docker.io/me/app", "me/app" },
		{ "docker.io/me/app", "docker.io/me/app", "me/app" },
		{ "quay.io/me/app", "quay.io/me/app", "quay.io/me/app" },
		{ "localhost/app", "localhost/app", "localhost/app" },
		{ "localhost:5000/app", "localhost:5000/app", "localhost:5000/app" },
		{ "registry/app", "docker.io/registry/app", "registry/app" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		char *full = img_full_name(names[i].in), *shrt = img_short_name(names[i].in);
		ok(!strcmp(full, names[i].full) && !strcmp(shrt, names[i].shrt), "%s: %s, %s",
		   names[i].in, full, shrt);
		free(full), free(shrt);
	}
	struct img_platform pf, have = { "linux", "arm64", "" };
	ok(img_parse_platform("linux/arm64/v8", &pf, &err) == 0 && !strcmp(pf.os, "linux") &&
		   !strcmp(pf.arch, "arm64") && !strcmp(pf.variant, "v8") &&
		   img_platform_matches(&pf, &have),
	   "os/arch/variant; an image without a variant runs on any");
	strcpy(have.variant, "v7");
	ok(!img_platform_matches(&pf, &have), "another variant does not");
	ok(img_parse_platform("linux", &pf, &err) == -EINVAL &&
		   img_parse_platform("linux/", &pf, &err) == -EINVAL &&
		   img_parse_platform("Linux/amd64", &pf, &err) == -EINVAL &&
		   img_parse_platform("linux/amd64/v1/x", &pf, &err) == -EINVAL,
	   "a bad --platform is refused (%s)", err.msg);
	struct img_platform noos = { "", "amd64", "" };
	ok(img_parse_platform("linux/amd64", &pf, &err) == 0 && img_platform_matches(&pf, &noos),
	   "a config without os is linux's");

	char *shown = img_display_name("docker.io/library/bb:v1");
	ok(!strcmp(shown, "bb:v1"), "shown as docker does: %s", shown);
	free(shown);
	ok(img_name_matches("bbdock", "docker.io/library/bbdock:v1") &&
		   img_name_matches("docker.io/library/bb*", "docker.io/library/bbdock:v1") &&
		   img_name_matches("bbdock:v*", "docker.io/library/bbdock:v1") &&
		   img_name_matches("bbdock:*", "bbdock:v1") &&
		   img_name_matches("*", "quay.io/a/b:1") &&
		   !img_name_matches("bbdock:v2", "docker.io/library/bbdock:v1") &&
		   !img_name_matches("bb", "docker.io/library/bbdock:v1") &&
		   !img_name_matches("library", "docker.io/library/bbdock:v1"),
	   "patterns match the short or the full name; without a tag, any tag");

	char h1[17], h2[17], h3[17];
	char *p1[] = { "curl", "git" }, *p2[] = { "git", "curl", "git" }, *p3[] = { "git" };
	struct img_inputs in = { .base_digest = "sha256:00", .packages = p1, .n_packages = 2 };
	img_inputs_hash(&in, h1);
	in.packages = p2, in.n_packages = 3;
	img_inputs_hash(&in, h2);
	in.packages = p3, in.n_packages = 1;
	img_inputs_hash(&in, h3);
	ok(strcmp(h1, h2) == 0, "package order and repeats do not change the inputs hash");
	ok(strcmp(h1, h3) != 0, "a changed package list changes it");
	char *s1[] = { "a", "b" }, *s2[] = { "b", "a" };
	in = (struct img_inputs){ .base_digest = "sha256:00", .steps = s1, .n_steps = 2 };
	img_inputs_hash(&in, h1);
	in.steps = s2;
	img_inputs_hash(&in, h2);
	ok(strcmp(h1, h2) != 0, "step order matters");
}

static void test_hostile(void)
{
	struct hutch_err err = { 0 };
	struct img_unpack_stats st;
	const struct ent trav[] = { { "ok", 'f', "x" }, { "../../escape", 'f', "evil" } };
	ok(unpack("trav", trav, 2, &st, &err) == -EPERM && !exists("%s/%s", "escape"),
	   "'..' is refused and nothing lands outside (%s)", err.msg);
	const struct ent abs[] = { { "/etc/abs", 'f', "x" } };
	ok(unpack("abs", abs, 1, &st, &err) == 0 && exists("%s/abs/root/%s", "etc/abs"),
	   "an absolute name lands inside the layer");
	char out[600];
	snprintf(out, sizeof(out), "%s/outside", tmpdir);
	mkdir(out, 0755);
	const struct ent sym[] = { { "lnk", 'l', out },
				   { "lnk/file", 'f', "evil" },
				   { "rel", 'l', "../../../../.." },
				   { "rel/file2", 'f', "evil" } };
	ok(unpack("sym", sym, 4, &st, &err) == 0 && !exists("%s/%s", "outside/file") &&
		   exists("%s/sym/root%s/file", out) && exists("%s/sym/root/%s", "file2"),
	   "writes through symlinks stay in the layer (%s)", err.msg);
	const struct ent hl[] = { { "passwd", 'h', "/etc/passwd" } };
	ok(unpack("hl", hl, 1, &st, &err) < 0 && !exists("%s/hl/root/%s", "passwd"),
	   "a hardlink to a file outside the layer is refused (%s)", err.msg);
	const struct ent twice[] = { { "a", 'f', "1" },
				     { "a", 'f', "22" },
				     { "a", 'l', "x" },
				     { "b", 'f', "3" },
				     { ".wh.b", 'f', "" } };
	ok(unpack("twice", twice, 5, &st, &err) == 0 && exists("%s/twice/root/%s", "a"),
	   "a name given twice in one layer is replaced, a whiteout after it too (%s)", err.msg);
	const struct ent hl2[] = { { "a", 'f', "x" }, { "b", 'h', "a" } };
	ok(unpack("hl2", hl2, 2, &st, &err) == 0 && exists("%s/hl2/root/%s", "b"),
	   "a hardlink inside the layer works");
	const struct ent dev[] = { { "null", 'c', NULL } };
	int r = unpack("dev", dev, 1, &st, &err);
	ok(r == 0 && st.skipped_devices == 1 && !exists("%s/dev/root/%s", "null"),
	   "a device node is never made (skipped: %zu)", st.skipped_devices);
	const struct ent wh[] = { { "d/.wh..wh..opq", 'f', "" },
				  { "d/x", 'f', "y" },
				  { ".wh.gone", 'f', "" } };
	char p[600];
	struct stat s;
	snprintf(p, sizeof(p), "%s/wh/root/gone", tmpdir);
	r = unpack("wh", wh, 3, &st, &err);
	ok(r == 0 && lstat(p, &s) == 0 && S_ISCHR(s.st_mode) && s.st_rdev == 0,
	   "a .wh. file becomes an overlayfs whiteout (%s)", err.msg);
	snprintf(p, sizeof(p), "%s/wh/root/d", tmpdir);
	char v[4] = "";
	ok(getxattr(p, geteuid() == 0 ? "trusted.overlay.opaque" : "user.overlay.opaque", v,
		    sizeof(v)) == 1 &&
		   v[0] == 'y',
	   "an opaque marker sets the overlay opaque xattr");
}

/* A pax tar of one sparse file: size bytes, of which 4096 at off hold data. */
static void mksparse(const char *name, int64_t size, int64_t off)
{
	char tar[512], data[4096];
	snprintf(tar, sizeof(tar), "%s/%s.tar", tmpdir, name);
	memset(data, 'x', sizeof(data));
	struct archive *a = archive_write_new();
	archive_write_set_format_pax(a);
	archive_write_open_filename(a, tar);
	struct archive_entry *x = archive_entry_new();
	archive_entry_set_pathname(x, "sparse");
	archive_entry_set_filetype(x, AE_IFREG);
	archive_entry_set_perm(x, 0644);
	archive_entry_set_size(x, size);
	archive_entry_sparse_add_entry(x, off, sizeof(data));
	archive_write_header(a, x);
	archive_write_data(a, data, sizeof(data));
	archive_entry_free(x);
	archive_write_close(a);
	archive_write_free(a);
}

/* The tar of ents at tmpdir/NAME.tar, unpacked charged to b. */
static int unpack_budget(const char *name, const struct ent *e, size_t n, struct img_budget *b,
			 struct img_unpack_stats *st, struct hutch_err *err)
{
	char tar[512];
	snprintf(tar, sizeof(tar), "%s/%s.tar", tmpdir, name);
	mktar(tar, e, n, false);
	return unpack_tar(name, b, st, err);
}

static void test_limits(void)
{
	struct hutch_err err = { 0 };
	struct img_unpack_stats st;
	struct img_budget b;
	int fsfd = open(tmpdir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	ok(img_budget_init(&b, NULL, fsfd, &err) == 0 && b.max_size > 0 &&
		   b.max_size <= IMG_MAX_SIZE_CAP && b.max_entries == IMG_MAX_ENTRIES_DEFAULT &&
		   b.max_ratio == IMG_MAX_RATIO_DEFAULT && b.reserve <= IMG_RESERVE_MAX,
	   "the defaults: at most 64 GiB (%s), 2M entries, a ratio of 100",
	   b.half_free ? "half the free space" : "the cap");
	struct img_limits lim = { .max_entries = 3 };
	const struct ent many[] = {
		{ "a", 'f', "1" }, { "b", 'f', "2" }, { "c", 'f', "3" }, { "d", 'f', "4" }
	};
	img_budget_init(&b, &lim, fsfd, &err);
	ok(unpack_budget("many", many, 3, &b, &st, &err) == 0, "3 entries fit in 3");
	img_budget_init(&b, &lim, fsfd, &err);
	ok(unpack_budget("many4", many, 4, &b, &st, &err) == -E2BIG &&
		   strstr(err.msg, "--max-entries") && !exists("%s/many4/root/%s", "d"),
	   "the 4th is refused before it is made (%s)", err.msg);
	const struct ent deep[] = { { "a/b/c/d/e/f", 'f', "x" } };
	img_budget_init(&b, &lim, fsfd, &err);
	ok(unpack_budget("deep", deep, 1, &b, &st, &err) == -E2BIG,
	   "directories made for a name the tar did not list count as entries");
	char big[20001];
	memset(big, 'z', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	const struct ent fat[] = { { "fat", 'f', big } };
	lim = (struct img_limits){ .max_size = 16384 };
	img_budget_init(&b, &lim, fsfd, &err);
	ok(unpack_budget("fat", fat, 1, &b, &st, &err) == -EFBIG && strstr(err.msg, "--max-size"),
	   "20000 bytes do not fit in 16 KiB (%s)", err.msg);
	mksparse("sparse", 64LL << 20, 32LL << 20);
	lim = (struct img_limits){ .max_size = 1 << 20 };
	img_budget_init(&b, &lim, fsfd, &err);
	ok(unpack_tar("sparse", &b, &st, &err) == 0 && st.allocated < (1 << 20) &&
		   exists("%s/sparse/root/%s", "sparse"),
	   "a sparse 64 MiB file with 4 KiB of data fits in 1 MiB (%llu allocated; %s)",
	   (unsigned long long)st.allocated, err.msg);
	img_budget_init(&b, NULL, fsfd, &err);
	b.stream = 2ULL << 30, b.compressed = 1 << 20;
	ok(img_budget_check_ratio(&b, &err) == -EFBIG && strstr(err.msg, "--max-ratio"),
	   "2 GiB of tar from 1 MiB is a bomb (%s)", err.msg);
	b.compressed = 100 << 20;
	ok(img_budget_check_ratio(&b, &err) == 0, "from 100 MiB it is not");
	b.stream = 1ULL << 30, b.compressed = 1;
	ok(img_budget_check_ratio(&b, &err) == 0, "nor is anything up to 1 GiB of tar");
	close(fsfd);
}

static void test_store(void)
{
	struct hutch_err err = { 0 };
	struct img_store *s = NULL;
	char path[512], tar[512], digest[IMG_DIGEST_MAX];
	snprintf(path, sizeof(path), "%s/store", tmpdir);
	snprintf(tar, sizeof(tar), "%s/rootfs.tar.gz", tmpdir);
	const struct ent e[] = { { "bin", 'd', NULL }, { "bin/hello", 'f', "hi" } };
	mktar(tar, e, 2, true);
	ok(img_store_open(path, true, false, &s, &err) == 0, "store created (%s)", err.msg);
	struct img_import_result res;
	ok(img_import(s, tar, "t/one:v1", NULL, NULL, &res, &err) == 0 &&
		   !strcmp(res.kind, "rootfs") && res.n_layers == 1,
	   "a rootfs tar imports (%s)", err.msg);
	img_import_result_clear(&res);
	ok(img_import(s, tar, "t/one:v2", NULL, NULL, &res, &err) == 0, "again under another tag");
	img_import_result_clear(&res);
	char *name = NULL;
	ok(img_resolve(s, "t/one", &name, digest, &err) == -ENOENT &&
		   strstr(err.msg, "t/one has v") && strstr(err.msg, "no tag is :latest"),
	   "a bare name is :latest, never the newest tag; the error names the tags (%s)", err.msg);
	ok(img_resolve(s, "docker.io/t/one:v2", &name, digest, &err) == 0 &&
		   !strcmp(name, "docker.io/t/one:v2"),
	   "stored by the full name (%s)", name ? name : err.msg);
	free(steal_ptr(name));
	char d1[IMG_DIGEST_MAX], d2[IMG_DIGEST_MAX];
	ok(img_resolve(s, "t/one:v1", NULL, d1, &err) == 0 &&
		   img_resolve(s, "index.docker.io/t/one:v1", NULL, d2, &err) == 0 &&
		   !strcmp(d1, d2),
	   "the short and the full name resolve alike");
	struct img_info *v = NULL;
	size_t n = 0;
	ok(img_list(s, &v, &n, &err) == 0 && n == 2 && !strcmp(v[0].name, "docker.io/t/one:v1"),
	   "list is sorted");
	for (size_t i = 0; i < n; i++)
		img_info_clear(&v[i]);
	free(v);
	/* A store from before: names kept as given ("old:2", "localhost/x" untouched). */
	char legacy[600];
	snprintf(legacy, sizeof(legacy), "%s/names/old:2", path);
	FILE *f = fopen(legacy, "w");
	fprintf(f, "%s\n", d1);
	fclose(f);
	ok(img_resolve(s, "old:2", &name, digest, &err) == 0 && !strcmp(name, "old:2") &&
		   !strcmp(digest, d1) &&
		   img_resolve(s, "docker.io/library/old:2", NULL, digest, &err) == 0,
	   "a name stored unqualified still resolves, short or full (%s)", err.msg);
	free(steal_ptr(name));
	ok(img_tag(s, "old:2", d1, &err) == 0 && access(legacy, F_OK) < 0 &&
		   img_resolve(s, "old:2", &name, digest, &err) == 0 &&
		   !strcmp(name, "docker.io/library/old:2"),
	   "tagging it again stores it full and drops the old file");
	free(steal_ptr(name));
	char at[IMG_DIGEST_MAX + 16];
	snprintf(at, sizeof(at), "old:2@%s", d1);
	ok(img_resolve(s, at, &name, digest, &err) == 0 && !name && !strcmp(digest, d1) &&
		   img_resolve(s,
			       "old@sha256:0000000000000000000000000000000000000000000000000000"
			       "000000000000",
			       NULL, digest, &err) == -ENOENT,
	   "NAME@DIGEST is that manifest, when the store has it");
	ok(img_remove(s, "old:2", &err) == 0, "rm by the short name");
	v = NULL, n = 0;
	ok(img_list(s, &v, &n, &err) == 0 && n == 2 && !strcmp(v[0].name, "docker.io/t/one:v1"),
	   "list is sorted");
	for (size_t i = 0; i < n; i++)
		img_info_clear(&v[i]);
	free(v);
	ok(img_import(s, tar, "sha256:0123/x:1", NULL, NULL, &res, &err) == -EINVAL,
	   "import refuses a name that would read back as a digest (%s)", err.msg);
	img_import_result_clear(&res);
	ok(img_remove(s, "t/one:v1", &err) == 0 && img_remove(s, "t/one:v2", &err) == 0 &&
		   img_resolve(s, "t/one", NULL, digest, &err) == -ENOENT,
	   "rm removes names");
	img_store_free(s);
	struct img_prune_result pr;
	ok(img_store_open(path, false, true, &s, &err) == 0 && img_prune(s, &pr, &err) == 0 &&
		   pr.layers == 1 && pr.blobs >= 2,
	   "prune drops the unreferenced layer and blobs (%zu, %zu)", pr.layers, pr.blobs);
	img_store_free(s);
}

/* A tree 2,000 deep (a layer can be, through its own symlinks) goes with a few fds: one per
 * level made prune fail with EMFILE on every run. Its files' sizes are counted. */
static void test_remove_deep(void)
{
	char path[512];
	struct rlimit old, low = { 40, 40 };
	snprintf(path, sizeof(path), "%s/deep", tmpdir);
	mkdir(path, 0755);
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	for (int i = 0; fd >= 0 && i < 2000; i++) {
		int f = openat(fd, "f", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		if (f >= 0 && write(f, "abc", 3) == 3)
			close(f);
		mkdirat(fd, "d", 0755);
		int n = openat(fd, "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (i % 5 == 0) /* once its entries are made: an image's read-only dir */
			fchmod(fd, 0555);
		close(fd);
		fd = n;
	}
	close(fd);
	uint64_t bytes = 0;
	getrlimit(RLIMIT_NOFILE, &old);
	setrlimit(RLIMIT_NOFILE, &low);
	int r = img_remove_tree_counted(AT_FDCWD, path, &bytes);
	setrlimit(RLIMIT_NOFILE, &old);
	struct stat st;
	ok(r == 0 && lstat(path, &st) < 0 && errno == ENOENT && bytes == 6000,
	   "a tree 2000 deep is removed with 40 fds (%d, %llu bytes)", r,
	   (unsigned long long)bytes);
}

/* A host tree for --copy: its digest covers paths, types, modes, contents and link targets,
 * and not times; FIFOs are refused; the copy keeps modes and links, owned as asked. */
static void write_file(const char *path, const char *data, mode_t mode)
{
	FILE *f = fopen(path, "w");
	if (f) {
		fputs(data, f);
		fclose(f);
	}
	chmod(path, mode);
}

static void digest_of(const char *src, char out[IMG_DIGEST_MAX])
{
	struct hutch_err err = { 0 };
	if (img_tree_digest(src, out, &err) < 0)
		snprintf(out, IMG_DIGEST_MAX, "error: %.50s", err.msg);
}

static void test_tree(void)
{
	struct hutch_err err = { 0 };
	char src[512], p[600], d0[IMG_DIGEST_MAX], d1[IMG_DIGEST_MAX], root[512];
	snprintf(src, sizeof(src), "%s/tree", tmpdir);
	snprintf(p, sizeof(p), "%s/sub", src);
	mkdir(src, 0755);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/sub/tool", src);
	write_file(p, "abc", 0750);
	snprintf(p, sizeof(p), "%s/link", src);
	ok(symlink("sub/tool", p) == 0, "a tree with a link");
	digest_of(src, d0);
	ok(!strncmp(d0, "sha256:", 7), "a tree has a digest (%s)", d0);
	snprintf(p, sizeof(p), "%s/sub/tool", src);
	struct timespec old[2] = { { 1, 0 }, { 1, 0 } };
	utimensat(AT_FDCWD, p, old, 0);
	digest_of(src, d1);
	ok(!strcmp(d0, d1), "mtimes are not in it");
	write_file(p, "abd", 0750);
	digest_of(src, d1);
	ok(strcmp(d0, d1) != 0, "one changed byte is");
	write_file(p, "abc", 0755);
	digest_of(src, d1);
	ok(strcmp(d0, d1) != 0, "a mode is");
	chmod(p, 0750);
	digest_of(src, d1);
	ok(!strcmp(d0, d1), "and back again: the same digest");
	snprintf(p, sizeof(p), "%s/link", src);
	unlink(p);
	ok(symlink("sub", p) == 0 && (digest_of(src, d1), strcmp(d0, d1) != 0), "a link target is");
	unlink(p);
	ok(symlink("sub/tool", p) == 0, "link back");
	snprintf(p, sizeof(p), "%s/fifo", src);
	ok(mkfifo(p, 0644) == 0 && img_tree_digest(src, d1, &err) == -EINVAL &&
		   strstr(err.msg, "/tree/fifo: a FIFO cannot be copied"),
	   "a FIFO is refused, named (%s)", err.msg);
	unlink(p);
	snprintf(p, sizeof(p), "%s/nosuch", tmpdir);
	ok(img_tree_digest(p, d1, &err) == -ENOENT, "a missing tree fails (%s)", err.msg);

	snprintf(root, sizeof(root), "%s/croot", tmpdir);
	mkdir(root, 0755);
	int rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	snprintf(p, sizeof(p), "%s/sub/tool", src);
	struct stat st;
	char target[64] = "";
	ok(img_copy_in(rootfd, src, "/opt/app", getuid(), getgid(), &err) == 0 &&
		   img_copy_in(rootfd, p, "/etc/", getuid(), getgid(), &err) == 0 &&
		   img_copy_in(rootfd, p, "/bin/renamed", getuid(), getgid(), &err) == 0,
	   "a tree, a file into a dir, a file as a name (%s)", err.msg);
	snprintf(p, sizeof(p), "%s/opt/app/sub/tool", root);
	ok(stat(p, &st) == 0 && (st.st_mode & 07777) == 0750, "the mode is kept");
	snprintf(p, sizeof(p), "%s/opt/app/link", root);
	ok(readlink(p, target, sizeof(target) - 1) > 0 && !strcmp(target, "sub/tool"),
	   "the link is a link (%s)", target);
	snprintf(p, sizeof(p), "%s/etc/tool", root);
	ok(access(p, F_OK) == 0, "a DST ending in / takes the file in");
	snprintf(p, sizeof(p), "%s/bin/renamed", root);
	ok(stat(p, &st) == 0 && S_ISREG(st.st_mode), "else DST is the file's name");
	snprintf(p, sizeof(p), "%s/sub/tool", src);
	ok(img_copy_in(rootfd, p, "/bin", getuid(), getgid(), &err) == 0 &&
		   (snprintf(p, sizeof(p), "%s/bin/tool", root), access(p, F_OK) == 0),
	   "an existing directory DST takes the file in");
	close(rootfd);
}

/* A build's config edits on a committed layer: Env merged as Docker's ENV, the rest set,
 * an entrypoint alone clearing Cmd, the base's other keys kept. */
static void test_commit_config(void)
{
	struct hutch_err err = { 0 };
	struct img_store *s = NULL;
	char path[512], tar[512], upper[512], digest[IMG_DIGEST_MAX], layer[IMG_DIGEST_MAX];
	snprintf(path, sizeof(path), "%s/cstore", tmpdir);
	snprintf(tar, sizeof(tar), "%s/c.tar", tmpdir);
	snprintf(upper, sizeof(upper), "%s/upper", tmpdir);
	const struct ent e[] = { { "bin", 'd', NULL } };
	mktar(tar, e, 1, false);
	struct img_import_result res;
	ok(img_store_open(path, true, false, &s, &err) == 0 &&
		   img_import(s, tar, "c:base", NULL, NULL, &res, &err) == 0,
	   "a base (%s)", err.msg);
	img_import_result_clear(&res);
	mkdir(upper, 0755);
	char *env[] = { "PATH=/x", "A=1", "A=2", "B=3", NULL }, *ep[] = { "/app", NULL };
	const struct img_config_edit edit = {
		.env = env, .entrypoint = ep, .working_dir = "/srv", .user = "1000:1000"
	};
	const struct img_commit c = {
		.base = "c:base", .name_tag = "c:new", .upper = upper, .edit = &edit
	};
	ok(img_commit_layer(s, &c, digest, layer, &err) == 0, "committed (%s)", err.msg);
	struct img_run_config rc = { 0 };
	ok(img_run_config(s, "c:new", &rc, &err) == 0, "its config reads back (%s)", err.msg);
	ok(rc.env && rc.env[0] && !strcmp(rc.env[0], "PATH=/x") && rc.env[1] &&
		   !strcmp(rc.env[1], "A=2") && rc.env[2] && !strcmp(rc.env[2], "B=3") &&
		   !rc.env[3],
	   "Env: the base's PATH replaced in place, the last A, B appended");
	ok(rc.working_dir && !strcmp(rc.working_dir, "/srv") && rc.user &&
		   !strcmp(rc.user, "1000:1000"),
	   "WorkingDir and User");
	ok(rc.entrypoint && !strcmp(rc.entrypoint[0], "/app") && !rc.entrypoint[1] && !rc.cmd,
	   "Entrypoint, and no Cmd");
	img_run_config_clear(&rc);
	img_store_free(s);
}

int main(void)
{
	if (!mkdtemp(tmpdir))
		return 1;
	test_refs();
	test_hostile();
	test_limits();
	test_store();
	test_remove_deep();
	test_tree();
	test_commit_config();
	img_remove_tree_at(AT_FDCWD, tmpdir);
	return tap_done();
}
