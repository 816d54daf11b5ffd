// SPDX-License-Identifier: Apache-2.0
/*
 * ns_mount_apply: performs a plan's ops (ns-mount-plan.h) in order. Each mount point is
 * resolved inside the root fd (openat2 RESOLVE_IN_ROOT) and mounted on through
 * /proc/self/fd/N, so no symlink in an image can redirect a mount onto the host; the mount
 * calls go through the hutch_sys seam, for the unit tests to see.
 */
#include "ns-internal.h"
#include "hutch-sys.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>

/* A destination none of whose components may be a symlink (the planner asks it for /proc,
 * /sys and /dev): the rest, from the first missing one, will be created as directories. */
static int refuse_symlinks(int rootfd, const char *dest, struct hutch_err *err)
{
	char buf[PATH_MAX], done[PATH_MAX] = "";
	if (snprintf(buf, sizeof(buf), "%s", dest) >= (int)sizeof(buf))
		return hutch_fail(err, ENAMETOOLONG, "path too long: %s", dest);
	_cleanup_close_ int cur = fcntl(rootfd, F_DUPFD_CLOEXEC, 3);
	if (cur < 0)
		return hutch_fail_errno(err, errno, "dup");
	char *save = NULL;
	for (char *c = strtok_r(buf, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		if (strcmp(c, "..") == 0)
			return hutch_fail(err, EINVAL, "mount destination %s: '..' is not allowed",
					  dest);
		size_t l = strlen(done);
		snprintf(done + l, sizeof(done) - l, "/%s", c);
		int next = openat(cur, c, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0)
			return 0; /* the rest will be created as directories */
		close(cur);
		cur = next;
		struct stat st;
		if (fstat(cur, &st) < 0)
			return hutch_fail_errno(err, errno, "stat %s", done);
		if (S_ISLNK(st.st_mode))
			return hutch_fail(err, ELOOP, "mount destination %s is a symlink", done);
		if (!S_ISDIR(st.st_mode))
			return 0;
	}
	return 0;
}

/*
 * Where a mount lands once its destination is resolved: inside the container's procfs only
 * for proc itself and for the files lxcfs emulates (runc's list). Anything else there, and in
 * particular a destination that an image's symlink sent into /proc ("/data" -> proc/self/attr,
 * CVE-2019-16884), is refused: later steps write to /proc and would be fooled by a mount.
 */
static int refuse_in_proc(int fd, const char *dest, bool is_proc, struct hutch_err *err)
{
	static const char *const lxcfs[] = {
		"/proc/cpuinfo", "/proc/diskstats",
		"/proc/meminfo", "/proc/stat",
		"/proc/swaps",	 "/proc/uptime",
		"/proc/loadavg", "/proc/slabinfo",
		"/proc/net/dev", "/proc/sys/kernel/ns_last_pid",
	};
	struct statfs sf;
	if (fstatfs(fd, &sf) < 0)
		return hutch_fail_errno(err, errno, "statfs");
	if (sf.f_type != PROC_SUPER_MAGIC)
		return 0;
	if (!ns_path_under(dest, "proc"))
		return hutch_fail(err, EPERM,
				  "resolves inside /proc (through a symlink in the "
				  "image?): not allowed");
	if (is_proc && ns_path_is(dest, "proc"))
		return 0;
	for (size_t i = 0; i < ARRAY_SIZE(lxcfs); i++)
		if (ns_path_is(dest, lxcfs[i] + 1))
			return 0;
	return hutch_fail(err, EPERM,
			  "inside /proc: only proc itself and lxcfs's files may be "
			  "mounted there");
}

/* A file to bind a non-directory onto, created empty when missing. */
static int make_file_in_root(int rootfd, const char *dest, struct hutch_err *err)
{
	char dir[PATH_MAX], base[NAME_MAX + 1];
	int r = ns_split_path(dest, dir, base, err);
	if (r < 0)
		return r;
	_cleanup_close_ int d = hutch_mkdir_in_root(rootfd, dir, 0755, err);
	if (d < 0)
		return d;
	int fd = openat(d, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0 && errno != EEXIST)
		return hutch_fail_errno(err, errno, "create %s", dest);
	if (fd >= 0)
		close(fd);
	return hutch_open_in_root(rootfd, dest, O_PATH, 0, err);
}

struct applier {
	int rootfd;
	int cur;	/* the mount point the last MKDIR/MKFILE made */
	int held;	/* HOLD's directory */
	unsigned state; /* ns_mount_branch: how the last fallback MOUNT or TEST went */
	int *slots;	/* the view's fds */
	size_t n_slots;
	bool host; /* the root fd is "/": paths are host paths, mount(2) takes them as they are */
};

static void set_fd(int *slot, int fd)
{
	if (*slot >= 0)
		close(*slot);
	*slot = fd;
}

/* The mount now at op's target: after a mount, the point we resolved names what it covers. */
static int open_top(struct applier *a, const struct ns_mount_op *op, struct hutch_err *err)
{
	return hutch_open_in_root(a->rootfd, op->target, O_PATH, 0, err);
}

static int need_cur(struct applier *a, struct hutch_err *err)
{
	if (a->cur < 0)
		return hutch_fail(err, EINVAL, "no mount point made first");
	return 0;
}

static int do_mount(struct applier *a, const struct ns_mount_op *op, struct hutch_err *err)
{
	char p[HUTCH_FD_PATH_MAX];
	int r = need_cur(a, err);
	if (r < 0)
		return r;
	if (hutch_sys->mount(op->source, hutch_fd_path(a->cur, p), op->fstype, op->flags,
			     op->data) == 0) {
		if (op->fallback)
			a->state = NS_BRANCH_MOUNTED;
		return 0;
	}
	if (((op->fallback & NS_FALLBACK_EPERM) && errno == EPERM) ||
	    ((op->fallback & NS_FALLBACK_EBUSY) && errno == EBUSY)) {
		a->state = NS_BRANCH_FELL_BACK;
		return 0;
	}
	return hutch_fail_errno(err, errno, "%s", op->label ? op->label : "mount");
}

static int do_bind(struct applier *a, const struct ns_mount_op *op, struct hutch_err *err)
{
	char p[HUTCH_FD_PATH_MAX];
	int r = need_cur(a, err);
	if (r < 0)
		return r;
	if (op->tree >= 0)
		return ns_attach_tree(op->tree, a->cur, err);
	if (hutch_sys->mount(op->source, hutch_fd_path(a->cur, p), NULL,
			     MS_BIND | (op->recursive ? MS_REC : 0), NULL) < 0)
		return hutch_fail_errno(err, errno, "bind %s", op->source);
	return 0;
}

static int do_symlink(struct applier *a, const struct ns_mount_op *op, struct hutch_err *err)
{
	char dir[PATH_MAX], base[NAME_MAX + 1];
	int r = ns_split_path(op->target, dir, base, err);
	if (r < 0)
		return r;
	_cleanup_close_ int d = hutch_open_in_root(a->rootfd, dir, O_PATH | O_DIRECTORY, 0, err);
	if (d < 0)
		return d;
	if (hutch_sys->symlinkat(op->source, d, base) < 0 && errno != EEXIST)
		return hutch_fail_errno(err, errno, "%s", op->label ? op->label : "symlink");
	return 0;
}

/* The ops that act on the mount now at the target. */
static int on_top(struct applier *a, const struct ns_mount_op *op, struct hutch_err *err)
{
	char p[HUTCH_FD_PATH_MAX];
	_cleanup_close_ int top = open_top(a, op, err);
	if (top < 0)
		return top;
	switch (op->kind) {
	case NS_OP_REMOUNT_BIND:
		return ns_remount_bind(hutch_fd_path(top, p), op->flags, op->clear, err);
	case NS_OP_SETATTR: {
		struct mount_attr attr = { .attr_set = op->flags, .attr_clr = op->clear };
		if (hutch_sys->mount_setattr(top, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr,
					     sizeof(attr)) < 0)
			return hutch_fail_errno(err, errno, "%s", op->label);
		return 0;
	}
	case NS_OP_REMOUNT:
		if (hutch_sys->mount(NULL, hutch_fd_path(top, p), NULL, MS_REMOUNT | op->flags,
				     op->data) < 0)
			return hutch_fail_errno(err, errno, "%s",
						op->label ? op->label : "remount");
		return 0;
	case NS_OP_PROPAGATION:
		if (hutch_sys->mount(NULL, a->host ? op->target : hutch_fd_path(top, p), NULL,
				     op->flags, NULL) < 0)
			return hutch_fail_errno(err, errno, "%s",
						op->label ? op->label : "set propagation");
		return 0;
	case NS_OP_CHECK_PROCFS:
		return ns_check_procfs(top, op->target, err);
	case NS_OP_COPYUP:
		if (a->held < 0)
			return hutch_fail(err, EINVAL, "tmpcopyup: nothing held to copy");
		return ns_copy_tree(a->held, top, 0, err);
	default:
		return hutch_fail(err, EINVAL, "mount op %d: unknown", (int)op->kind);
	}
}

/* ---- the view's ops: plain paths relative to the root fd, fds in slots ---- */

static const char *rel(const char *target)
{
	while (*target == '/')
		target++;
	return target;
}

static int slot_fd(struct applier *a, int slot)
{
	return slot >= 0 && (size_t)slot < a->n_slots ? a->slots[slot] : -1;
}

static int set_slot(struct applier *a, int slot, int fd)
{
	if (slot < 0 || (size_t)slot >= a->n_slots) {
		if (fd >= 0)
			close(fd);
		return -EINVAL;
	}
	set_fd(&a->slots[slot], fd);
	return fd;
}

/* mount(2) and umount2(2) take no directory fd: the path through the root fd's magic link,
 * or, for the host's root, the path itself (a private tmpfs may by then cover /proc). */
static const char *at_path(struct applier *a, const char *target, char buf[PATH_MAX])
{
	if (a->host)
		return target;
	snprintf(buf, PATH_MAX, "/proc/self/fd/%d/%s", a->rootfd, rel(target));
	return buf;
}

static int detached_tmpfs(struct applier *a, const struct ns_mount_op *op, struct hutch_err *err)
{
	const struct hutch_sys *s = hutch_sys;
	_cleanup_close_ int fs = s->fsopen("tmpfs", FSOPEN_CLOEXEC);
	if (fs < 0 || s->fsconfig(fs, FSCONFIG_SET_STRING, "mode", op->source, 0) < 0 ||
	    s->fsconfig(fs, FSCONFIG_SET_STRING, "size", op->data, 0) < 0 ||
	    s->fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		return hutch_fail_errno(err, errno, "%s: tmpfs", op->label);
	unsigned int attr = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC;
	int mnt = s->fsmount(fs, FSMOUNT_CLOEXEC,
			     attr | ((op->flags & MS_RDONLY) ? MOUNT_ATTR_RDONLY : 0));
	if (mnt < 0)
		return hutch_fail_errno(err, errno, "%s: fsmount tmpfs", op->label);
	return set_slot(a, op->slot, mnt) < 0 ? -EINVAL : 0;
}

/* mkdir -p, and an empty file last when the mount to go there is a file. */
static int make_mountpoint(struct applier *a, const struct ns_mount_op *op, struct hutch_err *err)
{
	bool dir = !op->is_file;
	struct stat st;
	if (op->slot >= 0) {
		if (fstat(slot_fd(a, op->slot), &st) < 0)
			return hutch_fail_errno(err, errno, "%s: %s", op->label, op->target);
		dir = S_ISDIR(st.st_mode);
	}
	_cleanup_free_ char *p = hutch_xstrdup(op->target);
	for (char *s = strchr(p + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		if (hutch_sys->mkdirat(a->rootfd, rel(p), 0755) < 0 && errno != EEXIST)
			return hutch_fail_errno(err, errno, "%s: mkdir %s", op->label, p);
		*s = '/';
	}
	int r = dir ? hutch_sys->mkdirat(a->rootfd, rel(p), 0755)
		    : mknodat(a->rootfd, rel(p), S_IFREG | 0600, 0);
	if (r < 0 && errno != EEXIST)
		return hutch_fail_errno(err, errno, "%s: mount point %s", op->label, p);
	return 0;
}

static int set_rdonly(struct applier *a, const struct ns_mount_op *op, struct hutch_err *err)
{
	struct mount_attr attr = { .attr_set = MOUNT_ATTR_RDONLY };
	int fd = op->slot >= 0 ? slot_fd(a, op->slot) : a->rootfd;
	const char *path = op->slot >= 0 ? "" : rel(op->target);
	unsigned int flags =
		(op->flags & NS_RDONLY_ALONE ? 0 : AT_RECURSIVE) | (*path ? 0 : AT_EMPTY_PATH);
	if (hutch_sys->mount_setattr(fd, path, flags, &attr, sizeof(attr)) < 0)
		return hutch_fail_errno(err, errno, "%s", op->label);
	return 0;
}

static int view_fds(struct applier *a, const struct ns_mount_op *op, struct hutch_err *err)
{
	int fd;
	switch (op->kind) {
	case NS_OP_OPEN:
		fd = openat(a->rootfd, rel(op->target), O_PATH | O_CLOEXEC | O_NOFOLLOW);
		return set_slot(a, op->slot, fd) == -EINVAL ? -EINVAL : 0;
	case NS_OP_OPEN_AT:
		fd = openat(slot_fd(a, op->slot2), op->source, O_PATH | O_CLOEXEC);
		return set_slot(a, op->slot, fd) == -EINVAL ? -EINVAL : 0;
	case NS_OP_CLOSE:
		set_slot(a, op->slot, -1);
		return 0;
	case NS_OP_CREATE_IN:
		fd = openat(slot_fd(a, op->slot2), op->source,
			    O_CREAT | O_EXCL | O_RDONLY | O_CLOEXEC, 0);
		if (fd < 0)
			return hutch_fail_errno(err, errno, "%s", op->label);
		close(fd);
		return 0;
	case NS_OP_CLONE: /* "/" itself: the root fd */
		fd = hutch_sys->open_tree(a->rootfd, rel(op->target),
					  OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE |
						  (*rel(op->target) ? 0 : AT_EMPTY_PATH));
		if (fd < 0)
			return hutch_fail_errno(err, errno, "%s", op->label);
		return set_slot(a, op->slot, fd) < 0 ? -EINVAL : 0;
	default:
		return detached_tmpfs(a, op, err);
	}
}

static int view_op(struct applier *a, const struct ns_mount_op *op, struct hutch_err *err)
{
	char p[PATH_MAX], s[HUTCH_FD_PATH_MAX], t[HUTCH_FD_PATH_MAX];
	struct stat st;
	switch (op->kind) {
	case NS_OP_SET_RDONLY:
		return set_rdonly(a, op, err);
	case NS_OP_MKPOINT:
		return make_mountpoint(a, op, err);
	case NS_OP_MOVE:
		if (hutch_sys->move_mount(slot_fd(a, op->slot), "", a->rootfd, rel(op->target),
					  MOVE_MOUNT_F_EMPTY_PATH) < 0)
			return hutch_fail_errno(err, errno, "%s", op->label);
		return 0;
	case NS_OP_BIND_SLOTS:
		if (slot_fd(a, op->slot) < 0)
			return 0; /* gone, or not there to begin with */
		if (hutch_sys->mount(hutch_fd_path(slot_fd(a, op->slot2), s),
				     hutch_fd_path(slot_fd(a, op->slot), t), NULL, MS_BIND,
				     NULL) < 0)
			return hutch_fail_errno(err, errno, "%s", op->label);
		return 0;
	case NS_OP_MOUNT_AT:
		if (hutch_sys->mount(op->source, at_path(a, op->target, p), op->fstype, op->flags,
				     op->data) < 0)
			return hutch_fail_errno(err, errno, "%s", op->label);
		return 0;
	case NS_OP_UMOUNT:
		if (hutch_sys->umount2(at_path(a, op->target, p), MNT_DETACH) < 0)
			return hutch_fail_errno(err, errno, "%s", op->label);
		return 0;
	case NS_OP_TEST:
		if (fstatat(a->rootfd, rel(op->target), &st, AT_SYMLINK_NOFOLLOW) < 0)
			a->state = NS_BRANCH_MISSING;
		else
			a->state = S_ISDIR(st.st_mode) ? NS_BRANCH_DIR : 0;
		return 0;
	default:
		return view_fds(a, op, err);
	}
}

static int apply_one(struct applier *a, const struct ns_mount_op *op, struct hutch_err *err)
{
	int fd;
	switch (op->kind) {
	case NS_OP_REFUSE_SYMLINKS:
		return refuse_symlinks(a->rootfd, op->target, err);
	case NS_OP_MKDIR:
	case NS_OP_MKFILE:
		fd = op->kind == NS_OP_MKDIR ? hutch_mkdir_in_root(a->rootfd, op->target, 0755, err)
					     : make_file_in_root(a->rootfd, op->target, err);
		set_fd(&a->cur, fd);
		return fd < 0 ? fd : 0;
	case NS_OP_CHECK_DEST:
		fd = need_cur(a, err);
		return fd < 0 ? fd : refuse_in_proc(a->cur, op->target, op->is_proc, err);
	case NS_OP_HOLD:
		fd = hutch_open_in_root(a->rootfd, op->target, O_RDONLY | O_DIRECTORY, 0, err);
		set_fd(&a->held, fd);
		return fd < 0 ? fd : 0;
	case NS_OP_MOUNT:
		return do_mount(a, op, err);
	case NS_OP_BIND:
		return do_bind(a, op, err);
	case NS_OP_SYMLINK:
		return do_symlink(a, op, err);
	case NS_OP_FAIL:
		if (op->with_errno)
			return hutch_fail_errno(err, op->error, "%s", op->label);
		return hutch_fail(err, op->error, "%s", op->label);
	default:
		if (op->kind >= NS_OP_OPEN)
			return view_op(a, op, err);
		return on_top(a, op, err);
	}
}

static int apply(int rootfd, bool host, const struct ns_mount_op *ops, size_t n,
		 struct hutch_err *err)
{
	struct applier a = { .rootfd = rootfd, .cur = -1, .held = -1, .host = host };
	for (size_t i = 0; i < n; i++) {
		int top = ops[i].slot > ops[i].slot2 ? ops[i].slot : ops[i].slot2;
		if (top >= (int)a.n_slots)
			a.n_slots = (size_t)top + 1;
	}
	_cleanup_free_ int *slots = hutch_xcalloc(a.n_slots + 1, sizeof(int));
	for (size_t i = 0; i < a.n_slots; i++)
		slots[i] = -1;
	a.slots = slots;
	int r = 0;
	for (size_t i = 0; i < n && r >= 0; i++) {
		const struct ns_mount_op *op = &ops[i];
		if (op->branch && !(op->branch & a.state))
			continue;
		r = apply_one(&a, op, err);
		if (r < 0 && op->spec)
			hutch_err_prefix(err, "mount %s: ", op->spec);
	}
	set_fd(&a.cur, -1);
	set_fd(&a.held, -1);
	for (size_t i = 0; i < a.n_slots; i++)
		set_fd(&slots[i], -1);
	return r;
}

int ns_mount_apply_host(const struct ns_mount_op *ops, size_t n, struct hutch_err *err)
{
	_cleanup_close_ int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return hutch_fail_errno(err, errno, "open /");
	return apply(root, true, ops, n, err);
}

int ns_mount_apply(int rootfd, const struct ns_mount_op *ops, size_t n, struct hutch_err *err)
{
	return apply(rootfd, false, ops, n, err);
}
