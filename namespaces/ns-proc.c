// SPDX-License-Identifier: Apache-2.0
/*
 * Per-process kernel attributes that survive execve, set by the process on itself before
 * it drops its capabilities, each with the table of names the spec parser checks against:
 * execution domain (personality) and I/O priority (ioprio_set).
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
