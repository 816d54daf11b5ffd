// SPDX-License-Identifier: Apache-2.0
/*
 * `events`: a container's cgroup statistics as runc's JSON events, once (--stats) or every
 * --interval, plus an {"type":"oom"} event each time the kernel OOM-kills one of its
 * processes, until the container stops. One JSON object per line, as containerd reads them.
 */
#include "rt.h"
#include "rt-json.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* Go's omitempty: runc leaves out zero numbers of the fields it tags so. */
static void gen_u64_omit(yajl_gen g, const char *key, uint64_t v)
{
	if (v)
		hutch_json_gen_u64(g, key, v);
}

static void gen_mem_entry(yajl_gen g, const char *key, const struct cg_mem_entry *e)
{
	hutch_json_gen_str(g, key);
	yajl_gen_map_open(g);
	hutch_json_gen_u64(g, "limit", e->limit);
	gen_u64_omit(g, "usage", e->usage);
	gen_u64_omit(g, "max", e->max_usage);
	hutch_json_gen_u64(g, "failcnt", e->failcnt);
	yajl_gen_map_close(g);
}

static void gen_cpu(yajl_gen g, const struct cg_stats *st)
{
	hutch_json_gen_str(g, "cpu");
	yajl_gen_map_open(g);
	hutch_json_gen_str(g, "usage");
	yajl_gen_map_open(g);
	gen_u64_omit(g, "total", st->cpu_usage_ns);
	if (st->n_percpu) {
		hutch_json_gen_str(g, "percpu");
		yajl_gen_array_open(g);
		for (size_t i = 0; i < st->n_percpu; i++)
			hutch_json_gen_u64(g, NULL, st->cpu_percpu_ns[i]);
		yajl_gen_array_close(g);
	}
	hutch_json_gen_u64(g, "kernel", st->cpu_system_ns);
	hutch_json_gen_u64(g, "user", st->cpu_user_ns);
	yajl_gen_map_close(g);
	hutch_json_gen_str(g, "throttling");
	yajl_gen_map_open(g);
	gen_u64_omit(g, "periods", st->cpu_periods);
	gen_u64_omit(g, "throttledPeriods", st->cpu_throttled_periods);
	gen_u64_omit(g, "throttledTime", st->cpu_throttled_ns);
	yajl_gen_map_close(g);
	yajl_gen_map_close(g);
}

static void gen_memory(yajl_gen g, const struct cg_stats *st)
{
	struct cg_mem_entry usage = { st->mem_usage, st->mem_max_usage, st->mem_limit,
				      st->mem_failcnt };
	hutch_json_gen_str(g, "memory");
	yajl_gen_map_open(g);
	gen_u64_omit(g, "cache", st->mem_cache);
	gen_mem_entry(g, "usage", &usage);
	gen_mem_entry(g, "swap", &st->swap);
	gen_mem_entry(g, "kernel", &st->kmem);
	gen_mem_entry(g, "kernelTCP", &st->kmem_tcp);
	if (st->n_mem_raw) {
		hutch_json_gen_str(g, "raw");
		yajl_gen_map_open(g);
		for (size_t i = 0; i < st->n_mem_raw; i++)
			hutch_json_gen_u64(g, st->mem_raw[i].key, st->mem_raw[i].v);
		yajl_gen_map_close(g);
	}
	yajl_gen_map_close(g);
}

