// SPDX-License-Identifier: Apache-2.0
/*
 * Which host ids a sandbox runs and writes as. The rule: nothing it creates or changes may
 * belong to host uid 0 or gid 0, or to any host id but the one it was given (the workspace's
 * unprivileged owner, --workspace-owner's, or a subordinate id). So a root-owned workspace
 * or rw --bind is refused with the fix named, a group-root one gets a subordinate gid, and a
 * writable mount owned by someone else becomes an idmapped mount (ns_make_tree) whose files
 * are created as that owner. See docs/sandbox-ids.md.
 */
#include "rt-sandbox.h"
#include "rt-sandbox-plan.h"

#include <fcntl.h>
#include <linux/mount.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#define SUB_DEFAULT 0x70000000U /* no range for root in /etc/subuid: a high, unused one */

uint32_t rt_sb_sub_ids(const char *file)
{
	_cleanup_free_ char *text = NULL;
	struct hutch_err e = { 0 };
	if (hutch_read_file_at(AT_FDCWD, file, 1 << 20, &text, NULL, &e) < 0)
		return SUB_DEFAULT;
	char *save = NULL;
	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		unsigned long start, count;
		size_t k = !strncmp(l, "root:", 5) ? 5 : !strncmp(l, "0:", 2) ? 2 : 0;
		if (k && sscanf(l + k, "%lu:%lu", &start, &count) == 2 && count >= RT_SB_ID_SPAN &&
		    start > 0 && start < 0xffff0000UL)
			return (uint32_t)start;
	}
	return SUB_DEFAULT;
}

static int refuse_setgid_root(const char *what, const char *path, const struct stat *st,
			      struct hutch_err *err)
{
	if (S_ISDIR(st->st_mode) && (st->st_mode & S_ISGID) && st->st_gid == 0)
		return hutch_fail(err, EPERM,
				  "%s %s is a setgid directory of group root: what the sandbox "
				  "makes there would belong to gid 0; chmod g-s it, or chgrp it",
				  what, path);
	return 0;
}

/* Rootless: hutch's namespace maps only the caller's ids and its ranges, and no idmapped
 * mount of a host filesystem can be made in it. So what the sandbox writes to must be the
 * caller's, and the sandbox user (root too, with --as-root) runs as the caller there. */
static int plan_rootless_dir(const char *flag, const char *path, const struct stat *st,
			     const struct rt_sb_plan *p, uid_t *uid, gid_t *gid,
			     struct hutch_err *err)
{
	if (st->st_uid != p->user.uid)
		return hutch_fail(err, EPERM,
				  "%s %s is not yours (a rootless sandbox writes there as you, uid "
				  "%u): chown it, or bind it :ro",
				  flag, path, (unsigned)p->user.uid);
	*uid = p->user.uid;
	*gid = p->user.gid;
	return 0;
}

/* The workspace's owner is who the sandbox writes as there (--workspace-owner's after giving
 * them the directory); never root. Group root is replaced by the sandbox's own subordinate
 * gid: only a setgid directory would hand gid 0 on, and that is refused. */
static int plan_workspace(const struct rt_sb_opts *o, struct rt_sb_plan *p, struct hutch_err *err)
{
	struct stat st;
	const char *ws = p->ws.real; /* the directory resolved once, then only its fd */
	if (fstat(p->ws.fd, &st) < 0)
		return hutch_fail_errno(err, errno, "--workspace %s", ws);
	if (o->has_owner && (st.st_uid != o->owner_uid || st.st_gid != o->owner_gid)) {
		if (fchownat(p->ws.fd, "", o->owner_uid, o->owner_gid, AT_EMPTY_PATH) < 0)
			return hutch_fail_errno(err, errno, "--workspace-owner: chown %s", ws);
		p->ws_chowned = true;
		st.st_uid = o->owner_uid;
		st.st_gid = o->owner_gid;
	}
	if (p->rootless) {
		TRY(plan_rootless_dir("--workspace", ws, &st, p, &p->write_uid, &p->write_gid,
				      err));
		p->host_uid = p->write_uid, p->host_gid = p->write_gid; /* --as-root: root is you */
		return 0;
	}
	if (st.st_uid == 0)
		return hutch_fail(err, EPERM,
				  "--workspace %s is owned by root: what the sandbox writes there "
				  "would be root's, and a setuid file it left a way to root; chown "
				  "it to an unprivileged user, or give --workspace-owner UID:GID",
				  ws);
	TRY(refuse_setgid_root("--workspace", ws, &st, err));
	p->write_uid = st.st_uid;
	p->write_gid = st.st_gid ? st.st_gid : p->host_gid;
	p->ws_gid_replaced = st.st_gid == 0;
	if (o->as_root) {
		p->ws_idmapped = true; /* root inside is a subordinate id: it sees the owner's */
		return 0;
	}
	p->host_uid = p->write_uid; /* the sandbox user is the workspace's owner on the host */
	p->host_gid = p->write_gid;
	return 0;
}

