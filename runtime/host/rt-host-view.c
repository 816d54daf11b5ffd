// SPDX-License-Identifier: Apache-2.0
/*
 * Host mode's child: the private mount view (the host read-only, rw trees bound back, private
 * tmpfs, denied paths covered), then Landlock and seccomp, then the command. Landlock can only
 * allow, so "deny beneath an allowed tree" is a mount; and Landlock leaves chmod, chown, utimes
 * and xattrs alone, so read-only is a mount flag too. Landlock is the coarse second layer.
 */
#include "rt-host.h"
#include "net.h"

#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
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

/* mkdir -p, and an empty file last when the mount to go there is a file. */
static int make_mountpoint(const char *path, bool dir, struct hutch_err *err)
{
	_cleanup_free_ char *p = hutch_xstrdup(path);
	for (char *s = strchr(p + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		if (mkdir(p, 0755) < 0 && errno != EEXIST)
			return hutch_fail_errno(err, errno, "view: mkdir %s", p);
		*s = '/';
	}
	int r = dir ? mkdir(p, 0755) : mknod(p, S_IFREG | 0600, 0);
	if (r < 0 && errno != EEXIST)
		return hutch_fail_errno(err, errno, "view: mount point %s", p);
	return 0;
}

static int set_rdonly(int dfd, const char *path, unsigned int flags, struct hutch_err *err)
{
	struct mount_attr a = { .attr_set = MOUNT_ATTR_RDONLY };
	if (mount_setattr(dfd, path, flags | AT_RECURSIVE, &a, sizeof(a)) < 0)
		return hutch_fail_errno(err, errno, "view: read-only %s", *path ? path : "mount");
	return 0;
}

/* A detached tmpfs with its root at mode; read-only from the start when ro. */
static int detached_tmpfs(const char *mode, bool ro, struct hutch_err *err)
{
	_cleanup_close_ int fs = fsopen("tmpfs", FSOPEN_CLOEXEC);
	if (fs < 0 || fsconfig(fs, FSCONFIG_SET_STRING, "mode", mode, 0) < 0 ||
	    fsconfig(fs, FSCONFIG_SET_STRING, "size", "64k", 0) < 0 ||
	    fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		return hutch_fail_errno(err, errno, "view: tmpfs");
	unsigned int attr = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC;
	int mnt = fsmount(fs, FSMOUNT_CLOEXEC, attr | (ro ? MOUNT_ATTR_RDONLY : 0));
	if (mnt < 0)
		return hutch_fail_errno(err, errno, "view: fsmount tmpfs");
	return mnt;
}

static bool is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/*
 * Denied files get a bind of one empty mode-000 file from a read-only tmpfs. Before Linux
 * 6.15 a detached mount can't be a bind source, so the tmpfs is attached briefly over a
 * directory that no target is reached through: the targets are held by fd.
 */
static int deny_files(struct rt_host *hs, struct hutch_err *err)
{
	static const char *const spots[] = { "/mnt", "/media", "/srv", "/tmp" };
	const char *spot = NULL;
	for (size_t i = 0; i < ARRAY_SIZE(spots) && !spot; i++)
		if (is_dir(spots[i]))
			spot = spots[i];
	size_t n = 0;
	for (size_t i = 0; i < hs->deny.n; i++)
		n += !is_dir(hs->deny.v[i]) && access(hs->deny.v[i], F_OK) == 0;
	if (!n)
		return 0;
	if (!spot)
		return hutch_fail(err, ENOENT, "view: no directory to stage the denied files on");
	_cleanup_free_ int *targets = hutch_xcalloc(hs->deny.n, sizeof(int));
	for (size_t i = 0; i < hs->deny.n; i++)
		targets[i] = is_dir(hs->deny.v[i])
				     ? -1
				     : open(hs->deny.v[i], O_PATH | O_CLOEXEC | O_NOFOLLOW);
	_cleanup_close_ int mnt = detached_tmpfs("0700", false, err);
	if (mnt < 0)
		return mnt;
	/* Closed at once: a file open for writing keeps the mount from turning read-only. */
	int f = openat(mnt, "denied", O_CREAT | O_EXCL | O_RDONLY | O_CLOEXEC, 0);
	int r = f < 0 ? hutch_fail_errno(err, errno, "view: denied file") : close(f);
	if (r >= 0)
		r = set_rdonly(mnt, "", AT_EMPTY_PATH, err);
	if (r >= 0 && move_mount(mnt, "", AT_FDCWD, spot, MOVE_MOUNT_F_EMPTY_PATH) < 0)
		r = hutch_fail_errno(err, errno, "view: stage on %s", spot);
	_cleanup_close_ int src = r >= 0 ? openat(mnt, "denied", O_PATH | O_CLOEXEC) : -1;
	char sbuf[HUTCH_FD_PATH_MAX], tbuf[HUTCH_FD_PATH_MAX];
	for (size_t i = 0; r >= 0 && i < hs->deny.n; i++) {
		if (targets[i] < 0)
			continue;
		if (mount(hutch_fd_path(src, sbuf), hutch_fd_path(targets[i], tbuf), NULL, MS_BIND,
			  NULL) < 0)
			r = hutch_fail_errno(err, errno, "view: deny %s", hs->deny.v[i]);
	}
	if (r >= 0 && umount2(spot, MNT_DETACH) < 0)
		r = hutch_fail_errno(err, errno, "view: unstage %s", spot);
	for (size_t i = 0; i < hs->deny.n; i++)
		if (targets[i] >= 0)
			close(targets[i]);
	return r;
}

/* Denied directories (and denied paths a private tmpfs hides): an empty read-only tmpfs with
 * mode 000 on top of everything, so that reading, listing and writing all fail. */
static int deny_dirs(struct rt_host *hs, struct hutch_err *err)
{
	for (size_t i = 0; i < hs->deny.n; i++) {
		const char *p = hs->deny.v[i];
		struct stat st;
		if (lstat(p, &st) == 0 && !S_ISDIR(st.st_mode))
			continue; /* a file: bound by deny_files */
		if (lstat(p, &st) < 0)
			TRY(make_mountpoint(p, true, err));
		_cleanup_close_ int mnt = detached_tmpfs("0", true, err);
		if (mnt < 0)
			return mnt;
		if (move_mount(mnt, "", AT_FDCWD, p, MOVE_MOUNT_F_EMPTY_PATH) < 0)
			return hutch_fail_errno(err, errno, "view: deny %s", p);
	}
	return 0;
}

struct clone {
	const char *path;
	int fd;
	bool ro;
};

static size_t depth(const char *p)
{
	size_t d = 0;
	for (; *p; p++)
		d += *p == '/';
	return d;
}

static int by_order(const void *a, const void *b)
{
	const struct clone *x = a, *y = b;
	if (x->ro != y->ro)
		return x->ro ? -1 : 1; /* read trees first: rw wins inside them */
	return (int)depth(x->path) - (int)depth(y->path);
}

/* Trees that must survive what comes next: rw trees (before / turns read-only) and read
 * trees a private tmpfs would hide. A read tree inside an rw tree is rw: rw wins. */
static int clone_trees(struct rt_host *hs, struct clone **out, size_t *n, struct hutch_err *err)
{
	struct clone *c = hutch_xcalloc(hs->read.n + hs->rw.n + 1, sizeof(*c));
	*out = c;
	for (size_t i = 0; i < hs->read.n + hs->rw.n; i++) {
		bool ro = i < hs->read.n;
		const char *p = ro ? hs->read.v[i] : hs->rw.v[i - hs->read.n];
		if (ro && (rt_host_under_any(p, &hs->rw) || !rt_host_under_any(p, &hs->tmpfs)))
			continue;
		int fd = open_tree(AT_FDCWD, p, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
		if (fd < 0)
			return hutch_fail_errno(err, errno, "view: clone %s", p);
		c[(*n)++] = (struct clone){ p, fd, ro };
		if (ro)
			TRY(set_rdonly(fd, "", AT_EMPTY_PATH, err));
	}
	qsort(c, *n, sizeof(*c), by_order);
	return 0;
}

static int attach_trees(struct clone *c, size_t n, struct hutch_err *err)
{
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		if (fstat(c[i].fd, &st) < 0)
			return hutch_fail_errno(err, errno, "view: %s", c[i].path);
		TRY(make_mountpoint(c[i].path, S_ISDIR(st.st_mode), err));
		if (move_mount(c[i].fd, "", AT_FDCWD, c[i].path, MOVE_MOUNT_F_EMPTY_PATH) < 0)
			return hutch_fail_errno(err, errno, "view: attach %s", c[i].path);
	}
	return 0;
}

static int mount_tmpfs(struct rt_host *hs, struct hutch_err *err)
{
	for (size_t i = 0; i < hs->o->n_tmpfs; i++) {
		const struct rt_sb_tmpfs *t = &hs->o->tmpfs[i];
		char data[64];
		snprintf(data, sizeof(data), "mode=1777,size=%llu", (unsigned long long)t->size);
		if (mount("tmpfs", t->path, "tmpfs", MS_NOSUID | MS_NODEV, data) < 0)
			return hutch_fail_errno(err, errno, "view: tmpfs %s", t->path);
	}
	return 0;
}

static void close_clones(struct clone *c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		close(c[i].fd);
	free(c);
}

/* The view, as a list: each step's order matters. */
static int build_view(struct rt_host *hs, struct hutch_err *err)
{
	struct clone *c = NULL;
	size_t n = 0;
	if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0) /* nothing leaks to the host */
		return hutch_fail_errno(err, errno, "view: make / a slave");
	int r = deny_files(hs, err); /* first: rw clones below carry the binds along */
	if (r >= 0)
		r = clone_trees(hs, &c, &n, err); /* while the trees are still writable */
	if (r >= 0)
		r = set_rdonly(AT_FDCWD, "/", 0, err); /* every mount, recursively */
	if (r >= 0)
		r = mount_tmpfs(hs, err);
	if (r >= 0)
		r = attach_trees(c, n, err);
	if (r >= 0)
		r = deny_dirs(hs, err); /* last: deny wins over all beneath it */
	close_clones(c, n);
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
	if (hs->h->mount_view)
		TRY(build_view(hs, err)); /* sources are host paths: clones before / turns ro */
	else
		TRY(check_denies_without_view(hs, err));
	TRY(enter_cwd(hs, err));		  /* a path in the view, not the inherited one */
	TRY(landlock_rules(hs, &ruleset, err));	  /* opens the view's paths: after the view */
	return drop_privileges(hs, ruleset, err); /* nothing privileged is left to do */
}
