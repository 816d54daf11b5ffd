// SPDX-License-Identifier: Apache-2.0
/*
 * The container's mounts, as a list: making the rootfs a mount point, then the spec's
 * mounts planned (ns-mount-plan.c, from the facts of the live system gathered here) and
 * applied (ns-mount-apply.c), then /dev (ns-dev.c). Options: ns-mount-opts.c.
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

int ns_stat_kind(void *ctx, const char *path, int tree)
{
	(void)ctx;
	struct stat st;
	if ((tree >= 0 ? fstat(tree, &st) : stat(path, &st)) < 0)
		return -errno;
	return S_ISDIR(st.st_mode) ? NS_SOURCE_DIR : NS_SOURCE_FILE;
}

static bool host_fs_is(const char *path, long magic)
{
	struct statfs sf;
	return statfs(path, &sf) == 0 && sf.f_type == magic;
}

void ns_mount_facts_get(const struct ns_rootfs *cfg, struct ns_mount_facts *f)
{
	*f = (struct ns_mount_facts){ .source_kind = ns_stat_kind };
	bool cg = false, v1 = false;
	for (size_t i = 0; i < cfg->n_mounts; i++) {
		const char *t = cfg->mounts[i].type;
		v1 |= t && !strcmp(t, "cgroup");
		cg |= t && (!strcmp(t, "cgroup") || !strcmp(t, "cgroup2"));
	}
	if (!cg) /* the statfs calls only when they matter: this is every container's start */
		return;
	f->cgroup2 = host_fs_is("/sys/fs/cgroup", CGROUP2_SUPER_MAGIC);
	f->cgroup2_unified = host_fs_is("/sys/fs/cgroup/unified", CGROUP2_SUPER_MAGIC);
	if (v1 && !f->cgroup2 &&
	    hutch_read_file_at(AT_FDCWD, "/proc/self/cgroup", 1 << 20, &f->self_cgroup, NULL,
			       &f->self_cgroup_err) < 0)
		f->self_cgroup = NULL;
}

void ns_mount_facts_free(struct ns_mount_facts *f)
{
	free(f->self_cgroup);
	f->self_cgroup = NULL;
}

static void plan_freep(struct ns_mount_plan *p)
{
	ns_mount_plan_free(p);
}

static void facts_freep(struct ns_mount_facts *f)
{
	ns_mount_facts_free(f);
}

bool ns_on_shared_mount(const char *path, char *text)
{
	size_t best = 0;
	bool shared = false;
	char *save = NULL;
	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char point[PATH_MAX];
		if (sscanf(l, "%*s %*s %*s %*s %4095s", point) != 1)
			continue;
		size_t n = strlen(point);
		bool under = !strcmp(point, "/") ||
			     (!strncmp(path, point, n) && (path[n] == '/' || path[n] == '\0'));
		if (under && n >= best) {
			best = n;
			const char *dash = strstr(l, " - ");
			const char *sh = strstr(l, " shared:");
			shared = sh && (!dash || sh < dash);
		}
	}
	return shared;
}

/*
 * Without a mount namespace of its own (none in linux.namespaces) the container's mounts are
 * made in ours, as runc does, but on a private bind of the rootfs: nothing propagates to
 * other namespaces, and delete's one detach of the rootfs takes them all away again
 * (ns_undo_host_rootfs). A rootfs on a shared mount is refused: the bind itself would
 * propagate.
 */
static int bind_rootfs_here(const char *rootfs, struct hutch_err *err)
{
	_cleanup_free_ char *text = NULL;
	TRY(hutch_read_file_at(AT_FDCWD, "/proc/self/mountinfo", 1 << 24, &text, NULL, err));
	if (ns_on_shared_mount(rootfs, text))
		return hutch_fail(err, ENOTSUP,
				  "linux.namespaces: without a mount namespace the rootfs %s must "
				  "not be on a shared mount (the container's mounts would "
				  "propagate): not supported",
				  rootfs);
	if (hutch_sys->mount(rootfs, rootfs, NULL, MS_BIND | MS_REC, NULL) < 0)
		return hutch_fail_errno(err, errno, "bind rootfs %s", rootfs);
	if (hutch_sys->mount(NULL, rootfs, NULL, MS_PRIVATE | MS_REC, NULL) < 0)
		return hutch_fail_errno(err, errno, "make rootfs %s private", rootfs);
	return 0;
}

