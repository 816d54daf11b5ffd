// SPDX-License-Identifier: Apache-2.0
/*
 * Long-lived sandboxes (--name, --detach): the name record, a file under hutch's state dir
 * flocked by the sandbox's hutch for its whole life (so one that is killed frees the name);
 * the sandbox's own record in its state dir (its spec, which `sandbox exec` joins it with,
 * and what `sandbox ls` shows); and --detach's supervisor, which tells the hutch that forked
 * it over a pipe whether the command started or why it could not.
 */
#include "rt-sandbox.h"
#include "rt-sandbox-lock.h"
#include "rt-spec-build.h"
#include "rt-process.h"
#include "rt-sandbox-named.h"
#include "rt-json.h"
#include "hutch-proc.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

int rt_sb_set_name(void *p, const char *v, struct hutch_err *err)
{
	struct rt_sb_opts *o = p;
	struct hutch_err e = { 0 };
	if (strlen(v) > 128 || rt_validate_id(v, &e) < 0)
		return hutch_fail(err, EINVAL,
				  "--name %s: not a valid name (1-128 of [a-zA-Z0-9_+.-], not . "
				  "or ..)",
				  v);
	free(o->name);
	o->name = hutch_xstrdup(v);
	return 0;
}

int rt_sb_set_detach(void *p, const char *v, struct hutch_err *err)
{
	struct rt_sb_opts *o = p;
	if (!*v || !strcmp(v, "true"))
		o->detach = true;
	else if (!strcmp(v, "false"))
		o->detach = false;
	else
		return hutch_fail(err, EINVAL, "--detach=%s: expected true or false", v);
	return 0;
}

/* Host mode keeps no sandbox that exec could join; a delegated one is joined through its
 * runtime's exec (rt-sandbox-delegate-named.c). */
int rt_sb_check_named(const struct rt_sb_opts *o, struct hutch_err *err)
{
	if (o->detach && !o->name)
		return hutch_fail(err, EINVAL, "--detach: requires --name");
	if (!o->name)
		return 0;
	if (o->isolation != RT_SB_ISO_NAMESPACES)
		return hutch_fail(err, ENOTSUP, "--name with --isolation %s: not supported",
				  o->isolation == RT_SB_ISO_LANDLOCK ? "landlock" : "none");
	if (o->detach && o->tty)
		return hutch_fail(err, ENOTSUP, "--detach with --tty: not supported");
	/* runc's exec joins the container's user namespace before its network namespace, which
	 * hutch made outside it (rt-sandbox.c): setns fails with EPERM (crun's does not). */
	const char *base = o->runtime ? strrchr(o->runtime, '/') : NULL;
	base = base ? base + 1 : o->runtime;
	if (base && strstr(base, "runc") && o->network == RT_SB_NET_BRIDGE)
		return hutch_fail(
			err, ENOTSUP,
			"--name with --runtime %s --network bridge: not supported (its exec "
			"cannot join the sandbox's network namespace)",
			o->runtime);
	return 0;
}

/* ---- the name record ---- */

static bool still_there(int fd, int dir, const char *name)
{
	struct stat a, b;
	return fstat(fd, &a) == 0 && fstatat(dir, name, &b, AT_SYMLINK_NOFOLLOW) == 0 &&
	       a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* A record never waits in open (O_NONBLOCK: a FIFO planted there) nor follows a symlink; only
 * a regular file is one. -1 (errno set) otherwise. */
static int open_record(int dir, const char *name, int flags)
{
	int fd = openat(dir, name, flags | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd >= 0 && !rt_regular(fd)) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	return fd;
}

/* A sweep of stale records holds a free one's lock for an instant: a few tries tell it from
 * a sandbox that runs. */
int rt_sb_name_take(const char *name, int *out, struct hutch_err *err)
{
	_cleanup_close_ int dir = rt_sb_subdir("names", true, err);
	if (dir < 0)
		return hutch_err_prefix(err, "--name: ");
	for (int tries = 0; tries < 50;) {
		_cleanup_close_ int fd = open_record(dir, name, O_RDWR | O_CREAT);
		if (fd < 0 && errno == EINVAL)
			return hutch_fail(err, EINVAL, "--name %s: %s/%s is not a regular file",
					  name, RT_SB_NAMES, name);
		if (fd < 0)
			return hutch_fail_errno(err, errno, "--name %s", name);
		if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
			if (errno != EWOULDBLOCK && errno != EINTR)
				return hutch_fail_errno(err, errno, "--name %s", name);
			if (++tries == 5)
				break;
			usleep(10000);
			continue;
		}
		if (!still_there(fd, dir, name))
			continue; /* its sandbox ended meanwhile: take the new file */
		if (ftruncate(fd, 0) < 0)
			return hutch_fail_errno(err, errno, "--name %s", name);
		*out = steal_fd(fd);
		return 0;
	}
	return hutch_fail(err, EEXIST, "sandbox %s: already exists", name);
}

