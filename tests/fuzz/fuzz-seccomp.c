// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target: an OCI linux.seccomp profile. sc_config_parse, a writer round trip, then
 * the compile a cache miss makes (sc_compile_cached, no cache dir) held to libseccomp's own
 * program: the allow ranges and argument trees in front must not change a decision, which
 * sc-eval.c's interpreter checks for every syscall number near the ABIs' tables.
 */
#include "fuzz.h"
#include "sc-internal.h"
#include "sc-bpf.h"

#include <linux/audit.h>
#include <seccomp.h>
#include <sys/syscall.h>

#define MAX_VECS 48

/* Argument vectors: zeros, all ones, and around each value the rules compare with, at the
 * index they test (the edges of masked ranges too, as tests/unit/seccomp/test-sc-bpf.c). */
static size_t arg_vecs(const struct sc_config *cfg, uint64_t v[MAX_VECS][6])
{
	size_t n = 2;
	memset(v, 0, 2 * sizeof(v[0]));
	memset(v[1], 0xff, sizeof(v[1]));
	for (size_t i = 0; i < cfg->n_rules; i++)
		for (size_t k = 0; k < cfg->rules[i].n_args; k++) {
			const struct sc_arg *a = &cfg->rules[i].args[k];
			uint64_t low = ~a->value & 0xffffffffu;
			const uint64_t vals[] = { a->value,
						  a->value_two,
						  a->value + 1,
						  a->value_two - 1,
						  a->value_two | low,
						  (a->value_two | low) + 1,
						  a->value | (1ULL << 32) };
			for (size_t j = 0; j < ARRAY_SIZE(vals) && n < MAX_VECS; j++) {
				memset(v[n], 0, sizeof(v[n]));
				v[n++][a->index % 6] = vals[j];
			}
		}
	return n;
}

static uint32_t run(const struct sc_filter *f, const struct seccomp_data *d)
{
	uint32_t ret = 0;
	return sc_bpf_run(f->insns, f->len, d, &ret) ? ret : 0xdeadbeef;
}

static void compare_nr(const struct sc_filter *a, const struct sc_filter *b, uint32_t arch,
		       uint32_t nr, uint64_t (*v)[6], size_t n_vecs)
{
	for (size_t i = 0; i < n_vecs; i++) {
		struct seccomp_data d = { .nr = (int)nr, .arch = arch };
		memcpy(d.args, v[i], sizeof(d.args));
		uint32_t ra = run(a, &d), rb = run(b, &d);
		FUZZ_CHECK(ra == rb && ra != 0xdeadbeef,
			   "arch %#x nr %#x args %#llx %#llx %#llx %#llx %#llx %#llx: ranges %#x, "
			   "libseccomp alone %#x",
			   arch, nr, (unsigned long long)d.args[0], (unsigned long long)d.args[1],
			   (unsigned long long)d.args[2], (unsigned long long)d.args[3],
			   (unsigned long long)d.args[4], (unsigned long long)d.args[5], ra, rb);
	}
}

/*
 * Decisions where a program can go wrong: at, below and above every number a rule names in
 * each x86 ABI (where the ranges and the ENOSYS prologue put their boundaries), with every
 * argument vector when the rule looks at arguments; plus a sweep of every 7th number of each
 * ABI and an arch no filter lists, and the edges of the x32 bit and beyond. (Every number,
 * as tests/unit/seccomp/test-sc-bpf.c checks, costs 5x the exec rate under the fuzzer's tracing.)
 */
