/* SPDX-License-Identifier: Apache-2.0 */
/*
 * namespaces/: what each namespace needs. The mount namespace's mounts, /dev, masked and
 * read-only paths and pivot_root; id maps; capabilities and credentials; hostname, sysctls,
 * rlimits; loopback. Plain data in, syscalls out: runtime/ turns the OCI spec into these.
 */
#ifndef HUTCH_NS_H
#define HUTCH_NS_H

#include "hutch-base.h"

#include <stdint.h>
#include <sys/types.h>

#include "ns-mount.h" /* mounts: ns-mount*.c, ns-dev.c, ns-pivot.c, ns-mask.c */
#include "ns-proc.h"  /* the kernel attributes a process keeps across execve */

/* ---- identity (ns-user.c, ns-caps.c) ---- */

struct ns_idmap {
	uint32_t container_id, host_id, size;
};

/* Detached mount trees (ns-idmount.c): a copy of source (with its submounts when recursive),
 * idmapped when asked (on-disk container_id seen and created as host_id; idmap_recursive:
 * its submounts too) and with the MOUNT_ATTR_* flags attrs; ns_attach_tree moves it onto
 * target (an O_PATH fd), in the caller's mount namespace. The parent makes them with the
 * host's privileges (only the host's root may idmap a host filesystem, and a source may lie
 * under directories a container's root cannot search); EINVAL from an idmap means the
 * filesystem cannot be idmapped. */
struct ns_tree_opts {
	bool recursive, idmap, idmap_recursive;
	uint64_t attrs;
	const struct ns_idmap *uids, *gids;
	size_t n_uids, n_gids;
};
int ns_make_tree(const char *source, const struct ns_tree_opts *o, struct hutch_err *err);
int ns_attach_tree(int tree, int target, struct hutch_err *err);
/* The same maps and attributes on a tree already detached (what names it in errors). */
int ns_set_tree(int tree, const char *what, const struct ns_tree_opts *o, struct hutch_err *err);
/* Parent side: writes /proc/PID/{uid_map,setgroups,gid_map}. */
int ns_write_idmaps(pid_t pid, const struct ns_idmap *uids, size_t n_uids,
		    const struct ns_idmap *gids, size_t n_gids, struct hutch_err *err);

/* A rootless caller's own user namespace (ns-rootless.c). plan reads /etc/subuid and subgid
 * and checks newuidmap/newgidmap (subids: the caller's ranges map onto themselves, else why
 * not); enter unshares and maps the caller's ids onto themselves, with the ranges or alone.
 * Capabilities are then full in the namespace, as long as hutch does not execve. */
struct ns_rootless {
	bool entered, subids;
	uid_t uid;
	gid_t gid;
	struct ns_idmap sub_uid, sub_gid; /* identity-mapped: container_id == host_id */
	char why[160];			  /* !subids: why one id only */
};
int ns_rootless_plan(struct ns_rootless *r);
int ns_rootless_enter(struct ns_rootless *r, struct hutch_err *err);
/* name's or id's line of an /etc/subuid text, as an identity map; -ENOENT when none. */
int ns_subid_find(const char *text, const char *name, uid_t id, struct ns_idmap *out);
/* hutch doctor: can uid `as` ((uid_t)-1: the caller) make a user and mount namespace, and
 * (overlay) mount overlayfs in it? 0, -EPERM (no user namespace), -ENODEV (no overlay). */
int ns_probe_userns(uid_t as, bool overlay);
/* newuidmap or newgidmap usable (installed, setuid or with file caps); else why not. */
int ns_idmap_helper(const char *name, char *why, size_t len);

struct ns_caps {
	uint64_t bounding, effective, inheritable, permitted, ambient; /* bit N = capability N */
};
/* "CAP_SYS_ADMIN" -> 21; -EINVAL for an unknown name. */
int ns_cap_from_name(const char *name);
const char *ns_cap_name(int cap);
int ns_cap_last(void);

