// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests for the mount plans, without root: the OCI planner's ops from a spec and made
 * up facts (file and directory binds, ro binds, /proc, missing sources, cgroup v1 and v2,
 * sysfs), and ns_mount_apply against a temp dir through a hutch_sys recorder that records
 * each mount instead of making it (symlinked destinations, fallbacks, the order of calls).
 */
#include "tap.h"

#include "hutch-sys.h"
#include "ns-internal.h"

#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>

/* ---- rendering a plan as one line, for comparing ---- */

static const char *const kind_names[] = {
	[NS_OP_REFUSE_SYMLINKS] = "nosymlinks",
	[NS_OP_MKDIR] = "mkdir",
	[NS_OP_MKFILE] = "mkfile",
	[NS_OP_CHECK_DEST] = "check",
	[NS_OP_HOLD] = "hold",
	[NS_OP_MOUNT] = "mount",
	[NS_OP_BIND] = "bind",
	[NS_OP_REMOUNT_BIND] = "remount-bind",
	[NS_OP_REMOUNT] = "remount",
	[NS_OP_PROPAGATION] = "propagation",
	[NS_OP_CHECK_PROCFS] = "procfs",
	[NS_OP_COPYUP] = "copyup",
	[NS_OP_SYMLINK] = "symlink",
	[NS_OP_SETATTR] = "setattr",
	[NS_OP_FAIL] = "fail",
	[NS_OP_OPEN] = "open",
	[NS_OP_OPEN_AT] = "open-at",
	[NS_OP_CLOSE] = "close",
	[NS_OP_TMPFS] = "tmpfs",
	[NS_OP_CREATE_IN] = "create-in",
	[NS_OP_SET_RDONLY] = "ro",
	[NS_OP_CLONE] = "clone",
	[NS_OP_MKPOINT] = "mkpoint",
	[NS_OP_MOVE] = "move",
	[NS_OP_BIND_SLOTS] = "bind-fd",
	[NS_OP_MOUNT_AT] = "mount-at",
	[NS_OP_UMOUNT] = "umount",
	[NS_OP_TEST] = "test",
};

static void append(char *buf, size_t cap, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void append(char *buf, size_t cap, const char *fmt, ...)
{
	size_t l = strlen(buf);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf + l, cap - l, fmt, ap);
	va_end(ap);
}

/* "mkdir /a; bind /src /a; ..."; "+op" only when the fallback mount worked, "-op" when not. */
static const char *render(const struct ns_mount_plan *p)
{
	static char buf[4096];
	buf[0] = '\0';
	for (size_t i = 0; i < p->n; i++) {
		const struct ns_mount_op *op = &p->ops[i];
		const char *br = op->branch == NS_BRANCH_MOUNTED     ? "+"
				 : op->branch == NS_BRANCH_FELL_BACK ? "-"
								     : "";
		append(buf, sizeof(buf), "%s%s%s", i ? "; " : "", br, kind_names[op->kind]);
		switch (op->kind) {
		case NS_OP_MOUNT:
			append(buf, sizeof(buf), " %s%s", op->fstype, op->fallback ? "?" : "");
			break;
		case NS_OP_BIND:
		case NS_OP_SYMLINK:
			append(buf, sizeof(buf), " %s", op->source);
			break;
		case NS_OP_FAIL:
			append(buf, sizeof(buf), " %s", op->label);
			continue;
		case NS_OP_CHECK_DEST:
			append(buf, sizeof(buf), "%s", op->is_proc ? "(proc)" : "");
			break;
		case NS_OP_REMOUNT_BIND:
		case NS_OP_PROPAGATION:
			append(buf, sizeof(buf), " %#lx", op->flags);
			break;
		case NS_OP_SETATTR:
			append(buf, sizeof(buf), " +%#lx-%#lx", op->flags, op->clear);
			break;
		case NS_OP_SET_RDONLY:
			append(buf, sizeof(buf), "%s",
			       op->flags & NS_RDONLY_ALONE ? "(alone)" : "");
			break;
		default:
			break;
		}
		if (op->target)
			append(buf, sizeof(buf), " %s", op->target);
		if (op->slot >= 0)
			append(buf, sizeof(buf), " #%d", op->slot);
	}
	return buf;
}

/* ---- made up facts ---- */

static int fake_kind(void *ctx, const char *path, int tree)
{
	(void)ctx;
	(void)tree;
	if (strstr(path, "missing"))
		return -ENOENT;
	return strstr(path, ".file") ? NS_SOURCE_FILE : NS_SOURCE_DIR;
}

static struct ns_mount_facts facts_v2 = { .source_kind = fake_kind, .cgroup2 = true };
static struct ns_mount_facts facts_v1 = {
	.source_kind = fake_kind,
	.cgroup2_unified = true,
	.self_cgroup = "12:cpu,cpuacct:/a\n3:name=systemd:/b\n0::/c\n",
};

static struct ns_mount mnt(const char *dest, const char *type, const char *src, char **opts,
			   size_t n)
{
	struct ns_mount m = { .destination = (char *)dest,
			      .type = (char *)type,
			      .source = (char *)src };
	struct hutch_err err = { 0 };
	if (ns_mount_parse_options(&m, opts, n, &err) < 0)
		printf("# options: %s\n", err.msg);
	return m;
}

