// SPDX-License-Identifier: Apache-2.0
/*
 * Applying to cgroup v1: one directory per hierarchy, each write sent to the hierarchy that
 * carries its controller. Owns the v1 quirks: cpuset dirs start empty, memory and memsw
 * limits must be written in an order that keeps memsw >= memory, the freezer's FREEZING state.
 */
#include "cg-internal.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static void sleep_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };
	nanosleep(&ts, NULL);
}

/* A new cpuset cgroup has no cpus and no mems, and nothing can join it until it has: its
 * parent's (already there where the parent's cgroup.clone_children copied them: the same). */
static int copy_cpuset(const char *dir, struct hutch_err *err)
{
	static const char *const files[] = { "cpuset.cpus", "cpuset.mems" };
	_cleanup_free_ char *parent = hutch_xstrdup(dir);
	*strrchr(parent, '/') = '\0';
	_cleanup_close_ int pfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	_cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pfd < 0 || fd < 0)
		return hutch_fail_errno(err, errno, "open %s", pfd < 0 ? parent : dir);
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		_cleanup_free_ char *val = NULL;
		int r = cg_read_at(pfd, files[i], &val, err);
		if (r == 0)
			r = hutch_write_str_at(fd, files[i], val, err);
		if (r < 0)
			return hutch_err_prefix(err, "cpuset %s: ", dir);
	}
	return 0;
}

int cg_v1_create(struct cg *cg, struct hutch_err *err)
{
	struct cg_hier *h = cg_find_hier(cg, "cpuset");
	if (!h)
		return 0;
	/* Outermost first: each copies from its parent. */
	for (size_t i = 0; i < h->n_created; i++) {
		int r = copy_cpuset(h->created[i], err);
		if (r < 0)
			return r;
	}
	return 0;
}

