// SPDX-License-Identifier: Apache-2.0
/*
 * Compiling a struct sc_config into a classic BPF program: the allow ranges (sc-ranges.c),
 * runc's ENOSYS prologue, then libseccomp's program for the rest. This is the cache-miss
 * path: sc_compile (sc-load.c) tries the cache first. The result is a plain allocation (no
 * libseccomp state), so the child's only seccomp work is one seccomp(2) call.
 */
#include "sc-internal.h"
#include "sc-bpf.h"

#include <linux/audit.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#define X32_SYSCALL_BIT 0x40000000u

static void ctx_releasep(scmp_filter_ctx *ctx)
{
	if (*ctx)
		seccomp_release(*ctx);
}

/* The filter's ABIs: the native one (libseccomp always has it) first, then the listed ones. */
static int list_tokens(const struct sc_config *cfg, uint32_t *tokens, size_t max, size_t *n,
		       struct hutch_err *err)
{
	tokens[0] = seccomp_arch_native();
	*n = 1;
	for (size_t i = 0; i < cfg->n_archs; i++) {
		uint32_t token;
		if (sc_arch_token(cfg->archs[i], &token) < 0)
			return hutch_fail(err, EINVAL, "unknown architecture %s", cfg->archs[i]);
		bool seen = false;
		for (size_t k = 0; k < *n; k++)
			seen |= tokens[k] == token;
		if (seen)
			continue;
		if (*n == max)
			return hutch_fail(err, E2BIG, "too many architectures");
		tokens[(*n)++] = token;
	}
	return 0;
}

/*
 * These attributes only matter to seccomp_load, which we do not use (sc_load passes the flags
 * itself), but setting them makes libseccomp check that the kernel supports each flag, so an
 * unsupported one fails here in the parent with a clear message.
 */
static int set_attrs(scmp_filter_ctx ctx, const struct sc_config *cfg, struct hutch_err *err)
{
	static const struct {
		enum scmp_filter_attr attr;
		const char *what;
	} flags[] = {
		{ SCMP_FLTATR_CTL_LOG, "SECCOMP_FILTER_FLAG_LOG" },
		{ SCMP_FLTATR_CTL_SSB, "SECCOMP_FILTER_FLAG_SPEC_ALLOW" },
		{ SCMP_FLTATR_CTL_TSYNC, "SECCOMP_FILTER_FLAG_TSYNC" },
	};
	bool want[] = { cfg->flag_log, cfg->flag_spec_allow, cfg->flag_tsync };
	int r;

	/* The runtime sets no_new_privs itself, at the point the recipe chooses. */
	r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
	if (r < 0)
		return hutch_fail_errno(err, r, "disable libseccomp's no_new_privs");
	/*
	 * A binary tree of syscall numbers instead of a list: the kernel runs the program once
	 * per syscall number and arch at load to find the always-allowed ones (its seccomp
	 * cache), and every syscall not in that cache runs it again. For Docker's profile this
	 * cuts the load to a third (1.0 -> 0.33 ms here) and shortens every filtered call.
	 */
	r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
	if (r < 0)
		return hutch_fail_errno(err, r, "set SCMP_FLTATR_CTL_OPTIMIZE");
	/* Real errnos from libseccomp's own syscalls instead of a blanket ECANCELED. */
	r = seccomp_attr_set(ctx, SCMP_FLTATR_API_SYSRAWRC, 1);
	if (r < 0)
		return hutch_fail_errno(err, r, "set SCMP_FLTATR_API_SYSRAWRC");
	for (size_t i = 0; i < ARRAY_SIZE(flags); i++) {
		if (!want[i])
			continue;
		r = seccomp_attr_set(ctx, flags[i].attr, 1);
		if (r < 0)
			return hutch_fail(err, r, "%s: not supported by this kernel",
					  flags[i].what);
	}
	return 0;
}

