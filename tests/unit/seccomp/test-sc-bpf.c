// SPDX-License-Identifier: Apache-2.0
/*
 * The allow ranges (seccomp/bpf/sc-ranges.c) must not change a single decision. sc-eval.c's
 * classic BPF interpreter runs the program with ranges and libseccomp's program without them over
 * every syscall number of each ABI (and x32's, and other arches), with argument values taken
 * from the profile's own conditions, and the two must answer alike. No kernel needed.
 */
#include "sc-internal.h"
#include "sc-bpf.h"
#include "tap.h"

#include <linux/audit.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/syscall.h>

/* Argument vectors worth trying: zeros, all ones, and every value the rules compare with,
 * put at the index they test (for MASKED_EQ the expected value, and the mask itself). */
struct vecs {
	uint64_t (*v)[6];
	size_t n;
};

static void add_vec(struct vecs *s, unsigned int idx, uint64_t val)
{
	s->v = realloc(s->v, (s->n + 1) * sizeof(*s->v));
	memset(s->v[s->n], 0, sizeof(s->v[s->n]));
	if (idx < 6)
		s->v[s->n][idx] = val;
	s->n++;
}

static struct vecs arg_vecs(const struct sc_config *cfg)
{
	struct vecs s = { 0 };
	add_vec(&s, 6, 0);
	add_vec(&s, 6, 0);
	memset(s.v[1], 0xff, sizeof(s.v[1]));
	for (uint64_t call = 1; call < 32; call++) /* i386's socketcall and ipc: a0 is the call */
		add_vec(&s, 0, call);
	for (size_t i = 0; i < cfg->n_rules; i++)
		for (size_t k = 0; k < cfg->rules[i].n_args; k++) {
			const struct sc_arg *a = &cfg->rules[i].args[k];
			add_vec(&s, a->index, a->value);
			add_vec(&s, a->index, a->value_two);
			add_vec(&s, a->index, a->value + 1);
			/* the edges of a masked range, and the same with high bits set, which
			 * a 32-bit mask ignores and an EQ does not */
			uint64_t low = ~a->value & 0xffffffffu;
			add_vec(&s, a->index, a->value_two - 1);
			add_vec(&s, a->index, a->value_two | low);
			add_vec(&s, a->index, (a->value_two | low) + 1);
			add_vec(&s, a->index, a->value_two | (1ULL << 32));
			add_vec(&s, a->index, a->value | (1ULL << 40));
		}
	return s;
}

/* Every decision of a against b; returns how many differ (printing the first few). */
static size_t compare(const struct sc_filter *a, const struct sc_filter *b,
		      const struct sc_config *cfg, size_t *checked)
{
	static const uint32_t arches[] = { AUDIT_ARCH_X86_64, AUDIT_ARCH_I386, AUDIT_ARCH_AARCH64,
					   0 };
	/* Every number up to 1100 of both x86_64 ABIs, and the edges of the regions the ranges
	 * answer for (bit 30 is x32's, bit 31 nobody's). */
	static const uint32_t bases[] = { 0,	       0x40000000u, 0x3fffff00u,
					  0x7fffff00u, 0xbfffff00u, 0xffffff00u };
	struct vecs vs = arg_vecs(cfg);
	size_t bad = 0;

	for (size_t ai = 0; ai < ARRAY_SIZE(arches); ai++)
		for (size_t bi = 0; bi < ARRAY_SIZE(bases); bi++)
			for (uint32_t n = 0; n < (bases[bi] > 0x40000000u ? 256 : 1100); n++)
				for (size_t v = 0; v < vs.n; v++) {
					struct seccomp_data d = { .nr = (int)(bases[bi] + n),
								  .arch = arches[ai] };
					memcpy(d.args, vs.v[v], sizeof(d.args));
					uint32_t ra = 0, rb = 0;
					bool oka = sc_bpf_run(a->insns, a->len, &d, &ra);
					bool okb = sc_bpf_run(b->insns, b->len, &d, &rb);
					(*checked)++;
					if (oka && okb && ra == rb)
						continue;
					if (bad++ < 5)
						printf("# arch %#x nr %#x args[%zu]: %#x (%d) vs "
						       "%#x "
						       "(%d)\n",
						       d.arch, (unsigned)d.nr, v, ra, oka, rb, okb);
				}
	free(vs.v);
	return bad;
}

