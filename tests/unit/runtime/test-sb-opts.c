// SPDX-License-Identifier: Apache-2.0
/*
 * `hutch sandbox`'s option values (rt-sandbox-opts.c, rt-sandbox-check.c): sizes, --cpus
 * against the CPUs this process may use, --env-file's lines, hutch's own directories against
 * the workspace and binds (rt-own-dirs.c, in a temp dir), --report and --report-fd resolved
 * as they are read. No root needed.
 */
#include "tap.h"
#include "rt-sandbox.h"
#include "rt-sandbox-plan.h"
#include "img-rootfs.h"
#include "hutch-ids.h"

#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

/* rt_sb_parse_args on the NULL-terminated flags after "sandbox", then "-- true". */
static int sb_args(struct rt_sb_opts *o, struct hutch_err *err, ...)
{
	char *argv[32];
	int argc = 0;
	va_list ap;
	argv[argc++] = "sandbox";
	va_start(ap, err);
	for (char *a; (a = va_arg(ap, char *)) && argc < 29;)
		argv[argc++] = a;
	va_end(ap);
	argv[argc++] = "--";
	argv[argc++] = "true";
	argv[argc] = NULL;
	rt_sb_opts_free(o);
	rt_sb_opts_init(o);
	hutch_err_clear(err);
	return rt_sb_parse_args(o, argc, argv, err);
}

static void test_sizes(void)
{
	static const struct {
		const char *s;
		uint64_t v;
	} good[] = {
		{ "0", 0 },
		{ "4096", 4096 },
		{ "10b", 10 },
		{ "10B", 10 },
		{ "64k", 64 << 10 },
		{ "64K", 64 << 10 },
		{ "64KiB", 64 << 10 },
		{ "64kb", 64 << 10 },
		{ "512m", 512ULL << 20 },
		{ "512M", 512ULL << 20 },
		{ "512MiB", 512ULL << 20 },
		{ "512mib", 512ULL << 20 },
		{ "512MB", 512ULL << 20 },
		{ "1g", 1ULL << 30 },
		{ "1G", 1ULL << 30 },
		{ "1GiB", 1ULL << 30 },
		{ "1.5g", 3ULL << 29 }, /* strtod's reading, kept */
		{ "1t", 1ULL << 40 },
		{ "2TiB", 2ULL << 40 },
	};
	static const char *const bad[] = { "",	   "m",	  "-1",	 "1.5x", "1bb", "1bib", "1mi",
					   "1mbb", "1 m", "nan", "1k2",	 "gib", "x1",	"1iB" };
	static const char *const huge[] = { "9999999t", "1e30", "inf", "18446744073709551616" };
	for (size_t i = 0; i < ARRAY_SIZE(good); i++) {
		uint64_t v = 1;
		ok(rt_sb_parse_size(good[i].s, &v) == 0 && v == good[i].v, "size %s is %llu (%llu)",
		   good[i].s, (unsigned long long)good[i].v, (unsigned long long)v);
	}
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		uint64_t v;
		ok(rt_sb_parse_size(bad[i], &v) == -EINVAL, "size \"%s\" is refused", bad[i]);
	}
	for (size_t i = 0; i < ARRAY_SIZE(huge); i++) {
		uint64_t v;
		ok(rt_sb_parse_size(huge[i], &v) == -ERANGE, "size %s is too large", huge[i]);
	}
}

