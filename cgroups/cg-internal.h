/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the cgroups/ files share and the unit test reaches into: the hierarchy table, the pure
 * /proc parsers, the v1/v2 appliers and the device BPF program builder. Not for runtime/.
 */
#ifndef HUTCH_CG_INTERNAL_H
#define HUTCH_CG_INTERNAL_H

#include "cg.h"

#include <linux/bpf.h>

/* One hierarchy: the single cgroup2 one, or one v1 hierarchy (possibly co-mounted). */
struct cg_hier {
	char *name;	/* controllers as /proc/self/cgroup lists them: "cpu,cpuacct", "" on v2 */
	char *mount;	/* where it is mounted */
	char *root;	/* which cgroup of the hierarchy the mount shows (mountinfo field 4) */
	char *own;	/* our own cgroup in it, as /proc/self/cgroup says */
	char *dir;	/* absolute directory of the container's cgroup */
	int fd;		/* O_DIRECTORY fd of dir, -1 when missing */
	char **created; /* directories cg_create made here, outermost first (strv) */
	size_t n_created;
};

struct cg {
	bool v2;
	struct cg_hier *h;
	size_t n;
};

/* Pure: the hierarchies from the texts of /proc/self/cgroup and /proc/self/mountinfo. On a
 * v2 host (v2=true) only the cgroup2 mount is kept; otherwise only v1 ones. dir and fd are
 * left unset. */
int cg_parse_hierarchies(const char *proc_cgroup, const char *mountinfo, bool v2,
			 struct cg_hier **out, size_t *n, struct hutch_err *err);
/* The same from this process's own /proc files; with v2=false, on a hybrid host, also the
 * cgroup2 hierarchy (name "") last. */
int cg_read_hierarchies(bool v2, struct cg_hier **out, size_t *n, struct hutch_err *err);
void cg_hier_clear(struct cg_hier *h);
/* The cgroup path of h->dir as /proc/PID/cgroup would show it (malloc'd). */
char *cg_hier_cgroup_path(const struct cg_hier *h);
/* Pure: the container directory for the normalized path (cg_resolve_path) in h. */
int cg_hier_dir(const struct cg_hier *h, const char *path, char **out, struct hutch_err *err);
void cg_hier_free(struct cg_hier *h, size_t n);
/* A saved cgroup path (cg_paths), as strict as a cgroupsPath (absolute, no ".."): its
 * directory in h. */
int cg_saved_dir(const struct cg_hier *h, const char *path, char **out, struct hutch_err *err);
/* The hierarchy whose controller list holds controller, or NULL. */
struct cg_hier *cg_find_hier(struct cg *cg, const char *controller);

/* Small file helpers on a cgroup dir fd. */
int cg_read_at(int dirfd, const char *file, char **out, struct hutch_err *err);
int cg_read_u64_at(int dirfd, const char *file, uint64_t *out);
/* The value of "key N" in a flat keyed file (memory.events, cpu.stat). */
int cg_read_key_at(int dirfd, const char *file, const char *key, uint64_t *out);
/* Pids listed in cgroup.procs of dirfd and all its sub-cgroups, appended to *v. */
int cg_collect_pids(int dirfd, pid_t **v, size_t *n, struct hutch_err *err);
/* rmdir every sub-cgroup of dirfd, deepest first. */
int cg_rmdir_children(int dirfd, struct hutch_err *err);

/* cg-plan.c: the spec field a planned write of file comes from, for errors ("hugetlb.2MB.max"
 * -> "linux.resources.hugepageLimits"); NULL for the fields whose errors name the file alone. */
const char *cg_plan_field(const char *file);
/* cg-plan.c: runc's mapping of a blkio weight [10, 1000] onto a v2 io.weight [1, 10000]. */
int64_t cg_blkio_to_io_weight(int64_t weight);

/* Appliers. */
int cg_v1_create(struct cg *cg, struct hutch_err *err);
int cg_v1_apply(struct cg *cg, const struct cg_write *w, size_t n, struct hutch_err *err);
int cg_v1_freeze(struct cg *cg, bool frozen, struct hutch_err *err);
int cg_v1_stats(struct cg *cg, struct cg_stats *st, struct hutch_err *err);
int cg_v2_create(struct cg *cg, struct hutch_err *err);
int cg_v2_apply(struct cg *cg, const struct cg_write *w, size_t n, struct hutch_err *err);
int cg_v2_freeze(struct cg *cg, bool frozen, struct hutch_err *err);
int cg_v2_kill(struct cg *cg, struct hutch_err *err);
int cg_v2_complete_update(struct cg *cg, struct cg_resources *res, struct hutch_err *err);
int cg_v2_stats(struct cg *cg, struct cg_stats *st, struct hutch_err *err);
/* cg-stats.c: what `events` adds to the basic stats above. */
void cg_v1_stats_extra(struct cg *cg, struct cg_stats *st);
void cg_v2_stats_extra(struct cg *cg, struct cg_stats *st);

/* Pure parsers of stats files; each returns how many entries it stored (at most max). */
/* memory.stat; cpuacct.usage_percpu; v1 blkio "MAJ:MIN Op N" lines. */
size_t cg_parse_kv_lines(const char *text, struct cg_stat_kv *out, size_t max);
size_t cg_parse_u64_list(const char *text, uint64_t *out, size_t max);
size_t cg_parse_blkio_v1(const char *text, struct cg_io_entry *out, size_t max);
/* v2 io.stat -> st->io_bytes and st->io_ops (Read and Write per device). */
void cg_parse_io_stat(const char *text, struct cg_stats *st);

/* Pure: the BPF_PROG_TYPE_CGROUP_DEVICE program for rules (last match wins, default deny). */
int cg_devbpf_build(const struct cg_device_rule *rules, size_t n, struct bpf_insn **out,
		    size_t *n_insns, struct hutch_err *err);
/* Loads the program and attaches it to the cgroup2 directory fd, replacing what an earlier
 * call attached there. */
int cg_devbpf_apply(int cgroup_fd, const struct cg_device_rule *rules, size_t n,
		    struct hutch_err *err);

/* cg-bpf.c: bpf(2) (-errno), a program loaded (its fd; what names it in errors, with the
 * verifier's log), attached to a cgroup2 directory with BPF_F_ALLOW_MULTI. */
int cg_sys_bpf(int cmd, union bpf_attr *attr);
int cg_bpf_load(uint32_t type, uint32_t attach_type, const struct bpf_insn *insns, size_t n,
		const char *what, struct hutch_err *err);
int cg_bpf_attach(int cgroup_fd, int prog, uint32_t attach_type, const char *what,
		  struct hutch_err *err);
/* Pure: the connect and UDP send filter of cg_deny_loopback for AF_INET or (v6) AF_INET6,
 * written into out (at most max instructions); returns how many it takes. */
int cg_sockbpf_build(bool v6, struct bpf_insn *out, size_t max);

#endif
