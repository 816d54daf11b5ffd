// SPDX-License-Identifier: Apache-2.0
/*
 * The supervisor's side of a named session under --runtime runc|crun|runsc: the state dir's
 * records (the spec exec takes its process from, sandbox.json, delegate.json and the owner
 * lock), and the wait until the runtime says the container runs, when --detach's caller is
 * told. It runs the runtime only through the fd rt-sandbox-delegate.c resolved.
 */
#include "rt-sandbox-delegate.h"
#include "rt-json.h"

#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#define START_POLL_MS 10

static int write_dl_record(int dir, const struct sandbox_delegate_in *in, const char *runtime,
			   pid_t pid, const char *created, struct hutch_err *err)
{
	_cleanup_gen_ yajl_gen g = yajl_gen_alloc(NULL);
	yajl_gen_map_open(g);
	hutch_json_gen_kv(g, "runtime", runtime);
	hutch_json_gen_kv(g, "scratch", in->scratch); /* the bundle and the runtime's state */
	hutch_json_gen_int(g, "pid", pid);
	hutch_json_gen_kv(g, "created", created);
	if (in->cgroup2_dir) /* where sandbox exec's runtime goes, as run's did */
		hutch_json_gen_kv(g, "cgroup2", in->cgroup2_dir);
	yajl_gen_map_close(g);
	size_t n;
	_cleanup_free_ char *text = hutch_json_gen_finish(g, &n);
	return hutch_write_atomic_at(dir, DL_RECORD, text, n, 0600, err);
}

int rt_sb_session_dir(const char *id, struct hutch_err *err)
{
	_cleanup_close_ int root = rt_sb_subdir("state", false, err);
	if (root < 0)
		return root;
	int fd = openat(root, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return fd >= 0 ? fd : hutch_fail_errno(err, errno, "sandbox %s", id);
}

/* The state dir as a native sandbox's (its spec, sandbox.json, owner.lock), without state.json:
 * rt_container_delete then removes it whole, at the end or in a later hutch's sweep. */
int rt_sb_session_begin(struct sandbox_delegate_in *in, const struct delegate *d,
			struct hutch_err *err)
{
	struct rt_sb_session *s = in->session;
	struct timespec now;
	char created[HUTCH_UTC_MAX];
	_cleanup_close_ int dir = -1; /* locked until closed: nobody reads it half written */
	TRY(rt_state_create_dir(RT_SB_ROOT, in->id, &dir, err));
	TRY(rt_sb_write_record(s->o, dir, s->spec, s->image, s->setid, err));
	clock_gettime(CLOCK_REALTIME, &now);
	hutch_utc_stamp(&now, true, created);
	TRY(write_dl_record(dir, in, d->path, 0, created, err));
	s->owner_fd = openat(dir, "owner.lock",
			     O_RDWR | O_CREAT | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (s->owner_fd < 0 || flock(s->owner_fd, LOCK_EX) < 0)
		return hutch_fail_errno(err, errno, "sandbox: %s/%s/owner.lock", RT_SB_ROOT,
					in->id);
	return 0;
}

/* argv run with stdout into out (NUL-terminated, truncated), the rest /dev/null: its wait
 * status, or -1. */
static int run_capture(const struct delegate *d, const char *const *argv, char *out, size_t len)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);
		dup2(null, 0);
		dup2(p[1], 1);
		dup2(null, 2);
		extern char *
			*environ; /* the resolved binary's fd, as rt-sandbox-delegate.c runs it */
		syscall(SYS_execveat, d->fd, "", (char *const *)argv, environ, AT_EMPTY_PATH);
		_exit(127);
	}
	close(p[1]);
	ssize_t n = pid > 0 ? hutch_read_all(p[0], out, len - 1) : -1;
	close(p[0]);
	out[n > 0 ? n : 0] = '\0';
	int status = -1;
	if (pid > 0)
		waitpid(pid, &status, 0);
	return status;
}

/* The container's pid once the runtime calls it running (runsc: its sandbox's), else 0. */
static pid_t running_pid(const struct delegate *d, const char *id)
{
	const char *argv[] = { d->path, "--root", d->state, "state", id, NULL };
	char out[8192];
	_cleanup_json_ yajl_val doc = NULL;
	struct hutch_err e = { 0 };
	char *status = NULL;
	int64_t pid = 0;
	if (run_capture(d, argv, out, sizeof(out)) != 0 ||
	    hutch_json_parse(out, "state", &doc, &e) < 0 ||
	    hutch_json_string(doc, "status", "status", true, &status, &e) < 0)
		return 0;
	bool running = !strcmp(status, "running");
	free(status);
	if (!running || hutch_json_int(doc, "pid", "pid", 1, INT32_MAX, NULL, &pid, &e) < 0)
		return 0;
	return (pid_t)pid;
}

/* `run` says nothing when the command has started: its state does. A runtime that ended
 * first has failed, or the command ended at once (rt_sb_delegate tells which); one that takes
 * longer than the timeout is left to the wait, which ends it. */
int rt_sb_session_started(struct sandbox_delegate_in *in, const struct delegate *d, int run_pidfd,
			  int64_t timeout_ms, struct hutch_err *err)
{
	struct hutch_err e = { 0 };
	double until = hutch_now_ms() + (double)timeout_ms;
	pid_t pid = 0;
	for (;;) {
		struct pollfd p = { .fd = run_pidfd, .events = POLLIN };
		if (poll(&p, 1, START_POLL_MS) > 0 || (timeout_ms > 0 && hutch_now_ms() > until))
			return 0;
		if ((pid = running_pid(d, in->id)) > 0)
			break;
	}
	_cleanup_close_ int dir = rt_sb_session_dir(in->id, &e);
	_cleanup_free_ char *text = NULL;
	_cleanup_json_ yajl_val doc = NULL;
	char *created = NULL;
	if (dir >= 0 && hutch_read_file_at(dir, DL_RECORD, 1 << 16, &text, NULL, &e) >= 0 &&
	    hutch_json_parse(text, DL_RECORD, &doc, &e) >= 0 &&
	    hutch_json_string(doc, "created", "created", false, &created, &e) >= 0)
		write_dl_record(dir, in, d->path, pid, created, &e); /* for ls; best effort */
	free(created);
	return rt_sb_notify_started(in->session->notify_fd, err);
}

void rt_sb_session_end(struct sandbox_delegate_in *in)
{
	if (in->session->owner_fd >= 0)
		close(in->session->owner_fd);
	in->session->owner_fd = -1;
}
