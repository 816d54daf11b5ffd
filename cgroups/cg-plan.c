// SPDX-License-Identifier: Apache-2.0
/*
 * Pure planning: OCI linux.resources (struct cg_resources) -> the ordered list of cgroup file
 * writes for a v2 or a v1 host, with validation whose errors name the spec field. Nothing
 * here touches the kernel, so every conversion is unit-tested anywhere.
 */
#include "cg-internal.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

struct plan {
	struct cg_write *v;
	size_t n, cap;
};

static void add(struct plan *p, const char *controller, const char *file, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void add(struct plan *p, const char *controller, const char *file, const char *fmt, ...)
{
	if (p->n == p->cap) {
		p->cap = p->cap ? p->cap * 2 : 16;
		p->v = hutch_xrealloc(p->v, p->cap * sizeof(*p->v));
	}
	struct cg_write *w = &p->v[p->n++];
	memset(w, 0, sizeof(*w));
	w->controller = controller;
	snprintf(w->file, sizeof(w->file), "%s", file);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(w->value, sizeof(w->value), fmt, ap);
	va_end(ap);
}

/* 0 means "unset" for most OCI numbers (runc does the same); this is "set and non-zero". */
static bool given(struct cg_i64 v)
{
	return v.set && v.v != 0;
}

static int check_min(struct cg_i64 v, int64_t min, const char *field, struct hutch_err *err)
{
	if (v.set && v.v < min)
		return hutch_fail(err, EINVAL,
				  "linux.resources.%s: must be >= %" PRId64 ", got %" PRId64, field,
				  min, v.v);
	return 0;
}

static int check_cpuset(const char *s, const char *field, struct hutch_err *err)
{
	if (s && strspn(s, "0123456789,- ") != strlen(s))
		return hutch_fail(err, EINVAL, "linux.resources.cpu.%s: invalid list \"%s\"", field,
				  s);
	return 0;
}

static int check_devices(const struct cg_resources *res, struct hutch_err *err)
{
	for (size_t i = 0; i < res->n_devices; i++) {
		const struct cg_device_rule *d = &res->devices[i];
		if (d->type != 'a' && d->type != 'b' && d->type != 'c')
			return hutch_fail(err, EINVAL,
					  "linux.resources.devices[%zu].type: invalid '%c'", i,
					  d->type);
		if (d->major < -1 || d->minor < -1 || d->major > UINT32_MAX ||
		    d->minor > UINT32_MAX)
			return hutch_fail(err, EINVAL,
					  "linux.resources.devices[%zu]: invalid major/minor", i);
		size_t len = strnlen(d->access, sizeof(d->access));
		if (len == sizeof(d->access) || strspn(d->access, "rwm") != len)
			return hutch_fail(err, EINVAL,
					  "linux.resources.devices[%zu].access: invalid", i);
	}
	return 0;
}

static int check_unified(const struct cg_resources *res, struct hutch_err *err)
{
	for (size_t i = 0; i < res->n_unified; i++) {
		const char *k = res->unified[i].key;
		/* Keys are file names in the container's cgroup: never a path out of it. */
		if (!k || !*k || strchr(k, '/') || strstr(k, "..") || !strchr(k, '.') ||
		    strlen(k) >= sizeof(((struct cg_write *)0)->file))
			return hutch_fail(err, EINVAL,
					  "linux.resources.unified: invalid key \"%s\"",
					  k ? k : "");
		const char *v = res->unified[i].value;
		if (!v || strlen(v) >= sizeof(((struct cg_write *)0)->value))
			return hutch_fail(err, EINVAL, "linux.resources.unified.%s: invalid value",
					  k);
	}
	return 0;
}

static int check_unsupported(const struct cg_resources *res, bool v2, struct hutch_err *err)
{
	if (res->has_hugetlb)
		return hutch_fail(err, ENOTSUP, "linux.resources.hugepageLimits: not supported");
	if (res->has_network)
		return hutch_fail(err, ENOTSUP, "linux.resources.network: not supported");
	if (res->has_rdma)
		return hutch_fail(err, ENOTSUP, "linux.resources.rdma: not supported");
	if (res->has_blkio_devices)
		return hutch_fail(err, ENOTSUP,
				  "linux.resources.blockIO.leafWeight: not supported (the kernel "
				  "dropped leaf weights with CFQ)");
	if (res->n_unified && !v2)
		return hutch_fail(err, ENOTSUP, "linux.resources.unified: requires cgroup v2");
	if (!v2)
		return 0;
	if (given(res->net_class_id))
		return hutch_fail(err, ENOTSUP,
				  "linux.resources.network.classID: not supported on cgroup v2 "
				  "(net_cls is a v1 controller)");
	if (res->n_net_priorities)
		return hutch_fail(err, ENOTSUP,
				  "linux.resources.network.priorities: not supported on cgroup v2 "
				  "(net_prio is a v1 controller)");
	if (given(res->cpu_rt_runtime) || given(res->cpu_rt_period))
		return hutch_fail(
			err, ENOTSUP,
			"linux.resources.cpu.realtimeRuntime: not supported on cgroup v2");
	if (res->mem_swappiness.set)
		return hutch_fail(err, ENOTSUP,
				  "linux.resources.memory.swappiness: not supported on cgroup v2");
	if (res->mem_disable_oom_killer)
		return hutch_fail(
			err, ENOTSUP,
			"linux.resources.memory.disableOOMKiller: not supported on cgroup v2");
	return 0;
}

static const char *const throttle_fields[CG_THROTTLE_N] = {
	"throttleReadBpsDevice",
	"throttleWriteBpsDevice",
	"throttleReadIOPSDevice",
	"throttleWriteIOPSDevice",
};

static int check_dev_values(const struct cg_dev_value *v, size_t n, const char *field, bool weight,
			    struct hutch_err *err)
{
	for (size_t i = 0; i < n; i++) {
		if (v[i].major < 0 || v[i].minor < 0 || v[i].major > UINT32_MAX ||
		    v[i].minor > UINT32_MAX)
			return hutch_fail(err, EINVAL,
					  "linux.resources.blockIO.%s[%zu]: invalid major/minor",
					  field, i);
		if (weight && v[i].value && (v[i].value < 10 || v[i].value > 1000))
			return hutch_fail(
				err, EINVAL,
				"linux.resources.blockIO.%s[%zu].weight: must be 10..1000", field,
				i);
	}
	return 0;
}

/* Names become file names ("hugetlb.2MB.max") and ifpriomap lines: nothing else fits. */
static int check_names(const struct cg_resources *res, struct hutch_err *err)
{
	for (size_t i = 0; i < res->n_hugepages; i++) {
		const char *s = res->hugepages[i].page_size;
		size_t d = s ? strspn(s, "0123456789") : 0;
		if (!d || d > 12 || !strchr("KMG", s[d]) || strcmp(s + d + 1, "B") != 0)
			return hutch_fail(err, EINVAL,
					  "linux.resources.hugepageLimits[%zu].pageSize: invalid "
					  "\"%s\" (expected a size such as 2MB or 1GB)",
					  i, s ? s : "");
	}
	for (size_t i = 0; i < res->n_net_priorities; i++) {
		const char *s = res->net_priorities[i].iface;
		if (!s || !*s || strlen(s) >= 16 || strpbrk(s, " \t\n/"))
			return hutch_fail(err, EINVAL,
					  "linux.resources.network.priorities[%zu].name: invalid "
					  "interface name \"%s\"",
					  i, s ? s : "");
	}
	return 0;
}

static int check_blkio(const struct cg_resources *res, struct hutch_err *err)
{
	int r = check_dev_values(res->blkio_weight_devices, res->n_blkio_weight_devices,
				 "weightDevice", true, err);
	for (size_t t = 0; r == 0 && t < CG_THROTTLE_N; t++)
		r = check_dev_values(res->blkio_throttle[t], res->n_blkio_throttle[t],
				     throttle_fields[t], false, err);
	return r;
}

static int validate(const struct cg_resources *res, bool v2, struct hutch_err *err)
{
	int r = check_unsupported(res, v2, err);
	if (r == 0)
		r = check_blkio(res, err);
	if (r == 0)
		r = check_names(res, err);
	if (r == 0)
		r = check_min(res->mem_limit, -1, "memory.limit", err);
	if (r == 0)
		r = check_min(res->mem_reservation, -1, "memory.reservation", err);
	if (r == 0)
		r = check_min(res->mem_swap, -1, "memory.swap", err);
	if (r == 0)
		r = check_min(res->cpu_shares, 0, "cpu.shares", err);
	if (r == 0)
		r = check_min(res->cpu_quota, -1, "cpu.quota", err);
	if (r == 0)
		r = check_min(res->cpu_period, 0, "cpu.period", err);
	if (r == 0)
		r = check_min(res->cpu_burst, 0, "cpu.burst", err);
	if (r == 0)
		r = check_min(res->cpu_rt_runtime, -1, "cpu.realtimeRuntime", err);
	if (r == 0)
		r = check_min(res->cpu_rt_period, 0, "cpu.realtimePeriod", err);
	if (r == 0)
		r = check_cpuset(res->cpus, "cpus", err);
	if (r == 0)
		r = check_cpuset(res->mems, "mems", err);
	if (r == 0)
		r = check_devices(res, err);
	if (r == 0)
		r = check_unified(res, err);
	if (r < 0)
		return r;
	if (res->mem_swappiness.set && (res->mem_swappiness.v < 0 || res->mem_swappiness.v > 100))
		return hutch_fail(err, EINVAL, "linux.resources.memory.swappiness: must be 0..100");
	if (res->cpu_idle.set && res->cpu_idle.v != 0 && res->cpu_idle.v != 1)
		return hutch_fail(err, EINVAL, "linux.resources.cpu.idle: must be 0 or 1");
	if (given(res->blkio_weight) && (res->blkio_weight.v < 10 || res->blkio_weight.v > 1000))
		return hutch_fail(err, EINVAL, "linux.resources.blockIO.weight: must be 10..1000");
	/* The kernel insists on memory+swap >= memory; say so in spec terms. */
	if (given(res->mem_swap) && res->mem_swap.v != -1 && given(res->mem_limit) &&
	    (res->mem_limit.v == -1 || res->mem_swap.v < res->mem_limit.v))
		return hutch_fail(err, EINVAL,
				  "linux.resources.memory.swap: must be >= memory.limit (it is "
				  "memory+swap)");
	return 0;
}

static void plan_cpuset(struct plan *p, const struct cg_resources *res)
{
	if (res->cpus && *res->cpus)
		add(p, "cpuset", "cpuset.cpus", "%s", res->cpus);
	if (res->mems && *res->mems)
		add(p, "cpuset", "cpuset.mems", "%s", res->mems);
}

int64_t cg_blkio_to_io_weight(int64_t weight)
{
	return 1 + (weight - 10) * 9999 / 990;
}

/* The last entry for major:minor in list t, or NULL. */
static const struct cg_dev_value *find_dev(const struct cg_resources *res, size_t t,
					   const struct cg_dev_value *d)
{
	const struct cg_dev_value *found = NULL;
	for (size_t i = 0; i < res->n_blkio_throttle[t]; i++)
		if (res->blkio_throttle[t][i].major == d->major &&
		    res->blkio_throttle[t][i].minor == d->minor)
			found = &res->blkio_throttle[t][i];
	return found;
}

/* v2 has one io.max line per device for all four throttles: gathered here, in the order the
 * devices first appear. A rate of 0 lifts the limit (as on v1), "max" in io.max terms. */
static void plan_v2_io_max(struct plan *p, const struct cg_resources *res)
{
	static const char *const keys[CG_THROTTLE_N] = { "rbps", "wbps", "riops", "wiops" };
	for (size_t t = 0; t < CG_THROTTLE_N; t++) {
		for (size_t i = 0; i < res->n_blkio_throttle[t]; i++) {
			const struct cg_dev_value *d = &res->blkio_throttle[t][i];
			bool seen = false;
			for (size_t e = 0; e < t && !seen; e++)
				seen = find_dev(res, e, d) != NULL;
			if (seen || find_dev(res, t, d) != d)
				continue; /* done with an earlier list, or a later entry of this */
			char line[256];
			int len = snprintf(line, sizeof(line), "%" PRId64 ":%" PRId64, d->major,
					   d->minor);
			for (size_t k = t; k < CG_THROTTLE_N; k++) {
				const struct cg_dev_value *v = find_dev(res, k, d);
				if (!v)
					continue;
				if (v->value)
					len += snprintf(line + len, sizeof(line) - len,
							" %s=%" PRIu64, keys[k], v->value);
				else
					len += snprintf(line + len, sizeof(line) - len, " %s=max",
							keys[k]);
			}
			add(p, "io", "io.max", "%s", line);
		}
	}
}

static void plan_v2_devices(struct plan *p, const struct cg_resources *res)
{
	/* BFQ's per-device weight (cg-v2.c falls back to io.weight, converted, without BFQ). */
	for (size_t i = 0; i < res->n_blkio_weight_devices; i++) {
		const struct cg_dev_value *d = &res->blkio_weight_devices[i];
		if (d->value)
			add(p, "io", "io.bfq.weight", "%" PRId64 ":%" PRId64 " %" PRIu64, d->major,
			    d->minor, d->value);
	}
	plan_v2_io_max(p, res);
	for (size_t i = 0; i < res->n_hugepages; i++) {
		char file[64];
		snprintf(file, sizeof(file), "hugetlb.%s.max", res->hugepages[i].page_size);
		add(p, "hugetlb", file, "%" PRIu64, res->hugepages[i].limit);
	}
}

static void plan_v2(struct plan *p, const struct cg_resources *res)
{
	plan_cpuset(p, res);
	if (given(res->cpu_shares)) {
		/* runc's mapping of [2, 262144] shares onto [1, 10000] weight. */
		int64_t s = res->cpu_shares.v < 2	 ? 2
			    : res->cpu_shares.v > 262144 ? 262144
							 : res->cpu_shares.v;
		add(p, "cpu", "cpu.weight", "%" PRId64, 1 + ((s - 2) * 9999) / 262142);
	}
	if (given(res->cpu_quota) || given(res->cpu_period)) {
		int64_t period = given(res->cpu_period) ? res->cpu_period.v : 100000;
		if (given(res->cpu_quota) && res->cpu_quota.v > 0)
			add(p, "cpu", "cpu.max", "%" PRId64 " %" PRId64, res->cpu_quota.v, period);
		else
			add(p, "cpu", "cpu.max", "max %" PRId64, period);
	}
	if (res->cpu_burst.set)
		add(p, "cpu", "cpu.max.burst", "%" PRId64, res->cpu_burst.v);
	if (res->cpu_idle.set)
		add(p, "cpu", "cpu.idle", "%" PRId64, res->cpu_idle.v);

	if (given(res->mem_reservation) && res->mem_reservation.v != -1)
		add(p, "memory", "memory.low", "%" PRId64, res->mem_reservation.v);
	else if (given(res->mem_reservation))
		add(p, "memory", "memory.low", "max");
	if (given(res->mem_limit) && res->mem_limit.v != -1)
		add(p, "memory", "memory.max", "%" PRId64, res->mem_limit.v);
	else if (given(res->mem_limit))
		add(p, "memory", "memory.max", "max");
	/* v2 limits swap alone; OCI's swap is memory+swap (runc's conversion). */
	bool unlimited = res->mem_limit.set && res->mem_limit.v == -1;
	if ((given(res->mem_swap) && res->mem_swap.v == -1) || (unlimited && !given(res->mem_swap)))
		add(p, "memory", "memory.swap.max", "max");
	else if (given(res->mem_swap))
		add(p, "memory", "memory.swap.max", "%" PRId64, res->mem_swap.v - res->mem_limit.v);

	if (res->pids_limit.set && res->pids_limit.v > 0)
		add(p, "pids", "pids.max", "%" PRId64, res->pids_limit.v);
	else if (res->pids_limit.set)
		add(p, "pids", "pids.max", "max");
	if (given(res->blkio_weight))
		add(p, "io", "io.weight", "%" PRId64, cg_blkio_to_io_weight(res->blkio_weight.v));
	plan_v2_devices(p, res);
	/* Last, so an explicit unified value overrides a converted one (as runc). */
	for (size_t i = 0; i < res->n_unified; i++)
		add(p, "", res->unified[i].key, "%s", res->unified[i].value);
}

static void plan_v1_cpu(struct plan *p, const struct cg_resources *res)
{
	if (given(res->cpu_shares))
		add(p, "cpu", "cpu.shares", "%" PRId64, res->cpu_shares.v);
	/* Period first: the kernel checks quota against the period in force. */
	if (given(res->cpu_period))
		add(p, "cpu", "cpu.cfs_period_us", "%" PRId64, res->cpu_period.v);
	if (given(res->cpu_quota))
		add(p, "cpu", "cpu.cfs_quota_us", "%" PRId64, res->cpu_quota.v);
	if (res->cpu_burst.set)
		add(p, "cpu", "cpu.cfs_burst_us", "%" PRId64, res->cpu_burst.v);
	if (given(res->cpu_rt_period))
		add(p, "cpu", "cpu.rt_period_us", "%" PRId64, res->cpu_rt_period.v);
	if (given(res->cpu_rt_runtime))
		add(p, "cpu", "cpu.rt_runtime_us", "%" PRId64, res->cpu_rt_runtime.v);
	if (res->cpu_idle.set)
		add(p, "cpu", "cpu.idle", "%" PRId64, res->cpu_idle.v);
}

static void plan_v1_devices(struct plan *p, const struct cg_resources *res)
{
	if (!res->n_devices)
		return;
	/* Start from nothing, then replay the rules in order: the last one wins, as in OCI.
	 * (Specs usually open with that same "deny all": no need to write it twice.) */
	const struct cg_device_rule *first = &res->devices[0];
	if (first->allow || first->type != 'a')
		add(p, "devices", "devices.deny", "a");
	for (size_t i = 0; i < res->n_devices; i++) {
		const struct cg_device_rule *d = &res->devices[i];
		const char *file = d->allow ? "devices.allow" : "devices.deny";
		char maj[24] = "*", min[24] = "*";
		if (d->type == 'a') {
			add(p, "devices", file, "a");
			continue;
		}
		if (d->major >= 0)
			snprintf(maj, sizeof(maj), "%" PRId64, d->major);
		if (d->minor >= 0)
			snprintf(min, sizeof(min), "%" PRId64, d->minor);
		add(p, "devices", file, "%c %s:%s %s", d->type, maj, min,
		    d->access[0] ? d->access : "rwm");
	}
}

static void plan_v1_more(struct plan *p, const struct cg_resources *res)
{
	static const char *const files[CG_THROTTLE_N] = {
		"blkio.throttle.read_bps_device",
		"blkio.throttle.write_bps_device",
		"blkio.throttle.read_iops_device",
		"blkio.throttle.write_iops_device",
	};
	/* cg-v1.c falls back to blkio.bfq.weight_device on kernels with BFQ instead of CFQ. */
	for (size_t i = 0; i < res->n_blkio_weight_devices; i++) {
		const struct cg_dev_value *d = &res->blkio_weight_devices[i];
		if (d->value)
			add(p, "blkio", "blkio.weight_device", "%" PRId64 ":%" PRId64 " %" PRIu64,
			    d->major, d->minor, d->value);
	}
	for (size_t t = 0; t < CG_THROTTLE_N; t++)
		for (size_t i = 0; i < res->n_blkio_throttle[t]; i++) {
			const struct cg_dev_value *d = &res->blkio_throttle[t][i];
			add(p, "blkio", files[t], "%" PRId64 ":%" PRId64 " %" PRIu64, d->major,
			    d->minor, d->value);
		}
	for (size_t i = 0; i < res->n_hugepages; i++) {
		char file[64];
		snprintf(file, sizeof(file), "hugetlb.%s.limit_in_bytes",
			 res->hugepages[i].page_size);
		add(p, "hugetlb", file, "%" PRIu64, res->hugepages[i].limit);
	}
	if (given(res->net_class_id))
		add(p, "net_cls", "net_cls.classid", "%" PRId64, res->net_class_id.v);
	for (size_t i = 0; i < res->n_net_priorities; i++)
		add(p, "net_prio", "net_prio.ifpriomap", "%s %" PRIu32,
		    res->net_priorities[i].iface, res->net_priorities[i].priority);
}

static void plan_v1(struct plan *p, const struct cg_resources *res)
{
	plan_cpuset(p, res);
	plan_v1_cpu(p, res);
	/* limit and memsw stay adjacent: cg-v1.c picks their order from the current values. */
	if (given(res->mem_limit))
		add(p, "memory", "memory.limit_in_bytes", "%" PRId64, res->mem_limit.v);
	if (given(res->mem_swap))
		add(p, "memory", "memory.memsw.limit_in_bytes", "%" PRId64, res->mem_swap.v);
	if (given(res->mem_reservation))
		add(p, "memory", "memory.soft_limit_in_bytes", "%" PRId64, res->mem_reservation.v);
	if (res->mem_swappiness.set)
		add(p, "memory", "memory.swappiness", "%" PRId64, res->mem_swappiness.v);
	if (given(res->mem_kernel_tcp))
		add(p, "memory", "memory.kmem.tcp.limit_in_bytes", "%" PRId64,
		    res->mem_kernel_tcp.v);
	if (res->mem_disable_oom_killer)
		add(p, "memory", "memory.oom_control", "1");
	if (res->pids_limit.set && res->pids_limit.v > 0)
		add(p, "pids", "pids.max", "%" PRId64, res->pids_limit.v);
	else if (res->pids_limit.set)
		add(p, "pids", "pids.max", "max");
	if (given(res->blkio_weight))
		add(p, "blkio", "blkio.weight", "%" PRId64, res->blkio_weight.v);
	plan_v1_more(p, res);
	plan_v1_devices(p, res);
}

int cg_plan(const struct cg_resources *res, bool v2, struct cg_write **out, size_t *n,
	    struct hutch_err *err)
{
	int r = validate(res, v2, err);
	if (r < 0)
		return r;
	struct plan p = { 0 };
	if (v2)
		plan_v2(&p, res);
	else
		plan_v1(&p, res);
	*out = p.v ? p.v : hutch_xcalloc(1, sizeof(struct cg_write));
	*n = p.n;
	return 0;
}

const char *cg_plan_field(const char *file)
{
	static const struct {
		const char *prefix, *field;
	} map[] = {
		{ "blkio.throttle.read_bps", "linux.resources.blockIO.throttleReadBpsDevice" },
		{ "blkio.throttle.write_bps", "linux.resources.blockIO.throttleWriteBpsDevice" },
		{ "blkio.throttle.read_iops", "linux.resources.blockIO.throttleReadIOPSDevice" },
		{ "blkio.throttle.write_iops", "linux.resources.blockIO.throttleWriteIOPSDevice" },
		{ "io.max", "linux.resources.blockIO.throttle*Device" },
		{ "blkio.weight_device", "linux.resources.blockIO.weightDevice" },
		{ "blkio.bfq.weight_device", "linux.resources.blockIO.weightDevice" },
		{ "io.bfq.weight", "linux.resources.blockIO.weightDevice" },
		{ "hugetlb.", "linux.resources.hugepageLimits" },
		{ "net_cls.", "linux.resources.network.classID" },
		{ "net_prio.", "linux.resources.network.priorities" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(map); i++)
		if (strncmp(file, map[i].prefix, strlen(map[i].prefix)) == 0)
			return map[i].field;
	return NULL;
}

bool cg_limits_set(const struct cg_resources *res)
{
	struct cg_write *w = NULL;
	size_t n = 0;
	struct hutch_err ignored = { 0 };
	bool any = false;
	if (cg_plan(res, true, &w, &n, &ignored) < 0) /* invalid: create says so first */
		return true;
	for (size_t i = 0; i < n; i++)
		any |= strcmp(w[i].controller, "devices") != 0;
	free(w);
	return any;
}
