// SPDX-License-Identifier: Apache-2.0
/*
 * A rootless caller's own user namespace, made before anything else so that the rest of a
 * sandbox's recipe (mounts, the container's nested namespace) runs with capabilities in it.
 * Ids keep their meaning: the caller's uid maps onto itself, and so does its /etc/subuid
 * range when newuidmap (setuid, from Debian's uidmap) can map it, as rootless podman's do.
 * Without them only the caller's own id is mapped. hutch itself is never setuid.
 */
#include "ns-internal.h"
#include "hutch-ids.h"

#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

int ns_subid_find(const char *text, const char *name, uid_t id, struct ns_idmap *out)
{
	char idstr[16];
	snprintf(idstr, sizeof(idstr), "%u", (unsigned)id);
	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		size_t k = strcspn(l, ":\n");
		if (l[k] != ':' || l[0] == '#')
			continue;
		bool me = (name && strlen(name) == k && !strncmp(l, name, k)) ||
			  (strlen(idstr) == k && !strncmp(l, idstr, k));
		unsigned long start, count;
		char end;
		if (!me || sscanf(l + k + 1, "%lu:%lu%c", &start, &count, &end) < 2 || count == 0 ||
		    start > UINT32_MAX || count > UINT32_MAX - start)
			continue;
		*out = (struct ns_idmap){ (uint32_t)start, (uint32_t)start, (uint32_t)count };
		return 0;
	}
	return -ENOENT;
}

static const char *find_helper(const char *name)
{
	static const char *const dirs[] = { "/usr/bin", "/bin", "/usr/sbin", "/usr/local/bin" };
	static char path[64];
	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
		snprintf(path, sizeof(path), "%s/%s", dirs[i], name);
		struct stat st;
		if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
			return path;
	}
	return NULL;
}

int ns_idmap_helper(const char *name, char *why, size_t len)
{
	const char *path = find_helper(name);
	struct stat st;
	if (!path || stat(path, &st) < 0) {
		snprintf(why, len, "%s is not installed (apt-get install uidmap)", name);
		return -ENOENT;
	}
	bool caps = getxattr(path, "security.capability", NULL, 0) > 0;
	if (!(st.st_uid == 0 && (st.st_mode & S_ISUID)) && !caps) {
		snprintf(why, len, "%s is neither setuid root nor has file capabilities", path);
		return -EPERM;
	}
	return 0;
}

int ns_rootless_plan(struct ns_rootless *r)
{
	*r = (struct ns_rootless){ .uid = geteuid(), .gid = getegid() };
	_cleanup_free_ char *name = hutch_user_name(r->uid), *su = NULL, *sg = NULL;
	struct hutch_err e = { 0 };
	if (hutch_read_file_at(AT_FDCWD, "/etc/subuid", 4 << 20, &su, NULL, &e) < 0 ||
	    ns_subid_find(su, name, r->uid, &r->sub_uid) < 0) {
		snprintf(r->why, sizeof(r->why), "no /etc/subuid entry for %s (uid %u)",
			 name ? name : "this user", (unsigned)r->uid);
		return 0;
	}
	if (hutch_read_file_at(AT_FDCWD, "/etc/subgid", 4 << 20, &sg, NULL, &e) < 0 ||
	    ns_subid_find(sg, name, r->uid, &r->sub_gid) < 0) {
		snprintf(r->why, sizeof(r->why), "no /etc/subgid entry for %s (uid %u)",
			 name ? name : "this user", (unsigned)r->uid);
		return 0;
	}
	if (r->uid >= r->sub_uid.host_id && r->uid - r->sub_uid.host_id < r->sub_uid.size) {
		snprintf(r->why, sizeof(r->why),
			 "/etc/subuid's range for uid %u holds uid %u itself", (unsigned)r->uid,
			 (unsigned)r->uid);
		return 0;
	}
	if (ns_idmap_helper("newuidmap", r->why, sizeof(r->why)) < 0 ||
	    ns_idmap_helper("newgidmap", r->why, sizeof(r->why)) < 0)
		return 0;
	r->subids = true;
	return 0;
}