static void check_same(const char *what, const struct sc_config *cfg)
{
	struct hutch_err err = { 0 };
	struct sc_filter *with = NULL, *without = NULL;
	size_t checked = 0;

	int r = sc_compile_bpf(cfg, true, &with, &err);
	if (r == 0)
		r = sc_compile_bpf(cfg, false, &without, &err);
	ok(r == 0, "%s: compiles with and without ranges (%s)", what, r < 0 ? err.msg : "ok");
	if (r == 0) {
		size_t bad = compare(with, without, cfg, &checked);
		ok(bad == 0, "%s: %zu vs %zu instructions, %zu decisions, %zu differ", what,
		   with->len, without->len, checked, bad);
	}
	sc_filter_free(with);
	sc_filter_free(without);
}

static const char *allow_names[] = { "read", "write", "close", "exit_group", "getpid", NULL };
static const char *sock_names[] = { "socket", NULL };
static const char *socketcall_names[] = { "socketcall", "bind", "shmget", NULL };
static const char *mixed_names[] = { "getppid", "getpid", "no_such_syscall", NULL };
static const char *ioctl_names[] = { "ioctl", NULL };
static const char *log_names[] = { "uname", "getuid", NULL };
static struct sc_arg af_unix[] = { { .index = 0, .value = 1, .op = SC_OP_EQ } };
static struct sc_arg af_inet[] = { { .index = 0, .value = 2, .op = SC_OP_EQ } };
static struct sc_arg tiocsti[] = {
	{ .index = 1, .value = 0xffffffff, .value_two = 0x5412, .op = SC_OP_MASKED_EQ }
};
static const char *archs3[] = { "SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32", NULL };

/* A config of these rules for every x86 ABI (on x86_64; elsewhere the native ABI only). */
static struct sc_config x86_config(struct sc_rule *rules, size_t n, uint32_t default_action)
{
	struct sc_config cfg = { .default_action = default_action, .rules = rules, .n_rules = n };
#if defined(__x86_64__)
	cfg.archs = (char **)archs3;
	cfg.n_archs = 3;
#endif
	return cfg;
}

#define RULE(n, act)                                                                               \
	{                                                                                          \
		.names = (char **)(n), .n_names = ARRAY_SIZE(n) - 1, .action = (act)               \
	}
#define RULE_ARGS(n, act, a)                                                                       \
	{                                                                                          \
		.names = (char **)(n), .n_names = ARRAY_SIZE(n) - 1, .action = (act), .args = (a), \
		.n_args = ARRAY_SIZE(a)                                                            \
	}

/* Hand-made corners: a syscall in an argument rule and an argument-free one, a pseudo name on
 * i386 next to its multiplexer, a second action, an unknown name, every x86 ABI. */
static void test_corners(void)
{
	struct sc_rule rules[] = {
		RULE(allow_names, SCMP_ACT_ALLOW),
		RULE_ARGS(sock_names, SCMP_ACT_ALLOW, af_unix),
		RULE(socketcall_names, SCMP_ACT_ALLOW),
		RULE(mixed_names, SCMP_ACT_ERRNO(5)),
		RULE(mixed_names, SCMP_ACT_ALLOW),
		RULE(ioctl_names, SCMP_ACT_ALLOW),
		RULE_ARGS(ioctl_names, SCMP_ACT_ERRNO(1), tiocsti),
		RULE(log_names, SCMP_ACT_LOG),
		RULE_ARGS(sock_names, SCMP_ACT_ERRNO(7), af_inet), /* denying default: dropped */
	};
	struct sc_config cfg = x86_config(rules, ARRAY_SIZE(rules) - 1, SCMP_ACT_ERRNO(1));
	check_same("corners, denying default", &cfg);
	/* A deny list: the ranges hold the commonest deny, socketcall among them on i386 unless
	 * the multiplexed socket rule keeps it for libseccomp. */
	cfg.default_action = SCMP_ACT_ALLOW;
	cfg.n_rules = ARRAY_SIZE(rules);
	rules[0].action = rules[2].action = SCMP_ACT_ERRNO(13);
	check_same("corners, allowing default", &cfg);
	cfg.default_action = SCMP_ACT_KILL_PROCESS;
	cfg.n_archs = 1;
	check_same("corners, killing default, native only", &cfg);
}

