// SPDX-License-Identifier: Apache-2.0
/*
 * From a stored image to a root filesystem: its layer directories, stacked by overlayfs
 * (top layer first in lowerdir), so that starting a sandbox costs the same whatever the
 * image's size. Also the inputs hash that names a build's result.
 */
#include "img-internal.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>

int img_layer_dirs(struct img_store *s, const char *ref, char ***dirs, size_t *n,
		   struct hutch_err *err)
{
	char digest[IMG_DIGEST_MAX];
	_cleanup_strv_ char **ids = NULL;
	size_t k = 0;
	TRY(img_resolve(s, ref, NULL, digest, err));
	TRY(img_load_image(s, digest, NULL, NULL, &ids, &k, err));
	char **v = hutch_xcalloc(k + 1, sizeof(char *));
	for (size_t i = 0; i < k; i++) {
		if (!img_layer_exists(s, ids[i])) {
			hutch_strv_free(v);
			return hutch_fail(err, ENOENT, "image %s: layer %s missing from the store",
					  ref, ids[i]);
		}
		v[i] = hutch_xasprintf("%s/layers/%s/root", s->path, IMG_HEX(ids[i]));
	}
	*dirs = v;
	*n = k;
	return 0;
}

static int bind_ro(const char *src, const char *target, struct hutch_err *err)
{
	if (mount(src, target, NULL, MS_BIND, NULL) < 0)
		return hutch_fail_errno(err, errno, "bind %s", src);
	if (mount(NULL, target, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NODEV, NULL) < 0)
		return hutch_fail_errno(err, errno, "remount %s read-only", target);
	return 0;
}

/* A layer's directory as seen at view, an idmapped copy of the store's tree. */
static void seen_at(char **dir, const char *store, const char *view)
{
	size_t n = strlen(store);
	if (!view || strncmp(*dir, store, n) || ((*dir)[n] != '/' && (*dir)[n]))
		return;
	char *v = hutch_xasprintf("%s%s", view, *dir + n);
	free(*dir);
	*dir = v;
}

int img_mount_rootfs(struct img_store *s, const char *ref, const char *target, const char *upper,
		     const char *work, const char *view, struct hutch_err *err)
{
	_cleanup_strv_ char **dirs = NULL;
	size_t n = 0;
	TRY(img_layer_dirs(s, ref, &dirs, &n, err));
	for (size_t i = 0; i < n; i++)
		seen_at(&dirs[i], s->path, view);
	if (n == 0)
		return hutch_fail(err, EINVAL, "image %s: no layers", ref);
	/* overlayfs needs two lower layers when it has no upper one. */
	if (!upper && n == 1)
		return bind_ro(dirs[0], target, err);
	size_t cap = 64 + (upper ? strlen(upper) + strlen(work) : 0);
	for (size_t i = 0; i < n; i++)
		cap += strlen(dirs[i]) + 1;
	_cleanup_free_ char *data = hutch_xmalloc(cap);
	size_t o = (size_t)snprintf(data, cap, "lowerdir=");
	for (size_t i = n; i-- > 0;) /* the top layer comes first */
		o += (size_t)snprintf(data + o, cap - o, "%s%s", dirs[i], i ? ":" : "");
	if (upper)
		o += (size_t)snprintf(data + o, cap - o, ",upperdir=%s,workdir=%s", upper, work);
	if (geteuid() != 0) /* unpacked without root: opaque dirs carry user.overlay.* */
		o += (size_t)snprintf(data + o, cap - o, ",userxattr");
	if (o >= 4096) /* one page of mount data */
		return hutch_fail(err, E2BIG, "image %s: %zu layers are too many for one overlay",
				  ref, n);
	/* nodev: an image's device node (a 0666 5:1, the host's console) must not open in the
	 * sandbox, whose /dev is hutch's own mount; the device cgroup allows runc's defaults. */
	if (mount("overlay", target, "overlay", MS_NODEV | (upper ? 0 : MS_RDONLY), data) < 0)
		return hutch_fail_errno(err, errno, "overlay for image %s", ref);
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void put(struct img_sha *h, const char *kind, const char *v)
{
	img_sha_update(h, kind, strlen(kind) + 1);
	img_sha_update(h, v, strlen(v) + 1);
}

static void put_all(struct img_sha *h, const char *kind, char *const *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		put(h, kind, v[i]);
}

void img_inputs_hash(const struct img_inputs *in, char out[17])
{
	struct img_sha h;
	char d[IMG_DIGEST_MAX];
	img_sha_init(&h);
	put(&h, "base", in->base_digest);
	/* Packages are a set: their order must not make a new tag. Steps and env are not. */
	char **sorted = hutch_xcalloc(in->n_packages + 1, sizeof(char *));
	if (in->n_packages) { /* packages may be NULL then, which memcpy and qsort must not see */
		memcpy(sorted, in->packages, in->n_packages * sizeof(char *));
		qsort(sorted, in->n_packages, sizeof(char *), cmp_str);
	}
	for (size_t i = 0; i < in->n_packages; i++)
		if (i == 0 || strcmp(sorted[i], sorted[i - 1]))
			put(&h, "package", sorted[i]);
	free(sorted);
	put_all(&h, "run", in->steps, in->n_steps);
	put_all(&h, "env", in->env, in->n_env);
	/* After the older inputs, and only when given: a build without them keeps its tag. */
	put_all(&h, "copy", in->copies, in->n_copies);
	put_all(&h, "config", in->config, in->n_config);
	if (in->stdin_digest)
		put(&h, "stdin", in->stdin_digest);
	img_sha_final(&h, d);
	memcpy(out, IMG_HEX(d), 16);
	out[16] = '\0';
}

int img_digest_stream(int fd, int out, char digest[IMG_DIGEST_MAX], uint64_t *n,
		      struct hutch_err *err)
{
	struct img_sha h;
	_cleanup_free_ char *buf = hutch_xmalloc(65536);
	img_sha_init(&h);
	*n = 0;
	for (ssize_t k; (k = read(fd, buf, 65536));) {
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return hutch_fail_errno(err, errno, "read");
		int w = out >= 0 ? hutch_write_all(out, buf, (size_t)k) : 0;
		if (w < 0)
			return hutch_fail_errno(err, w, "write");
		img_sha_update(&h, buf, (size_t)k);
		*n += (uint64_t)k;
	}
	img_sha_final(&h, digest);
	return 0;
}
