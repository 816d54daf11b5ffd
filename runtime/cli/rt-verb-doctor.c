// SPDX-License-Identifier: Apache-2.0
/*
 * `hutch doctor`: what works on this host for the caller (root or not), each fact found by
 * trying it where it can be tried (a user namespace, overlayfs in one, the cgroup hutch would
 * use), with the exact fix for what doesn't. Its exit status says whether `hutch sandbox`
 * runs with its defaults; human output, or --format json.
 */
#include "rt.h"
#include "hutch-ids.h"
#include "rt-sandbox.h"
#include "rt-sandbox-plan.h"
#include "cg.h"
#include "hutch-json.h"
#include "ll.h"
#include "ns.h"

#include <fcntl.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

enum verdict { DOC_OK, DOC_FAIL, DOC_INFO };

struct check {
	const char *name;
	enum verdict v;
	bool needed; /* hutch sandbox's defaults need it */
	char detail[640], fix[256];
};

struct doctor {
	struct check c[20];
	size_t n;
	bool rootless;
};

static struct check *add(struct doctor *d, const char *name, enum verdict v, bool needed)
{
	struct check *c = &d->c[d->n < ARRAY_SIZE(d->c) - 1 ? d->n++ : d->n];
	*c = (struct check){ .name = name, .v = v, .needed = needed };
	return c;
}

static long sysctl_value(const char *path)
{
	char buf[32] = "";
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n > 0 ? strtol(buf, NULL, 10) : -1;
}

static const char *find_program(const char *name)
{
	static char path[8][64];
	static size_t next;
	static const char *const dirs[] = { "/usr/local/sbin", "/usr/local/bin", "/usr/sbin",
					    "/usr/bin",	       "/sbin",		 "/bin" };
	char *p = path[next++ % ARRAY_SIZE(path)];
	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
		snprintf(p, sizeof(path[0]), "%s/%s", dirs[i], name);
		if (access(p, X_OK) == 0)
			return p;
	}
	return NULL;
}

/* The sysctls that turn unprivileged user namespaces off, and the line that turns each on. */
static void userns_fix(struct check *c)
{
	static const struct {
		const char *path, *fix;
		long bad;
	} knobs[] = {
		{ "/proc/sys/kernel/unprivileged_userns_clone",
		  "sysctl -w kernel.unprivileged_userns_clone=1", 0 },
		{ "/proc/sys/user/max_user_namespaces", "sysctl -w user.max_user_namespaces=15000",
		  0 },
		{ "/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
		  "sysctl -w kernel.apparmor_restrict_unprivileged_userns=0", 1 },
	};
	for (size_t i = 0; i < ARRAY_SIZE(knobs); i++)
		if (sysctl_value(knobs[i].path) == knobs[i].bad) {
			snprintf(c->fix, sizeof(c->fix), "%s", knobs[i].fix);
			return;
		}
	snprintf(c->fix, sizeof(c->fix), "check the kernel's CONFIG_USER_NS and any LSM policy");
}

static void check_userns(struct doctor *d)
{
	int r = ns_probe_userns((uid_t)-1, false);
	struct check *c = add(d, "user namespaces", r == 0 ? DOC_OK : DOC_FAIL, true);
	snprintf(c->detail, sizeof(c->detail), "uid %u %s make one (max_user_namespaces %ld)",
		 (unsigned)geteuid(), r == 0 ? "can" : "cannot",
		 sysctl_value("/proc/sys/user/max_user_namespaces"));
	if (r < 0)
		userns_fix(c);
	if (d->rootless)
		return;
	/* Root can; whether ordinary users can is what their rootless runs depend on. */
	r = ns_probe_userns(65534, false);
	c = add(d, "unprivileged user namespaces", r == 0 ? DOC_OK : DOC_INFO, false);
	snprintf(c->detail, sizeof(c->detail), "nobody (uid 65534) %s make one",
		 r == 0 ? "can" : "cannot");
	if (r < 0)
		userns_fix(c);
}

