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

/* ---- the rest of a process's environment (ns-misc.c, ns-net.c) ---- */

struct ns_rlimit {
	int resource; /* RLIMIT_* */
	uint64_t soft, hard;
};
/* "RLIMIT_NOFILE" -> RLIMIT_NOFILE; -EINVAL when unknown. */
int ns_rlimit_from_name(const char *name);
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

/* Brings lo up in the current network namespace: one RTM_NEWLINK message, no library. */
int ns_loopback_up(struct hutch_err *err);

/* CLONE_NEW* flag for an OCI namespace type name ("pid", "network", ...); -EINVAL if unknown. */
int ns_type_flag(const char *type);
/* setns() into the namespace file at path, checking it is of the expected type. */
int ns_join(const char *path, int clone_flag, struct hutch_err *err);

/* ---- bridge networking (ns-ipam.c, ns-bridge.c, ns-nft.c) ---- */

/* An IPv4 subnet; addresses are in host byte order throughout. */
struct ns_subnet {
	uint32_t net;
	unsigned prefix; /* 8..30 */
};
/* "10.89.0.0/24"; host bits must be zero. An IPv6 subnet is -ENOTSUP ("not supported"). */
int ns_subnet_parse(const char *s, struct ns_subnet *out, struct hutch_err *err);
/* The gateway (the bridge's address) is the subnet's first host address. */
uint32_t ns_subnet_gateway(const struct ns_subnet *s);
bool ns_subnet_contains(const struct ns_subnet *s, uint32_t addr);
int ns_ipv4_parse(const char *s, uint32_t *out); /* dotted quad only; -EINVAL otherwise */
#define NS_IPV4_LEN 16
void ns_ipv4_format(uint32_t addr, char buf[NS_IPV4_LEN]);

/* A lease: the address and the process holding it (pid + start time, so pid reuse is seen). */
struct ns_lease {
	uint32_t addr;
	pid_t pid;
	uint64_t start;
};
/* Called, under the lease lock, for each lease whose holder died, before it is dropped: the
 * caller removes what it made for that address (veth, nft rule). An error is ignored. */
typedef int (*ns_lease_stale_fn)(const struct ns_lease *l, void *arg, struct hutch_err *err);
/* Opens (making it) ROOT/<inode of this process's network namespace>/BRIDGE: one lease space
 * per bridge per network namespace. Returns a directory fd. */
int ns_ipam_open(const char *root, const char *bridge, struct hutch_err *err);
/* Leases the lowest free host address of s (after the gateway, before broadcast) to holder.
 * Stale leases are reclaimed first. Concurrent callers are serialised by flock(DIR/lock). */
int ns_ipam_lease(int dirfd, const struct ns_subnet *s, pid_t holder, ns_lease_stale_fn stale,
		  void *arg, uint32_t *addr, struct hutch_err *err);
int ns_ipam_release(int dirfd, uint32_t addr, struct hutch_err *err);
/* Drops every stale lease; returns how many. */
int ns_ipam_reclaim(int dirfd, ns_lease_stale_fn stale, void *arg, struct hutch_err *err);

struct ns_bridge {
	const char *name; /* "hutch0" */
	struct ns_subnet subnet;
	unsigned mtu; /* of the veth pair */
};
/* Creates the bridge with the gateway address when missing, brings it up, and turns on IPv4
 * forwarding in this network namespace when it is off. The bridge outlives the sandbox. */
int ns_bridge_ensure(const struct ns_bridge *br, struct hutch_err *err);
/* The host end's name for a sandbox address: "hv" + 8 hex digits. */
#define NS_IFNAME_LEN 16
void ns_veth_name(uint32_t addr, char buf[NS_IFNAME_LEN]);
/* A veth pair: the host end joins the bridge; the peer is created directly inside netns_fd
 * as eth0 with addr/prefix, the MTU, up, and a default route via the gateway. */
int ns_bridge_attach(const struct ns_bridge *br, int netns_fd, uint32_t addr,
		     struct hutch_err *err);
/* Deletes the host end of addr's veth (its peer goes with it); a missing link is fine. */
int ns_bridge_detach(uint32_t addr, struct hutch_err *err);

/* Outbound NAT in nftables table "ip hutch" (base chain made when missing): one masquerade
 * rule per sandbox address, tagged with a comment so it can be found and deleted later.
 * libnftables is dlopen'ed on first use (see ns-nft.c for why). */
int ns_nft_masq_add(const char *bridge, uint32_t addr, struct hutch_err *err);
int ns_nft_masq_del(uint32_t addr, struct hutch_err *err);

/* ---- terminal (ns-tty.c) ---- */

/* The current root's /dev/pts/ptmx, opened only once verified to be a devpts's own 5:2 node
 * (an exec's container may have replaced it with anything). */
int ns_open_ptmx(struct hutch_err *err);
/* Opens a new pty from the container's /dev/pts/ptmx (after pivot), makes the slave the
 * controlling terminal and stdio, and returns the master fd. */
int ns_setup_pty(unsigned short rows, unsigned short cols, struct hutch_err *err);
/* Sends fd over a unix socket as exactly one SCM_RIGHTS message (the console-socket protocol). */
int ns_send_fd(int sock, int fd, const char *name, struct hutch_err *err);
int ns_recv_fd(int sock, struct hutch_err *err);

#endif
