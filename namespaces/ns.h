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

/* ---- mounts (ns-mount.c, ns-dev.c, ns-pivot.c, ns-mask.c) ---- */

struct ns_mount {
	char *destination;	   /* absolute, inside the rootfs */
	char *type;		   /* "bind" for bind mounts, else the fs type; may be NULL */
	char *source;		   /* host path for binds, else fs source; may be NULL */
	unsigned long flags;	   /* MS_* flags to set (MS_RDONLY, MS_NOSUID, ...) */
	unsigned long clear_flags; /* MS_* flags explicitly cleared ("rw", "suid", ...) */
	unsigned long propagation; /* MS_SHARED/MS_SLAVE/MS_PRIVATE/MS_UNBINDABLE (|MS_REC), 0 */
	char *data;	/* comma-joined fs options the kernel parses (size=, mode=, ...) */
	bool bind;	/* MS_BIND */
	bool recursive; /* rbind */
	bool tmpcopyup; /* copy the image's directory content into a new tmpfs */
	/* An idmapped bind ("idmap", "ridmap": its submounts too): on-disk container_id is seen
	 * as host_id (OCI mounts[].uidMappings/gidMappings). The tree is made by the parent. */
	bool idmap, idmap_recursive;
	struct ns_idmap *uid_map, *gid_map;
	size_t n_uid_map, n_gid_map;
};

/* Parses OCI mount options ("ro", "nosuid", "rbind", "rprivate", "size=64m", ...) into m.
 * Pure: returns -EINVAL with err naming the option for what it does not know. */
int ns_mount_parse_options(struct ns_mount *m, char *const *options, size_t n,
			   struct hutch_err *err);
/* The inverse, for writing a spec out: options that parse back into m's flags, propagation,
 * bind, idmap and data (NULL-terminated, malloc'd; n of them). Pure. */
char **ns_mount_format_options(const struct ns_mount *m, size_t *n);

struct ns_device {
	char *path; /* absolute, inside the rootfs */
	char type;  /* 'c', 'b', 'u' (== 'c') or 'p' */
	int64_t major, minor;
	mode_t file_mode; /* permission bits; 0666 when unset */
	uid_t uid;
	gid_t gid;
};

/* v1: the container's own cgroup directory in one hierarchy, bind-mounted (read-only when the
 * mount is) in place of a fresh cgroup mount, so the container sees its own cgroup as the
 * root whatever its cgroup namespace, as runc does. */
struct ns_cgroup_dir {
	const char
		*name; /* as /proc/self/cgroup lists it: "memory", "cpu,cpuacct", "name=systemd" */
	const char *host_dir; /* absolute */
};

struct ns_rootfs {
	const char *rootfs;	   /* host path of the container's root */
	bool readonly;		   /* root.readonly */
	unsigned long propagation; /* rootfsPropagation; 0 means MS_SLAVE|MS_REC like runc */
	const struct ns_mount *mounts;
	size_t n_mounts;
	const struct ns_device *devices;
	size_t n_devices;
	bool in_userns; /* device nodes can't be made: bind them from the host instead */
	const struct ns_cgroup_dir *cgroup_dirs; /* v1 hosts; none: fresh cgroup mounts */
	size_t n_cgroup_dirs;
	bool new_mount_ns;
	const int *tree_fds; /* per mount: a tree of its source made by the parent, or -1 */
};

/* Before pivot: makes the rootfs a mount point, performs every mount and creates /dev
 * (standard nodes, fd links, ptmx, linux.devices). Destinations are resolved inside rootfs. */
int ns_mount_rootfs(const struct ns_rootfs *cfg, struct hutch_err *err);
/* pivot_root into cfg->rootfs (or MS_MOVE + chroot when no_pivot) and chdir("/"). */
int ns_pivot_root(const char *rootfs, bool no_pivot, struct hutch_err *err);
/* After pivot: masks (bind the verified /dev/null or an empty ro tmpfs) and read-only paths,
 * then remounts / read-only when asked. Requires /proc to be a real procfs. */
int ns_mask_paths(char *const *paths, size_t n, struct hutch_err *err);
int ns_readonly_paths(char *const *paths, size_t n, struct hutch_err *err);
int ns_finish_rootfs(bool readonly, unsigned long propagation, struct hutch_err *err);

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
/* Parent side: writes /proc/PID/{uid_map,setgroups,gid_map}. */
int ns_write_idmaps(pid_t pid, const struct ns_idmap *uids, size_t n_uids,
		    const struct ns_idmap *gids, size_t n_gids, struct hutch_err *err);

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

int ns_set_hostname(const char *hostname, const char *domainname, struct hutch_err *err);
/* Writes /proc/sys/<key with dots as slashes>; keys are checked against the namespaces the
 * container has, as runc does (net.* needs a new netns, kernel.* ipc keys a new ipcns, ...). */
struct ns_sysctl {
	char *key, *value;
};
int ns_check_sysctl(const char *key, bool new_net, bool new_ipc, bool new_uts,
		    struct hutch_err *err);
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
 * TIOCGPTPEER; an exec's leaves /dev/console its init's and never looks up a path. */
int ns_setup_pty(unsigned short rows, unsigned short cols, bool console, struct hutch_err *err);
/* Sends fd over a unix socket as exactly one SCM_RIGHTS message (the console-socket protocol). */
int ns_send_fd(int sock, int fd, const char *name, struct hutch_err *err);
int ns_recv_fd(int sock, struct hutch_err *err);

#endif
