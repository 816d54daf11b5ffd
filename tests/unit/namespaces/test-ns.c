// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests for namespaces/: the pure tables and checks run anywhere; as root, forked
 * children unshare namespaces and run the real mount, pivot, mask, identity, sysctl,
 * loopback and pty code, checking the result from inside and reporting over a pipe.
 */
#include "tap.h"
#include "hutch-ids.h"
#include "net.h"

#include "ns-internal.h"

#include <fcntl.h>
#include <ftw.h>
#include <linux/magic.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <termios.h>

/* ---- child reporting: one "1 desc" / "0 desc" line per check, over a pipe ---- */

static int report_fd = -1;
static int child_failed;

static void check(bool cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void check(bool cond, const char *fmt, ...)
{
	char buf[700];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	for (char *p = buf; *p; p++)
		if (*p == '\n')
			*p = ' ';
	dprintf(report_fd, "%d %s\n", cond ? 1 : 0, buf);
	if (!cond)
		child_failed++;
}

/* Runs fn in a forked child; each of its checks becomes a TAP line, plus one for its exit.
 * hook, when given, runs in the parent right after the fork (to write id maps, say). */
static void run_child_hook(const char *name, int (*fn)(void *), void *arg,
			   void (*hook)(pid_t, void *), void *hook_arg)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0) {
		ok(0, "%s: pipe", name);
		return;
	}
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		close(p[0]);
		report_fd = p[1];
		int r = fn(arg);
		_exit(r == 0 && child_failed == 0 ? 0 : 1);
	}
	close(p[1]);
	if (hook)
		hook(pid, hook_arg);
	FILE *f = fdopen(p[0], "r");
	char line[800];
	while (f && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		ok(line[0] == '1', "%s: %s", name, line + 2);
	}
	if (f)
		fclose(f);
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s: child exited cleanly (status %d)",
	   name, status);
}

static void run_child(const char *name, int (*fn)(void *), void *arg)
{
	run_child_hook(name, fn, arg, NULL, NULL);
}

static char *read_str(const char *path)
{
	char *s = NULL;
	struct hutch_err err = { 0 };
	if (hutch_read_file_at(AT_FDCWD, path, 1 << 16, &s, NULL, &err) < 0)
		return hutch_xstrdup("");
	return s;
}

static void write_str(const char *path, const char *s)
{
	struct hutch_err err = { 0 };
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd >= 0) {
		hutch_write_all(fd, s, strlen(s));
		close(fd);
	}
	(void)err;
}

static int rm_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st, (void)ftw;
	if (type == FTW_DP)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

static void rm_rf(const char *path)
{
	nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}

static bool fs_is(const char *path, long magic)
{
	struct statfs sf;
	return statfs(path, &sf) == 0 && sf.f_type == magic;
}

/* ---- pure parts ---- */

static void test_parse_options(void)
{
	struct hutch_err err = { 0 };
	struct ns_mount m = { 0 };
	char *opts[] = { "nosuid", "noexec",   "nodev",	      "mode=755", "size=65536k", "ro",
			 "rbind",  "rprivate", "newinstance", "defaults", "gid=5" };
	int r = ns_mount_parse_options(&m, opts, ARRAY_SIZE(opts), &err);
	ok(r == 0, "parse: typical options accepted");
	ok(m.flags == (MS_NOSUID | MS_NOEXEC | MS_NODEV | MS_RDONLY), "parse: flags");
	ok(m.bind && m.recursive, "parse: rbind sets bind and recursive");
	ok(m.propagation == (MS_PRIVATE | MS_REC), "parse: rprivate");
	is_str(m.data, "mode=755,size=65536k,newinstance,gid=5", "parse: fs data joined in order");
	free(m.data);

	struct ns_mount m2 = { .data = hutch_xstrdup("uid=0") };
	char *opts2[] = { "ro", "rw", "bind", "tmpcopyup", "ptmxmode=0666", "noatime", "atime" };
	r = ns_mount_parse_options(&m2, opts2, ARRAY_SIZE(opts2), &err);
	ok(r == 0 && !(m2.flags & MS_RDONLY) && (m2.clear_flags & MS_RDONLY),
	   "parse: last of ro/rw wins and rw is recorded as cleared");
	ok(!(m2.flags & MS_NOATIME) && (m2.clear_flags & MS_NOATIME),
	   "parse: atime clears noatime");
	ok(m2.bind && !m2.recursive && m2.tmpcopyup, "parse: bind, tmpcopyup");
	is_str(m2.data, "uid=0,ptmxmode=0666", "parse: data appended to existing data");
	free(m2.data);

	struct ns_mount m3 = { 0 };
	char *opts3[] = { "rshared", "slave", "strictatime", "relatime", "nosymfollow" };
	r = ns_mount_parse_options(&m3, opts3, ARRAY_SIZE(opts3), &err);
	ok(r == 0 && m3.propagation == MS_SLAVE && !m3.data, "parse: last propagation wins");
	ok(m3.flags == (MS_STRICTATIME | MS_RELATIME | MS_NOSYMFOLLOW), "parse: atime flags");

	char *idm[] = { "ro", "idmap" };
	struct ns_mount m4 = { 0 };
	r = ns_mount_parse_options(&m4, idm, 2, &err);
	ok(r == 0 && m4.idmap && !m4.idmap_recursive && !m4.data, "parse: idmap");
	char *ridm[] = { "ridmap" };
	struct ns_mount m5 = { 0 };
	r = ns_mount_parse_options(&m5, ridm, 1, &err);
	ok(r == 0 && m5.idmap && m5.idmap_recursive, "parse: ridmap is a recursive idmap");
	free(m4.data);

	/* The recursive options: MOUNT_ATTR_* bits, the last of a pair winning, the atime mode
	 * as one value with all of MOUNT_ATTR__ATIME cleared; formatted back the same. */
	char *rec[] = { "rro",	   "rnosuid", "rrw",	  "rro",
			"rnoexec", "rexec",   "rnoatime", "rnosymfollow" };
	struct ns_mount m6 = { 0 };
	r = ns_mount_parse_options(&m6, rec, ARRAY_SIZE(rec), &err);
	ok(r == 0 && !m6.data && !m6.flags &&
		   m6.rec_set == (MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOATIME |
				  MOUNT_ATTR_NOSYMFOLLOW) &&
		   m6.rec_clear == (MOUNT_ATTR_NOEXEC | MOUNT_ATTR__ATIME),
	   "parse: recursive options (set %#llx clear %#llx)", (unsigned long long)m6.rec_set,
	   (unsigned long long)m6.rec_clear);
	size_t nf = 0;
	char **f = ns_mount_format_options(&m6, &nf);
	struct ns_mount m7 = { 0 };
	r = ns_mount_parse_options(&m7, f, nf, &err);
	ok(r == 0 && m7.rec_set == m6.rec_set && m7.rec_clear == m6.rec_clear,
	   "format: the recursive options parse back the same");
	hutch_strv_free(f);
	char *at[] = { "rnoatime", "ratime" }, *strict[] = { "rnorelatime" };
	struct ns_mount m8 = { 0 }, m9 = { 0 };
	ok(ns_mount_parse_options(&m8, at, 2, &err) == 0 &&
		   (m8.rec_set & MOUNT_ATTR__ATIME) == MOUNT_ATTR_RELATIME &&
		   ns_mount_parse_options(&m9, strict, 1, &err) == 0 &&
		   (m9.rec_set & MOUNT_ATTR__ATIME) == MOUNT_ATTR_STRICTATIME &&
		   m9.rec_clear == MOUNT_ATTR__ATIME,
	   "parse: ratime is relatime, rnorelatime strictatime");
	/* What waits for the end: a read-only tmpfs or /dev, not a bind, nor a rw one. */
	struct ns_mount dev = { .destination = "/dev", .type = "tmpfs", .flags = MS_RDONLY },
			tmp = { .destination = "/t",
				.type = "tmpfs",
				.rec_set = MOUNT_ATTR_NOEXEC },
			rw = { .destination = "/dev", .type = "tmpfs" },
			bind = { .destination = "/dev", .type = "bind", .flags = MS_RDONLY };
	ok(ns_mount_deferred(&dev) && ns_mount_deferred(&tmp) && !ns_mount_deferred(&rw) &&
		   !ns_mount_deferred(&bind),
	   "deferred: a ro or recursive-option tmpfs or /dev, not a bind");
}

