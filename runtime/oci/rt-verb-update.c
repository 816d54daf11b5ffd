// SPDX-License-Identifier: Apache-2.0
/*
 * `update`: changes a live container's cgroup limits, from an OCI linux.resources document
 * (--resources FILE, or "-" for stdin as containerd's shim sends it) and from runc's flags,
 * which win over the document. As in runc, an absent or 0 value leaves a limit as it is.
 */
#include "rt.h"
#include "rt-spec-internal.h"

#include <ctype.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

enum flag_kind { SIZE, UINT, INT };

struct num_flag {
	const char *name;
	enum flag_kind kind;
	size_t off; /* of a struct cg_i64 in struct cg_resources */
};

#define RES(f) offsetof(struct cg_resources, f)

static const struct num_flag num_flags[] = {
	{ "memory", SIZE, RES(mem_limit) },
	{ "memory-reservation", SIZE, RES(mem_reservation) },
	{ "memory-swap", SIZE, RES(mem_swap) },
	{ "cpu-share", UINT, RES(cpu_shares) },
	{ "cpu-shares", UINT, RES(cpu_shares) },
	{ "cpu-period", UINT, RES(cpu_period) },
	{ "cpu-quota", INT, RES(cpu_quota) },
	{ "cpu-burst", UINT, RES(cpu_burst) },
	{ "cpu-rt-period", UINT, RES(cpu_rt_period) },
	{ "cpu-rt-runtime", INT, RES(cpu_rt_runtime) },
	{ "cpu-idle", INT, RES(cpu_idle) },
	{ "pids-limit", INT, RES(pids_limit) },
	{ "blkio-weight", UINT, RES(blkio_weight) },
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
static int check_ignored(const struct rt_opt *opts, size_t n, struct hutch_err *err)
{
	static const char *const gone[] = { "kernel-memory", "kernel-memory-tcp" };
	static const char *const rdt[] = { "l3-cache-schema", "mem-bw-schema" };
	for (size_t i = 0; i < ARRAY_SIZE(gone); i++)
		if (rt_opt(opts, n, gone[i]))
			hutch_warn("--%s is obsolete (the kernel ignores it), ignoring", gone[i]);
	for (size_t i = 0; i < ARRAY_SIZE(rdt); i++)
		if (rt_opt(opts, n, rdt[i]))
			return hutch_fail(err, ENOTSUP, "--%s: Intel RDT is not supported", rdt[i]);
	return 0;
}

/* The request: the document, then the flags over it, then runc's "0 = unchanged". */
static int build_request(const struct rt_opt *opts, size_t n, struct rt_spec *spec,
			 struct hutch_err *err)
{
	struct cg_resources *res = &spec->resources;
	const char *path = rt_opt(opts, n, "resources");
	int r = check_ignored(opts, n, err);
	if (r == 0 && path)
		r = load_resources(path, spec, err);
	for (size_t i = 0; r == 0 && i < ARRAY_SIZE(num_flags); i++) {
		const char *v = rt_opt(opts, n, num_flags[i].name);
		if (v)
			r = parse_flag(&num_flags[i], v, res, err);
	}
	if (r < 0)
		return r;
	/* Owned by res either way: rt_spec_free_resources frees them. */
	if (rt_opt(opts, n, "cpuset-cpus")) {
		free((char *)res->cpus);
		res->cpus = hutch_xstrdup(rt_opt(opts, n, "cpuset-cpus"));
	}
	if (rt_opt(opts, n, "cpuset-mems")) {
		free((char *)res->mems);
		res->mems = hutch_xstrdup(rt_opt(opts, n, "cpuset-mems"));
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

RT_VERB_FN(update)
{
	const char *id;
	size_t n = rt_verb_find(argv[0])->n_opts;
	struct rt_spec spec;
	_cleanup_(rt_ctr_close) struct rt_ctr c = { .dirfd = -1 };
	TRY(rt_one_id(argc, argv, first, &id, err));
	memset(&spec, 0, sizeof(spec));
	int r = build_request(opts, n, &spec, err);
	if (r == 0)
		r = rt_ctr_open(g, id, &c, err);
	if (r == 0 && c.status == RT_STOPPED)
		r = hutch_fail(err, EINVAL, "container not running");
	if (r == 0 && !c.cg)
		r = hutch_fail(err, ENOENT, "update %s: its cgroup does not exist", id);
	if (r == 0)
		r = cg_complete_update(c.cg, &spec.resources, err);
	if (r == 0)
		r = cg_apply(c.cg, &spec.resources, err);
	rt_spec_free_resources(&spec);
	return r < 0 ? r : 0;
}