static const char *socket_names[] = { "socket", NULL };
static const char *ioctl2_names[] = { "ioctl", NULL };
static const char *pers_names[] = { "personality", NULL };
static const char *getpid_names[] = { "getpid", NULL };
static const char *kill_names[] = { "kill", NULL };
static struct sc_arg sock_lo[] = { { .index = 0, .value = 0xffffffe0, .op = SC_OP_MASKED_EQ } };
static struct sc_arg sock_hi[] = {
	{ .index = 0, .value = 0xfffffffc, .value_two = 32, .op = SC_OP_MASKED_EQ }
};
static struct sc_arg sock_never[] = {
	{ .index = 0, .value = 0xfffffffe, .value_two = 0x29, .op = SC_OP_MASKED_EQ }
};
static struct sc_arg all_low[] = { { .index = 1, .value = 0, .op = SC_OP_MASKED_EQ } };
static struct sc_arg pers_eq[] = { { .index = 0, .value = 8, .op = SC_OP_EQ } };
static struct sc_arg pid_arg2[] = {
	{ .index = 2, .value = 0xffff0000, .value_two = 0x10000, .op = SC_OP_MASKED_EQ }
};
static struct sc_arg kill_a0[] = { { .index = 0, .value = 0xffffff00, .op = SC_OP_MASKED_EQ } };
static struct sc_arg kill_a1[] = { { .index = 1, .value = 0xffffff00, .op = SC_OP_MASKED_EQ } };

static const char *mux_names[] = { "bind", "shmget", "recvmmsg", "accept", "semop", NULL };
static const char *mux_deny_names[] = { "connect", "msgget", NULL };

/* i386's socket and ipc calls without an unconditional socketcall: their direct syscalls go
 * into the ranges and argument trees, their multiplexer halves stay with libseccomp. */
static void test_multiplexed(void)
{
	struct sc_rule rules[] = {
		RULE(allow_names, SCMP_ACT_ALLOW),
		RULE(mux_names, SCMP_ACT_ALLOW),
		RULE_ARGS(sock_names, SCMP_ACT_ALLOW, sock_lo),
		RULE_ARGS(sock_names, SCMP_ACT_ALLOW, sock_hi),
		RULE(mux_deny_names, SCMP_ACT_ERRNO(9)),
	};
	struct sc_config cfg = x86_config(rules, ARRAY_SIZE(rules), SCMP_ACT_ERRNO(1));
#if defined(__x86_64__)
	int bind = sc_mux_direct(SCMP_ARCH_X86, "bind");
	ok(bind > 0 && sc_mux_direct(SCMP_ARCH_X86, "read") < 0 &&
		   sc_mux_direct(SCMP_ARCH_X86_64, "bind") < 0,
	   "i386's bind has a direct syscall (%d); read and x86_64's bind are not multiplexed",
	   bind);
#endif
	check_same("multiplexed calls, denying default", &cfg);
	cfg.default_action = SCMP_ACT_ALLOW;
	rules[0].action = rules[1].action = SCMP_ACT_ERRNO(13);
	check_same("multiplexed calls, allowing default", &cfg);

	/* A condition on a1 (socket's type) stays on the multiplexer's half as libseccomp
	 * writes it (only one on a0 gives way to the call number): socketcall(SYS_SOCKET, ...)
	 * is not allowed whatever its arguments point at. */
	static struct sc_arg sock_type[] = {
		{ .index = 1, .value = 0xffffffff, .value_two = 1, .op = SC_OP_MASKED_EQ }
	};
	struct sc_rule typed[] = {
		RULE(allow_names, SCMP_ACT_ALLOW),
		RULE_ARGS(sock_names, SCMP_ACT_ALLOW, sock_type),
	};
	cfg = x86_config(typed, ARRAY_SIZE(typed), SCMP_ACT_ERRNO(1));
	check_same("a multiplexed call's condition on a1", &cfg);
#if defined(__x86_64__)
	struct hutch_err err = { 0 };
	struct sc_filter *f = NULL;
	struct seccomp_data d = { .nr = 102, .arch = AUDIT_ARCH_I386, .args = { 1, 0x1000 } };
	uint32_t ret = 0;
	ok(sc_compile_bpf(&cfg, true, &f, &err) == 0 && sc_bpf_run(f->insns, f->len, &d, &ret) &&
		   ret == SCMP_ACT_ERRNO(1),
	   "i386 socketcall(SYS_SOCKET, ptr) is not allowed by a rule on socket's type (%#x)", ret);
	sc_filter_free(f);
#endif
}

