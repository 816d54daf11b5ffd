/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Host mode, shared by its parent side (rt-host.c: paths, placeholders, cgroup, wait,
 * report) and its child side (rt-host-view.c: mount view, Landlock, seccomp); what both
 * record is in rt-host-common.c.
 */
#ifndef HUTCH_RT_HOST_H
#define HUTCH_RT_HOST_H

#include "rt-sandbox.h"
#include "rt-sandbox-net.h"
#include "ns-mount-plan.h"

struct rt_host_paths {
	char **v; /* NULL-terminated, resolved (realpath) */
	size_t n;
};

struct rt_host {
	const struct rt_sb_opts *o;
	struct rt_sb_host *h;
	struct rt_host_paths read, rw, deny, dotfiles, placeholders;
	char *cwd, *resolv;
	struct sc_filter *filter;
	struct cg *cg;
	int reg_fd;
	char *reg_path;
	/* --network bridge (rt-host-net.c) */
	struct rt_sb_net net;
	int netns_fd;
	char *net_dir; /* the generated /etc files */
};

/* Host mode's network is on unless --network none (or allow_network false) says otherwise. */
static inline enum rt_sb_network rt_host_network(const struct rt_sb_opts *o)
{
	return o->network_set ? o->network : RT_SB_NET_HOST;
}
/* rt-host-common.c: path is dir or beneath it, by name; is one of p's paths or beneath one. */
bool rt_host_under(const char *path, const char *dir);
bool rt_host_under_any(const char *path, const struct rt_host_paths *p);
/* rt-host-links.c: the first symlink on the way to path (absolute) that lies inside one of
 * the rw trees (by name or by inode), where a sandbox could have made it; malloc'd, or NULL. */
char *rt_host_planted_link(const char *path, const struct rt_host_paths *rw);
/* The name an allowed path was given ("//", "/." cleaned) when it is not its real path (a
 * symlink on the way): malloc'd, or NULL (also when it has ".." or doesn't resolve). */
char *rt_host_given_name(const char *given);
/* The other names each denied path has in the trees, added to out (none already in deny): a
 * tree that is a denied directory, or one above it, by another name; a tree beneath one. */
void rt_host_deny_aliases(char *const *deny, size_t n_deny, char *const *trees, size_t n_trees,
			  struct rt_host_paths *out);
/* A guarantee that can't be had: strict mode fails with it, --best-effort records it. */
int rt_host_weaken(struct rt_host *hs, struct hutch_err *err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* What the report lists as weakened, whatever the mode (cut to fit). */
void rt_host_note(struct rt_sb_host *h, const char *msg);
/* rt-host-net.c: --network bridge. prepare (parent, before the fork) makes and wires the
 * namespace; enter (child) joins it; binds gives the generated resolv.conf and hosts to lay
 * over the host's in the view (sources malloc'd into owned); helper says whether pid is one of
 * the network's helper processes (not the command's); release ends it all (safe always). */
int rt_host_net_prepare(struct rt_host *hs, struct hutch_err *err);
int rt_host_net_enter(struct rt_host *hs, struct hutch_err *err);
size_t rt_host_net_binds(const struct rt_host *hs, struct ns_view_bind out[2], char *owned[2]);
bool rt_host_net_helper(const struct rt_host *hs, pid_t pid);
void rt_host_net_release(struct rt_host *hs, struct rt_sb_result *res);

/* In the child, from namespaces to seccomp; execve is the caller's. */
int rt_host_child_setup(struct rt_host *hs, struct hutch_err *err);

#endif
