/* SPDX-License-Identifier: Apache-2.0 */
/* A cgroup's figures (cg-stats.c), by value. Included through cg.h. */
#ifndef HUTCH_CG_STATS_H
#define HUTCH_CG_STATS_H

#include "hutch-base.h"

#include <stdint.h>

struct cg;

/* Fixed-size so that stats need no freeing and copy as a value. */
#define CG_STATS_MAX_CPUS 256
#define CG_STATS_MAX_RAW 96
#define CG_STATS_MAX_IO 32

struct cg_stat_kv {
	char key[48];
	uint64_t v;
};

struct cg_io_entry {
	uint64_t major, minor;
	char op[12]; /* "Read", "Write", "Sync", "Async", "Discard", "Total" */
	uint64_t value;
};

struct cg_mem_entry {
	uint64_t usage, max_usage, limit, failcnt;
};

struct cg_stats {
	uint64_t mem_usage, mem_max_usage, mem_limit, oom_kills;
	uint64_t pids_current, pids_limit;
	uint64_t pids_peak; /* 0 where the kernel has no pids.peak */
	/* pids.events max: forks a pids limit refused. v1: forks from this cgroup; v2: forks in
	 * its subtree refused by its limit or a descendant's (before 6.10: from it alone). */
	uint64_t pids_max_events;
	/* v2 with pids.events.local (6.10): pids.events counts the subtree, unless cgroup2 is
	 * mounted with pids_localevents */
	bool pids_events_tree;
	uint64_t cpu_usage_ns, cpu_user_ns, cpu_system_ns;
	/* The rest is what `events --stats` reports, in runc's terms. 0 when unknown. */
	uint64_t mem_failcnt, mem_cache;
	struct cg_mem_entry swap;     /* v1: memory+swap (memsw), as runc reports it */
	struct cg_mem_entry kmem;     /* v1 only */
	struct cg_mem_entry kmem_tcp; /* v1 only: TCP buffers, when kernelTCP is set */
	uint64_t cpu_periods, cpu_throttled_periods, cpu_throttled_ns;
	uint64_t cpu_percpu_ns[CG_STATS_MAX_CPUS];
	size_t n_percpu;
	struct cg_stat_kv mem_raw[CG_STATS_MAX_RAW]; /* memory.stat */
	size_t n_mem_raw;
	struct cg_io_entry io_bytes[CG_STATS_MAX_IO], io_ops[CG_STATS_MAX_IO];
	size_t n_io_bytes, n_io_ops;
};
int cg_get_stats(struct cg *cg, struct cg_stats *st, struct hutch_err *err);

#endif
