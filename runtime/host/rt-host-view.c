// SPDX-License-Identifier: Apache-2.0
/*
 * Host mode's child: the private mount view (a new root with only the system's and the
 * policy's trees, read-only but for the rw trees and private tmpfs, denied paths covered),
 * then Landlock and seccomp, then the command. Landlock can only allow, so "deny beneath an
 * allowed tree" is a mount; Landlock leaves chmod, chown, utimes and xattrs alone, so
 * read-only is a mount flag too; and before ABI 9 it can't stop a connect() to a pathname unix
 * socket, so what the view doesn't hold is not there at all. Landlock is the second layer.
 */
#include "rt-host.h"
#include "rt-process.h"
#include "net.h"

#include <fcntl.h>
#include <sched.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>

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
/* The view's /dev has these links of the host's too: what shells open (/dev/stdin, <(...)). */
static const char *const dev_links[] = { "/dev/fd", "/dev/stdin", "/dev/stdout", "/dev/stderr" };

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
			"private tmpfs%s",
			strerror(errno),
			h->ll.abi < 9 ? ", the host's unix sockets reachable (Landlock ABI < 9)"
				      : ""));
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

/* What the view holds: trees by name, the root's links, denied paths by every name. */
struct view_lists {
	struct rt_host_paths read, rw, deny, link_targets;
	struct ns_view_link
		links[ARRAY_SIZE(system_read) + ARRAY_SIZE(devices_rw) + ARRAY_SIZE(dev_links)];
	size_t n_links;
	char *owned[2]; /* the bridge's files */
};

static void view_lists_free(struct view_lists *l)
{
	hutch_strv_free(l->read.v);
	hutch_strv_free(l->rw.v);
	hutch_strv_free(l->deny.v);
	hutch_strv_free(l->link_targets.v);
	free(l->owned[0]);
	free(l->owned[1]);
}

/* A system path as the host has it: a tree, a link the root gets (/bin -> usr/bin), or none. */
static void add_system(struct view_lists *l, const char *path)
{
	struct stat st;
	char target[PATH_MAX];
	if (lstat(path, &st) < 0)
		return;
	if (!S_ISLNK(st.st_mode)) {
		hutch_strv_push(&l->read.v, &l->read.n, path);
		return;
	}
	ssize_t n = readlink(path, target, sizeof(target) - 1);
	if (n <= 0)
		return;
	target[n] = '\0';
	hutch_strv_push(&l->link_targets.v, &l->link_targets.n, target);
	l->links[l->n_links++] =
		(struct ns_view_link){ path, l->link_targets.v[l->link_targets.n - 1] };
}

/* The name an allowed path was given (a symlink to it, or a path through one) shows the tree
 * too, unless a tree has that name already (its link is there) or a link of the root is on the
 * way (nothing is made through a link). */
static void add_names(struct view_lists *l, struct rt_host_paths *to, char *const *given)
{
	for (; given && *given; given++) {
		_cleanup_free_ char *name = rt_host_given_name(*given);
		bool skip = !name || rt_host_under_any(name, &l->read) ||
			    rt_host_under_any(name, &l->rw);
		for (size_t i = 0; !skip && i < l->n_links; i++)
			skip = rt_host_under(name, l->links[i].path);
		if (!skip)
			hutch_strv_push(&to->v, &to->n, name);
	}
}

