// SPDX-License-Identifier: Apache-2.0
/*
 * struct rt_spec -> config.json: what a delegate runtime (runc, crun, runsc) is given when
 * `hutch sandbox --runtime` hands it the sandbox hutch planned. Everything the spec holds is
 * written, or the write fails naming the field it cannot write ("not supported"): a
 * delegate never runs a sandbox that lost a setting on the way.
 */
#include "rt-spec-internal.h"

#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

static void gen_i64(yajl_gen g, const char *key, struct cg_i64 v)
{
	if (v.set)
		hutch_json_gen_int(g, key, v.v);
}

static void gen_caps(yajl_gen g, const struct ns_caps *c)
{
	const struct {
		const char *key;
		uint64_t set;
	} sets[] = { { "bounding", c->bounding },
		     { "effective", c->effective },
		     { "inheritable", c->inheritable },
		     { "permitted", c->permitted },
		     { "ambient", c->ambient } };
	hutch_json_gen_str(g, "capabilities");
	yajl_gen_map_open(g);
	for (size_t i = 0; i < ARRAY_SIZE(sets); i++) {
		hutch_json_gen_str(g, sets[i].key);
		yajl_gen_array_open(g);
		for (int cap = 0; cap < 64; cap++)
			if (sets[i].set & (1ULL << cap))
				hutch_json_gen_str(g, ns_cap_name(cap));
		yajl_gen_array_close(g);
	}
	yajl_gen_map_close(g);
}

static void gen_user(yajl_gen g, const struct ns_user *u)
{
	hutch_json_gen_str(g, "user");
	yajl_gen_map_open(g);
	hutch_json_gen_int(g, "uid", u->uid);
	hutch_json_gen_int(g, "gid", u->gid);
	if (u->has_umask)
		hutch_json_gen_int(g, "umask", u->umask);
	if (u->n_additional_gids) {
		hutch_json_gen_str(g, "additionalGids");
		yajl_gen_array_open(g);
		for (size_t i = 0; i < u->n_additional_gids; i++)
			yajl_gen_integer(g, u->additional_gids[i]);
		yajl_gen_array_close(g);
	}
	yajl_gen_map_close(g);
}

static void gen_rlimits(yajl_gen g, const struct rt_process *p)
{
	if (!p->n_rlimits)
		return;
	hutch_json_gen_str(g, "rlimits");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < p->n_rlimits; i++) {
		yajl_gen_map_open(g);
		hutch_json_gen_kv(g, "type", ns_rlimit_name(p->rlimits[i].resource));
		hutch_json_gen_u64(g, "hard", p->rlimits[i].hard);
		hutch_json_gen_u64(g, "soft", p->rlimits[i].soft);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
}

static void gen_process(yajl_gen g, const struct rt_process *p)
{
	hutch_json_gen_str(g, "process");
	yajl_gen_map_open(g);
	hutch_json_gen_bool(g, "terminal", p->terminal);
	if (p->console_height || p->console_width) {
		hutch_json_gen_str(g, "consoleSize");
		yajl_gen_map_open(g);
		hutch_json_gen_int(g, "height", p->console_height);
		hutch_json_gen_int(g, "width", p->console_width);
		yajl_gen_map_close(g);
	}
	gen_user(g, &p->user);
	hutch_json_gen_strv(g, "args", (const char *const *)p->args, SIZE_MAX);
	hutch_json_gen_strv(g, "env", (const char *const *)p->env, SIZE_MAX);
	hutch_json_gen_kv(g, "cwd", p->cwd);
	if (p->has_caps)
		gen_caps(g, &p->caps);
	gen_rlimits(g, p);
	hutch_json_gen_bool(g, "noNewPrivileges", p->no_new_privs);
	if (p->has_oom_score_adj)
		hutch_json_gen_int(g, "oomScoreAdj", p->oom_score_adj);
	if (p->apparmor_profile)
		hutch_json_gen_kv(g, "apparmorProfile", p->apparmor_profile);
	if (p->selinux_label)
		hutch_json_gen_kv(g, "selinuxLabel", p->selinux_label);
	yajl_gen_map_close(g);
}

