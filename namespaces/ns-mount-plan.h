/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Mounts as data (included through ns-mount.h): a pure planner turns the OCI mount list into
 * an array of operations, and ns_mount_apply performs them, each target resolved inside the
 * root fd, through the syscall seam of hutch-sys.h.
 */
#ifndef HUTCH_NS_MOUNT_PLAN_H
#define HUTCH_NS_MOUNT_PLAN_H

#include "hutch-base.h"

enum ns_mount_op_kind {
	NS_OP_REFUSE_SYMLINKS, /* fail if a component of target is a symlink */
	NS_OP_MKDIR,	       /* mkdir -p target: the mount point (a directory) */
	NS_OP_MKFILE,	       /* mkdir -p its parent, an empty file: a file's mount point */
	NS_OP_CHECK_DEST,      /* the mount point may not resolve into /proc (but: is_proc) */
	NS_OP_HOLD,	       /* keep the directory at target open (tmpcopyup's source) */
	NS_OP_MOUNT,	       /* mount(source, mount point, fstype, flags, data) */
	NS_OP_BIND,	       /* bind source (or attach tree) on the mount point */
	NS_OP_REMOUNT_BIND,    /* per-mount flags of the mount at target, keeping locked ones */
	NS_OP_REMOUNT,	       /* MS_REMOUNT|flags with data: the fs's own options */
	NS_OP_PROPAGATION,     /* flags: MS_SHARED, MS_SLAVE, ... of the mount at target */
	NS_OP_CHECK_PROCFS,    /* the mount at target must be a real procfs */
	NS_OP_COPYUP,	       /* copy the held directory's content into the mount at target */
	NS_OP_SYMLINK,	       /* symlink target -> source, an existing one kept */
	NS_OP_SETATTR,	       /* MOUNT_ATTR_* flags set, clear cleared: the mount at target and
				* all beneath it (mount_setattr AT_RECURSIVE) */
	NS_OP_FAIL,	       /* fail with error and label: a problem found while planning */
	/* Host mode's view (ns-mount-view.c): plain paths relative to the root fd, and fds in
	 * numbered slots, held from one op to a later one. */
	NS_OP_OPEN,	  /* slot: target, O_PATH|O_NOFOLLOW; -1 when it can't be opened */
	NS_OP_OPEN_AT,	  /* slot: the file source in the mount in slot2, O_PATH */
	NS_OP_CLOSE,	  /* closes slot */
	NS_OP_TMPFS,	  /* slot: a detached tmpfs, root mode source, size data, MS_RDONLY */
	NS_OP_CREATE_IN,  /* an empty file source in the mount in slot2 */
	NS_OP_SET_RDONLY, /* the mount in slot, or at target if slot < 0, recursively: flags 0 */
	NS_OP_CLONE,	  /* slot: a detached copy of the tree at target, with its submounts */
	NS_OP_MKPOINT,	  /* mkdir -p, and a file last if is_file, or if slot holds one */
	NS_OP_MOVE,	  /* the mount in slot moved onto target */
	NS_OP_BIND_SLOTS, /* the file in slot2 bound on the one in slot, unless slot is -1 */
	NS_OP_MOUNT_AT,	  /* mount(source, target, fstype, flags, data) */
	NS_OP_UMOUNT,	  /* umount2(target, MNT_DETACH) */
	NS_OP_TEST,	  /* sets the state to NS_BRANCH_DIR, _MISSING or 0 from lstat(target) */
};

/* When an op runs (a mask; 0: always): after a MOUNT with a fallback, when it worked or when
 * it fell back; after a TEST, when the target is a directory or is missing. */
enum ns_mount_branch {
	NS_BRANCH_ALWAYS = 0,
	NS_BRANCH_MOUNTED = 1,
	NS_BRANCH_FELL_BACK = 2,
	NS_BRANCH_DIR = 4,
	NS_BRANCH_MISSING = 8,
};

#define NS_RDONLY_ALONE 1u /* SET_RDONLY: that mount, not those beneath it */
#define NS_FALLBACK_EPERM 1u
#define NS_FALLBACK_EBUSY 2u