static void test_size_flags(void)
{
	struct rt_sb_opts o;
	struct hutch_err err = { 0 };
	rt_sb_opts_init(&o);
	ok(sb_args(&o, &err, "--memory", "512MiB", "--tmpfs", "/t:64KiB", NULL) == 0 &&
		   o.memory == 512ULL << 20 && o.n_tmpfs == 2 && o.tmpfs[1].size == 64 << 10,
	   "--memory and --tmpfs take KiB/MiB (%s)", err.msg);
	ok(sb_args(&o, &err, "--memory", "1.5x", NULL) == -EINVAL &&
		   strstr(err.msg, "--memory 1.5x: not a size"),
	   "--memory garbage names the flag and the value: %s", err.msg);
	ok(sb_args(&o, &err, "--memory", "99999999t", NULL) == -ERANGE &&
		   strstr(err.msg, "--memory 99999999t: size too large"),
	   "--memory overflow says so: %s", err.msg);
	ok(sb_args(&o, &err, "--memory", "1m", NULL) == -EINVAL &&
		   strstr(err.msg, "--memory 1m: expected a size of at least 4m (or 0)"),
	   "--memory below 4m keeps its message: %s", err.msg);
	ok(sb_args(&o, &err, "--tmpfs", "/t:m", NULL) == -EINVAL &&
		   strstr(err.msg, "--tmpfs /t:m: invalid size m"),
	   "--tmpfs garbage names the flag and the value: %s", err.msg);
	ok(sb_args(&o, &err, "--tmpfs", "/t:-1", NULL) == -EINVAL &&
		   strstr(err.msg, "--tmpfs /t:-1: invalid size -1"),
	   "--tmpfs refuses a negative size: %s", err.msg);
	rt_sb_opts_free(&o);
}

static void test_cpus(void)
{
	struct rt_sb_opts o;
	struct hutch_err err = { 0 };
	cpu_set_t set;
	CPU_ZERO(&set);
	int n = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 0;
	char all[32], more[32], msg[128];
	snprintf(all, sizeof(all), "%d", n);
	snprintf(more, sizeof(more), "%d.5", n);
	snprintf(msg, sizeof(msg), "--cpus %s: more than the %d CPU%s hutch may run on", more, n,
		 n == 1 ? "" : "s");
	rt_sb_opts_init(&o);
	ok(n > 0 && rt_sb_usable_cpus() == n, "the usable CPUs are the affinity mask's %d", n);
	ok(sb_args(&o, &err, "--cpus", all, NULL) == 0 && o.cpus == n,
	   "--cpus %s, every usable CPU, is taken (%s)", all, err.msg);
	ok(sb_args(&o, &err, "--cpus", more, NULL) == -EINVAL && !strcmp(err.msg, msg),
	   "--cpus above them names the flag, the value and the count: %s", err.msg);
	ok(sb_args(&o, &err, "--cpus", "4096", NULL) == (n >= 4096 ? 0 : -EINVAL),
	   "--cpus 4096 too: %s", err.msg);
	ok(sb_args(&o, &err, "--cpus", "0", NULL) == 0 && o.cpus == 0, "--cpus 0 is no quota");
	ok(sb_args(&o, &err, "--cpus", "lots", NULL) == -EINVAL &&
		   !strcmp(err.msg, "--cpus lots: expected 0.01 to 4096 (or 0)"),
	   "a word keeps its message: %s", err.msg);
	rt_sb_opts_free(&o);
}

