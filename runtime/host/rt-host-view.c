// SPDX-License-Identifier: Apache-2.0
/*
 * Host mode's child: the private mount view (the host read-only, rw trees bound back, private
 * tmpfs, denied paths covered), then Landlock and seccomp, then the command. Landlock can only
 * allow, so "deny beneath an allowed tree" is a mount; and Landlock leaves chmod, chown, utimes
 * and xattrs alone, so read-only is a mount flag too. Landlock is the coarse second layer.
 */
#include "rt-host.h"
#include "rt-process.h"
#include "net.h"

#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>

/* Readable in every host-mode sandbox: the system, and what programs read about themselves
 * (other processes' /proc files stay closed: Landlock denies ptrace-mode access outside the
 * domain). */
static const char *const system_read[] = { "/usr",
					   "/bin",
					   "/sbin",
					   "/lib",
					   "/lib32",
					   "/lib64",
					   "/libx32",
					   "/etc",
					   "/opt",
					   "/proc",
					   "/sys/devices/system/cpu" };
static const char *const devices_rw[] = { "/dev/null",	  "/dev/zero", "/dev/full", "/dev/random",
					  "/dev/urandom", "/dev/tty",  "/dev/pts",  "/dev/ptmx" };

static bool under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	if (n == 1)
		return true;
	return !strncmp(path, dir, n) && (path[n] == '\0' || path[n] == '/');
}

bool rt_host_under_any(const char *path, const struct rt_host_paths *p)
{
	for (size_t i = 0; i < p->n; i++)
		if (under(path, p->v[i]))
			return true;
	return false;
}

/* The caller's own ids only: an unprivileged process may map nothing else. */
static int map_self(uid_t uid, gid_t gid, struct hutch_err *err)
{
	char buf[64];
	TRY(hutch_write_str_at(AT_FDCWD, "/proc/self/setgroups", "deny", err));
	snprintf(buf, sizeof(buf), "%u %u 1", uid, uid);
	TRY(hutch_write_str_at(AT_FDCWD, "/proc/self/uid_map", buf, err));
	snprintf(buf, sizeof(buf), "%u %u 1", gid, gid);
	return hutch_write_str_at(AT_FDCWD, "/proc/self/gid_map", buf, err);
}

static int enter_namespaces(struct rt_host *hs, struct hutch_err *err)
{
	struct rt_sb_host *h = hs->h;
	bool root = geteuid() == 0;
	uid_t uid = geteuid();
	gid_t gid = getegid();
	if (unshare(CLONE_NEWNS | (root ? 0 : CLONE_NEWUSER)) == 0) {
		h->mount_view = true;
		h->userns = !root;
		if (!root)
			TRY(map_self(uid, gid, err));
	} else {
		TRY(rt_host_weaken(
			hs, err,
			"no private mount view (%s): read-only is Landlock's alone (not "
			"chmod, chown, utimes, xattrs), no deny inside allowed trees, no "
			"private tmpfs",
			strerror(errno)));
	}
	if (rt_host_network(hs->o) == RT_SB_NET_BRIDGE)
		return rt_host_net_enter(hs, err);
	if (rt_host_network(hs->o) != RT_SB_NET_NONE)
		return 0;
	if (unshare(CLONE_NEWNET) == 0) {
		h->netns = true;
		return net_loopback_up(err);
	}
	if (h->ll.abi >= 4) {
		h->tcp_rules = true; /* the report says that UDP is not covered */
		return 0;
	}
	return rt_host_weaken(hs, err, "network not off: no network namespace and Landlock ABI %d",
			      h->ll.abi);
}

static void plan_freep(struct ns_mount_plan *p)
{
	ns_mount_plan_free(p);
}

/* The view (ns_mount_plan_view): / a slave, denied files bound, trees cloned, / read-only,
 * private tmpfs, trees attached, denied directories covered. */
static int build_view(struct rt_host *hs, struct hutch_err *err)
{
	_cleanup_free_ struct ns_view_tmpfs *t = hutch_xcalloc(hs->o->n_tmpfs + 1, sizeof(*t));
	for (size_t i = 0; i < hs->o->n_tmpfs; i++)
		t[i] = (struct ns_view_tmpfs){ hs->o->tmpfs[i].path, hs->o->tmpfs[i].size };
	const struct ns_view v = {
		.read = hs->read.v,
		.n_read = hs->read.n,
		.rw = hs->rw.v,
		.n_rw = hs->rw.n,
		.deny = hs->deny.v,
		.n_deny = hs->deny.n,
		.hidden = hs->tmpfs.v,
		.n_hidden = hs->tmpfs.n,
		.tmpfs = t,
		.n_tmpfs = hs->o->n_tmpfs,
	};
	const struct ns_mount_facts facts = { .source_kind = ns_stat_kind };
	_cleanup_(plan_freep) struct ns_mount_plan plan = { 0 };
	ns_mount_plan_view(&v, &facts, &plan);
	return ns_mount_apply_host(plan.ops, plan.n, err);
}

