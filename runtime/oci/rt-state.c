// SPDX-License-Identifier: Apache-2.0
/*
 * Container state: one directory per container under --root, holding state.json (written
 * atomically) and exec.fifo while the container is created but not started. The directory
 * itself is the lock (flock) that serialises operations on one id.
 */
#include "rt.h"
#include "rt-json.h"
#include "hutch-path.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>

const char *rt_status_name(enum rt_status s)
{
	static const char *const names[] = { "creating", "created", "running", "paused",
					     "stopped" };
	return names[s];
}

static int lock_dir(int dirfd, const char *id, struct hutch_err *err)
{
	if (flock(dirfd, LOCK_EX) < 0)
		return hutch_fail_errno(err, errno, "lock container %s", id);
	return 0;
}

/*
 * --root, resolved once per process into an fd that every state dir beneath it is opened
 * from: its parents through hutch_chase (a symlink followed only where root or the caller
 * put it), the root itself never a symlink. Create makes it, mkdir -p (the containerd shim
 * passes --root <runtime root>/<namespace>, whose parents may not exist yet, and runc
 * creates them all). A process that closed every fd (--detach's supervisor) opens it again.
 */
#define ROOTS 4
static struct {
	char *path;
	int fd;
	dev_t dev;
	ino_t ino;
} roots[ROOTS];

/*
 * A state directory is trusted (its pid is signalled, its cgroup paths killed and removed), so
 * it must be the caller's own: owned by our euid, and writable by nobody else. A root that a
 * sandbox could replace (made inside its workspace, say) is then refused, not believed.
 */
static int check_owned(int fd, const char *what, const char *path, struct hutch_err *err)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return hutch_fail_errno(err, errno, "%s %s", what, path);
	if (st.st_uid != geteuid())
		return hutch_fail(err, EPERM, "%s %s: owned by uid %u, not by us (uid %u): refused",
				  what, path, (unsigned)st.st_uid, (unsigned)geteuid());
	if (st.st_mode & (S_IWGRP | S_IWOTH))
		return hutch_fail(err, EPERM, "%s %s: writable by others (mode %04o): refused",
				  what, path, (unsigned)(st.st_mode & 07777));
	return 0;
}

static int root_fd(const char *root, bool make, struct hutch_err *err)
{
	struct stat st;
	size_t i = 0;
	const char *what = strcmp(root, rt_root()) ? "--root" : rt_root_flag();
	if (!*root)
		return hutch_fail(err, EINVAL, "%s: empty path", what);
	for (; i < ROOTS && roots[i].path; i++)
		if (!strcmp(roots[i].path, root))
			break;
	if (i < ROOTS && roots[i].path && fstat(roots[i].fd, &st) == 0 &&
	    st.st_dev == roots[i].dev && st.st_ino == roots[i].ino)
		return roots[i].fd;
	int fd = make ? rt_make_dir(what, root, 0711, true, err)
		      : hutch_chase_type(what, root, HUTCH_CHASE_NOFOLLOW, S_IFDIR, NULL, err);
	if (fd < 0 || fstat(fd, &st) < 0)
		return fd < 0 ? fd : hutch_fail_errno(err, errno, "%s %s", what, root);
	int r = check_owned(fd, what, root, err);
	if (r < 0) {
		close(fd);
		return r;
	}
	if (i == ROOTS) /* more roots than any verb uses: not held */
		return fd;
	if (!roots[i].path)
		roots[i].path = hutch_xstrdup(root);
	roots[i].fd = fd, roots[i].dev = st.st_dev, roots[i].ino = st.st_ino;
	return fd;
}

/* The fd of root to use, closed after use only when it was not held (ROOTS exceeded). */
static bool held_root(int fd)
{
	for (size_t i = 0; i < ROOTS && roots[i].path; i++)
		if (roots[i].fd == fd)
			return true;
	return false;
}