static void test_env_lines(void)
{
	static const char *const good[][2] = {
		{ "A=1", "A=1" },
		{ "B=two words ", "B=two words " }, /* unquoted: as it always was */
		{ "C=it's", "C=it's" },
		{ "D=x # not a comment", "D=x # not a comment" },
		{ "E=", "E=" },
		{ "  F=1", "F=1" },
		{ "export G=1", "G=1" },
		{ "export\tH='x'", "H=x" },
		{ "export=1", "export=1" },
		{ "I=\"quoted value\"", "I=quoted value" },
		{ "J=\"a \\\" b \\\\ c \\n d \\$e \\x\"", "J=a \" b \\ c \n d $e \\x" },
		{ "K='single $x \\n \"'", "K=single $x \\n \"" },
		{ "L=\"\"", "L=" },
		{ "M=\"x\"  # a comment", "M=x" },
		{ "N='x'\t", "N=x" },
		{ "O=a=b", "O=a=b" },
		{ "BARE", "BARE" },
		{ "export BARE2 ", "BARE2" },
	};
	static const char *const skipped[] = { "", "   ", "# c", "  # c", "\t" };
	static const char *const bad[][2] = {
		{ "=x", "no variable name" },
		{ "A B=1", "\"A B\" is not a variable name" },
		{ "A B", "\"A B\" is not a variable name" },
		{ "'A'=1", "not a variable name" },
		{ "A=\"open", "unterminated double quote" },
		{ "A='open", "unterminated single quote" },
		{ "A=\"x\\\"", "unterminated double quote" },
		{ "A=\"x\"y", "\"y\" after the closing quote" },
		{ "A='x' y", "\"y\" after the closing quote" },
		{ "export ", "no variable name" },
	};
	struct hutch_err err = { 0 };
	for (size_t i = 0; i < ARRAY_SIZE(good); i++) {
		char *kv = NULL;
		int r = rt_sb_env_line(good[i][0], &kv, &err);
		ok(r == 1 && kv && !strcmp(kv, good[i][1]), "env line [%s] is [%s]: [%s]",
		   good[i][0], good[i][1], kv ? kv : err.msg);
		free(kv);
	}
	for (size_t i = 0; i < ARRAY_SIZE(skipped); i++) {
		char *kv = (char *)"x";
		ok(rt_sb_env_line(skipped[i], &kv, &err) == 0 && !kv, "env line [%s] is skipped",
		   skipped[i]);
	}
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		char *kv = NULL;
		hutch_err_clear(&err);
		ok(rt_sb_env_line(bad[i][0], &kv, &err) == -EINVAL && !kv &&
			   strstr(err.msg, bad[i][1]),
		   "env line [%s] is refused: %s", bad[i][0], err.msg);
	}
}

/* The file as a whole: line numbers count blank lines, CRLF is fine, a bad line names itself. */
static void test_env_file(void)
{
	char path[] = "/tmp/hutch-test-envfile.XXXXXX";
	int fd = mkstemp(path);
	struct rt_sb_opts o;
	struct hutch_err err = { 0 };
	rt_sb_opts_init(&o);
	const char good[] = "A=1\r\n\n# c\nexport B=\"x y\"\nHUTCH_T_BARE\nHUTCH_T_UNSET\nC='z'";
	ok(fd >= 0 && write(fd, good, strlen(good)) == (ssize_t)strlen(good), "env file written");
	setenv("HUTCH_T_BARE", "from-caller", 1);
	unsetenv("HUTCH_T_UNSET");
	ok(sb_args(&o, &err, "--env-file", path, NULL) == 0 && o.n_env == 4 &&
		   !strcmp(o.env[0], "A=1") && !strcmp(o.env[1], "B=x y") &&
		   !strcmp(o.env[2], "HUTCH_T_BARE=from-caller") && !strcmp(o.env[3], "C=z"),
	   "an env file's lines, quotes, export and a bare key (%s)", err.msg);
	const char bad[] = "A=1\n\n# c\nB=\"open\n";
	ok(ftruncate(fd, 0) == 0 && pwrite(fd, bad, strlen(bad), 0) == (ssize_t)strlen(bad),
	   "env file rewritten");
	char want[128];
	snprintf(want, sizeof(want), "--env-file %s line 4: unterminated double quote", path);
	ok(sb_args(&o, &err, "--env-file", path, NULL) == -EINVAL && !strcmp(err.msg, want),
	   "a bad line is an error naming the file and the line: %s", err.msg);
	ok(ftruncate(fd, 0) == 0 && pwrite(fd, "A=1\nB\0=2\n", 10, 0) == 10, "a NUL written");
	snprintf(want, sizeof(want), "--env-file %s line 2: a NUL byte", path);
	ok(sb_args(&o, &err, "--env-file", path, NULL) == -EINVAL && !strcmp(err.msg, want),
	   "a NUL byte is not cut short: %s", err.msg);
	close(fd);
	unlink(path);
	rt_sb_opts_free(&o);
}

