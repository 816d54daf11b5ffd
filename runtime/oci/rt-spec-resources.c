// SPDX-License-Identifier: Apache-2.0
/*
 * linux.resources -> struct cg_resources. Numbers come from tables (one line per field);
 * range checks that depend on the cgroup version are left to cg_plan, which names the same
 * fields. What hutch cannot enforce (rdma, leaf weights) is flagged so cg_plan refuses it,
 * never ignored.
 */
#include "rt-spec-internal.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

struct num_field {
	const char *key;
	int64_t min;
	size_t off; /* of a struct cg_i64 in struct cg_resources */
};

#define RES(f) offsetof(struct cg_resources, f)

static const struct num_field memory_fields[] = {
	{ "limit", INT64_MIN, RES(mem_limit) },
	{ "reservation", INT64_MIN, RES(mem_reservation) },
	{ "swap", INT64_MIN, RES(mem_swap) },
	{ "swappiness", -1, RES(mem_swappiness) },
	{ "kernelTCP", INT64_MIN, RES(mem_kernel_tcp) },
};

static const struct num_field cpu_fields[] = {
	{ "shares", 0, RES(cpu_shares) },
	{ "quota", INT64_MIN, RES(cpu_quota) },
	{ "burst", 0, RES(cpu_burst) },
	{ "period", 0, RES(cpu_period) },
	{ "realtimeRuntime", INT64_MIN, RES(cpu_rt_runtime) },
	{ "realtimePeriod", 0, RES(cpu_rt_period) },
	{ "idle", INT64_MIN, RES(cpu_idle) },
};

static const struct num_field pids_fields[] = {
	{ "limit", INT64_MIN, RES(pids_limit) },
};

static const struct num_field blkio_fields[] = {
	{ "weight", 0, RES(blkio_weight) },
};