/* Syscalls decided by a tree on one argument: adjacent and empty ranges, an open end, another
 * action; and ones that must stay with libseccomp (EQ, two arguments). */
static void test_arg_trees(void)
{
	struct sc_rule rules[] = {
		RULE(allow_names, SCMP_ACT_ALLOW),
		RULE_ARGS(socket_names, SCMP_ACT_ALLOW, sock_lo),
		RULE_ARGS(socket_names, SCMP_ACT_ALLOW, sock_hi),
		RULE_ARGS(socket_names, SCMP_ACT_ALLOW, sock_never),
		RULE_ARGS(ioctl2_names, SCMP_ACT_ALLOW, all_low),
		RULE_ARGS(pers_names, SCMP_ACT_ALLOW, pers_eq),
		RULE_ARGS(getpid_names, SCMP_ACT_ERRNO(3), pid_arg2),
		RULE_ARGS(kill_names, SCMP_ACT_ALLOW, kill_a0),
		RULE_ARGS(kill_names, SCMP_ACT_ALLOW, kill_a1),
	};
	struct sc_config cfg = x86_config(rules, ARRAY_SIZE(rules), SCMP_ACT_ERRNO(1));
	uint32_t native = seccomp_arch_native();
	struct sc_ranges rg;
	sc_ranges_plan(&cfg, &native, 1, &rg);
	int sock = seccomp_syscall_resolve_name("socket"),
	    pers = seccomp_syscall_resolve_name("personality"),
	    kill = seccomp_syscall_resolve_name("kill");
	ok(sc_ranges_has(&rg, native, sock) && !sc_ranges_has(&rg, native, pers) &&
		   !sc_ranges_has(&rg, native, kill),
	   "socket gets an argument tree; personality (EQ) and kill (two arguments) do not");
	sc_ranges_free(&rg);
	check_same("argument trees", &cfg);
}

/* A syscall turned complex before another's tree is weighed must not hide the other's rules
 * for libseccomp: here ioctl (16, also argument-free) turns complex first, and socket (41)
 * has an EQ rule, which the tree cannot take, beside a rangeable one. */
static void test_arg_trees_demoted(void)
{
	static struct sc_arg netlink_eq[] = { { .index = 0, .value = 16, .op = SC_OP_EQ } };
	static struct sc_arg packet[] = {
		{ .index = 0, .value = 0xffffffff, .value_two = 17, .op = SC_OP_MASKED_EQ }
	};
	struct sc_rule rules[] = {
		RULE(ioctl2_names, SCMP_ACT_ERRNO(1)),
		RULE_ARGS(ioctl2_names, SCMP_ACT_ERRNO(1), tiocsti),
		RULE_ARGS(socket_names, SCMP_ACT_ERRNO(1), netlink_eq),
		RULE_ARGS(socket_names, SCMP_ACT_ERRNO(1), packet),
	};
	struct sc_config cfg = x86_config(rules, ARRAY_SIZE(rules), SCMP_ACT_ALLOW);
	struct hutch_err err = { 0 };
	struct sc_filter *f = NULL;
	uint64_t netlink[6] = { 16 }, inet[6] = { 2 };

	ok(sc_compile_bpf(&cfg, true, &f, &err) == 0 && !sc_filter_allows(f, SYS_socket, netlink) &&
		   sc_filter_allows(f, SYS_socket, inet),
	   "socket(AF_NETLINK) stays denied by its EQ rule beside a tree-able one (%s)", err.msg);
	sc_filter_free(f);
	check_same("argument trees after a demoted syscall", &cfg);
}

static void test_default_profile(void)
{
	struct hutch_err err = { 0 };
	struct sc_config cfg = { 0 };
	struct sc_filter *f = NULL;

	int r = sc_default_config(0, 0, &cfg, &err);
	ok(r == 0, "default profile builds");
	check_same("default profile, no capabilities", &cfg);
	r = sc_compile_bpf(&cfg, true, &f, &err);
	ok(r == 0 && f->len < 300, "default profile with ranges: %zu instructions (< 300)",
	   f ? f->len : 0);
	sc_filter_free(f);
	sc_config_free(&cfg);
	r = sc_default_config(~0ULL, 0, &cfg, &err);
	ok(r == 0, "default profile with every capability builds");
	check_same("default profile, every capability", &cfg);
	sc_config_free(&cfg);
}

