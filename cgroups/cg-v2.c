// SPDX-License-Identifier: Apache-2.0
/*
 * Applying to cgroup v2: one directory, controllers enabled top-down through
 * cgroup.subtree_control, freezing through cgroup.freeze/cgroup.events and killing through
 * cgroup.kill. Device rules are not files on v2: cg-devbpf.c attaches a BPF program instead.
 */
#include "cg-internal.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static const char *const wanted[] = { "cpuset", "cpu", "io", "memory", "pids", "hugetlb" };

static bool word_in(const char *list, const char *word)
{
	size_t n = strlen(word);
	for (const char *p = list; (p = strstr(p, word)); p += n)
		if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\n' || !p[n]))
			return true;
	return false;
}

/* Enables in dir's subtree_control the wanted controllers it offers but has not enabled.
 * Writes nothing when all are there already, so a parent we do not own is left alone in the
 * usual case. Failures (EBUSY from a parent holding processes, say) are not fatal here: a
 * limit that needs the controller then fails to apply, naming the file. */
static void enable_in(const char *dir)
{
	struct hutch_err ignored = { 0 };
	_cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	_cleanup_free_ char *avail = NULL, *on = NULL;
	if (fd < 0 || cg_read_at(fd, "cgroup.controllers", &avail, &ignored) < 0 ||
	    cg_read_at(fd, "cgroup.subtree_control", &on, &ignored) < 0)
		return;
	char buf[128] = "";
	for (size_t i = 0; i < ARRAY_SIZE(wanted); i++) {
		if (!word_in(avail, wanted[i]) || word_in(on, wanted[i]))
			continue;
		size_t l = strlen(buf);
		snprintf(buf + l, sizeof(buf) - l, "%s+%s", l ? " " : "", wanted[i]);
	}
	if (!buf[0] || hutch_write_str_at(fd, "cgroup.subtree_control", buf, &ignored) == 0)
		return;
	/* All at once failed: take what we can get, one by one. */
	char *save = NULL;
	for (char *tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
		(void)hutch_write_str_at(fd, "cgroup.subtree_control", tok, &ignored);
}

int cg_v2_create(struct cg *cg, struct hutch_err *err)
{
	(void)err;
	struct cg_hier *h = &cg->h[0];
	_cleanup_free_ char *buf = hutch_xstrdup(h->dir);
	/* Every ancestor of the leaf, from the mount down. */
	size_t ml = strlen(h->mount);
	for (char *p = buf + ml;; p++) {
		p = strchr(p, '/');
		if (!p)
			break;
		*p = '\0';
		enable_in(p == buf ? "/" : buf);
		*p = '/';
	}
	return 0;
}

/* Opens *file for writing; BFQ's io.bfq.weight falls back to io.weight (iocost), whose scale
 * differs: *file and value are then rewritten. */
static int open_file(int dirfd, const char **file, char *value, size_t size)
{
	int fd = openat(dirfd, *file, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd >= 0 || errno != ENOENT || strcmp(*file, "io.bfq.weight") != 0)
		return fd;
	unsigned long long maj, min;
	long long w;
	if (sscanf(value, "%llu:%llu %lld", &maj, &min, &w) != 3) {
		errno = EINVAL;
		return -1;
	}
	snprintf(value, size, "%llu:%llu %lld", maj, min, (long long)cg_blkio_to_io_weight(w));
	*file = "io.weight";
	return openat(dirfd, *file, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
}

static int apply_one(struct cg_hier *h, const struct cg_write *w, struct hutch_err *err)
{
	char value[sizeof(w->value)];
	const char *file = w->file;
	snprintf(value, sizeof(value), "%s", w->value);
	_cleanup_close_ int fd = open_file(h->fd, &file, value, sizeof(value));
	if (fd < 0 && errno == ENOENT)
		return hutch_fail(err, ENOTSUP,
				  "set %s: no such file in %s (is the %s controller enabled for "
				  "it?)",
				  file, h->dir, w->controller[0] ? w->controller : "");
	if (fd < 0)
		return hutch_fail_errno(err, errno, "set %s to %s", file, value);
	int r = hutch_write_all(fd, value, strlen(value));
	if (r < 0)
		return hutch_fail_errno(err, r, "set %s to %s", file, value);
	return 0;
}

int cg_v2_apply(struct cg *cg, const struct cg_write *w, size_t n, struct hutch_err *err)
{
	for (size_t i = 0; i < n; i++) {
		int r = apply_one(&cg->h[0], &w[i], err);
		const char *field = r < 0 ? cg_plan_field(w[i].file) : NULL;
		if (r < 0)
			return field ? hutch_err_prefix(err, "%s: ", field) : r;
	}
	return 0;
}

int cg_v2_freeze(struct cg *cg, bool frozen, struct hutch_err *err)
{
	struct cg_hier *h = &cg->h[0];
	int r = hutch_write_str_at(h->fd, "cgroup.freeze", frozen ? "1" : "0", err);
	if (r == -ENOENT)
		return hutch_fail(err, ENOTSUP,
				  "freeze: cgroup.freeze not supported by this kernel");
	if (r < 0)
		return r;
	long step = 1000;
	for (long waited = 0; waited < 5000000; waited += step) {
		uint64_t state = 2;
		if (cg_read_key_at(h->fd, "cgroup.events", "frozen", &state) == 0 &&
		    state == (frozen ? 1 : 0))
			return 0;
		struct timespec ts = { 0, step * 1000 };
		nanosleep(&ts, NULL);
		if (step < 10000)
			step *= 2;
	}
	if (frozen)
		(void)hutch_write_str_at(h->fd, "cgroup.freeze", "0", err);
	return hutch_fail(err, ETIMEDOUT, "%s %s: cgroup.events did not report it in 5 s",
			  frozen ? "freeze" : "thaw", h->dir);
}

/* 1 when cgroup.kill did it (5.14+), 0 when the caller must signal each process. */
int cg_v2_kill(struct cg *cg, struct hutch_err *err)
{
	int r = hutch_write_str_at(cg->h[0].fd, "cgroup.kill", "1", err);
	if (r == -ENOENT)
		return 0;
	return r < 0 ? r : 1;
}

int cg_v2_stats(struct cg *cg, struct cg_stats *st, struct hutch_err *err)
{
	(void)err;
	int fd = cg->h[0].fd;
	uint64_t usec = 0;
	(void)cg_read_u64_at(fd, "memory.current", &st->mem_usage);
	(void)cg_read_u64_at(fd, "memory.peak", &st->mem_max_usage);
	(void)cg_read_u64_at(fd, "memory.max", &st->mem_limit);
	(void)cg_read_key_at(fd, "memory.events", "oom_kill", &st->oom_kills);
	(void)cg_read_u64_at(fd, "pids.current", &st->pids_current);
	(void)cg_read_u64_at(fd, "pids.peak", &st->pids_peak);
	(void)cg_read_key_at(fd, "pids.events", "max", &st->pids_max_events);
	st->pids_events_tree = faccessat(fd, "pids.events.local", F_OK, 0) == 0;
	if (cg_read_u64_at(fd, "pids.max", &st->pids_limit) == 0 && st->pids_limit == UINT64_MAX)
		st->pids_limit = 0; /* "max": unlimited, as runc reports it */
	if (cg_read_key_at(fd, "cpu.stat", "usage_usec", &usec) == 0)
		st->cpu_usage_ns = usec * 1000;
	if (cg_read_key_at(fd, "cpu.stat", "user_usec", &usec) == 0)
		st->cpu_user_ns = usec * 1000;
	if (cg_read_key_at(fd, "cpu.stat", "system_usec", &usec) == 0)
		st->cpu_system_ns = usec * 1000;
	cg_v2_stats_extra(cg, st);
	return 0;
}

int cg_v2_complete_update(struct cg *cg, struct cg_resources *res, struct hutch_err *err)
{
	int fd = cg->h[0].fd;
	bool quota = res->cpu_quota.set && res->cpu_quota.v != 0;
	if (quota && !(res->cpu_period.set && res->cpu_period.v != 0)) {
		_cleanup_free_ char *s = NULL;
		struct hutch_err ignored = { 0 };
		unsigned long long period = 0;
		/* Unreadable: cg_plan's default period (100000) it is. */
		if (cg_read_at(fd, "cpu.max", &s, &ignored) == 0 &&
		    sscanf(s, "%*s %llu", &period) == 1 && period > 0)
			res->cpu_period = (struct cg_i64){ true, (int64_t)period };
	}
	bool swap = res->mem_swap.set && res->mem_swap.v > 0;
	if (swap && !(res->mem_limit.set && res->mem_limit.v != 0)) {
		uint64_t limit = 0;
		if (cg_read_u64_at(fd, "memory.max", &limit) < 0 || limit == UINT64_MAX)
			return hutch_fail(err, EINVAL,
					  "memory.swap: cgroup v2 limits swap apart from memory, "
					  "which has no limit here: give the memory limit too");
		res->mem_limit = (struct cg_i64){ true, (int64_t)limit };
	}
	return 0;
}
