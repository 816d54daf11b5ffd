// SPDX-License-Identifier: Apache-2.0
/*
 * The paths a caller hands a sandbox (--workspace, --bind and --ro-bind sources, --image as a
 * directory), resolved once by hutch_chase into fds before anything of the sandbox exists:
 * a name can be swapped for a symlink between a check and a use, an fd cannot. After that,
 * the owner checks and the chown go through the fd, and each path is mounted from its fd at a
 * path of hutch's own in scratch, which is all the spec and a delegate's config.json name.
 */
#include "rt-sandbox.h"
#include "rt-sandbox-plan.h"
#include "hutch-ids.h"
#include "hutch-path.h"
#include "hutch-sys.h"

#include <fcntl.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static void src_init(struct rt_sb_src *s)
{
	*s = (struct rt_sb_src){ .fd = -1, .tree = -1 };
}

/* A detached copy (open_tree) of fd's tree. Only a mount of the namespace it is made in can be
 * copied (bound) there: this copy, made now, can still be attached in scratch's namespace,
 * where a bind from fd itself (or from /proc/PID/fd/N) is refused with EINVAL. nodev: a
 * device node in a caller's tree (a directory image's 5:1, the host's console) is never
 * usable in the sandbox, whose /dev is hutch's own. */
static int copy_tree(const char *what, int fd, const char *real, struct hutch_err *err)
{
	char link[HUTCH_FD_PATH_MAX];
	const struct ns_tree_opts to = { .recursive = true, .attrs = MOUNT_ATTR_NODEV };
	int tree = ns_make_tree(hutch_fd_path(fd, link), &to, err);
	return tree < 0 ? hutch_err_prefix(err, "%s %s: ", what, real) : tree;
}

/* path into s: a directory, or (file_ok) a regular file. Never a device (binds are nodev,
 * so it could not be opened there), a FIFO or a socket. */
static int resolve(const char *what, const char *path, unsigned flags, bool file_ok,
		   struct rt_sb_src *s, struct hutch_err *err)
{
	struct stat st;
	s->fd = hutch_chase(what, path, flags, NULL, err);
	if (s->fd < 0)
		return s->fd;
	s->real = hutch_fd_realpath(s->fd);
	if (fstat(s->fd, &st) < 0)
		return hutch_fail_errno(err, errno, "%s %s", what, s->real);
	if (!S_ISDIR(st.st_mode) && !(file_ok && S_ISREG(st.st_mode)))
		return hutch_fail(err, file_ok ? EINVAL : ENOTDIR, "%s %s: not a directory%s", what,
				  s->real, file_ok ? " or a regular file" : "");
	s->file = S_ISREG(st.st_mode);
	if (!hutch_may_mount()) /* rootless: retake, in scratch */
		return 0;
	int tree = copy_tree(what, s->fd, s->real, err);
	if (tree < 0)
		return tree;
	s->tree = tree;
	return 0;
}

int rt_sb_resolve_paths(const struct rt_sb_opts *o, struct rt_sb_plan *p, struct hutch_err *err)
{
	src_init(&p->ws);
	src_init(&p->image);
	p->srcs = hutch_xcalloc(o->n_binds ? o->n_binds : 1, sizeof(*p->srcs));
	p->n_srcs = o->n_binds;
	for (size_t i = 0; i < o->n_binds; i++)
		src_init(&p->srcs[i]);
	/* The image first: a missing one is the report's image_missing (rt-sandbox.c). */
	if (o->image && rt_sb_image_is_dir(o->image))
		TRY(resolve("--image", o->image, 0, false, &p->image, err));
	/* Its last component never a symlink: --workspace-owner chowns it. */
	if (o->workspace)
		TRY(resolve("--workspace", o->workspace, HUTCH_CHASE_NOFOLLOW, false, &p->ws, err));
	for (size_t i = 0; i < o->n_binds; i++)
		TRY(resolve(o->binds[i].ro ? "--ro-bind" : "--bind", o->binds[i].src, 0, true,
			    &p->srcs[i], err));
	return 0;
}