static const char *plan1(const struct ns_mount *m, const struct ns_mount_facts *f,
			 struct ns_mount_plan *p)
{
	struct ns_rootfs cfg = { .rootfs = "/r", .mounts = m, .n_mounts = 1 };
	*p = (struct ns_mount_plan){ 0 };
	ns_mount_plan_rootfs(&cfg, f, p);
	return render(p);
}

static void expect_plan(struct ns_mount m, const struct ns_mount_facts *f, const char *want,
			const char *what)
{
	struct ns_mount_plan p;
	const char *got = plan1(&m, f, &p);
	ok(strcmp(got, want) == 0, "plan: %s", what);
	if (strcmp(got, want) != 0)
		printf("#   got:  %s\n#   want: %s\n", got, want);
	ns_mount_plan_free(&p);
}

static char *o_bind[] = { "bind" };
static char *o_ro_rbind[] = { "rbind", "ro", "rprivate" };
static char *o_ro_sys[] = { "nosuid", "noexec", "nodev", "ro" };
static char *o_copyup[] = { "tmpcopyup", "ro" };

static void test_plan_binds(void)
{
	expect_plan(mnt("/data", "bind", "/src", o_bind, 1), &facts_v2,
		    "mkdir /data; check /data; bind /src /data", "bind of a directory");
	expect_plan(mnt("/etc/x.conf", "bind", "/h/x.file", o_bind, 1), &facts_v2,
		    "mkfile /etc/x.conf; check /etc/x.conf; bind /h/x.file /etc/x.conf",
		    "bind of a file needs a file mount point");
	expect_plan(mnt("/ro", "bind", "/src", o_ro_rbind, 3), &facts_v2,
		    "mkdir /ro; check /ro; bind /src /ro; remount-bind 0x1 /ro; "
		    "propagation 0x44000 /ro",
		    "ro bind: bind, remount read-only, then propagation");
	expect_plan(mnt("/deep/er/dir", NULL, "/src", o_bind, 1), &facts_v2,
		    "mkdir /deep/er/dir; check /deep/er/dir; bind /src /deep/er/dir",
		    "a missing mount point is a mkdir op (bind without a type)");
	expect_plan(mnt("/x", "bind", "/missing", o_bind, 1), &facts_v2, "fail stat /missing",
		    "a missing source fails where it would have been bound");
	expect_plan(mnt("x", "tmpfs", NULL, NULL, 0), &facts_v2,
		    "fail destination must be an absolute path", "a relative destination");
	expect_plan(mnt("/x", "bind", NULL, o_bind, 1), &facts_v2,
		    "fail bind mount without a source", "a bind without a source");
	expect_plan(mnt("/x", NULL, NULL, NULL, 0), &facts_v2, "fail mount without a type",
		    "a mount without a type");
}

static void test_plan_kernel_fs(void)
{
	expect_plan(mnt("/proc", "proc", "proc", NULL, 0), &facts_v2,
		    "nosymlinks /proc; mkdir /proc; check(proc) /proc; mount proc /proc; "
		    "procfs /proc",
		    "/proc: symlinks refused, checked to be procfs once mounted");
	expect_plan(mnt("/proc/cpuinfo", "bind", "/l/cpuinfo.file", o_bind, 1), &facts_v2,
		    "nosymlinks /proc/cpuinfo; mkfile /proc/cpuinfo; check /proc/cpuinfo; "
		    "bind /l/cpuinfo.file /proc/cpuinfo",
		    "a bind under /proc: symlinks refused, destination checked");
	expect_plan(mnt("/sys", "sysfs", "sysfs", o_ro_sys, 4), &facts_v2,
		    "nosymlinks /sys; mkdir /sys; check /sys; mount sysfs? /sys; -mkdir /sys; "
		    "-check /sys; -bind /sys /sys; -remount-bind 0xf /sys",
		    "sysfs falls back to the host's, bound read-only");
	expect_plan(mnt("/t", "tmpfs", "tmpfs", o_copyup, 2), &facts_v2,
		    "mkdir /t; check /t; hold /t; mount tmpfs /t; copyup /t; remount /t",
		    "tmpcopyup: held, mounted rw, copied, then read-only");
	struct ns_mount_plan p;
	struct ns_mount m = mnt("/t", "tmpfs", "tmpfs", o_copyup, 2);
	plan1(&m, &facts_v2, &p);
	ok(p.n == 6 && !(p.ops[3].flags & MS_RDONLY) && (p.ops[5].flags & MS_RDONLY),
	   "plan: tmpcopyup's mount is rw, its remount ro");
	ns_mount_plan_free(&p);
}

