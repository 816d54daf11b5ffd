// SPDX-License-Identifier: Apache-2.0
/*
 * The ucount limits of a sandbox's user namespace (--ucount). The kernel charges what a
 * process makes in a user namespace (inotify instances and watches, fanotify groups and
 * marks, namespaces; pending signals and message queue bytes) to its (namespace, uid) and
 * then to the namespace's owner in each parent namespace (kernel/ucount.c). A sandbox's
 * namespace is owned by host root: without limits of its own one sandbox took all of root's
 * 128 inotify instances, or its 96367 pending signals, from root's services and from every
 * other sandbox. The first kind are the user.max_* sysctls of the sandbox's own namespace,
 * written by its init (natively) or by a createRuntime hook (runc, crun); the second the
 * sandbox's RLIMIT_SIGPENDING and RLIMIT_MSGQUEUE, which its namespace also takes from
 * whoever makes it (ns_userns_limits_lower). runsc's sentry implements these objects itself.
 */
#include "rt-sandbox.h"
#include "rt-sandbox-plan.h"

#include <limits.h>
#include <stdint.h>
#include <sys/resource.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/*
 * The defaults, per uid inside (the kernel counts per uid: see docs/design.md). inotify: a
 * program holds one instance per event loop (libuv, systemd a handful), and host root's 128
 * are shared by root's services and every sandbox, so 16 leaves root 112 against one sandbox
 * and takes eight at their limit to exhaust it; 8192 watches is the kernel's own default
 * before 5.11 scaled it with memory (this host: 192540), a tree of 8192 directories watched.
 * fanotify and namespaces need CAP_SYS_ADMIN in the default seccomp profile, which no sandbox
 * has: these are a second bound, low, with room for a nested container's seven kinds.
 *
 * sigpending and msgqueue are rlimits, and bound the whole namespace rather than a uid: each
 * of its charges must leave root's count (root's own, and every sandbox's) at most this, so
 * root keeps its limit less these, however many sandboxes run, and sandboxes share them.
 * sigpending: real-time signals queued and POSIX timers (root's: 96367 here, scaled with
 * memory); POSIX asks for 32, programs that hold more than a few hundred are rare. msgqueue:
 * a quarter of root's 819200 bytes (the kernel's default), two queues of the largest size an
 * unprivileged caller may open (10 messages of 8 KiB: 82,800 bytes charged).
 */
#define UCOUNT_MAX INT64_MAX /* "max": INT_MAX as a sysctl, RLIM_INFINITY as an rlimit */
static const struct {
	const char *name; /* /proc/sys/user/max_<name>, or the rlimit's */
	int64_t value;
	int rlimit; /* RLIMIT_*, or -1 for a sysctl */
} ucounts[RT_SB_N_UCOUNTS] = {
	{ "inotify_instances", 16, -1 },
	{ "inotify_watches", 8192, -1 },
	{ "fanotify_groups", 8, -1 },
	{ "fanotify_marks", 8192, -1 },
	{ "user_namespaces", 256, -1 },
	{ "mnt_namespaces", 256, -1 },
	{ "pid_namespaces", 256, -1 },
	{ "net_namespaces", 256, -1 },
	{ "ipc_namespaces", 256, -1 },
	{ "uts_namespaces", 256, -1 },
	{ "cgroup_namespaces", 256, -1 },
	{ "time_namespaces", 256, -1 },
	{ "sigpending", 1024, RLIMIT_SIGPENDING },
	{ "msgqueue", 204800, RLIMIT_MSGQUEUE },
};

void rt_sb_ucounts_init(struct rt_sb_opts *o)
{
	for (size_t i = 0; i < RT_SB_N_UCOUNTS; i++)
		o->ucount[i] = -1;
}

static int ucount_index(const char *name, size_t len)
{
	if (len > 4 && !strncmp(name, "max_", 4)) /* the file's own name too */
		name += 4, len -= 4;
	for (size_t i = 0; i < RT_SB_N_UCOUNTS; i++)
		if (strlen(ucounts[i].name) == len && !strncmp(ucounts[i].name, name, len))
			return (int)i;
	return -EINVAL;
}

/* --ucount NAME=N: N from 0 to INT_MAX (the kernel's range), or max. */
int rt_sb_set_ucount(void *p, const char *v, struct hutch_err *err)
{
	struct rt_sb_opts *o = p;
	const char *eq = strchr(v, '=');
	int i = eq ? ucount_index(v, (size_t)(eq - v)) : -EINVAL;
	if (i < 0)
		return hutch_fail(err, EINVAL,
				  "--ucount %s: expected NAME=N, NAME one of inotify_instances, "
				  "inotify_watches, fanotify_groups, fanotify_marks, "
				  "user_namespaces, mnt_namespaces, ... (/proc/sys/user's max_*), "
				  "sigpending, msgqueue",
				  v);
	int64_t n = UCOUNT_MAX;
	if (strcmp(eq + 1, "max") && (hutch_parse_i64(eq + 1, &n) < 0 || n < 0 || n > INT_MAX))
		return hutch_fail(err, EINVAL, "--ucount %s: N must be 0 to %d, or max", v,
				  INT_MAX);
	o->ucount[i] = n;
	return 0;
}

static bool any_given(const struct rt_sb_opts *o)
{
	for (size_t i = 0; i < RT_SB_N_UCOUNTS; i++)
		if (o->ucount[i] >= 0)
			return true;
	return false;
}