static int parse_nums(yajl_val obj, const char *section, const struct num_field *f, size_t n,
		      struct cg_resources *res, struct hutch_err *err)
{
	char field[HUTCH_FIELD_MAX];
	for (size_t i = 0; i < n; i++) {
		struct cg_i64 *v = (struct cg_i64 *)((char *)res + f[i].off);
		hutch_json_field(field, "linux.resources.%s.%s", section, f[i].key);
		int r = hutch_json_int(obj, f[i].key, field, f[i].min, INT64_MAX, &v->set, &v->v,
				       err);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Present with something in it: null, [] and {} ask for nothing. */
static bool nonempty(yajl_val v)
{
	if (!v)
		return false;
	if (YAJL_IS_ARRAY(v))
		return v->u.array.len > 0;
	if (YAJL_IS_OBJECT(v))
		return v->u.object.len > 0;
	return true;
}

static int parse_device(yajl_val d, size_t i, struct cg_device_rule *out, struct hutch_err *err)
{
	char field[HUTCH_FIELD_MAX];
	_cleanup_free_ char *type = NULL, *access = NULL;
	bool present;
	int64_t maj = -1, min = -1;

	hutch_json_field(field, "linux.resources.devices[%zu]", i);
	if (!YAJL_IS_OBJECT(d))
		return hutch_fail(err, EINVAL, "%s: expected an object", field);
	if (!hutch_json_get(d, "allow"))
		return hutch_fail(err, EINVAL, "%s.allow: required", field);
	int r = hutch_json_bool(d, "allow",
				hutch_json_field(field, "linux.resources.devices[%zu].allow", i),
				&out->allow, err);
	if (r == 0)
		r = hutch_json_string(
			d, "type", hutch_json_field(field, "linux.resources.devices[%zu].type", i),
			false, &type, err);
	if (r == 0 && type && (strlen(type) != 1 || !strchr("abc", type[0])))
		r = hutch_fail(err, EINVAL, "%s: \"%s\": expected \"a\", \"b\" or \"c\"", field,
			       type);
	if (r == 0)
		r = hutch_json_int(d, "major",
				   hutch_json_field(field, "linux.resources.devices[%zu].major", i),
				   -1, UINT32_MAX, &present, &maj, err);
	if (r == 0)
		r = hutch_json_int(d, "minor",
				   hutch_json_field(field, "linux.resources.devices[%zu].minor", i),
				   -1, UINT32_MAX, &present, &min, err);
	if (r == 0)
		r = hutch_json_string(
			d, "access",
			hutch_json_field(field, "linux.resources.devices[%zu].access", i), false,
			&access, err);
	if (r == 0 && access &&
	    (strlen(access) >= sizeof(out->access) || strspn(access, "rwm") != strlen(access)))
		r = hutch_fail(err, EINVAL, "%s: \"%s\": expected letters from \"rwm\"", field,
			       access);
	if (r < 0)
		return r;
	out->type = type ? type[0] : 'a';
	out->major = maj;
	out->minor = min;
	/* Absent or empty access means all of it, as in runc's generated configs. */
	snprintf(out->access, sizeof(out->access), "%s", access && *access ? access : "rwm");
	return 0;
}

/* What every container may use whatever its rules say, appended after them (the last
 * matching rule wins), as runc does: podman sends only "deny all" and expects these. */
static const struct cg_device_rule default_allowed[] = {
	{ true, 'c', -1, -1, "m" },    { true, 'b', -1, -1, "m" }, /* mknod, not open */
	{ true, 'c', 1, 3, "rwm" },    { true, 'c', 1, 5, "rwm" }, /* null, zero */
	{ true, 'c', 1, 7, "rwm" },    { true, 'c', 1, 8, "rwm" }, /* full, random */
	{ true, 'c', 1, 9, "rwm" },    { true, 'c', 5, 0, "rwm" }, /* urandom, tty */
	{ true, 'c', 5, 1, "rwm" },    { true, 'c', 5, 2, "rwm" }, /* console, ptmx */
	{ true, 'c', 136, -1, "rwm" },				   /* pts */
};

static int parse_devices(yajl_val res, struct rt_spec *spec, struct hutch_err *err)
{
	struct hutch_json_items it;
	TRY(hutch_json_items(res, "devices", "linux.resources.devices", &it, err));
	if (!it.arr)
		return 0;
	_cleanup_free_ struct cg_device_rule *v = hutch_xcalloc(it.n + 1, sizeof(*v));
	for (yajl_val d; hutch_json_next(&it, &d);)
		TRY(parse_device(d, it.i, &v[it.i], err));
	rt_spec_set_devices(spec, v, it.n);
	return 0;
}

void rt_spec_set_devices(struct rt_spec *spec, const struct cg_device_rule *rules, size_t n)
{
	size_t nd = ARRAY_SIZE(default_allowed);
	free(spec->device_rules);
	spec->device_rules = hutch_xcalloc(n + nd + 1, sizeof(struct cg_device_rule));
	memcpy(spec->device_rules, rules, n * sizeof(*rules));
	/* After the spec's own: the devices every container may use (runc's AllowedDevices). */
	memcpy(&spec->device_rules[n], default_allowed, sizeof(default_allowed));
	spec->n_device_rules = n;
	spec->resources.devices = spec->device_rules;
	spec->resources.n_devices = n + nd;
}

static int parse_memory(yajl_val res, struct cg_resources *out, struct hutch_err *err)
{
	yajl_val m;
	int r = hutch_json_object(res, "memory", "linux.resources.memory", &m, err);
	if (r < 0 || !m)
		return r;
	r = parse_nums(m, "memory", memory_fields, ARRAY_SIZE(memory_fields), out, err);
	if (r == 0)
		r = hutch_json_bool(m, "disableOOMKiller",
				    "linux.resources.memory.disableOOMKiller",
				    &out->mem_disable_oom_killer, err);
	if (r == 0)
		r = hutch_json_bool(m, "checkBeforeUpdate",
				    "linux.resources.memory.checkBeforeUpdate",
				    &out->mem_check_before_update, err);
	/* memory.kernel is deprecated and ignored by runc and the kernel (5.16+): so here.
	 * kernelTCP is not: on v1 it is the only bound on a container's TCP buffers. */
	if (out->mem_swappiness.set && out->mem_swappiness.v == -1)
		out->mem_swappiness.set = false; /* runc's "unset" */
	return r;
}

static int parse_cpu(yajl_val res, struct cg_resources *out, struct hutch_err *err)
{
	yajl_val c;
	char *s = NULL;
	int r = hutch_json_object(res, "cpu", "linux.resources.cpu", &c, err);
	if (r < 0 || !c)
		return r;
	r = parse_nums(c, "cpu", cpu_fields, ARRAY_SIZE(cpu_fields), out, err);
	if (r == 0)
		r = hutch_json_string(c, "cpus", "linux.resources.cpu.cpus", false, &s, err);
	out->cpus = s; /* owned here; freed by rt_spec_free_resources */
	s = NULL;
	if (r == 0)
		r = hutch_json_string(c, "mems", "linux.resources.cpu.mems", false, &s, err);
	out->mems = s;
	return r;
}

/* One entry of a blockIO per-device list: major, minor and the value under value_key
 * (required for the throttle lists' "rate", optional for weightDevice's "weight"). */
static int parse_dev_value(yajl_val d, const char *field, const char *value_key,
			   struct cg_dev_value *out, struct hutch_err *err)
{
	char f[HUTCH_FIELD_MAX];
	bool present = false;
	if (!YAJL_IS_OBJECT(d))
		return hutch_fail(err, EINVAL, "%s: expected an object", field);
	int r = hutch_json_req_int(d, "major", hutch_json_field(f, "%s.major", field), 0,
				   UINT32_MAX, &out->major, err);
	if (r == 0)
		r = hutch_json_req_int(d, "minor", hutch_json_field(f, "%s.minor", field), 0,
				       UINT32_MAX, &out->minor, err);
	if (r == 0)
		r = hutch_json_uint64(d, value_key, hutch_json_field(f, "%s.%s", field, value_key),
				      UINT64_MAX, &present, &out->value, err);
	if (r == 0 && !present && strcmp(value_key, "rate") == 0)
		r = hutch_fail(err, EINVAL, "%s.rate: required", field);
	return r;
}

static int parse_dev_values(yajl_val b, const char *key, const char *value_key,
			    const struct cg_dev_value **out, size_t *n, bool *leaf,
			    struct hutch_err *err)
{
	char field[HUTCH_FIELD_MAX];
	struct hutch_json_items it;
	TRY(hutch_json_items(b, key, hutch_json_field(field, "linux.resources.blockIO.%s", key),
			     &it, err));
	if (!it.arr)
		return 0;
	struct cg_dev_value *v = hutch_xcalloc(it.n + 1, sizeof(*v));
	*out = v; /* owned by the spec from here: rt_spec_free_resources frees it */
	for (yajl_val d; hutch_json_next(&it, &d);) {
		TRY(parse_dev_value(d, it.field, value_key, &v[it.i], err));
		*leaf |= nonempty(hutch_json_get(d, "leafWeight"));
		*n = it.i + 1;
	}
	return 0;
}

static int parse_blkio(yajl_val res, struct cg_resources *out, struct hutch_err *err)
{
	static const char *const throttle[CG_THROTTLE_N] = {
		[CG_THROTTLE_READ_BPS] = "throttleReadBpsDevice",
		[CG_THROTTLE_WRITE_BPS] = "throttleWriteBpsDevice",
		[CG_THROTTLE_READ_IOPS] = "throttleReadIOPSDevice",
		[CG_THROTTLE_WRITE_IOPS] = "throttleWriteIOPSDevice",
	};
	yajl_val b;
	bool leaf = false;
	int r = hutch_json_object(res, "blockIO", "linux.resources.blockIO", &b, err);
	if (r < 0 || !b)
		return r;
	r = parse_nums(b, "blockIO", blkio_fields, ARRAY_SIZE(blkio_fields), out, err);
	if (r == 0)
		r = parse_dev_values(b, "weightDevice", "weight", &out->blkio_weight_devices,
				     &out->n_blkio_weight_devices, &leaf, err);
	for (size_t i = 0; r == 0 && i < CG_THROTTLE_N; i++)
		r = parse_dev_values(b, throttle[i], "rate", &out->blkio_throttle[i],
				     &out->n_blkio_throttle[i], &leaf, err);
	/* Leaf weights went with CFQ (kernel 5.0): flagged so that cg_plan refuses them. */
	out->has_blkio_devices = leaf || nonempty(hutch_json_get(b, "leafWeight"));
	return r;
}

static int parse_hugepage(yajl_val h, const char *at, struct cg_hugepage *v, struct hutch_err *err)
{
	char field[HUTCH_FIELD_MAX];
	bool present = false;
	char *size = NULL;
	if (!YAJL_IS_OBJECT(h))
		return hutch_fail(err, EINVAL, "%s: expected an object", at);
	int r = hutch_json_string(h, "pageSize", hutch_json_field(field, "%s.pageSize", at), true,
				  &size, err);
	v->page_size = size;
	if (r == 0)
		r = hutch_json_uint64(h, "limit", hutch_json_field(field, "%s.limit", at),
				      UINT64_MAX, &present, &v->limit, err);
	if (r == 0 && !present)
		r = hutch_fail(err, EINVAL, "%s: required", field);
	return r;
}

static int parse_hugepages(yajl_val res, struct cg_resources *out, struct hutch_err *err)
{
	struct hutch_json_items it;
	TRY(hutch_json_items(res, "hugepageLimits", "linux.resources.hugepageLimits", &it, err));
	if (!it.arr)
		return 0;
	out->hugepages = hutch_xcalloc(it.n + 1, sizeof(*out->hugepages));
	for (yajl_val h; hutch_json_next(&it, &h);) {
		out->n_hugepages = it.i + 1; /* freed with the spec, half-parsed or not */
		TRY(parse_hugepage(h, it.field, (struct cg_hugepage *)&out->hugepages[it.i], err));
	}
	return 0;
}

static int parse_prio(yajl_val p, const char *at, struct cg_net_prio *v, struct hutch_err *err)
{
	char field[HUTCH_FIELD_MAX];
	char *name = NULL;
	int64_t prio = 0;
	if (!YAJL_IS_OBJECT(p))
		return hutch_fail(err, EINVAL, "%s: expected an object", at);
	int r = hutch_json_string(p, "name", hutch_json_field(field, "%s.name", at), true, &name,
				  err);
	v->iface = name;
	if (r == 0)
		r = hutch_json_req_int(p, "priority", hutch_json_field(field, "%s.priority", at), 0,
				       UINT32_MAX, &prio, err);
	v->priority = (uint32_t)prio;
	return r;
}

static int parse_network(yajl_val res, struct cg_resources *out, struct hutch_err *err)
{
	struct hutch_json_items it = { 0 };
	yajl_val net;
	int r = hutch_json_object(res, "network", "linux.resources.network", &net, err);
	if (r == 0 && net)
		r = hutch_json_int(net, "classID", "linux.resources.network.classID", 0, UINT32_MAX,
				   &out->net_class_id.set, &out->net_class_id.v, err);
	if (r == 0 && net)
		r = hutch_json_items(net, "priorities", "linux.resources.network.priorities", &it,
				     err);
	if (r < 0 || !net || !it.arr)
		return r;
	out->net_priorities = hutch_xcalloc(it.n + 1, sizeof(*out->net_priorities));
	for (yajl_val p; hutch_json_next(&it, &p);) {
		out->n_net_priorities = it.i + 1;
		TRY(parse_prio(p, it.field, (struct cg_net_prio *)&out->net_priorities[it.i], err));
	}
	return 0;
}

static int parse_unified(yajl_val res, struct rt_spec *spec, struct hutch_err *err)
{
	yajl_val u;
	int r = hutch_json_object(res, "unified", "linux.resources.unified", &u, err);
	if (r < 0 || !u)
		return r;
	r = rt_json_kv(u, "linux.resources.unified", &spec->unified, &spec->resources.n_unified,
		       err);
	spec->resources.unified = spec->unified;
	return r;
}

int rt_spec_parse_resources(yajl_val resources, struct rt_spec *spec, struct hutch_err *err)
{
	struct cg_resources *res = &spec->resources;
	yajl_val pids;
	int r = parse_devices(resources, spec, err);
	if (r == 0)
		r = parse_memory(resources, res, err);
	if (r == 0)
		r = parse_cpu(resources, res, err);
	if (r == 0)
		r = hutch_json_object(resources, "pids", "linux.resources.pids", &pids, err);
	if (r == 0 && pids)
		r = parse_nums(pids, "pids", pids_fields, ARRAY_SIZE(pids_fields), res, err);
	if (r == 0)
		r = parse_blkio(resources, res, err);
	if (r == 0)
		r = parse_hugepages(resources, res, err);
	if (r == 0)
		r = parse_network(resources, res, err);
	if (r == 0)
		r = parse_unified(resources, spec, err);
	if (r < 0)
		return r;
	/* Recorded, not dropped: cg_plan refuses it with the field's name. */
	res->has_rdma = nonempty(hutch_json_get(resources, "rdma"));
	spec->has_resources = true;
	return 0;
}

void rt_spec_free_resources(struct rt_spec *spec)
{
	free(spec->device_rules);
	spec->device_rules = NULL;
	rt_kv_free(spec->unified, spec->resources.n_unified);
	spec->unified = NULL;
	/* The struct's const pointers the spec owns: the cpuset lists and the arrays parsed
	 * here (with their strings). */
	struct cg_resources *res = &spec->resources;
	free((char *)res->cpus);
	free((char *)res->mems);
	free((void *)res->blkio_weight_devices);
	for (size_t i = 0; i < CG_THROTTLE_N; i++)
		free((void *)res->blkio_throttle[i]);
	for (size_t i = 0; res->hugepages && i < res->n_hugepages; i++)
		free((char *)res->hugepages[i].page_size);
	free((void *)res->hugepages);
	for (size_t i = 0; res->net_priorities && i < res->n_net_priorities; i++)
		free((char *)res->net_priorities[i].iface);
	free((void *)res->net_priorities);
	memset(&spec->resources, 0, sizeof(spec->resources));
}
