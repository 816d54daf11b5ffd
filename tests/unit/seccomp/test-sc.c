// SPDX-License-Identifier: Apache-2.0
/*
 * seccomp/ unit tests: the name tables, the OCI JSON parser's errors, compiling configs
 * (runc's rules for unknown names and repeated argument indexes, the ENOSYS prologue), the
 * default profile, and real loads in forked children under no_new_privs, which needs no
 * root: every action, notify with a listener, TIOCSTI. Children report the first failed
 * check as their exit status. The compiled-filter cache has test-sc-cache.c.
 */
#include "sc-internal.h"
#include "tap.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <stdint.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>

static char tmpdir[] = "/tmp/test-sc.XXXXXX";

static void test_names(void)
{
	struct hutch_err err = { 0 };
	uint32_t a = 0;
	enum sc_op op = 0;
	uint32_t tok = 0;

	ok(sc_action_from_name("SCMP_ACT_ALLOW", -1, &a, &err) == 0 && a == SCMP_ACT_ALLOW,
	   "SCMP_ACT_ALLOW");
	ok(sc_action_from_name("SCMP_ACT_KILL", -1, &a, &err) == 0 && a == SCMP_ACT_KILL_THREAD,
	   "SCMP_ACT_KILL is KILL_THREAD");
	ok(sc_action_from_name("SCMP_ACT_KILL_PROCESS", -1, &a, &err) == 0 &&
		   a == SCMP_ACT_KILL_PROCESS,
	   "SCMP_ACT_KILL_PROCESS");
	ok(sc_action_from_name("SCMP_ACT_KILL_THREAD", -1, &a, &err) == 0 &&
		   a == SCMP_ACT_KILL_THREAD,
	   "SCMP_ACT_KILL_THREAD");
	ok(sc_action_from_name("SCMP_ACT_TRAP", -1, &a, &err) == 0 && a == SCMP_ACT_TRAP,
	   "SCMP_ACT_TRAP");
	ok(sc_action_from_name("SCMP_ACT_LOG", -1, &a, &err) == 0 && a == SCMP_ACT_LOG,
	   "SCMP_ACT_LOG");
	ok(sc_action_from_name("SCMP_ACT_ERRNO", -1, &a, &err) == 0 && a == SCMP_ACT_ERRNO(EPERM),
	   "SCMP_ACT_ERRNO defaults to EPERM");
	ok(sc_action_from_name("SCMP_ACT_ERRNO", 42, &a, &err) == 0 && a == SCMP_ACT_ERRNO(42),
	   "SCMP_ACT_ERRNO with errnoRet 42");
	ok(sc_action_from_name("SCMP_ACT_ERRNO", 0, &a, &err) == 0 && a == SCMP_ACT_ERRNO(0),
	   "SCMP_ACT_ERRNO with errnoRet 0");
	ok(sc_action_from_name("SCMP_ACT_TRACE", 7, &a, &err) == 0 && a == SCMP_ACT_TRACE(7),
	   "SCMP_ACT_TRACE with errnoRet 7");
	ok(sc_action_from_name("SCMP_ACT_ERRNO", 70000, &a, &err) == -ERANGE,
	   "errnoRet above 65535 rejected");
	ok(sc_action_from_name("SCMP_ACT_ALLOW", 1, &a, &err) == -EINVAL,
	   "errnoRet with SCMP_ACT_ALLOW rejected");
	ok(sc_action_from_name("SCMP_ACT_NOTIFY", -1, &a, &err) == 0 && a == SCMP_ACT_NOTIFY,
	   "SCMP_ACT_NOTIFY");
	int64_t e = 0;
	ok(strcmp(sc_action_name(SCMP_ACT_ERRNO(42), &e), "SCMP_ACT_ERRNO") == 0 && e == 42 &&
		   strcmp(sc_action_name(SCMP_ACT_NOTIFY, &e), "SCMP_ACT_NOTIFY") == 0 && e == -1 &&
		   strcmp(sc_action_name(SCMP_ACT_TRACE(3), &e), "SCMP_ACT_TRACE") == 0 && e == 3,
	   "action values back to names");
	ok(sc_cap_from_name("CAP_SYS_ADMIN") == 21 && sc_cap_from_name("CAP_BPF") == 39 &&
		   sc_cap_from_name("CAP_FOO") == -EINVAL,
	   "capability names");
	ok(sc_action_from_name("SCMP_ACT_FOO", -1, &a, &err) == -EINVAL, "unknown action");
	is_str(err.msg, "unknown action SCMP_ACT_FOO", "unknown action message");

	static const char *const opn[] = { "SCMP_CMP_NE",	"SCMP_CMP_LT", "SCMP_CMP_LE",
					   "SCMP_CMP_EQ",	"SCMP_CMP_GE", "SCMP_CMP_GT",
					   "SCMP_CMP_MASKED_EQ" };
	bool all = true;
	for (size_t i = 0; i < ARRAY_SIZE(opn); i++)
		all = all && sc_op_from_name(opn[i], &op) == 0 && op == (enum sc_op)(SC_OP_NE + i);
	ok(all, "all seven operators map in order");
	ok(sc_op_from_name("SCMP_CMP_XX", &op) == -EINVAL, "unknown operator rejected");

	ok(sc_arch_known("SCMP_ARCH_X86_64") && sc_arch_known("SCMP_ARCH_AARCH64") &&
		   sc_arch_known("SCMP_ARCH_RISCV64") && sc_arch_known("SCMP_ARCH_MIPSEL64N32") &&
		   sc_arch_known("SCMP_ARCH_PPC64LE") && sc_arch_known("SCMP_ARCH_S390X"),
	   "OCI architectures known");
	ok(!sc_arch_known("SCMP_ARCH_VAX") && !sc_arch_known("x86_64"), "unknown arch rejected");
	ok(sc_arch_token("SCMP_ARCH_X86_64", &tok) == 0 && tok == SCMP_ARCH_X86_64 &&
		   sc_arch_token("SCMP_ARCH_X32", &tok) == 0 && tok == SCMP_ARCH_X32,
	   "arch tokens");
}