/* --report: its directory held as an fd from the flag on; what can't be replaced refused. */
static void test_report(void)
{
	char dir[] = "/tmp/hutch-test-report.XXXXXX", path[128], want[192];
	struct rt_sb_opts o;
	struct hutch_err err = { 0 };
	rt_sb_opts_init(&o);
	ok(mkdtemp(dir) != NULL, "temp dir");
	snprintf(path, sizeof(path), "%s/r.json", dir);
	ok(sb_args(&o, &err, "--report", path, NULL) == 0 && o.report_dir_fd >= 0 &&
		   !strcmp(o.report_name, "r.json") && !strcmp(o.report, path),
	   "--report: the directory held, the name and the path (%s)", err.msg);
	struct stat a, b;
	ok(fstat(o.report_dir_fd, &a) == 0 && stat(dir, &b) == 0 && a.st_ino == b.st_ino,
	   "--report: the fd is the directory's");
	snprintf(path, sizeof(path), "%s/fifo", dir);
	mkfifo(path, 0600);
	snprintf(want, sizeof(want), "--report %s: a FIFO, not a regular file", path);
	ok(sb_args(&o, &err, "--report", path, NULL) == -EINVAL && !strcmp(err.msg, want) &&
		   o.report_dir_fd < 0,
	   "--report: a FIFO is refused, naming it (%s)", err.msg);
	unlink(path);
	snprintf(want, sizeof(want), "--report %s: a directory, not a regular file", dir);
	ok(sb_args(&o, &err, "--report", dir, NULL) == -EINVAL && !strcmp(err.msg, want),
	   "--report: a directory is refused (%s)", err.msg);
	ok(sb_args(&o, &err, "--report", "/dev/stdout", NULL) == -EINVAL &&
		   strstr(err.msg, "--report /dev/stdout: not a file (to write to an fd"),
	   "--report: a link to an fd is refused, pointing at --report-fd (%s)", err.msg);
	ok(sb_args(&o, &err, "--report-fd", "900", NULL) == -EBADF &&
		   strstr(err.msg, "--report-fd 900: not open"),
	   "--report-fd: an fd the caller did not open (%s)", err.msg);
	int ro = open("/dev/null", O_RDONLY | O_CLOEXEC);
	char n[16];
	snprintf(n, sizeof(n), "%d", ro);
	ok(ro >= 3 && sb_args(&o, &err, "--report-fd", n, NULL) == -EBADF &&
		   strstr(err.msg, "not open for writing"),
	   "--report-fd: an fd open only for reading (%s)", err.msg);
	close(ro);
	rmdir(dir);
	rt_sb_opts_free(&o);
}

/* The process of a store image whose config is cfg (JSON), under the flags (NULL-ended, then
 * the command words after a NULL, then NULL): its argv, cwd, ids and environment, joined. */
static int image_process(const char *cfg, char *out, size_t len, struct hutch_err *err, ...)
{
	char *argv[32] = { "sandbox", "-i", "app:1" };
	int argc = 3;
	va_list ap;
	va_start(ap, err);
	for (char *a; (a = va_arg(ap, char *)) && argc < 28;)
		argv[argc++] = a;
	for (char *a, *dash = "--"; (a = va_arg(ap, char *)) && argc < 30; dash = NULL) {
		if (dash)
			argv[argc++] = dash;
		argv[argc++] = a;
	}
	va_end(ap);
	struct rt_sb_opts o;
	struct rt_sb_plan p = { .rootfs = "/nonexistent", .cgroups_path = "/h", .userns = true };
	struct img_run_config c;
	struct rt_spec *s = NULL;
	rt_sb_opts_init(&o);
	int r = rt_sb_parse_args(&o, argc, argv, err);
	if (r >= 0)
		r = rt_sb_check(&o, err);
	if (r >= 0)
		r = img_run_config_parse(cfg, &c, err);
	p.image_config = r >= 0 ? &c : NULL;
	p.binds = hutch_xcalloc(o.n_binds + 1, sizeof(*p.binds));
	p.srcs = hutch_xcalloc(o.n_binds + 1, sizeof(*p.srcs));
	p.n_srcs = o.n_binds;
	p.ws.at = "/s/src/workspace";
	for (size_t i = 0; i < o.n_binds; i++)
		p.srcs[i].at = "/s/src/bind";
	if (r >= 0)
		r = rt_sb_plan_process(&o, &p, err);
	if (r >= 0)
		r = rt_sb_spec(&o, &p, "/b", &s, err);
	if (r >= 0) {
		int n = snprintf(out, len, "%s|%s|%u:%u|", s->process.args[0], s->process.cwd,
				 s->process.user.uid, s->process.user.gid);
		for (size_t i = 1; s->process.args[i]; i++)
			n += snprintf(out + n, len - n, "%s%s", i > 1 ? " " : "",
				      s->process.args[i]);
		for (size_t i = 0; s->process.env[i]; i++)
			n += snprintf(out + n, len - n, "|%s", s->process.env[i]);
	}
	rt_spec_free(s);
	if (p.image_config)
		img_run_config_clear(&c);
	hutch_strv_free(p.argv);
	hutch_strv_free(p.image_env);
	free(p.cwd);
	free(p.binds);
	free(p.srcs);
	rt_sb_opts_free(&o);
	return r;
}

