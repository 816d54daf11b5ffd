/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cgroups/: placing a container in a cgroup and limiting it, on a pure cgroup v2 host and on
 * a v1 or hybrid one (v1 controllers at /sys/fs/cgroup/<ctrl>, cgroup2 at .../unified).
 * cg-plan.c turns resources into a list of (controller, file, value) writes without touching
 * the kernel; cg-v2.c and cg-v1.c apply them.
 */
#ifndef HUTCH_CG_H
#define HUTCH_CG_H

#include "hutch-base.h"
#include "cg-resources.h"
#include "cg-stats.h"

#include <stdint.h>

struct cg;

/* Pure: the cgroup path for the container. cgroups_path as in linux.cgroupsPath: absolute is
 * taken as is; relative is under the caller's own cgroup; empty means <own>/hutch-<id>. */
int cg_resolve_path(const char *cgroups_path, const char *id, char **out, struct hutch_err *err);

/* mkdir the cgroup in every hierarchy (v1: each controller's; v2: the one), enabling the
 * v2 controllers it needs. Fails with EEXIST if it already exists and holds processes. */
int cg_create(const char *path, struct cg **out, struct hutch_err *err);
/* cg_create in two steps, so that a caller can record where the cgroup goes (cg_paths works on
 * a located cgroup) before it exists: a process killed in between leaves no cgroup that its
 * record does not name. cg_make fails with cg still located (what it made is removed). */
int cg_locate(const char *path, struct cg **out, struct hutch_err *err);
int cg_make(struct cg *cg, struct hutch_err *err);
/* v1 --systemd-cgroup: systemd has made the scope, with pid in it, in the hierarchies it
 * manages (memory, cpu, pids, blkio, devices, name=systemd, a hybrid host's cgroup2): makes
 * it in the others (cpuset, freezer, ...) as cg_make does, and puts pid in every one, as
 * runc's legacy systemd driver does. What it made goes with cg_destroy. */
int cg_make_scope(struct cg *cg, pid_t pid, struct hutch_err *err);
/* The sub-cgroups of path, in any hierarchy, each once, with the earliest ctime of its
 * directories: what a sweep of a killed process's cgroups looks through. */
struct cg_child {
	char *name;
	time_t made;
};
int cg_list_children(const char *path, struct cg_child **out, size_t *n, struct hutch_err *err);
void cg_children_free(struct cg_child *v, size_t n);
/* cg_destroy of path wherever it exists: for what a killed process left. On a hybrid host
 * every function here takes the cgroup2 mount beside the v1 ones as one more hierarchy (named
 * ""): the container has its cgroup there too, as under runc and crun. */
int cg_purge(const char *path, struct hutch_err *err);
/* Re-opens an existing container cgroup (for kill, delete, pause, stats). */
int cg_open(const char *path, struct cg **out, struct hutch_err *err);
/* The container's cgroup in each hierarchy, as the cgroup path /proc/PID/cgroup would show
 * ("cpu,cpuacct" -> "/a/b"; v2: "" -> "/a/b"), malloc'd: what the state keeps, so that a
 * later verb finds the same cgroups from whatever cgroup it runs in (a relative
 * cgroupsPath is resolved against the creator's own cgroup in each hierarchy, as runc). */
size_t cg_paths(const struct cg *cg, struct cg_kv **out);
/* Re-opens what cg_paths gave (hierarchies no longer mounted are left out). */
int cg_open_paths(const struct cg_kv *paths, size_t n, struct cg **out, struct hutch_err *err);
/* The outermost cgroup that cg_make made above the container's in each hierarchy (as cg_paths
 * shows paths; hierarchies where it made no parent are left out): what the state keeps, so
 * that delete removes the parents a create made, as they are empty, and no others. */
size_t cg_made_parents(const struct cg *cg, struct cg_kv **out);
/* Gives a re-opened cg (cg_open_paths) those parents back, for cg_destroy to remove. Each
 * must be an ancestor of the container's cgroup in its hierarchy. */
int cg_adopt_parents(struct cg *cg, const struct cg_kv *tops, size_t n, struct hutch_err *err);
void cg_free(struct cg *cg);
/* v2 only: an O_DIRECTORY fd of the cgroup for clone3(CLONE_INTO_CGROUP); -1 on v1. */
int cg_dirfd(const struct cg *cg);
int cg_enter(struct cg *cg, pid_t pid, struct hutch_err *err);
int cg_apply(struct cg *cg, const struct cg_resources *res, struct hutch_err *err);
/* For a live update, where what is not given stays as it is: fills in from the cgroup what a
 * v2 write needs but res left out (cpu.max's period when only the quota changes, the memory
 * limit that OCI's memory+swap is relative to), and refuses a memory limit below the current
 * usage when res asks for memory.checkBeforeUpdate (v1 and v2). */
int cg_complete_update(struct cg *cg, struct cg_resources *res, struct hutch_err *err);
/* Kills everything in the cgroup (cgroup.kill on v2, SIGKILL of every pid otherwise), waits
 * until it is empty, and removes it everywhere. Missing cgroups are not an error. */