/* SC_DEFAULT_NO_SETID: a mode with S_ISUID or S_ISGID is refused by every call that takes one,
 * any other mode passes; openat2 is refused (ENOSYS). The ranges must not change it either. */
static void test_no_setid(void)
{
	struct hutch_err err = { 0 };
	struct sc_config cfg = { 0 };
	struct sc_filter *f = NULL;
	int r = sc_default_config(0, SC_DEFAULT_NO_SETID, &cfg, &err);
	ok(r == 0, "default profile without setid bits builds (%s)", err.msg);
	check_same("default profile without setid bits", &cfg);
	r = sc_compile_bpf(&cfg, true, &f, &err);
	ok(r == 0, "and compiles");
	static const struct {
		long nr;
		unsigned idx;
	} calls[] = {
		{ SYS_chmod, 1 },    { SYS_fchmod, 1 }, { SYS_creat, 1 },   { SYS_mknod, 1 },
		{ SYS_fchmodat, 2 }, { SYS_open, 2 },	{ SYS_mknodat, 2 }, { SYS_openat, 3 },
		{ 452, 2 }, /* fchmodat2 (Linux 6.6): Debian 12's headers stop at 450 */
	};
	static const uint64_t refused[] = { 04755, 02755, 06755, 04000, 02000, 0104755 };
	static const uint64_t allowed[] = { 0755, 0644, 01777, 0, 0100644 };
	size_t bad = 0;
	for (size_t i = 0; f && i < ARRAY_SIZE(calls); i++) {
		for (size_t k = 0; k < ARRAY_SIZE(refused); k++) {
			uint64_t a[6] = { 0 };
			a[calls[i].idx] = refused[k];
			bad += sc_filter_allows(f, calls[i].nr, a);
		}
		for (size_t k = 0; k < ARRAY_SIZE(allowed); k++) {
			uint64_t a[6] = { 0 };
			a[calls[i].idx] = allowed[k];
			bad += !sc_filter_allows(f, calls[i].nr, a);
		}
	}
	uint64_t none[6] = { 0 };
	ok(f && bad == 0,
	   "chmod, fchmod, creat, mknod, fchmodat, open, mknodat, openat, fchmodat2: %zu "
	   "wrong answers for modes with and without setid bits",
	   bad);
	ok(f && !sc_filter_allows(f, SYS_openat2, none) && sc_filter_allows(f, SYS_read, none),
	   "openat2 refused, read still allowed");
	sc_filter_free(f);
	sc_config_free(&cfg);
}

/* The plan on its own: what lands in the ranges and what libseccomp keeps. */
static void test_plan(void)
{
	struct sc_rule rules[] = {
		RULE(allow_names, SCMP_ACT_ALLOW),
		RULE_ARGS(ioctl_names, SCMP_ACT_ALLOW, tiocsti),
		RULE(ioctl_names, SCMP_ACT_ALLOW),
	};
	struct sc_config cfg = { .default_action = SCMP_ACT_ERRNO(1),
				 .rules = rules,
				 .n_rules = ARRAY_SIZE(rules) };
	uint32_t native = seccomp_arch_native();
	struct sc_ranges rg;

	sc_ranges_plan(&cfg, &native, 1, &rg);
	int rd = seccomp_syscall_resolve_name("read"), io = seccomp_syscall_resolve_name("ioctl");
	ok(rg.action == SCMP_ACT_ALLOW && rg.n_groups == 1, "one group, action ALLOW");
	ok(sc_ranges_has(&rg, native, rd), "read is in the ranges");
	ok(!sc_ranges_has(&rg, native, io), "ioctl (also in an argument rule) is not");
	ok(!sc_ranges_has(&rg, native, -1), "a negative number never is");
	sc_ranges_free(&rg);

	cfg.default_action = SCMP_ACT_ALLOW; /* nothing but ALLOW rules: nothing to do */
	sc_ranges_plan(&cfg, &native, 1, &rg);
	ok(sc_ranges_emit(&rg, NULL) == 0, "no prefix when only the default");
	sc_ranges_free(&rg);
}

