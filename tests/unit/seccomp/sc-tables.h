/* SPDX-License-Identifier: Apache-2.0 */
/* The vendored kernel syscall tables (seccomp/tables/syscall_{64,32}.tbl), for the unit tests
 * that hold the profile to the kernel's own numbers rather than to the build's headers. */
#ifndef HUTCH_TEST_SC_TABLES_H
#define HUTCH_TEST_SC_TABLES_H

#include <seccomp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef HUTCH_SECCOMP_DIR
#error "HUTCH_SECCOMP_DIR: the source tree's seccomp/ (tests/unit/meson.build sets it)"
#endif

#define X32_NR_BIT 0x40000000u

struct tbl_row {
	unsigned nr; /* x32's with X32_NR_BIT */
	char name[48];
};

struct tbl {
	struct tbl_row *v;
	size_t n;
};

/* The rows of one ABI (libseccomp's token: SCMP_ARCH_X86_64, _X86 or _X32) from its table;
 * -1 when the file is missing or a line is not "NR ABI NAME". */
static inline int tbl_read(uint32_t token, struct tbl *out)
{
	const char *file = token == SCMP_ARCH_X86 ? "syscall_32.tbl" : "syscall_64.tbl";
	char path[512], line[256], abi[16], name[48];
	unsigned nr;

	snprintf(path, sizeof(path), "%s/tables/%s", HUTCH_SECCOMP_DIR, file);
	FILE *f = fopen(path, "re");
	*out = (struct tbl){ 0 };
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (sscanf(line, "%u %15s %47s", &nr, abi, name) != 3) {
			fclose(f);
			return -1;
		}
		bool x32 = token == SCMP_ARCH_X32;
		if (token == SCMP_ARCH_X86 ? strcmp(abi, "i386") != 0
		    : x32		   ? strcmp(abi, "common") != 0 && strcmp(abi, "x32") != 0
					   : strcmp(abi, "common") != 0 && strcmp(abi, "64") != 0)
			continue;
		out->v = realloc(out->v, (out->n + 1) * sizeof(*out->v));
		out->v[out->n].nr = x32 ? nr | X32_NR_BIT : nr;
		snprintf(out->v[out->n].name, sizeof(out->v[0].name), "%s", name);
		out->n++;
	}
	fclose(f);
	return out->n ? 0 : -1;
}

/* The row of name, or NULL. */
static inline const struct tbl_row *tbl_find(const struct tbl *t, const char *name)
{
	for (size_t i = 0; i < t->n; i++)
		if (!strcmp(t->v[i].name, name))
			return &t->v[i];
	return NULL;
}

static inline bool tbl_has(const struct tbl *t, unsigned nr)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].nr == nr)
			return true;
	return false;
}

#endif