static void check_subids(struct doctor *d)
{
	if (!d->rootless) {
		struct check *c = add(d, "subordinate ids", DOC_OK, false);
		snprintf(c->detail, sizeof(c->detail),
			 "root: sandboxes map ids from %u (root's /etc/subuid range, else a "
			 "default)",
			 (unsigned)rt_sb_sub_ids("/etc/subuid"));
		return;
	}
	struct ns_rootless r;
	ns_rootless_plan(&r);
	struct check *c = add(d, "subordinate ids", r.subids ? DOC_OK : DOC_FAIL, false);
	if (r.subids) {
		snprintf(c->detail, sizeof(c->detail),
			 "/etc/subuid %u-%u and /etc/subgid %u-%u, mapped by newuidmap/newgidmap",
			 r.sub_uid.host_id, r.sub_uid.host_id + r.sub_uid.size - 1,
			 r.sub_gid.host_id, r.sub_gid.host_id + r.sub_gid.size - 1);
		return;
	}
	snprintf(c->detail, sizeof(c->detail),
		 "%s: a sandbox maps one id (its user) and cannot change files' owners", r.why);
	if (strstr(r.why, "newuidmap") || strstr(r.why, "newgidmap"))
		snprintf(c->fix, sizeof(c->fix), "apt-get install uidmap");
	else
		snprintf(c->fix, sizeof(c->fix),
			 "usermod --add-subuids 100000-165535 --add-subgids 100000-165535 "
			 "<user> (as root; a range no other user has)");
}

static void check_cgroups(struct doctor *d)
{
	bool v2 = cg_is_v2();
	struct stat st;
	bool hybrid = !v2 && stat("/sys/fs/cgroup/unified", &st) == 0;
	const char *layout = v2	      ? "cgroup v2"
			     : hybrid ? "hybrid (v1 controllers, cgroup2 at "
					"/sys/fs/cgroup/unified)"
				      : "cgroup v1";
	if (!d->rootless) {
		struct check *c = add(d, "cgroups", DOC_OK, true);
		snprintf(c->detail, sizeof(c->detail), "%s; root may use any", layout);
		return;
	}
	_cleanup_free_ char *base = NULL;
	struct hutch_err e = { 0 };
	int r = cg_delegated_base(&base, &e);
	struct check *c = add(d, "cgroups", r >= 0 ? DOC_OK : DOC_FAIL, true);
	if (r >= 0) {
		snprintf(c->detail, sizeof(c->detail), "%s; %s is delegated to uid %u", layout,
			 base, (unsigned)geteuid());
		return;
	}
	snprintf(c->detail, sizeof(c->detail),
		 "%s: %s; the default limits are refused (--best-effort runs without them)", layout,
		 e.msg);
	snprintf(c->fix, sizeof(c->fix), "%s",
		 v2 ? "run under systemd-run --user --scope -p Delegate=yes, or have root chown "
		      "a cgroup (and its cgroup.procs, cgroup.subtree_control) to you"
		    : "boot with cgroup v2 only (systemd.unified_cgroup_hierarchy=1), or run as "
		      "root");
}

static void check_overlay(struct doctor *d)
{
	int r = ns_probe_userns(d->rootless ? (uid_t)-1 : 65534, true);
	struct check *c =
		add(d, "overlayfs in a user namespace", r == 0 ? DOC_OK : DOC_INFO, false);
	snprintf(c->detail, sizeof(c->detail), "%s",
		 r == 0 ? "works (Linux 5.11+): a rootless sandbox's throw-away layer"
			: "does not work here: a rootless sandbox needing a layer fails");
	if (r < 0)
		snprintf(c->fix, sizeof(c->fix), "a kernel of 5.11 or later");
	static const char *const info[][2] = {
		{ "fuse-overlayfs", "not used by hutch (the kernel's overlayfs is)" },
		{ "pasta",
		  "not used by hutch yet: rootless sandboxes have --network none or host" },
		{ "slirp4netns",
		  "not used by hutch yet: rootless sandboxes have --network none or host" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(info); i++) {
		const char *p = find_program(info[i][0]);
		c = add(d, info[i][0], DOC_INFO, false);
		snprintf(c->detail, sizeof(c->detail), "%s; %s", p ? p : "not installed",
			 info[i][1]);
	}
}

static void check_filters(struct doctor *d)
{
	int kernel = 0, abi = ll_abi(&kernel);
	struct check *c = add(d, "landlock", abi >= 1 ? DOC_OK : DOC_INFO, false);
	snprintf(c->detail, sizeof(c->detail), "ABI %d (kernel's %d): host mode %s", abi, kernel,
		 abi >= 1 ? "confines writes" : "refuses, or runs unconfined with --best-effort");
	bool seccomp = prctl(PR_GET_SECCOMP, 0, 0, 0, 0) >= 0;
	struct seccomp_notif_sizes sizes;
	bool notify = syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) == 0;
	c = add(d, "seccomp", seccomp ? DOC_OK : DOC_FAIL, true);
	snprintf(c->detail, sizeof(c->detail), "filters %s; user notification %s",
		 seccomp ? "work" : "unavailable", notify ? "works" : "unavailable");
	if (!seccomp)
		snprintf(c->fix, sizeof(c->fix), "a kernel with CONFIG_SECCOMP_FILTER");
}

