// SPDX-License-Identifier: Apache-2.0
/*
 * The container's mounts (options: ns-mount-opts.c): making the rootfs a mount point, and
 * performing each spec mount with its destination resolved inside the rootfs (openat2
 * RESOLVE_IN_ROOT) and mounted through /proc/self/fd/N, so no symlink in an image can
 * redirect a mount onto the host. Special cases: ro binds, sysfs, cgroup, tmpcopyup.
 */
#include "ns-internal.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>

#define ATIME_FLAGS (MS_NOATIME | MS_NODIRATIME | MS_RELATIME | MS_STRICTATIME)
#define COPY_MAX_DEPTH 128
#ifndef ST_NOSYMFOLLOW
#define ST_NOSYMFOLLOW 0x2000 /* glibc < 2.34 lacks it; the kernel reports it since 5.10 */
#endif

int ns_split_path(const char *path, char dir[PATH_MAX], char base[NAME_MAX + 1],
		  struct hutch_err *err)
{
	size_t len = strlen(path);
	while (len > 1 && path[len - 1] == '/')
		len--;
	if (len >= PATH_MAX)
		return hutch_fail(err, ENAMETOOLONG, "path too long: %s", path);
	const char *slash = memrchr(path, '/', len);
	const char *b = slash ? slash + 1 : path;
	size_t blen = len - (size_t)(b - path);
	if (blen == 0 || blen > NAME_MAX || (blen == 2 && memcmp(b, "..", 2) == 0) ||
	    (blen == 1 && *b == '.'))
		return hutch_fail(err, EINVAL, "invalid path %s", path);
	memcpy(base, b, blen);
	base[blen] = '\0';
	size_t dlen = slash ? (size_t)(slash - path) : 0;
	memcpy(dir, path, dlen);
	dir[dlen] = '\0';
	if (dlen == 0)
		strcpy(dir, "/");
	return 0;
}

static unsigned long statvfs_to_ms(unsigned long f)
{
	static const struct {
		unsigned long st, ms;
	} map[] = {
		{ ST_RDONLY, MS_RDONLY },     { ST_NOSUID, MS_NOSUID },
		{ ST_NODEV, MS_NODEV },	      { ST_NOEXEC, MS_NOEXEC },
		{ ST_NOATIME, MS_NOATIME },   { ST_NODIRATIME, MS_NODIRATIME },
		{ ST_RELATIME, MS_RELATIME }, { ST_NOSYMFOLLOW, MS_NOSYMFOLLOW },
	};
	unsigned long ms = 0;
	for (size_t i = 0; i < ARRAY_SIZE(map); i++)
		if (f & map[i].st)
			ms |= map[i].ms;
	return ms;
}

int ns_remount_bind(const char *target, unsigned long flags, unsigned long clear,
		    struct hutch_err *err)
{
	struct statvfs sv;
	if (statvfs(target, &sv) < 0)
		return hutch_fail_errno(err, errno, "statvfs");
	/* MS_BIND|MS_REMOUNT replaces all per-mount flags: carry over what is already set. */
	unsigned long keep = statvfs_to_ms(sv.f_flag) & ~clear;
	if (flags & ATIME_FLAGS)
		keep &= ~ATIME_FLAGS;
	flags &= ~(MS_BIND | MS_REC | MS_REMOUNT);
	if (mount(NULL, target, NULL, MS_BIND | MS_REMOUNT | flags | keep, NULL) < 0)
		return hutch_fail_errno(err, errno, "remount");
	return 0;
}

static bool is_bind(const struct ns_mount *m)
{
	return m->bind || (m->type && strcmp(m->type, "bind") == 0);
}

static bool type_is(const struct ns_mount *m, const char *type)
{
	return m->type && strcmp(m->type, type) == 0;
}

/* First path component of dest ("/proc/sys" -> "proc"), compared to name. */
static bool top_is(const char *dest, const char *name)
{
	while (*dest == '/')
		dest++;
	size_t n = strlen(name);
	return strncmp(dest, name, n) == 0 && (dest[n] == '/' || dest[n] == '\0');
}

static bool dest_is(const char *dest, const char *name)
{
	if (!top_is(dest, name))
		return false;
	while (*dest == '/')
		dest++;
	dest += strlen(name);
	return strspn(dest, "/") == strlen(dest);
}