static int to_cmp(const struct sc_arg *a, struct scmp_arg_cmp *out, struct hutch_err *err)
{
	static const enum scmp_compare cmp[] = {
		[SC_OP_NE] = SCMP_CMP_NE,
		[SC_OP_LT] = SCMP_CMP_LT,
		[SC_OP_LE] = SCMP_CMP_LE,
		[SC_OP_EQ] = SCMP_CMP_EQ,
		[SC_OP_GE] = SCMP_CMP_GE,
		[SC_OP_GT] = SCMP_CMP_GT,
		[SC_OP_MASKED_EQ] = SCMP_CMP_MASKED_EQ,
	};
	if (a->index > 5)
		return hutch_fail(err, EINVAL, "argument index %u out of range (0-5)", a->index);
	if ((unsigned int)a->op >= ARRAY_SIZE(cmp) || cmp[a->op] == 0)
		return hutch_fail(err, EINVAL, "invalid comparison operator %d", (int)a->op);
	/* For MASKED_EQ the OCI value is the mask and valueTwo the expected result. */
	*out = (struct scmp_arg_cmp){
		.arg = a->index, .op = cmp[a->op], .datum_a = a->value, .datum_b = a->value_two
	};
	return 0;
}

/*
 * runc's rule: if two conditions test the same argument, libseccomp would AND them (and
 * reject the duplicate index), while profiles mean OR ("personality(0) or personality(8)").
 * So then every condition becomes a rule of its own; otherwise all go into one rule.
 */
static bool args_share_index(const struct sc_rule *rule)
{
	unsigned int seen = 0;
	for (size_t i = 0; i < rule->n_args; i++) {
		unsigned int bit = 1u << rule->args[i].index;
		if (seen & bit)
			return true;
		seen |= bit;
	}
	return false;
}

static int add_syscall(scmp_filter_ctx ctx, const struct sc_rule *rule, int nr,
		       const struct scmp_arg_cmp *cmps, struct hutch_err *err)
{
	int r;

	if (rule->n_args == 0 || !args_share_index(rule)) {
		r = seccomp_rule_add_array(ctx, rule->action, nr, (unsigned int)rule->n_args, cmps);
	} else {
		r = 0;
		for (size_t i = 0; i < rule->n_args && r >= 0; i++)
			r = seccomp_rule_add_array(ctx, rule->action, nr, 1, &cmps[i]);
	}
	if (r < 0) {
		char *name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);
		hutch_fail_errno(err, r, "add rule for %s", name ? name : "syscall");
		free(name);
	}
	return r;
}

/*
 * The multiplexer's half of a rule on an i386 socket or ipc call whose direct syscall the
 * ranges decide: what libseccomp writes for it (x86_rule_add), given to libseccomp exactly.
 * That is the rule's action on "socketcall or ipc with a0 == call" and the rule's other
 * conditions: one on a0 gives way to the call number, those on a1-a5 stay (though there
 * they test the multiplexer's arguments, a0's pointer to the real ones among them), rule by
 * rule as add_syscall splits them. The pseudo numbers are libseccomp's: -100 - call for
 * socketcall, -200 - call for ipc.
 */
static int add_mux_half(scmp_filter_ctx ctx, const struct sc_rule *rule, int pseudo,
			const struct scmp_arg_cmp *cmps, struct hutch_err *err)
{
	bool sock = pseudo <= -100 && pseudo > -200;
	int mux = seccomp_syscall_resolve_name(sock ? "socketcall" : "ipc");
	const struct scmp_arg_cmp call = { .arg = 0,
					   .op = SCMP_CMP_EQ,
					   .datum_a = (uint64_t)(-pseudo % 100) };
	/* add_syscall's rules: all conditions in one, or one rule per condition */
	size_t rules = rule->n_args > 0 && args_share_index(rule) ? rule->n_args : 1;

	for (size_t i = 0; i < rules; i++) {
		const struct scmp_arg_cmp *from = rules > 1 ? &cmps[i] : cmps;
		size_t count = rules > 1 ? 1 : rule->n_args; /* distinct indexes: at most 6 */
		struct scmp_arg_cmp c[1 + 6] = { call };
		unsigned int n = 1;
		for (size_t k = 0; k < count; k++)
			if (from[k].arg != 0)
				c[n++] = from[k];
		int r = seccomp_rule_add_exact_array(ctx, rule->action, mux, n, c);
		if (r < 0)
			return hutch_fail_errno(err, r, "add rule for %s",
						sock ? "socketcall" : "ipc");
	}
	return 0;
}