static void test_plan_cgroups(void)
{
	expect_plan(mnt("/sys/fs/cgroup", "cgroup", "cgroup", NULL, 0), &facts_v2,
		    "nosymlinks /sys/fs/cgroup; mkdir /sys/fs/cgroup; mount cgroup2? "
		    "/sys/fs/cgroup; -mkdir /sys/fs/cgroup; -check /sys/fs/cgroup; "
		    "-bind /sys/fs/cgroup /sys/fs/cgroup",
		    "cgroup on a v2 host: cgroup2, or the host's bound");
	expect_plan(
		mnt("/cg", "cgroup", "cgroup", o_ro_sys, 4), &facts_v1,
		"mkdir /cg; mount tmpfs /cg; mkdir /cg/cpu,cpuacct; mount cgroup? "
		"/cg/cpu,cpuacct; -mkdir /cg/cpu,cpuacct; -check /cg/cpu,cpuacct; "
		"-bind /sys/fs/cgroup/cpu,cpuacct /cg/cpu,cpuacct; "
		"-remount-bind 0xf /cg/cpu,cpuacct; symlink cpu,cpuacct /cg/cpu; "
		"symlink cpu,cpuacct /cg/cpuacct; mkdir /cg/systemd; mount cgroup? /cg/systemd; "
		"-mkdir /cg/systemd; -check /cg/systemd; -bind /sys/fs/cgroup/systemd "
		"/cg/systemd; -remount-bind 0xf /cg/systemd; mkdir /cg/unified; "
		"mount cgroup2? /cg/unified; -mkdir /cg/unified; -check /cg/unified; "
		"-bind /sys/fs/cgroup/unified /cg/unified; -remount-bind 0xf /cg/unified; "
		"remount-bind 0x1 /cg",
		"cgroup on a hybrid host: a tmpfs of hierarchies, then read-only");
	struct ns_cgroup_dir own = { "name=systemd", "/sys/fs/cgroup/systemd/c1" };
	struct ns_mount m = mnt("/cg", "cgroup", "cgroup", NULL, 0);
	struct ns_rootfs cfg = {
		.mounts = &m, .n_mounts = 1, .cgroup_dirs = &own, .n_cgroup_dirs = 1
	};
	struct ns_mount_facts f = facts_v1;
	f.cgroup2_unified = false;
	struct ns_mount_plan p = { 0 };
	ns_mount_plan_rootfs(&cfg, &f, &p);
	ok(strstr(render(&p), "mkdir /cg/systemd; mkdir /cg/systemd; check /cg/systemd; "
			      "bind /sys/fs/cgroup/systemd/c1 /cg/systemd") != NULL &&
		   !strstr(render(&p), "unified"),
	   "plan: v1 with the container's own cgroup dir binds it");
	ns_mount_plan_free(&p);
	/* Hybrid, with the container's unified directory: bound, never a cgroup2 mount (which,
	 * without a cgroup namespace, would show the host's whole cgroup2 tree). */
	struct ns_cgroup_dir owns[2] = { own, { "", "/sys/fs/cgroup/unified/c1" } };
	cfg.cgroup_dirs = owns;
	cfg.n_cgroup_dirs = 2;
	f.cgroup2_unified = true;
	p = (struct ns_mount_plan){ 0 };
	ns_mount_plan_rootfs(&cfg, &f, &p);
	ok(strstr(render(&p), "check /cg/unified; bind /sys/fs/cgroup/unified/c1 /cg/unified") !=
			   NULL &&
		   !strstr(render(&p), "cgroup2"),
	   "plan: hybrid with the container's own unified dir binds it (%s)", render(&p));
	ns_mount_plan_free(&p);
	cfg.cgroup_dirs = &own;
	cfg.n_cgroup_dirs = 1;
	f.cgroup2_unified = false;
	f.self_cgroup = NULL;
	f.self_cgroup_err = (struct hutch_err){ .code = EACCES, .msg = "read /proc/self/cgroup" };
	p = (struct ns_mount_plan){ 0 };
	ns_mount_plan_rootfs(&cfg, &f, &p);
	is_str(render(&p), "mkdir /cg; mount tmpfs /cg; fail read /proc/self/cgroup",
	       "plan: v1 without /proc/self/cgroup fails after the tmpfs, as before");
	ns_mount_plan_free(&p);
}

static void test_plan_dev(void)
{
	struct ns_mount ms[2] = { mnt("/dev", "tmpfs", "tmpfs", NULL, 0),
				  mnt("/dev//", "bind", "/dev", o_bind, 1) };
	struct ns_rootfs cfg = { .mounts = ms, .n_mounts = 1 };
	struct ns_mount_plan p = { 0 };
	ns_mount_plan_rootfs(&cfg, &facts_v2, &p);
	ok(!p.dev_bound, "plan: a tmpfs on /dev still gets /dev populated");
	ns_mount_plan_free(&p);
	cfg.n_mounts = 2;
	ns_mount_plan_rootfs(&cfg, &facts_v2, &p);
	ok(p.dev_bound, "plan: a bind of a whole /dev is not populated");
	ok(p.ops[0].spec && !strcmp(p.ops[0].spec, "/dev") &&
		   !strcmp(p.ops[p.n - 1].spec, "/dev//"),
	   "plan: each op names its spec mount");
	ns_mount_plan_free(&p);
}

