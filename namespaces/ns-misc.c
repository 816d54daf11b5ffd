// SPDX-License-Identifier: Apache-2.0
/*
 * The rest of a process's environment: rlimits, hostname and domainname, sysctls (checked
 * against the namespaces the container owns, as runc does), oom_score_adj, and joining
 * existing namespaces by path.
 */
#include "ns-internal.h"
#include "ns-mount-plan.h"

#include <fcntl.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/resource.h>

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

static const struct {
	const char *name;
	int resource;
} rlimits[] = {
	{ "RLIMIT_AS", RLIMIT_AS },
	{ "RLIMIT_CORE", RLIMIT_CORE },
	{ "RLIMIT_CPU", RLIMIT_CPU },
	{ "RLIMIT_DATA", RLIMIT_DATA },
	{ "RLIMIT_FSIZE", RLIMIT_FSIZE },
	{ "RLIMIT_LOCKS", RLIMIT_LOCKS },
	{ "RLIMIT_MEMLOCK", RLIMIT_MEMLOCK },
	{ "RLIMIT_MSGQUEUE", RLIMIT_MSGQUEUE },
	{ "RLIMIT_NICE", RLIMIT_NICE },
	{ "RLIMIT_NOFILE", RLIMIT_NOFILE },
	{ "RLIMIT_NPROC", RLIMIT_NPROC },
	{ "RLIMIT_RSS", RLIMIT_RSS },
	{ "RLIMIT_RTPRIO", RLIMIT_RTPRIO },
	{ "RLIMIT_RTTIME", RLIMIT_RTTIME },
	{ "RLIMIT_SIGPENDING", RLIMIT_SIGPENDING },
	{ "RLIMIT_STACK", RLIMIT_STACK },
};

int ns_rlimit_from_name(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(rlimits); i++)
		if (strcmp(rlimits[i].name, name) == 0)
			return rlimits[i].resource;
	return -EINVAL;
}

const char *ns_rlimit_name(int resource)
{
	for (size_t i = 0; i < ARRAY_SIZE(rlimits); i++)
		if (rlimits[i].resource == resource)
			return rlimits[i].name;
	return "RLIMIT_?";
}

int ns_set_rlimits(const struct ns_rlimit *v, size_t n, struct hutch_err *err)
{
	for (size_t i = 0; i < n; i++) {
		struct rlimit rl = { .rlim_cur = v[i].soft, .rlim_max = v[i].hard };
		if (setrlimit(v[i].resource, &rl) < 0)
			return hutch_fail_errno(err, errno, "%s", ns_rlimit_name(v[i].resource));
	}
	return 0;
}

/*
 * What a process queues of RLIMIT_SIGPENDING (signals, POSIX timers) and RLIMIT_MSGQUEUE
 * (POSIX message queue bytes) is counted for its user, and again for the owner of its user
 * namespace in the parent namespace, up to the initial one (kernel/ucount.c,
 * inc_rlimit_ucounts). At each parent the count is held to the child namespace's own limit,
 * which create_user_ns copies from its maker's soft rlimit (set_userns_rlimit_max), not to
 * anything the namespace's processes set later. A container's namespace is host root's: with
 * the maker's limits (96367 signals, 819200 bytes) one container queued all of root's, and
 * root's services and every other container got EAGAIN from sigqueue and timer_create and
 * EMFILE from mq_open. So the maker lowers its own soft limits to the container's hard ones
 * for the clone: together, everything the namespace queues stays below them.
 */
static const int userns_rlimits[] = { RLIMIT_SIGPENDING, RLIMIT_MSGQUEUE };

int ns_userns_limits_lower(const struct ns_rlimit *v, size_t n, struct ns_userns_limits *saved,
			   struct hutch_err *err)
{
	saved->n = 0;
	for (size_t i = 0; i < n; i++) {
		struct rlimit rl;
		bool counted = false;
		for (size_t k = 0; k < ARRAY_SIZE(userns_rlimits); k++)
			counted |= v[i].resource == userns_rlimits[k];
		if (!counted || saved->n == ARRAY_SIZE(saved->resource))
			continue;
		if (getrlimit(v[i].resource, &rl) < 0)
			return hutch_fail_errno(err, errno, "%s", ns_rlimit_name(v[i].resource));
		if (v[i].hard >= rl.rlim_cur)
			continue; /* only ever lowered: a container's higher one is its own */
		saved->resource[saved->n] = v[i].resource;
		saved->soft[saved->n++] = rl.rlim_cur;
		rl.rlim_cur = v[i].hard;
		if (setrlimit(v[i].resource, &rl) < 0) {
			int r = hutch_fail_errno(err, errno, "lower %s for the user namespace",
						 ns_rlimit_name(v[i].resource));
			saved->n--;
			ns_userns_limits_restore(saved);
			return r;
		}
	}
	return 0;
}