int ns_mount_rootfs(const struct ns_rootfs *cfg, struct hutch_err *err)
{
	/* Nothing mounted from here on may propagate back to the host. The spec's
	 * rootfsPropagation is applied after pivot_root (ns_finish_rootfs): a shared parent
	 * mount here would make pivot_root fail. */
	if (cfg->new_mount_ns && hutch_sys->mount(NULL, "/", NULL, MS_SLAVE | MS_REC, NULL) < 0)
		return hutch_fail_errno(err, errno, "make / rslave");
	/* pivot_root needs the new root to be a mount point. */
	if (!cfg->new_mount_ns)
		TRY(bind_rootfs_here(cfg->rootfs, err));
	else if (hutch_sys->mount(cfg->rootfs, cfg->rootfs, NULL, MS_BIND | MS_REC, NULL) < 0)
		return hutch_fail_errno(err, errno, "bind rootfs %s", cfg->rootfs);
	_cleanup_close_ int rootfd = open(cfg->rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return hutch_fail_errno(err, errno, "open rootfs %s", cfg->rootfs);

	bool dev_bound = false;
	for (size_t i = 0; i < cfg->n_mounts; i++) {
		/* One mount's plan at a time, its facts read just before: a bind source may be
		 * what an earlier mount made, as when each mount looked for itself. */
		struct ns_rootfs one = *cfg;
		one.mounts = &cfg->mounts[i];
		one.n_mounts = 1;
		one.tree_fds = cfg->tree_fds ? &cfg->tree_fds[i] : NULL;
		_cleanup_(facts_freep) struct ns_mount_facts facts = { 0 };
		ns_mount_facts_get(&one, &facts);
		_cleanup_(plan_freep) struct ns_mount_plan plan = { 0 };
		ns_mount_plan_rootfs(&one, &facts, &plan);
		int r = ns_mount_apply(rootfd, plan.ops, plan.n, err);
		if (r < 0)
			return r;
		dev_bound |= plan.dev_bound;
	}
	if (dev_bound) /* as runc: /dev is populated unless the spec bind-mounts one in whole */
		return 0;
	return ns_setup_dev(rootfd, cfg, err);
}

int ns_finish_mounts(const struct ns_mount *mounts, size_t n, struct hutch_err *err)
{
	_cleanup_(plan_freep) struct ns_mount_plan plan = { 0 };
	ns_mount_plan_finish(mounts, n, &plan);
	return plan.n ? ns_mount_apply_host(plan.ops, plan.n, err) : 0;
}

uint64_t ns_mount_id(const char *path)
{
	struct statx stx;
	if (statx(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &stx) < 0 ||
	    !(stx.stx_mask & STATX_MNT_ID))
		return 0;
	return stx.stx_mnt_id;
}

int ns_undo_host_rootfs(const char *rootfs, uint64_t before, struct hutch_err *err)
{
	uint64_t now = ns_mount_id(rootfs);
	if (!before || !now || now == before) /* never bound, or already undone */
		return 0;
	if (hutch_sys->umount2(rootfs, MNT_DETACH) < 0 && errno != EINVAL && errno != ENOENT)
		return hutch_fail_errno(err, errno, "detach the container's mounts at %s", rootfs);
	return 0;
}

bool ns_mount_ns_is_ours(const char *path)
{
	struct stat a, b;
	return stat(path, &a) == 0 && stat("/proc/self/ns/mnt", &b) == 0 && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}