int rt_sb_plan_pool_workspace(const struct rt_sb_opts *o, struct rt_sb_plan *p,
			      struct hutch_err *err)
{
	uid_t uid = p->host_uid;
	gid_t gid = p->host_gid;
	int r = plan_workspace(o, p, err);
	p->host_uid = uid, p->host_gid = gid;
	p->ws_idmapped = true;
	return r;
}

/* An rw bind of someone else's (not the sandbox user's) is idmapped onto the sandbox user. */
static int plan_bind(const struct rt_sb_bind *b, const struct rt_sb_src *src,
		     struct rt_sb_bind_ids *ids, const struct rt_sb_plan *p, struct hutch_err *err)
{
	struct stat st;
	if (b->ro)
		return 0;
	if (fstat(src->fd, &st) < 0)
		return hutch_fail_errno(err, errno, "--bind %s", src->real);
	if (p->rootless) {
		ids->idmapped = false;
		return plan_rootless_dir("--bind", src->real, &st, p, &ids->uid, &ids->gid, err);
	}
	if (st.st_uid == 0)
		return hutch_fail(
			err, EPERM,
			"--bind %s:%s:rw: %s is owned by root: what the sandbox writes "
			"there would be root's; chown it to an unprivileged user, or bind "
			"it :ro",
			b->src, b->dst, src->real);
	TRY(refuse_setgid_root("--bind", src->real, &st, err));
	ids->uid = st.st_uid;
	ids->gid = st.st_gid ? st.st_gid : p->host_gid;
	ids->idmapped = st.st_uid != p->host_uid || (st.st_gid && st.st_gid != p->host_gid);
	return 0;
}

int rt_sb_plan_pool_binds(const struct rt_sb_opts *o, struct rt_sb_plan *p, struct hutch_err *err)
{
	free(p->binds);
	p->binds = hutch_xcalloc(o->n_binds ? o->n_binds : 1, sizeof(*p->binds));
	for (size_t i = 0; i < o->n_binds; i++)
		TRY(plan_bind(&o->binds[i], &p->srcs[i], &p->binds[i], p, err));
	return 0;
}

/* A runtime that wraps the root filesystem in an overlay of its own: runsc (--overlay2=root:self,
 * its default since 20230404). */
static bool overlays_root(const struct rt_sb_opts *o)
{
	const char *base = strrchr(o->runtime, '/') ? strrchr(o->runtime, '/') + 1 : o->runtime;
	return strstr(base, "runsc") != NULL;
}

void rt_sb_plan_ranges(const struct rt_sb_opts *o, struct rt_sb_plan *p)
{
	p->host_root = o->host_root;
	p->userns = !o->host_root;
	p->binds = hutch_xcalloc(o->n_binds ? o->n_binds : 1, sizeof(*p->binds));
	p->uid = rt_sb_root_inside(o) ? 0 : o->uid; /* until the image's User is read */
	p->gid = rt_sb_root_inside(o) ? 0 : o->gid;
	if (!p->userns)
		return;
	p->sub_uid = rt_sb_sub_ids("/etc/subuid");
	p->sub_gid = rt_sb_sub_ids("/etc/subgid");
	p->full_range = o->as_root;
	/* A mount attached inside runsc's root would be part of its overlay, and the writes
	 * there lost: the idmapped trees stack on their scratch mounts, bound by the spec. */
	p->idmap_at_src = p->delegated && overlays_root(o);
	/* runsc gives the OCI profile to the session's first process only (--oci-seccomp): an
	 * exec'd command may set a setid bit on a file of its own. */
	p->exec_unfiltered = p->delegated && overlays_root(o) && o->name;
}

int rt_sb_plan_ids(const struct rt_sb_opts *o, struct rt_sb_plan *p, struct hutch_err *err)
{
	if (!p->userns)
		return 0; /* --host-root: host root, which writes as root (and is warned of) */
	p->host_uid = p->sub_uid + p->uid; /* --as-root's 0: the range's start */
	p->host_gid = p->sub_gid + p->gid;
	if (p->single_id) /* rootless, one id: the sandbox user is the caller */
		p->host_uid = p->user.uid, p->host_gid = p->user.gid;
	p->write_uid = p->host_uid;
	p->write_gid = p->host_gid;
	if (o->workspace)
		TRY(plan_workspace(o, p, err));
	for (size_t i = 0; i < o->n_binds; i++)
		TRY(plan_bind(&o->binds[i], &p->srcs[i], &p->binds[i], p, err));
	return 0;
}