static void test_shared_mount(void)
{
	static const char mi[] = "27 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw\n"
				 "40 27 0:40 / /srv rw,relatime - tmpfs tmpfs rw\n"
				 "41 40 0:41 / /srv/sh rw shared:7 master:2 - tmpfs tmpfs rw\n"
				 "42 27 0:42 / /srvx rw - tmpfs tmpfs rw,shared:9\n";
	char *t;
	ok(ns_on_shared_mount("/home/x", t = strdup(mi)), "shared: under a shared /");
	free(t);
	ok(!ns_on_shared_mount("/srv/a/rootfs", t = strdup(mi)), "shared: a private mount below");
	free(t);
	ok(ns_on_shared_mount("/srv/sh/rootfs", t = strdup(mi)), "shared: the deepest one counts");
	free(t);
	ok(!ns_on_shared_mount("/srvx/r", t = strdup(mi)), "shared: not from the fs options");
	free(t);
}

static char *o_ro[] = { "nosuid", "ro" };
static char *o_rro[] = { "rro", "rnosuid" };

/* A read-only /dev or tmpfs is mounted rw, and made ro at the end; recursive options follow
 * their mount, or wait with it. */
static void test_plan_deferred(void)
{
	struct ns_mount ms[] = { mnt("/dev", "tmpfs", "tmpfs", o_ro, 2),
				 mnt("/data", "bind", "/src", o_rro, 2),
				 mnt("/t", "tmpfs", "tmpfs", o_rro, 2),
				 mnt("/sys", "sysfs", "sysfs", o_ro_sys, 4) };
	expect_plan(ms[0], &facts_v2, "nosymlinks /dev; mkdir /dev; check /dev; mount tmpfs /dev",
		    "a ro /dev: mounted as is");
	struct ns_mount_plan p;
	plan1(&ms[0], &facts_v2, &p);
	ok(p.n == 4 && p.ops[3].flags == MS_NOSUID, "plan: a ro /dev is mounted rw (%#lx)",
	   p.n == 4 ? p.ops[3].flags : 0);
	ns_mount_plan_free(&p);
	expect_plan(ms[1], &facts_v2,
		    "mkdir /data; check /data; bind /src /data; setattr +0x3-0 /data",
		    "rro, rnosuid: mount_setattr of the bind, at once");
	expect_plan(ms[2], &facts_v2, "mkdir /t; check /t; mount tmpfs /t",
		    "a tmpfs's recursive options wait");
	p = (struct ns_mount_plan){ 0 };
	ns_mount_plan_finish(ms, ARRAY_SIZE(ms), &p);
	const char *got = render(&p);
	ok(!strcmp(got, "remount-bind 0x1 /dev; setattr +0x3-0 /t"),
	   "plan: the end makes /dev ro and the tmpfs's options (%s)", got);
	ns_mount_plan_free(&p);
}

/* ---- host mode's view ---- */

static int view_kind(void *ctx, const char *path, int tree)
{
	(void)ctx;
	(void)tree;
	static const char *const dirs[] = { "/mnt", "/work", "/work/secret", "/tmp", "/tmp/tool" };
	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++)
		if (!strcmp(path, dirs[i]))
			return NS_SOURCE_DIR;
	return strstr(path, ".file") ? NS_SOURCE_FILE : -ENOENT;
}

static int files_only(void *ctx, const char *path, int tree)
{
	(void)ctx;
	(void)tree;
	return strstr(path, ".file") ? NS_SOURCE_FILE : -ENOENT;
}

static char *v_read[] = { "/work/ro", "/opt/x", "/tmp/tool" };
static char *v_rw[] = { "/work" };
static char *v_deny[] = { "/work/secret", "/work/key.file", "/nope", "/elsewhere/d" };
static const struct ns_view_tmpfs v_tmpfs[] = { { "/tmp", 1 << 20 }, { "/work/t", 1 << 20 } };
static const struct ns_view_link v_links[] = { { "/bin", "usr/bin" }, { "/work/l", "x" } };
static const struct ns_view view = {
	.read = v_read,
	.n_read = 3,
	.rw = v_rw,
	.n_rw = 1,
	.deny = v_deny,
	.n_deny = 4,
	.tmpfs = v_tmpfs,
	.n_tmpfs = 2,
	.links = v_links,
	.n_links = 2,
};