static void add_rules(struct ll_rule *rules, size_t *n, char *const *paths, size_t count,
		      uint64_t access)
{
	for (size_t i = 0; i < count; i++)
		rules[(*n)++] = (struct ll_rule){ paths[i], access };
}

/* The coarse layer: the system and allowed paths readable, rw trees and private tmpfs
 * writable, nothing else; TCP denied when no network namespace could be had. */
static int landlock_rules(struct rt_host *hs, int *ruleset, struct hutch_err *err)
{
	struct rt_sb_host *h = hs->h;
	if (h->ll.abi < 1)
		return 0; /* refused or recorded by the parent */
	size_t max = ARRAY_SIZE(system_read) + ARRAY_SIZE(devices_rw) + hs->read.n + hs->rw.n +
		     hs->o->n_tmpfs + 1;
	_cleanup_free_ struct ll_rule *rules = hutch_xcalloc(max, sizeof(*rules));
	size_t n = 0;
	add_rules(rules, &n, (char *const *)system_read, ARRAY_SIZE(system_read), LL_FS_READ);
	add_rules(rules, &n, (char *const *)devices_rw, ARRAY_SIZE(devices_rw),
		  LL_FS_READ_FILE | LL_FS_WRITE_FILE | LL_FS_IOCTL_DEV | LL_FS_READ_DIR);
	add_rules(rules, &n, hs->read.v, hs->read.n, LL_FS_READ);
	add_rules(rules, &n, hs->rw.v, hs->rw.n, LL_FS_ALL);
	for (size_t i = 0; h->mount_view && i < hs->o->n_tmpfs; i++) /* private only in a view */
		rules[n++] = (struct ll_rule){ hs->o->tmpfs[i].path, LL_FS_ALL };
	if (hs->resolv)
		rules[n++] = (struct ll_rule){ hs->resolv, LL_FS_READ_FILE };
	*ruleset = ll_create(h->ll.abi, rules, n, h->tcp_rules, true, &h->ll, err);
	if (*ruleset < 0)
		return *ruleset;
	h->landlock = true;
	return 0;
}

/* Without a view, a deny beneath an allowed tree is not enforceable. */
static int check_denies_without_view(struct rt_host *hs, struct hutch_err *err)
{
	for (size_t i = 0; i < hs->deny.n; i++) {
		const char *p = hs->deny.v[i];
		bool covered = rt_host_under_any(p, &hs->read) || rt_host_under_any(p, &hs->rw);
		for (size_t j = 0; j < ARRAY_SIZE(system_read); j++)
			covered |= under(p, system_read[j]);
		if (covered)
			TRY(rt_host_weaken(hs, err, "--deny %s: inside an allowed tree, not denied",
					   p));
	}
	return 0;
}

/* Every capability, Landlock and the filter (execve must stay allowed), in the kernel's
 * order (rt_drop_privileges). An unprivileged process without a user namespace holds no
 * capability to drop; no_new_privs lets it restrict itself all the same. */
static int drop_privileges(struct rt_host *hs, int ruleset, struct hutch_err *err)
{
	static const struct ns_caps none = { 0 };
	struct rt_drop d = { .caps = geteuid() != 0 && !hs->h->userns ? NULL : &none,
			     .no_new_privs = true,
			     .landlock_fd = ruleset,
			     .filter = hs->filter };
	TRY(rt_drop_privileges(&d, err));
	hs->h->seccomp = true;
	return 0;
}

static int enter_cwd(struct rt_host *hs, struct hutch_err *err)
{
	if (chdir(hs->cwd) == 0)
		return 0;
	if (hs->o->cwd)
		return hutch_fail_errno(err, errno, "--cwd %s", hs->cwd);
	/* The inherited directory is not in the view: never keep a dentry from outside it. */
	return chdir("/") < 0 ? hutch_fail_errno(err, errno, "chdir /") : 0;
}

/* Everything the child does between fork and execve. Keep it a list. */
int rt_host_child_setup(struct rt_host *hs, struct hutch_err *err)
{
	_cleanup_close_ int ruleset = -1;
	if (hs->o->isolation == RT_SB_ISO_NONE)
		return 0;
	TRY(enter_namespaces(hs, err)); /* mount (and user when unprivileged), network */
	if (hs->h->mount_view) {
		TRY(build_view(hs, err)); /* sources are host paths: clones before / turns ro */
		TRY(rt_host_net_files(hs, err)); /* bridge: its resolv.conf and hosts, on top */
	} else
		TRY(check_denies_without_view(hs, err));
	TRY(enter_cwd(hs, err));		  /* a path in the view, not the inherited one */
	TRY(landlock_rules(hs, &ruleset, err));	  /* opens the view's paths: after the view */
	return drop_privileges(hs, ruleset, err); /* nothing privileged is left to do */
}