/* Config builders: the tests own these arrays, so no sc_config_free. */
#define RULE(names_, action_)                                                                      \
	{                                                                                          \
		.names = (char **)(names_), .n_names = ARRAY_SIZE(names_) - 1, .action = (action_) \
	}
#define RULE_ARGS(names_, action_, args_)                                                          \
	{                                                                                          \
		.names = (char **)(names_), .n_names = ARRAY_SIZE(names_) - 1,                     \
		.action = (action_), .args = (args_), .n_args = ARRAY_SIZE(args_)                  \
	}

static const char *getppid_names[] = { "getppid", NULL };
static const char *unknown_names[] = { "getppid", "no_such_syscall", NULL };
static const char *mkdirat_names[] = { "mkdirat", NULL };
static const char *mkdir_names[] = { "mkdir", NULL };
static const char *getpid_names[] = { "getpid", NULL };
static struct sc_arg mkdirat_args[] = { { .index = 2, .value = 0700, .op = SC_OP_EQ },
					{ .index = 2, .value = 0711, .op = SC_OP_EQ } };
static struct sc_arg mkdir_args[] = { { .index = 1, .value = 0700, .op = SC_OP_EQ } };
/* Two different indexes: AND. Denies mkdirat(AT_FDCWD, ..., 0722) only. */
static struct sc_arg mkdirat_and_args[] = {
	{ .index = 0, .value = (uint64_t)(int64_t)AT_FDCWD, .op = SC_OP_EQ },
	{ .index = 2, .value = 0777, .value_two = 0722, .op = SC_OP_MASKED_EQ },
};

static struct sc_rule small_rules[] = {
	RULE(getppid_names, SCMP_ACT_ERRNO(42)),
	RULE_ARGS(mkdirat_names, SCMP_ACT_ERRNO(EPERM), mkdirat_args),
	RULE_ARGS(mkdirat_names, SCMP_ACT_ERRNO(EACCES), mkdirat_and_args),
	RULE_ARGS(mkdir_names, SCMP_ACT_ERRNO(EPERM), mkdir_args),
	RULE(getpid_names, SCMP_ACT_ALLOW), /* = default: skipped, not an error */
};
static const char *x86_archs[] = { "SCMP_ARCH_X86_64", "SCMP_ARCH_X86", NULL };

static struct sc_config small_config(void)
{
	struct sc_config cfg = { .default_action = SCMP_ACT_ALLOW,
				 .rules = small_rules,
				 .n_rules = ARRAY_SIZE(small_rules) };
#if defined(__x86_64__)
	cfg.archs = (char **)x86_archs;
	cfg.n_archs = 2;
#endif
	return cfg;
}

static void test_compile(void)
{
	struct hutch_err err = { 0 };
	struct sc_filter *f = NULL;
	struct sc_config cfg = small_config();

	int r = sc_compile(&cfg, &f, &err);
	ok(r == 0 && sc_filter_len(f) > 0, "small config compiles: %zu instructions (%s)",
	   sc_filter_len(f), r < 0 ? err.msg : "ok");
	sc_filter_free(f);
	f = NULL;

	cfg.flag_log = cfg.flag_spec_allow = cfg.flag_tsync = true;
	r = sc_compile(&cfg, &f, &err);
	ok(r == 0, "compiles with LOG, SPEC_ALLOW and TSYNC flags (%s)", r < 0 ? err.msg : "ok");
	sc_filter_free(f);
	f = NULL;

	static const char *bad_arch[] = { "SCMP_ARCH_VAX", NULL };
	cfg = small_config();
	cfg.archs = (char **)bad_arch;
	cfg.n_archs = 1;
	r = sc_compile(&cfg, &f, &err);
	ok(r == -EINVAL && !f, "unknown arch fails: %s", err.msg);

	static struct sc_arg bad_idx[] = { { .index = 6, .value = 1, .op = SC_OP_EQ } };
	struct sc_rule bad_rule = RULE_ARGS(getppid_names, SCMP_ACT_ERRNO(1), bad_idx);
	cfg = small_config();
	cfg.rules = &bad_rule;
	cfg.n_rules = 1;
	r = sc_compile(&cfg, &f, &err);
	ok(r == -EINVAL && strstr(err.msg, "syscalls[0]"), "argument index 6 fails: %s", err.msg);

	/* runc skips names libseccomp does not know; only safe when that opens nothing. */
	struct sc_rule unknown = RULE(unknown_names, SCMP_ACT_ERRNO(1));
	cfg = small_config();
	cfg.rules = &unknown;
	cfg.n_rules = 1;
	r = sc_compile(&cfg, &f, &err);
	ok(r == -EINVAL && strstr(err.msg, "seccomp: syscalls[0].names[1]: unknown syscall"),
	   "unknown name denied under an allowing default fails: %s", err.msg);
	cfg.default_action = SCMP_ACT_KILL_PROCESS;
	unknown.action = SCMP_ACT_ALLOW;
	r = sc_compile(&cfg, &f, &err);
	ok(r == 0, "unknown name allowed under a denying default is skipped");
	sc_filter_free(f);
}

