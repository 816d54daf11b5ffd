// SPDX-License-Identifier: Apache-2.0
/*
 * The default sandbox's filter against Linux 6.18's own syscall tables (seccomp/tables/), not
 * the build's headers or libseccomp's idea of them. Above the profile's cut-off (the highest
 * number it names that libseccomp knows, sc_abi_max: sc-compile.c's ENOSYS prologue and the
 * ranges' ENOSYS segment) every number gets ENOSYS, so that libc falls back to an older call;
 * at or below it, a number the profile does not name, and one the table does not know, is
 * refused, never allowed by default. On x86_64, i386 and x32, for hutch's ranges and for
 * libseccomp's program alone. libseccomp's numbers for the table's names must be the table's.
 */
#include "sc-internal.h"
#include "sc-bpf.h"
#include "sc-tables.h"
#include "tap.h"

#include <linux/audit.h>
#include <linux/seccomp.h>
#include <seccomp.h>

#define ENOSYS_ACT (SECCOMP_RET_ERRNO | ENOSYS)

static const struct abi {
	const char *name;
	uint32_t token, audit, lo, hi; /* the numbers tried: [lo, hi) */
} abis[] = {
	{ "x86_64", SCMP_ARCH_X86_64, AUDIT_ARCH_X86_64, 0, 1024 },
	{ "i386", SCMP_ARCH_X86, AUDIT_ARCH_I386, 0, 1024 },
	{ "x32", SCMP_ARCH_X32, AUDIT_ARCH_X86_64, X32_NR_BIT, X32_NR_BIT + 1024 },
};

/* libseccomp's number for name in this ABI: i386's socket and ipc calls by their direct
 * syscall, as the compiler writes them (sc_mux_direct). */
static int resolve(const struct abi *a, const char *name)
{
	int nr = seccomp_syscall_resolve_name_arch(a->token, name);
	if (nr < 0 && nr != __NR_SCMP_ERROR)
		nr = sc_mux_direct(a->token, name);
	return nr;
}

static bool named(const struct sc_config *cfg, const struct abi *a, unsigned nr)
{
	for (size_t i = 0; i < cfg->n_rules; i++)
		for (size_t k = 0; k < cfg->rules[i].n_names; k++)
			if (resolve(a, cfg->rules[i].names[k]) == (int)nr)
				return true;
	return false;
}

/* Each table name libseccomp knows has the table's number there. */
static void test_libseccomp_agrees(const struct abi *a, const struct tbl *t)
{
	size_t known = 0, bad = 0;
	for (size_t i = 0; i < t->n; i++) {
		int nr = resolve(a, t->v[i].name);
		if (nr == __NR_SCMP_ERROR)
			continue; /* too new for this libseccomp: never named, see below */
		known++;
		if ((unsigned)nr != t->v[i].nr && bad++ < 5)
			printf("# %s: %s is %u in the kernel, %d to libseccomp\n", a->name,
			       t->v[i].name, t->v[i].nr, nr);
	}
	ok(bad == 0, "%s: libseccomp numbers %zu of the table's %zu names as the kernel does",
	   a->name, known, t->n);
}

static uint32_t run(const struct sc_filter *f, uint32_t audit, unsigned nr, uint64_t arg)
{
	struct seccomp_data d = { .nr = (int)nr, .arch = audit };
	uint32_t ret = 0;
	for (int i = 0; i < 6; i++)
		d.args[i] = arg;
	return sc_bpf_run(f->insns, f->len, &d, &ret) ? ret : 0xdeadbeef;
}

/* Every number of [lo, hi): above the cut-off ENOSYS, else allowed only when named. */
static void check_abi(const char *what, const struct sc_filter *f, const struct sc_config *cfg,
		      const struct abi *a, const struct tbl *t)
{
	int64_t cut = sc_abi_max(cfg, a->token);
	size_t above = 0, unnamed = 0, unknown = 0, bad = 0;

	for (unsigned nr = a->lo; nr < a->hi; nr++) {
		bool in_table = tbl_has(t, nr);
		if ((int64_t)nr > cut) {
			above += in_table;
			for (int v = 0; v < 2; v++)
				if (run(f, a->audit, nr, v ? ~0ULL : 0) != ENOSYS_ACT && bad++ < 5)
					printf("# %s %s: %u above the cut-off %lld: not ENOSYS\n",
					       what, a->name, nr, (long long)cut);
			continue;
		}
		if (in_table && named(cfg, a, nr))
			continue; /* the profile's rules decide: test-sc-bpf.c, test-sc-classes.c */
		in_table ? unnamed++ : unknown++;
		for (int v = 0; v < 2; v++)
			if (run(f, a->audit, nr, v ? ~0ULL : 0) == SCMP_ACT_ALLOW && bad++ < 5)
				printf("# %s %s: %u (%s) allowed, but the profile does not name "
				       "it\n",
				       what, a->name, nr, in_table ? "in the table" : "unknown");
	}
	/* fchmodat2 must be under it, or its argument rule would never be reached */
	bool under = cut >= (int64_t)(a->lo | 452);
	ok(under && bad == 0,
	   "%s %s: cut-off %lld (fchmodat2 %s it); %zu table numbers above it ENOSYS, %zu "
	   "unnamed and %zu unknown at or below it refused; %zu wrong",
	   what, a->name, (long long)(cut & ~(int64_t)X32_NR_BIT), under ? "under" : "above", above,
	   unnamed, unknown, bad);
}

int main(void)
{
	struct hutch_err err = { 0 };
	struct sc_config cfg = { 0 };
	struct sc_filter *ranges = NULL, *plain = NULL;
	struct tbl t[ARRAY_SIZE(abis)];

	bool read = true;
	for (size_t i = 0; i < ARRAY_SIZE(abis); i++)
		read &= tbl_read(abis[i].token, &t[i]) == 0;
	ok(read, "seccomp/tables/syscall_64.tbl and syscall_32.tbl are read");
	/* Linux 6.18 ends at 469 (file_setattr), with 463-469 unknown to libseccomp 2.5. */
	const struct tbl_row *last = read ? tbl_find(&t[0], "file_setattr") : NULL;
	const struct tbl_row *last32 = read ? tbl_find(&t[1], "file_setattr") : NULL;
	ok(last && last32 && last->nr == 469 && last32->nr == 469,
	   "the tables are 6.18's: file_setattr is 469 on x86_64 and i386");
	int r = sc_default_config(0, SC_DEFAULT_NO_SETID, &cfg, &err);
	if (r == 0)
		r = sc_compile_bpf(&cfg, true, &ranges, &err);
	if (r == 0)
		r = sc_compile_bpf(&cfg, false, &plain, &err);
	ok(r == 0, "the default sandbox's profile compiles, with and without ranges (%s)", err.msg);
	for (size_t i = 0; read && r == 0 && i < ARRAY_SIZE(abis); i++) {
		test_libseccomp_agrees(&abis[i], &t[i]);
		check_abi("ranges", ranges, &cfg, &abis[i], &t[i]);
		check_abi("libseccomp alone", plain, &cfg, &abis[i], &t[i]);
	}
	for (size_t i = 0; i < ARRAY_SIZE(abis); i++)
		free(t[i].v);
	sc_filter_free(ranges);
	sc_filter_free(plain);
	sc_config_free(&cfg);
	return tap_done();
}