static int set_file(int fd, const char *file, const char *value, struct hutch_err *err)
{
	_cleanup_close_ int wfd = openat(fd, file, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
	if (wfd < 0)
		return hutch_fail_errno(err, errno, "set %s to %s", file, value);
	int r = hutch_write_all(wfd, value, strlen(value));
	return r < 0 ? hutch_fail_errno(err, r, "set %s to %s", file, value) : 0;
}

static int set_one(int fd, const struct cg_write *w, struct hutch_err *err)
{
	int r = set_file(fd, w->file, w->value, err);
	/* Kernels with BFQ instead of CFQ name the weight blkio.bfq.weight. */
	if (r == -ENOENT && strcmp(w->file, "blkio.weight") == 0)
		r = set_file(fd, "blkio.bfq.weight", w->value, err);
	if (r == -ENOENT && strcmp(w->file, "blkio.weight_device") == 0)
		r = set_file(fd, "blkio.bfq.weight_device", w->value, err);
	if (r != -ENOENT)
		return r;
	if (strcmp(w->file, "memory.memsw.limit_in_bytes") == 0)
		return hutch_fail(err, ENOTSUP,
				  "set %s: swap limit not supported by this kernel "
				  "(no swap accounting)",
				  w->file);
	if (strncmp(w->file, "blkio.weight", strlen("blkio.weight")) == 0)
		return hutch_fail(err, ENOTSUP,
				  "set %s: not supported by this kernel "
				  "(needs the BFQ or CFQ I/O scheduler)",
				  w->file);
	return hutch_fail(err, ENOTSUP, "set %s: not supported by this kernel", w->file);
}

/* memsw must stay >= memory at every step: raise memsw first when growing (as runc). */
static int set_memory(int fd, const struct cg_write *limit, const struct cg_write *swap,
		      struct hutch_err *err)
{
	int64_t want_swap = 0;
	uint64_t cur = 0;
	if (!swap) {
		if (strcmp(limit->value, "-1") == 0) {
			/* Unlimited memory with a limited memsw is refused: lift memsw too. */
			struct cg_write sw = { "memory", "memory.memsw.limit_in_bytes", "-1" };
			int r = set_file(fd, sw.file, sw.value, err);
			if (r < 0 && r != -ENOENT)
				return r;
		}
		int r = set_one(fd, limit, err);
		if (r == -EINVAL)
			return hutch_fail(err, EINVAL,
					  "set %s to %s: above the current memory+swap "
					  "limit (give linux.resources.memory.swap too)",
					  limit->file, limit->value);
		return r;
	}
	if (hutch_parse_i64(swap->value, &want_swap) < 0 ||
	    cg_read_u64_at(fd, "memory.limit_in_bytes", &cur) < 0)
		return hutch_fail(err, EINVAL, "read memory.limit_in_bytes");
	bool swap_first = want_swap == -1 || cur < (uint64_t)want_swap;
	int r = set_one(fd, swap_first ? swap : limit, err);
	if (r == 0)
		r = set_one(fd, swap_first ? limit : swap, err);
	return r;
}

/* The error of a failed write, led by the spec field it came from where that helps. */
static int field_error(const struct cg_write *w, int r, struct hutch_err *err)
{
	const char *field = cg_plan_field(w->file);
	return field ? hutch_err_prefix(err, "%s: ", field) : r;
}

/* The device rules in a row of writes to file (devices.allow or .deny), through one open: the
 * kernel takes one rule a write, and a default spec has eleven. Returns how many it wrote. */
static int set_devices(int fd, const struct cg_write *w, size_t n, struct hutch_err *err)
{
	_cleanup_close_ int wfd = openat(fd, w[0].file, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
	if (wfd < 0)
		return hutch_fail_errno(err, errno, "set %s to %s", w[0].file, w[0].value);
	size_t i = 0;
	for (; i < n && strcmp(w[i].file, w[0].file) == 0; i++) {
		int r = hutch_write_all(wfd, w[i].value, strlen(w[i].value));
		if (r < 0)
			return hutch_fail_errno(err, r, "set %s to %s", w[i].file, w[i].value);
	}
	return (int)i;
}

int cg_v1_apply(struct cg *cg, const struct cg_write *w, size_t n, struct hutch_err *err)
{
	for (size_t i = 0; i < n; i++) {
		struct cg_hier *h = cg_find_hier(cg, w[i].controller);
		if (!h || h->fd < 0) {
			int r = hutch_fail(err, ENOTSUP,
					   "set %s: the %s cgroup controller is not mounted",
					   w[i].file, w[i].controller);
			return field_error(&w[i], r, err);
		}
		int r;
		if (strcmp(w[i].file, "memory.limit_in_bytes") == 0) {
			bool with_swap = i + 1 < n &&
					 strcmp(w[i + 1].file, "memory.memsw.limit_in_bytes") == 0;
			r = set_memory(h->fd, &w[i], with_swap ? &w[i + 1] : NULL, err);
			i += with_swap;
		} else if (strncmp(w[i].file, "devices.", strlen("devices.")) == 0) {
			r = set_devices(h->fd, &w[i], n - i, err);
			if (r > 0)
				i += (size_t)r - 1;
		} else {
			r = set_one(h->fd, &w[i], err);
		}
		if (r < 0)
			return field_error(&w[i], r, err);
	}
	return 0;
}

/* Writes state and waits until freezer.state reads it back. Freezing can stall on a task in
 * an uninterruptible sleep, so the request is repeated now and then (runc does the same). */
static int freezer_set(int fd, const char *state, struct hutch_err *err)
{
	long step = 1000;
	for (long waited = 0, i = 0; waited < 5000000; waited += step, i++) {
		if (i % 20 == 0) {
			int r = set_file(fd, "freezer.state", state, err);
			if (r < 0)
				return r == -ENOENT ? hutch_fail(err, ENOTSUP, "no freezer.state")
						    : r;
		}
		_cleanup_free_ char *cur = NULL;
		int r = cg_read_at(fd, "freezer.state", &cur, err);
		if (r < 0)
			return r;
		cur[strcspn(cur, "\n")] = '\0';
		if (strcmp(cur, state) == 0)
			return 0;
		sleep_us(step);
		if (step < 10000)
			step *= 2;
	}
	return hutch_fail(err, ETIMEDOUT, "freezer.state stayed short of %s for 5 s", state);
}

int cg_v1_freeze(struct cg *cg, bool frozen, struct hutch_err *err)
{
	struct cg_hier *h = cg_find_hier(cg, "freezer");
	if (!h || h->fd < 0)
		return hutch_fail(err, ENOTSUP,
				  "freeze: the freezer cgroup controller is not mounted");
	int r = freezer_set(h->fd, frozen ? "FROZEN" : "THAWED", err);
	if (r < 0 && frozen) {
		struct hutch_err ignored = { 0 };
		(void)freezer_set(h->fd, "THAWED", &ignored); /* never leave it half frozen */
	}
	return r < 0 ? hutch_err_prefix(err, "%s %s: ", frozen ? "freeze" : "thaw", h->dir) : 0;
}

static int hier_fd(struct cg *cg, const char *controller)
{
	struct cg_hier *h = cg_find_hier(cg, controller);
	return h ? h->fd : -1;
}

int cg_v1_stats(struct cg *cg, struct cg_stats *st, struct hutch_err *err)
{
	(void)err;
	int fd = hier_fd(cg, "memory");
	if (fd >= 0) {
		(void)cg_read_u64_at(fd, "memory.usage_in_bytes", &st->mem_usage);
		(void)cg_read_u64_at(fd, "memory.max_usage_in_bytes", &st->mem_max_usage);
		(void)cg_read_u64_at(fd, "memory.limit_in_bytes", &st->mem_limit);
		(void)cg_read_key_at(fd, "memory.oom_control", "oom_kill", &st->oom_kills);
	}
	fd = hier_fd(cg, "pids");
	if (fd >= 0) {
		(void)cg_read_u64_at(fd, "pids.current", &st->pids_current);
		(void)cg_read_u64_at(fd, "pids.peak", &st->pids_peak);
		(void)cg_read_key_at(fd, "pids.events", "max", &st->pids_max_events);
		if (cg_read_u64_at(fd, "pids.max", &st->pids_limit) == 0 &&
		    st->pids_limit == UINT64_MAX)
			st->pids_limit = 0; /* "max": unlimited, as runc reports it */
	}
	fd = hier_fd(cg, "cpuacct");
	if (fd >= 0) {
		uint64_t user = 0, sys = 0;
		long hz = sysconf(_SC_CLK_TCK);
		(void)cg_read_u64_at(fd, "cpuacct.usage", &st->cpu_usage_ns);
		(void)cg_read_key_at(fd, "cpuacct.stat", "user", &user);
		(void)cg_read_key_at(fd, "cpuacct.stat", "system", &sys);
		if (hz > 0) {
			st->cpu_user_ns = user * (1000000000ULL / (uint64_t)hz);
			st->cpu_system_ns = sys * (1000000000ULL / (uint64_t)hz);
		}
	}
	cg_v1_stats_extra(cg, st);
	return 0;
}