/* The image's config beneath the options, as docker run reads one (rt-sandbox-image.c). */
static void test_image_config(void)
{
	static const char cfg[] =
		"{\"config\": {\"Env\": [\"PATH=/opt/venv/bin:/bin\", \"FOO=x\", \"LANG=de\"],"
		" \"WorkingDir\": \"/srv\", \"Entrypoint\": [\"/ep\", \"-v\"],"
		" \"Cmd\": [\"run\"], \"User\": \"1234\"}}";
	struct hutch_err err = { 0 };
	char out[1024];
	int r = image_process(cfg, out, sizeof(out), &err, NULL, NULL);
	ok(r == 0 && !strcmp(out, "/ep|/srv|1234:0|-v run|HOME=/tmp|TMPDIR=/tmp"
				  "|PATH=/opt/venv/bin:/bin|FOO=x|LANG=de"),
	   "image config: Entrypoint + Cmd, WorkingDir, a numeric User (gid 0), Env over the "
	   "defaults (%s %s)",
	   out, err.msg);
	r = image_process(cfg, out, sizeof(out), &err, "-e", "FOO=y", "--cwd", "/w", "-u", "7",
			  NULL, "a", "b", NULL);
	ok(r == 0 && !strcmp(out, "/ep|/w|7:7|-v a b|HOME=/tmp|TMPDIR=/tmp"
				  "|PATH=/opt/venv/bin:/bin|LANG=de|FOO=y"),
	   "image config: --env, --cwd, --user and -- CMD win (%s %s)", out, err.msg);
	r = image_process(cfg, out, sizeof(out), &err, "--entrypoint", "/sh", NULL, NULL);
	ok(r == 0 && !strncmp(out, "/sh|/srv|1234:0||", 17),
	   "image config: --entrypoint drops the image's Cmd too (%s %s)", out, err.msg);
	r = image_process(cfg, out, sizeof(out), &err, "--entrypoint", "", NULL, "/x", NULL);
	ok(r == 0 && !strncmp(out, "/x|/srv|", 8), "image config: --entrypoint '' runs -- CMD (%s)",
	   out);
	r = image_process(cfg, out, sizeof(out), &err, "--as-root", NULL, NULL);
	ok(r == 0 && strstr(out, "|0:0|") && strstr(out, "HOME=/root"),
	   "image config: --as-root is root whatever the User (%s)", out);
	r = image_process("{\"config\": {\"Cmd\": [\"c\"], \"User\": \"0:5\"}}", out, sizeof(out),
			  &err, "--workspace", "/tmp", NULL, NULL);
	ok(r == 0 && !strncmp(out, "c|/workspace|1000:1000|", 23) &&
		   strstr(out, "PATH=/usr/local/sbin:"),
	   "image config: a root User keeps the default; no WorkingDir: /workspace; no Env: "
	   "hutch's PATH (%s %s)",
	   out, err.msg);
	r = image_process("{\"config\": {}}", out, sizeof(out), &err, NULL, NULL);
	ok(r == -EINVAL && strstr(err.msg, "no command"),
	   "image config: neither Entrypoint nor Cmd nor a command: no command (%s)", err.msg);
	r = image_process("{\"config\": {\"Cmd\": [\"c\"], \"Env\": [\"NOEQ\"]}}", out, sizeof(out),
			  &err, NULL, NULL);
	ok(r == -EINVAL && strstr(err.msg, "config.Env[0]"),
	   "image config: an Env entry without = is refused, named (%s)", err.msg);
	r = image_process("{\"config\": {\"Cmd\": [\"c\"], \"User\": \"70000\"}}", out, sizeof(out),
			  &err, NULL, NULL);
	ok(r == -ERANGE && strstr(err.msg, "config.User 70000"),
	   "image config: a User beyond the sandbox's ids is refused (%s)", err.msg);
}