static void compare(const struct sc_config *cfg, const struct sc_filter *a,
		    const struct sc_filter *b)
{
	static const struct {
		uint32_t arch, token, bit;
	} abis[] = { { AUDIT_ARCH_X86_64, SCMP_ARCH_X86_64, 0 },
		     { AUDIT_ARCH_X86_64, SCMP_ARCH_X32, X32_BIT },
		     { AUDIT_ARCH_I386, SCMP_ARCH_X86, 0 },
		     { AUDIT_ARCH_AARCH64, SCMP_ARCH_AARCH64, 0 } };
	static const uint32_t edges[] = { 0x3ffffffe, 0x3fffffff, 0x7ffffffe, 0x7fffffff,
					  0x80000000, 0xbfffffff, 0xfffffffe, 0xffffffff };
	uint64_t v[MAX_VECS][6];
	size_t n_vecs = arg_vecs(cfg, v);

	for (size_t j = 0; j < ARRAY_SIZE(abis); j++) {
		for (uint32_t nr = 0; nr < 1100; nr += 7)
			compare_nr(a, b, abis[j].arch, abis[j].bit + nr, v, 2);
		for (size_t k = 0; !abis[j].bit && k < ARRAY_SIZE(edges); k++)
			compare_nr(a, b, abis[j].arch, edges[k], v, 2);
	}
	/* i386's socketcall and ipc multiplex on a0: every call number with every vector */
	for (uint64_t call = 0; call < 25; call++) {
		uint64_t w[MAX_VECS][6];
		memcpy(w, v, n_vecs * sizeof(v[0]));
		for (size_t i = 0; i < n_vecs; i++)
			w[i][0] = call;
		compare_nr(a, b, AUDIT_ARCH_I386, 102, w, n_vecs);
		compare_nr(a, b, AUDIT_ARCH_I386, 117, w, n_vecs);
	}
	for (size_t i = 0; i < cfg->n_rules; i++)
		for (size_t k = 0; k < cfg->rules[i].n_names; k++)
			for (size_t j = 0; j + 1 < ARRAY_SIZE(abis); j++) {
				int nr = seccomp_syscall_resolve_name_arch(abis[j].token,
									   cfg->rules[i].names[k]);
				if (nr < 0)
					continue;
				uint32_t n = ((uint32_t)nr & ~X32_BIT) | abis[j].bit;
				compare_nr(a, b, abis[j].arch, n - 1, v, 2);
				compare_nr(a, b, abis[j].arch, n, v,
					   cfg->rules[i].n_args ? n_vecs : 2);
				compare_nr(a, b, abis[j].arch, n + 1, v, 2);
			}
}

/* The writer's text parses back to a config with the same cache key. */
static void round_trip(const struct sc_config *cfg)
{
	struct sc_config again = { 0 };
	struct hutch_err err = { 0 };
	uint8_t h1[32], h2[32];
	char *json = sc_config_to_json(cfg, false);

	FUZZ_CHECK(sc_config_parse(json, "again", &again, &err) == 0, "%s: %s", json, err.msg);
	sc_config_hash(cfg, h1);
	sc_config_hash(&again, h2);
	FUZZ_CHECK(!memcmp(h1, h2, sizeof(h1)), "the writer changed the config: %s", json);
	sc_config_free(&again);
	free(json);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);
	struct sc_config cfg = { 0 };
	struct hutch_err err = { 0 };
	struct sc_filter *f = NULL, *plain = NULL;

	if (sc_config_parse(text, "linux.seccomp", &cfg, &err) < 0) {
		FUZZ_CHECK(err.msg[0], "sc_config_parse failed without a message");
		goto out;
	}
	round_trip(&cfg);
	if (sc_compile_cached(&cfg, NULL, &f, NULL, &err) < 0) {
		FUZZ_CHECK(err.msg[0], "sc_compile_cached failed without a message");
		goto out;
	}
	FUZZ_CHECK(f->len > 0 && f->len <= SC_MAX_INSNS, "%zu instructions", f->len);
	static const uint64_t zero[6], ones[6] = { ~0ULL, ~0ULL, ~0ULL, ~0ULL, ~0ULL, ~0ULL };
	static const long nrs[] = { SYS_read,	SYS_write, SYS_openat,	   SYS_execve,
				    SYS_ptrace, SYS_mount, SYS_kexec_load, 1000 };
	for (size_t i = 0; i < ARRAY_SIZE(nrs); i++) {
		sc_filter_allows(f, nrs[i], zero);
		sc_filter_allows(f, nrs[i], ones);
	}
	/* libseccomp's program alone, which the ranges in front of it must not contradict (it
	 * may not compile: without the ranges a program can outgrow BPF_MAXINSNS) */
	struct hutch_err e2 = { 0 };
	if (sc_compile_bpf(&cfg, false, &plain, &e2) == 0)
		compare(&cfg, f, plain);
out:
	sc_filter_free(f);
	sc_filter_free(plain);
	sc_config_free(&cfg);
	free(text);
	return 0;
}
