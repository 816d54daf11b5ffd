// SPDX-License-Identifier: Apache-2.0
/*
 * Idmapped mounts (Linux 5.12, mount_setattr MOUNT_ATTR_IDMAP): a detached copy of a tree
 * whose files are seen, and created, through an id mapping. The mapping is that of a user
 * namespace made for the purpose by a short-lived child: on-disk id container_id is shown as
 * host_id, as OCI's mounts[].uidMappings reads. The parent makes the tree (only the host's
 * root may idmap a host filesystem); the container's init attaches it (ns_attach_tree).
 */
#include "ns-internal.h"
#include "hutch-sys.h"

#include <fcntl.h>
#include <linux/mount.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#ifndef MOUNT_ATTR_IDMAP
#define MOUNT_ATTR_IDMAP 0x00100000
#endif

struct mount_attr_v0 {
	uint64_t attr_set, attr_clr, propagation, userns_fd;
};

/* A child that unshares a user namespace and waits to be killed; its maps are written by us. */
static int userns_for(const struct ns_idmap *uids, size_t nu, const struct ns_idmap *gids,
		      size_t ng, struct hutch_err *err)
{
	int pipefd[2];
	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return hutch_fail_errno(err, errno, "idmap: pipe");
	pid_t pid = fork();
	if (pid < 0) {
		close(pipefd[0]);
		close(pipefd[1]);
		return hutch_fail_errno(err, errno, "idmap: fork");
	}
	if (pid == 0) {
		char c = unshare(CLONE_NEWUSER) == 0 ? 'u' : 'e';
		(void)!write(pipefd[1], &c, 1);
		pause();
		_exit(0);
	}
	close(pipefd[1]);
	char c = 0;
	int r = read(pipefd[0], &c, 1) == 1 && c == 'u' ? 0 : -EPERM;
	close(pipefd[0]);
	if (r < 0)
		r = hutch_fail(err, EPERM, "idmap: unshare a user namespace: not permitted");
	if (r == 0)
		r = ns_write_idmaps(pid, uids, nu, gids, ng, err);
	int fd = -1;
	if (r == 0) {
		char path[64];
		snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			r = hutch_fail_errno(err, errno, "idmap: open %s", path);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return r < 0 ? r : fd;
}

int ns_set_tree(int tree, const char *what, const struct ns_tree_opts *o, struct hutch_err *err)
{
	unsigned rec = o->recursive ? AT_RECURSIVE : 0;
	if (!o->idmap && !o->attrs)
		return 0;
	_cleanup_close_ int userns = -1;
	if (o->idmap) {
		userns = userns_for(o->uids, o->n_uids, o->gids, o->n_gids, err);
		if (userns < 0)
			return userns;
	}
	struct mount_attr_v0 attr = { .attr_set = (o->idmap ? MOUNT_ATTR_IDMAP : 0) | o->attrs,
				      .userns_fd = o->idmap ? (uint64_t)userns : 0 };
	/* The idmap goes on submounts only when asked ("ridmap"); the attributes with it. */
	unsigned set_rec = o->idmap_recursive || !o->idmap ? rec : 0;
	if (hutch_sys->mount_setattr(tree, "", AT_EMPTY_PATH | set_rec, &attr, sizeof(attr)) < 0)
		/* EINVAL: a filesystem that cannot be idmapped (or a kernel before 5.12). */
		return hutch_fail_errno(err, errno, "%s %s", o->idmap ? "idmap" : "mount_setattr",
					what);
	return 0;
}

int ns_make_tree(const char *source, const struct ns_tree_opts *o, struct hutch_err *err)
{
	unsigned rec = o->recursive ? AT_RECURSIVE : 0;
	_cleanup_close_ int tree =
		hutch_sys->open_tree(AT_FDCWD, source, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | rec);
	if (tree < 0)
		return hutch_fail_errno(err, errno, "open_tree %s", source);
	int r = ns_set_tree(tree, source, o, err);
	return r < 0 ? r : steal_fd(tree);
}

int ns_attach_tree(int tree, int target, struct hutch_err *err)
{
	if (hutch_sys->move_mount(tree, "", target, "",
				  MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		return hutch_fail_errno(err, errno, "attach the idmapped mount");
	return 0;
}