int rt_sb_resolve_workspace(const char *path, struct rt_sb_src *s, struct hutch_err *err)
{
	src_init(s);
	return resolve("--workspace", path, HUTCH_CHASE_NOFOLLOW, false, s, err);
}

int rt_sb_resolve_bind(const struct rt_sb_bind *b, struct rt_sb_src *s, struct hutch_err *err)
{
	src_init(s);
	return resolve(b->ro ? "--ro-bind" : "--bind", b->src, 0, true, s, err);
}

/* Rootless, hutch could copy no mount of the caller's namespace: the path s resolved to is
 * opened again here, following no symlink at all, and must be the very file s->fd is. */
static int retake(const char *what, const struct rt_sb_src *s, struct hutch_err *err)
{
	struct open_how how = { .flags = O_PATH | O_CLOEXEC,
				.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
	_cleanup_close_ int fd = hutch_sys->openat2(AT_FDCWD, s->real, &how, sizeof(how));
	struct stat a, b;
	if (fd < 0)
		return hutch_fail_errno(err, errno, "%s %s", what, s->real);
	if (fstat(fd, &a) < 0 || fstat(s->fd, &b) < 0 || a.st_dev != b.st_dev ||
	    a.st_ino != b.st_ino)
		return hutch_fail(err, ESTALE, "%s %s: replaced while the sandbox was made", what,
				  s->real);
	return copy_tree(what, fd, s->real, err);
}

/* s's tree attached at scratch/src/name (a file for a file), which becomes s->at. */
static int anchor(const char *what, struct rt_sb_src *s, int srcdir, const char *dir,
		  const char *name, struct hutch_err *err)
{
	if (s->tree < 0 && (s->tree = retake(what, s, err)) < 0)
		return s->tree;
	int r = s->file ? openat(srcdir, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)
			: mkdirat(srcdir, name, 0700);
	if (r < 0)
		return hutch_fail_errno(err, errno, "sandbox: mount point %s/%s", dir, name);
	if (s->file)
		close(r);
	_cleanup_close_ int target = openat(srcdir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (target < 0)
		return hutch_fail_errno(err, errno, "sandbox: open %s/%s", dir, name);
	/* From here the tree fd is that mount, held until hutch ends. */
	if (ns_attach_tree(s->tree, target, err) < 0)
		return hutch_err_prefix(err, "%s %s: ", what, s->real);
	s->at = hutch_xasprintf("%s/%s", dir, name);
	return 0;
}

int rt_sb_anchor_paths(const struct rt_sb_opts *o, struct rt_sb_plan *p, const char *scratch,
		       struct hutch_err *err)
{
	_cleanup_free_ char *dir = hutch_xasprintf("%s/src", scratch);
	/* 0711: a sandbox's mapped root binds them itself when hutch may not (rootless). */
	if (mkdir(dir, 0711) < 0)
		return hutch_fail_errno(err, errno, "sandbox: mkdir %s", dir);
	_cleanup_close_ int srcdir = open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (srcdir < 0)
		return hutch_fail_errno(err, errno, "sandbox: open %s", dir);
	if (p->image.real)
		TRY(anchor("--image", &p->image, srcdir, dir, "image", err));
	if (p->ws.real)
		TRY(anchor("--workspace", &p->ws, srcdir, dir, "workspace", err));
	for (size_t i = 0; i < o->n_binds; i++) {
		char name[32];
		snprintf(name, sizeof(name), "bind-%zu", i);
		TRY(anchor(o->binds[i].ro ? "--ro-bind" : "--bind", &p->srcs[i], srcdir, dir, name,
			   err));
	}
	return 0;
}

static void src_clear(struct rt_sb_src *s)
{
	if (s->fd >= 0)
		close(s->fd);
	if (s->tree >= 0)
		close(s->tree);
	free(s->real);
	free(s->at);
	src_init(s);
}

void rt_sb_paths_clear(struct rt_sb_plan *p)
{
	if (!p->srcs) /* never resolved (host mode, or an earlier step failed) */
		return;
	src_clear(&p->ws);
	src_clear(&p->image);
	for (size_t i = 0; i < p->n_srcs; i++)
		src_clear(&p->srcs[i]);
	free(p->srcs);
	p->srcs = NULL;
}