static void test_split_path(void)
{
	char dir[PATH_MAX], base[NAME_MAX + 1];
	struct hutch_err err = { 0 };
	ok(ns_split_path("/dev/sub/fifo", dir, base, &err) == 0 && strcmp(dir, "/dev/sub") == 0 &&
		   strcmp(base, "fifo") == 0,
	   "split: /dev/sub/fifo");
	ok(ns_split_path("/null/", dir, base, &err) == 0 && strcmp(dir, "/") == 0 &&
		   strcmp(base, "null") == 0,
	   "split: trailing slash, top level");
	ok(ns_split_path("/", dir, base, &err) < 0, "split: / refused");
	ok(ns_split_path("/a/..", dir, base, &err) < 0, "split: .. refused");
}

/* The limits a new user namespace copies: only RLIMIT_SIGPENDING and RLIMIT_MSGQUEUE, only
 * lowered (to the hard values given), and put back. */
static void test_userns_limits(void)
{
	struct rlimit sig0, mq0, nofile0, rl;
	getrlimit(RLIMIT_SIGPENDING, &sig0);
	getrlimit(RLIMIT_MSGQUEUE, &mq0);
	getrlimit(RLIMIT_NOFILE, &nofile0);
	const struct ns_rlimit v[] = { { RLIMIT_NOFILE, 3, 3 },
				       { RLIMIT_SIGPENDING, 7, 9 },
				       { RLIMIT_MSGQUEUE, RLIM_INFINITY, RLIM_INFINITY } };
	struct ns_userns_limits saved;
	struct hutch_err err = { 0 };
	int r = ns_userns_limits_lower(v, 3, &saved, &err);
	getrlimit(RLIMIT_SIGPENDING, &rl);
	ok(r == 0 && rl.rlim_cur == (sig0.rlim_cur < 9 ? sig0.rlim_cur : 9) &&
		   rl.rlim_max == sig0.rlim_max,
	   "userns limits: the soft RLIMIT_SIGPENDING lowered to the hard value given (%s)",
	   err.msg);
	getrlimit(RLIMIT_MSGQUEUE, &rl);
	ok(rl.rlim_cur == mq0.rlim_cur, "userns limits: a higher one is not raised");
	getrlimit(RLIMIT_NOFILE, &rl);
	ok(rl.rlim_cur == nofile0.rlim_cur, "userns limits: other rlimits are left alone");
	ns_userns_limits_restore(&saved);
	getrlimit(RLIMIT_SIGPENDING, &rl);
	ok(rl.rlim_cur == sig0.rlim_cur && rl.rlim_max == sig0.rlim_max, "userns limits: restored");
}

static void test_caps_and_names(void)
{
	bool round = true;
	for (int i = 0; i <= 40; i++)
		round = round && ns_cap_name(i) && ns_cap_from_name(ns_cap_name(i)) == i;
	ok(round, "caps: name table round trips 0..40");
	ok(ns_cap_from_name("CAP_SYS_ADMIN") == 21, "caps: CAP_SYS_ADMIN is 21");
	ok(ns_cap_from_name("CAP_CHECKPOINT_RESTORE") == 40, "caps: CAP_CHECKPOINT_RESTORE is 40");
	ok(ns_cap_from_name("CAP_NOPE") == -EINVAL, "caps: unknown name is -EINVAL");
	ok(ns_cap_name(41) == NULL && ns_cap_name(-1) == NULL, "caps: out of range has no name");
	ok(ns_cap_last() >= 36 && ns_cap_last() <= 63, "caps: cap_last_cap read (%d)",
	   ns_cap_last());

	ok(ns_rlimit_from_name("RLIMIT_NOFILE") == RLIMIT_NOFILE, "rlimit: NOFILE");
	ok(ns_rlimit_from_name("RLIMIT_RTTIME") == RLIMIT_RTTIME, "rlimit: RTTIME");
	ok(ns_rlimit_from_name("RLIMIT_AS") == RLIMIT_AS, "rlimit: AS");
	ok(ns_rlimit_from_name("RLIMIT_FOO") == -EINVAL, "rlimit: unknown is -EINVAL");
	struct hutch_err err = { 0 };
	struct ns_rlimit bad = { .resource = RLIMIT_NOFILE, .soft = 10, .hard = 5 };
	ok(ns_set_rlimits(&bad, 1, &err) < 0 && strstr(err.msg, "RLIMIT_NOFILE: "),
	   "rlimit: error names the limit (%s)", err.msg);
	test_userns_limits();

	ok(ns_type_flag("pid") == CLONE_NEWPID && ns_type_flag("network") == CLONE_NEWNET &&
		   ns_type_flag("mount") == CLONE_NEWNS && ns_type_flag("ipc") == CLONE_NEWIPC &&
		   ns_type_flag("uts") == CLONE_NEWUTS && ns_type_flag("user") == CLONE_NEWUSER &&
		   ns_type_flag("cgroup") == CLONE_NEWCGROUP &&
		   ns_type_flag("time") == CLONE_NEWTIME,
	   "ns types: all eight map to their CLONE_NEW flag");
	ok(ns_type_flag("net") == -EINVAL, "ns types: unknown is -EINVAL");
}

