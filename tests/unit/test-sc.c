// SPDX-License-Identifier: Apache-2.0
/*
 * seccomp/ unit tests: the name tables, compiling configs (including runc's rules for unknown
 * names and repeated argument indexes), and real loads in forked children under
 * no_new_privs, which needs no root. Children report the first failed check as exit status.
 */
#include "tap.h"
#include "sc.h"

#include <fcntl.h>
#include <linux/sched.h>
#include <sched.h>
#include <seccomp.h>
#include <stdint.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
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
	ok(sc_action_from_name("SCMP_ACT_NOTIFY", -1, &a, &err) == -EOPNOTSUPP &&
		   strstr(err.msg, "not supported"),
	   "SCMP_ACT_NOTIFY not supported: %s", err.msg);
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

static const char *getppid_names[] = { "getppid", "no_such_syscall", NULL };
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

	int r = sc_default_config(&cfg, &err);
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

int main(void)
{
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	test_names();
	test_compile();
	test_load_small();
	test_default();
	static const char *const made[] = { "a", "b", "c" };
	int dfd = open(tmpdir, O_RDONLY | O_DIRECTORY);
	for (size_t i = 0; dfd >= 0 && i < ARRAY_SIZE(made); i++)
		unlinkat(dfd, made[i], AT_REMOVEDIR);
	if (dfd >= 0)
		close(dfd);
	rmdir(tmpdir);
	return tap_done();
}