int rt_sb_check_ucounts(const struct rt_sb_opts *o, struct hutch_err *err)
{
	if (!any_given(o))
		return 0;
	if (o->isolation != RT_SB_ISO_NAMESPACES || o->host_root)
		return hutch_fail(err, EINVAL,
				  "--ucount: needs the sandbox's own user namespace (not %s)",
				  o->host_root ? "--host-root" : "--isolation landlock or none");
	for (size_t i = 0; i < RT_SB_N_UCOUNTS; i++) {
		char path[64];
		snprintf(path, sizeof(path), "/proc/sys/user/max_%s", ucounts[i].name);
		if (o->ucount[i] >= 0 && ucounts[i].rlimit < 0 && access(path, F_OK) < 0)
			return hutch_fail(err, ENOTSUP, "--ucount %s: this kernel has no %s",
					  ucounts[i].name, path);
	}
	return 0;
}

static int64_t value(const struct rt_sb_opts *o, size_t i)
{
	return o->ucount[i] >= 0 ? o->ucount[i] : ucounts[i].value;
}

/* The rlimits, soft and hard: the sandbox's processes', and (ns_userns_limits_lower) its
 * namespace's, which whoever makes it (hutch, runc, crun) copies from its own. */
static void plan_rlimits(const struct rt_sb_opts *o, struct rt_process *p)
{
	p->rlimits = hutch_xrealloc(p->rlimits, (p->n_rlimits + 2) * sizeof(*p->rlimits));
	for (size_t i = 0; i < RT_SB_N_UCOUNTS; i++) {
		if (ucounts[i].rlimit < 0)
			continue;
		uint64_t v = value(o, i) == UCOUNT_MAX ? RLIM_INFINITY : (uint64_t)value(o, i);
		p->rlimits[p->n_rlimits++] = (struct ns_rlimit){ ucounts[i].rlimit, v, v };
	}
}

/* The limits as sysctls of the sandbox's new user namespace (each one this kernel has), and
 * as its rlimits. */
void rt_sb_plan_ucounts(const struct rt_sb_opts *o, const struct rt_sb_plan *p, struct rt_spec *s)
{
	if (!p->userns)
		return; /* --host-root: root's own, which no limit of ours can cover */
	s->sysctls =
		hutch_xrealloc(s->sysctls, (s->n_sysctls + RT_SB_N_UCOUNTS) * sizeof(*s->sysctls));
	for (size_t i = 0; i < RT_SB_N_UCOUNTS; i++) {
		char path[64];
		snprintf(path, sizeof(path), "/proc/sys/user/max_%s", ucounts[i].name);
		if (ucounts[i].rlimit >= 0 || access(path, F_OK) < 0)
			continue; /* an older kernel: rt_sb_check refused it if asked for */
		int64_t v = value(o, i) == UCOUNT_MAX ? INT_MAX : value(o, i);
		s->sysctls[s->n_sysctls++] = (struct ns_sysctl){
			.key = hutch_xasprintf("user.max_%s", ucounts[i].name),
			.value = hutch_xasprintf("%lld", (long long)v),
		};
	}
	plan_rlimits(o, &s->process);
}

/*
 * runc and crun refuse a user.* sysctl (runc: "not in a separate kernel namespace", crun:
 * "not namespaced"), so for them the limits move into a createRuntime hook: host root, which
 * owns the container's user namespace, joins it (nsenter, by the init's pid in the state on
 * stdin) and writes them there; the sysctl set opened is the one of the namespace the opener
 * is in, whatever procfs it goes through. (A createContainer hook would already be inside,
 * but crun runs it in the bundle directory, which root of the namespace may not enter.)
 * runsc implements inotify, fanotify and namespaces in its sentry, which asks the host for
 * none of them: nothing to limit there.
 */
void rt_sb_ucount_hook(const char *runtime, struct rt_spec *s)
{
	static const char script[] =
		"PATH=/usr/sbin:/usr/bin:/sbin:/bin; "
		"pid=$(sed -n 's/.*\"pid\": *\\([0-9][0-9]*\\).*/\\1/p'); [ -n \"$pid\" ] || exit "
		"1; "
		"exec nsenter --user --target \"$pid\" sh -c 'for kv do echo \"${kv#*=}\" "
		">\"/proc/sys/user/${kv%%=*}\" || exit 1; done' sh \"$@\"";
	const char *base = strrchr(runtime, '/') ? strrchr(runtime, '/') + 1 : runtime;
	char **argv = hutch_xcalloc(s->n_sysctls + 5, sizeof(char *));
	size_t n = 0, kept = 0;
	argv[n++] = hutch_xstrdup("sh");
	argv[n++] = hutch_xstrdup("-c");
	argv[n++] = hutch_xstrdup(script);
	argv[n++] = hutch_xstrdup("sh");
	for (size_t i = 0; i < s->n_sysctls; i++) {
		struct ns_sysctl *c = &s->sysctls[i];
		if (!hutch_str_has_prefix(c->key, "user.")) {
			s->sysctls[kept++] = *c;
			continue;
		}
		argv[n++] = hutch_xasprintf("%s=%s", c->key + strlen("user."), c->value);
		free(c->key);
		free(c->value);
	}
	s->n_sysctls = kept;
	if (n == 4 || strstr(base, "runsc")) {
		hutch_strv_free(argv);
		return;
	}
	struct rt_hooks *h = &s->hooks[RT_HOOK_CREATE_RUNTIME];
	h->v = hutch_xrealloc(h->v, (h->n + 1) * sizeof(*h->v));
	h->v[h->n++] = (struct rt_hook){ .path = hutch_xstrdup("/bin/sh"), .args = argv };
}