/* Adds rule to the one-ABI ctx of token, less the syscalls the prefix decides there (every
 * rule naming one of those is the prefix's, by construction of the plan). */
static int add_rule(scmp_filter_ctx ctx, const struct sc_config *cfg, const struct sc_rule *rule,
		    uint32_t token, const struct sc_ranges *rg, struct hutch_err *err)
{
	_cleanup_free_ struct scmp_arg_cmp *cmps = NULL;
	int r;

	/* libseccomp refuses a rule that repeats the default action; it would change nothing. */
	if (rule->action == cfg->default_action)
		return 0;
	cmps = hutch_xcalloc(rule->n_args, sizeof(*cmps));
	for (size_t i = 0; i < rule->n_args; i++) {
		r = to_cmp(&rule->args[i], &cmps[i], err);
		if (r < 0)
			return r;
	}
	for (size_t i = 0; i < rule->n_names; i++) {
		/* Unknown: this libseccomp cannot name it. sc_config_check refused the cases
		 * where skipping it opens something; the rest are skipped, as runc. */
		int nr = seccomp_syscall_resolve_name(rule->names[i]);
		if (nr == __NR_SCMP_ERROR)
			continue;
		int arch_nr = seccomp_syscall_resolve_name_arch(token, rule->names[i]);
		if (sc_ranges_has(rg, token, arch_nr))
			continue;
		if (arch_nr < 0 && sc_ranges_has(rg, token, sc_mux_direct(token, rule->names[i])))
			r = add_mux_half(ctx, rule, arch_nr, cmps, err);
		else
			r = add_syscall(ctx, rule, nr, cmps, err);
		if (r < 0)
			return r;
	}
	return 0;
}

/* libseccomp 2.5 can only export to an fd, so go through a memfd and read it back, leaving
 * room in front for the prologue. */
static int export_bpf(scmp_filter_ctx ctx, size_t room, struct sc_filter **out,
		      struct hutch_err *err)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ struct sc_filter *f = NULL;
	struct stat st;
	int r;

	fd = memfd_create("hutch-seccomp", MFD_CLOEXEC);
	if (fd < 0)
		return hutch_fail_errno(err, errno, "memfd_create");
	r = seccomp_export_bpf(ctx, fd);
	if (r < 0)
		return hutch_fail_errno(err, r, "export BPF program");
	if (fstat(fd, &st) < 0)
		return hutch_fail_errno(err, errno, "stat exported BPF program");
	size_t len = (size_t)st.st_size / sizeof(struct sock_filter);
	if (len == 0 || (size_t)st.st_size % sizeof(struct sock_filter) != 0)
		return hutch_fail(err, EINVAL, "exported BPF program has a bad size (%lld bytes)",
				  (long long)st.st_size);
	f = hutch_xcalloc(1, sizeof(*f) + (room + len) * sizeof(struct sock_filter));
	f->len = room + len;
	ssize_t n = pread(fd, f->insns + room, (size_t)st.st_size, 0);
	if (n != st.st_size)
		return hutch_fail_errno(err, n < 0 ? errno : EIO, "read exported BPF program");
	*out = steal_ptr(f);
	return 0;
}

/* ---- the ENOSYS prologue ---- */

/* The highest syscall number per kernel arch that the profile names: plain and x32 ABI. */
struct arch_max {
	uint32_t audit;
	int64_t plain, x32; /* -1: this ABI is not in the filter */
};