static void test_plan_view(void)
{
	struct ns_mount_facts f = { .source_kind = view_kind };
	struct ns_mount_plan p = { 0 };
	ns_mount_plan_view(&view, &f, &p);
	const char *want =
		"propagation 0x84000 /; "
		/* denied files: held, then bound from a staged empty file */
		"open /work/key.file #0; open /nope #1; open /elsewhere/d #2; tmpfs #3; create-in; "
		"ro #3; move /mnt #3; open-at #4; bind-fd /work/key.file #0; bind-fd /nope #1; "
		"bind-fd /elsewhere/d #2; umount /mnt; close #0; close #1; close #2; "
		/* every tree: /work/ro is inside rw (rw wins) */
		"clone /opt/x #5; ro #5; clone /tmp/tool #6; ro #6; clone /work #7; ro /; "
		/* the new root, staged on /mnt; the link in /work is the tree's own */
		"tmpfs #8; move /mnt #8; symlink usr/bin /mnt/bin; "
		/* shallow first, a tmpfs before a tree at one depth; a tmpfs in a tree: on top,
		 * nothing made in the tree for it */
		"mkpoint /mnt/tmp; mount-at /mnt/tmp; mkpoint /mnt/work #7; move /mnt/work #7; "
		"mount-at /mnt/work/t; mkpoint /mnt/opt/x #5; move /mnt/opt/x #5; "
		"mkpoint /mnt/tmp/tool #6; move /mnt/tmp/tool #6; "
		/* deny wins: last, on whatever is there by then; nothing for what the root lacks */
		"test /mnt/work/secret; mkpoint /mnt/work/secret; tmpfs #9; move /mnt/work/secret "
		"#9; "
		"test /mnt/work/key.file; mkpoint /mnt/work/key.file; tmpfs #9; "
		"move /mnt/work/key.file #9; "
		/* the root alone turns read-only: not the trees in it */
		"ro(alone) #8";
	ok(strcmp(render(&p), want) == 0, "view: a new root: trees, tmpfs and links, deny on top");
	if (strcmp(render(&p), want) != 0)
		printf("#   got:  %s\n#   want: %s\n", render(&p), want);
	ok(p.view_root && !strcmp(p.view_root, "/mnt"), "view: its root is staged on /mnt");
	size_t n_missing = 0, n_dir = 0;
	for (size_t i = 0; i < p.n; i++) {
		n_missing += p.ops[i].kind == NS_OP_MKPOINT && p.ops[i].branch == NS_BRANCH_MISSING;
		n_dir += p.ops[i].kind == NS_OP_MOVE &&
			 p.ops[i].branch == (NS_BRANCH_DIR | NS_BRANCH_MISSING);
	}
	ok(n_missing == 2 && n_dir == 2,
	   "view: a denied path gets a mount point only when missing, a tmpfs unless a file");
	ns_mount_plan_free(&p);

	struct ns_view none = { .deny = v_deny + 1, .n_deny = 1 };
	f.source_kind = files_only; /* no /mnt, /media, /srv nor /tmp */
	ns_mount_plan_view(&none, &f, &p);
	ok(!strcmp(render(&p), "fail view: no directory to stage the new root on") && !p.view_root,
	   "view: without a place to stage the root on, it fails");
	ns_mount_plan_free(&p);

	/* A denied path inside another (or twice): the outer cover hides it, and one would be
	 * made through it (read-only). */
	static char *rw[] = { "/work" };
	static char *nested[] = { "/work/secret/in", "/work/secret", "/work/secret" };
	struct ns_view inner = { .rw = rw, .n_rw = 1, .deny = nested, .n_deny = 3 };
	f.source_kind = view_kind;
	ns_mount_plan_view(&inner, &f, &p);
	size_t covers = 0;
	for (size_t i = 0; i < p.n; i++)
		covers += p.ops[i].kind == NS_OP_TEST;
	ok(covers == 1 && strstr(render(&p), "test /mnt/work/secret;"),
	   "view: one cover for a denied path inside another, or named twice");
	ns_mount_plan_free(&p);
	/* A tree inside a denied directory: the denied directory is covered all the same. */
	static char *inside[] = { "/work/secret/in" }, *outer[] = { "/work/secret" };
	struct ns_view in = { .read = inside, .n_read = 1, .deny = outer, .n_deny = 1 };
	ns_mount_plan_view(&in, &f, &p);
	ok(strstr(render(&p), "move /mnt/work/secret/in #0; test /mnt/work/secret; ") != NULL,
	   "view: a denied directory with a tree in it is covered, after the tree");
	ns_mount_plan_free(&p);

	/* The bridge's files go over the host's before /etc is cloned. */
	static char *etc[] = { "/etc" };
	static const struct ns_view_bind binds[] = { { "/run/x/hosts", "/etc/hosts" } };
	struct ns_view bridge = { .read = etc, .n_read = 1, .binds = binds, .n_binds = 1 };
	ns_mount_plan_view(&bridge, &f, &p);
	ok(!strncmp(
		   render(&p),
		   "propagation 0x84000 /; mkfile /etc/hosts; bind /run/x/hosts /etc/hosts; "
		   "clone /etc #0",
		   strlen("propagation 0x84000 /; mkfile /etc/hosts; bind /run/x/hosts /etc/hosts; "
			  "clone /etc #0")),
	   "view: files bound over the host's first, then cloned (%s)", render(&p));
	ns_mount_plan_free(&p);
}