void rt_sb_name_set(int fd, const char *id)
{
	if (fd >= 0)
		(void)!pwrite(fd, id, strlen(id), 0);
}

void rt_sb_name_release(const char *name, int fd)
{
	struct hutch_err e = { 0 };
	if (fd < 0)
		return;
	_cleanup_close_ int dir = rt_sb_subdir("names", false, &e);
	if (dir >= 0 && still_there(fd, dir, name)) /* unlinked before the lock goes */
		unlinkat(dir, name, 0);
	close(fd);
}

/* The records of sandboxes whose hutch was killed: nobody holds their lock. */
void rt_sb_names_sweep(void)
{
	struct hutch_err e = { 0 };
	_cleanup_close_ int dir = rt_sb_subdir("names", false, &e);
	int fd = dir >= 0 ? openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	_cleanup_(hutch_closedirp) DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		_cleanup_close_ int rec = open_record(dir, de->d_name, O_RDONLY);
		if (rec >= 0 && flock(rec, LOCK_EX | LOCK_NB) == 0 &&
		    still_there(rec, dir, de->d_name))
			unlinkat(dir, de->d_name, 0);
	}
}

/* A small file of the record's, read from dir without waiting or following a link. */
static int read_record_file(int dir, const char *name, size_t max, char **text)
{
	struct hutch_err e = { 0 };
	char link[HUTCH_FD_PATH_MAX];
	_cleanup_close_ int fd = open_record(dir, name, O_RDONLY);
	if (fd < 0)
		return -errno;
	return hutch_read_file_at(AT_FDCWD, hutch_fd_path(fd, link), max, text, NULL, &e);
}

int rt_sb_name_resolve(const char *name, char *id, size_t len, struct hutch_err *err)
{
	_cleanup_free_ char *text = NULL;
	struct hutch_err e = { 0 };
	_cleanup_close_ int dir = -1;
	if (rt_validate_id(name, &e) < 0 || (dir = rt_sb_subdir("names", false, &e)) < 0 ||
	    read_record_file(dir, name, 64, &text) < 0 || !text[0])
		return hutch_fail(err, ENOENT, "sandbox %s: no such sandbox", name);
	snprintf(id, len, "%s", text);
	return 0;
}

/* ---- the sandbox's record, in its state dir (removed with it) ---- */

/* config.json makes the state dir the bundle `exec` reads; sandbox.json holds the rest. */
int rt_sb_write_record(const struct rt_sb_opts *o, int dir, const struct rt_spec *spec,
		       const char *image, const struct rt_sb_setid *setid, struct hutch_err *err)
{
	_cleanup_free_ char *config = NULL;
	TRY(rt_spec_write(spec, &config, err));
	TRY(hutch_write_atomic_at(dir, "config.json", config, strlen(config), 0600, err));
	_cleanup_gen_ yajl_gen g = yajl_gen_alloc(NULL);
	yajl_gen_map_open(g);
	hutch_json_gen_kv(g, "name", o->name);
	hutch_json_gen_kv(g, "image", image);
	uint64_t start = 0;
	hutch_json_gen_int(g, "supervisor", getpid());
	if (hutch_proc_stat(getpid(), &start, NULL) >= 0)
		hutch_json_gen_int(g, "supervisor_start", (long long)start);
	hutch_json_gen_int(g, "grace_ms", (long long)(o->grace * 1000));
	rt_sb_setid_gen(g, setid);
	yajl_gen_map_close(g);
	size_t n;
	_cleanup_free_ char *info = hutch_json_gen_finish(g, &n);
	return hutch_write_atomic_at(dir, "sandbox.json", info, n, 0600, err);
}

int rt_sb_read_record(const char *id, struct rt_sb_record *r)
{
	_cleanup_free_ char *text = NULL;
	_cleanup_json_ yajl_val doc = NULL;
	struct hutch_err e = { 0 };
	int64_t v = 0;
	*r = (struct rt_sb_record){ 0 };
	_cleanup_close_ int root = rt_sb_subdir("state", false, &e);
	_cleanup_close_ int dir =
		root < 0 ? -1 : openat(root, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dir < 0 || read_record_file(dir, "sandbox.json", 1 << 16, &text) < 0 ||
	    hutch_json_parse(text, "sandbox.json", &doc, &e) < 0)
		return -ENOENT;
	hutch_json_string(doc, "name", "name", false, &r->name, &e);
	hutch_json_string(doc, "image", "image", false, &r->image, &e);
	if (hutch_json_int(doc, "supervisor", "supervisor", 1, INT32_MAX, NULL, &v, &e) >= 0)
		r->supervisor = (pid_t)v;
	hutch_json_uint64(doc, "supervisor_start", "supervisor_start", UINT64_MAX, NULL,
			  &r->supervisor_start, &e);
	if (hutch_json_int(doc, "grace_ms", "grace_ms", 0, INT64_MAX, NULL, &v, &e) >= 0)
		r->grace_ms = v;
	rt_sb_setid_parse(doc, &r->setid);
	return 0;
}

