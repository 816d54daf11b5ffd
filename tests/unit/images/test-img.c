// SPDX-License-Identifier: Apache-2.0
/*
 * images/: reference parsing and the inputs hash (pure), then hostile layers unpacked into
 * temp dirs (traversal, absolute names, symlink and hardlink escapes, devices, whiteouts),
 * and a store round trip: import a rootfs tar, resolve, list, remove, prune.
 */
#include "img-internal.h"
#include "tap.h"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
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

/* Unpacks ents into a fresh dir tmpdir/NAME/root; returns unpack's result. */
static int unpack(const char *name, const struct ent *e, size_t n, struct img_unpack_stats *st,
		  struct hutch_err *err)
{
	char path[512], tar[512];
	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%s/root", tmpdir, name);
	mkdir(path, 0755);
	snprintf(tar, sizeof(tar), "%s/%s.tar", tmpdir, name);
	mktar(tar, e, n, false);
	int fd = open(tar, O_RDONLY | O_CLOEXEC);
	int root = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	int r = img_unpack_layer(fd, root, true, NULL, NULL, st, err);
	close(fd);
	close(root);
	return r;
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

	char h1[17], h2[17], h3[17];
	char *p1[] = { "curl", "git" }, *p2[] = { "git", "curl", "git" }, *p3[] = { "git" };
	img_inputs_hash("sha256:00", p1, 2, NULL, 0, NULL, 0, h1);
	img_inputs_hash("sha256:00", p2, 3, NULL, 0, NULL, 0, h2);
	img_inputs_hash("sha256:00", p3, 1, NULL, 0, NULL, 0, h3);
	ok(strcmp(h1, h2) == 0, "package order and repeats do not change the inputs hash");
	ok(strcmp(h1, h3) != 0, "a changed package list changes it");
	char *s1[] = { "a", "b" }, *s2[] = { "b", "a" };
	img_inputs_hash("sha256:00", NULL, 0, s1, 2, NULL, 0, h1);
	img_inputs_hash("sha256:00", NULL, 0, s2, 2, NULL, 0, h2);
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
	const struct ent hl2[] = { { "a", 'f', "x" }, { "b", 'h', "a" } };
	ok(unpack("hl2", hl2, 2, &st, &err) == 0 && exists("%s/hl2/root/%s", "b"),
	   "a hardlink inside the layer works");
	const struct ent dev[] = { { "null", 'c', NULL } };
	int r = unpack("dev", dev, 1, &st, &err);
	ok(r == 0 && (st.skipped_devices == 1) == !exists("%s/dev/root/%s", "null"),
	   "a device node is made only by real root (skipped: %zu)", st.skipped_devices);
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
	ok(img_import(s, tar, "t/one:v1", &res, &err) == 0 && !strcmp(res.kind, "rootfs") &&
		   res.n_layers == 1,
	   "a rootfs tar imports (%s)", err.msg);
	img_import_result_clear(&res);
	ok(img_import(s, tar, "t/one:v2", &res, &err) == 0, "again under another tag");
	img_import_result_clear(&res);
	char *name = NULL;
	ok(img_resolve(s, "t/one", &name, digest, &err) == 0 && !strcmp(name, "t/one:v2"),
	   "a bare name is the newest tag (%s)", name ? name : err.msg);
	free(name);
	struct img_info *v = NULL;
	size_t n = 0;
	ok(img_list(s, &v, &n, &err) == 0 && n == 2 && !strcmp(v[0].name, "t/one:v1"),
	   "list is sorted");
	for (size_t i = 0; i < n; i++)
		img_info_clear(&v[i]);
	free(v);
	ok(img_import(s, tar, "sha256:0123/x:1", &res, &err) == -EINVAL,
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

int main(void)
{
	if (!mkdtemp(tmpdir))
		return 1;
	test_refs();
	test_hostile();
	test_store();
	img_remove_tree_at(AT_FDCWD, tmpdir);
	return tap_done();
}