/* What the init asks before it loads a filter ahead of its last steps (rt-child.c). */
static void test_allows(void)
{
	static const char *openat_names[] = { "openat", NULL };
	static struct sc_arg rdonly[] = { { .index = 2, .value = 0, .op = SC_OP_EQ } };
	struct sc_rule deny[] = { RULE(openat_names, SCMP_ACT_ERRNO(1)) };
	struct sc_rule only_rdonly[] = { RULE_ARGS(openat_names, SCMP_ACT_ALLOW, rdonly) };
	struct sc_config cfg = x86_config(deny, 1, SCMP_ACT_ALLOW);
	struct hutch_err err = { 0 };
	struct sc_filter *f = NULL;
	uint64_t wronly[6] = { (uint64_t)AT_FDCWD, 0x1000, O_WRONLY | O_CLOEXEC };
	uint64_t fd[6] = { 7 };

	ok(sc_compile_bpf(&cfg, true, &f, &err) == 0 && !sc_filter_allows(f, SYS_openat, wronly) &&
		   sc_filter_allows(f, SYS_close, fd),
	   "a profile denying openat: openat is not allowed, close is");
	sc_filter_free(f);
	f = NULL;
	cfg = x86_config(only_rdonly, 1, SCMP_ACT_ERRNO(1));
	uint64_t rd[6] = { (uint64_t)AT_FDCWD, 0x1000, 0 };
	ok(sc_compile_bpf(&cfg, true, &f, &err) == 0 && sc_filter_allows(f, SYS_openat, rd) &&
		   !sc_filter_allows(f, SYS_openat, wronly) && !sc_filter_allows(f, SYS_close, fd),
	   "openat allowed read-only: the arguments decide; close is denied");
	sc_filter_free(f);
	f = NULL;
	struct sc_rule logged[] = { RULE(openat_names, SCMP_ACT_LOG) };
	cfg = x86_config(logged, 1, SCMP_ACT_ERRNO(1));
	ok(sc_compile_bpf(&cfg, true, &f, &err) == 0 && sc_filter_allows(f, SYS_openat, wronly) &&
		   !sc_filter_allows(f, SYS_close, fd),
	   "a logged openat is allowed (the kernel runs it)");
	sc_filter_free(f);
}

/* The exec trampoline's exception (sc_filter_allow_fd_exec): for a profile that allows execve
 * only, exactly execveat(fd, path, *, *, AT_EMPTY_PATH) on the native arch gets through. */
static void test_fd_exec(void)
{
	static const char *execve_names[] = { "execve", NULL };
	static const char path[] = "";
	struct sc_rule allow[] = { RULE(execve_names, SCMP_ACT_ALLOW) };
	struct sc_config cfg = x86_config(allow, 1, SCMP_ACT_ERRNO(1));
	struct hutch_err err = { 0 };
	struct sc_filter *f = NULL, *g = NULL;
	uint64_t p = (uint64_t)(uintptr_t)path;
	uint64_t exact[6] = { 9, p, 0x1000, 0x2000, AT_EMPTY_PATH };
	uint64_t other_fd[6] = { 8, p, 0, 0, AT_EMPTY_PATH }, high_fd[6] = { 9 | 1ULL << 32, p };
	uint64_t other_path[6] = { 9, p + 1, 0, 0, AT_EMPTY_PATH };
	uint64_t other_flags[6] = { 9, p, 0, 0, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW };
	high_fd[4] = AT_EMPTY_PATH;

	ok(sc_compile_bpf(&cfg, true, &f, &err) == 0 && !sc_filter_allows(f, SYS_execveat, exact),
	   "an execve-only profile denies execveat");
	ok(sc_filter_allow_fd_exec(f, 9, path, &g, &err) == 0, "the exception is added");
	ok(g && sc_filter_allows(g, SYS_execveat, exact) && sc_filter_allows(g, SYS_execve, exact),
	   "execveat(9, path, AT_EMPTY_PATH) and execve pass");
	ok(g && !sc_filter_allows(g, SYS_execveat, other_fd) &&
		   !sc_filter_allows(g, SYS_execveat, high_fd) &&
		   !sc_filter_allows(g, SYS_execveat, other_path) &&
		   !sc_filter_allows(g, SYS_execveat, other_flags) &&
		   !sc_filter_allows(g, SYS_getpid, exact),
	   "another fd, path pointer or flags, or another syscall, gets the profile's answer");
	if (g) {
		struct seccomp_data d = { .nr = SYS_execveat, .arch = AUDIT_ARCH_I386 };
		uint32_t a = 0, b = 0;
		memcpy(d.args, exact, sizeof(d.args));
		ok(sc_bpf_run(g->insns, g->len, &d, &a) && sc_bpf_run(f->insns, f->len, &d, &b) &&
			   a == b,
		   "another arch gets the profile's answer");
	}
	sc_filter_free(f);
	sc_filter_free(g);
}