static void gen_io_list(yajl_gen g, const char *key, const struct cg_io_entry *v, size_t n)
{
	if (!n)
		return;
	hutch_json_gen_str(g, key);
	yajl_gen_array_open(g);
	for (size_t i = 0; i < n; i++) {
		yajl_gen_map_open(g);
		gen_u64_omit(g, "major", v[i].major);
		gen_u64_omit(g, "minor", v[i].minor);
		if (v[i].op[0])
			hutch_json_gen_kv(g, "op", v[i].op);
		gen_u64_omit(g, "value", v[i].value);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
}

/* runc's types.Stats; the parts hutch has nothing for (hugetlb, Intel RDT) are empty. */
static void gen_stats(yajl_gen g, const struct cg_stats *st)
{
	yajl_gen_map_open(g);
	gen_cpu(g, st);
	gen_memory(g, st);
	hutch_json_gen_str(g, "pids");
	yajl_gen_map_open(g);
	gen_u64_omit(g, "current", st->pids_current);
	gen_u64_omit(g, "limit", st->pids_limit);
	yajl_gen_map_close(g);
	hutch_json_gen_str(g, "blkio");
	yajl_gen_map_open(g);
	gen_io_list(g, "ioServiceBytesRecursive", st->io_bytes, st->n_io_bytes);
	gen_io_list(g, "ioServicedRecursive", st->io_ops, st->n_io_ops);
	yajl_gen_map_close(g);
	hutch_json_gen_str(g, "hugetlb");
	yajl_gen_map_open(g);
	yajl_gen_map_close(g);
	hutch_json_gen_str(g, "intel_rdt");
	yajl_gen_map_open(g);
	yajl_gen_map_close(g);
	hutch_json_gen_str(g, "network_interfaces");
	yajl_gen_null(g);
	yajl_gen_map_close(g);
}

/* One event line; stats NULL for an event without data (oom). Flushed: a reader waits. */
static void print_event(const char *type, const char *id, const struct cg_stats *st)
{
	_cleanup_gen_ yajl_gen g = yajl_gen_alloc(NULL);
	size_t len;
	yajl_gen_map_open(g);
	hutch_json_gen_kv(g, "type", type);
	hutch_json_gen_kv(g, "id", id);
	if (st) {
		hutch_json_gen_str(g, "data");
		gen_stats(g, st);
	}
	yajl_gen_map_close(g);
	_cleanup_free_ char *json = hutch_json_gen_finish(g, &len);
	printf("%s\n", json);
	fflush(stdout);
}

/* Go's time.Duration syntax, which runc's --interval takes: "5s", "100ms", "1m30s", "1.5h". */
static int parse_duration(const char *s, uint64_t *ns)
{
	static const struct {
		const char *unit;
		double ns;
	} units[] = { { "ns", 1 },  { "us", 1e3 }, { "\u00b5s", 1e3 }, { "ms", 1e6 },
		      { "s", 1e9 }, { "m", 60e9 }, { "h", 3600e9 } };
	double total = 0;
	if (!*s)
		return -EINVAL;
	while (*s) {
		char *end;
		if (!(*s >= '0' && *s <= '9') && *s != '.')
			return -EINVAL;
		double v = strtod(s, &end);
		size_t best = 0, best_len = 0;
		for (size_t i = 0; i < ARRAY_SIZE(units); i++) {
			size_t l = strlen(units[i].unit);
			if (strncmp(end, units[i].unit, l) == 0 && l > best_len)
				best = i, best_len = l;
		}
		if (!best_len)
			return -EINVAL;
		total += v * units[best].ns;
		s = end + best_len;
	}
	if (!isfinite(total) || total >= 9.2e18)
		return -EINVAL;
	*ns = (uint64_t)total;
	return 0;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000ULL), (long)(ns % 1000000000ULL) };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* The OOM kill counter is checked every 100 ms rather than waited on (an eventfd on v1, inotify
 * on v2's memory.events): simpler, the same on both, and an event is at most 100 ms late. It
 * is checked once more after the container stopped, since an OOM kill is often why. */
static int stream(struct cg *cg, const char *id, const struct rt_state *st, uint64_t interval)
{
	const uint64_t tick = 100000000ULL;
	struct cg_stats s;
	struct hutch_err e = { 0 };
	uint64_t ooms = cg_get_stats(cg, &s, &e) == 0 ? s.oom_kills : 0;
	uint64_t next = now_ns() + interval;
	for (;;) {
		bool alive = rt_pid_alive(st->pid, st->start_time);
		if (cg_get_stats(cg, &s, &e) == 0) {
			for (; s.oom_kills > ooms; ooms++)
				print_event("oom", id, NULL);
			if (alive && now_ns() >= next) {
				print_event("stats", id, &s);
				next += interval;
			}
		} else if (alive) {
			hutch_warn("events %s: %s", id, e.msg);
		}
		if (!alive)
			return 0;
		uint64_t left = next > now_ns() ? next - now_ns() : 0;
		sleep_ns(left < tick ? left : tick);
	}
}

struct events_flags {
	bool stats;
	const char *interval;
};

static RT_VERB_RUN(verb_events)
{
	const struct events_flags *f = flags;
	const char *id, *iv = f->interval;
	uint64_t interval = 5000000000ULL;
	_cleanup_(rt_ctr_close) struct rt_ctr c = { .dirfd = -1 };
	TRY(rt_one_id(argc, argv, first, &id, err));
	if (iv && parse_duration(iv, &interval) < 0)
		return hutch_fail(err, EINVAL, "events: --interval: invalid duration %s", iv);
	if (interval == 0)
		return hutch_fail(err, EINVAL, "duration interval must be greater than 0");
	TRY(rt_ctr_open(g, id, &c, err));
	if (c.status == RT_STOPPED)
		return hutch_fail(err, ESRCH, "container with id %s is not running", id);
	if (!c.cg)
		return hutch_fail(err, ENOENT, "events %s: its cgroup does not exist", id);
	/* Streaming runs for the container's lifetime: let kill and delete have the lock. */
	close(c.dirfd);
	c.dirfd = -1;
	if (f->stats) {
		struct cg_stats s;
		TRY(cg_get_stats(c.cg, &s, err));
		print_event("stats", id, &s);
		return 0;
	}
	return stream(c.cg, id, &c.st, interval);
}

static const struct rt_flag events_flags[] = {
	{ "stats", 0, RT_FLAG_BOOL, "print the container's statistics once, then exit",
	  offsetof(struct events_flags, stats), NULL },
	{ "interval", 0, RT_FLAG_STR, "how often to print statistics (default 5s)",
	  offsetof(struct events_flags, interval), NULL },
};

const struct rt_verb rt_events_verb = {
	.name = "events",
	.summary = "print a container's statistics and OOM events as JSON",
	.usage = "[--stats] [--interval DURATION] ID",
	.flags = RT_FLAGS(events_flags, RT_PARSE_ANYWHERE),
	.flags_size = sizeof(struct events_flags),
	.run = verb_events,
};