/* Every directory between an rw root and a denied path is a mount point: none can be renamed. */
static void test_plan_view_pins(void)
{
	static char *rw[] = { "/a", "/a/b", "/c" };
	static char *deny[] = { "/a/b/c/d/secret", "/a/x/s", "/a/b/c/k", "/o/p/q", "/c/y", "/c" };
	const struct ns_view v = { .rw = rw, .n_rw = 3, .deny = deny, .n_deny = 6 };
	struct ns_mount_facts f = { .source_kind = fake_kind };
	struct ns_mount_plan p = { 0 };
	ns_mount_plan_view(&v, &f, &p);
	const char *got = render(&p);
	/* /a/b is an rw root (attached there anyway); /o/p is in no rw tree; /c/y and /c have no
	 * directory between */
	const char *want = "propagation 0x84000 /; clone /a/x #0; move /a/x #0; clone /a/b/c #0; "
			   "move /a/b/c #0; clone /a/b/c/d #0; move /a/b/c/d #0; clone /a #1; ";
	ok(!strncmp(got, want, strlen(want)),
	   "view: the directories between rw roots and denied paths pinned, shallow first, once");
	if (strncmp(got, want, strlen(want)))
		printf("#   got:  %s\n#   want: %s...\n", got, want);
	ns_mount_plan_free(&p);
}

/* ---- apply through a recorder ---- */

struct call {
	char what[16], source[PATH_MAX], target[PATH_MAX], fstype[32];
	unsigned long flags;
};
static struct call calls[64];
static size_t n_calls;
static char root[PATH_MAX];
static int fail_errno;	      /* mount of fail_type fails with it */
static const char *fail_type; /* NULL: nothing fails */

/* /proc/self/fd/N as the path it names, relative to root when inside it. */
static void resolve(const char *target, char out[PATH_MAX])
{
	char buf[PATH_MAX], link[64];
	ssize_t n = -1;
	const char *rest = "";
	if (target && hutch_str_has_prefix(target, "/proc/self/fd/")) {
		/* "/proc/self/fd/N/a/b": the root fd's path, then a/b */
		const char *slash = strchr(target + strlen("/proc/self/fd/"), '/');
		size_t l = slash ? (size_t)(slash - target) : strlen(target);
		snprintf(link, sizeof(link), "%.*s", (int)l, target);
		rest = slash ? slash : "";
		n = readlink(link, buf, sizeof(buf) - 1);
	}
	if (n < 0)
		snprintf(buf, sizeof(buf), "%s", target ? target : "");
	else
		snprintf(buf + n, sizeof(buf) - (size_t)n, "%s", strcmp(rest, "/") ? rest : "");
	size_t l = strlen(root);
	const char *rel = !strncmp(buf, root, l) ? buf + l : buf;
	snprintf(out, PATH_MAX, "%s", *rel ? rel : "/");
}

static int rec_mount(const char *source, const char *target, const char *fstype,
		     unsigned long flags, const void *data)
{
	(void)data;
	struct call *c = &calls[n_calls < 63 ? n_calls++ : 63];
	snprintf(c->what, sizeof(c->what), "%s",
		 flags & MS_REMOUNT ? "remount"
		 : flags & MS_BIND  ? "bind"
		 : fstype	    ? "mount"
				    : "propagation");
	if (source && hutch_str_has_prefix(source, "/proc/self/fd/"))
		resolve(source, c->source);
	else
		snprintf(c->source, sizeof(c->source), "%s", source ? source : "");
	snprintf(c->fstype, sizeof(c->fstype), "%s", fstype ? fstype : "");
	resolve(target, c->target);
	c->flags = flags;
	if (fail_type && fstype && !strcmp(fstype, fail_type)) {
		errno = fail_errno;
		return -1;
	}
	return 0;
}

static struct hutch_sys recorder;

static const char *rendered_calls(void)
{
	static char buf[4096];
	buf[0] = '\0';
	for (size_t i = 0; i < n_calls; i++) {
		const struct call *c = &calls[i];
		append(buf, sizeof(buf), "%s%s", i ? "; " : "", c->what);
		if (!strcmp(c->what, "bind") || !strcmp(c->what, "mount"))
			append(buf, sizeof(buf), " %s", *c->fstype ? c->fstype : c->source);
		if (*c->target)
			append(buf, sizeof(buf), " %s", c->target);
	}
	return buf;
}

/* The view's calls: what, and where (a path, or the path of fd when path is empty). */
static struct call *record(const char *what, int fd, const char *path)
{
	struct call *c = &calls[n_calls < 63 ? n_calls++ : 63];
	memset(c, 0, sizeof(*c));
	snprintf(c->what, sizeof(c->what), "%s", what);
	char p[PATH_MAX * 2];
	if (path && *path)
		snprintf(p, sizeof(p), "/proc/self/fd/%d/%s", fd, path);
	else if (fd >= 0)
		snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	else
		p[0] = '\0';
	if (*p)
		resolve(p, c->target);
	return c;
}

static int rec_umount2(const char *target, int flags)
{
	(void)flags;
	resolve(target, record("umount", -1, NULL)->target);
	return 0;
}

static int rec_open_tree(int dirfd, const char *path, unsigned int flags)
{
	(void)flags;
	record("clone", dirfd, path);
	return openat(dirfd, path, O_PATH | O_CLOEXEC);
}

static int rec_move_mount(int from, const char *from_path, int to, const char *to_path,
			  unsigned int flags)
{
	(void)from;
	(void)from_path;
	(void)flags;
	record("move", to, to_path);
	return 0;
}