int rt_state_create_dir(const char *root, const char *id, int *dirfd, struct hutch_err *err)
{
	int rootfd = root_fd(root, true, err);
	if (rootfd < 0)
		return rootfd;
	_cleanup_close_ _unused_ int own = held_root(rootfd) ? -1 : rootfd;
	if (mkdirat(rootfd, id, 0700) < 0) {
		if (errno == EEXIST)
			return hutch_fail(err, EEXIST, "container %s already exists", id);
		return hutch_fail_errno(err, errno, "create state dir %s/%s", root, id);
	}
	int fd = openat(rootfd, id, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return hutch_fail_errno(err, errno, "open state dir %s/%s", root, id);
	int r = lock_dir(fd, id, err);
	if (r < 0) {
		close(fd);
		return r;
	}
	*dirfd = fd;
	return 0;
}

/* Opens <root>/<id>; then locks it, waiting for the lock when wait, else only trying to:
 * *locked says whether it holds it. */
static int open_dir(const char *root, const char *id, bool wait, bool *locked, int *dirfd,
		    struct hutch_err *err)
{
	int rootfd = root_fd(root, false, err);
	if (rootfd == -ENOENT)
		return hutch_fail(err, ENOENT, "container %s does not exist", id);
	if (rootfd < 0)
		return rootfd;
	_cleanup_close_ _unused_ int own = held_root(rootfd) ? -1 : rootfd;
	int fd = openat(rootfd, id, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		if (errno == ENOENT)
			return hutch_fail(err, ENOENT, "container %s does not exist", id);
		return hutch_fail_errno(err, errno, "open state dir %s/%s", root, id);
	}
	_cleanup_free_ char *path = hutch_xasprintf("%s/%s", root, id);
	int r = check_owned(fd, "state dir", path, err);
	if (r < 0) {
		close(fd);
		return r;
	}
	*locked = wait || flock(fd, LOCK_EX | LOCK_NB) == 0;
	r = wait ? rt_state_relock(fd, id, err) : 0;
	if (r < 0) {
		close(fd);
		return r;
	}
	*dirfd = fd;
	return 0;
}

int rt_state_open(const char *root, const char *id, int *dirfd, struct hutch_err *err)
{
	bool locked;
	return open_dir(root, id, true, &locked, dirfd, err);
}

int rt_state_peek(const char *root, const char *id, int *dirfd, bool *locked, struct hutch_err *err)
{
	return open_dir(root, id, false, locked, dirfd, err);
}

void rt_state_unlock(int dirfd)
{
	flock(dirfd, LOCK_UN);
}

int rt_state_relock(int dirfd, const char *id, struct hutch_err *err)
{
	TRY(lock_dir(dirfd, id, err));
	/* A concurrent delete may have removed it while we waited for the lock. */
	struct stat st;
	if (fstat(dirfd, &st) < 0 || st.st_nlink == 0)
		return hutch_fail(err, ENOENT, "container %s does not exist", id);
	return 0;
}

static void gen_annotations(yajl_gen g, const struct rt_state *st)
{
	hutch_json_gen_str(g, "annotations");
	yajl_gen_map_open(g);
	for (size_t i = 0; i < st->n_annotations; i++)
		hutch_json_gen_kv(g, st->annotations[i].key, st->annotations[i].value);
	yajl_gen_map_close(g);
}

/* The OCI state fields, then runc's extras; private fields go only into state.json. */
static char *gen_state(const struct rt_state *st, const char *status, bool priv, size_t *len)
{
	_cleanup_gen_ yajl_gen g = yajl_gen_alloc(NULL);
	yajl_gen_map_open(g);
	hutch_json_gen_kv(g, "ociVersion", "1.2.0");
	hutch_json_gen_kv(g, "id", st->id);
	hutch_json_gen_kv(g, "status", status);
	hutch_json_gen_str(g, "pid");
	yajl_gen_integer(g, st->pid);
	hutch_json_gen_kv(g, "bundle", st->bundle);
	hutch_json_gen_kv(g, "rootfs", st->rootfs);
	hutch_json_gen_kv(g, "created", st->created);
	hutch_json_gen_kv(g, "owner", st->owner ? st->owner : "");
	gen_annotations(g, st);
	if (priv) {
		hutch_json_gen_str(g, "hutch_start_time");
		yajl_gen_integer(g, (long long)st->start_time);
		hutch_json_gen_kv(g, "hutch_cgroup_path", st->cgroup_path);
		hutch_json_gen_str(g, "hutch_cgroup_paths");
		yajl_gen_map_open(g);
		for (size_t i = 0; i < st->n_cgroup_paths; i++)
			hutch_json_gen_kv(g, st->cgroup_paths[i].key, st->cgroup_paths[i].value);
		yajl_gen_map_close(g);
		hutch_json_gen_str(g, "hutch_cgroup_made");
		yajl_gen_map_open(g);
		for (size_t i = 0; i < st->n_cgroup_made; i++)
			hutch_json_gen_kv(g, st->cgroup_made[i].key, st->cgroup_made[i].value);
		yajl_gen_map_close(g);
		if (st->systemd_unit)
			hutch_json_gen_kv(g, "hutch_systemd_unit", st->systemd_unit);
		hutch_json_gen_str(g, "hutch_rootfs_mnt_id");
		yajl_gen_integer(g, (long long)st->rootfs_mnt_id);
		hutch_json_gen_str(g, "hutch_poststart");
		yajl_gen_bool(g, st->poststart);
		hutch_json_gen_str(g, "hutch_poststop");
		yajl_gen_bool(g, st->poststop);
		hutch_json_gen_str(g, "hutch_creating");
		yajl_gen_bool(g, st->creating);
		hutch_json_gen_str(g, "hutch_own_config");
		yajl_gen_bool(g, st->own_config);
	}
	yajl_gen_map_close(g);
	return hutch_json_gen_finish(g, len);
}

char *rt_state_json(const struct rt_state *st, enum rt_status status, size_t *len)
{
	return gen_state(st, rt_status_name(status), false, len);
}

/* Never more than rt_state_load reads back: a state saved is one every later verb loads. */
int rt_state_save(int dirfd, const struct rt_state *st, struct hutch_err *err)
{
	size_t len = 0;
	_cleanup_free_ char *json = gen_state(st, "created", true, &len);
	if (len > RT_STATE_MAX)
		return hutch_fail(err, EFBIG, "state.json of %s: %zu bytes, more than %d", st->id,
				  len, RT_STATE_MAX);
	return hutch_write_atomic_at(dirfd, "state.json", json, len, 0600, err);
}

int rt_state_check_annotations(const struct cg_kv *a, size_t n, struct hutch_err *err)
{
	const struct rt_state st = { .annotations = (struct cg_kv *)a, .n_annotations = n };
	_cleanup_gen_ yajl_gen g = yajl_gen_alloc(NULL);
	yajl_gen_map_open(g);
	gen_annotations(g, &st);
	yajl_gen_map_close(g);
	size_t len = 0;
	free(hutch_json_gen_finish(g, &len)); /* its length is what is checked */
	len -= strlen("{\"annotations\":}");
	if (len > RT_ANNOTATIONS_MAX)
		return hutch_fail(err, EFBIG,
				  "annotations: %zu bytes as JSON, more than the %d a container's "
				  "state can hold",
				  len, RT_ANNOTATIONS_MAX);
	return 0;
}

/* The string members of doc's object key (annotations, cgroup paths). */
static void load_map(yajl_val doc, const char *key, struct cg_kv **out, size_t *n)
{
	yajl_val a = hutch_json_get(doc, key);
	if (!YAJL_IS_OBJECT(a))
		return;
	*out = hutch_xcalloc(a->u.object.len + 1, sizeof(**out));
	for (size_t i = 0; i < a->u.object.len; i++) {
		yajl_val v = a->u.object.values[i];
		if (!YAJL_IS_STRING(v))
			continue;
		(*out)[*n].key = hutch_xstrdup(a->u.object.keys[i]);
		(*out)[(*n)++].value = hutch_xstrdup(YAJL_GET_STRING(v));
	}
}

int rt_state_load(int dirfd, const char *id, struct rt_state *st, struct hutch_err *err)
{
	_cleanup_free_ char *text = NULL;
	_cleanup_json_ yajl_val doc = NULL;
	int64_t pid = 0;
	uint64_t start = 0;
	int r = hutch_read_file_at(dirfd, "state.json", RT_STATE_MAX + 1, &text, NULL, err);
	if (r == -ENOENT)
		return hutch_fail(err, ENOENT, "container %s does not exist (no state)", id);
	if (r < 0)
		return r;
	r = hutch_json_parse(text, "state.json", &doc, err);
	if (r < 0)
		return r;
	memset(st, 0, sizeof(*st));
	st->id = hutch_xstrdup(id);
	if ((r = hutch_json_string(doc, "bundle", "bundle", true, &st->bundle, err)) < 0 ||
	    (r = hutch_json_string(doc, "rootfs", "rootfs", false, &st->rootfs, err)) < 0 ||
	    (r = hutch_json_string(doc, "created", "created", false, &st->created, err)) < 0 ||
	    (r = hutch_json_string(doc, "owner", "owner", false, &st->owner, err)) < 0 ||
	    (r = hutch_json_string(doc, "hutch_cgroup_path", "hutch_cgroup_path", false,
				   &st->cgroup_path, err)) < 0 ||
	    (r = hutch_json_string(doc, "hutch_systemd_unit", "hutch_systemd_unit", false,
				   &st->systemd_unit, err)) < 0 ||
	    (r = hutch_json_int(doc, "pid", "pid", 0, INT32_MAX, NULL, &pid, err)) < 0 ||
	    (r = hutch_json_uint64(doc, "hutch_start_time", "hutch_start_time", UINT64_MAX, NULL,
				   &start, err)) < 0 ||
	    (r = hutch_json_uint64(doc, "hutch_rootfs_mnt_id", "hutch_rootfs_mnt_id", UINT64_MAX,
				   NULL, &st->rootfs_mnt_id, err)) < 0 ||
	    (r = hutch_json_bool(doc, "hutch_poststart", "hutch_poststart", &st->poststart, err)) <
		    0 ||
	    (r = hutch_json_bool(doc, "hutch_poststop", "hutch_poststop", &st->poststop, err)) <
		    0 ||
	    (r = hutch_json_bool(doc, "hutch_creating", "hutch_creating", &st->creating, err)) <
		    0 ||
	    (r = hutch_json_bool(doc, "hutch_own_config", "hutch_own_config", &st->own_config,
				 err)) < 0) {
		rt_state_clear(st);
		return hutch_err_prefix(err, "state.json of %s: ", id);
	}
	st->pid = (pid_t)pid;
	st->start_time = start;
	load_map(doc, "annotations", &st->annotations, &st->n_annotations);
	load_map(doc, "hutch_cgroup_paths", &st->cgroup_paths, &st->n_cgroup_paths);
	load_map(doc, "hutch_cgroup_made", &st->cgroup_made, &st->n_cgroup_made);
	return 0;
}

void rt_state_clear(struct rt_state *st)
{
	free(st->id);
	free(st->bundle);
	free(st->rootfs);
	free(st->created);
	free(st->owner);
	free(st->cgroup_path);
	free(st->systemd_unit);
	rt_kv_free(st->cgroup_paths, st->n_cgroup_paths);
	rt_kv_free(st->cgroup_made, st->n_cgroup_made);
	rt_kv_free(st->annotations, st->n_annotations);
	memset(st, 0, sizeof(*st));
}

int rt_state_load_spec(int dirfd, const struct rt_state *st, struct rt_spec **out,
		       struct hutch_err *err)
{
	/* The root is the state's: the path create resolved may not resolve from here (a
	 * sandbox's is a mount in its own namespace), and nothing after create goes through it
	 * (exec joins the init's mount namespace, or its /proc/PID/root without one). */
	if (!st->own_config) {
		_cleanup_free_ char *path = hutch_xasprintf("%s/config.json", st->bundle);
		return rt_spec_load_created(AT_FDCWD, path, st->bundle, st->rootfs, out, err);
	}
	return rt_spec_load_created(dirfd, "config.json", st->bundle, st->rootfs, out, err);
}

int rt_open_cgroup(const char *path, const struct cg_kv *paths, size_t n, struct cg **out,
		   struct hutch_err *err)
{
	if (n)
		return cg_open_paths(paths, n, out, err);
	if (path)
		return cg_open(path, out, err);
	return hutch_fail(err, ENOENT, "no cgroup");
}

int rt_state_cgroup(const struct rt_state *st, struct cg **out, struct hutch_err *err)
{
	int r = rt_open_cgroup(st->cgroup_path, st->cgroup_paths, st->n_cgroup_paths, out, err);
	if (r < 0 || !st->n_cgroup_made)
		return r;
	r = cg_adopt_parents(*out, st->cgroup_made, st->n_cgroup_made, err);
	if (r < 0) {
		cg_free(*out);
		*out = NULL;
		return hutch_err_prefix(err, "state.json: ");
	}
	return 0;
}

int rt_state_remove(const char *root, const char *id, int dirfd, struct hutch_err *err)
{
	_cleanup_(hutch_closedirp) DIR *d = NULL;
	int fd = dup(dirfd);
	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return hutch_fail_errno(err, errno, "read state dir of %s", id);
	}
	struct dirent *de;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			unlinkat(dirfd, de->d_name, 0);
	int rootfd = root_fd(root, false, err);
	if (rootfd < 0)
		return rootfd == -ENOENT ? 0 : rootfd;
	_cleanup_close_ _unused_ int own = held_root(rootfd) ? -1 : rootfd;
	if (unlinkat(rootfd, id, AT_REMOVEDIR) < 0 && errno != ENOENT)
		return hutch_fail_errno(err, errno, "remove state dir %s/%s", root, id);
	return 0;
}

