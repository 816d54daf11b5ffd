// SPDX-License-Identifier: Apache-2.0
/*
 * Compiling a struct sc_config into a classic BPF program with libseccomp, and loading that
 * program. Compiling runs in the parent before clone; the result is a plain allocation (no
 * libseccomp state), so the child's only seccomp work is one seccomp(2) call.
 */
#include "sc.h"

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>

/* The kernel's limit for one classic BPF program (BPF_MAXINSNS). */
#define MAX_INSNS 4096
#define MAX_ARGS 6

struct sc_filter {
	unsigned int flags; /* SECCOMP_FILTER_FLAG_* for the load */
	size_t len;
	struct sock_filter insns[];
};

static void ctx_releasep(scmp_filter_ctx *ctx)
{
	if (*ctx)
		seccomp_release(*ctx);
}

static int add_archs(scmp_filter_ctx ctx, const struct sc_config *cfg, struct hutch_err *err)
{
	for (size_t i = 0; i < cfg->n_archs; i++) {
		uint32_t token;
		if (sc_arch_token(cfg->archs[i], &token) < 0)
			return hutch_fail(err, EINVAL, "unknown architecture %s", cfg->archs[i]);
		int r = seccomp_arch_add(ctx, token);
		/* The native arch is always in a new filter; listing it again is normal. */
		if (r < 0 && r != -EEXIST)
			return hutch_fail_errno(err, r, "add architecture %s", cfg->archs[i]);
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
	if (a->index >= MAX_ARGS)
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
	const char *name = NULL;
	int r;

	if (rule->n_args == 0 || !args_share_index(rule)) {
		r = seccomp_rule_add_array(ctx, rule->action, nr, rule->n_args, cmps);
	} else {
		r = 0;
		for (size_t i = 0; i < rule->n_args && r >= 0; i++)
			r = seccomp_rule_add_array(ctx, rule->action, nr, 1, &cmps[i]);
	}
	if (r < 0) {
		name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);
		hutch_fail_errno(err, r, "add rule for %s", name ? name : "syscall");
		free((char *)name);
	}
	return r;
}

static int add_rule(scmp_filter_ctx ctx, const struct sc_config *cfg, const struct sc_rule *rule,
		    struct hutch_err *err)
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
		/* Unknown here means this kernel/arch has no such syscall: skip it, as runc. */
		int nr = seccomp_syscall_resolve_name(rule->names[i]);
		if (nr == __NR_SCMP_ERROR)
			continue;
		r = add_syscall(ctx, rule, nr, cmps, err);
		if (r < 0)
			return r;
	}
	return 0;
}

/* libseccomp 2.5 can only export to an fd, so go through a memfd and read it back. */
static int export_bpf(scmp_filter_ctx ctx, unsigned int flags, struct sc_filter **out,
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
	if (len > MAX_INSNS)
		return hutch_fail(err, E2BIG, "filter too long: %zu instructions (kernel limit %d)",
				  len, MAX_INSNS);
	f = hutch_xmalloc(sizeof(*f) + (size_t)st.st_size);
	f->flags = flags;
	f->len = len;
	ssize_t n = pread(fd, f->insns, (size_t)st.st_size, 0);
	if (n != st.st_size)
		return hutch_fail_errno(err, n < 0 ? errno : EIO, "read exported BPF program");
	*out = steal_ptr(f);
	return 0;
}

static unsigned int load_flags(const struct sc_config *cfg)
{
	unsigned int flags = 0;
	if (cfg->flag_tsync)
		flags |= SECCOMP_FILTER_FLAG_TSYNC;
	if (cfg->flag_log)
		flags |= SECCOMP_FILTER_FLAG_LOG;
	if (cfg->flag_spec_allow)
		flags |= SECCOMP_FILTER_FLAG_SPEC_ALLOW;
	return flags;
}

int sc_compile(const struct sc_config *cfg, struct sc_filter **out, struct hutch_err *err)
{
	_cleanup_(ctx_releasep) scmp_filter_ctx ctx = NULL;
	int r;

	ctx = seccomp_init(cfg->default_action);
	if (!ctx)
		r = hutch_fail(err, EINVAL, "invalid default action %#x", cfg->default_action);
	else
		r = add_archs(ctx, cfg, err);
	if (r >= 0)
		r = set_attrs(ctx, cfg, err);
	for (size_t i = 0; r >= 0 && i < cfg->n_rules; i++) {
		r = add_rule(ctx, cfg, &cfg->rules[i], err);
		if (r < 0)
			hutch_err_prefix(err, "syscalls[%zu]: ", i);
	}
	if (r >= 0)
		r = export_bpf(ctx, load_flags(cfg), out, err);
	if (r < 0)
		return hutch_err_prefix(err, "seccomp: ");
	return 0;
}

size_t sc_filter_len(const struct sc_filter *f)
{
	return f ? f->len : 0;
}

void sc_filter_free(struct sc_filter *f)
{
	free(f);
}

/*
 * Runs in the child. Without no_new_privs the kernel demands CAP_SYS_ADMIN, so the recipe
 * loads either before dropping capabilities or after setting no_new_privs.
 */
int sc_load(const struct sc_filter *f, struct hutch_err *err)
{
	struct sock_fprog prog = {
		.len = (unsigned short)f->len,
		.filter = (struct sock_filter *)f->insns,
	};
	long r = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, f->flags, &prog);
	if (r < 0 && errno == EACCES)
		return hutch_fail(err, EACCES,
				  "load seccomp filter: %s (needs no_new_privs or CAP_SYS_ADMIN)",
				  strerror(EACCES));
	if (r < 0)
		return hutch_fail_errno(err, errno, "load seccomp filter");
	/* With TSYNC a positive result is the id of a thread that could not be synchronised. */
	if (r > 0)
		return hutch_fail(err, EAGAIN, "load seccomp filter: thread %ld cannot be synced",
				  r);
	return 0;
}
