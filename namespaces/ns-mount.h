/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The mount namespace's part of namespaces/ (included through ns.h): the OCI mounts and
 * the rootfs they are made in, /dev, pivot_root, masked and read-only paths. The mounts are
 * planned as data and applied by one function: ns-mount-plan.h.
 */
#ifndef HUTCH_NS_MOUNT_H
#define HUTCH_NS_MOUNT_H

#include "hutch-base.h"

#include <stdint.h>
#include <sys/types.h>

struct ns_idmap;

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
	/* "rro", "rnosuid", ...: MOUNT_ATTR_* set and cleared on the mount and every submount
	 * (mount_setattr AT_RECURSIVE), once it is made. */
	uint64_t rec_set, rec_clear;
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
/* A read-only tmpfs, or /dev: mounted read-write so that what goes beneath can be made (the
 * /dev nodes, a later mount's mount point), and made read-only (with its recursive options)
 * by ns_finish_mounts once all is in place, as runc does. Pure. */
bool ns_mount_deferred(const struct ns_mount *m);

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
	bool new_mount_ns;   /* false: the caller's, a private bind of rootfs in it (as runc) */
	const int *tree_fds; /* per mount: a tree of its source made by the parent, or -1 */
};

/* Before pivot: makes the rootfs a mount point, performs every mount and creates /dev
 * (standard nodes, fd links, ptmx, linux.devices). Destinations are resolved inside rootfs. */
int ns_mount_rootfs(const struct ns_rootfs *cfg, struct hutch_err *err);
/* pivot_root into cfg->rootfs (or MS_MOVE + chroot when no_pivot) and chdir("/"). */
int ns_pivot_root(const char *rootfs, bool no_pivot, struct hutch_err *err);
/* Without a mount namespace of its own: chroot into rootfs, as runc (a pivot_root would
 * move the root of everything in the host's namespace). */
int ns_chroot_root(const char *rootfs, struct hutch_err *err);
/* Whether path (/proc/PID/ns/mnt) names the mount namespace we are in. */
bool ns_mount_ns_is_ours(const char *path);
/* The mount id of the mount at path (statx STATX_MNT_ID); 0 when unknown. */
uint64_t ns_mount_id(const char *path);
/* A container without a mount namespace: detaches the bind of rootfs (and all mounts on it)
 * that ns_mount_rootfs made in ours, if the mount there is no longer the one of id before. */
int ns_undo_host_rootfs(const char *rootfs, uint64_t before, struct hutch_err *err);
/* After pivot: masks (bind the verified /dev/null or an empty ro tmpfs) and read-only paths,
 * then remounts / read-only when asked. Requires /proc to be a real procfs. */
int ns_mask_paths(char *const *paths, size_t n, struct hutch_err *err);
int ns_readonly_paths(char *const *paths, size_t n, struct hutch_err *err);
int ns_finish_rootfs(bool readonly, unsigned long propagation, struct hutch_err *err);
/* After pivot and the console: what ns_mount_deferred put off (a read-only /dev or tmpfs). */
int ns_finish_mounts(const struct ns_mount *mounts, size_t n, struct hutch_err *err);

#include "ns-mount-plan.h"

#endif