static void test_sysctl_rules(void)
{
	struct hutch_err err = { 0 };
	ok(ns_check_sysctl("kernel.shmmax", CLONE_NEWIPC, &err) == 0, "sysctl: ipc key ok");
	ok(ns_check_sysctl("fs.mqueue.msg_max", CLONE_NEWIPC, &err) == 0,
	   "sysctl: fs.mqueue with ipcns");
	ok(ns_check_sysctl("kernel.msgmax", CLONE_NEWNET | CLONE_NEWUTS, &err) < 0,
	   "sysctl: ipc key refused without ipcns");
	ok(ns_check_sysctl("net.ipv4.ip_forward", CLONE_NEWNET, &err) == 0,
	   "sysctl: net with netns");
	ok(ns_check_sysctl("net.core.somaxconn", CLONE_NEWIPC | CLONE_NEWUTS, &err) < 0,
	   "sysctl: net refused without netns");
	ok(ns_check_sysctl("kernel.hostname", CLONE_NEWUTS, &err) < 0 &&
		   strstr(err.msg, "hostname field") != NULL,
	   "sysctl: kernel.hostname refused even with utsns, as runc (%s)", err.msg);
	ok(ns_check_sysctl("kernel.domainname", CLONE_NEWUTS, &err) == 0,
	   "sysctl: domainname with utsns");
	ok(ns_check_sysctl("kernel.domainname", CLONE_NEWNET | CLONE_NEWIPC, &err) < 0,
	   "sysctl: domainname refused without utsns");
	ok(ns_check_sysctl("vm.overcommit_memory", CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS,
			   &err) < 0 &&
		   strcmp(err.msg, "sysctl vm.overcommit_memory is not namespaced, not allowed") ==
			   0,
	   "sysctl: vm.* refused (%s)", err.msg);
	ok(ns_check_sysctl("user.max_inotify_instances", CLONE_NEWUSER, &err) == 0,
	   "sysctl: user.* with a new user namespace");
	ok(ns_check_sysctl("user.max_inotify_instances", CLONE_NEWNET | CLONE_NEWIPC, &err) < 0 &&
		   strstr(err.msg, "needs a new user namespace") != NULL,
	   "sysctl: user.* refused without one (%s)", err.msg);
	ok(ns_check_sysctl("kernel.pid_max", CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS, &err) < 0,
	   "sysctl: kernel.pid_max refused");
}

static void test_fd_passing(void)
{
	struct hutch_err err = { 0 };
	int sv[2], pp[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0 || pipe(pp) < 0) {
		ok(0, "fd passing: socketpair/pipe");
		return;
	}
	ok(ns_send_fd(sv[0], pp[1], "/dev/pts/7", &err) == 0, "fd passing: send");
	int fd = ns_recv_fd(sv[1], &err);
	ok(fd >= 0 && fd != pp[1], "fd passing: received a new fd");
	ok(fd >= 0 && (fcntl(fd, F_GETFD) & FD_CLOEXEC), "fd passing: received fd is cloexec");
	if (fd >= 0) {
		ok(write(fd, "x", 1) == 1, "fd passing: received fd is the pipe");
		close(fd);
	}
	char c = 0;
	ok(read(pp[0], &c, 1) == 1 && c == 'x', "fd passing: data arrived through it");
	ok(write(sv[0], "plain", 5) == 5 && ns_recv_fd(sv[1], &err) < 0,
	   "fd passing: message without fd refused (%s)", err.msg);
	close(sv[0]), close(sv[1]), close(pp[0]), close(pp[1]);
}

static void test_join_checks(void)
{
	struct hutch_err err = { 0 };
	ok(ns_join("/proc/self/ns/uts", CLONE_NEWNET, &err) < 0 &&
		   strstr(err.msg, "/proc/self/ns/uts is not a network namespace"),
	   "join: type mismatch refused (%s)", err.msg);
	ok(ns_join("/dev/null", CLONE_NEWNET, &err) < 0 && strstr(err.msg, "not a namespace"),
	   "join: non-namespace file refused (%s)", err.msg);
	ok(ns_join("/nonexistent/ns", CLONE_NEWNET, &err) == -ENOENT, "join: missing file");
}

/* ---- as root: the rootfs ---- */

struct fixture {
	char base[64], host[64], host2[128];
	char rootfs[128], rootfs2[128], rootfs3[128];
	char robind[128], hostfile[128];
	bool host_v1; /* cgroup v1 controllers at /sys/fs/cgroup/<name> */
};

static void mkdirf(const char *fmt, const char *a, const char *b)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), fmt, a, b);
	mkdir(p, 0755);
}