static int rec_mount_setattr(int dirfd, const char *path, unsigned int flags, void *attr,
			     size_t size)
{
	(void)flags;
	(void)attr;
	(void)size;
	record("ro", dirfd, path);
	return 0;
}

static int rec_fsopen(const char *fstype, unsigned int flags)
{
	(void)fstype;
	(void)flags;
	return open("/dev/null", O_RDONLY | O_CLOEXEC);
}

static int rec_fsconfig(int fd, unsigned int cmd, const char *key, const void *value, int aux)
{
	(void)fd;
	(void)cmd;
	(void)key;
	(void)value;
	(void)aux;
	return 0;
}

/* A "tmpfs": a new directory in the root, /.tN. */
static int rec_fsmount(int fd, unsigned int flags, unsigned int attrs)
{
	(void)fd;
	(void)flags;
	(void)attrs;
	static int n;
	char p[PATH_MAX * 2];
	snprintf(p, sizeof(p), "%s/.t%d", root, n++);
	record("tmpfs", -1, NULL);
	if (mkdir(p, 0700) < 0)
		return -1;
	return open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
}

static int rm_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	return remove(path);
}

static void rm_rf_root(const char *dir)
{
	nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	mkdir(dir, 0700);
}

static int apply_in_root(const struct ns_mount *ms, size_t n, const struct ns_mount_facts *f,
			 struct hutch_err *err)
{
	struct ns_rootfs cfg = { .rootfs = root, .mounts = ms, .n_mounts = n };
	struct ns_mount_plan p = { 0 };
	ns_mount_plan_rootfs(&cfg, f, &p);
	int rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	n_calls = 0;
	hutch_sys = &recorder;
	int r = ns_mount_apply(rootfd, p.ops, p.n, err);
	hutch_sys = &hutch_sys_real;
	close(rootfd);
	ns_mount_plan_free(&p);
	return r;
}

static bool exists(const char *rel, mode_t type)
{
	char p[PATH_MAX * 2];
	struct stat st;
	snprintf(p, sizeof(p), "%s%s", root, rel);
	return lstat(p, &st) == 0 && (st.st_mode & S_IFMT) == type;
}

static void test_apply(void)
{
	struct hutch_err err = { 0 };
	struct ns_mount ms[] = {
		mnt("/a/b", "bind", "/src", o_ro_rbind, 3),
		mnt("/etc/x.conf", "bind", "/h/x.file", o_bind, 1),
		mnt("/tmp", "tmpfs", "tmpfs", NULL, 0),
	};
	int r = apply_in_root(ms, 3, &facts_v2, &err);
	ok(r == 0, "apply: binds and a tmpfs (%s)", err.msg);
	is_str(rendered_calls(),
	       "bind /src /a/b; remount /a/b; propagation /a/b; bind /h/x.file /etc/x.conf; "
	       "mount tmpfs /tmp",
	       "apply: the recorder saw the calls in order, on the resolved mount points");
	ok(n_calls >= 2 && (calls[0].flags & MS_REC) && (calls[1].flags & MS_RDONLY),
	   "apply: rbind is recursive, its remount read-only");
	ok(exists("/a/b", S_IFDIR) && exists("/etc/x.conf", S_IFREG) && exists("/tmp", S_IFDIR),
	   "apply: missing mount points made, a file for the file");

	struct ns_mount sys = mnt("/sys/fs/cgroup", "cgroup2", "cgroup", NULL, 0);
	fail_type = "cgroup2";
	fail_errno = EPERM;
	r = apply_in_root(&sys, 1, &facts_v2, &err);
	ok(r == 0, "apply: a refused cgroup2 falls back (%s)", err.msg);
	is_str(rendered_calls(), "mount cgroup2 /sys/fs/cgroup; bind /sys/fs/cgroup /sys/fs/cgroup",
	       "apply: the fallback bind follows the refused mount");
	fail_errno = EINVAL;
	r = apply_in_root(&sys, 1, &facts_v2, &err);
	is_str(err.msg, "mount /sys/fs/cgroup: mount cgroup2: Invalid argument",
	       "apply: other errors do not fall back");
	fail_type = NULL;

	struct ns_mount proc = mnt("/proc", "proc", "proc", NULL, 0);
	r = apply_in_root(&proc, 1, &facts_v2, &err);
	ok(r < 0 && strstr(err.msg, "mount /proc: /proc is not a procfs") && n_calls == 1,
	   "apply: a proc mount is checked to be procfs (%s)", err.msg);
	struct ns_mount miss = mnt("/m", "bind", "/missing", o_bind, 1);
	r = apply_in_root(&miss, 1, &facts_v2, &err);
	is_str(err.msg, "mount /m: stat /missing: No such file or directory",
	       "apply: a missing source names it");
}