static const char *sysctl_of(const struct rt_spec *s, const char *key)
{
	for (size_t i = 0; i < s->n_sysctls; i++)
		if (!strcmp(s->sysctls[i].key, key))
			return s->sysctls[i].value;
	return NULL;
}

/* Both values of an rlimit the spec sets (they must agree), or 0 when it sets none. */
static uint64_t rlimit_of(const struct rt_spec *s, int resource)
{
	for (size_t i = 0; i < s->process.n_rlimits; i++)
		if (s->process.rlimits[i].resource == resource)
			return s->process.rlimits[i].soft == s->process.rlimits[i].hard
				       ? s->process.rlimits[i].soft
				       : 1;
	return 0;
}

/* --ucount: the user namespace's limits as user.* sysctls; a delegate's as a hook. */
static void test_ucounts(void)
{
	struct hutch_err err = { 0 };
	struct rt_sb_opts o;
	rt_sb_opts_init(&o);
	ok(sb_args(&o, &err, "--ucount", "inotify_instances=40", "--ucount",
		   "max_fanotify_groups=max", NULL) == 0 &&
		   o.ucount[0] == 40 && o.ucount[2] == INT64_MAX && o.ucount[1] < 0,
	   "ucount: NAME=N and max_NAME=max (%s)", err.msg);
	ok(sb_args(&o, &err, "--ucount", "inotify=1", NULL) < 0 &&
		   strstr(err.msg, "--ucount inotify=1: expected NAME=N"),
	   "ucount: an unknown name is refused, named (%s)", err.msg);
	ok(sb_args(&o, &err, "--ucount", "user_namespaces=2147483648", NULL) < 0 &&
		   strstr(err.msg, "N must be 0 to 2147483647"),
	   "ucount: beyond INT_MAX is refused (%s)", err.msg);
	ok(sb_args(&o, &err, "--ucount", "pid_namespaces=", NULL) < 0,
	   "ucount: an empty N is refused (%s)", err.msg);
	sb_args(&o, &err, "--ucount", "inotify_instances=40", "--ucount", "fanotify_groups=max",
		NULL);
	struct rt_sb_plan p = { .rootfs = "/nonexistent", .cgroups_path = "/h", .userns = true };
	char *argv[] = { "true", NULL };
	p.argv = argv;
	p.cwd = "/";
	struct rt_spec *s = NULL;
	int r = rt_sb_spec(&o, &p, "/b", &s, &err);
	bool have = access("/proc/sys/user/max_inotify_watches", F_OK) == 0;
	ok(r == 0 && (!have || (!strcmp(sysctl_of(s, "user.max_inotify_instances"), "40") &&
				!strcmp(sysctl_of(s, "user.max_inotify_watches"), "8192") &&
				!strcmp(sysctl_of(s, "user.max_fanotify_groups"), "2147483647"))),
	   "ucount: the given limit and the defaults, as user.* sysctls (%s)", err.msg);
	ok(r == 0 && !sysctl_of(s, "user.max_sigpending") &&
		   rlimit_of(s, RLIMIT_SIGPENDING) == 1024 &&
		   rlimit_of(s, RLIMIT_MSGQUEUE) == 204800,
	   "ucount: sigpending and msgqueue are the process's rlimits, not sysctls");
	if (r == 0) {
		size_t n = s->n_sysctls;
		rt_sb_ucount_hook("/usr/bin/crun", s);
		struct rt_hooks *h = &s->hooks[RT_HOOK_CREATE_RUNTIME];
		ok(s->n_sysctls == 0 &&
			   (n == 0 || (h->n == 1 &&
				       !strcmp(h->v[0].args[4 + 0], "max_inotify_instances=40"))),
		   "ucount: crun gets them from a createRuntime hook, not as sysctls");
	}
	rt_spec_free(s);
	ok(sb_args(&o, &err, "--ucount", "sigpending=5000", "--ucount", "msgqueue=max", NULL) ==
			   0 &&
		   rt_sb_spec(&o, &p, "/b", &s, &err) == 0 &&
		   rlimit_of(s, RLIMIT_SIGPENDING) == 5000 &&
		   rlimit_of(s, RLIMIT_MSGQUEUE) == RLIM_INFINITY,
	   "ucount: sigpending=N and msgqueue=max (%s)", err.msg);
	rt_spec_free(s);
	p.userns = false; /* --host-root */
	r = rt_sb_spec(&o, &p, "/b", &s, &err);
	ok(r == 0 && s->n_sysctls == 0 && s->process.n_rlimits == 0,
	   "ucount: no user namespace, no limits");
	rt_spec_free(s);
	rt_sb_opts_free(&o);
}