static bool setup_fixture(struct fixture *fx)
{
	strcpy(fx->base, "/tmp/hutch-ns-XXXXXX");
	strcpy(fx->host, "/tmp/hutch-ns-host-XXXXXX");
	if (!mkdtemp(fx->base) || !mkdtemp(fx->host))
		return false;
	snprintf(fx->host2, sizeof(fx->host2), "%s-absent", fx->host);
	snprintf(fx->rootfs, sizeof(fx->rootfs), "%s/rootfs", fx->base);
	snprintf(fx->rootfs2, sizeof(fx->rootfs2), "%s/rootfs2", fx->base);
	snprintf(fx->rootfs3, sizeof(fx->rootfs3), "%s/rootfs3", fx->base);
	snprintf(fx->robind, sizeof(fx->robind), "%s/robind", fx->base);
	snprintf(fx->hostfile, sizeof(fx->hostfile), "%s/hostfile", fx->base);
	fx->host_v1 = !fs_is("/sys/fs/cgroup", CGROUP2_SUPER_MAGIC) &&
		      fs_is("/sys/fs/cgroup/memory", CGROUP_SUPER_MAGIC);
	const char *r = fx->rootfs;
	const char *dirs[] = { "",    "/proc", "/dev",	   "/etc", "/etc/secret",
			       "/rw", "/opt",  "/opt/sub", "/tmp" };
	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++)
		mkdirf("%s%s", r, dirs[i]);
	/* The symlink target exists inside the rootfs too: it must be used, not the host's. */
	mkdirf("%s%s", r, fx->host);
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/evil", r);
	if (symlink(fx->host, p) < 0)
		return false;
	snprintf(p, sizeof(p), "%s/etc/secret/file", r);
	write_str(p, "secret");
	snprintf(p, sizeof(p), "%s/opt/a", r);
	write_str(p, "hello");
	if (chmod(p, 0640) < 0 || chown(p, 123, 456) < 0)
		return false;
	snprintf(p, sizeof(p), "%s/opt/sub/l", r);
	if (symlink("../a", p) < 0)
		return false;
	mkdir(fx->robind, 0755);
	snprintf(p, sizeof(p), "%s/f", fx->robind);
	write_str(p, "f");
	write_str(fx->hostfile, "hf");
	/* rootfs2: a symlinked /proc. rootfs3: a dangling symlink to a host path. */
	mkdirf("%s%s", fx->rootfs2, "");
	mkdirf("%s%s", fx->rootfs2, "/etc");
	snprintf(p, sizeof(p), "%s/proc", fx->rootfs2);
	if (symlink("/etc", p) < 0)
		return false;
	mkdirf("%s%s", fx->rootfs3, "");
	snprintf(p, sizeof(p), "%s/evil", fx->rootfs3);
	return symlink(fx->host2, p) == 0;
}

static char *opts_ro_bind[] = { "rbind", "ro" };
static char *opts_file_bind[] = { "bind", "ro", "nosuid" };
static char *opts_dev[] = { "nosuid", "strictatime", "mode=755", "size=65536k" };
static char *opts_pts[] = { "nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620" };
static char *opts_copyup[] = { "tmpcopyup", "nodev" };
static char *opts_sys[] = { "nosuid", "noexec", "nodev", "ro" };

static bool add_mount(struct ns_mount *m, const char *dest, const char *type, const char *src,
		      char **opts, size_t n)
{
	struct hutch_err err = { 0 };
	memset(m, 0, sizeof(*m));
	m->destination = (char *)dest;
	m->type = (char *)type;
	m->source = (char *)src;
	return ns_mount_parse_options(m, opts, n, &err) == 0;
}

static void check_node(const char *path, mode_t type, unsigned maj, unsigned min, mode_t mode)
{
	struct stat st = { 0 };
	bool good = stat(path, &st) == 0 && (st.st_mode & S_IFMT) == type &&
		    (st.st_mode & 07777) == mode &&
		    (type == S_IFIFO || st.st_rdev == makedev(maj, min));
	check(good, "%s is the expected node (mode %o)", path, (unsigned)st.st_mode);
}