static void test_apply_symlinks(const char *outside)
{
	struct hutch_err err = { 0 };
	char p[PATH_MAX * 2];
	snprintf(p, sizeof(p), "%s/dev", root);
	ok(symlink(outside, p) == 0, "apply: a rootfs with /dev a symlink to %s", outside);
	struct ns_mount shm = mnt("/dev/shm", "tmpfs", "tmpfs", NULL, 0);
	int r = apply_in_root(&shm, 1, &facts_v2, &err);
	is_str(err.msg, "mount /dev/shm: mount destination /dev is a symlink",
	       "apply: a symlinked destination under /dev is refused");
	ok(r == -ELOOP && n_calls == 0, "apply: nothing was mounted");
	snprintf(p, sizeof(p), "%s/shm", outside);
	ok(access(p, F_OK) < 0, "apply: nothing was made outside the rootfs");

	/* Elsewhere a symlink is followed, but inside the rootfs: /data -> /etc is root/etc. */
	snprintf(p, sizeof(p), "%s/data", root);
	ok(symlink(outside, p) == 0, "apply: /data a symlink to %s", outside);
	struct ns_mount data = mnt("/data/x", "bind", "/src", o_bind, 1);
	r = apply_in_root(&data, 1, &facts_v2, &err);
	char want[PATH_MAX * 2];
	snprintf(want, sizeof(want), "bind /src %s/x", outside);
	ok(r == 0 && n_calls == 1 && !strcmp(rendered_calls(), want),
	   "apply: the symlink is resolved inside the rootfs (%s)", rendered_calls());
	snprintf(p, sizeof(p), "%s/x", outside);
	ok(access(p, F_OK) < 0, "apply: the host's %s is untouched", outside);
	ok(exists(want + strlen("bind /src "), S_IFDIR), "apply: the mount point is in the rootfs");
}

static int root_kind(void *ctx, const char *path, int tree)
{
	(void)ctx;
	char p[PATH_MAX * 2];
	snprintf(p, sizeof(p), "%s%s", root, path);
	return ns_stat_kind(NULL, p, tree);
}

static void test_apply_view(void)
{
	static const char *const dirs[] = { "/mnt", "/work",	 "/work/secret", "/work/t",
					    "/tmp", "/tmp/tool", "/opt",	 "/opt/x" };
	char p[PATH_MAX * 2];
	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
		snprintf(p, sizeof(p), "%s%s", root, dirs[i]);
		mkdir(p, 0755);
	}
	snprintf(p, sizeof(p), "%s/work/key.file", root);
	close(open(p, O_CREAT | O_WRONLY | O_CLOEXEC, 0600));
	struct ns_mount_facts f = { .source_kind = root_kind };
	struct ns_mount_plan plan = { 0 };
	ns_mount_plan_view(&view, &f, &plan);
	struct hutch_err err = { 0 };
	int rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	n_calls = 0;
	hutch_sys = &recorder;
	int r = ns_mount_apply(rootfd, plan.ops, plan.n, &err);
	hutch_sys = &hutch_sys_real;
	close(rootfd);
	ns_mount_plan_free(&plan);
	ok(r == 0, "apply view: through the recorder (%s)", err.msg);
	is_str(rendered_calls(),
	       "propagation /; tmpfs; ro /.t0; move /mnt; bind /.t0/denied /work/key.file; "
	       "umount /mnt; clone /opt/x; ro /opt/x; clone /tmp/tool; ro /tmp/tool; clone /work; "
	       "ro /; tmpfs; move /mnt; mount tmpfs /mnt/tmp; move /mnt/work; "
	       "mount tmpfs /mnt/work/t; move /mnt/opt/x; move /mnt/tmp/tool; "
	       "tmpfs; move /mnt/work/secret; tmpfs; move /mnt/work/key.file; ro /.t1",
	       "apply view: the calls in order (a denied file bound, a missing one skipped, the "
	       "root staged and filled, denied directories last, the root read-only)");
	struct stat st;
	snprintf(p, sizeof(p), "%s/mnt/bin", root);
	ok(exists("/.t0/denied", S_IFREG) && exists("/mnt/opt/x", S_IFDIR) && lstat(p, &st) == 0 &&
		   S_ISLNK(st.st_mode),
	   "apply view: the empty denied file, the root's mount points and link");
}

int main(void)
{
	test_plan_binds();
	test_plan_kernel_fs();
	test_plan_cgroups();
	test_plan_dev();
	test_plan_deferred();
	test_shared_mount();
	test_plan_view();
	test_plan_view_pins();

	recorder = hutch_sys_real;
	recorder.mount = rec_mount;
	recorder.umount2 = rec_umount2;
	recorder.open_tree = rec_open_tree;
	recorder.move_mount = rec_move_mount;
	recorder.mount_setattr = rec_mount_setattr;
	recorder.fsopen = rec_fsopen;
	recorder.fsconfig = rec_fsconfig;
	recorder.fsmount = rec_fsmount;
	char tmpl[] = "/tmp/hutch-test-mount.XXXXXX", out[] = "/tmp/hutch-test-out.XXXXXX";
	if (!mkdtemp(tmpl) || !mkdtemp(out) || !realpath(tmpl, root)) {
		ok(0, "mkdtemp");
		return tap_done();
	}
	test_apply();
	test_apply_symlinks(out);
	rm_rf_root(tmpl);
	test_apply_view();
	nftw(tmpl, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	nftw(out, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	return tap_done();
}
