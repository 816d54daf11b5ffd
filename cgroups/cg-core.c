// SPDX-License-Identifier: Apache-2.0
/*
 * struct cg and the public entry points: finding the hierarchies, creating and opening the
 * container's directory in each, joining, killing, removing, and dispatching to the v1 or v2
 * applier, and the tree walks (pids, sub-cgroups) they need. The file readers the appliers
 * share are in cg-io.c, so that they and this file never call each other.
 */
#include "cg-internal.h"

#include <inttypes.h>

#include <dirent.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>

/* Calls fn(dirfd of child, name, data) for every sub-cgroup of dirfd. */
static int for_each_child(int dirfd, int (*fn)(int parent, int child, const char *name, void *),
			  void *data, struct hutch_err *err)
{
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == ENODEV
			       ? 0
			       : hutch_fail_errno(err, errno, "open cgroup");
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return hutch_fail_errno(err, errno, "opendir cgroup");
	}
	int r = 0;
	struct dirent *de;
	while (r >= 0 && (de = readdir(d))) {
		if (de->d_type != DT_DIR || strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		_cleanup_close_ int child =
			openat(dirfd, de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
		if (child < 0 && (errno == ENOENT || errno == ENODEV))
			continue;
		if (child < 0)
			r = hutch_fail_errno(err, errno, "open cgroup %s", de->d_name);
		else
			r = fn(dirfd, child, de->d_name, data);
	}
	closedir(d);
	return r;
}

struct pidv {
	pid_t **v;
	size_t *n;
	struct hutch_err *err;
};

static int collect_child(int parent, int child, const char *name, void *data)
{
	struct pidv *pv = data;
	(void)parent;
	int r = cg_collect_pids(child, pv->v, pv->n, pv->err);
	return r < 0 ? hutch_err_prefix(pv->err, "%s: ", name) : 0;
}

int cg_collect_pids(int dirfd, pid_t **v, size_t *n, struct hutch_err *err)
{
	_cleanup_free_ char *s = NULL;
	int r = cg_read_at(dirfd, "cgroup.procs", &s, err);
	/* Removed under us, before the open (ENOENT) or after it (ENODEV): nothing is left in it.
	 * systemd removes a scope's directories as the scope empties, while delete looks. */
	if (r == -ENOENT || r == -ENODEV) {
		hutch_err_clear(err);
		return 0;
	}
	if (r < 0)
		return r;
	for (char *l = s; *l;) {
		size_t len = strcspn(l, "\n");
		int64_t pid;
		char c = l[len];
		l[len] = '\0';
		if (hutch_parse_i64(l, &pid) == 0 && pid > 0) {
			*v = hutch_xrealloc(*v, (*n + 1) * sizeof(pid_t));
			(*v)[(*n)++] = (pid_t)pid;
		}
		l += len + (c == '\n');
	}
	struct pidv pv = { v, n, err };
	return for_each_child(dirfd, collect_child, &pv, err);
}

static int rmdir_child(int parent, int child, const char *name, void *data)
{
	struct hutch_err *err = data;
	int r = cg_rmdir_children(child, err);
	if (r < 0)
		return r;
	if (unlinkat(parent, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
		return hutch_fail_errno(err, errno, "rmdir %s", name);
	return 0;
}

int cg_rmdir_children(int dirfd, struct hutch_err *err)
{
	return for_each_child(dirfd, rmdir_child, err, err);
}

static int load(const char *path, struct cg **out, struct hutch_err *err)
{
	struct cg *cg = hutch_xcalloc(1, sizeof(*cg));
	cg->v2 = cg_is_v2();
	int r = cg_read_hierarchies(cg->v2, &cg->h, &cg->n, err);
	for (size_t i = 0; r == 0 && i < cg->n; i++)
		r = cg_hier_dir(&cg->h[i], path, &cg->h[i].dir, err);
	if (r < 0) {
		cg_free(cg);
		return r;
	}
	*out = cg;
	return 0;
}

static void add_created(struct cg_hier *h, const char *dir)
{
	h->created = hutch_xrealloc(h->created, (h->n_created + 2) * sizeof(char *));
	h->created[h->n_created++] = hutch_xstrdup(dir);
	h->created[h->n_created] = NULL;
}

/* mkdir -p of h->dir below its mount, remembering what we made so destroy removes only that.
 * The leaf first: its parents usually exist, and each level's mkdir is a walk of the path. */
static int mkdir_p(struct cg_hier *h, struct hutch_err *err)
{
	size_t ml = strlen(h->mount), dl = strlen(h->dir);
	bool walk = false;
	if (mkdir(h->dir, 0755) == 0)
		add_created(h, h->dir);
	else if (errno == ENOENT)
		walk = true;
	else if (errno != EEXIST)
		return hutch_fail_errno(err, errno, "mkdir %s", h->dir);
	_cleanup_free_ char *buf = hutch_xstrdup(h->dir);
	for (size_t i = ml + 1; walk && i <= dl; i++) {
		if (buf[i] != '/' && buf[i] != '\0')
			continue;
		buf[i] = '\0';
		if (mkdir(buf, 0755) == 0)
			add_created(h, buf);
		else if (errno != EEXIST)
			return hutch_fail_errno(err, errno, "mkdir %s", buf);
		buf[i] = i < dl ? '/' : '\0';
	}
	h->fd = open(h->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (h->fd < 0)
		return hutch_fail_errno(err, errno, "open %s", h->dir);
	return 0;
}

static bool we_created(const struct cg_hier *h, const char *dir)
{
	return h->n_created && strcmp(h->created[h->n_created - 1], dir) == 0;
}

/* An existing cgroup may hold no process but ours (the init systemd put in its scope). */
static int check_unused(struct cg_hier *h, pid_t ours, struct hutch_err *err)
{
	_cleanup_free_ pid_t *pids = NULL;
	size_t n = 0;
	if (we_created(h, h->dir))
		return 0;
	int r = cg_collect_pids(h->fd, &pids, &n, err);
	if (r < 0)
		return r;
	for (size_t i = 0; i < n; i++)
		if (pids[i] != ours)
			return hutch_fail(err, EEXIST,
					  "cgroup %s already exists and holds processes", h->dir);
	return 0;
}

/* rmdir of name in parent, retried for up to ~1 s on EBUSY when busy_wait: a v1 cgroup stays
 * busy for a moment after its last task is gone (the kernel offlines it asynchronously). */
static int rmdir_at(int parent, const char *name, bool busy_wait)
{
	for (int i = 0; i < 100; i++) {
		if (unlinkat(parent, name, AT_REMOVEDIR) == 0 || errno == ENOENT)
			return 0;
		if (errno != EBUSY || !busy_wait)
			return -errno;
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	return -EBUSY;
}

/* Each parent we created above h's leaf, now gone, walking up with ".." from cur (the leaf's
 * parent's fd, which this closes): a path may by now name something else (a delegate runtime
 * that unmounts a hybrid host's cgroup2 mount where we can see it). A parent still holding
 * someone else's cgroup stays, and so do those above it. */
static void remove_parents(const struct cg_hier *h, int cur)
{
	/* created[k]: the level to remove next, whose fd cur is; the leaf is the last one. */
	for (size_t k = we_created(h, h->dir) ? h->n_created - 1 : 0; k-- > 0;) {
		int up = openat(cur, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		close(cur);
		cur = up;
		if (up < 0 || rmdir_at(up, strrchr(h->created[k], '/') + 1, false) < 0)
			break;
	}
	if (cur >= 0)
		close(cur);
}

/* The leaf, after its sub-cgroups, then the parents we created above it. quick: no look for
 * sub-cgroups and no wait on a busy leaf, which fails with h untouched. */
static int remove_hier(struct cg_hier *h, bool quick, struct hutch_err *err)
{
	int r = quick ? 0 : cg_rmdir_children(h->fd, err);
	if (r < 0)
		return r;
	int up = openat(h->fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (up < 0 && quick)
		return -errno;
	if (up < 0) { /* already gone: by path, as a last resort */
		close(steal_fd(h->fd));
		return rmdir(h->dir) < 0 && errno != ENOENT
			       ? hutch_fail_errno(err, errno, "rmdir %s", h->dir)
			       : 0;
	}
	r = rmdir_at(up, strrchr(h->dir, '/') + 1, !quick);
	if (r < 0) {
		close(up);
		return quick ? r : hutch_fail_errno(err, r, "rmdir %s", h->dir);
	}
	close(steal_fd(h->fd));
	remove_parents(h, up);
	return 0;
}

/* Removes the leaf (after its sub-cgroups) and the parents we created, deepest first. */
static int remove_dirs(struct cg *cg, struct hutch_err *err)
{
	int ret = 0;
	for (size_t i = 0; i < cg->n; i++) {
		struct cg_hier *h = &cg->h[i];
		if (h->fd >= 0) {
			int r = remove_hier(h, false, err);
			if (r < 0 && ret == 0)
				ret = r;
			continue;
		}
		/* No leaf (a failed cg_make): the parents it made, by path. */
		for (size_t j = h->n_created; j-- > 0;)
			if (strcmp(h->created[j], h->dir) != 0)
				(void)rmdir(h->created[j]);
	}
	return ret;
}

static void add_child(struct cg_child **v, size_t *n, const char *name, time_t made)
{
	for (size_t i = 0; i < *n; i++)
		if (!strcmp((*v)[i].name, name)) {
			if (made < (*v)[i].made)
				(*v)[i].made = made;
			return;
		}
	*v = hutch_xrealloc(*v, (*n + 1) * sizeof(**v));
	(*v)[(*n)++] = (struct cg_child){ hutch_xstrdup(name), made };
}

int cg_purge(const char *path, struct hutch_err *err)
{
	struct cg *cg = NULL;
	TRY(load(path, &cg, err));
	for (size_t i = 0; i < cg->n; i++)
		cg->h[i].fd = open(cg->h[i].dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int r = cg_destroy(cg, err);
	cg_free(cg);
	return r;
}

int cg_list_children(const char *path, struct cg_child **out, size_t *n, struct hutch_err *err)
{
	struct cg *cg = NULL;
	*out = NULL;
	*n = 0;
	TRY(load(path, &cg, err));
	for (size_t i = 0; i < cg->n; i++) {
		_cleanup_(hutch_closedirp) DIR *d = opendir(cg->h[i].dir);
		struct dirent *de;
		while (d && (de = readdir(d))) {
			struct stat st;
			if (de->d_type == DT_DIR && de->d_name[0] != '.' &&
			    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0)
				add_child(out, n, de->d_name, st.st_ctim.tv_sec);
		}
	}
	cg_free(cg);
	return 0;
}

void cg_children_free(struct cg_child *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].name);
	free(v);
}

int cg_locate(const char *path, struct cg **out, struct hutch_err *err)
{
	return load(path, out, err);
}

static int make(struct cg *cg, pid_t ours, struct hutch_err *err)
{
	int r = 0;
	for (size_t i = 0; r == 0 && i < cg->n; i++) {
		r = mkdir_p(&cg->h[i], err);
		if (r == 0)
			r = check_unused(&cg->h[i], ours, err);
	}
	/* A container put in a frozen cgroup (or under a frozen one) would hang its create:
	 * refused, as runc does. */
	if (r == 0 && cg_is_frozen(cg))
		r = hutch_fail(err, EBUSY, "cgroup %s is frozen: thaw it first", cg->h[0].dir);
	if (r == 0)
		r = cg->v2 ? cg_v2_create(cg, err) : cg_v1_create(cg, err);
	if (r == 0)
		return 0;
	/* Only what we made goes: an existing cgroup that failed check_unused stays. */
	for (size_t i = 0; i < cg->n; i++) {
		struct cg_hier *h = &cg->h[i];
		if (h->fd >= 0 && !we_created(h, h->dir)) {
			close(h->fd);
			h->fd = -1;
		}
	}
	struct hutch_err ignored = { 0 };
	remove_dirs(cg, &ignored);
	for (size_t i = 0; i < cg->n; i++) { /* back to located: nothing of ours exists */
		hutch_strv_free(cg->h[i].created);
		cg->h[i].created = NULL;
		cg->h[i].n_created = 0;
	}
	return r;
}

int cg_make(struct cg *cg, struct hutch_err *err)
{
	return make(cg, 0, err);
}

int cg_make_scope(struct cg *cg, pid_t pid, struct hutch_err *err)
{
	TRY(make(cg, pid, err));
	return cg_enter(cg, pid, err);
}

int cg_create(const char *path, struct cg **out, struct hutch_err *err)
{
	struct cg *cg = NULL;
	int r = cg_locate(path, &cg, err);
	if (r == 0 && (r = cg_make(cg, err)) < 0)
		cg_free(cg);
	if (r == 0)
		*out = cg;
	return r;
}

static int open_dirs(struct cg *cg, struct cg **out, struct hutch_err *err)
{
	size_t found = 0;
	int r;
	for (size_t i = 0; i < cg->n; i++) {
		cg->h[i].fd = open(cg->h[i].dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		found += cg->h[i].fd >= 0;
	}
	if (!found) {
		r = hutch_fail(err, ENOENT, "cgroup %s does not exist", cg->h[0].dir);
		cg_free(cg);
		return r;
	}
	*out = cg;
	return 0;
}

int cg_open(const char *path, struct cg **out, struct hutch_err *err)
{
	struct cg *cg = NULL;
	int r = load(path, &cg, err);
	return r < 0 ? r : open_dirs(cg, out, err);
}

size_t cg_paths(const struct cg *cg, struct cg_kv **out)
{
	*out = hutch_xcalloc(cg->n ? cg->n : 1, sizeof(**out));
	for (size_t i = 0; i < cg->n; i++)
		(*out)[i] = (struct cg_kv){ hutch_xstrdup(cg->h[i].name),
					    cg_hier_cgroup_path(&cg->h[i]) };
	return cg->n;
}

int cg_saved_dir(const struct cg_hier *h, const char *path, char **out, struct hutch_err *err)
{
	_cleanup_free_ char *norm = NULL;
	if (*path != '/')
		return hutch_fail(err, EINVAL, "saved cgroup path %s is not absolute", path);
	int r = cg_resolve_path(path, NULL, &norm, err);
	if (r < 0)
		return hutch_err_prefix(err, "saved cgroup path %s: ", path);
	return cg_hier_dir(h, norm, out, err);
}

/* The hierarchies mounted now that paths names, each at its saved path; the rest dropped. */
int cg_open_paths(const struct cg_kv *paths, size_t n, struct cg **out, struct hutch_err *err)
{
	struct cg *cg = hutch_xcalloc(1, sizeof(*cg));
	size_t kept = 0, i = 0;
	cg->v2 = cg_is_v2();
	int r = cg_read_hierarchies(cg->v2, &cg->h, &cg->n, err);
	for (; r == 0 && i < cg->n; i++) {
		for (size_t k = 0; k < n; k++)
			if (strcmp(paths[k].key, cg->h[i].name) == 0) {
				r = cg_saved_dir(&cg->h[i], paths[k].value, &cg->h[i].dir, err);
				break;
			}
		if (r == 0 && cg->h[i].dir)
			cg->h[kept++] = cg->h[i]; /* moved: slot i is not freed again */
		else
			cg_hier_clear(&cg->h[i]);
	}
	for (; i < cg->n; i++)
		cg_hier_clear(&cg->h[i]); /* not reached after a failure */
	cg->n = kept;
	if (r == 0 && kept == 0)
		r = hutch_fail(err, ENOENT, "no saved cgroup path names a mounted hierarchy");
	if (r < 0) {
		cg_free(cg);
		return r;
	}
	return open_dirs(cg, out, err);
}

void cg_free(struct cg *cg)
{
	if (!cg)
		return;
	cg_hier_free(cg->h, cg->n);
	free(cg);
}

int cg_dirfd(const struct cg *cg)
{
	return cg && cg->v2 && cg->n ? cg->h[0].fd : -1; /* NULL: a container without one */
}

uint64_t cg_memory_max(const struct cg *cg)
{
	uint64_t v;
	if (cg_dirfd(cg) < 0 || cg_read_u64_at(cg_dirfd(cg), "memory.max", &v) < 0)
		return UINT64_MAX;
	return v;
}

int cg_enter(struct cg *cg, pid_t pid, struct hutch_err *err)
{
	char buf[32];
	snprintf(buf, sizeof(buf), "%d", (int)pid);
	for (size_t i = 0; i < cg->n; i++) {
		if (cg->h[i].fd < 0)
			continue;
		int r = hutch_write_str_at(cg->h[i].fd, "cgroup.procs", buf, err);
		if (r < 0)
			return hutch_err_prefix(err, "join cgroup %s: ", cg->h[i].dir);
	}
	return 0;
}

int cg_apply(struct cg *cg, const struct cg_resources *res, struct hutch_err *err)
{
	_cleanup_free_ struct cg_write *w = NULL;
	size_t n = 0;
	int r = cg_plan(res, cg->v2, &w, &n, err);
	if (r < 0)
		return r;
	r = cg->v2 ? cg_v2_apply(cg, w, n, err) : cg_v1_apply(cg, w, n, err);
	if (r < 0 || !cg->v2 || !res->n_devices)
		return r;
	r = cg_devbpf_apply(cg->h[0].fd, res->devices, res->n_devices, err);
	return r < 0 ? hutch_err_prefix(err, "linux.resources.devices: ") : 0;
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
	return x < y ? -1 : x > y;
}

int cg_pids(struct cg *cg, pid_t **out, size_t *n, struct hutch_err *err)
{
	pid_t *v = NULL;
	size_t nv = 0;
	for (size_t i = 0; i < cg->n; i++) {
		if (cg->h[i].fd < 0)
			continue;
		int r = cg_collect_pids(cg->h[i].fd, &v, &nv, err);
		if (r < 0) {
			free(v);
			return hutch_err_prefix(err, "%s: ", cg->h[i].dir);
		}
	}
	/* v1: the same process shows in every hierarchy. */
	if (nv > 1)
		qsort(v, nv, sizeof(pid_t), cmp_pid);
	size_t u = 0;
	for (size_t i = 0; i < nv; i++)
		if (u == 0 || v[u - 1] != v[i])
			v[u++] = v[i];
	*out = v ? v : hutch_xcalloc(1, sizeof(pid_t));
	*n = u;
	return 0;
}

int cg_signal_all(struct cg *cg, int sig, struct hutch_err *err)
{
	_cleanup_free_ pid_t *pids = NULL;
	size_t n = 0;
	int r = cg_pids(cg, &pids, &n, err);
	if (r < 0)
		return r;
	for (size_t i = 0; i < n; i++)
		if (kill(pids[i], sig) < 0 && errno != ESRCH)
			return hutch_fail_errno(err, errno, "kill %d", (int)pids[i]);
	/* A task frozen by the v1 freezer acts on SIGKILL only once thawed: thaw so that it
	 * dies (as runc does). On v2 a fatal signal gets through, and thawing does no harm. */
	if (sig == SIGKILL && cg_is_frozen(cg))
		return cg_freeze(cg, false, err);
	return 0;
}

/* memory.checkBeforeUpdate (runc): a new limit below what the container already uses is
 * refused, rather than left to the kernel to reclaim or OOM-kill down to. */
static int check_before_update(struct cg *cg, const struct cg_resources *res, struct hutch_err *err)
{
	if (!res->mem_check_before_update || !res->mem_limit.set || res->mem_limit.v <= 0)
		return 0;
	struct cg_hier *h = cg->v2 ? &cg->h[0] : cg_find_hier(cg, "memory");
	const char *file = cg->v2 ? "memory.current" : "memory.usage_in_bytes";
	uint64_t usage = 0;
	if (!h || h->fd < 0 || cg_read_u64_at(h->fd, file, &usage) < 0)
		return 0; /* no memory controller: applying the limit fails and says so */
	if ((uint64_t)res->mem_limit.v < usage)
		return hutch_fail(err, EBUSY,
				  "linux.resources.memory.limit: %" PRId64 " is below the current "
				  "usage, %" PRIu64 " (memory.checkBeforeUpdate)",
				  res->mem_limit.v, usage);
	return 0;
}

int cg_complete_update(struct cg *cg, struct cg_resources *res, struct hutch_err *err)
{
	int r = check_before_update(cg, res, err);
	if (r < 0 || !cg->v2)
		return r;
	return cg_v2_complete_update(cg, res, err);
}

int cg_freeze(struct cg *cg, bool frozen, struct hutch_err *err)
{
	return cg->v2 ? cg_v2_freeze(cg, frozen, err) : cg_v1_freeze(cg, frozen, err);
}

int cg_get_stats(struct cg *cg, struct cg_stats *st, struct hutch_err *err)
{
	memset(st, 0, sizeof(*st));
	return cg->v2 ? cg_v2_stats(cg, st, err) : cg_v1_stats(cg, st, err);
}

/* SIGKILL everything; frozen first where we can so nothing forks between listing and kill. */
static int kill_all(struct cg *cg, struct hutch_err *err)
{
	struct hutch_err ignored = { 0 };
	_cleanup_free_ pid_t *pids = NULL;
	size_t n = 0;
	/* Usually the init has exited and taken everything with it: an empty cgroup needs no
	 * freeze/thaw, whose every state change is costly for the kernel. */
	if (cg_pids(cg, &pids, &n, &ignored) == 0 && n == 0)
		return 0;
	if (cg->v2) {
		int r = cg_v2_kill(cg, err);
		if (r != 0)
			return r < 0 ? r : 0;
	}
	bool frozen = cg_freeze(cg, true, &ignored) == 0;
	int r = cg_signal_all(cg, SIGKILL, err);
	if (frozen)
		(void)cg_freeze(cg, false, &ignored);
	return r;
}

/* Waits (up to ~5 s) for the kernel to empty the cgroup. We reap nothing: the runtime reaps
 * its own children, and zombies no longer count as members. */
static int wait_empty(struct cg *cg, struct hutch_err *err)
{
	long step_us = 1000;
	for (long waited = 0; waited < 5000000; waited += step_us) {
		_cleanup_free_ pid_t *pids = NULL;
		size_t n = 0;
		int r = cg_pids(cg, &pids, &n, err);
		if (r < 0)
			return r;
		if (n == 0)
			return 0;
		/* Without a freezer a process may have forked after the kill: kill again. */
		for (size_t i = 0; i < n; i++)
			(void)kill(pids[i], SIGKILL);
		struct timespec ts = { 0, step_us * 1000 };
		nanosleep(&ts, NULL);
		if (step_us < 10000)
			step_us *= 2;
	}
	return hutch_fail(err, EBUSY, "cgroup %s: processes still present 5 s after SIGKILL",
			  cg->h[0].dir);
}

int cg_remove_unused(struct cg *cg, struct hutch_err *err)
{
	(void)err;
	for (size_t i = 0; i < cg->n; i++) {
		struct cg_hier *h = &cg->h[i];
		if (h->fd < 0)
			continue;
		close(h->fd);
		h->fd = -1;
		/* EBUSY (processes) or ENOTEMPTY (sub-cgroups): in use, so not what we recorded. */
		(void)rmdir(h->dir);
		for (size_t j = h->n_created; j-- > 0;)
			if (strcmp(h->created[j], h->dir) != 0)
				(void)rmdir(h->created[j]);
	}
	return 0;
}

/* Usually the init has exited and taken everything with it: then each leaf's rmdir succeeds
 * at once (the kernel refuses it while a task or a sub-cgroup is left), and the walks of
 * kill_all, wait_empty and remove_dirs (~25 calls a hierarchy) are only for a cgroup that still
 * holds something. -EBUSY at the first leaf that does, the rest left as it is. */
static int remove_empty(struct cg *cg)
{
	struct hutch_err ignored = { 0 };
	for (size_t i = 0; i < cg->n; i++)
		if (cg->h[i].fd >= 0 && remove_hier(&cg->h[i], true, &ignored) < 0)
			return -EBUSY;
	return 0;
}

int cg_destroy(struct cg *cg, struct hutch_err *err)
{
	if (remove_empty(cg) == 0)
		return 0;
	int r = kill_all(cg, err);
	if (r == 0)
		r = wait_empty(cg, err);
	if (r < 0)
		return hutch_err_prefix(err, "destroy cgroup: ");
	return remove_dirs(cg, err);
}
