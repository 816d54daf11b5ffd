// SPDX-License-Identifier: Apache-2.0
/*
 * A pooled sandbox's per-request mounts: the workspace and binds the client resolved (an O_PATH
 * fd and a detached copy of the tree, made in the client's namespace, which is the only place
 * it can be copied from). They are checked as a cold run checks them, idmapped for their
 * owners onto the sandbox user's host ids (fixed when the pool made the user namespace), and
 * moved onto their mount points by a helper that joined the sandbox's mount namespace.
 */
#include "rt-sandbox-pool.h"
#include "rt-sandbox-plan.h"
#include "hutch-path.h"

#include <fcntl.h>
#include <linux/mount.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

/* fd is what its tree's root is (the copy the client made of it), a directory or (file_ok)
 * a regular file. */
static int same_tree(const char *what, int fd, int tree, bool file_ok, struct hutch_err *err)
{
	struct stat a, b;
	if (fstat(fd, &a) < 0 || fstat(tree, &b) < 0)
		return hutch_fail_errno(err, errno, "pool: the request's %s", what);
	if (!S_ISDIR(a.st_mode) && !(file_ok && S_ISREG(a.st_mode)))
		return hutch_fail(err, EBADMSG, "pool: the request's %s is not a directory%s", what,
				  file_ok ? " or a regular file" : "");
	if (a.st_dev != b.st_dev || a.st_ino != b.st_ino || (a.st_mode ^ b.st_mode) & S_IFMT)
		return hutch_fail(err, EBADMSG, "pool: the request's %s is not its tree", what);
	return 0;
}