static bool has(char **v, const char *s)
{
	for (; v && *v; v++)
		if (!strcmp(*v, s))
			return true;
	return false;
}

/* hutch's own directories, and the caller's rw paths against them: refused when one holds or
 * lies in one, by name or resolved, made yet or not. In a temp dir, through the variables
 * that place them. */
static void test_own_dirs(void)
{
	char tmp[] = "/tmp/test-sb-own.XXXXXX", path[128], path2[256];
	struct hutch_err err = { 0 };
	struct rt_sb_opts o;
	if (!mkdtemp(tmp)) {
		ok(0, "mkdtemp");
		return;
	}
	snprintf(path, sizeof(path), "%s/c/hutch/seccomp", tmp);
	setenv("HUTCH_SECCOMP_CACHE", path, 1);
	snprintf(path, sizeof(path), "%s/store", tmp);
	setenv("HUTCH_STORE", path, 1);
	char **own = rt_own_dirs();
	snprintf(path, sizeof(path), "%s/c/hutch", tmp);
	snprintf(path2, sizeof(path2), "%s/store", tmp);
	ok(has(own, path) && has(own, path2) && has(own, rt_run_dir()) && has(own, rt_root()) &&
		   (hutch_rootless() ||
		    (has(own, "/var/lib/hutch") && has(own, "/var/cache/hutch"))),
	   "own dirs: the state dir, the root (its containers and sandboxes), the stores, the "
	   "caches' hutch directories");
	hutch_strv_free(own);

	snprintf(path, sizeof(path), "%s/ws/a", tmp);
	_cleanup_free_ char *res = rt_path_resolve(path);
	ok(res && !strcmp(res, path), "resolve: a missing tail is kept as it is (%s)", res);
	ok(rt_path_under("/a/b", "/a") && rt_path_under("/a", "/a/") && rt_path_under("/x", "/") &&
		   !rt_path_under("/ab", "/a") && !rt_path_under("/a", "/a/b"),
	   "under: by whole components");

	rt_sb_opts_init(&o);
	snprintf(path, sizeof(path), "%s/ws", tmp);
	mkdir(path, 0755);
	ok(sb_args(&o, &err, "--image", "/", "--workspace", path, NULL) == 0 &&
		   rt_sb_check_own_dirs(&o, &err) == 0,
	   "own dirs: a workspace beside them (%s)", err.msg);
	ok(sb_args(&o, &err, "--image", "/", "--workspace", tmp, NULL) == 0 &&
		   rt_sb_check_own_dirs(&o, &err) == -EPERM && strstr(err.msg, "--workspace ") &&
		   strstr(err.msg, "/store, one of hutch's own directories"),
	   "own dirs: a workspace holding the store, which doesn't exist yet (%s)", err.msg);
	snprintf(path, sizeof(path), "%s/c/hutch/seccomp", tmp);
	snprintf(path2, sizeof(path2), "mkdir -p '%s'", path);
	(void)!system(path2);
	snprintf(path, sizeof(path), "%s/c:/c", tmp);
	ok(sb_args(&o, &err, "--image", "/", "--bind", path, NULL) == 0 &&
		   rt_sb_check_own_dirs(&o, &err) == -EPERM && strstr(err.msg, "/c/hutch, one of"),
	   "own dirs: an rw bind holding the cache's directory (%s)", err.msg);
	snprintf(path, sizeof(path), "%s/c/hutch/seccomp", tmp);
	snprintf(path2, sizeof(path2), "%s:/c", path);
	ok(sb_args(&o, &err, "--image", "/", "--bind", path2, NULL) == 0 &&
		   rt_sb_check_own_dirs(&o, &err) == -EPERM && strstr(err.msg, ": inside "),
	   "own dirs: an rw bind inside one (%s)", err.msg);
	snprintf(path2, sizeof(path2), "%s/c:/c", tmp);
	ok(sb_args(&o, &err, "--image", "/", "--ro-bind", path2, NULL) == 0 &&
		   rt_sb_check_own_dirs(&o, &err) == 0,
	   "own dirs: a read-only bind of one is not refused (%s)", err.msg);
	snprintf(path, sizeof(path), "%s/link", tmp);
	snprintf(path2, sizeof(path2), "%s/c", tmp);
	(void)!symlink(path2, path);
	snprintf(path2, sizeof(path2), "%s:/l", path);
	ok(sb_args(&o, &err, "--image", "/", "--bind", path2, NULL) == 0 &&
		   rt_sb_check_own_dirs(&o, &err) == -EPERM,
	   "own dirs: through a symlink, resolved (%s)", err.msg);
	rt_sb_opts_free(&o);
	unsetenv("HUTCH_SECCOMP_CACHE");
	unsetenv("HUTCH_STORE");
	snprintf(path, sizeof(path), "rm -rf '%s'", tmp);
	(void)!system(path);
}