void ns_userns_limits_restore(const struct ns_userns_limits *saved)
{
	for (size_t i = 0; i < saved->n; i++) {
		struct rlimit rl;
		if (getrlimit(saved->resource[i], &rl) < 0)
			continue;
		rl.rlim_cur = saved->soft[i]; /* at most the hard limit, which lowering left */
		(void)setrlimit(saved->resource[i], &rl);
	}
}

int ns_set_hostname(const char *hostname, const char *domainname, struct hutch_err *err)
{
	if (hostname && *hostname && sethostname(hostname, strlen(hostname)) < 0)
		return hutch_fail_errno(err, errno, "sethostname %s", hostname);
	if (domainname && *domainname && setdomainname(domainname, strlen(domainname)) < 0)
		return hutch_fail_errno(err, errno, "setdomainname %s", domainname);
	return 0;
}

/* The kernel.* keys that belong to the IPC namespace (runc's list). */
static const char *const ipc_sysctls[] = {
	"kernel.msgmax", "kernel.msgmnb", "kernel.msgmni", "kernel.sem",
	"kernel.shmall", "kernel.shmmax", "kernel.shmmni", "kernel.shm_rmid_forced",
};

int ns_check_sysctl(const char *key, uint32_t new_ns, struct hutch_err *err)
{
	bool new_net = new_ns & CLONE_NEWNET, new_ipc = new_ns & CLONE_NEWIPC;
	bool new_uts = new_ns & CLONE_NEWUTS;
	/* as runc: the spec's hostname field owns it, and a sysctl would race with it */
	if (strcmp(key, "kernel.hostname") == 0)
		return hutch_fail(
			err, EINVAL,
			"sysctl %s is not allowed: it conflicts with the OCI hostname field", key);
	bool ipc = hutch_str_has_prefix(key, "fs.mqueue.");
	for (size_t i = 0; i < ARRAY_SIZE(ipc_sysctls); i++)
		ipc = ipc || strcmp(key, ipc_sysctls[i]) == 0;
	if (ipc) {
		if (new_ipc)
			return 0;
		return hutch_fail(err, EINVAL, "sysctl %s needs a new ipc namespace", key);
	}
	if (hutch_str_has_prefix(key, "net.")) {
		if (new_net)
			return 0;
		return hutch_fail(err, EINVAL, "sysctl %s needs a new network namespace", key);
	}
	/* The ucount limits of the user namespace the writer is in (kernel/ucount.c): a joined
	 * one may be the host's or another container's, so only one of its own. */
	if (hutch_str_has_prefix(key, "user.")) {
		if (new_ns & CLONE_NEWUSER)
			return 0;
		return hutch_fail(err, EINVAL, "sysctl %s needs a new user namespace", key);
	}
	if (strcmp(key, "kernel.domainname") == 0) {
		if (new_uts)
			return 0;
		return hutch_fail(err, EINVAL, "sysctl %s needs a new uts namespace", key);
	}
	return hutch_fail(err, EINVAL, "sysctl %s is not namespaced, not allowed", key);
}

static int write_sysctl(const struct ns_sysctl *s, struct hutch_err *err)
{
	const char *k = s->key;
	if (!k || !*k || *k == '.' || strchr(k, '/') || strstr(k, ".."))
		return hutch_fail(err, EINVAL, "invalid sysctl key \"%s\"", k ? k : "");
	_cleanup_free_ char *path = hutch_xasprintf("/proc/sys/%s", k);
	for (char *p = path + strlen("/proc/sys/"); *p; p++)
		if (*p == '.')
			*p = '/';
	_cleanup_close_ int fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return hutch_fail_errno(err, errno, "sysctl %s: open %s", k, path);
	/* Something mounted over /proc/sys could redirect the write (CVE-2025-52881). */
	int r = ns_check_procfs(fd, path, err);
	if (r < 0)
		return r;
	r = hutch_write_all(fd, s->value ? s->value : "", s->value ? strlen(s->value) : 0);
	if (r < 0)
		return hutch_fail_errno(err, r, "sysctl %s: write", k);
	return 0;
}