/*
 * runsc's gofer makes a file as the container's root (its host id: the subordinate range's
 * start) and then gives it to the user asked for: an idmapped mount without that id refuses
 * the create (EOVERFLOW). It is mapped to itself, as the host sees it anyway; the file ends
 * as the owner's all the same. (--as-root: it is the sandbox user's already.)
 */
static void gofer_ids(const struct rt_sb_plan *p, struct ns_idmap *u, struct ns_idmap *g,
		      struct ns_tree_opts *to)
{
	if (!p->idmap_at_src)
		return;
	if (p->sub_uid != p->host_uid && p->sub_uid != u[0].container_id)
		u[to->n_uids++] = (struct ns_idmap){ p->sub_uid, p->sub_uid, 1 };
	if (p->sub_gid != p->host_gid && p->sub_gid != g[0].container_id)
		g[to->n_gids++] = (struct ns_idmap){ p->sub_gid, p->sub_gid, 1 };
}

/* src (a mount in scratch of what the caller named: rt-sandbox-paths.c), its on-disk uid:gid
 * seen as the sandbox user's host ids, onto dst in the rootfs. */
static int attach(int rootfd, const char *flag, const struct rt_sb_src *s, const char *dst,
		  uid_t uid, gid_t gid, const struct rt_sb_plan *p, struct hutch_err *err)
{
	const char *src = s->at, *real = s->real;
	struct ns_idmap u[2] = { { uid, p->host_uid, 1 } }, g[2] = { { gid, p->host_gid, 1 } };
	struct ns_tree_opts to = { .recursive = true,
				   .idmap = true,
				   .idmap_recursive = true,
				   .attrs = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
				   .uids = u,
				   .gids = g,
				   .n_uids = 1,
				   .n_gids = 1 };
	gofer_ids(p, u, g, &to);
	_cleanup_close_ int tree = ns_make_tree(src, &to, err);
	if (tree == -EINVAL)
		return hutch_fail(err, EINVAL,
				  "%s %s: its filesystem cannot be idmapped, which writing there "
				  "as its owner (uid %u) needs; chown it to uid %u, or bind it :ro",
				  flag, real, (unsigned)uid, (unsigned)p->host_uid);
	if (tree < 0)
		return hutch_err_prefix(err, "%s: ", flag);
	/* rootfd -1: on top of src itself, which the spec binds (p->idmap_at_src) */
	_cleanup_close_ int target = rootfd < 0 ? open(src, O_PATH | O_CLOEXEC)
						: hutch_open_in_root(rootfd, dst, O_PATH, 0, err);
	if (target < 0 && rootfd < 0)
		return hutch_fail_errno(err, errno, "%s: open %s", flag, src);
	if (target < 0)
		return hutch_err_prefix(err, "%s: ", flag);
	return ns_attach_tree(tree, target, err) < 0 ? hutch_err_prefix(err, "%s: ", flag) : 0;
}

int rt_sb_attach_idmapped(const struct rt_sb_opts *o, const struct rt_sb_plan *p,
			  struct hutch_err *err)
{
	if (!p->delegated)
		return 0; /* natively, the spec's mounts carry the maps (rt-sandbox-plan.c) */
	bool any = p->ws_idmapped;
	for (size_t i = 0; i < o->n_binds; i++)
		any |= p->binds[i].idmapped;
	if (!any)
		return 0;
	_cleanup_close_ int rootfd =
		p->idmap_at_src ? -1 : open(p->rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0 && !p->idmap_at_src)
		return hutch_fail_errno(err, errno, "sandbox: open %s", p->rootfs);
	if (p->ws_idmapped)
		TRY(attach(rootfd, "--workspace", &p->ws, "/workspace", p->write_uid, p->write_gid,
			   p, err));
	for (size_t i = 0; i < o->n_binds; i++)
		if (p->binds[i].idmapped)
			TRY(attach(rootfd, "--bind", &p->srcs[i], o->binds[i].dst, p->binds[i].uid,
				   p->binds[i].gid, p, err));
	return 0;
}

/* What a caller would not expect from its flags alone, said once on stderr. (An rw bind of
 * another user's is written as its owner, as a workspace is: the report says so.) */
void rt_sb_note_ids(const struct rt_sb_plan *p)
{
	if (p->host_root)
		hutch_warn(
			"--host-root: the sandbox runs as host root (uid 0) with the default "
			"container capabilities and no user namespace: what it writes is root's");
	if (p->ws_chowned)
		hutch_warn("--workspace-owner: %s now belongs to %u:%u, whom the sandbox writes "
			   "as",
			   p->ws.real, (unsigned)p->write_uid, (unsigned)p->write_gid);
	if (p->ws_gid_replaced)
		hutch_warn("--workspace %s: its group is root's; the sandbox's files get host gid "
			   "%u instead",
			   p->ws.real, (unsigned)p->write_gid);
}