/* --name under another runtime: taken, but for runc with --network bridge (runc's exec cannot
 * join the namespace hutch made), refused naming both flags. */
static void test_named_runtime(void)
{
	struct rt_sb_opts o;
	struct hutch_err err = { 0 };
	rt_sb_opts_init(&o);
	ok(sb_args(&o, &err, "--image", "/", "--name", "s", "--detach", "--runtime", "runc",
		   NULL) == 0 &&
		   rt_sb_check(&o, &err) == 0,
	   "named: --runtime runc (%s)", err.msg);
	ok(sb_args(&o, &err, "--image", "/", "--name", "s", "--runtime", "runsc", "--network",
		   "bridge", NULL) == 0 &&
		   rt_sb_check(&o, &err) == 0,
	   "named: --runtime runsc --network bridge (%s)", err.msg);
	ok(sb_args(&o, &err, "--image", "/", "--name", "s", "--runtime", "/usr/sbin/runc",
		   "--network", "bridge", NULL) == 0 &&
		   rt_sb_check(&o, &err) == -ENOTSUP &&
		   strstr(err.msg, "--name with --runtime /usr/sbin/runc --network bridge: not "
				   "supported"),
	   "named: --runtime runc --network bridge refused (%s)", err.msg);
	rt_sb_opts_free(&o);
}

int main(void)
{
	test_sizes();
	test_size_flags();
	test_cpus();
	test_env_lines();
	test_env_file();
	test_report();
	test_image_config();
	test_ucounts();
	test_own_dirs();
	test_named_runtime();
	return tap_done();
}