static void gen_idmaps(yajl_gen g, const char *key, const struct ns_idmap *v, size_t n)
{
	if (!n)
		return;
	hutch_json_gen_str(g, key);
	yajl_gen_array_open(g);
	for (size_t i = 0; i < n; i++) {
		yajl_gen_map_open(g);
		hutch_json_gen_int(g, "containerID", v[i].container_id);
		hutch_json_gen_int(g, "hostID", v[i].host_id);
		hutch_json_gen_int(g, "size", v[i].size);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
}

static void gen_mounts(yajl_gen g, const struct rt_spec *s)
{
	hutch_json_gen_str(g, "mounts");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < s->n_mounts; i++) {
		const struct ns_mount *m = &s->mounts[i];
		size_t n = 0;
		_cleanup_strv_ char **opts = ns_mount_format_options(m, &n);
		yajl_gen_map_open(g);
		hutch_json_gen_kv(g, "destination", m->destination);
		if (m->type)
			hutch_json_gen_kv(g, "type", m->type);
		if (m->source)
			hutch_json_gen_kv(g, "source", m->source);
		hutch_json_gen_strv(g, "options", (const char *const *)opts, n);
		gen_idmaps(g, "uidMappings", m->uid_map, m->n_uid_map);
		gen_idmaps(g, "gidMappings", m->gid_map, m->n_gid_map);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
}

static void gen_hooks(yajl_gen g, const struct rt_spec *s)
{
	static const char *const names[RT_HOOK_COUNT] = {
		"prestart",	  "createRuntime", "createContainer",
		"startContainer", "poststart",	   "poststop",
	};
	bool any = false;
	for (int k = 0; k < RT_HOOK_COUNT; k++)
		any |= s->hooks[k].n > 0;
	if (!any)
		return;
	hutch_json_gen_str(g, "hooks");
	yajl_gen_map_open(g);
	for (int k = 0; k < RT_HOOK_COUNT; k++) {
		if (!s->hooks[k].n)
			continue;
		hutch_json_gen_str(g, names[k]);
		yajl_gen_array_open(g);
		for (size_t i = 0; i < s->hooks[k].n; i++) {
			const struct rt_hook *h = &s->hooks[k].v[i];
			yajl_gen_map_open(g);
			hutch_json_gen_kv(g, "path", h->path);
			if (h->args)
				hutch_json_gen_strv(g, "args", (const char *const *)h->args,
						    SIZE_MAX);
			if (h->env)
				hutch_json_gen_strv(g, "env", (const char *const *)h->env,
						    SIZE_MAX);
			if (h->timeout)
				hutch_json_gen_int(g, "timeout", h->timeout);
			yajl_gen_map_close(g);
		}
		yajl_gen_array_close(g);
	}
	yajl_gen_map_close(g);
}

/* The spec's own rules: the defaults after them are every reader's to add (as parsing does). */
static void gen_devices(yajl_gen g, const struct rt_spec *s)
{
	const struct cg_resources *r = &s->resources;
	size_t n = s->device_rules ? s->n_device_rules : r->n_devices;
	hutch_json_gen_str(g, "devices");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < n; i++) {
		const struct cg_device_rule *d = &r->devices[i];
		char type[2] = { d->type, '\0' };
		yajl_gen_map_open(g);
		hutch_json_gen_bool(g, "allow", d->allow);
		hutch_json_gen_kv(g, "type", type);
		if (d->major >= 0)
			hutch_json_gen_int(g, "major", d->major);
		if (d->minor >= 0)
			hutch_json_gen_int(g, "minor", d->minor);
		hutch_json_gen_kv(g, "access", d->access);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
}

/* What linux.resources carries that is not written here: refused by name. */
static int check_resources(const struct cg_resources *r, struct hutch_err *err)
{
	bool blkio = r->blkio_weight.set || r->n_blkio_weight_devices || r->has_blkio_devices;
	for (size_t i = 0; i < CG_THROTTLE_N; i++)
		blkio |= r->n_blkio_throttle[i] > 0;
	const char *what = blkio			      ? "blockIO"
			   : r->n_hugepages || r->has_hugetlb ? "hugepageLimits"
			   : r->net_class_id.set || r->n_net_priorities || r->has_network
				   ? "network"
			   : r->has_rdma		? "rdma"
			   : r->mem_check_before_update ? "memory.checkBeforeUpdate"
							: NULL;
	if (what)
		return hutch_fail(err, EOPNOTSUPP, "spec writer: linux.resources.%s: not supported",
				  what);
	return 0;
}

static void gen_resources(yajl_gen g, const struct rt_spec *s)
{
	const struct cg_resources *r = &s->resources;
	hutch_json_gen_str(g, "resources");
	yajl_gen_map_open(g);
	gen_devices(g, s);
	hutch_json_gen_str(g, "memory");
	yajl_gen_map_open(g);
	gen_i64(g, "limit", r->mem_limit);
	gen_i64(g, "reservation", r->mem_reservation);
	gen_i64(g, "swap", r->mem_swap);
	gen_i64(g, "swappiness", r->mem_swappiness);
	gen_i64(g, "kernelTCP", r->mem_kernel_tcp);
	if (r->mem_disable_oom_killer)
		hutch_json_gen_bool(g, "disableOOMKiller", true);
	yajl_gen_map_close(g);
	hutch_json_gen_str(g, "cpu");
	yajl_gen_map_open(g);
	gen_i64(g, "shares", r->cpu_shares);
	gen_i64(g, "quota", r->cpu_quota);
	gen_i64(g, "period", r->cpu_period);
	gen_i64(g, "burst", r->cpu_burst);
	gen_i64(g, "idle", r->cpu_idle);
	gen_i64(g, "realtimeRuntime", r->cpu_rt_runtime);
	gen_i64(g, "realtimePeriod", r->cpu_rt_period);
	if (r->cpus)
		hutch_json_gen_kv(g, "cpus", r->cpus);
	if (r->mems)
		hutch_json_gen_kv(g, "mems", r->mems);
	yajl_gen_map_close(g);
	hutch_json_gen_str(g, "pids");
	yajl_gen_map_open(g);
	gen_i64(g, "limit", r->pids_limit);
	yajl_gen_map_close(g);
	if (r->n_unified) {
		hutch_json_gen_str(g, "unified");
		yajl_gen_map_open(g);
		for (size_t i = 0; i < r->n_unified; i++)
			hutch_json_gen_kv(g, r->unified[i].key, r->unified[i].value);
		yajl_gen_map_close(g);
	}
	yajl_gen_map_close(g);
}

/* The profile as the spec holds it: the built-in one (for the process's bounding set, as
 * rt_spec_compile_seccomp compiles it), config.json's own text, or one built in memory. */
static int gen_seccomp(yajl_gen g, const struct rt_spec *s, struct hutch_err *err)
{
	_cleanup_free_ char *text = NULL;
	if (s->seccomp_default)
		TRY(sc_default_profile_oci(s->process.caps.bounding, s->seccomp_extras, &text,
					   err));
	else if (!s->seccomp_json)
		text = sc_config_to_json(&s->seccomp, false);
	_cleanup_json_ yajl_val v = NULL;
	TRY(hutch_json_parse(text ? text : s->seccomp_json, "linux.seccomp", &v, err));
	hutch_json_gen_str(g, "seccomp");
	hutch_json_gen_value(g, v);
	return 0;
}

static int gen_linux(yajl_gen g, const struct rt_spec *s, struct hutch_err *err)
{
	if (s->n_devices || s->rootfs_propagation)
		return hutch_fail(err, EOPNOTSUPP, "spec writer: linux.%s: not supported",
				  s->n_devices ? "devices" : "rootfsPropagation");
	hutch_json_gen_str(g, "linux");
	yajl_gen_map_open(g);
	hutch_json_gen_str(g, "namespaces");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < s->n_namespaces; i++) {
		yajl_gen_map_open(g);
		hutch_json_gen_kv(g, "type", ns_type_name(s->namespaces[i].flag));
		if (s->namespaces[i].path)
			hutch_json_gen_kv(g, "path", s->namespaces[i].path);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	gen_idmaps(g, "uidMappings", s->uid_mappings, s->n_uid_mappings);
	gen_idmaps(g, "gidMappings", s->gid_mappings, s->n_gid_mappings);
	if (s->n_sysctls) {
		hutch_json_gen_str(g, "sysctl");
		yajl_gen_map_open(g);
		for (size_t i = 0; i < s->n_sysctls; i++)
			hutch_json_gen_kv(g, s->sysctls[i].key, s->sysctls[i].value);
		yajl_gen_map_close(g);
	}
	if (s->cgroups_path)
		hutch_json_gen_kv(g, "cgroupsPath", s->cgroups_path);
	if (s->has_resources) {
		TRY(check_resources(&s->resources, err));
		gen_resources(g, s);
	}
	if (s->has_seccomp)
		TRY(gen_seccomp(g, s, err));
	hutch_json_gen_strv(g, "maskedPaths", (const char *const *)s->masked_paths, SIZE_MAX);
	hutch_json_gen_strv(g, "readonlyPaths", (const char *const *)s->readonly_paths, SIZE_MAX);
	yajl_gen_map_close(g);
	return 0;
}

/* The kernel attributes (rt-spec-sched.c), which no spec built in memory has yet. */
static int check_kernel_attrs(const struct rt_spec *s, struct hutch_err *err)
{
	const char *f = NULL;
	if (s->has_time_offsets)
		f = "linux.timeOffsets";
	if (s->mempolicy.set)
		f = "linux.memoryPolicy";
	if (s->process.sched.set)
		f = "process.scheduler";
	if (s->process.ioprio.set)
		f = "process.ioPriority";
	if (s->has_personality)
		f = "linux.personality";
	if (f)
		return hutch_fail(err, EOPNOTSUPP, "spec writer: %s: not supported", f);
	return 0;
}

int rt_spec_write(const struct rt_spec *s, char **out, struct hutch_err *err)
{
	TRY(check_kernel_attrs(s, err));
	_cleanup_gen_ yajl_gen g = yajl_gen_alloc(NULL);
	yajl_gen_map_open(g);
	hutch_json_gen_kv(g, "ociVersion", s->oci_version ? s->oci_version : "1.0.2-dev");
	gen_process(g, &s->process);
	hutch_json_gen_str(g, "root");
	yajl_gen_map_open(g);
	hutch_json_gen_kv(g, "path", s->rootfs ? s->rootfs : s->root_path);
	hutch_json_gen_bool(g, "readonly", s->root_readonly);
	yajl_gen_map_close(g);
	if (s->hostname)
		hutch_json_gen_kv(g, "hostname", s->hostname);
	if (s->domainname)
		hutch_json_gen_kv(g, "domainname", s->domainname);
	gen_mounts(g, s);
	gen_hooks(g, s);
	TRY(gen_linux(g, s, err));
	if (s->n_annotations) {
		hutch_json_gen_str(g, "annotations");
		yajl_gen_map_open(g);
		for (size_t i = 0; i < s->n_annotations; i++)
			hutch_json_gen_kv(g, s->annotations[i].key, s->annotations[i].value);
		yajl_gen_map_close(g);
	}
	yajl_gen_map_close(g);
	*out = hutch_json_gen_finish(g, NULL);
	return 0;
}