struct ns_mount_op {
	enum ns_mount_op_kind kind;
	unsigned branch;    /* ns_mount_branch bits */
	const char *target; /* absolute, inside the root */
	const char *source; /* host path, fs source or symlink content */
	const char *fstype, *data;
	const char *label; /* what the error message names */
	const char *spec;  /* the spec mount's destination: errors read "mount <spec>: ..." */
	unsigned long flags, clear;
	int tree;	   /* BIND: a detached tree of source (ns_make_tree), or -1 */
	int slot, slot2;   /* the view's ops: fd slots, from 0 */
	unsigned fallback; /* MOUNT: NS_FALLBACK_* errors that select the FELL_BACK ops */
	int error;	   /* FAIL: the errno, with its text after label when with_errno */
	bool with_errno;
	bool recursive; /* BIND */
	bool is_proc;	/* CHECK_DEST: proc itself may be mounted on /proc */
	bool is_file;	/* MKPOINT */
};

/* One op, its tree and slots unset: NS_MOUNT_OP(NS_OP_UMOUNT, .target = "/x", .label = ...). */
#define NS_MOUNT_OP(k, ...)                                                                        \
	((struct ns_mount_op){ .kind = (k), .tree = -1, .slot = -1, .slot2 = -1, __VA_ARGS__ })

struct ns_mount_plan {
	struct ns_mount_op *ops;
	size_t n, cap;
	char **owned; /* strings the ops point to */
	size_t n_owned, cap_owned;
	bool dev_bound;	       /* a spec mount binds a whole /dev: it is not populated */
	const char *view_root; /* host mode's view: where its new root is staged */
};
void ns_mount_plan_free(struct ns_mount_plan *p);

/* What the planner needs to know of the live system, gathered by ns_mount_facts_get. */
enum ns_source_kind { NS_SOURCE_DIR, NS_SOURCE_FILE };
struct ns_mount_facts {
	/* A bind source (tree >= 0: the tree's root): an ns_source_kind, or -errno. */
	int (*source_kind)(void *ctx, const char *path, int tree);
	void *ctx;
	bool cgroup2;			  /* /sys/fs/cgroup is cgroup2 (v2 host) */
	bool cgroup2_unified;		  /* /sys/fs/cgroup/unified is cgroup2 (hybrid host) */
	char *self_cgroup;		  /* /proc/self/cgroup, when a v1 cgroup mount needs it */
	struct hutch_err self_cgroup_err; /* why it could not be read */
};
/* Reads what cfg's mounts need; free with ns_mount_facts_free. */
void ns_mount_facts_get(const struct ns_rootfs *cfg, struct ns_mount_facts *f);
void ns_mount_facts_free(struct ns_mount_facts *f);

/* The live system's answer for source_kind: stat(2) of path, or fstat of tree. */
int ns_stat_kind(void *ctx, const char *path, int tree);

/* Host mode's view: the directories between rw roots and denied paths pinned (bound onto
 * themselves: no rename), every tree the command may see cloned, the host read-only, and a new
 * root with only those trees, links and private tmpfs in it, denied paths covered on top (deny
 * wins, then rw, then read); ns_pivot_root(plan.view_root) then enters it. */
struct ns_view_tmpfs {
	const char *path;
	uint64_t size;
};
struct ns_view_link {
	const char *path, *target; /* a symlink the new root has: /bin -> usr/bin, /dev/fd */
};
struct ns_view_bind {
	const char *source, *target; /* a host file laid over another first (bridge's /etc) */
};
struct ns_view {
	char *const *read, *const *rw, *const *deny; /* read: the system's trees too */
	size_t n_read, n_rw, n_deny;
	const char *cwd; /* the working directory: an empty one where no tree is */
	const struct ns_view_tmpfs *tmpfs;
	const struct ns_view_link *links;
	const struct ns_view_bind *binds;
	size_t n_tmpfs, n_links, n_binds;
};
/* Pure (f->source_kind answers what exists): the view's ops, for a root fd of "/". */
void ns_mount_plan_view(const struct ns_view *v, const struct ns_mount_facts *f,
			struct ns_mount_plan *p);

/* Pure: the ops that make cfg's mounts in its rootfs (not the rootfs bind, not /dev). */
void ns_mount_plan_rootfs(const struct ns_rootfs *cfg, const struct ns_mount_facts *f,
			  struct ns_mount_plan *p);
/* Pure: after pivot_root (and the console), the ops that finish what ns_mount_deferred put
 * off: each such mount at its destination made read-only, then its recursive options. */
void ns_mount_plan_finish(const struct ns_mount *mounts, size_t n, struct ns_mount_plan *p);
/* Performs ops in order, each target resolved inside rootfd, never following a symlink out. */
int ns_mount_apply(int rootfd, const struct ns_mount_op *ops, size_t n, struct hutch_err *err);
/* The same with the root fd "/": host paths (host mode's view, sandbox mode's own mounts). */
int ns_mount_apply_host(const struct ns_mount_op *ops, size_t n, struct hutch_err *err);

#endif
