// SPDX-License-Identifier: Apache-2.0
/*
 * import: an OCI image layout (dir or tar), a docker-archive (`docker save`) or a plain
 * rootfs tar (`docker import`) into the store. Every digest the source names is checked
 * against the bytes, the architecture against the host's, and layers already in the store
 * (same diff_id) are not unpacked again.
 */
#include "img-internal.h"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>

struct import {
	struct img_store *s;
	int srcfd; /* the layout or archive directory */
	const char *src, *name;
	struct img_import_result *res;
};

const char *img_host_arch(void)
{
	static const char *const map[][2] = {
		{ "x86_64", "amd64" },	 { "aarch64", "arm64" }, { "armv7l", "arm" },
		{ "armv6l", "arm" },	 { "i686", "386" },	 { "i386", "386" },
		{ "ppc64le", "ppc64le" }, { "s390x", "s390x" },	 { "riscv64", "riscv64" },
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

static int check_arch(const char *config, struct hutch_err *err)
{
	_cleanup_json_ yajl_val c = NULL;
	TRY(img_json_parse(config, "image config", &c, err));
	const char *arch = img_json_str(c, "architecture");
	const char *os = img_json_str(c, "os");
	if (os && strcmp(os, "linux"))
		return hutch_fail(err, ENOEXEC, "image is for %s/%s, this host is linux/%s", os,
				  arch ? arch : "?", img_host_arch());
	if (arch && strcmp(arch, img_host_arch()))
		return hutch_fail(err, ENOEXEC, "image is for linux/%s, this host is linux/%s",
				  arch, img_host_arch());
	return 0;
}

/* A file of the source, opened without leaving it (names come from the source itself). */
static int open_src(struct import *im, const char *path, struct hutch_err *err)
{
	int fd = hutch_open_in_root(im->srcfd, path, O_RDONLY | O_NOFOLLOW, 0, err);
	return fd < 0 ? hutch_err_prefix(err, "%s: ", im->src) : fd;
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

/* Unpacks one layer file into the store (unless its diff_id is there already) and checks
 * both digests. want_blob may be NULL (docker-archive: the tar is the diff). */
static int import_layer(struct import *im, const char *path, const char *want_blob,
			const char *want_diff, struct img_desc *desc, struct hutch_err *err)
{
	_cleanup_close_ int fd = open_src(im, path, err);
	if (fd < 0)
		return fd;
	char blob[IMG_DIGEST_MAX], diff[IMG_DIGEST_MAX];
	struct img_unpack_stats st = { 0 };
	uint64_t size = 0;
	int r = 0;
	if (want_diff && img_layer_exists(im->s, want_diff)) {
		if (hash_fd(fd, blob, &size) < 0)
			return hutch_fail_errno(err, errno, "read layer %s", path);
		snprintf(diff, sizeof(diff), "%s", want_diff);
		if (!want_blob) /* the tar is the diff: its hash must be the diff_id */
			snprintf(diff, sizeof(diff), "%s", blob);
	} else {
		_cleanup_free_ char *tmp = NULL;
		int lockfd = -1;
		TRY(img_tmp_create(im->s, "layer", &tmp, &lockfd, err));
		_cleanup_free_ char *root = hutch_xasprintf("%s/root", tmp);
		_cleanup_close_ int rootfd = -1;
		if (mkdirat(im->s->dirfd, root, 0755) < 0 ||
		    (rootfd = openat(im->s->dirfd, root, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
			r = hutch_fail_errno(err, errno, "store: %s", root);
		if (r >= 0)
			r = img_unpack_layer(fd, rootfd, true, diff, blob, &st, err);
		size = st.tar_size;
		if (r >= 0 && want_diff && strcmp(diff, want_diff))
			r = hutch_fail(err, EBADMSG, "layer %s: diff_id mismatch (content is %s)",
				       want_diff, diff);
		if (r >= 0 && want_blob && strcmp(blob, want_blob))
			r = hutch_fail(err, EBADMSG, "layer %s: digest mismatch (content is %s)",
				       want_blob, blob);
		if (r >= 0)
			r = img_layer_add(im->s, tmp, diff, st.bytes, err);
		img_tmp_remove(im->s, tmp, lockfd);
		if (r < 0)
			return hutch_err_prefix(err, "%s: ", path);
		im->res->n_new_layers++;
		im->res->bytes += st.bytes;
		im->res->skipped_devices += st.skipped_devices;
	}
	if (want_blob && strcmp(blob, want_blob))
		return hutch_fail(err, EBADMSG, "layer %s: digest mismatch (content is %s)",
				  want_blob, blob);
	if (want_diff && strcmp(diff, want_diff))
		return hutch_fail(err, EBADMSG, "layer %s: diff_id mismatch (content is %s)",
				  want_diff, diff);
	im->res->n_layers++;
	if (desc) {
		desc->media_type = "application/vnd.oci.image.layer.v1.tar";
		snprintf(desc->digest, sizeof(desc->digest), "%s", diff);
		desc->size = size;
	}
	return 0;
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
			    : (*p >= 'A' && *p <= 'Z')				 ? *p + 32
										 : '-');
	return hutch_xasprintf("%s:%s", *b && *b != '.' ? b : "image", tag ? tag : "latest");
}

static int finish(struct import *im, const char *config, const char *manifest,
		  const char *fallback_name, struct hutch_err *err)
{
	_cleanup_free_ char *n = NULL, *t = NULL;
	const char *name = im->name ? im->name : fallback_name;
	TRY(img_parse_ref(name, &n, &t, err));
	im->res->name = hutch_xasprintf("%s:%s", n, t ? t : "latest");
	return img_store_image(im->s, config, manifest, im->res->name, im->res->digest, err);
}
