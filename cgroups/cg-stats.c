// SPDX-License-Identifier: Apache-2.0
/*
 * The statistics `events` reports beyond the basics cg-v1.c/cg-v2.c read: memory failcnt,
 * swap and kernel memory, memory.stat, per-cpu usage, CPU throttling and block I/O. The text
 * parsers are pure (unit-tested on literal strings); the readers tolerate missing files,
 * since which ones exist depends on the kernel and on the controllers mounted.
 */
#include "cg-internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Calls fn for each line of text, without its newline. */
static void each_line(const char *text, void (*fn)(const char *line, size_t len, void *),
		      void *data)
{
	for (const char *l = text; *l;) {
		size_t n = strcspn(l, "\n");
		fn(l, n, data);
		l += n + (l[n] == '\n');
	}
}

struct kv_out {
	struct cg_stat_kv *v;
	size_t n, max;
};

static void kv_line(const char *l, size_t len, void *data)
{
	struct kv_out *o = data;
	char key[sizeof(o->v->key)];
	uint64_t v;
	_cleanup_free_ char *line = strndup(l, len);
	if (!line || o->n == o->max)
		return;
	if (sscanf(line, "%47s %" SCNu64, key, &v) != 2)
		return;
	snprintf(o->v[o->n].key, sizeof(o->v[o->n].key), "%s", key);
	o->v[o->n++].v = v;
}

size_t cg_parse_kv_lines(const char *text, struct cg_stat_kv *out, size_t max)
{
	struct kv_out o = { out, 0, max };
	each_line(text, kv_line, &o);
	return o.n;
}

size_t cg_parse_u64_list(const char *text, uint64_t *out, size_t max)
{
	size_t n = 0;
	const char *p = text;
	while (n < max) {
		char *end;
		p += strspn(p, " \t\n");
		if (*p < '0' || *p > '9')
			break;
		errno = 0;
		unsigned long long v = strtoull(p, &end, 10);
		if (errno || end == p)
			break;
		out[n++] = v;
		p = end;
	}
	return n;
}

struct io_out {
	struct cg_io_entry *v;
	size_t n, max;
};

/* "8:0 Read 4096"; the "Total N" line is not per device and is left out (as runc). */
static void blkio_line(const char *l, size_t len, void *data)
{
	struct io_out *o = data;
	struct cg_io_entry e = { 0 };
	_cleanup_free_ char *line = strndup(l, len);
	if (!line || o->n == o->max)
		return;
	if (sscanf(line, "%" SCNu64 ":%" SCNu64 " %11s %" SCNu64, &e.major, &e.minor, e.op,
		   &e.value) != 4)
		return;
	o->v[o->n++] = e;
}

size_t cg_parse_blkio_v1(const char *text, struct cg_io_entry *out, size_t max)
{
	struct io_out o = { out, 0, max };
	each_line(text, blkio_line, &o);
	return o.n;
}

static void add_io(struct cg_io_entry *v, size_t *n, uint64_t maj, uint64_t min, const char *op,
		   uint64_t value)
{
	if (*n == CG_STATS_MAX_IO)
		return;
	v[*n] = (struct cg_io_entry){ .major = maj, .minor = min, .value = value };
	snprintf(v[*n].op, sizeof(v[*n].op), "%s", op);
	(*n)++;
}

/* v2 io.stat: "8:0 rbytes=1 wbytes=2 rios=3 wios=4 dbytes=0 dios=0", mapped the way runc maps
 * it onto v1's ioServiceBytesRecursive (bytes) and ioServicedRecursive (operations). */
static void io_stat_line(const char *l, size_t len, void *data)
{
	static const struct {
		const char *key;
		bool bytes;
		const char *op;
	} keys[] = {
		{ "rbytes", true, "Read" },
		{ "wbytes", true, "Write" },
		{ "rios", false, "Read" },
		{ "wios", false, "Write" },
	};
	struct cg_stats *st = data;
	uint64_t maj, min;
	int off = 0;
	_cleanup_free_ char *line = strndup(l, len);
	if (!line || sscanf(line, "%" SCNu64 ":%" SCNu64 "%n", &maj, &min, &off) != 2)
		return;
	char *save = NULL;
	for (char *tok = strtok_r(line + off, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(tok, '=');
		uint64_t v;
		if (!eq || hutch_parse_u64(eq + 1, &v) < 0)
			continue;
		*eq = '\0';
		for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
			if (strcmp(tok, keys[i].key) != 0)
				continue;
			if (keys[i].bytes)
				add_io(st->io_bytes, &st->n_io_bytes, maj, min, keys[i].op, v);
			else
				add_io(st->io_ops, &st->n_io_ops, maj, min, keys[i].op, v);
		}
	}
}

void cg_parse_io_stat(const char *text, struct cg_stats *st)
{
	each_line(text, io_stat_line, st);
}

/* Reads file of dirfd and hands it to a parser; a missing file leaves the stats alone. */
static char *read_opt(int dirfd, const char *file)
{
	struct hutch_err ignored = { 0 };
	char *s = NULL;
	if (dirfd < 0 || cg_read_at(dirfd, file, &s, &ignored) < 0)
		return NULL;
	return s;
}

