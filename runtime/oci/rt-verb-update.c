// SPDX-License-Identifier: Apache-2.0
/*
 * `update`: changes a live container's cgroup limits, from an OCI linux.resources document
 * (--resources FILE, or "-" for stdin as containerd's shim sends it) and from runc's flags,
 * which win over the document. As in runc, an absent or 0 value leaves a limit as it is.
 */
#include "rt.h"
#include "rt-spec-internal.h"
#include "cg-systemd.h"

#include <ctype.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* Every flag is a string, parsed here: runc's numbers have units, and "-1" or "0" mean
 * something of their own. */
struct update_flags {
	const char *resources, *memory, *memory_reservation, *memory_swap, *kernel_memory,
		*kernel_memory_tcp, *cpu_share, *cpu_shares, *cpu_period, *cpu_quota, *cpu_burst,
		*cpu_rt_period, *cpu_rt_runtime, *cpu_idle, *cpuset_cpus, *cpuset_mems, *pids_limit,
		*blkio_weight, *l3_cache_schema, *mem_bw_schema;
};

#define FLAG(field) offsetof(struct update_flags, field)
static const struct rt_flag update_flags[] = {
	{ "resources", 'r', RT_FLAG_STR, "linux.resources JSON from FILE, or - for stdin",
	  FLAG(resources), NULL },
	{ "memory", 0, RT_FLAG_STR, "memory limit in bytes (k, m, g suffixes; -1 = unlimited)",
	  FLAG(memory), NULL },
	{ "memory-reservation", 0, RT_FLAG_STR, "memory soft limit in bytes",
	  FLAG(memory_reservation), NULL },
	{ "memory-swap", 0, RT_FLAG_STR, "memory+swap limit in bytes (-1 = unlimited)",
	  FLAG(memory_swap), NULL },
	{ "kernel-memory", 0, RT_FLAG_STR, "obsolete, ignored", FLAG(kernel_memory), NULL },
	{ "kernel-memory-tcp", 0, RT_FLAG_STR, "obsolete, ignored", FLAG(kernel_memory_tcp), NULL },
	{ "cpu-share", 0, RT_FLAG_STR, "CPU shares (relative weight)", FLAG(cpu_share), NULL },
	{ "cpu-shares", 0, RT_FLAG_STR, "the same as --cpu-share", FLAG(cpu_shares), NULL },
	{ "cpu-period", 0, RT_FLAG_STR, "CFS period in microseconds", FLAG(cpu_period), NULL },
	{ "cpu-quota", 0, RT_FLAG_STR, "CFS quota in microseconds per period (-1 = none)",
	  FLAG(cpu_quota), NULL },
	{ "cpu-burst", 0, RT_FLAG_STR, "CFS burst in microseconds", FLAG(cpu_burst), NULL },
	{ "cpu-rt-period", 0, RT_FLAG_STR, "realtime period in microseconds (cgroup v1)",
	  FLAG(cpu_rt_period), NULL },
	{ "cpu-rt-runtime", 0, RT_FLAG_STR, "realtime runtime in microseconds (cgroup v1)",
	  FLAG(cpu_rt_runtime), NULL },
	{ "cpu-idle", 0, RT_FLAG_STR, "1 = SCHED_IDLE for the cgroup, 0 = normal", FLAG(cpu_idle),
	  NULL },
	{ "cpuset-cpus", 0, RT_FLAG_STR, "CPUs the container may use (\"0-2,4\")",
	  FLAG(cpuset_cpus), NULL },
	{ "cpuset-mems", 0, RT_FLAG_STR, "memory nodes the container may use", FLAG(cpuset_mems),
	  NULL },
	{ "pids-limit", 0, RT_FLAG_STR, "maximum number of pids (-1 = unlimited)", FLAG(pids_limit),
	  NULL },
	{ "blkio-weight", 0, RT_FLAG_STR, "block I/O weight, 10 to 1000", FLAG(blkio_weight),
	  NULL },
	{ "l3-cache-schema", 0, RT_FLAG_STR, "Intel RDT L3 cache schema (not supported)",
	  FLAG(l3_cache_schema), NULL },
	{ "mem-bw-schema", 0, RT_FLAG_STR, "Intel RDT memory bandwidth schema (not supported)",
	  FLAG(mem_bw_schema), NULL },
};

enum flag_kind { SIZE, UINT, INT };