int ns_write_sysctls(const struct ns_sysctl *v, size_t n, struct hutch_err *err)
{
	if (n == 0)
		return 0;
	int r = ns_check_procfs(-1, "/proc", err);
	if (r < 0)
		return r;
	for (size_t i = 0; i < n; i++) {
		r = write_sysctl(&v[i], err);
		if (r < 0)
			return r;
	}
	return 0;
}

int ns_set_oom_score_adj(pid_t pid, int adj, struct hutch_err *err)
{
	char path[64], buf[16];
	snprintf(path, sizeof(path), "/proc/%d/oom_score_adj", (int)pid);
	snprintf(buf, sizeof(buf), "%d", adj);
	return hutch_write_str_at(AT_FDCWD, path, buf, err);
}

static const struct {
	const char *name;
	int flag;
} ns_types[] = {
	{ "pid", CLONE_NEWPID },       { "network", CLONE_NEWNET }, { "mount", CLONE_NEWNS },
	{ "ipc", CLONE_NEWIPC },       { "uts", CLONE_NEWUTS },	    { "user", CLONE_NEWUSER },
	{ "cgroup", CLONE_NEWCGROUP }, { "time", CLONE_NEWTIME },
};

int ns_type_flag(const char *type)
{
	for (size_t i = 0; i < ARRAY_SIZE(ns_types); i++)
		if (strcmp(ns_types[i].name, type) == 0)
			return ns_types[i].flag;
	return -EINVAL;
}

const char *ns_type_name(int flag)
{
	for (size_t i = 0; i < ARRAY_SIZE(ns_types); i++)
		if (ns_types[i].flag == flag)
			return ns_types[i].name;
	return "?";
}

int ns_join(const char *path, int clone_flag, struct hutch_err *err)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return hutch_fail_errno(err, errno, "open %s", path);
	int type = ioctl(fd, NS_GET_NSTYPE);
	if (type < 0 && errno == ENOTTY)
		return hutch_fail(err, EINVAL, "%s is not a namespace file", path);
	if (type < 0)
		return hutch_fail_errno(err, errno, "%s: NS_GET_NSTYPE", path);
	if (type != clone_flag)
		return hutch_fail(err, EINVAL, "%s is not a %s namespace", path,
				  ns_type_name(clone_flag));
	if (setns(fd, clone_flag) < 0)
		return hutch_fail_errno(err, errno, "setns %s", path);
	return 0;
}

/* A sysfs mounted from inside a network namespace shows that namespace's interfaces. */
static int mount_sysfs(const char *at, struct hutch_err *err)
{
	const struct ns_mount_op ops[] = {
		NS_MOUNT_OP(NS_OP_MKDIR, .target = at),
		NS_MOUNT_OP(NS_OP_MOUNT, .target = at, .source = "sysfs", .fstype = "sysfs",
			    .flags = MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, .label = at),
	};
	return ns_mount_apply_host(ops, ARRAY_SIZE(ops), err);
}

int ns_netns_new(const char *path, const char *sysfs_at, struct hutch_err *err)
{
	_cleanup_close_ int self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (self < 0)
		return hutch_fail_errno(err, errno, "open /proc/self/ns/net");
	if (unshare(CLONE_NEWNET) < 0)
		return hutch_fail_errno(err, errno, "a new network namespace");
	int fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	int saved = errno;
	int r = fd >= 0 && sysfs_at ? mount_sysfs(sysfs_at, err) : 0;
	if (setns(self, CLONE_NEWNET) < 0)
		abort(); /* the rest of the run would configure the wrong namespace */
	if (fd < 0)
		return hutch_fail_errno(err, saved, "open the new network namespace");
	if (r < 0 || !path) {
		if (r < 0)
			close(fd);
		return r < 0 ? r : fd;
	}
	char src[64];
	snprintf(src, sizeof(src), "/proc/self/fd/%d", fd);
	const struct ns_mount_op ops[] = {
		NS_MOUNT_OP(NS_OP_MKFILE, .target = path),
		NS_MOUNT_OP(NS_OP_BIND, .target = path, .source = src),
	};
	r = ns_mount_apply_host(ops, ARRAY_SIZE(ops), err);
	if (r < 0) {
		close(fd);
		return hutch_err_prefix(err, "pin the network namespace at %s: ", path);
	}
	return fd;
}