static void check_link(const char *path, const char *target)
{
	char buf[PATH_MAX];
	ssize_t n = readlink(path, buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	check(n > 0 && strcmp(buf, target) == 0, "%s -> %s", path, buf);
}

static void check_content(const char *path, const char *want)
{
	char *s = read_str(path);
	check(strcmp(s, want) == 0, "%s holds \"%s\"", path, s);
	free(s);
}

static void check_erofs(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	check(fd < 0 && errno == EROFS, "%s is not writable (EROFS, got %s)", path,
	      fd < 0 ? strerror(errno) : "success");
	if (fd >= 0)
		close(fd);
}

static bool is_rdonly(const char *path)
{
	struct statvfs sv;
	return statvfs(path, &sv) == 0 && (sv.f_flag & ST_RDONLY);
}

/* sysfs and the cgroup tree, whichever way they had to be mounted. Never writes to a
 * cgroup hierarchy: read-only-ness is checked with statvfs. */
static void check_sys(bool host_v1)
{
	check(fs_is("/sys", SYSFS_MAGIC), "/sys is a sysfs");
	check(is_rdonly("/sys"), "/sys is read-only");
	bool v2 = fs_is("/sys/fs/cgroup", CGROUP2_SUPER_MAGIC);
	check(v2 || fs_is("/sys/fs/cgroup", TMPFS_MAGIC), "/sys/fs/cgroup is a tmpfs or cgroup2");
	check(is_rdonly("/sys/fs/cgroup"), "/sys/fs/cgroup is read-only");
	if (!host_v1)
		return;
	check(fs_is("/sys/fs/cgroup/memory", CGROUP_SUPER_MAGIC),
	      "/sys/fs/cgroup/memory is a cgroup v1 hierarchy");
	check(fs_is("/sys/fs/cgroup/systemd", CGROUP_SUPER_MAGIC),
	      "/sys/fs/cgroup/systemd is the name=systemd hierarchy");
	check(access("/sys/fs/cgroup/memory/memory.limit_in_bytes", F_OK) == 0,
	      "memory controller files visible");
	check(is_rdonly("/sys/fs/cgroup/memory") && is_rdonly("/sys/fs/cgroup/systemd"),
	      "cgroup hierarchies are read-only");
}

static void check_after_pivot(bool host_v1)
{
	check_sys(host_v1);
	struct stat st;
	check(fs_is("/proc", PROC_SUPER_MAGIC), "/proc is a procfs");
	check(fs_is("/dev", TMPFS_MAGIC), "/dev is a tmpfs");
	check_node("/dev/null", S_IFCHR, 1, 3, 0666);
	check_node("/dev/urandom", S_IFCHR, 1, 9, 0666);
	check_node("/dev/tty", S_IFCHR, 5, 0, 0666);
	check_node("/dev/mydev", S_IFCHR, 1, 5, 0600);
	check(stat("/dev/mydev", &st) == 0 && st.st_uid == 1234 && st.st_gid == 4321,
	      "linux.devices owner applied");
	check_node("/dev/sub/fifo", S_IFIFO, 0, 0, 0644);
	check_link("/dev/ptmx", "pts/ptmx");
	check_link("/dev/fd", "/proc/self/fd");
	check_link("/dev/stderr", "/proc/self/fd/2");
	check(fs_is("/dev/pts", DEVPTS_SUPER_MAGIC), "/dev/pts is a devpts");
	check_content("/data/f", "f");
	check_erofs("/data/new");
	check_erofs("/data/f");
	check_content("/etc/hostfile", "hf");
	check_erofs("/etc/hostfile");
	check(fs_is("/opt", TMPFS_MAGIC), "/opt is a tmpfs");
	check_content("/opt/a", "hello");
	check(stat("/opt/a", &st) == 0 && (st.st_mode & 07777) == 0640 && st.st_uid == 123 &&
		      st.st_gid == 456,
	      "tmpcopyup kept mode and owner");
	check_link("/opt/sub/l", "../a");
	int fd = open("/opt/new", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	check(fd >= 0, "tmpcopyup tmpfs is writable");
	if (fd >= 0)
		close(fd);
}

static void check_mask_and_readonly(void)
{
	struct hutch_err err = { 0 };
	/* /proc/kcore is absent on kernels without CONFIG_PROC_KCORE: then it is skipped. */
	char *masked[] = { "/proc/kcore", "/proc/timer_list", "/proc/acpi", "/etc/secret",
			   "/nonexistent/x" };
	check(ns_mask_paths(masked, ARRAY_SIZE(masked), &err) == 0, "ns_mask_paths: %s", err.msg);
	check_node("/proc/timer_list", S_IFCHR, 1, 3, 0666);
	check(access("/proc/kcore", F_OK) < 0 || fs_is("/proc/kcore", TMPFS_MAGIC) ||
		      !fs_is("/proc/kcore", PROC_SUPER_MAGIC),
	      "/proc/kcore masked when present");
	check(access("/proc/acpi", F_OK) < 0 || fs_is("/proc/acpi", TMPFS_MAGIC),
	      "/proc/acpi masked by a tmpfs");
	check(access("/etc/secret/file", F_OK) < 0 && errno == ENOENT, "masked dir is empty");
	check(fs_is("/etc/secret", TMPFS_MAGIC), "masked dir is a tmpfs");
	check_erofs("/etc/secret/new");

	char *ro[] = { "/proc/sys", "/rw", "/missing" };
	check(ns_readonly_paths(ro, ARRAY_SIZE(ro), &err) == 0, "ns_readonly_paths: %s", err.msg);
	int fd = open("/proc/sys/kernel/hostname", O_WRONLY | O_CLOEXEC);
	check(fd < 0 && errno == EROFS, "/proc/sys is read-only");
	if (fd >= 0)
		close(fd);
	check_erofs("/rw/x");
}

static void check_pty(void)
{
	struct hutch_err err = { 0 };
	int master = ns_setup_pty(24, 80, true, 1234, &err);
	check(master >= 0, "ns_setup_pty: %s", err.msg);
	if (master < 0)
		return;
	struct winsize ws = { 0 };
	check(ioctl(0, TIOCGWINSZ, &ws) == 0 && ws.ws_row == 24 && ws.ws_col == 80,
	      "pty window size is 24x80");
	check(isatty(1) && isatty(2), "stdout and stderr are the pty");
	struct stat pt;
	check(fstat(0, &pt) == 0 && pt.st_uid == 1234, "the pty belongs to the process's user");
	check(!(fcntl(0, F_GETFD) & FD_CLOEXEC) && (fcntl(master, F_GETFD) & FD_CLOEXEC),
	      "stdio inherits, master is cloexec");
	struct stat st;
	check(stat("/dev/console", &st) == 0 && S_ISCHR(st.st_mode) && major(st.st_rdev) == 136,
	      "/dev/console is the pty");
	char buf[16] = { 0 };
	check(write(master, "ping\n", 5) == 5 && read(0, buf, sizeof(buf) - 1) == 5 &&
		      strcmp(buf, "ping\n") == 0,
	      "master writes arrive on stdin");
	/* Closing the master hangs up our controlling terminal: SIGHUP for the session leader. */
	signal(SIGHUP, SIG_IGN);
	close(master);
}

static int rootfs_child(void *arg)
{
	struct fixture *fx = arg;
	struct hutch_err err = { 0 };
	struct ns_mount m[9];
	char evil[PATH_MAX], inside[PATH_MAX];
	bool parsed = add_mount(&m[0], "/proc", "proc", "proc", NULL, 0) &&
		      add_mount(&m[1], "/dev", "tmpfs", "tmpfs", opts_dev, 4) &&
		      add_mount(&m[2], "/dev/pts", "devpts", "devpts", opts_pts, 5) &&
		      add_mount(&m[3], "/data", "bind", fx->robind, opts_ro_bind, 2) &&
		      add_mount(&m[4], "/etc/hostfile", "bind", fx->hostfile, opts_file_bind, 3) &&
		      add_mount(&m[5], "/evil/x", "tmpfs", "tmpfs", NULL, 0) &&
		      add_mount(&m[6], "/opt", "tmpfs", "tmpfs", opts_copyup, 2) &&
		      add_mount(&m[7], "/sys", "sysfs", "sysfs", opts_sys, 4) &&
		      add_mount(&m[8], "/sys/fs/cgroup", "cgroup", "cgroup", opts_sys, 4);
	check(parsed, "mount options parsed");
	struct ns_device devs[] = {
		{ .path = "/dev/mydev",
		  .type = 'c',
		  .major = 1,
		  .minor = 5,
		  .file_mode = 0600,
		  .uid = 1234,
		  .gid = 4321 },
		{ .path = "/dev/sub/fifo", .type = 'p', .file_mode = 0644 },
	};
	struct ns_rootfs cfg = { .rootfs = fx->rootfs,
				 .mounts = m,
				 .n_mounts = ARRAY_SIZE(m),
				 .devices = devs,
				 .n_devices = 2,
				 .new_mount_ns = true };
	if (unshare(CLONE_NEWNS) < 0)
		return -errno;
	int r = ns_mount_rootfs(&cfg, &err);
	check(r == 0, "ns_mount_rootfs: %s", err.msg);
	if (r < 0)
		return r;
	snprintf(evil, sizeof(evil), "%s/x", fx->host);
	snprintf(inside, sizeof(inside), "%s%s/x", fx->rootfs, fx->host);
	check(access(evil, F_OK) < 0 && errno == ENOENT, "symlinked destination not on the host");
	check(fs_is(inside, TMPFS_MAGIC), "symlinked destination mounted inside the rootfs");
	r = ns_pivot_root(fx->rootfs, false, &err);
	check(r == 0, "ns_pivot_root: %s", err.msg);
	if (r < 0)
		return r;
	check(access(fx->base, F_OK) < 0, "host tree no longer reachable");
	check_after_pivot(fx->host_v1);
	check_mask_and_readonly();
	r = ns_finish_rootfs(true, MS_PRIVATE | MS_REC, &err);
	check(r == 0, "ns_finish_rootfs: %s", err.msg);
	check_erofs("/newfile");
	int fd = open("/dev/still-writable", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	check(fd >= 0, "/dev stays writable under a read-only root");
	if (fd >= 0)
		close(fd);
	check_pty();
	return 0;
}

static int symlink_proc_child(void *arg)
{
	struct fixture *fx = arg;
	struct hutch_err err = { 0 };
	struct ns_mount m;
	add_mount(&m, "/proc", "proc", "proc", NULL, 0);
	struct ns_rootfs cfg = {
		.rootfs = fx->rootfs2, .mounts = &m, .n_mounts = 1, .new_mount_ns = true
	};
	if (unshare(CLONE_NEWNS) < 0)
		return -errno;
	int r = ns_mount_rootfs(&cfg, &err);
	check(r < 0 && strstr(err.msg, "mount destination /proc is a symlink"),
	      "symlinked /proc refused (%s)", err.msg);
	return 0;
}

static int dangling_child(void *arg)
{
	struct fixture *fx = arg;
	struct hutch_err err = { 0 };
	struct ns_mount m;
	add_mount(&m, "/evil/x", "tmpfs", "tmpfs", NULL, 0);
	struct ns_rootfs cfg = {
		.rootfs = fx->rootfs3, .mounts = &m, .n_mounts = 1, .new_mount_ns = true
	};
	if (unshare(CLONE_NEWNS) < 0)
		return -errno;
	int r = ns_mount_rootfs(&cfg, &err);
	check(access(fx->host2, F_OK) < 0, "dangling symlink: nothing created on the host (%s)",
	      r < 0 ? err.msg : "mounted");
	if (r < 0)
		return 0;
	char inside[PATH_MAX];
	snprintf(inside, sizeof(inside), "%s%s/x", fx->rootfs3, fx->host2);
	check(fs_is(inside, TMPFS_MAGIC), "dangling symlink resolved inside the rootfs");
	hutch_err_clear(&err);
	/* --no-pivot: MS_MOVE + chroot. */
	r = ns_pivot_root(fx->rootfs3, true, &err);
	check(r == 0, "ns_pivot_root no_pivot: %s", err.msg);
	check(access(fx->base, F_OK) < 0 && access("/evil/x", F_OK) == 0,
	      "no_pivot: inside the rootfs");
	return 0;
}

/* In a user namespace: no mknod (host nodes are bound), sysfs and cgroup fall back to
 * binds, and remounts must keep the flags the kernel locked. */
struct userns_arg {
	struct fixture *fx;
	int ready[2], go[2];
};

static void write_maps_hook(pid_t pid, void *arg)
{
	struct userns_arg *u = arg;
	struct hutch_err err = { 0 };
	struct ns_idmap id = { 0, 0, 65536 };
	char c;
	int r = read(u->ready[0], &c, 1) == 1 ? ns_write_idmaps(pid, &id, 1, &id, 1, &err) : -1;
	ok(r == 0, "userns rootfs: id maps written %s", err.msg);
	(void)!write(u->go[1], "g", 1);
}

static int userns_rootfs_child(void *arg)
{
	struct userns_arg *u = arg;
	struct hutch_err err = { 0 };
	char c;
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
		return -errno;
	if (write(u->ready[1], "r", 1) != 1 || read(u->go[0], &c, 1) != 1)
		return -EIO;
	struct ns_mount m[5];
	add_mount(&m[0], "/dev", "tmpfs", "tmpfs", opts_dev, 4);
	add_mount(&m[1], "/dev/pts", "devpts", "devpts", opts_pts, 5);
	add_mount(&m[2], "/data", "bind", u->fx->robind, opts_ro_bind, 2);
	add_mount(&m[3], "/sys", "sysfs", "sysfs", opts_sys, 4);
	add_mount(&m[4], "/sys/fs/cgroup", "cgroup", "cgroup", opts_sys, 4);
	struct ns_rootfs cfg = { .rootfs = u->fx->rootfs,
				 .mounts = m,
				 .n_mounts = 5,
				 .in_userns = true,
				 .new_mount_ns = true };
	int r = ns_mount_rootfs(&cfg, &err);
	check(r == 0, "ns_mount_rootfs: %s", err.msg);
	if (r < 0)
		return r;
	r = ns_pivot_root(u->fx->rootfs, false, &err);
	check(r == 0, "ns_pivot_root: %s", err.msg);
	if (r < 0)
		return r;
	check_node("/dev/null", S_IFCHR, 1, 3, 0666);
	check_node("/dev/tty", S_IFCHR, 5, 0, 0666);
	struct statvfs sv = { 0 };
	bool bound_ok = statvfs("/dev/null", &sv) == 0 && (sv.f_flag & ST_NOSUID) &&
			(sv.f_flag & ST_NOEXEC);
	check(bound_ok, "a bound node is nosuid,noexec (flags %#lx)", sv.f_flag);
	check_link("/dev/ptmx", "pts/ptmx");
	check_content("/data/f", "f");
	check_erofs("/data/new");
	check_sys(u->fx->host_v1);
	r = ns_finish_rootfs(true, 0, &err);
	check(r == 0, "ns_finish_rootfs (locked flags kept): %s", err.msg);
	check_erofs("/newfile");
	return 0;
}

static void test_userns_rootfs(struct fixture *fx)
{
	struct userns_arg u = { .fx = fx };
	if (pipe2(u.ready, O_CLOEXEC) < 0 || pipe2(u.go, O_CLOEXEC) < 0) {
		ok(0, "userns rootfs: pipes");
		return;
	}
	run_child_hook("userns rootfs", userns_rootfs_child, &u, write_maps_hook, &u);
	for (int i = 0; i < 2; i++)
		close(u.ready[i]), close(u.go[i]);
}

/* ---- as root: identity, sysctls, network ---- */

static int idmap_child(void *arg)
{
	int *pipes = arg; /* [0]: read "go", [3]: write "ready" */
	char c;
	if (unshare(CLONE_NEWUSER) < 0)
		return -errno;
	if (write(pipes[3], "r", 1) != 1 || read(pipes[0], &c, 1) != 1)
		return -EIO;
	char *u = read_str("/proc/self/uid_map"), *g = read_str("/proc/self/gid_map");
	check(strstr(u, "100000") && strstr(u, "65536"), "uid_map written: %s", u);
	check(strstr(g, "200000") && strstr(g, "1000"), "gid_map written: %s", g);
	check(getuid() == 0, "root in the user namespace");
	free(u), free(g);
	return 0;
}

static void test_idmaps(void)
{
	int p[4];
	if (pipe(p) < 0 || pipe(p + 2) < 0) {
		ok(0, "idmaps: pipes");
		return;
	}
	int rp[2];
	if (pipe2(rp, O_CLOEXEC) < 0)
		return;
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		close(rp[0]);
		report_fd = rp[1];
		_exit(idmap_child(p) == 0 && !child_failed ? 0 : 1);
	}
	close(rp[1]);
	char c;
	struct hutch_err err = { 0 };
	struct ns_idmap u[] = { { 0, 0, 1 }, { 1, 100000, 65536 } },
			g[] = { { 0, 200000, 1000 }, { 1000, 300000, 1 } };
	bool ready = read(p[2], &c, 1) == 1;
	int r = ready ? ns_write_idmaps(pid, u, 2, g, 2, &err) : -1;
	ok(r == 0, "idmaps: ns_write_idmaps (%s)", err.msg);
	char want[64];
	snprintf(want, sizeof(want), "/proc/%d/uid_map", (int)pid);
	r = ns_write_idmaps(pid, u, 2, g, 2, &err);
	ok(r < 0 && strstr(err.msg, want), "idmaps: second write fails naming the file (%s)",
	   err.msg);
	(void)!write(p[1], "g", 1);
	FILE *f = fdopen(rp[0], "r");
	char line[800];
	while (f && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		ok(line[0] == '1', "idmaps: %s", line + 2);
	}
	if (f)
		fclose(f);
	int status = 0;
	waitpid(pid, &status, 0);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "idmaps: child exited cleanly");
	for (int i = 0; i < 4; i++)
		close(p[i]);
}

static int caps_child(void *arg)
{
	(void)arg;
	struct hutch_err err = { 0 };
	gid_t groups[] = { 2000, 3000 };
	struct ns_user u = { .uid = 1000,
			     .gid = 1000,
			     .additional_gids = groups,
			     .n_additional_gids = 2,
			     .has_umask = true,
			     .umask = 027 };
	uint64_t nbs = 1ULL << 10, chown = 1ULL << 0;
	struct ns_caps caps = { .bounding = nbs | chown,
				.effective = nbs,
				.permitted = nbs,
				.inheritable = nbs,
				.ambient = nbs };
	check(ns_switch_user(&u, &err) == 0, "ns_switch_user: %s", err.msg);
	check(ns_apply_caps(&caps, &err) == 0, "ns_apply_caps: %s", err.msg);
	check(ns_set_no_new_privs(&err) == 0, "ns_set_no_new_privs: %s", err.msg);
	uid_t r_, e_, s_;
	check(getresuid(&r_, &e_, &s_) == 0 && r_ == 1000 && e_ == 1000 && s_ == 1000,
	      "uid switched");
	gid_t got[8];
	int n = getgroups(8, got);
	check(n == 2 && got[0] == 2000 && got[1] == 3000, "additional groups set");
	check(umask(0) == 027, "umask set");
	char *st = read_str("/proc/self/status");
	check(strstr(st, "CapBnd:\t0000000000000401") != NULL, "bounding set is CHOWN+NBS");
	check(strstr(st, "CapEff:\t0000000000000400") != NULL, "effective is NBS");
	check(strstr(st, "CapPrm:\t0000000000000400") != NULL, "permitted is NBS");
	check(strstr(st, "CapAmb:\t0000000000000400") != NULL, "ambient is NBS");
	check(strstr(st, "NoNewPrivs:\t1") != NULL, "no_new_privs set");
	free(st);
	return 0;
}

static int sysctl_child(void *arg)
{
	(void)arg;
	struct hutch_err err = { 0 };
	if (unshare(CLONE_NEWUTS | CLONE_NEWIPC) < 0)
		return -errno;
	struct ns_sysctl s[] = { { "kernel.hostname", "hutch-sysctl" },
				 { "kernel.shmmni", "1234" } };
	check(ns_write_sysctls(s, 2, &err) == 0, "ns_write_sysctls: %s", err.msg);
	char host[64] = "";
	gethostname(host, sizeof(host));
	check(strcmp(host, "hutch-sysctl") == 0, "kernel.hostname written (%s)", host);
	check_content("/proc/sys/kernel/shmmni", "1234\n");
	struct ns_sysctl bad[] = { { "kernel..x", "1" } };
	check(ns_write_sysctls(bad, 1, &err) < 0, "'..' in a key refused (%s)", err.msg);
	hutch_err_clear(&err);
	check(ns_set_hostname("hutch-h", "hutch-d", &err) == 0, "ns_set_hostname: %s", err.msg);
	struct utsname un;
	check(uname(&un) == 0 && strcmp(un.nodename, "hutch-h") == 0 &&
		      strcmp(un.domainname, "hutch-d") == 0,
	      "hostname and domainname set");
	check(ns_set_oom_score_adj(getpid(), 321, &err) == 0, "ns_set_oom_score_adj: %s", err.msg);
	check_content("/proc/self/oom_score_adj", "321\n");
	check(ns_join("/proc/self/ns/uts", CLONE_NEWUTS, &err) == 0, "ns_join own uts: %s",
	      err.msg);
	return 0;
}

static int lo_flags(void)
{
	struct ifreq ifr = { 0 };
	strcpy(ifr.ifr_name, "lo");
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int r = s >= 0 && ioctl(s, SIOCGIFFLAGS, &ifr) == 0 ? ifr.ifr_flags : -1;
	if (s >= 0)
		close(s);
	return r;
}

static int net_child(void *arg)
{
	(void)arg;
	struct hutch_err err = { 0 };
	if (unshare(CLONE_NEWNET) < 0)
		return -errno;
	check(lo_flags() >= 0 && !(lo_flags() & IFF_UP), "lo starts down");
	check(net_loopback_up(&err) == 0, "net_loopback_up: %s", err.msg);
	check(lo_flags() >= 0 && (lo_flags() & IFF_UP), "lo is up");
	return 0;
}

static void test_as_root(void)
{
	struct fixture fx;
	memset(&fx, 0, sizeof(fx));
	bool ready = setup_fixture(&fx);
	ok(ready, "fixture created under /tmp");
	if (ready) {
		run_child("rootfs", rootfs_child, &fx);
		char p[PATH_MAX];
		snprintf(p, sizeof(p), "%s/x", fx.host);
		ok(access(p, F_OK) < 0, "nothing created in the host's symlink target");
		test_userns_rootfs(&fx);
		run_child("symlinked /proc", symlink_proc_child, &fx);
		run_child("dangling symlink", dangling_child, &fx);
		ok(access(fx.host2, F_OK) < 0, "dangling symlink target absent on the host");
	}
	rm_rf(fx.base);
	rm_rf(fx.host);
	ok(access(fx.base, F_OK) < 0 && access(fx.host, F_OK) < 0, "temp dirs removed");
	test_idmaps();
	run_child("caps", caps_child, NULL);
	run_child("sysctl", sysctl_child, NULL);
	run_child("net", net_child, NULL);
}

static bool same_mount(const struct ns_mount *a, const struct ns_mount *b)
{
	return a->flags == b->flags && a->clear_flags == b->clear_flags &&
	       a->propagation == b->propagation && a->bind == b->bind &&
	       a->recursive == b->recursive && a->tmpcopyup == b->tmpcopyup &&
	       a->idmap == b->idmap && a->idmap_recursive == b->idmap_recursive &&
	       !strcmp(a->data ? a->data : "", b->data ? b->data : "");
}

/* Writing a spec out (a delegate's config.json) must say what was parsed: options -> m ->
 * options -> m' with m' == m, for every kind of option. */
static void test_format_options(void)
{
	char *cases[][8] = {
		{ "nosuid", "noexec", "nodev", "strictatime", "mode=755", "size=65536k", NULL },
		{ "rbind", "rw", "ridmap", "nosuid", "nodev", NULL },
		{ "bind", "ro", "rprivate", "nosymfollow", "suid", NULL },
		{ "newinstance", "ptmxmode=0666", "mode=0620", "gid=5", "tmpcopyup", NULL },
		{ "ro", "rw", "exec", "noexec", "rslave", "idmap", NULL },
	};
	struct hutch_err err = { 0 };
	for (size_t c = 0; c < ARRAY_SIZE(cases); c++) {
		struct ns_mount m = { 0 }, back = { 0 };
		size_t n = 0, k = 0;
		while (cases[c][n])
			n++;
		bool good = ns_mount_parse_options(&m, cases[c], n, &err) == 0;
		char **opts = ns_mount_format_options(&m, &k);
		good = good && ns_mount_parse_options(&back, opts, k, &err) == 0 &&
		       same_mount(&m, &back);
		ok(good, "mount options written out read back the same (%s ... -> %s ...)",
		   cases[c][0], opts[0] ? opts[0] : "");
		hutch_strv_free(opts);
		free(m.data);
		free(back.data);
	}
}

/* /etc/subuid lines: by name or by uid, comments and malformed lines skipped. */
static void test_subids(void)
{
	const char *text = "# comment\nbob:1000:10\nalice:bad\nalice:100000:65536\n"
			   "1001:200000:65536\nhuge:4294967290:100\n";
	struct ns_idmap m = { 0 };
	ok(ns_subid_find(text, "alice", 5000, &m) == 0 && m.container_id == 100000 &&
		   m.host_id == 100000 && m.size == 65536,
	   "subid: by name, skipping a malformed line, mapped onto itself");
	ok(ns_subid_find(text, "nobody-here", 1001, &m) == 0 && m.host_id == 200000,
	   "subid: by uid when the name has none");
	ok(ns_subid_find(text, NULL, 1001, &m) == 0 && m.host_id == 200000,
	   "subid: by uid without a name");
	ok(ns_subid_find(text, "al", 7, &m) == -ENOENT, "subid: a name's prefix is not it");
	ok(ns_subid_find(text, "huge", 7, &m) == -ENOENT, "subid: a range past 2^32 is refused");
	ok(ns_subid_find("", "alice", 1, &m) == -ENOENT, "subid: an empty file has none");
	ok(hutch_init_userns_map("         0          0 4294967295\n"),
	   "userns: the initial namespace's map");
	ok(!hutch_init_userns_map("         0       1001          1\n"),
	   "userns: unshare -r's map is not");
	ok(!hutch_init_userns_map(NULL) && !hutch_init_userns_map(""), "userns: no map is not");
}

int main(void)
{
	test_subids();
	test_parse_options();
	test_format_options();
	test_split_path();
	test_caps_and_names();
	test_sysctl_rules();
	test_fd_passing();
	test_join_checks();
	if (geteuid() == 0)
		test_as_root();
	else
		ok(1, "# SKIP root-only tests (mounts, pivot, identity, sysctls, net)");
	return tap_done();
}