/* A numeric flag and the limit it sets. */
struct num_flag {
	const char *name;
	enum flag_kind kind;
	size_t flag; /* of its value in struct update_flags */
	size_t off;  /* of a struct cg_i64 in struct cg_resources */
};

#define RES(f) offsetof(struct cg_resources, f)

static const struct num_flag num_flags[] = {
	{ "memory", SIZE, FLAG(memory), RES(mem_limit) },
	{ "memory-reservation", SIZE, FLAG(memory_reservation), RES(mem_reservation) },
	{ "memory-swap", SIZE, FLAG(memory_swap), RES(mem_swap) },
	{ "cpu-share", UINT, FLAG(cpu_share), RES(cpu_shares) },
	{ "cpu-shares", UINT, FLAG(cpu_shares), RES(cpu_shares) },
	{ "cpu-period", UINT, FLAG(cpu_period), RES(cpu_period) },
	{ "cpu-quota", INT, FLAG(cpu_quota), RES(cpu_quota) },
	{ "cpu-burst", UINT, FLAG(cpu_burst), RES(cpu_burst) },
	{ "cpu-rt-period", UINT, FLAG(cpu_rt_period), RES(cpu_rt_period) },
	{ "cpu-rt-runtime", INT, FLAG(cpu_rt_runtime), RES(cpu_rt_runtime) },
	{ "cpu-idle", INT, FLAG(cpu_idle), RES(cpu_idle) },
	{ "pids-limit", INT, FLAG(pids_limit), RES(pids_limit) },
	{ "blkio-weight", UINT, FLAG(blkio_weight), RES(blkio_weight) },
};

/* Docker's RAMInBytes: "1024", "64m", "1.5g", "512 KiB"; binary multiples; "-1" = unlimited. */
static int parse_size(const char *s, int64_t *out)
{
	static const char units[] = "kmgtp";
	if (strcmp(s, "-1") == 0) {
		*out = -1;
		return 0;
	}
	size_t num = strspn(s, "0123456789.");
	if (num == 0 || !isdigit((unsigned char)s[0]))
		return -EINVAL;
	_cleanup_free_ char *digits = strndup(s, num);
	char *end;
	double v = digits ? strtod(digits, &end) : 0;
	if (!digits || *end)
		return -EINVAL;
	const char *u = s + num;
	if (*u == ' ')
		u++;
	const char *at = *u ? strchr(units, tolower((unsigned char)*u)) : NULL;
	if (at) {
		for (const char *k = units; k <= at; k++)
			v *= 1024;
		u++;
	}
	if (*u == 'i' || *u == 'I')
		u++;
	if (*u == 'b' || *u == 'B')
		u++;
	if (*u || v >= 9.2e18)
		return -EINVAL;
	*out = (int64_t)v;
	return 0;
}

static int parse_flag(const struct num_flag *f, const char *val, struct cg_resources *res,
		      struct hutch_err *err)
{
	struct cg_i64 *dst = (struct cg_i64 *)((char *)res + f->off);
	int64_t v = 0;
	int r;
	if (f->kind == SIZE)
		r = parse_size(val, &v);
	else
		r = hutch_parse_i64(val, &v);
	if (r < 0 || (f->kind == UINT && v < 0))
		return hutch_fail(err, EINVAL, "update: invalid value for --%s: %s", f->name, val);
	*dst = (struct cg_i64){ true, v };
	return 0;
}

static int read_fd(int fd, char **out, struct hutch_err *err)
{
	size_t cap = 4096, used = 0;
	_cleanup_free_ char *buf = hutch_xmalloc(cap + 1);
	for (;;) {
		if (used == cap) {
			if (cap >= (1 << 20))
				return hutch_fail(err, EFBIG, "--resources: larger than 1 MiB");
			cap *= 2;
			buf = hutch_xrealloc(buf, cap + 1);
		}
		ssize_t n = read(fd, buf + used, cap - used);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return hutch_fail_errno(err, errno, "--resources: read");
		if (n == 0)
			break;
		used += (size_t)n;
	}
	buf[used] = '\0';
	*out = steal_ptr(buf);
	return 0;
}