/*
 * Under /proc, /sys and /dev a symlinked component could send procfs or sysfs somewhere the
 * later masking does not look (CVE-2019-19921): refuse instead of resolving it.
 */
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
	if (!top_is(dest, "proc"))
		return hutch_fail(err, EPERM,
				  "resolves inside /proc (through a symlink in the "
				  "image?): not allowed");
	if (is_proc && dest_is(dest, "proc"))
		return 0;
	for (size_t i = 0; i < ARRAY_SIZE(lxcfs); i++)
		if (dest_is(dest, lxcfs[i] + 1))
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

static int set_propagation(int fd, unsigned long propagation, struct hutch_err *err)
{
	char p[HUTCH_FD_PATH_MAX];
	if (propagation && mount(NULL, hutch_fd_path(fd, p), NULL, propagation, NULL) < 0)
		return hutch_fail_errno(err, errno, "set propagation");
	return 0;
}

/* source bound at dest; tree >= 0: the parent's copy of source (ns_make_tree), attached. */
static int bind_host(int rootfd, const char *source, int tree, const char *dest, bool recursive,
		     unsigned long flags, unsigned long clear, struct hutch_err *err)
{
	struct stat st;
	if ((tree >= 0 ? fstat(tree, &st) : stat(source, &st)) < 0)
		return hutch_fail_errno(err, errno, "stat %s", source);
	_cleanup_close_ int target = S_ISDIR(st.st_mode)
					     ? hutch_mkdir_in_root(rootfd, dest, 0755, err)
					     : make_file_in_root(rootfd, dest, err);
	if (target < 0)
		return target;
	int r = refuse_in_proc(target, dest, false, err);
	if (r < 0)
		return r;
	char p[HUTCH_FD_PATH_MAX];
	if (tree >= 0)
		TRY(ns_attach_tree(tree, target, err));
	else if (mount(source, hutch_fd_path(target, p), NULL, MS_BIND | (recursive ? MS_REC : 0),
		       NULL) < 0)
		return hutch_fail_errno(err, errno, "bind %s", source);
	/* A bind ignores every flag but MS_REC: ro, nosuid, ... need a remount of the new mount. */
	flags &= ~(MS_BIND | MS_REC | MS_REMOUNT);
	if (!flags)
		return 0;
	_cleanup_close_ int top = hutch_open_in_root(rootfd, dest, O_PATH, 0, err);
	if (top < 0)
		return top;
	return ns_remount_bind(hutch_fd_path(top, p), flags, clear, err);
}

static int copy_tree(int sfd, int dfd, int depth, struct hutch_err *err);

