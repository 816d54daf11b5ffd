/* SPDX-License-Identifier: Apache-2.0 */
/* What a cgroup is limited to (struct cg_resources, as linux.resources gives it) and the pure
 * plan of file writes that applies it (cg-plan.c). Included through cg.h. */
#ifndef HUTCH_CG_RESOURCES_H
#define HUTCH_CG_RESOURCES_H

#include "hutch-base.h"

#include <stdint.h>

struct cg_device_rule {
	bool allow;
	char type;	      /* 'a', 'c' or 'b' */
	int64_t major, minor; /* -1 = any */
	char access[4];	      /* subset of "rwm" */
};

/* An optional value: set is false when the spec did not give it. */
struct cg_i64 {
	bool set;
	int64_t v;
};

struct cg_kv {
	char *key, *value;
};

/* A per-device value: a blockIO weight or throttle rate for block device major:minor. */
struct cg_dev_value {
	int64_t major, minor;
	uint64_t value;
};

/* Indexes of struct cg_resources.blkio_throttle, in OCI's order. */
enum {
	CG_THROTTLE_READ_BPS,
	CG_THROTTLE_WRITE_BPS,
	CG_THROTTLE_READ_IOPS,
	CG_THROTTLE_WRITE_IOPS,
	CG_THROTTLE_N,
};

struct cg_hugepage {
	const char *page_size; /* "2MB", "1GB", "64KB" */
	uint64_t limit;
};

struct cg_net_prio {
	const char *iface;
	uint32_t priority;
};

struct cg_resources {
	const struct cg_device_rule *devices;
	size_t n_devices;
	struct cg_i64 mem_limit, mem_reservation, mem_swap, mem_swappiness;
	/* memory.kmem.tcp.limit_in_bytes, v1 only: there TCP buffers are charged to nothing
	 * until it is set (v2 charges them to memory.max). */
	struct cg_i64 mem_kernel_tcp;
	bool mem_disable_oom_killer;
	struct cg_i64 cpu_shares, cpu_quota, cpu_period, cpu_burst, cpu_idle;
	struct cg_i64 cpu_rt_runtime, cpu_rt_period;
	const char *cpus, *mems;  /* cpuset lists, NULL when unset */
	struct cg_i64 pids_limit; /* -1 or 0 = max */
	struct cg_i64 blkio_weight;
	const struct cg_kv *unified; /* linux.resources.unified: v2 only */
	size_t n_unified;
	bool has_hugetlb, has_network, has_rdma, has_blkio_devices; /* refused: not supported */
	/* blockIO.weightDevice (weights only) and the four throttle lists. */
	const struct cg_dev_value *blkio_weight_devices;
	size_t n_blkio_weight_devices;
	const struct cg_dev_value *blkio_throttle[CG_THROTTLE_N];
	size_t n_blkio_throttle[CG_THROTTLE_N];
	const struct cg_hugepage *hugepages; /* hugepageLimits */
	size_t n_hugepages;
	struct cg_i64 net_class_id; /* network.classID: v1 only */
	const struct cg_net_prio *net_priorities;
	size_t n_net_priorities;
	/* memory.checkBeforeUpdate: update refuses a memory limit below the current usage. */
	bool mem_check_before_update;
};

struct cg_write {
	const char *controller; /* "memory", "cpu", ... ("" = the v2 cgroup itself) */
	char file[64];
	char value[256];
};

/* Pure: the writes for resources on a v2 (v2=true) or v1 host, in order. Values are
 * validated (negative memory, cpu quota without period, unknown unified keys with '/').
 * *out is malloc'd. */
/* Any limit but the device list (which v2 enforces with a BPF program, not a file). */
bool cg_limits_set(const struct cg_resources *res);
int cg_plan(const struct cg_resources *res, bool v2, struct cg_write **out, size_t *n,
	    struct hutch_err *err);

#endif