static void read_raw(int fd, struct cg_stats *st, const char *cache_key)
{
	_cleanup_free_ char *s = read_opt(fd, "memory.stat");
	if (!s)
		return;
	st->n_mem_raw = cg_parse_kv_lines(s, st->mem_raw, CG_STATS_MAX_RAW);
	for (size_t i = 0; i < st->n_mem_raw; i++)
		if (strcmp(st->mem_raw[i].key, cache_key) == 0)
			st->mem_cache = st->mem_raw[i].v;
}

static void read_mem_entry(int fd, const char *prefix, struct cg_mem_entry *e)
{
	char f[64];
	snprintf(f, sizeof(f), "%s.usage_in_bytes", prefix);
	(void)cg_read_u64_at(fd, f, &e->usage);
	snprintf(f, sizeof(f), "%s.max_usage_in_bytes", prefix);
	(void)cg_read_u64_at(fd, f, &e->max_usage);
	snprintf(f, sizeof(f), "%s.limit_in_bytes", prefix);
	(void)cg_read_u64_at(fd, f, &e->limit);
	snprintf(f, sizeof(f), "%s.failcnt", prefix);
	(void)cg_read_u64_at(fd, f, &e->failcnt);
}

static int hier_fd(struct cg *cg, const char *controller)
{
	struct cg_hier *h = cg_find_hier(cg, controller);
	return h ? h->fd : -1;
}

static void read_io_v1(int fd, const char *file, struct cg_io_entry *v, size_t *n)
{
	_cleanup_free_ char *s = read_opt(fd, file);
	if (s)
		*n = cg_parse_blkio_v1(s, v, CG_STATS_MAX_IO);
}

void cg_v1_stats_extra(struct cg *cg, struct cg_stats *st)
{
	int fd = hier_fd(cg, "memory");
	if (fd >= 0) {
		(void)cg_read_u64_at(fd, "memory.failcnt", &st->mem_failcnt);
		read_mem_entry(fd, "memory.memsw", &st->swap);
		read_mem_entry(fd, "memory.kmem", &st->kmem);
		read_mem_entry(fd, "memory.kmem.tcp", &st->kmem_tcp);
		read_raw(fd, st, "cache");
	}
	fd = hier_fd(cg, "cpu");
	if (fd >= 0) {
		(void)cg_read_key_at(fd, "cpu.stat", "nr_periods", &st->cpu_periods);
		(void)cg_read_key_at(fd, "cpu.stat", "nr_throttled", &st->cpu_throttled_periods);
		(void)cg_read_key_at(fd, "cpu.stat", "throttled_time", &st->cpu_throttled_ns);
	}
	_cleanup_free_ char *percpu = read_opt(hier_fd(cg, "cpuacct"), "cpuacct.usage_percpu");
	if (percpu)
		st->n_percpu = cg_parse_u64_list(percpu, st->cpu_percpu_ns, CG_STATS_MAX_CPUS);
	/* The throttle files count I/O whatever the scheduler; the CFQ/BFQ ones may not exist. */
	fd = hier_fd(cg, "blkio");
	read_io_v1(fd, "blkio.throttle.io_service_bytes_recursive", st->io_bytes, &st->n_io_bytes);
	read_io_v1(fd, "blkio.throttle.io_serviced_recursive", st->io_ops, &st->n_io_ops);
}

void cg_v2_stats_extra(struct cg *cg, struct cg_stats *st)
{
	int fd = cg->h[0].fd;
	uint64_t usec = 0, swap = 0, swap_max = 0, swap_peak = 0;
	(void)cg_read_key_at(fd, "memory.events", "max", &st->mem_failcnt);
	read_raw(fd, st, "file");
	/* runc reports v2 swap as memory+swap, v1's memsw, so that clients need one formula. */
	if (cg_read_u64_at(fd, "memory.swap.current", &swap) == 0) {
		st->swap.usage = swap + st->mem_usage;
		(void)cg_read_u64_at(fd, "memory.swap.max", &swap_max);
		st->swap.limit = swap_max == UINT64_MAX || st->mem_limit == UINT64_MAX
					 ? UINT64_MAX
					 : swap_max + st->mem_limit;
		if (cg_read_u64_at(fd, "memory.swap.peak", &swap_peak) == 0)
			st->swap.max_usage = swap_peak + st->mem_max_usage;
		(void)cg_read_key_at(fd, "memory.swap.events", "max", &st->swap.failcnt);
	}
	(void)cg_read_key_at(fd, "cpu.stat", "nr_periods", &st->cpu_periods);
	(void)cg_read_key_at(fd, "cpu.stat", "nr_throttled", &st->cpu_throttled_periods);
	if (cg_read_key_at(fd, "cpu.stat", "throttled_usec", &usec) == 0)
		st->cpu_throttled_ns = usec * 1000;
	_cleanup_free_ char *io = read_opt(fd, "io.stat");
	if (io)
		cg_parse_io_stat(io, st);
}

bool cg_is_frozen(struct cg *cg)
{
	if (cg->v2) {
		uint64_t v = 0;
		return cg->n && cg->h[0].fd >= 0 &&
		       cg_read_key_at(cg->h[0].fd, "cgroup.events", "frozen", &v) == 0 && v == 1;
	}
	_cleanup_free_ char *s = read_opt(hier_fd(cg, "freezer"), "freezer.state");
	/* FREEZING: on its way, or a frozen parent's child that still holds a running task. */
	return s && (strncmp(s, "FROZEN", 6) == 0 || strncmp(s, "FREEZING", 8) == 0);
}