static int copy_data(int sfd, int dfd, const char *name, mode_t mode, struct hutch_err *err)
{
	_cleanup_close_ int in = openat(sfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (in < 0)
		return hutch_fail_errno(err, errno, "open %s", name);
	_cleanup_close_ int out =
		openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	if (out < 0)
		return hutch_fail_errno(err, errno, "create %s", name);
	char buf[16384];
	for (;;) {
		ssize_t n = hutch_read_all(in, buf, sizeof(buf));
		if (n < 0)
			return hutch_fail_errno(err, (int)n, "read %s", name);
		if (n == 0)
			return 0;
		int r = hutch_write_all(out, buf, (size_t)n);
		if (r < 0)
			return hutch_fail_errno(err, r, "write %s", name);
	}
}

static int copy_entry(int sfd, int dfd, const char *name, int depth, struct hutch_err *err)
{
	struct stat st;
	int r = 0;
	if (fstatat(sfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return hutch_fail_errno(err, errno, "stat %s", name);
	if (S_ISDIR(st.st_mode)) {
		if (mkdirat(dfd, name, 0700) < 0 && errno != EEXIST)
			return hutch_fail_errno(err, errno, "mkdir %s", name);
		_cleanup_close_ int s =
			openat(sfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		_cleanup_close_ int d =
			openat(dfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (s < 0 || d < 0)
			return hutch_fail_errno(err, errno, "open %s", name);
		r = copy_tree(s, d, depth + 1, err);
	} else if (S_ISREG(st.st_mode)) {
		r = copy_data(sfd, dfd, name, 0600, err);
	} else if (S_ISLNK(st.st_mode)) {
		char target[PATH_MAX];
		ssize_t n = readlinkat(sfd, name, target, sizeof(target) - 1);
		if (n < 0)
			return hutch_fail_errno(err, errno, "readlink %s", name);
		target[n] = '\0';
		if (symlinkat(target, dfd, name) < 0)
			return hutch_fail_errno(err, errno, "symlink %s", name);
	} else if (mknodat(dfd, name, st.st_mode & ~07777, st.st_rdev) < 0) {
		return hutch_fail_errno(err, errno, "mknod %s", name);
	}
	if (r < 0)
		return r;
	if (fchownat(dfd, name, st.st_uid, st.st_gid, AT_SYMLINK_NOFOLLOW) < 0)
		return hutch_fail_errno(err, errno, "chown %s", name);
	/* After chown, which clears setuid bits. */
	if (!S_ISLNK(st.st_mode) && fchmodat(dfd, name, st.st_mode & 07777, 0) < 0)
		return hutch_fail_errno(err, errno, "chmod %s", name);
	return 0;
}

/* Copies the directory's content (dirs, files, symlinks, nodes; mode and owner) for tmpcopyup. */
static int copy_tree(int sfd, int dfd, int depth, struct hutch_err *err)
{
	if (depth > COPY_MAX_DEPTH)
		return hutch_fail(err, ELOOP, "tmpcopyup: directories nested too deep");
	int dup = fcntl(sfd, F_DUPFD_CLOEXEC, 3);
	if (dup < 0)
		return hutch_fail_errno(err, errno, "dup");
	DIR *d = fdopendir(dup);
	if (!d) {
		close(dup);
		return hutch_fail_errno(err, errno, "opendir");
	}
	int r = 0;
	struct dirent *e;
	while (r >= 0 && (e = readdir(d)))
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			r = copy_entry(sfd, dfd, e->d_name, depth, err);
	closedir(d);
	return r;
}

/* Any mount with a filesystem type: tmpfs, proc, devpts, mqueue, overlay, ... */
static int mount_fs(int rootfd, const struct ns_mount *m, struct hutch_err *err)
{
	_cleanup_close_ int dir = hutch_mkdir_in_root(rootfd, m->destination, 0755, err);
	if (dir < 0)
		return dir;
	int r = refuse_in_proc(dir, m->destination, type_is(m, "proc"), err);
	if (r < 0)
		return r;
	_cleanup_close_ int old = -1;
	if (m->tmpcopyup) { /* keep a handle on the image's directory before hiding it */
		old = hutch_open_in_root(rootfd, m->destination, O_RDONLY | O_DIRECTORY, 0, err);
		if (old < 0)
			return old;
	}
	unsigned long flags = m->flags;
	if (m->tmpcopyup)
		flags &= ~MS_RDONLY; /* made read-only after the copy */
	char p[HUTCH_FD_PATH_MAX];
	const char *src = m->source ? m->source : m->type;
	if (mount(src, hutch_fd_path(dir, p), m->type, flags, m->data) < 0)
		return hutch_fail_errno(err, errno, "mount %s", m->type ? m->type : "");
	_cleanup_close_ int top = hutch_open_in_root(rootfd, m->destination, O_PATH, 0, err);
	if (top < 0)
		return top;
	if (type_is(m, "proc"))
		r = ns_check_procfs(top, m->destination, err);
	if (r >= 0 && m->tmpcopyup) {
		r = copy_tree(old, top, 0, err);
		if (r >= 0 && (m->flags & MS_RDONLY) &&
		    mount(NULL, hutch_fd_path(top, p), NULL, MS_REMOUNT | m->flags, m->data) < 0)
			r = hutch_fail_errno(err, errno, "remount read-only");
	}
	if (r >= 0)
		r = set_propagation(top, m->propagation, err);
	return r;
}

static bool host_fs_is(const char *path, long magic)
{
	struct statfs sf;
	return statfs(path, &sf) == 0 && sf.f_type == magic;
}

/* cgroup2 at dest; without a cgroup namespace of our own the kernel refuses (EPERM in a user
 * namespace, EBUSY otherwise) and we bind the host's mount instead, as runc does. */
static int mount_cgroup2(int rootfd, const char *dest, const char *host, unsigned long flags,
			 struct hutch_err *err)
{
	_cleanup_close_ int dir = hutch_mkdir_in_root(rootfd, dest, 0755, err);
	if (dir < 0)
		return dir;
	char p[HUTCH_FD_PATH_MAX];
	if (mount("cgroup2", hutch_fd_path(dir, p), "cgroup2", flags, NULL) == 0)
		return 0;
	if (errno != EPERM && errno != EBUSY)
		return hutch_fail_errno(err, errno, "mount cgroup2");
	return bind_host(rootfd, host, -1, dest, false, flags, 0, err);
}

static const char *own_dir(const struct ns_rootfs *cfg, const char *ctrls)
{
	for (size_t i = 0; cfg && i < cfg->n_cgroup_dirs; i++)
		if (!strcmp(cfg->cgroup_dirs[i].name, ctrls))
			return cfg->cgroup_dirs[i].host_dir;
	return NULL;
}

static int mount_hierarchy(int rootfd, const char *dest, int top, const char *ctrls,
			   unsigned long flags, const char *own, struct hutch_err *err)
{
	const char *dir = hutch_str_has_prefix(ctrls, "name=") ? ctrls + 5 : ctrls;
	if (!*dir || strchr(dir, '/') || strcmp(dir, "..") == 0 || strcmp(dir, ".") == 0)
		return hutch_fail(err, EINVAL, "bad cgroup hierarchy %s", ctrls);
	if (mkdirat(top, dir, 0755) < 0 && errno != EEXIST)
		return hutch_fail_errno(err, errno, "mkdir %s", dir);
	_cleanup_close_ int sub = openat(top, dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sub < 0)
		return hutch_fail_errno(err, errno, "open %s", dir);
	char p[HUTCH_FD_PATH_MAX];
	if (own) {
		_cleanup_free_ char *d = hutch_xasprintf("%s/%s", dest, dir);
		int r = bind_host(rootfd, own, -1, d, false, flags, 0, err);
		if (r < 0)
			return r;
	} else if (mount("cgroup", hutch_fd_path(sub, p), "cgroup", flags, ctrls) < 0) {
		if (errno != EPERM && errno != EBUSY)
			return hutch_fail_errno(err, errno, "mount cgroup %s", ctrls);
		_cleanup_free_ char *host = hutch_xasprintf("/sys/fs/cgroup/%s", dir);
		_cleanup_free_ char *d = hutch_xasprintf("%s/%s", dest, dir);
		int r = bind_host(rootfd, host, -1, d, false, flags, 0, err);
		if (r < 0)
			return r;
	}
	/* "cpu,cpuacct" is also reachable as "cpu" and "cpuacct", as on the host. */
	if (strchr(dir, ',')) {
		_cleanup_free_ char *names = hutch_xstrdup(dir);
		char *save = NULL;
		for (char *c = strtok_r(names, ",", &save); c; c = strtok_r(NULL, ",", &save))
			if (symlinkat(dir, top, c) < 0 && errno != EEXIST)
				return hutch_fail_errno(err, errno, "symlink %s", c);
	}
	return 0;
}

/* v1 or hybrid host: a tmpfs with one cgroup mount per hierarchy this process belongs to. */
static int mount_cgroup1(int rootfd, const struct ns_mount *m, const struct ns_rootfs *cfg,
			 struct hutch_err *err)
{
	_cleanup_close_ int dir = hutch_mkdir_in_root(rootfd, m->destination, 0755, err);
	if (dir < 0)
		return dir;
	char p[HUTCH_FD_PATH_MAX];
	if (mount("tmpfs", hutch_fd_path(dir, p), "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
		  "mode=755") < 0)
		return hutch_fail_errno(err, errno, "mount tmpfs");
	_cleanup_close_ int top =
		hutch_open_in_root(rootfd, m->destination, O_PATH | O_DIRECTORY, 0, err);
	if (top < 0)
		return top;
	_cleanup_free_ char *buf = NULL;
	int r = hutch_read_file_at(AT_FDCWD, "/proc/self/cgroup", 1 << 20, &buf, NULL, err);
	char *save = NULL;
	for (char *l = r < 0 ? NULL : strtok_r(buf, "\n", &save); l && r >= 0;
	     l = strtok_r(NULL, "\n", &save)) {
		char *ctrls = strchr(l, ':'), *end = ctrls ? strchr(ctrls + 1, ':') : NULL;
		if (!end || end == ctrls + 1) /* "0::/path" is the unified hierarchy */
			continue;
		*end = '\0';
		r = mount_hierarchy(rootfd, m->destination, top, ctrls + 1, m->flags,
				    own_dir(cfg, ctrls + 1), err);
	}
	if (r >= 0 && host_fs_is("/sys/fs/cgroup/unified", CGROUP2_SUPER_MAGIC)) {
		_cleanup_free_ char *d = hutch_xasprintf("%s/unified", m->destination);
		r = mount_cgroup2(rootfd, d, "/sys/fs/cgroup/unified", m->flags, err);
	}
	if (r >= 0 && (m->flags & MS_RDONLY))
		r = ns_remount_bind(hutch_fd_path(top, p), MS_RDONLY, 0, err);
	if (r >= 0)
		r = set_propagation(top, m->propagation, err);
	return r;
}

static int mount_cgroup(int rootfd, const struct ns_mount *m, const struct ns_rootfs *cfg,
			struct hutch_err *err)
{
	bool v2 = host_fs_is("/sys/fs/cgroup", CGROUP2_SUPER_MAGIC);
	if (!v2 && type_is(m, "cgroup"))
		return mount_cgroup1(rootfd, m, cfg, err);
	/* Asked for cgroup2 explicitly on a hybrid host: its unified hierarchy. */
	const char *host = v2 ? "/sys/fs/cgroup" : "/sys/fs/cgroup/unified";
	int r = mount_cgroup2(rootfd, m->destination, host, m->flags, err);
	if (r < 0)
		return r;
	_cleanup_close_ int top = hutch_open_in_root(rootfd, m->destination, O_PATH, 0, err);
	if (top < 0)
		return top;
	return set_propagation(top, m->propagation, err);
}

static int mount_one(int rootfd, const struct ns_mount *m, int tree, const struct ns_rootfs *cfg,
		     struct hutch_err *err)
{
	if (!m->destination || m->destination[0] != '/')
		return hutch_fail(err, EINVAL, "destination must be an absolute path");
	if (top_is(m->destination, "proc") || top_is(m->destination, "sys") ||
	    top_is(m->destination, "dev")) {
		int r = refuse_symlinks(rootfd, m->destination, err);
		if (r < 0)
			return r;
	}
	if (is_bind(m)) {
		if (!m->source)
			return hutch_fail(err, EINVAL, "bind mount without a source");
		if (m->idmap && tree < 0)
			return hutch_fail(err, EINVAL,
					  "an idmapped mount needs its tree made first");
		int r = bind_host(rootfd, m->source, tree, m->destination, m->recursive, m->flags,
				  m->clear_flags, err);
		if (r < 0)
			return r;
		_cleanup_close_ int top =
			hutch_open_in_root(rootfd, m->destination, O_PATH, 0, err);
		if (top < 0)
			return top;
		return set_propagation(top, m->propagation, err);
	}
	if (!m->type || !*m->type)
		return hutch_fail(err, EINVAL, "mount without a type");
	if (type_is(m, "cgroup") || type_is(m, "cgroup2"))
		return mount_cgroup(rootfd, m, cfg, err);
	int r = mount_fs(rootfd, m, err);
	if (r == -EPERM && type_is(m, "sysfs")) {
		/* A user namespace without its own network namespace may not mount sysfs. */
		hutch_err_clear(err);
		r = bind_host(rootfd, "/sys", -1, m->destination, true, m->flags | MS_RDONLY,
			      m->clear_flags & ~MS_RDONLY, err);
	}
	return r;
}

int ns_mount_rootfs(const struct ns_rootfs *cfg, struct hutch_err *err)
{
	/* Changing propagation of / outside a private mount namespace would change the host. */
	if (!cfg->new_mount_ns)
		return hutch_fail(err, EINVAL, "setting up the rootfs needs a new mount namespace");
	/* Nothing mounted from here on may propagate back to the host. The spec's
	 * rootfsPropagation is applied after pivot_root (ns_finish_rootfs): a shared parent
	 * mount here would make pivot_root fail. */
	if (mount(NULL, "/", NULL, MS_SLAVE | MS_REC, NULL) < 0)
		return hutch_fail_errno(err, errno, "make / rslave");
	/* pivot_root needs the new root to be a mount point. */
	if (mount(cfg->rootfs, cfg->rootfs, NULL, MS_BIND | MS_REC, NULL) < 0)
		return hutch_fail_errno(err, errno, "bind rootfs %s", cfg->rootfs);
	_cleanup_close_ int rootfd = open(cfg->rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return hutch_fail_errno(err, errno, "open rootfs %s", cfg->rootfs);

	bool dev_bound = false;
	for (size_t i = 0; i < cfg->n_mounts; i++) {
		const struct ns_mount *m = &cfg->mounts[i];
		int r = mount_one(rootfd, m, cfg->tree_fds ? cfg->tree_fds[i] : -1, cfg, err);
		if (r < 0)
			return hutch_err_prefix(err, "mount %s: ", m->destination);
		if (is_bind(m) && dest_is(m->destination, "dev"))
			dev_bound = true;
	}
	/* As runc: /dev is populated unless the spec bind-mounts one in whole. */
	if (dev_bound)
		return 0;
	return ns_setup_dev(rootfd, cfg, err);
}