struct ns_user {
	uid_t uid;
	gid_t gid;
	const gid_t *additional_gids;
	size_t n_additional_gids;
	bool has_umask;
	mode_t umask;
};
/* setgroups/setresgid/setresuid keeping capabilities, so ns_apply_caps can set them after. */
int ns_switch_user(const struct ns_user *user, struct hutch_err *err);
/* Drops the bounding set, then sets effective/permitted/inheritable and raises ambient. */
int ns_apply_caps(const struct ns_caps *caps, struct hutch_err *err);
int ns_set_no_new_privs(struct hutch_err *err);
/* After ns_switch_user the effective set is empty: make it the permitted set again, for
 * setup steps that need a capability between the user switch and ns_apply_caps. */
void ns_raise_effective(void);

/* ---- the rest of a process's environment (ns-misc.c) ---- */

struct ns_rlimit {
	int resource; /* RLIMIT_* */
	uint64_t soft, hard;
};
/* "RLIMIT_NOFILE" -> RLIMIT_NOFILE; -EINVAL when unknown. */
int ns_rlimit_from_name(const char *name);
const char *ns_rlimit_name(int resource); /* and back ("RLIMIT_?" when unknown) */
int ns_set_rlimits(const struct ns_rlimit *v, size_t n, struct hutch_err *err);
/* A new user namespace's RLIMIT_SIGPENDING and RLIMIT_MSGQUEUE are its maker's (ns-misc.c):
 * lowered to v's hard limits around the clone that makes one, then restored. */
struct ns_userns_limits {
	size_t n;
	int resource[2];
	uint64_t soft[2]; /* as they were */
};
int ns_userns_limits_lower(const struct ns_rlimit *v, size_t n, struct ns_userns_limits *saved,
			   struct hutch_err *err);
void ns_userns_limits_restore(const struct ns_userns_limits *saved);

int ns_set_hostname(const char *hostname, const char *domainname, struct hutch_err *err);
/* A new network namespace, which this process does not stay in: its fd, and (path given) the
 * namespace bound on path (an empty file made there), so that another program can join it by
 * path. It lives while the fd or the mount does. sysfs_at (or NULL): a read-only sysfs of the
 * new namespace mounted there, for a container in a user namespace that cannot mount one
 * for a network namespace it does not own. */
int ns_netns_new(const char *path, const char *sysfs_at, struct hutch_err *err);
/* Writes /proc/sys/<key with dots as slashes>; keys are checked against the namespaces the
 * container creates (new_ns: CLONE_NEW* flags), as runc does (net.* needs a new netns,
 * kernel.* ipc keys a new ipcns, ...); user.* (the ucount limits) a new user namespace. */
struct ns_sysctl {
	char *key, *value;
};
int ns_check_sysctl(const char *key, uint32_t new_ns, struct hutch_err *err);
int ns_write_sysctls(const struct ns_sysctl *v, size_t n, struct hutch_err *err);
int ns_set_oom_score_adj(pid_t pid, int adj, struct hutch_err *err);

/* CLONE_NEW* flag for an OCI namespace type name ("pid", "network", ...); -EINVAL if unknown. */
int ns_type_flag(const char *type);
const char *ns_type_name(int clone_flag); /* and back ("?" when unknown) */
/* setns() into the namespace file at path, checking it is of the expected type. */
int ns_join(const char *path, int clone_flag, struct hutch_err *err);

/* ---- terminal (ns-tty.c) ---- */

/* The current root's /dev/pts/ptmx, opened only once verified to be a devpts's own 5:2 node
 * (an exec's container may have replaced it with anything). */
int ns_open_ptmx(struct hutch_err *err);
/* Opens a new pty from the current root's /dev/pts/ptmx (after pivot), makes the slave the
 * controlling terminal and stdio, and returns the master fd. console (the init's): the slave
 * is also bound over /dev/console, and may be found by its path on kernels without
 * TIOCGPTPEER; an exec's leaves /dev/console its init's and never looks up a path. The slave
 * belongs to owner (the process's user), its group left as devpts made it (gid=, the tty
 * group), as runc does. */
int ns_setup_pty(unsigned short rows, unsigned short cols, bool console, uid_t owner,
		 struct hutch_err *err);
/* Sends fd over a unix socket as exactly one SCM_RIGHTS message (the console-socket protocol). */
int ns_send_fd(int sock, int fd, const char *name, struct hutch_err *err);
int ns_recv_fd(int sock, struct hutch_err *err);

#endif