int cg_destroy(struct cg *cg, struct hutch_err *err);
/* Removes the cgroup where it is empty, killing nothing: for one that a killed create recorded
 * before making it, which may exist, may not, or may be someone else's. */
int cg_remove_unused(struct cg *cg, struct hutch_err *err);
/* Pids in the cgroup and its sub-cgroups. *out malloc'd. */
int cg_pids(struct cg *cg, pid_t **out, size_t *n, struct hutch_err *err);
int cg_signal_all(struct cg *cg, int sig, struct hutch_err *err);
int cg_freeze(struct cg *cg, bool frozen, struct hutch_err *err);

/* True when the container's cgroup is frozen (v2 cgroup.events "frozen 1", v1 freezer.state
 * FROZEN). A missing freezer reads as not frozen. */
bool cg_is_frozen(struct cg *cg);

/* The deepest of our own cgroups, when every hierarchy's is it or an ancestor of it: an
 * absolute path beneath it is beneath our cgroup everywhere. */
int cg_own_common(char **out, struct hutch_err *err);

/* Rootless, pure v2: the nearest ancestor of our cgroup delegated to us (we may make
 * cgroups there and move our processes into them), e.g. systemd's user@UID.service subtree
 * or a directory root chowned to us. -ENOTSUP on v1, -EACCES when nothing is delegated;
 * err says which. */
int cg_delegated_base(char **out, struct hutch_err *err);

/*
 * A container's first process joins its cgroups itself, single-threaded, writing "0" to fds
 * its parent opened (the kernel checks the opener's credentials, so a child already in a user
 * namespace can): on v1 each hierarchy's "tasks" file, which moves the writing thread alone
 * and so skips the cgroup-wide threadgroup lock a cgroup.procs write takes; the first taking
 * of that lock after a quiet spell waits for an RCU grace period (8-16 ms on a HZ=250 host).
 * v2 keeps cgroup.procs: a thread cannot move between domains.
 */
#define CG_JOIN_MAX 16
struct cg_join {
	size_t n;
	int fd[CG_JOIN_MAX];
	const char *dir[CG_JOIN_MAX]; /* for errors: the cg's strings */
};
/* v1: every hierarchy but the one holding except (NULL: none) and a hybrid host's cgroup2
 * one (a child is born there: cg_clone_fd). Nothing on v2. */
int cg_join_open(struct cg *cg, const char *except, struct cg_join *j, struct hutch_err *err);
/* Writes "0" to each, then closes them. */
int cg_join_self(struct cg_join *j, struct hutch_err *err);
void cg_join_close(struct cg_join *j);
/* controller's hierarchy alone, as cg_join_open's (v2: the cgroup's cgroup.procs); -ENOENT
 * when that controller is not mounted. */
int cg_open_self(struct cg *cg, const char *controller, struct hutch_err *err);
/* The cgroup2 directory a child can be born into (clone3 CLONE_INTO_CGROUP): v2's, or a
 * hybrid host's beside the v1 ones; -1 on plain v1 or without a cgroup. */
int cg_clone_fd(const struct cg *cg);
/* A hybrid host's cgroup2 hierarchy, where a function takes a controller's name. */
#define CG_UNIFIED ""
/* An O_WRONLY fd of cgroup.procs in controller's hierarchy (v2: the one), for a process to
 * join it itself later ("0" = the writer); -ENOENT when that controller is not mounted.
 * CG_UNIFIED is a hybrid host's cgroup2 hierarchy. */
int cg_open_procs(struct cg *cg, const char *controller, struct hutch_err *err);
/* v2: the cgroup's own memory.max in bytes; UINT64_MAX for "max", when unreadable, and on v1
 * (where the memory cgroup is always joined late). */
uint64_t cg_memory_max(const struct cg *cg);

/* v1: each hierarchy's controller list ("memory", "cpu,cpuacct", "name=systemd") and the
 * container's directory in it; 0 on v2. The strings belong to cg. */
size_t cg_hierarchy_dirs(const struct cg *cg, const char **names, const char **dirs, size_t max);
/* Hybrid: the container's directory in the cgroup2 hierarchy beside the v1 ones; else NULL. */
const char *cg_unified_dir(const struct cg *cg);

/* v1: an eventfd signalled when the memory cgroup runs out of memory (-ENOTSUP on v2);
 * cg_oom_fired reads it without blocking. */
int cg_oom_watch(struct cg *cg, struct hutch_err *err);
bool cg_oom_fired(int efd);

/* Refuses TCP connects and UDP sends from the cgroup's processes to the host's loopback
 * (127.0.0.0/8, 0.0.0.0/8, ::, ::1 and their v4-mapped forms) with EPERM: BPF programs on
 * its cgroup2 directory (on a hybrid host, the one beside the v1 ones). -ENOTSUP without a
 * cgroup2 directory; -EPERM without CAP_BPF/CAP_NET_ADMIN. */
int cg_deny_loopback(struct cg *cg, struct hutch_err *err);

/* True on a pure cgroup v2 host (cgroup2 mounted at /sys/fs/cgroup). */
bool cg_is_v2(void);

#endif