bool rt_pid_alive(pid_t pid, uint64_t start_time)
{
	uint64_t st = 0;
	char state = 0;
	if (pid <= 0 || hutch_proc_stat(pid, &st, &state) < 0)
		return false;
	/* A zombie has exited; a different start time means the pid was reused. */
	return state != 'Z' && state != 'X' && (start_time == 0 || st == start_time);
}

/* Only asked of a live container, so stopped ones cost no cgroup lookup. On v1 only the
 * freezer hierarchy is opened (start's status check opened all ten). */
static bool frozen(const struct rt_state *st)
{
	struct hutch_err ignored = { 0 };
	struct cg *cg = NULL;
	const struct cg_kv *freezer = NULL;
	for (size_t i = 0; i < st->n_cgroup_paths; i++)
		if (strcmp(st->cgroup_paths[i].key, "freezer") == 0)
			freezer = &st->cgroup_paths[i];
	int r = freezer ? cg_open_paths(freezer, 1, &cg, &ignored)
			: rt_state_cgroup(st, &cg, &ignored);
	if (r < 0)
		return false;
	bool f = cg_is_frozen(cg);
	cg_free(cg);
	return f;
}

enum rt_status rt_state_status(int dirfd, const struct rt_state *st)
{
	if (st->creating)
		return rt_pid_alive(st->pid, st->start_time) ? RT_CREATING : RT_STOPPED;
	if (!rt_pid_alive(st->pid, st->start_time))
		return RT_STOPPED;
	/* Before exec.fifo: a created container can be paused too (as runc). */
	if (frozen(st))
		return RT_PAUSED;
	if (faccessat(dirfd, "exec.fifo", F_OK, AT_SYMLINK_NOFOLLOW) == 0)
		return RT_CREATED;
	return RT_RUNNING;
}

static int cmp_id(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int rt_state_list_ids(const char *root, char ***ids, struct hutch_err *err)
{
	_cleanup_(hutch_closedirp) DIR *d = NULL;
	size_t n = 0;
	*ids = hutch_xcalloc(1, sizeof(char *));
	int rootfd = root_fd(root, false, err);
	if (rootfd < 0)
		return rootfd == -ENOENT ? 0 : rootfd;
	_cleanup_close_ _unused_ int own = held_root(rootfd) ? -1 : rootfd;
	int fd = openat(rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return hutch_fail_errno(err, errno, "open %s", root);
	}
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || de->d_type != DT_DIR)
			continue;
		*ids = hutch_xrealloc(*ids, (n + 2) * sizeof(char *));
		(*ids)[n++] = hutch_xstrdup(de->d_name);
		(*ids)[n] = NULL;
	}
	/* by id, byte order, as runc (Go's ReadDir sorts): readdir's order is the hash's */
	qsort(*ids, n, sizeof(char *), cmp_id);
	return (int)n;
}
