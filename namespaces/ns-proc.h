/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The kernel attributes a process keeps across execve, which OCI sets on the container's
 * processes (ns-proc.c), and the clock offsets of a new time namespace (ns-time.c). Part of
 * ns.h.
 */
#ifndef HUTCH_NS_PROC_H
#define HUTCH_NS_PROC_H

#include "hutch-base.h"

#include <stdint.h>

/* The kernel's names for them, NULL-terminated; ns_lookup gives -EINVAL for a name the
 * table lacks and -EOPNOTSUPP for one it has as unsupported (value -1: SCHED_ISO). */
struct ns_name_value {
	const char *name;
	int64_t value;
};
int ns_lookup(const struct ns_name_value *table, const char *name, int64_t *out);

/* Each ns_set_* is for the calling process; errors name the OCI field. */
extern const struct ns_name_value ns_personality_domains[];
int ns_set_personality(unsigned long persona, struct hutch_err *err);

extern const struct ns_name_value ns_ioprio_classes[];
struct ns_ioprio {
	bool set;
	int class, level; /* IOPRIO_CLASS_*, 0 (highest) to 7 */
};
int ns_set_ioprio(const struct ns_ioprio *io, struct hutch_err *err);

extern const struct ns_name_value ns_sched_policies[], ns_sched_flags[];
struct ns_sched { /* sched_setattr(2)'s struct sched_attr, as far as OCI has it */
	bool set;
	uint32_t policy, priority;
	int32_t nice;
	uint64_t flags, runtime, deadline, period;
};
int ns_set_sched(const struct ns_sched *s, struct hutch_err *err);

extern const struct ns_name_value ns_mpol_modes[], ns_mpol_flags[];
#define NS_NUMA_NODES 1024
struct ns_mempolicy {
	bool set;
	int mode; /* MPOL_* | MPOL_F_* */
	unsigned long nodes[NS_NUMA_NODES / (8 * sizeof(unsigned long))];
};
/* A node list ("0-3,7"; "" is none) into mask, of NS_NUMA_NODES bits. */
int ns_parse_nodes(const char *list, unsigned long *mask, struct hutch_err *err);
int ns_set_mempolicy(const struct ns_mempolicy *m, struct hutch_err *err);

/* A time namespace with clock offsets: unshared, offsets written, then entered, as offsets
 * can only be written before any process is in it (so not through clone). offsets_fd is
 * the process's /proc/PID/timens_offsets opened by its parent: a process that is not
 * dumpable cannot open its own from inside a user namespace. */
struct ns_time_offsets {
	int64_t monotonic_secs, boottime_secs;
	uint32_t monotonic_nsecs, boottime_nsecs;
};
int ns_enter_new_time(int offsets_fd, const struct ns_time_offsets *t, struct hutch_err *err);

#endif