static void check_tools(struct doctor *d)
{
	static const char *const tools[] = { "runc", "crun", "runsc", "criu" };
	for (size_t i = 0; i < ARRAY_SIZE(tools); i++) {
		const char *p = find_program(tools[i]);
		struct check *c = add(d, tools[i], DOC_INFO, false);
		snprintf(c->detail, sizeof(c->detail), "%s", p ? p : "not installed");
	}
	struct hutch_err e = { 0 };
	int r = rt_run_dir_make(&e);
	struct check *c = add(d, "state directory", r >= 0 ? DOC_OK : DOC_FAIL, true);
	snprintf(c->detail, sizeof(c->detail), "%s", r >= 0 ? rt_run_dir() : e.msg);
	if (r < 0)
		snprintf(c->fix, sizeof(c->fix), "set XDG_RUNTIME_DIR to a directory of yours");
}

static const char *const verdicts[] = { "ok", "fail", "info" };

static bool defaults_ok(const struct doctor *d)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->c[i].needed && d->c[i].v == DOC_FAIL)
			return false;
	return true;
}

static void print_human(const struct doctor *d)
{
	printf("hutch doctor: uid %u, %s\n", (unsigned)geteuid(),
	       d->rootless ? "rootless" : "host root");
	for (size_t i = 0; i < d->n; i++) {
		const struct check *c = &d->c[i];
		printf("  %-5s %s: %s\n",
		       c->v == DOC_OK	  ? "ok"
		       : c->v == DOC_FAIL ? "FAIL"
					  : "-",
		       c->name, c->detail);
		if (c->fix[0])
			printf("        fix: %s\n", c->fix);
	}
	printf("hutch sandbox with its defaults: %s\n", defaults_ok(d) ? "runs" : "refused");
}

static void print_json(const struct doctor *d)
{
	_cleanup_gen_ yajl_gen g = yajl_gen_alloc(NULL);
	yajl_gen_map_open(g);
	hutch_json_gen_int(g, "uid", geteuid());
	hutch_json_gen_bool(g, "rootless", d->rootless);
	hutch_json_gen_bool(g, "sandbox_defaults", defaults_ok(d));
	hutch_json_gen_str(g, "checks");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < d->n; i++) {
		yajl_gen_map_open(g);
		hutch_json_gen_kv(g, "name", d->c[i].name);
		hutch_json_gen_kv(g, "status", verdicts[d->c[i].v]);
		hutch_json_gen_bool(g, "needed", d->c[i].needed);
		hutch_json_gen_kv(g, "detail", d->c[i].detail);
		hutch_json_gen_kv(g, "fix", d->c[i].fix[0] ? d->c[i].fix : NULL);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	yajl_gen_map_close(g);
	size_t len;
	_cleanup_free_ char *text = hutch_json_gen_finish(g, &len);
	printf("%s\n", text);
}

struct doctor_flags {
	const char *format;
};

static RT_VERB_RUN(verb_doctor)
{
	const struct doctor_flags *f = flags;
	(void)g, (void)argv;
	if (argc - first != 0)
		return hutch_fail(err, EINVAL, "doctor: takes no arguments");
	if (f->format && strcmp(f->format, "text") && strcmp(f->format, "json"))
		return hutch_fail(err, EINVAL, "--format: expected text or json, got %s",
				  f->format);
	struct doctor d = { .rootless = hutch_rootless() };
	check_userns(&d);
	check_subids(&d);
	check_cgroups(&d);
	check_overlay(&d);
	check_filters(&d);
	check_tools(&d);
	if (f->format && !strcmp(f->format, "json"))
		print_json(&d);
	else
		print_human(&d);
	fflush(stdout);
	return defaults_ok(&d) ? 0 : 1;
}

static const struct rt_flag doctor_flags[] = {
	{ "format", 'f', RT_FLAG_STR, "text (default) or json",
	  offsetof(struct doctor_flags, format), NULL },
};

const struct rt_verb rt_doctor_verb = {
	.name = "doctor",
	.summary = "say what works on this host, and the fix for what doesn't",
	.usage = "[--format text|json]",
	.flags = RT_FLAGS(doctor_flags, 0),
	.flags_size = sizeof(struct doctor_flags),
	.run = verb_doctor,
};