static void note_arch(struct arch_max *m, size_t *n, const struct sc_config *cfg, uint32_t token)
{
	bool x32 = token == SCMP_ARCH_X32;
	uint32_t audit = x32 ? AUDIT_ARCH_X86_64 : token;
	size_t i = 0;
	int64_t max = sc_abi_max(cfg, token);

	while (i < *n && m[i].audit != audit)
		i++;
	if (i == *n)
		m[(*n)++] = (struct arch_max){ .audit = audit, .plain = -1, .x32 = -1 };
	if (x32)
		m[i].x32 = max;
	else
		m[i].plain = max;
}

/* Instructions for one arch's block, written at p[at..] (when p) with the layout below. */
static size_t arch_block(const struct arch_max *m, struct sock_filter *p, size_t at, size_t enosys,
			 size_t filter)
{
	bool both = m->plain >= 0 && m->x32 >= 0, x86_64 = m->audit == AUDIT_ARCH_X86_64;
	size_t len = 4 + (x86_64 ? 1 : 0) + (both ? 1 : 0);
	if (!p)
		return len;
#define JMP(i, t) ((uint8_t)((t) - (i)-1))
	size_t i = at, end = at + len, cmp64 = at + 4, cmp32 = both ? at + 5 : at + 4;
	p[i++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 4); /* arch */
	p[i] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, m->audit, 0, JMP(i, end));
	i++;
	p[i++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0); /* nr */
	/* x32 shares x86_64's audit arch and sets bit 30 of the number; an ABI the filter
	 * does not list goes straight to the filter, which rejects it as libseccomp does. */
	if (x86_64) {
		size_t is32 = m->x32 >= 0 ? cmp32 : filter, not32 = m->plain >= 0 ? cmp64 : filter;
		p[i] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, X32_SYSCALL_BIT,
						    JMP(i, is32), JMP(i, not32));
		i++;
	}
	if (m->plain >= 0 && (!x86_64 || i == cmp64)) {
		p[i] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, (uint32_t)m->plain,
						    JMP(i, enosys), JMP(i, filter));
		i++;
	}
	if (m->x32 >= 0) {
		p[i] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, (uint32_t)m->x32,
						    JMP(i, enosys), JMP(i, filter));
		i++;
	}
#undef JMP
	return len;
}

/*
 * runc's answer to "a syscall newer than the profile gets EPERM, so libc never falls back":
 * in front of libseccomp's program, numbers above the highest one the profile names get
 * ENOSYS. Layout: one block per arch, "ja filter", "ret ENOSYS", then the program, whose
 * relative jumps are unaffected. Every jump here is forward and short (< 255).
 */
static size_t enosys_prologue(const struct sc_config *cfg, struct sock_filter *p)
{
	struct arch_max m[16];
	size_t n = 0, len = 0;

	note_arch(m, &n, cfg, seccomp_arch_native());
	for (size_t i = 0; i < cfg->n_archs && n < ARRAY_SIZE(m); i++) {
		uint32_t token;
		if (sc_arch_token(cfg->archs[i], &token) == 0 && token != seccomp_arch_native())
			note_arch(m, &n, cfg, token);
	}
	for (size_t i = 0; i < n; i++)
		if (m[i].plain >= 0 || m[i].x32 >= 0)
			len += arch_block(&m[i], NULL, 0, 0, 0);
	if (!p)
		return len + 2;
	size_t at = 0, enosys = len + 1, filter = len + 2;
	for (size_t i = 0; i < n; i++)
		if (m[i].plain >= 0 || m[i].x32 >= 0)
			at += arch_block(&m[i], p, at, enosys, filter);
	p[at++] = (struct sock_filter)BPF_STMT(BPF_JMP | BPF_JA, 1);
	p[at] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS);
	return len + 2;
}