/* Answers of a tree for nr, by running it (sc_tree_emit) with each target a distinct "ret". */
static uint32_t tree_answer(const struct sock_filter *p, size_t len, uint32_t nr)
{
	struct seccomp_data d = { .nr = (int)nr };
	uint32_t r = UINT32_MAX;
	return sc_bpf_run(p, len, &d, &r) ? r : UINT32_MAX;
}

/*
 * sc-tree.c: a single number between two segments of one answer is one JEQ, where two JGEs
 * would bound it; the shape must answer every number as the segments do, wherever the
 * dynamic program puts its chains and splits.
 */
static void test_tree_shapes(void)
{
	/* 0-9 A, 10 B, 11-19 A, 20 C, 21-29 A, 30-99 B, 100 A, 101- B (A=1, B=2, C=3) */
	static const uint32_t b[] = { 10, 11, 20, 21, 30, 100, 101 };
	static const uint8_t seg[] = { 1, 2, 1, 3, 1, 2, 1, 2 };
	struct sc_tree t = { b, seg, ARRAY_SIZE(b), false }; /* by compares, not emulation */
	struct sock_filter p[32];
	struct sc_tree_shape shape;
	sc_tree_shape(&t, &shape);
	size_t target[4], at = 1, len = shape.n;

	ok(len == 4, "7 boundaries, 3 of them lone numbers: %zu compares (4: 3 JEQs, 1 JGE)", len);
	p[0] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0);
	for (size_t k = 1; k < 4; k++) {
		target[k] = 1 + len + k - 1;
		p[target[k]] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, (uint32_t)k);
	}
	sc_tree_emit(&shape, target, p, &at);
	sc_tree_shape_free(&shape);
	size_t bad = 0;
	for (uint32_t nr = 0; nr < 200; nr++) {
		size_t k = 0;
		while (k < ARRAY_SIZE(b) && nr >= b[k])
			k++;
		bad += tree_answer(p, 1 + len + 3, nr) != seg[k];
	}
	ok(at == 1 + len && bad == 0, "the tree answers 0-199 as its segments do (%zu differ)",
	   bad);

	/* An argument tree's empty first segment (a boundary at 0) takes no compare. */
	static const uint32_t ab[] = { 0, 0x5412, 0x5413 };
	static const uint8_t aseg[] = { 0, 1, 0, 1 };
	struct sc_tree a = { ab, aseg, ARRAY_SIZE(ab), false };
	sc_tree_shape(&a, &shape);
	ok(shape.n == 1 && shape.v[0].eq, "ioctl's TIOCSTI alone: one JEQ (%zu)", shape.n);
	sc_tree_shape_free(&shape);
}

/* The answer of segments (b, seg, n) for nr, as the tree must give it. */
static uint8_t seg_answer(const uint32_t *b, const uint8_t *seg, size_t n, uint32_t nr)
{
	size_t k = 0;
	while (k < n && nr >= b[k])
		k++;
	return seg[k];
}

/*
 * Random segments (runs and lone numbers, up to five answers, a boundary at 0 now and then,
 * as argument trees have), each shaped, emitted and run at every boundary and its
 * neighbours: any chain or split the dynamic program picks must answer as the segments do.
 */
