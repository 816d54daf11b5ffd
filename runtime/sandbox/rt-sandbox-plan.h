/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What a sandbox's spec is built from beside its options: the plan (its rootfs, its process,
 * the ids on either side of its user namespace, rootless) and the steps that fill it in, in
 * rt-sandbox-plan.c, rt-sandbox-rootless.c, rt-sandbox-ids.c, rt-sandbox-rootfs.c and
 * rt-sandbox-image.c.
 */
#ifndef HUTCH_RT_SANDBOX_PLAN_H
#define HUTCH_RT_SANDBOX_PLAN_H

#include "rt-sandbox.h"

#define RT_SB_ID_SPAN 65536U /* ids 0..65535 exist inside */

/* An rw --bind's on-disk owner, and whether it is idmapped onto the sandbox user. */
struct rt_sb_bind_ids {
	uid_t uid;
	gid_t gid;
	bool idmapped;
};

struct img_run_config;

/* A path the caller gave (--workspace, a bind's source, an --image directory), resolved once by
 * rt_sb_resolve_paths. Everything after uses fd, or the mount made from it at `at`, a path of
 * hutch's own in scratch, which is what the spec and a delegate's config.json name. */
struct rt_sb_src {
	int fd;	    /* O_PATH, from hutch_chase (-1: none) */
	int tree;   /* a detached copy of fd's tree, then (attached) the mount at `at`; or -1 */
	char *real; /* where it resolved to, for messages (NULL: not resolved) */
	char *at;   /* its mount in scratch (NULL until rt_sb_anchor_paths) */
	bool file;  /* a regular file (else a directory) */
};

/* What the sandbox's spec is built from beside its options (rt-sandbox-plan.c). */
struct rt_sb_plan {
	char *rootfs; /* what root.path points at (the image, or an overlay on it) */
	/* The process, the options over the image's config (rt-sandbox-image.c). */
	uid_t uid; /* inside (root's 0 with --as-root or --host-root) */
	gid_t gid;
	char **argv;			     /* Entrypoint + Cmd, as the options replace them */
	char **image_env;		     /* the image's Env, beneath the options' own */
	char *cwd;			     /* --cwd, the image's WorkingDir, /workspace or / */
	struct img_run_config *image_config; /* a store image's (NULL: a directory) */
	bool has_image_pin; /* image_pin: its img_pin fd, which keeps its layers from prune */
	int image_pin;
	char *image_pin_path;	      /* which its last holder unlinks (rt_sb_plan_clear) */
	struct img_store *held_store; /* a store no pin can be written in, held locked instead */
	uid_t host_uid; /* the host id the sandbox user (root with --as-root) runs as */
	gid_t host_gid;
	uint32_t sub_uid,
		sub_gid; /* host starts of the subordinate ranges every other id maps to */
	uid_t write_uid; /* the host ids its files in the workspace get */
	gid_t write_gid;
	bool full_range;      /* --as-root: every id inside is subordinate, root's included */
	bool host_root;	      /* --host-root: no user namespace */
	bool delegated;	      /* --runtime other than native */
	bool exec_unfiltered; /* a runsc session: sandbox exec's commands have no seccomp */
	bool ws_idmapped;     /* the workspace is an idmapped mount hutch attaches */
	bool ws_chowned;      /* --workspace-owner gave the directory to write_uid:write_gid */
	bool ws_gid_replaced; /* the workspace's group is root's: write_gid is subordinate */
	struct rt_sb_bind_ids *binds; /* per o->binds */
	struct rt_sb_src ws, image;   /* --workspace, --image as a directory */
	struct rt_sb_src *srcs;	      /* per o->binds: their sources */
	size_t n_srcs;
	/* A delegate's idmapped trees stack on their src.at, which the spec binds (runsc). */
	bool idmap_at_src;
	bool layered;	  /* a throw-away layer over the image */
	bool rootfs_copy; /* layered by copying the image (no overlayfs) */
	bool with_init;	  /* PID 1 is hutch's init (native runs) */
	bool userns;
	char *cgroup; /* the sandbox's cgroup path, as cg_open takes it */
	const char
		*cgroups_path; /* linux.cgroupsPath in the spec (a child of cgroup for delegates) */
	char *image_name;      /* the image: NAME:TAG in the store, or the path given */
	char image_digest[72]; /* its manifest digest ("" for a directory) */
	const char *net_etc;   /* bridge: dir with resolv.conf, hosts, hostname to bind */
	const char *net_address; /* bridge: the sandbox's leased address, "A.B.C.D/N" */
	const char *netns_path;	 /* bridge, delegated: the namespace the runtime joins */
	const char *sysfs;	 /* and a sysfs of it, bound as /sys (none: a new sysfs) */
	/* Rootless (rt-sandbox-rootless.c): hutch's own user namespace, made first. */
	bool rootless;
	bool single_id;		 /* only the caller's id is mapped: the sandbox user is it */
	struct ns_rootless user; /* the caller's ids and ranges (why: one id only) */
	bool no_cgroup;		 /* rootless, nothing delegated, --best-effort: no limits */
	char weakened[8][192];	 /* what --best-effort ran without, for stderr and the report */
	size_t n_weakened;
};
/* rt-sandbox-plan.c: the sandbox's OCI spec, typed, held to rt_spec_check; bundle is where it
 * runs (hooks' cwd), the plan says where its rootfs is. */
