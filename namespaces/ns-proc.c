// SPDX-License-Identifier: Apache-2.0
/*
 * Per-process kernel attributes that survive execve, set by the process on itself before
 * it drops its capabilities, each with the table of names the spec parser checks against:
 * execution domain (personality), I/O priority (ioprio_set), scheduling policy
 * (sched_setattr) and NUMA memory policy (set_mempolicy), with its node list parser (pure).
 */
#include "ns-internal.h"

#include <stdlib.h>
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

const struct ns_name_value ns_mpol_modes[] = {
	{ "MPOL_DEFAULT", 0 },
	{ "MPOL_PREFERRED", 1 },
	{ "MPOL_BIND", 2 },
	{ "MPOL_INTERLEAVE", 3 },
	{ "MPOL_LOCAL", 4 },
	{ "MPOL_PREFERRED_MANY", 5 },
	{ "MPOL_WEIGHTED_INTERLEAVE", 6 },
	{ NULL, 0 },
};

const struct ns_name_value ns_mpol_flags[] = {
	{ "MPOL_F_NUMA_BALANCING", 1 << 13 },
	{ "MPOL_F_RELATIVE_NODES", 1 << 14 },
	{ "MPOL_F_STATIC_NODES", 1 << 15 },
	{ NULL, 0 },
};

/* One node or range ("3", "0-7") of a node list, into mask. */
static int parse_range(const char *s, unsigned long *mask, struct hutch_err *err)
{
	const size_t word = 8 * sizeof(unsigned long);
	char *end;
	errno = 0;
	unsigned long a = strtoul(s, &end, 10), b = a;
	if (end != s && *end == '-') {
		const char *t = end + 1;
		b = strtoul(t, &end, 10);
		if (end == t || t[0] < '0' || t[0] > '9')
			end = (char *)s; /* "3-", "3--4": no second number */
	}
	if (end == s || *end || errno || s[0] < '0' || s[0] > '9')
		return hutch_fail(err, EINVAL, "%s: expected a node or a range of nodes", s);
	if (a > b)
		return hutch_fail(err, EINVAL, "%s: a range must go upwards", s);
	if (b >= NS_NUMA_NODES)
		return hutch_fail(err, EINVAL, "%s: node %lu out of range (0 to %d)", s, b,
				  NS_NUMA_NODES - 1);
	for (unsigned long n = a; n <= b; n++)
		mask[n / word] |= 1UL << (n % word);
	return 0;
}

int ns_parse_nodes(const char *list, unsigned long *mask, struct hutch_err *err)
{
	char part[32];
	memset(mask, 0, NS_NUMA_NODES / 8);
	for (const char *p = list; *p;) {
		size_t n = strcspn(p, ",");
		if (n == 0 || n >= sizeof(part))
			return hutch_fail(err, EINVAL, "\"%s\": expected nodes such as 0-3,7",
					  list);
		memcpy(part, p, n);
		part[n] = '\0';
		int r = parse_range(part, mask, err);
		if (r < 0)
			return r;
		p += n;
		if (*p == ',' && !*++p)
			return hutch_fail(err, EINVAL, "\"%s\": ends with a comma", list);
	}
	return 0;
}

int ns_set_mempolicy(const struct ns_mempolicy *m, struct hutch_err *err)
{
	if (!m->set)
		return 0;
	/* maxnode counts one more than the bits the kernel reads (a historical off-by-one). */
	if (syscall(SYS_set_mempolicy, m->mode, m->nodes, NS_NUMA_NODES + 1UL) < 0)
		return hutch_fail_errno(err, errno, "linux.memoryPolicy: set_mempolicy");
	return 0;
}