static void test_random_trees(void)
{
	uint32_t b[120];
	uint8_t seg[121];
	struct sock_filter p[1 + 120 + 5];
	size_t bad = 0, checked = 0, trees = 120;

	srandom(7);
	for (size_t tr = 0; tr < trees; tr++) {
		size_t n = 1 + (size_t)random() % 119;
		bool zero = random() % 4 == 0; /* an argument tree's first bound at 0 */
		uint32_t at = 0;
		for (size_t k = 0; k < n; k++) {
			uint32_t step = random() % 3 ? 1 + (uint32_t)(random() % 3)
						     : 1 + (uint32_t)(random() % 5000);
			at += k == 0 && zero ? 0 : step;
			b[k] = at;
		}
		for (size_t k = 0; k <= n; k++)
			seg[k] = (uint8_t)(random() % 3 ? (long)(k % 2) : random() % 5);
		struct sc_tree t = { b, seg, n, tr % 2 == 0 };
		struct sc_tree_shape shape;
		sc_tree_shape(&t, &shape);
		size_t target[5], pos = 1;
		p[0] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0);
		for (size_t a = 0; a < 5; a++) {
			target[a] = 1 + shape.n + a;
			p[target[a]] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, (uint32_t)a);
		}
		sc_tree_emit(&shape, target, p, &pos);
		bad += pos != 1 + shape.n || shape.n > n;
		for (size_t k = 0; k < n; k++)
			for (int d = -1; d <= 1; d++) {
				uint32_t nr = b[k] + (uint32_t)d;
				checked++;
				bad += tree_answer(p, 1 + shape.n + 5, nr) !=
				       seg_answer(b, seg, n, nr);
			}
		sc_tree_shape_free(&shape);
	}
	ok(bad == 0, "%zu random trees: %zu numbers at their boundaries, %zu wrong", trees, checked,
	   bad);
}

/* The i386 multiplexer guard (sc-mux.c): what an i386 call decides for socketcall(call). */
static uint32_t socketcall_decides(const struct sc_filter *f, uint32_t call, uint32_t family)
{
	static uint32_t block[3];
	struct seccomp_data d = { .nr = 102, .arch = AUDIT_ARCH_I386 };
	block[0] = family;
	d.args[0] = call, d.args[1] = (uint64_t)(uintptr_t)block;
	uint32_t ret = 0;
	return sc_bpf_run(f->insns, f->len, &d, &ret) ? ret : 0xdead;
}

static void test_mux_guard(void)
{
	static const char *sock[] = { "socket", NULL }, *bind_[] = { "bind", NULL };
	struct sc_rule rules[] = { RULE_ARGS(sock, SCMP_ACT_ALLOW, af_unix),
				   RULE(bind_, SCMP_ACT_ALLOW) };
	struct sc_config cfg = x86_config(rules, ARRAY_SIZE(rules), SCMP_ACT_ERRNO(1));
	struct sc_filter *f = NULL;
	struct hutch_err err = { 0 };
#if !defined(__x86_64__)
	skip(4, "x86 only");
	return;
#endif
	ok(sc_compile_bpf(&cfg, true, &f, &err) == 0, "mux guard: compiles (%s)", err.msg);
	/* libseccomp would allow socketcall(SYS_SOCKET) of any family here */
	ok(socketcall_decides(f, 1, 1) == SCMP_ACT_ERRNO(1) &&
		   socketcall_decides(f, 1, 40) == SCMP_ACT_ERRNO(1),
	   "mux guard: socketcall(SYS_SOCKET) takes the default: its family can't be read");
	ok(socketcall_decides(f, 2, 0) == SCMP_ACT_ALLOW,
	   "mux guard: an argument-free rule's call (SYS_BIND) is allowed through socketcall");
	sc_filter_free(f);
	/* A deny list: "socket but AF_INET: EPERM" becomes EPERM for every socketcall socket */
	rules[0].action = SCMP_ACT_ERRNO(7);
	rules[0].args = af_inet;
	cfg.default_action = SCMP_ACT_ALLOW;
	f = NULL;
	ok(sc_compile_bpf(&cfg, true, &f, &err) == 0 &&
		   socketcall_decides(f, 1, 1) == SCMP_ACT_ERRNO(7),
	   "mux guard: with an allowing default, the rule's stricter action wins");
	sc_filter_free(f);
}

int main(void)
{
	test_tree_shapes();
	test_random_trees();
	test_plan();
	test_corners();
	test_multiplexed();
	test_arg_trees();
	test_arg_trees_demoted();
	test_default_profile();
	test_no_setid();
	test_allows();
	test_fd_exec();
	test_mux_guard();
	return tap_done();
}
