// SPDX-License-Identifier: Apache-2.0
/*
 * `hutch sandbox` for a caller who is not host root. hutch first makes a user namespace of
 * its own (ns-rootless.c) where ids keep their meaning, then runs the same recipe inside it:
 * the sandbox's namespace nests in it, mapping the sandbox user onto a subordinate id or,
 * with a workspace, onto the caller. Limits need a cgroup delegated to the caller; without
 * one the sandbox is refused, or (--best-effort) runs without them and says so.
 */
#include "rt-sandbox.h"
#include "rt-sandbox-plan.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

void rt_sb_weaken_report(struct rt_sb_plan *p, const char *msg)
{
	if (p->n_weakened >= ARRAY_SIZE(p->weakened))
		return;
	char *dst = p->weakened[p->n_weakened++];
	size_t len = strnlen(msg, sizeof(p->weakened[0]) - 1); /* truncated to fit */
	memcpy(dst, msg, len);
	dst[len] = '\0';
}

void rt_sb_weaken(struct rt_sb_plan *p, const char *msg)
{
	hutch_warn("%s", msg);
	rt_sb_weaken_report(p, msg);
}

static bool wants_limits(const struct rt_sb_opts *o)
{
	return o->memory > 0 || o->pids > 0 || o->cpus > 0;
}

int rt_sb_rootless_cgroup(const struct rt_sb_opts *o, struct rt_sb_plan *p, char **base,
			  struct hutch_err *err)
{
	struct hutch_err why = { 0 };
	p->rootless = true;
	if (cg_delegated_base(base, &why) >= 0)
		return 0;
	if (!wants_limits(o)) { /* --memory 0 --pids 0 --cpus 0: nothing to enforce */
		p->no_cgroup = true;
		return 0;
	}
	if (!o->best_effort)
		return hutch_fail(
			err, EPERM,
			"sandbox: --memory, --pids and --cpus need a cgroup delegated to uid %u, "
			"and %s: run as root, in a delegated cgroup (systemd-run --user --scope "
			"-p Delegate=yes, or one root chowned to you), or give --best-effort to "
			"run without limits",
			(unsigned)geteuid(), why.msg);
	char msg[sizeof(why.msg) + 40];
	snprintf(msg, sizeof(msg), "no memory, pids or cpu limits: %s", why.msg);
	rt_sb_weaken(p, msg);
	p->no_cgroup = true;
	return 0;
}

/* uid 0 of a user namespace someone else made (unshare -r): a range it maps beside 0, with
 * room for a sandbox's ids, or else only 0 itself. */
static void adopt_own_namespace(struct rt_sb_plan *p)
{
	_cleanup_free_ char *map = NULL;
	struct hutch_err e = { 0 };
	p->user = (struct ns_rootless){ .uid = 0, .gid = 0 };
	snprintf(p->user.why, sizeof(p->user.why),
		 "uid 0 of a user namespace that maps no range of %u ids beside it", RT_SB_ID_SPAN);
	if (hutch_read_file_at(AT_FDCWD, "/proc/self/uid_map", 1 << 16, &map, NULL, &e) < 0)
		return;
	for (char *l = map; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		unsigned long in, out, n;
		if (sscanf(l, "%lu %lu %lu", &in, &out, &n) == 3 && in > 0 && n >= RT_SB_ID_SPAN) {
			/* The same range for gids: a namespace made this way maps both alike. */
			p->user.sub_uid = p->user.sub_gid =
				(struct ns_idmap){ (uint32_t)in, (uint32_t)in, (uint32_t)n };
			p->user.subids = true;
			return;
		}
	}
}

int rt_sb_rootless_enter(const struct rt_sb_opts *o, struct rt_sb_plan *p, struct hutch_err *err)
{
	(void)o;
	if (!p->rootless)
		return 0;
	if (geteuid() == 0) {
		adopt_own_namespace(p);
	} else {
		ns_rootless_plan(&p->user);
		if (p->user.subids && p->user.sub_uid.size < RT_SB_ID_SPAN) {
			p->user.subids = false;
			snprintf(p->user.why, sizeof(p->user.why),
				 "the /etc/subuid range of uid %u has fewer than %u ids",
				 (unsigned)p->user.uid, RT_SB_ID_SPAN);
		}
		TRY(ns_rootless_enter(&p->user, err));
	}
	p->single_id = !p->user.subids;
	if (p->single_id)
		hutch_warn("one id only (%s): every id in the sandbox but its user is unmapped, "
			   "so it cannot change files' owners (apt-get cannot install)",
			   p->user.why);
	p->sub_uid = p->user.sub_uid.container_id;
	p->sub_gid = p->user.sub_gid.container_id;
	return 0;
}