/* libseccomp's filter for one ABI (rules may differ per ABI once the ranges are out). */
static int abi_ctx(const struct sc_config *cfg, uint32_t token, const struct sc_ranges *rg,
		   scmp_filter_ctx *out, struct hutch_err *err)
{
	_cleanup_(ctx_releasep) scmp_filter_ctx ctx = seccomp_init(cfg->default_action);
	uint32_t native = seccomp_arch_native();
	int r;

	if (!ctx)
		return hutch_fail(err, EINVAL, "invalid default action %#x", cfg->default_action);
	if (token != native) {
		r = seccomp_arch_add(ctx, token);
		if (r >= 0)
			r = seccomp_arch_remove(ctx, native);
		if (r < 0)
			return hutch_fail_errno(err, r, "add architecture %#x", token);
	}
	r = set_attrs(ctx, cfg, err);
	for (size_t i = 0; r >= 0 && i < cfg->n_rules; i++) {
		r = add_rule(ctx, cfg, &cfg->rules[i], token, rg, err);
		if (r < 0)
			hutch_err_prefix(err, "syscalls[%zu]: ", i);
	}
	if (r < 0)
		return r;
	*out = steal_ptr(ctx);
	return 0;
}

/* One ctx per ABI, merged: libseccomp then lays them out as one multi-arch program. */
static int build_ctx(const struct sc_config *cfg, const uint32_t *tokens, size_t n,
		     const struct sc_ranges *rg, scmp_filter_ctx *out, struct hutch_err *err)
{
	_cleanup_(ctx_releasep) scmp_filter_ctx all = NULL;

	for (size_t i = 0; i < n; i++) {
		scmp_filter_ctx one = NULL;
		int r = abi_ctx(cfg, tokens[i], rg, &one, err);
		if (r < 0)
			return r;
		if (!all) {
			all = one;
			continue;
		}
		r = seccomp_merge(all, one); /* takes one on success */
		if (r < 0) {
			seccomp_release(one);
			return hutch_fail_errno(err, r, "merge architecture filters");
		}
	}
	*out = steal_ptr(all);
	return 0;
}

int sc_compile_bpf(const struct sc_config *cfg, bool ranges, struct sc_filter **out,
		   struct hutch_err *err)
{
	_cleanup_(ctx_releasep) scmp_filter_ctx ctx = NULL;
	struct sc_ranges rg = { 0 };
	struct sc_filter *f = NULL;
	uint32_t tokens[16];
	size_t n_tokens;

	int r = list_tokens(cfg, tokens, ARRAY_SIZE(tokens), &n_tokens, err);
	if (r < 0)
		return r;
	if (ranges)
		sc_ranges_plan(cfg, tokens, n_tokens, &rg);
	r = build_ctx(cfg, tokens, n_tokens, &rg, &ctx, err);
	size_t head = sc_wants_enosys(cfg->default_action) ? enosys_prologue(cfg, NULL) : 0;
	size_t prefix = sc_ranges_emit(&rg, NULL);
	size_t guard = sc_mux_guard(cfg, NULL);
	if (r >= 0)
		r = export_bpf(ctx, head + prefix + guard, &f, err);
	if (r >= 0) {
		/* The ranges first: they answer most syscalls, and never one above the
		 * prologue's limits (they only hold numbers the profile names). The
		 * multiplexers never reach a RET of the ranges: the guard sees them. */
		sc_ranges_emit(&rg, f->insns);
		if (head)
			enosys_prologue(cfg, f->insns + prefix);
		if (guard)
			sc_mux_guard(cfg, f->insns + prefix + head);
	}
	sc_ranges_free(&rg);
	if (r < 0)
		return r;
	if (f->len > SC_MAX_INSNS) {
		size_t len = f->len;
		free(f);
		return hutch_fail(err, E2BIG, "filter too long: %zu instructions (kernel limit %d)",
				  len, SC_MAX_INSNS);
	}
	f->flags = sc_load_flags(cfg);
	f->notify = sc_config_notifies(cfg);
	*out = f;
	return 0;
}
