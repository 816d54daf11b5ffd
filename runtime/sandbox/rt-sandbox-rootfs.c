// SPDX-License-Identifier: Apache-2.0
/*
 * The sandbox's root filesystem: the image as it is (read-only) when it has every mount point
 * the options need, else under an overlay whose upper layer lives in the scratch tmpfs, where
 * hutch makes the missing mount points (a /workspace, a --bind's destination, the network's
 * /etc files, /etc itself), never in the image. With --as-root the image is seen through an
 * idmapped mount whose ids are the sandbox's subordinate ones, so that root inside owns what
 * the image's root owns and a package manager can work in the throw-away layer.
 */
#include "rt-sandbox.h"
#include "hutch-ids.h"
#include "rt-sandbox-plan.h"
#include "rt-image.h"
#include "img.h"
#include "img-rootfs.h"

#include <fcntl.h>
#include <linux/mount.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>

bool rt_sb_image_is_dir(const char *image)
{
	struct stat st;
	if (image[0] == '/' || image[0] == '.')
		return true; /* no image name starts so: let errors name the path */
	return stat(image, &st) == 0 && S_ISDIR(st.st_mode);
}

/* True if the image has every mount point the sandbox needs (so it is used as is). */
static bool image_has(int imgfd, const char *path)
{
	struct hutch_err e = { 0 };
	int fd = hutch_open_in_root(imgfd, path, O_PATH, 0, &e);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/* Every mount point the sandbox needs in its root, and whether it is a file. */
static size_t mount_points(const struct rt_sb_opts *o, const struct rt_sb_plan *p, const char **v,
			   bool *file, size_t max)
{
	/* Not /sys/fs/cgroup: it lies in the sysfs mounted (or the host's bound) on /sys. */
	static const char *const base[] = { "/proc", "/dev", "/sys" };
	static const char *const net[] = { "/etc/resolv.conf", "/etc/hosts", "/etc/hostname" };
	size_t n = 0;
	for (size_t i = 0; i < ARRAY_SIZE(base) && n < max; i++, n++)
		v[n] = base[i], file[n] = false;
	for (size_t i = 0; i < o->n_tmpfs && n < max; i++, n++)
		v[n] = o->tmpfs[i].path, file[n] = false;
	for (size_t i = 0; i < o->n_binds && n < max; i++, n++)
		v[n] = o->binds[i].dst, file[n] = p->srcs[i].file;
	if ((o->workspace || o->pool_slot) && n < max) /* a pooled one: a request's, maybe */
		v[n] = "/workspace", file[n++] = false;
	/* host: the host's resolv.conf; bridge: the three files hutch writes (rt-sandbox-net.c) */
	size_t n_net = o->network == RT_SB_NET_BRIDGE ? 3 : o->network == RT_SB_NET_HOST ? 1 : 0;
	for (size_t i = 0; i < n_net && n < max; i++)
		v[n] = net[i], file[n++] = true;
	return n;
}

static bool needs_layer(const struct rt_sb_opts *o, const struct rt_sb_plan *p, int imgfd)
{
	const char *v[256];
	bool file[256];
	size_t n = mount_points(o, p, v, file, ARRAY_SIZE(v));
	if (rt_sb_root_inside(o))
		return true;
	for (size_t i = 0; i < n; i++)
		if (!image_has(imgfd, v[i]))
			return true;
	return false;
}

/* A mount point made in the layer: by hutch (host root), since the sandbox's root, a
 * subordinate id on the host, may not write where the image's root owns. With --as-root it
 * belongs to root inside, as the image's own directories do there. */
static int make_one(int rootfd, const char *path, bool file, const struct rt_sb_plan *p,
		    struct hutch_err *err)
{
	_cleanup_free_ char *parent = hutch_xstrdup(path);
	char *slash = strrchr(parent, '/');
	if (slash == parent)
		slash[1] = '\0';
	else
		*slash = '\0';
	int fd = hutch_mkdir_in_root(rootfd, file ? parent : path, 0755, err);
	if (fd >= 0 && file) {
		int f = hutch_open_in_root(rootfd, path, O_WRONLY | O_CREAT, 0644, err);
		close(fd);
		fd = f;
	}
	if (fd < 0)
		return fd;
	if (p->full_range && fchownat(fd, "", p->sub_uid, p->sub_gid, AT_EMPTY_PATH) < 0) {
		int e = errno;
		close(fd);
		return hutch_fail_errno(err, e, "chown");
	}
	close(fd);
	return 0;
}

static int make_mount_points(const struct rt_sb_opts *o, const struct rt_sb_plan *p,
			     struct hutch_err *err)
{
	const char *v[256];
	bool file[256];
	size_t n = mount_points(o, p, v, file, ARRAY_SIZE(v));
	_cleanup_close_ int rootfd = open(p->rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return hutch_fail_errno(err, errno, "sandbox: open %s", p->rootfs);
	for (size_t i = 0; i < n; i++)
		if (!image_has(rootfd, v[i]) && make_one(rootfd, v[i], file[i], p, err) < 0)
			return hutch_err_prefix(err, "sandbox: mount point %s: ", v[i]);
	/* An image's WorkingDir it lacks is made, as docker and runc make it (root's). */
	const char *wd = p->image_config ? p->image_config->working_dir : NULL;
	if (wd && !o->cwd && wd[0] == '/' && !image_has(rootfd, wd) &&
	    make_one(rootfd, wd, false, p, err) < 0)
		return hutch_err_prefix(err, "--image %s: config.WorkingDir %s: ", o->image, wd);
	return 0;
}

/* --as-root: dir (the image, or the image store) seen through ids 0..65535 -> subordinate,
 * read-only, attached at at: overlayfs then stacks on it (Linux 5.19). */
static int idmapped_view(const char *dir, const char *at, const struct rt_sb_plan *p,
			 struct hutch_err *err)
{
	struct ns_idmap u = { 0, p->sub_uid, RT_SB_ID_SPAN }, g = { 0, p->sub_gid, RT_SB_ID_SPAN };
	if (mkdir(at, 0755) < 0)
		return hutch_fail_errno(err, errno, "sandbox: mkdir %s", at);
	struct ns_tree_opts to = { .recursive = true,
				   .idmap = true,
				   .idmap_recursive = true,
				   .attrs = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NODEV,
				   .uids = &u,
				   .gids = &g,
				   .n_uids = 1,
				   .n_gids = 1 };
	_cleanup_close_ int tree = ns_make_tree(dir, &to, err);
	if (tree < 0)
		return hutch_err_prefix(err, "--as-root: a view of the image as root's inside: ");
	_cleanup_close_ int target = open(at, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (target < 0)
		return hutch_fail_errno(err, errno, "sandbox: open %s", at);
	return ns_attach_tree(tree, target, err);
}

/* The throw-away layer: in scratch, or where the caller keeps it (an image build's, on the
 * store's disk, to become the new image's layer). */
static void layer_dirs(const struct rt_sb_opts *o, const char *scratch, struct img_layered *l,
		       char **own)
{
	own[0] = hutch_xasprintf("%s/root", scratch);
	own[1] = o->layer_upper ? NULL : hutch_xasprintf("%s/upper", scratch);
	own[2] = o->layer_upper ? NULL : hutch_xasprintf("%s/work", scratch);
	l->root = own[0];
	l->upper = o->layer_upper ? o->layer_upper : own[1];
	l->work = o->layer_upper ? o->layer_work : own[2];
}

/* With --as-root the layer's top belongs to root inside, as the image's / does. */
static int mount_layered(const struct rt_sb_opts *o, struct rt_sb_plan *p, const char *scratch,
			 struct img_layered *l, struct hutch_err *err)
{
	char *own[3];
	layer_dirs(o, scratch, l, own);
	l->upper_uid = o->as_root ? p->sub_uid : 0;
	l->upper_gid = o->as_root ? p->sub_gid : 0;
	const char *no_overlay = getenv("HUTCH_NO_OVERLAY"); /* tests pretend to lack it */
	l->copy = no_overlay && !strcmp(no_overlay, "1");
	l->may_copy = !o->layer_upper; /* a build's layer must be an upper dir */
	int r = img_mount_layered(l, err);
	free(own[1]);
	free(own[2]);
	if (r < 0) {
		free(own[0]);
		return hutch_err_prefix(err, "--image %s: ", o->image);
	}
	p->rootfs = own[0];
	p->layered = true;
	p->rootfs_copy = r == 1;
	if (p->rootfs_copy)
		hutch_warn("--image %s: overlayfs unavailable, the image was copied", o->image);
	return make_mount_points(o, p, err);
}

/* NAME[:TAG] from the image store: always layered. */
static int store_rootfs(const struct rt_sb_opts *o, struct rt_sb_plan *p, const char *scratch,
			struct hutch_err *err)
{
	_cleanup_free_ char *view = NULL;
	_cleanup_(img_store_freep) struct img_store *store = NULL;
	struct img_layered l = { 0 };
	/* The store's lock (shared) only while the image is resolved, pinned and mounted:
	 * then the pin keeps its layers from prune for as long as this sandbox lives (the
	 * plan holds it; so does its teardown helper), and prune need not wait for it. */
	TRY(img_store_open(img_store_default(o->store), false, false, &store, err));
	l.store = store;
	/* Resolved once, and run by digest: the report's image is the one that ran, even if
	 * the name is moved meanwhile. */
	TRY(img_resolve(l.store, o->image, &p->image_name, p->image_digest, err));
	p->image_pin = img_pin(l.store, p->image_digest, &p->image_pin_path, err);
	if (p->image_pin == -EROFS || p->image_pin == -EACCES) {
		/* A store it cannot write (read-only, shared): its lock, held for the run, keeps
		 * prune away instead, as a pin would. */
		hutch_debug("--image %s: %s; the store's lock is held instead", o->image, err->msg);
		p->held_store = steal_ptr(store);
		l.store = p->held_store;
	} else if (p->image_pin < 0) {
		return p->image_pin;
	} else {
		p->has_image_pin = true;
	}
	if (p->image_name) { /* as image ls shows it: bb:1, not docker.io/library/bb:1 */
		char *stored = p->image_name;
		p->image_name = img_display_name(stored);
		free(stored);
	}
	l.ref = p->image_digest;
	p->image_config = hutch_xcalloc(1, sizeof(*p->image_config));
	if (img_run_config(l.store, p->image_digest, p->image_config, err) < 0)
		return hutch_err_prefix(err, "--image %s: ", o->image);
	if (o->as_root) {
		view = hutch_xasprintf("%s/store", scratch);
		TRY(idmapped_view(img_store_path(l.store), view, p, err));
		l.store_view = view;
	}
	return mount_layered(o, p, scratch, &l, err);
}

/* A directory: resolved once (rt-sandbox-paths.c) and mounted from its fd in scratch, where
 * the rootfs, or the overlay's lower layer, is that mount. */
int rt_sb_plan_rootfs(const struct rt_sb_opts *o, struct rt_sb_plan *p, const char *scratch,
		      struct hutch_err *err)
{
	if (!p->image.at)
		return store_rootfs(o, p, scratch, err);
	if (!needs_layer(o, p, p->image.tree)) {
		/* Rootless, the sandbox's ids may not cross the caller's 0700 state dir to
		 * scratch, and its init binds the rootfs by path: the path the image resolved to
		 * (where rootless hutch holds no privilege its caller lacks). */
		p->rootfs = hutch_xstrdup(hutch_rootless() ? p->image.real : p->image.at);
		return 0;
	}
	_cleanup_free_ char *lower = hutch_xasprintf("%s/lower", scratch);
	if (o->as_root) /* the image seen with root inside as its owner */
		TRY(idmapped_view(p->image.at, lower, p, err));
	struct img_layered l = { .lower = o->as_root ? lower : p->image.at };
	return mount_layered(o, p, scratch, &l, err);
}