/* --resources FILE|-: an OCI linux.resources object into spec->resources. */
static int load_resources(const char *path, struct rt_spec *spec, struct hutch_err *err)
{
	_cleanup_free_ char *text = NULL;
	_cleanup_json_ yajl_val doc = NULL;
	_cleanup_close_ int fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : -1;
	if (strcmp(path, "-") && fd < 0)
		return hutch_fail_errno(err, errno, "--resources %s", path);
	int r = read_fd(fd >= 0 ? fd : 0, &text, err);
	if (r == 0)
		r = hutch_json_parse(text, "--resources", &doc, err);
	if (r < 0)
		return r;
	if (!YAJL_IS_OBJECT(doc))
		return hutch_fail(err, EINVAL, "--resources: expected a JSON object");
	return rt_spec_parse_resources(doc, spec, err);
}

/* The flags runc still accepts but that hutch (like the kernel or runc) cannot act on. */
static int check_ignored(const struct update_flags *f, struct hutch_err *err)
{
	if (f->kernel_memory)
		hutch_warn("--kernel-memory is obsolete (the kernel ignores it), ignoring");
	if (f->kernel_memory_tcp)
		hutch_warn("--kernel-memory-tcp is obsolete (the kernel ignores it), ignoring");
	if (f->l3_cache_schema)
		return hutch_fail(err, ENOTSUP, "--l3-cache-schema: Intel RDT is not supported");
	if (f->mem_bw_schema)
		return hutch_fail(err, ENOTSUP, "--mem-bw-schema: Intel RDT is not supported");
	return 0;
}

/* The request: the document, then the flags over it, then runc's "0 = unchanged". */
static int build_request(const struct update_flags *f, struct rt_spec *spec, struct hutch_err *err)
{
	struct cg_resources *res = &spec->resources;
	int r = check_ignored(f, err);
	if (r == 0 && f->resources)
		r = load_resources(f->resources, spec, err);
	for (size_t i = 0; r == 0 && i < ARRAY_SIZE(num_flags); i++) {
		const char *v = *(const char *const *)((const char *)f + num_flags[i].flag);
		if (v)
			r = parse_flag(&num_flags[i], v, res, err);
	}
	if (r < 0)
		return r;
	/* Owned by res either way: rt_spec_free_resources frees them. */
	if (f->cpuset_cpus) {
		free((char *)res->cpus);
		res->cpus = hutch_xstrdup(f->cpuset_cpus);
	}
	if (f->cpuset_mems) {
		free((char *)res->mems);
		res->mems = hutch_xstrdup(f->cpuset_mems);
	}
	if (res->pids_limit.set && res->pids_limit.v == 0)
		res->pids_limit.set = false;
	/* runc: unlimited memory without a word on swap means unlimited swap too. */
	if (res->mem_limit.set && res->mem_limit.v == -1 && !res->mem_swap.set)
		res->mem_swap = (struct cg_i64){ true, -1 };
	if (res->n_devices) {
		hutch_warn("update cannot change linux.resources.devices (as runc), ignoring them");
		res->n_devices = 0;
	}
	return 0;
}

static RT_VERB_RUN(verb_update)
{
	const char *id;
	struct rt_spec spec;
	_cleanup_(rt_ctr_close) struct rt_ctr c = { .dirfd = -1 };
	TRY(rt_one_id(argc, argv, first, &id, err));
	memset(&spec, 0, sizeof(spec));
	int r = build_request(flags, &spec, err);
	if (r == 0)
		r = rt_ctr_open(g, id, &c, err);
	if (r == 0 && c.status == RT_STOPPED)
		r = hutch_fail(err, EINVAL, "container not running");
	if (r == 0 && !c.cg)
		r = hutch_fail(err, ENOENT, "update %s: its cgroup does not exist", id);
	if (r == 0)
		r = cg_complete_update(c.cg, &spec.resources, err);
	/* systemd's view first, so that it never re-applies an older value over the files. */
	if (r == 0 && c.st.systemd_unit)
		r = cg_sd_set(c.st.systemd_unit, &spec.resources, err);
	if (r == 0)
		r = cg_apply(c.cg, &spec.resources, err);
	rt_spec_free_resources(&spec);
	return r < 0 ? r : 0;
}

const struct rt_verb rt_update_verb = {
	.name = "update",
	.summary = "change a running container's resource limits",
	.usage = "[OPTIONS] ID",
	.flags = RT_FLAGS(update_flags, RT_PARSE_ANYWHERE),
	.flags_size = sizeof(struct update_flags),
	.run = verb_update,
};