static bool is_dir(int fd)
{
	struct stat st;
	return fstat(fd, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The client (root, which resolved and checked them) is the only sender (SO_PASSCRED), but
 * the supervisor acts as root on whatever fds come: each is checked for what it must be, and
 * what the client checked by path is checked again by fd. */
int rt_sb_pool_req_check(const struct rt_sb_pool_req *r, struct hutch_err *err)
{
	const struct rt_sb_opts *o = &r->o;
	const char *name = o->report_name;
	for (int i = 0; i < 3; i++)
		if (is_dir(r->stdio[i])) /* a directory fd is a way out of the rootfs */
			return hutch_fail(err, EBADMSG, "pool: the request's fd %d is a directory",
					  i);
	if (o->report_dir_fd >= 0 &&
	    (!is_dir(o->report_dir_fd) || !name || !*name || strchr(name, '/') ||
	     !strcmp(name, ".") || !strcmp(name, "..")))
		return hutch_fail(err, EBADMSG,
				  "pool: the request's --report is not a name in a "
				  "directory");
	if (o->report_fd >= 0 && is_dir(o->report_fd))
		return hutch_fail(err, EBADMSG, "pool: the request's --report-fd is a directory");
	if (o->has_owner && (!o->owner_uid || !o->owner_gid))
		return hutch_fail(err, EINVAL, "--workspace-owner: uid and gid 0 are root's");
	if ((r->ws_fd >= 0) != (o->workspace != NULL))
		return hutch_fail(err, EBADMSG, "pool: a malformed request");
	if (r->ws_fd >= 0)
		TRY(same_tree("--workspace", r->ws_fd, r->ws_tree, false, err));
	for (size_t i = 0; i < o->n_binds; i++)
		TRY(same_tree("--bind", r->bind_fd[i], r->bind_tree[i], true, err));
	/* hutch's own directories, by what the fds are (the client checked the names) */
	struct rt_sb_opts c = { .isolation = RT_SB_ISO_NAMESPACES, .n_binds = o->n_binds };
	_cleanup_free_ char *ws = r->ws_fd >= 0 ? hutch_fd_realpath(r->ws_fd) : NULL;
	struct rt_sb_bind b[RT_SB_POOL_BINDS];
	char *srcs[RT_SB_POOL_BINDS] = { 0 };
	c.workspace = ws, c.binds = b;
	for (size_t i = 0; i < o->n_binds; i++)
		b[i] = (struct rt_sb_bind){ .src = srcs[i] = hutch_fd_realpath(r->bind_fd[i]),
					    .dst = o->binds[i].dst,
					    .ro = o->binds[i].ro };
	int rr = rt_sb_check_own_dirs(&c, err);
	for (size_t i = 0; i < o->n_binds; i++)
		free(srcs[i]);
	return rr;
}

char *rt_sb_pool_binds_misfit(const struct rt_sb_plan *p, const struct rt_sb_pool_req *r)
{
	struct hutch_err e = { 0 };
	if (!r->o.n_binds)
		return NULL;
	_cleanup_close_ int root = open(p->rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
	for (size_t i = 0; i < r->o.n_binds && root >= 0; i++) {
		struct stat a, b;
		_cleanup_close_ int dst =
			hutch_open_in_root(root, r->o.binds[i].dst, O_PATH, 0, &e);
		if (dst < 0 || fstat(dst, &a) < 0 || fstat(r->bind_fd[i], &b) < 0 ||
		    S_ISDIR(a.st_mode) != S_ISDIR(b.st_mode))
			return hutch_xasprintf(
				"--bind %s: the pool's image has no mount point there "
				"(a pooled bind needs one)",
				r->o.binds[i].dst);
	}
	return root < 0 ? hutch_xstrdup("--bind: the pool's root filesystem") : NULL;
}

/* Each tree moved onto its dst in the init's mount namespace, in order, by a child that
 * joined it: the supervisor stays where its scratch is. */
static int move_in(pid_t init, const int *trees, char *const *dsts, size_t n, struct hutch_err *err)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)init);
	_cleanup_close_ int mnt = open(path, O_RDONLY | O_CLOEXEC);
	int p[2];
	if (mnt < 0 || pipe2(p, O_CLOEXEC) < 0)
		return hutch_fail_errno(err, errno, "sandbox: its mount namespace");
	pid_t pid = fork();
	if (pid == 0) {
		struct hutch_err e = { 0 };
		int r = setns(mnt, CLONE_NEWNS) < 0 ? hutch_fail_errno(&e, errno, "setns") : 0;
		int root = r >= 0 ? open("/", O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
		for (size_t i = 0; i < n && r >= 0; i++) {
			int t = hutch_open_in_root(root, dsts[i], O_PATH, 0, &e);
			r = t < 0 ? t : ns_attach_tree(trees[i], t, &e);
			if (r < 0)
				hutch_err_prefix(&e, "attach at %s: ", dsts[i]);
		}
		(void)!write(p[1], &e, sizeof(e));
		_exit(r < 0);
	}
	close(p[1]);
	_cleanup_close_ int rd = p[0];
	if (pid < 0)
		return hutch_fail_errno(err, errno, "sandbox: fork");
	int st = 0;
	struct hutch_err e = { 0 };
	ssize_t got = hutch_read_all(rd, &e, sizeof(e));
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (got == (ssize_t)sizeof(e) && e.code) {
		*err = e;
		return -e.code;
	}
	return WIFEXITED(st) && WEXITSTATUS(st) == 0
		       ? 0
		       : hutch_fail(err, EIO, "sandbox: the mount helper failed");
}

/* A tree as the sandbox user sees it: on-disk uid:gid (idmap) written as its host ids. */
static int set_tree(int tree, const char *what, bool idmap, bool ro, uid_t uid, gid_t gid,
		    const struct rt_sb_plan *p, struct hutch_err *err)
{
	const struct ns_idmap u = { uid, p->host_uid, 1 }, g = { gid, p->host_gid, 1 };
	const struct ns_tree_opts to = { .recursive = true,
					 .idmap = idmap,
					 .idmap_recursive = true,
					 .attrs = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
						  (ro ? MOUNT_ATTR_RDONLY : 0),
					 .uids = &u,
					 .gids = &g,
					 .n_uids = 1,
					 .n_gids = 1 };
	int r = ns_set_tree(tree, what, &to, err);
	return r < 0 ? hutch_err_prefix(err, "%s: ", what) : 0;
}

/* The binds into o and p (as rt_sb_resolve_paths and rt_sb_plan_ids would have them). */
static int plan_binds(struct rt_sb_opts *o, struct rt_sb_plan *p, struct rt_sb_pool_req *r,
		      struct hutch_err *err)
{
	o->binds = steal_ptr(r->o.binds);
	o->n_binds = r->o.n_binds, r->o.n_binds = 0;
	free(p->srcs); /* none: the profile has no binds */
	p->srcs = hutch_xcalloc(o->n_binds + 1, sizeof(*p->srcs));
	p->n_srcs = o->n_binds;
	for (size_t i = 0; i < o->n_binds; i++) {
		struct stat st;
		p->srcs[i] = (struct rt_sb_src){ .fd = steal_fd(r->bind_fd[i]), .tree = -1 };
		p->srcs[i].real = hutch_fd_realpath(p->srcs[i].fd);
		p->srcs[i].file = fstat(p->srcs[i].fd, &st) == 0 && S_ISREG(st.st_mode);
	}
	return rt_sb_plan_pool_binds(o, p, err);
}

int rt_sb_pool_attach(struct rt_sb_opts *o, struct rt_sb_plan *p, pid_t init,
		      struct rt_sb_pool_req *r, struct hutch_err *err)
{
	int trees[RT_SB_POOL_BINDS + 1];
	char *dsts[RT_SB_POOL_BINDS + 1];
	size_t n = 0;
	if (!o->workspace && !r->o.n_binds)
		return 0;
	int rr = plan_binds(o, p, r, err);
	if (rr >= 0 && o->workspace) {
		p->ws.fd = steal_fd(r->ws_fd);
		p->ws.real = hutch_fd_realpath(p->ws.fd);
		rr = rt_sb_plan_pool_workspace(o, p, err);
		if (rr >= 0)
			rr = set_tree(r->ws_tree, "--workspace", true, false, p->write_uid,
				      p->write_gid, p, err);
		trees[n] = r->ws_tree, dsts[n++] = "/workspace";
	}
	for (size_t i = 0; rr >= 0 && i < o->n_binds; i++) {
		const struct rt_sb_bind *b = &o->binds[i];
		rr = set_tree(r->bind_tree[i], b->ro ? "--ro-bind" : "--bind", p->binds[i].idmapped,
			      b->ro, p->binds[i].uid, p->binds[i].gid, p, err);
		trees[n] = r->bind_tree[i], dsts[n++] = b->dst;
	}
	return rr < 0 ? rr : move_in(init, trees, dsts, n, err);
}
