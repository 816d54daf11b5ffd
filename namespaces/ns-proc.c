// SPDX-License-Identifier: Apache-2.0
/*
 * Per-process kernel attributes that survive execve, set by the process on itself before
 * it drops its capabilities, each with the table of names the spec parser checks against:
 * execution domain (personality), I/O priority (ioprio_set) and scheduling policy
 * (sched_setattr).
 */
#include "ns-internal.h"

#include <string.h>
#include <sys/personality.h>
#include <sys/syscall.h>

int ns_lookup(const struct ns_name_value *table, const char *name, int64_t *out)
{
	for (; table->name; table++)
		if (strcmp(table->name, name) == 0) {
			if (table->value < 0)
				return -EOPNOTSUPP;
			*out = table->value;
			return 0;
		}
	return -EINVAL;
}

const struct ns_name_value ns_personality_domains[] = {
	{ "LINUX", PER_LINUX },
	{ "LINUX32", PER_LINUX32 },
	{ NULL, 0 },
};

int ns_set_personality(unsigned long persona, struct hutch_err *err)
{
	if (personality(persona) < 0)
		return hutch_fail_errno(err, errno, "linux.personality: personality");
	return 0;
}

/* Not every libc header has these; the values are the kernel's ABI. */
#define IOPRIO_WHO_PROCESS 1
#define IOPRIO_CLASS_SHIFT 13

const struct ns_name_value ns_ioprio_classes[] = {
	{ "IOPRIO_CLASS_RT", 1 },
	{ "IOPRIO_CLASS_BE", 2 },
	{ "IOPRIO_CLASS_IDLE", 3 },
	{ NULL, 0 },
};

int ns_set_ioprio(const struct ns_ioprio *io, struct hutch_err *err)
{
	if (!io->set)
		return 0;
	int prio = (io->class << IOPRIO_CLASS_SHIFT) | io->level;
	if (syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0, prio) < 0)
		return hutch_fail_errno(err, errno, "process.ioPriority: ioprio_set");
	return 0;
}

/* SCHED_ISO was proposed for Linux and never merged: the spec lists it, no kernel has it. */
const struct ns_name_value ns_sched_policies[] = {
	{ "SCHED_OTHER", 0 }, { "SCHED_FIFO", 1 }, { "SCHED_RR", 2 },	    { "SCHED_BATCH", 3 },
	{ "SCHED_ISO", -1 },  { "SCHED_IDLE", 5 }, { "SCHED_DEADLINE", 6 }, { NULL, 0 },
};

/* The utilisation clamps need values (sched_util_min/max) that OCI does not carry. */
const struct ns_name_value ns_sched_flags[] = {
	{ "SCHED_FLAG_RESET_ON_FORK", 0x01 }, { "SCHED_FLAG_RECLAIM", 0x02 },
	{ "SCHED_FLAG_DL_OVERRUN", 0x04 },    { "SCHED_FLAG_KEEP_POLICY", 0x08 },
	{ "SCHED_FLAG_KEEP_PARAMS", 0x10 },   { "SCHED_FLAG_UTIL_CLAMP_MIN", -1 },
	{ "SCHED_FLAG_UTIL_CLAMP_MAX", -1 },  { NULL, 0 },
};

/* struct sched_attr up to sched_period (SCHED_ATTR_SIZE_VER0): no utilisation clamps. */
struct sched_attr_v0 {
	uint32_t size, sched_policy;
	uint64_t sched_flags;
	int32_t sched_nice;
	uint32_t sched_priority;
	uint64_t sched_runtime, sched_deadline, sched_period;
};

int ns_set_sched(const struct ns_sched *s, struct hutch_err *err)
{
	if (!s->set)
		return 0;
	struct sched_attr_v0 a = {
		.size = sizeof(a),
		.sched_policy = s->policy,
		.sched_flags = s->flags,
		.sched_nice = s->nice,
		.sched_priority = s->priority,
		.sched_runtime = s->runtime,
		.sched_deadline = s->deadline,
		.sched_period = s->period,
	};
	if (syscall(SYS_sched_setattr, 0, &a, 0) < 0)
		return hutch_fail_errno(err, errno, "process.scheduler: sched_setattr");
	return 0;
}