static void view_lists(struct rt_host *hs, struct view_lists *l)
{
	for (size_t i = 0; i < ARRAY_SIZE(system_read); i++)
		add_system(l, system_read[i]);
	for (size_t i = 0; i < ARRAY_SIZE(devices_rw); i++)
		add_system(l, devices_rw[i]);
	for (size_t i = 0; i < ARRAY_SIZE(dev_links); i++)
		add_system(l, dev_links[i]);
	if (hs->resolv && !rt_host_under_any(hs->resolv, &l->read)) /* may live in /run */
		hutch_strv_push(&l->read.v, &l->read.n, hs->resolv);
	for (size_t i = 0; i < hs->read.n; i++) { /* dotfiles by their name: by what they are */
		_cleanup_free_ char *real = realpath(hs->read.v[i], NULL);
		if (real)
			hutch_strv_push(&l->read.v, &l->read.n, real);
	}
	for (size_t i = 0; i < hs->rw.n; i++)
		hutch_strv_push(&l->rw.v, &l->rw.n, hs->rw.v[i]);
	struct rt_host_paths ro_names = { 0 }, rw_names = { 0 };
	add_names(l, &ro_names, hs->o->allow_read);
	add_names(l, &ro_names, hs->dotfiles.v);
	add_names(l, &rw_names, hs->o->allow_rw);
	for (size_t i = 0; i < ro_names.n; i++)
		hutch_strv_push(&l->read.v, &l->read.n, ro_names.v[i]);
	for (size_t i = 0; i < rw_names.n; i++)
		hutch_strv_push(&l->rw.v, &l->rw.n, rw_names.v[i]);
	hutch_strv_free(ro_names.v);
	hutch_strv_free(rw_names.v);
	for (size_t i = 0; i < hs->deny.n; i++)
		hutch_strv_push(&l->deny.v, &l->deny.n, hs->deny.v[i]);
	struct rt_host_paths aliases = { 0 };
	_cleanup_strv_ char **trees = hutch_strv_dup((const char *const *)l->read.v);
	size_t n_trees = l->read.n;
	for (size_t i = 0; i < l->rw.n; i++)
		hutch_strv_push(&trees, &n_trees, l->rw.v[i]);
	rt_host_deny_aliases(hs->deny.v, hs->deny.n, trees, n_trees, &aliases);
	for (size_t i = 0; i < aliases.n; i++)
		hutch_strv_push(&l->deny.v, &l->deny.n, aliases.v[i]);
	hutch_strv_free(aliases.v);
}

/* The view (ns_mount_plan_view), then into it: its root is the command's. */
static int build_view(struct rt_host *hs, struct hutch_err *err)
{
	_cleanup_free_ struct ns_view_tmpfs *t = hutch_xcalloc(hs->o->n_tmpfs + 1, sizeof(*t));
	for (size_t i = 0; i < hs->o->n_tmpfs; i++)
		t[i] = (struct ns_view_tmpfs){ hs->o->tmpfs[i].path, hs->o->tmpfs[i].size };
	struct view_lists l = { 0 };
	struct ns_view_bind binds[2];
	view_lists(hs, &l);
	const struct ns_view v = {
		.read = l.read.v,
		.n_read = l.read.n,
		.rw = l.rw.v,
		.n_rw = l.rw.n,
		.deny = l.deny.v,
		.n_deny = l.deny.n,
		.cwd = hs->cwd[0] == '/' ? hs->cwd : NULL,
		.tmpfs = t,
		.n_tmpfs = hs->o->n_tmpfs,
		.links = l.links,
		.n_links = l.n_links,
		.binds = binds,
		.n_binds = rt_host_net_binds(hs, binds, l.owned),
	};
	const struct ns_mount_facts facts = { .source_kind = ns_stat_kind };
	struct ns_mount_plan plan = { 0 };
	ns_mount_plan_view(&v, &facts, &plan);
	int r = ns_mount_apply_host(plan.ops, plan.n, err);
	if (r >= 0)
		r = ns_pivot_root(plan.view_root, false, err);
	ns_mount_plan_free(&plan);
	view_lists_free(&l);
	return r;
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
	/* a socket the policy allows can be connected to (ABI 9), as the view lets it */
	add_rules(rules, &n, hs->read.v, hs->read.n, LL_FS_READ | LL_FS_RESOLVE_UNIX);
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
			covered |= rt_host_under(p, system_read[j]);
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
	if (hs->h->mount_view)
		TRY(build_view(hs, err)); /* sources are host paths: clones before / turns ro */
	else
		TRY(check_denies_without_view(hs, err));
	TRY(enter_cwd(hs, err));		  /* a path in the view, not the inherited one */
	TRY(landlock_rules(hs, &ruleset, err));	  /* opens the view's paths: after the view */
	return drop_privileges(hs, ruleset, err); /* nothing privileged is left to do */
}