/* Runs fn in a child with no_new_privs and the filter loaded; returns its exit status. */
static int run_filtered(const struct sc_filter *f, int (*fn)(void))
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		struct hutch_err err = { 0 };
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
			_exit(100);
		if (sc_load(f, &err) < 0)
			_exit(101);
		_exit(fn());
	}
	int status = 0;
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 200 + WTERMSIG(status);
}

static int expect_fail(long r, int e)
{
	return r == -1 && errno == e;
}

static int child_small(void)
{
	char p[64];

	/* glibc's getppid() cannot fail, so it would return -42 without setting errno. */
	if (!expect_fail(syscall(SYS_getppid), 42))
		return 1;
	if (getpid() <= 0)
		return 2;
	snprintf(p, sizeof(p), "%s/a", tmpdir);
	if (!expect_fail(syscall(SYS_mkdirat, AT_FDCWD, p, 0700), EPERM))
		return 3;
	if (!expect_fail(syscall(SYS_mkdirat, AT_FDCWD, p, 0711), EPERM))
		return 4; /* same index twice: OR */
	if (syscall(SYS_mkdirat, AT_FDCWD, p, 0755) != 0)
		return 5;
	snprintf(p, sizeof(p), "%s/b", tmpdir);
	/* (long): seccomp compares all 64 bits, and a variadic int is not sign-extended. */
	if (!expect_fail(syscall(SYS_mkdirat, (long)AT_FDCWD, p, 0722), EACCES))
		return 6; /* different indexes: AND, both hold */
	int dfd = open(tmpdir, O_RDONLY | O_DIRECTORY);
	if (dfd < 0 || syscall(SYS_mkdirat, dfd, "b", 0722) != 0)
		return 7; /* AND: only one holds */
#ifdef SYS_mkdir
	snprintf(p, sizeof(p), "%s/c", tmpdir);
	if (!expect_fail(syscall(SYS_mkdir, p, 0700), EPERM))
		return 8;
	if (syscall(SYS_mkdir, p, 0755) != 0)
		return 9;
#endif
	return 0;
}

static void test_load_small(void)
{
	struct hutch_err err = { 0 };
	struct sc_filter *f = NULL;
	struct sc_config cfg = small_config();

	/* ok() evaluates its condition more than once: keep side effects out of it. */
	int r = sc_compile(&cfg, &f, &err);
	ok(r == 0, "small config compiles for loading");
	int st = r == 0 ? run_filtered(f, child_small) : -1;
	ok(st == 0, "small filter enforced in child (status %d)", st);

	/* Without no_new_privs and without CAP_SYS_ADMIN the kernel refuses. */
	if (geteuid() != 0) {
		r = sc_load(f, &err);
		ok(r == -EACCES && strstr(err.msg, "load seccomp filter: "), "EACCES: %s", err.msg);
	} else {
		ok(1, "# SKIP EACCES check needs a non-root user");
	}
	sc_filter_free(f);
}

static int child_default(void)
{
	if (!expect_fail(unshare(CLONE_NEWNS), EPERM))
		return 1;
	if (!expect_fail(mount("none", tmpdir, "tmpfs", 0, NULL), EPERM))
		return 2;
	if (getpid() <= 0)
		return 3;
	pid_t pid = fork(); /* glibc fork is clone(SIGCHLD|...) without namespace flags */
	if (pid == 0)
		_exit(0);
	int status = -1;
	if (pid < 0 || waitpid(pid, &status, 0) != pid || status != 0)
		return 4;
	struct clone_args ca = { .exit_signal = SIGCHLD };
	long r = syscall(SYS_clone3, &ca, sizeof(ca));
	if (r == 0)
		_exit(0);
	if (!expect_fail(r, ENOSYS))
		return 5;
	r = syscall(SYS_clone, CLONE_NEWNS | SIGCHLD, 0, 0, 0, 0);
	if (r == 0)
		_exit(0);
	if (!expect_fail(r, EPERM))
		return 6;
	if (personality(0xffffffff) < 0 || !expect_fail(personality(PER_BSD), EPERM))
		return 7;
	if (!expect_fail(socket(40 /* AF_VSOCK */, SOCK_STREAM, 0), EPERM))
		return 8;
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	if (s < 0)
		return 9;
	close(s);
	if (!expect_fail(syscall(SYS_ptrace, 0, 0, 0, 0), EPERM) ||
	    !expect_fail(syscall(SYS_bpf, 0, 0, 0), EPERM) ||
	    !expect_fail(syscall(SYS_setns, -1, 0), EPERM))
		return 10;
	/* A real dynamically linked program and a shell pipeline must run unharmed. */
	pid = fork();
	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", "ls / | cat >/dev/null && id >/dev/null",
		      (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || status != 0)
		return 11;
	return 0;
}

