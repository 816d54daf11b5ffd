// SPDX-License-Identifier: Apache-2.0
/*
 * Per-process kernel attributes that survive execve, set by the process on itself before
 * it drops its capabilities, each with the table of names the spec parser checks against:
 * execution domain (personality).
 */
#include "ns-internal.h"

#include <string.h>
#include <sys/personality.h>

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