void rt_sb_record_clear(struct rt_sb_record *r)
{
	free(r->name);
	free(r->image);
	rt_sb_setid_free(&r->setid);
	*r = (struct rt_sb_record){ 0 };
}

/* ---- --detach ---- */

struct detach_msg {
	int started;
	struct hutch_err err;
};

/* The supervisor keeps nothing of its caller's but the report fd it was asked to write (and
 * the --report directory resolved for it), and leaves the caller's session, so that the caller's terminal and its job control do not
 * reach it. */
static void become_supervisor(const struct rt_sb_opts *o, const struct rt_global *g,
			      const struct rt_sb_ticket *t, int fd)
{
	struct hutch_err e = { 0 };
	int keep[] = { fd, o->report_fd, o->report_dir_fd, t->fd, t->dir }; /* t: --lock's */
	setsid();
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null < 0)
		_exit(RT_SB_EXIT_FAIL);
	for (int i = 0; i < 3; i++)
		if (dup2(null, i) < 0)
			_exit(RT_SB_EXIT_FAIL);
	if (null > 2)
		close(null);
	hutch_log_setup(-1, g->log_json, false); /* its --log fd is closed next */
	hutch_phase_setup(-1, false, false);	 /* and stderr's copy */
	if (rt_close_fds_but(0, keep, ARRAY_SIZE(keep), &e) < 0)
		_exit(RT_SB_EXIT_FAIL);
	signal(SIGPIPE, SIG_IGN); /* a caller gone is EPIPE (rt_sb_notify_started) */
}

pid_t rt_sb_detach(const struct rt_sb_opts *o, const struct rt_global *g,
		   const struct rt_sb_ticket *t, int *fd, struct hutch_err *err)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return hutch_fail_errno(err, errno, "--detach: pipe");
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return hutch_fail_errno(err, errno, "--detach: fork");
	}
	close(p[pid == 0 ? 0 : 1]);
	*fd = p[pid == 0 ? 1 : 0];
	if (pid == 0)
		become_supervisor(o, g, t, *fd);
	return pid;
}

int rt_sb_notify_started(int *fd, struct hutch_err *err)
{
	struct detach_msg m = { .started = 1 };
	if (*fd < 0)
		return 0;
	ssize_t n = write(*fd, &m, sizeof(m));
	close(*fd);
	*fd = -1;
	if (n != (ssize_t)sizeof(m)) /* the hutch that started us was killed */
		return hutch_fail(err, EPIPE, "--detach: the caller is gone");
	return 0;
}

void rt_sb_notify_failed(int fd, const struct hutch_err *err)
{
	struct detach_msg m = { .started = 0, .err = *err };
	if (fd >= 0)
		(void)!write(fd, &m, sizeof(m));
}

/* A supervisor killed before it said anything wrote no report: this one says so. */
static int supervisor_died(const struct rt_sb_opts *o, pid_t pid, struct hutch_err *err)
{
	struct rt_sb_result r = { .failure = RT_SB_FAIL_SETUP,
				  .exit_code = RT_SB_EXIT_FAIL,
				  .runtime = "native" };
	struct hutch_err e = { 0 };
	snprintf(r.id, sizeof(r.id), "sb-%d", (int)pid);
	clock_gettime(CLOCK_REALTIME, &r.started);
	r.ended = r.started;
	hutch_fail(err, EPIPE, "sandbox %s: its supervisor died before the command started",
		   o->name);
	r.error = err->msg;
	rt_sb_write_report(o, NULL, &r, &e);
	return -EPIPE;
}

int rt_sb_detach_wait(const struct rt_sb_opts *o, pid_t pid, int fd, struct hutch_err *err)
{
	struct detach_msg m = { 0 };
	hutch_fault_point("sandbox:detached"); /* the supervisor must not outlive us here */
	ssize_t n = hutch_read_all(fd, &m, sizeof(m));
	close(fd);
	if (n == (ssize_t)sizeof(m) && m.started) {
		printf("%s\n", o->name);
		fflush(stdout);
		return 0;
	}
	waitpid(pid, NULL, 0); /* it exits once it has said why */
	if (n != (ssize_t)sizeof(m))
		return supervisor_died(o, pid, err);
	*err = m.err;
	return -(m.err.code ? m.err.code : EINVAL);
}