static void test_default(void)
{
	struct hutch_err err = { 0 };
	struct sc_config cfg = { 0 };
	struct sc_filter *f = NULL;
	struct timespec t0, t1;

	int r = sc_default_config(0, 0, &cfg, &err);
	ok(r == 0 && cfg.n_rules > 0, "default profile builds");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	r = sc_compile(&cfg, &f, &err);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ok(r == 0, "default profile compiles (%s)", r < 0 ? err.msg : "ok");
	printf("# default profile: %zu instructions, sc_compile %.2f ms\n", sc_filter_len(f),
	       (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6);
	if (r == 0) {
		int st = run_filtered(f, child_default);
		ok(st == 0, "default profile enforced in child (status %d)", st);
	}
	sc_filter_free(f);
	sc_config_free(&cfg);
	sc_config_free(&cfg); /* idempotent after the first */
	ok(cfg.rules == NULL && cfg.n_rules == 0, "sc_config_free clears the config");
}

/* ---- the OCI JSON parser ---- */

/* Parses text as linux.seccomp; returns the error message, or "" when it parsed. */
static const char *parse_err(const char *text)
{
	static struct hutch_err err;
	struct sc_config cfg = { 0 };
	memset(&err, 0, sizeof(err));
	int r = sc_config_parse(text, "linux.seccomp", &cfg, &err);
	sc_config_free(&cfg);
	return r < 0 ? err.msg : "";
}

#define ALLOW_DEFAULT "{\"defaultAction\": \"SCMP_ACT_ALLOW\", "
#define DENY_DEFAULT "{\"defaultAction\": \"SCMP_ACT_ERRNO\", "

static void test_json_errors(void)
{
	static const struct {
		const char *json, *want, *what;
	} cases[] = {
		{ ALLOW_DEFAULT "\"architectures\": [\"SCMP_ARCH_X86_64\", \"SCMP_ARCH_VAX\"]}",
		  "linux.seccomp.architectures[1]: unknown architecture SCMP_ARCH_VAX",
		  "bad arch" },
		{ "{\"defaultAction\": \"SCMP_ACT_NOPE\"}",
		  "linux.seccomp.defaultAction: unknown action SCMP_ACT_NOPE", "bad default" },
		{ ALLOW_DEFAULT "\"syscalls\": [{\"names\": [\"getpid\"], \"action\": "
				"\"SCMP_ACT_ERRNO\"}, {\"names\": [\"getppid\"], \"action\": "
				"\"SCMP_ACT_FOO\"}]}",
		  "linux.seccomp.syscalls[1].action: unknown action SCMP_ACT_FOO", "bad action" },
		{ ALLOW_DEFAULT
		  "\"syscalls\": [{\"names\": [\"getpid\"], \"action\": "
		  "\"SCMP_ACT_ERRNO\", \"args\": [{\"index\": 0, \"value\": 1, \"op\": "
		  "\"SCMP_CMP_XX\"}]}]}",
		  "linux.seccomp.syscalls[0].args[0].op: unknown operator SCMP_CMP_XX", "bad op" },
		{ ALLOW_DEFAULT
		  "\"syscalls\": [{\"names\": [\"getpid\"], \"action\": "
		  "\"SCMP_ACT_ERRNO\", \"args\": [{\"index\": 6, \"value\": 1, \"op\": "
		  "\"SCMP_CMP_EQ\"}]}]}",
		  "linux.seccomp.syscalls[0].args[0].index: 6 out of range 0..5", "arg index 6" },
		{ ALLOW_DEFAULT "\"syscalls\": [{\"names\": [\"mkdir\"], \"action\": "
				"\"SCMP_ACT_NOTIFY\"}]}",
		  "linux.seccomp.syscalls[0]: SCMP_ACT_NOTIFY needs listenerPath (nothing would "
		  "answer the notifications)",
		  "NOTIFY without listenerPath" },
		{ ALLOW_DEFAULT "\"listenerPath\": \"/run/l.sock\", \"syscalls\": [{\"names\": "
				"[\"mkdir\"], \"action\": \"SCMP_ACT_ALLOW\"}, {\"names\": "
				"[\"read\", \"write\"], \"action\": \"SCMP_ACT_NOTIFY\"}]}",
		  "linux.seccomp.syscalls[1]: SCMP_ACT_NOTIFY on write is not supported (the "
		  "runtime's own write after loading the filter would deadlock)",
		  "NOTIFY on write" },
		{ ALLOW_DEFAULT "\"syscalls\": [{\"names\": [\"getpid\", \"no_such_call\"], "
				"\"action\": \"SCMP_ACT_ERRNO\"}]}",
		  "linux.seccomp.syscalls[0].names[1]: unknown syscall no_such_call in a rule that "
		  "denies while the default action allows (skipping it would leave the syscall "
		  "open)",
		  "unknown name in a deny rule under an allowing default" },
		{ DENY_DEFAULT "\"syscalls\": [{\"names\": [\"getpid\", \"no_such_call\"], "
			       "\"action\": \"SCMP_ACT_ALLOW\"}]}",
		  "", "unknown name in an allow rule: skipped" },
		{ DENY_DEFAULT "\"syscalls\": [{\"names\": [\"no_such_call\"], \"action\": "
			       "\"SCMP_ACT_KILL\"}]}",
		  "", "unknown name in a deny rule under a denying default: skipped" },
		{ ALLOW_DEFAULT "\"syscalls\": [{\"names\": [\"socketcall\"], \"action\": "
				"\"SCMP_ACT_ERRNO\"}]}",
		  "", "a name of another arch is known" },
		{ ALLOW_DEFAULT "\"flags\": [\"SECCOMP_FILTER_FLAG_NOPE\"]}",
		  "linux.seccomp.flags[0]: SECCOMP_FILTER_FLAG_NOPE: not supported", "bad flag" },
		{ ALLOW_DEFAULT "\"flags\": [\"SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV\", "
				"\"SECCOMP_FILTER_FLAG_LOG\"]}",
		  "", "WAIT_KILLABLE_RECV and LOG flags" },
		{ ALLOW_DEFAULT "\"syscalls\": [{\"names\": [], \"action\": \"SCMP_ACT_ERRNO\"}]}",
		  "linux.seccomp.syscalls[0].names: must not be empty", "empty names" },
		{ ALLOW_DEFAULT "\"syscalls\": [{\"names\": [\"getpid\"], \"action\": "
				"\"SCMP_ACT_KILL\", \"errnoRet\": 3}]}",
		  "linux.seccomp.syscalls[0].action: errnoRet is only valid with SCMP_ACT_ERRNO "
		  "and SCMP_ACT_TRACE, not SCMP_ACT_KILL",
		  "errnoRet with KILL" },
		{ "{\"defaultAction\": \"SCMP_ACT_NOTIFY\", \"listenerPath\": \"/x\"}",
		  "linux.seccomp.defaultAction: SCMP_ACT_NOTIFY is not supported (the runtime's "
		  "own "
		  "syscalls after loading the filter would wait on the listener)",
		  "NOTIFY as default" },
		{ "{\"defaultAction\": ", "linux.seccomp: invalid JSON: parse error: premature EOF",
		  "broken JSON" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const char *got = parse_err(cases[i].json);
		ok(strcmp(got, cases[i].want) == 0, "%s: \"%s\"", cases[i].what, got);
	}
}

static void test_json_roundtrip(void)
{
	struct hutch_err err = { 0 };
	struct sc_config a = { 0 }, b = { 0 };
	uint8_t ha[32], hb[32];
	const char *text = DENY_DEFAULT
		"\"defaultErrnoRet\": 38, \"architectures\": [\"SCMP_ARCH_X86\"], \"flags\": "
		"[\"SECCOMP_FILTER_FLAG_LOG\"], \"listenerPath\": \"/run/l\", "
		"\"listenerMetadata\": "
		"\"m=1\", \"syscalls\": [{\"names\": [\"mkdir\"], \"action\": "
		"\"SCMP_ACT_NOTIFY\"}, "
		"{\"names\": [\"ioctl\"], \"action\": \"SCMP_ACT_ALLOW\", \"args\": [{\"index\": "
		"1, "
		"\"value\": 18446744073709551615, \"valueTwo\": 5, \"op\": "
		"\"SCMP_CMP_MASKED_EQ\"}]},"
		"{\"names\": [\"read\"], \"action\": \"SCMP_ACT_TRACE\", \"errnoRet\": 0}]}";

	int r = sc_config_parse(text, "x", &a, &err);
	ok(r == 0 && a.default_action == SCMP_ACT_ERRNO(38) && a.n_rules == 3 &&
		   a.rules[1].args[0].value == UINT64_MAX && a.rules[1].args[0].value_two == 5 &&
		   a.rules[2].action == SCMP_ACT_TRACE(0) && a.flag_log &&
		   strcmp(a.listener_metadata, "m=1") == 0,
	   "full profile parses (%s)", r < 0 ? err.msg : "ok");
	_cleanup_free_ char *json = sc_config_to_json(&a, false);
	r = sc_config_parse(json, "x", &b, &err);
	sc_config_hash(&a, ha);
	sc_config_hash(&b, hb);
	ok(r == 0 && memcmp(ha, hb, 32) == 0, "to_json and back gives the same config (%s)",
	   r < 0 ? err.msg : json);
	sc_config_free(&a);
	sc_config_free(&b);
}

/* ---- canonical hash ---- */

static void test_hash(void)
{
	struct sc_config cfg = small_config();
	uint8_t h0[32], h[32];
	struct sc_rule rules[ARRAY_SIZE(small_rules)];
	static const char *swapped_archs[] = { "SCMP_ARCH_X86", "SCMP_ARCH_X86_64", NULL };

	sc_config_hash(&cfg, h0);
	sc_config_hash(&cfg, h);
	ok(memcmp(h0, h, 32) == 0, "hash is stable");
	cfg.archs = (char **)swapped_archs;
	cfg.n_archs = 2;
	sc_config_hash(&cfg, h);
	ok(memcmp(h0, h, 32) == 0, "architecture order does not matter");

	cfg = small_config();
	memcpy(rules, small_rules, sizeof(rules));
	cfg.rules = rules;
	struct sc_rule t = rules[0];
	rules[0] = rules[1];
	rules[1] = t;
	sc_config_hash(&cfg, h);
	ok(memcmp(h0, h, 32) != 0, "rule order matters");
	memcpy(rules, small_rules, sizeof(rules));
	rules[0].action = SCMP_ACT_ERRNO(43);
	sc_config_hash(&cfg, h);
	ok(memcmp(h0, h, 32) != 0, "an errno changes it");
	memcpy(rules, small_rules, sizeof(rules));
	struct sc_arg args[2];
	memcpy(args, mkdirat_args, sizeof(args));
	args[1].value = 0712;
	rules[1].args = args;
	sc_config_hash(&cfg, h);
	ok(memcmp(h0, h, 32) != 0, "an argument value changes it");
	memcpy(rules, small_rules, sizeof(rules));
	cfg.flag_log = true;
	sc_config_hash(&cfg, h);
	ok(memcmp(h0, h, 32) != 0, "a flag changes it");
	cfg.flag_log = false;
	cfg.default_action = SCMP_ACT_LOG;
	sc_config_hash(&cfg, h);
	ok(memcmp(h0, h, 32) != 0, "the default action changes it");
}

/* ---- the default profile ---- */

static const struct sc_rule *find_rule(const struct sc_config *cfg, const char *name,
				       uint32_t action)
{
	for (size_t i = 0; i < cfg->n_rules; i++)
		for (size_t j = 0; j < cfg->rules[i].n_names; j++)
			if (strcmp(cfg->rules[i].names[j], name) == 0 &&
			    cfg->rules[i].action == action)
				return &cfg->rules[i];
	return NULL;
}

static void test_default_caps(void)
{
	struct hutch_err err = { 0 };
	struct sc_config none = { 0 }, admin = { 0 };
	uint64_t caps = (1ull << 21) | (1ull << 19); /* CAP_SYS_ADMIN, CAP_SYS_PTRACE */

	int r = sc_default_config(0, 0, &none, &err);
	r = r < 0 ? r : sc_default_config(caps, 0, &admin, &err);
	ok(r == 0, "default profile with and without CAP_SYS_ADMIN (%s)", r < 0 ? err.msg : "ok");
	if (r < 0)
		return;
	ok(!find_rule(&none, "mount", SCMP_ACT_ALLOW) && find_rule(&admin, "mount", SCMP_ACT_ALLOW),
	   "mount allowed only with CAP_SYS_ADMIN");
	ok(find_rule(&none, "clone3", SCMP_ACT_ERRNO(ENOSYS)) &&
		   !find_rule(&admin, "clone3", SCMP_ACT_ERRNO(ENOSYS)),
	   "clone3 -> ENOSYS only without CAP_SYS_ADMIN");
	ok(!find_rule(&none, "ptrace", SCMP_ACT_ALLOW) &&
		   find_rule(&admin, "ptrace", SCMP_ACT_ALLOW),
	   "ptrace allowed only with CAP_SYS_PTRACE");
	static const char *const never[] = { "keyctl",	    "add_key",	       "request_key",
					     "userfaultfd", "io_uring_setup",  "io_uring_enter",
					     "kexec_load",  "kexec_file_load", "init_module" };
	bool absent = true;
	for (size_t i = 0; i < ARRAY_SIZE(never); i++)
		absent = absent && !find_rule(&admin, never[i], SCMP_ACT_ALLOW);
	ok(absent, "keyctl, io_uring, userfaultfd, kexec, modules never allowed");
	const struct sc_rule *ioctl_rule = find_rule(&none, "ioctl", SCMP_ACT_ALLOW);
	ok(ioctl_rule && ioctl_rule->n_args == 1 && ioctl_rule->args[0].op == SC_OP_MASKED_EQ &&
		   (ioctl_rule->args[0].value >> 32) == 0,
	   "ioctl is allowed through 32-bit masked compares");
#if defined(__x86_64__)
	ok(none.n_archs == 3 && strcmp(none.archs[0], "SCMP_ARCH_X86_64") == 0 &&
		   find_rule(&none, "arch_prctl", SCMP_ACT_ALLOW) &&
		   !find_rule(&none, "riscv_flush_icache", SCMP_ACT_ALLOW),
	   "native arch, its sub-arches and arch-only syscalls");
#endif
	_cleanup_free_ char *json = NULL;
	struct sc_config back = { 0 };
	r = sc_default_profile_oci(caps, 0, &json, &err);
	r = r < 0 ? r : sc_config_parse(json, "linux.seccomp", &back, &err);
	ok(r == 0 && !strstr(json, "includes") && !strstr(json, "exceptValues32") &&
		   back.n_rules == admin.n_rules,
	   "sc_default_profile_oci is plain OCI and parses back (%s)", r < 0 ? err.msg : "ok");
	ok(strstr(sc_default_profile_json(), "\"archMap\"") != NULL, "embedded source text");
	sc_config_free(&back);
	sc_config_free(&none);
	sc_config_free(&admin);
}

/* ---- enforcement of the default profile's argument rules and ENOSYS ---- */

static int child_args(void)
{
	/* Allowed requests reach the kernel, which finds no fd: EBADF. */
	if (!expect_fail(syscall(SYS_ioctl, -1, TCGETS), EBADF))
		return 1;
	if (!expect_fail(syscall(SYS_ioctl, -1, 0x100005401ul), EBADF))
		return 2;
	if (!expect_fail(syscall(SYS_ioctl, -1, 0x80005412ul), EBADF))
		return 3; /* bit 31 set: another request for the kernel, not TIOCSTI */
	/* TIOCSTI and TIOCLINUX: refused, also with high bits the kernel would drop. */
	if (!expect_fail(syscall(SYS_ioctl, -1, TIOCSTI), EPERM))
		return 4;
	if (!expect_fail(syscall(SYS_ioctl, -1, 0x100005412ul), EPERM))
		return 5;
	if (!expect_fail(syscall(SYS_ioctl, -1, 0xffffffff00005412ul), EPERM))
		return 6;
	if (!expect_fail(syscall(SYS_ioctl, -1, TIOCLINUX), EPERM))
		return 7;
	/* socket: AF_ALG and AF_VSOCK refused, with or without high bits. */
	if (!expect_fail(syscall(SYS_socket, 38, SOCK_SEQPACKET, 0), EPERM) ||
	    !expect_fail(syscall(SYS_socket, 0x100000028ul, SOCK_STREAM, 0), EPERM))
		return 8;
	long s = syscall(SYS_socket, AF_INET, SOCK_DGRAM, 0);
	if (s < 0)
		return 9;
	close((int)s);
	/* Above the highest number the profile knows: ENOSYS, so libc can fall back. */
	if (!expect_fail(syscall(1000), ENOSYS) || !expect_fail(syscall(0x3fffffff), ENOSYS))
		return 10;
	/* Below it but not allowed: the default action. */
	if (!expect_fail(syscall(SYS_acct, NULL), EPERM))
		return 11;
	return 0;
}

static void test_default_args(void)
{
	struct hutch_err err = { 0 };
	struct sc_config cfg = { 0 };
	struct sc_filter *f = NULL, *g = NULL;

	int r = sc_default_config(0, 0, &cfg, &err);
	r = r < 0 ? r : sc_compile_cached(&cfg, NULL, &f, NULL, &err);
	ok(r == 0, "default profile compiles (%s)", r < 0 ? err.msg : "ok");
	if (r < 0)
		return;
	int st = run_filtered(f, child_args);
	ok(st == 0,
	   "ioctl TIOCSTI/TIOCLINUX and socket AF_ALG/AF_VSOCK refused by 32-bit masks, "
	   "new syscalls ENOSYS (status %d)",
	   st);
	/* A default of ERRNO(ENOSYS) needs no prologue: it is the same program minus it. */
	cfg.default_action = SCMP_ACT_ERRNO(ENOSYS);
	r = sc_compile_cached(&cfg, NULL, &g, NULL, &err);
	ok(r == 0 && sc_filter_len(g) < sc_filter_len(f),
	   "no ENOSYS prologue when the default is ENOSYS (%zu < %zu)", sc_filter_len(g),
	   sc_filter_len(f));
	sc_filter_free(f);
	sc_filter_free(g);
	sc_config_free(&cfg);
}

/* ---- every action, in a child with getppid under it ---- */

static void on_sigsys(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)uc;
	_exit(si->si_code == 1 /* SYS_SECCOMP */ && si->si_syscall == SYS_getppid ? 42 : 43);
}

/* 0 when getppid worked, 100 + errno when it failed; TRAP's handler exits 42. */
static int child_getppid(void)
{
	struct sigaction sa = { .sa_sigaction = on_sigsys, .sa_flags = SA_SIGINFO };
	sigaction(SIGSYS, &sa, NULL);
	long r = syscall(SYS_getppid);
	return r >= 0 ? 0 : 100 + errno;
}

static int child_getppid_nohandler(void)
{
	syscall(SYS_getppid);
	return 0;
}

static void test_actions(void)
{
	static const char *names[] = { "getppid", NULL };
	static const struct {
		uint32_t action;
		int (*fn)(void);
		int status;
		const char *what;
	} cases[] = {
		{ SCMP_ACT_ERRNO(77), child_getppid, 100 + 77, "ERRNO(77) fails with errno 77" },
		{ SCMP_ACT_KILL_PROCESS, child_getppid_nohandler, 200 + SIGSYS,
		  "KILL_PROCESS kills with SIGSYS" },
		{ SCMP_ACT_KILL_THREAD, child_getppid_nohandler, 200 + SIGSYS,
		  "KILL_THREAD kills the (only) thread" },
		{ SCMP_ACT_TRAP, child_getppid, 42, "TRAP raises SIGSYS with SYS_SECCOMP" },
		{ SCMP_ACT_TRACE(5), child_getppid, 100 + ENOSYS,
		  "TRACE without a tracer: ENOSYS" },
		{ SCMP_ACT_LOG, child_getppid, 0, "LOG lets it through" },
		{ SCMP_ACT_ALLOW, child_getppid, 0, "ALLOW" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct hutch_err err = { 0 };
		struct sc_rule rule = RULE(names, cases[i].action);
		struct sc_config cfg = { .default_action = SCMP_ACT_ALLOW,
					 .rules = &rule,
					 .n_rules = 1 };
		struct sc_filter *f = NULL;
		int r = sc_compile_cached(&cfg, NULL, &f, NULL, &err);
		int st = r < 0 ? -1 : run_filtered(f, cases[i].fn);
		ok(st == cases[i].status, "%s (status %d)", cases[i].what, st);
		sc_filter_free(f);
	}
	/* A default that kills, with the ENOSYS prologue in front of it. */
	static const char *basics[] = { "exit_group", "exit", "getpid", NULL };
	struct hutch_err err = { 0 };
	struct sc_rule rule = RULE(basics, SCMP_ACT_ALLOW);
	struct sc_config cfg = { .default_action = SCMP_ACT_KILL_PROCESS,
				 .rules = &rule,
				 .n_rules = 1 };
	struct sc_filter *f = NULL;
	int r = sc_compile_cached(&cfg, NULL, &f, NULL, &err);
	int st = r < 0 ? -1 : run_filtered(f, child_getppid_nohandler);
	ok(st == 200 + SIGSYS, "default KILL_PROCESS kills on getppid (status %d)", st);
	sc_filter_free(f);
}

/* ---- NOTIFY: the child sends its notify fd to a listener socket; we answer ---- */

static char listener_path[96];

static int child_notify(const struct sc_filter *f)
{
	struct hutch_err err = { 0 };
	char p[96];
	int nfd = -1;

	if (sc_load(f, &err) != -EINVAL || !strstr(err.msg, "sc_load_listener"))
		return 1; /* a filter with NOTIFY rules needs the listener variant */
	if (sc_load_listener(f, &nfd, &err) < 0 || nfd < 0)
		return 2;
	if (sc_send_to_listener(listener_path, nfd, 0,
				"{\"ociVersion\": \"1.2.0\", \"id\": "
				"\"c1\", \"status\": \"creating\", \"pid\": 4242, \"bundle\": "
				"\"/b\"}",
				"meta", &err) < 0)
		return 3;
	close(nfd);
	snprintf(p, sizeof(p), "%s/n", tmpdir);
	if (!expect_fail(syscall(SYS_mkdirat, AT_FDCWD, p, 0700), EXDEV))
		return 4; /* the listener's answer */
	if (getpid() <= 0)
		return 5; /* not under NOTIFY */
	return 0;
}

static int recv_fd(int sock, char *buf, size_t len)
{
	union {
		char b[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = buf, .iov_len = len - 1 };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b, .msg_controllen = sizeof(u.b)
	};
	ssize_t n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
	int fd = -1;
	if (n <= 0 || !c || c->cmsg_type != SCM_RIGHTS)
		return -1;
	buf[n] = '\0';
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

/* Answers one notification: mkdirat gets EXDEV. */
static bool answer_one(int nfd)
{
	struct seccomp_notif req = { 0 };
	struct seccomp_notif_resp resp = { 0 };
	if (ioctl(nfd, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0)
		return false;
	resp.id = req.id;
	resp.error = req.data.nr == SYS_mkdirat ? -EXDEV : -EPERM;
	return ioctl(nfd, SECCOMP_IOCTL_NOTIF_SEND, &resp) == 0 && req.data.nr == SYS_mkdirat;
}

static void test_notify(void)
{
	static const char *names[] = { "mkdirat", "mkdir", NULL };
	struct sc_rule rule = RULE(names, SCMP_ACT_NOTIFY);
	struct sc_config cfg = { .default_action = SCMP_ACT_ALLOW,
				 .rules = &rule,
				 .n_rules = 1,
				 .flag_wait_killable_recv = true };
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	struct hutch_err err = { 0 };
	struct sc_filter *f = NULL;
	char msg[4096] = "";

	snprintf(listener_path, sizeof(listener_path), "%s/listener.sock", tmpdir);
	cfg.listener_path = listener_path;
	int r = sc_compile_cached(&cfg, NULL, &f, NULL, &err);
	ok(r == 0 && sc_filter_needs_listener(f),
	   "NOTIFY filter compiles, with "
	   "WAIT_KILLABLE_RECV (%s)",
	   r < 0 ? err.msg : "ok");
	if (r < 0)
		return;
	int ls = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", listener_path);
	if (ls < 0 || bind(ls, (struct sockaddr *)&addr, sizeof(addr)) < 0 || listen(ls, 1) < 0) {
		ok(0, "listener socket: %s", strerror(errno));
		return;
	}
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
			_exit(100);
		_exit(child_notify(f));
	}
	int conn = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
	int nfd = conn < 0 ? -1 : recv_fd(conn, msg, sizeof(msg));
	ok(nfd >= 0 && strstr(msg, "\"fds\":[\"seccompFd\"]") && strstr(msg, "\"pid\":4242") &&
		   strstr(msg, "\"metadata\":\"meta\"") && strstr(msg, "\"state\":{") &&
		   strstr(msg, "\"id\":\"c1\""),
	   "listener gets the fd and the process state: %s", msg);
	ok(nfd >= 0 && answer_one(nfd), "the listener answers the child's mkdirat");
	int status = -1;
	waitpid(pid, &status, 0);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	   "child saw the listener's EXDEV (status %d)", status);
	if (nfd >= 0)
		close(nfd);
	if (conn >= 0)
		close(conn);
	close(ls);
	unlink(listener_path);
	sc_filter_free(f);
}

/* ---- the compiled-filter cache ---- */

int main(void)
{
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	/* Tests that want the cache name their own directory. */
	setenv("HUTCH_SECCOMP_CACHE", "off", 1);
	test_names();
	test_json_errors();
	test_json_roundtrip();
	test_hash();
	test_compile();
	test_load_small();
	test_default();
	test_default_caps();
	test_default_args();
	test_actions();
	test_notify();
	static const char *const made[] = { "a", "b", "c" };
	int dfd = open(tmpdir, O_RDONLY | O_DIRECTORY);
	for (size_t i = 0; dfd >= 0 && i < ARRAY_SIZE(made); i++)
		unlinkat(dfd, made[i], AT_REMOVEDIR);
	if (dfd >= 0)
		close(dfd);
	char cmd[160];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", tmpdir);
	return tap_done();
}