/* newuidmap PID U U 1 S S N: run from outside the namespace (the child never entered it). */
static int run_map_helper(const char *tool, pid_t pid, unsigned id, const struct ns_idmap *sub)
{
	char a[6][16];
	snprintf(a[0], sizeof(a[0]), "%d", (int)pid);
	snprintf(a[1], sizeof(a[1]), "%u", id);
	snprintf(a[2], sizeof(a[2]), "%u", sub->container_id);
	snprintf(a[3], sizeof(a[3]), "%u", sub->host_id);
	snprintf(a[4], sizeof(a[4]), "%u", sub->size);
	pid_t c = fork();
	if (c < 0)
		return -errno;
	if (c == 0) {
		int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (devnull >= 0)
			dup2(devnull, STDOUT_FILENO); /* its stderr says why, if it fails */
		execl(find_helper(tool), tool, a[0], a[1], a[1], "1", a[2], a[3], a[4],
		      (char *)NULL);
		_exit(127);
	}
	int st;
	while (waitpid(c, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -EPERM;
}

/* The helper's half: waits until the parent has unshared, maps it, says how it went. */
static _Noreturn void map_parent(pid_t parent, const struct ns_rootless *r, int rd, int wr)
{
	char go, ok = 0;
	if (read(rd, &go, 1) == 1 &&
	    run_map_helper("newuidmap", parent, r->uid, &r->sub_uid) == 0 &&
	    run_map_helper("newgidmap", parent, r->gid, &r->sub_gid) == 0)
		ok = 1;
	_exit(write(wr, &ok, 1) == 1 ? 0 : 1);
}

static int write_self(const char *file, const char *text, struct hutch_err *err)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/%s", file);
	return hutch_write_str_at(AT_FDCWD, path, text, err);
}

static int map_own_id(const struct ns_rootless *r, struct hutch_err *err)
{
	char buf[48];
	int rc = write_self("setgroups", "deny", err); /* the kernel's price for a gid_map */
	snprintf(buf, sizeof(buf), "%u %u 1\n", (unsigned)r->uid, (unsigned)r->uid);
	if (rc >= 0)
		rc = write_self("uid_map", buf, err);
	snprintf(buf, sizeof(buf), "%u %u 1\n", (unsigned)r->gid, (unsigned)r->gid);
	if (rc >= 0)
		rc = write_self("gid_map", buf, err);
	return rc < 0 ? hutch_err_prefix(err, "rootless user namespace: ") : 0;
}

static void close_pair(int p[2])
{
	for (int i = 0; i < 2; i++)
		if (p[i] >= 0)
			close(p[i]);
}

/* With subordinate ids, a helper forked before the unshare maps us through newuidmap. */
static int unshare_mapped(struct ns_rootless *r, bool *mapped)
{
	int to[2] = { -1, -1 }, from[2] = { -1, -1 };
	pid_t self = getpid(), helper = 0;
	if (r->subids &&
	    (pipe2(to, O_CLOEXEC) < 0 || pipe2(from, O_CLOEXEC) < 0 || (helper = fork()) < 0)) {
		int e = -errno;
		close_pair(to), close_pair(from);
		return e;
	}
	if (helper == 0 && r->subids)
		map_parent(self, r, to[0], from[1]);
	int rc = unshare(CLONE_NEWUSER) < 0 ? -errno : 0;
	char ok = 0;
	if (r->subids) {
		close(to[0]), close(from[1]);
		if (rc == 0 && (write(to[1], "g", 1) != 1 || read(from[0], &ok, 1) != 1))
			ok = 0;
		close(to[1]), close(from[0]); /* a failed unshare: the helper reads EOF */
		while (waitpid(helper, NULL, 0) < 0 && errno == EINTR)
			;
	}
	*mapped = ok == 1;
	return rc;
}

int ns_rootless_enter(struct ns_rootless *r, struct hutch_err *err)
{
	bool mapped = false;
	int rc = unshare_mapped(r, &mapped);
	if (rc < 0)
		return hutch_fail_errno(err, -rc,
					"rootless user namespace (user namespaces may be off for "
					"users here: see hutch doctor)");
	r->entered = true;
	if (mapped)
		return 0;
	if (r->subids) { /* newuidmap refused (its stderr said why): one id still works */
		r->subids = false;
		snprintf(r->why, sizeof(r->why), "newuidmap/newgidmap failed for uid %u",
			 (unsigned)r->uid);
	}
	return map_own_id(r, err);
}

/* The probe's child: as uid (if root gave one), a user and mount namespace, mapped as
 * hutch would map it, then (overlay) an overlayfs on a tmpfs of its own. */
static _Noreturn void probe_child(uid_t as, bool overlay)
{
	if (as != (uid_t)-1 &&
	    (setgroups(0, NULL) < 0 || setresgid(as, as, as) < 0 || setresuid(as, as, as) < 0))
		_exit(10);
	prctl(PR_SET_DUMPABLE, 1, 0, 0,
	      0); /* the uid change cleared it: /proc/self is ours again */
	uid_t uid = geteuid();
	gid_t gid = getegid();
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
		_exit(11);
	struct ns_rootless r = { .uid = uid, .gid = gid };
	struct hutch_err e = { 0 };
	if (map_own_id(&r, &e) < 0)
		_exit(12);
	if (!overlay)
		_exit(0);
	if (mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("tmpfs", "/tmp", "tmpfs", 0, "mode=0700") < 0)
		_exit(13);
	if (mkdir("/tmp/l", 0755) < 0 || mkdir("/tmp/u", 0755) < 0 || mkdir("/tmp/w", 0755) < 0 ||
	    mkdir("/tmp/m", 0755) < 0)
		_exit(14);
	_exit(mount("overlay", "/tmp/m", "overlay", 0,
		    "lowerdir=/tmp/l,upperdir=/tmp/u,workdir=/tmp/w,userxattr") < 0
		      ? 15
		      : 0);
}

int ns_probe_userns(uid_t as, bool overlay)
{
	pid_t c = fork();
	if (c < 0)
		return -errno;
	if (c == 0)
		probe_child(as, overlay);
	int st;
	while (waitpid(c, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (!WIFEXITED(st))
		return -EIO;
	switch (WEXITSTATUS(st)) {
	case 0:
		return 0;
	case 11:
		return -EPERM; /* no user namespace */
	case 15:
		return -ENODEV; /* no overlayfs in one */
	default:
		return -EIO;
	}
}