int rt_sb_spec(const struct rt_sb_opts *o, const struct rt_sb_plan *p, const char *bundle,
	       struct rt_spec **out, struct hutch_err *err);
/* Its process's environment, and the limits of o (a pooled sandbox's request: rt-sandbox-pool). */
char **rt_sb_plan_env(const struct rt_sb_opts *o, const struct rt_sb_plan *p);
void rt_sb_plan_limits(const struct rt_sb_opts *o, struct cg_resources *r);
/* rt-sandbox-ucounts.c: the user namespace's limits as user.* sysctls of the spec; for a
 * delegate (RUNTIME), which refuses those, as a createContainer hook instead. */
void rt_sb_plan_ucounts(const struct rt_sb_opts *o, const struct rt_sb_plan *p, struct rt_spec *s);
void rt_sb_ucount_hook(const char *runtime, struct rt_spec *s);

/* rt-sandbox-rootless.c: for a rootless caller, before anything of the sandbox exists: the
 * cgroup base (a delegated one, else none with --best-effort, else a refusal naming the
 * fix); then, before the scratch mount namespace, the user namespace that owns it. */
/* msg on stderr, and in the report's weakened; _report: in the report alone, for what a
 * runtime never gives, which stderr would repeat on every run (rt-sandbox-rootless.c). */
void rt_sb_weaken(struct rt_sb_plan *p, const char *msg);
void rt_sb_weaken_report(struct rt_sb_plan *p, const char *msg);
int rt_sb_rootless_cgroup(const struct rt_sb_opts *o, struct rt_sb_plan *p, char **base,
			  struct hutch_err *err);
int rt_sb_rootless_enter(const struct rt_sb_opts *o, struct rt_sb_plan *p, struct hutch_err *err);

/* rt-sandbox-paths.c: the caller's paths into fds, first, in the caller's own namespaces (whose
 * owners decide which symlinks may be followed); then, in scratch, each one mounted from its fd
 * at a path of hutch's own (src->at). Cleared by rt_sb_plan_clear. */
int rt_sb_resolve_paths(const struct rt_sb_opts *o, struct rt_sb_plan *p, struct hutch_err *err);
int rt_sb_anchor_paths(const struct rt_sb_opts *o, struct rt_sb_plan *p, const char *scratch,
		       struct hutch_err *err);
void rt_sb_paths_clear(struct rt_sb_plan *p);
/* --workspace, or one bind, alone, as rt_sb_resolve_paths does it (a pool's client). */
int rt_sb_resolve_workspace(const char *path, struct rt_sb_src *s, struct hutch_err *err);
int rt_sb_resolve_bind(const struct rt_sb_bind *b, struct rt_sb_src *s, struct hutch_err *err);

/* rt-sandbox-ids.c: the host ids (refusing root-owned workspaces and rw binds), then, once
 * the rootfs exists, the idmapped mounts of what the sandbox user does not own. */
uint32_t rt_sb_sub_ids(const char *file); /* root's range in /etc/subuid or subgid */
/* The subordinate ranges and the user namespace, which the rootfs needs; then, with the
 * process planned, the host ids it runs and writes as. */
void rt_sb_plan_ranges(const struct rt_sb_opts *o, struct rt_sb_plan *p);
int rt_sb_plan_ids(const struct rt_sb_opts *o, struct rt_sb_plan *p, struct hutch_err *err);
int rt_sb_attach_idmapped(const struct rt_sb_opts *o, const struct rt_sb_plan *p,
			  struct hutch_err *err);
/* A pooled sandbox's workspace (p->ws.fd, given after its user namespace was made): checked
 * as any, and always idmapped onto the sandbox user's host ids, which stay. */
int rt_sb_plan_pool_workspace(const struct rt_sb_opts *o, struct rt_sb_plan *p,
			      struct hutch_err *err);
int rt_sb_plan_pool_binds(const struct rt_sb_opts *o, struct rt_sb_plan *p, struct hutch_err *err);
void rt_sb_note_ids(const struct rt_sb_plan *p);
/* rt-sandbox-rootfs.c: p->rootfs, the image as is or under a throw-away layer in scratch with
 * the mount points the options need. */
int rt_sb_plan_rootfs(const struct rt_sb_opts *o, struct rt_sb_plan *p, const char *scratch,
		      struct hutch_err *err);
/* --image is a directory (a path wins), else NAME[:TAG] in the store. */
bool rt_sb_image_is_dir(const char *image);

/* rt-sandbox-image.c: the process of p (user, argv, env, cwd): the options where given,
 * else the image's config (read by rt_sb_plan_rootfs), else hutch's defaults. After the
 * rootfs (a named User is looked up in its /etc/passwd), before rt_sb_plan_ids. */
int rt_sb_plan_process(const struct rt_sb_opts *o, struct rt_sb_plan *p, struct hutch_err *err);
void rt_sb_plan_clear(struct rt_sb_plan *p);

#endif
