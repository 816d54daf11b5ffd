// SPDX-License-Identifier: Apache-2.0
/*
 * The sandbox report: one JSON object (docs/sandbox-report.schema.json, version 1) written
 * to --report FILE or --report-fd N when the sandbox ends, saying what ran, how it ended,
 * what it used, and which isolation was applied.
 */
#include "rt-sandbox.h"
#include "rt-json.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>

static void gen_num_or_null(yajl_gen g, const char *key, bool have, long long v)
{
	hutch_json_gen_str(g, key);
	if (have)
		yajl_gen_integer(g, v);
	else
		yajl_gen_null(g);
}

static void gen_user(yajl_gen g, const struct rt_sb_opts *o, const struct rt_sb_plan *p)
{
	hutch_json_gen_str(g, "user");
	yajl_gen_map_open(g);
	hutch_json_gen_int(g, "uid", rt_sb_root_inside(o) ? 0 : o->uid);
	hutch_json_gen_int(g, "gid", rt_sb_root_inside(o) ? 0 : o->gid);
	hutch_json_gen_bool(g, "user_namespace", p->userns);
	if (p->userns) {
		hutch_json_gen_int(g, "host_uid", p->host_uid);
		hutch_json_gen_int(g, "host_gid", p->host_gid);
		hutch_json_gen_int(g, "other_ids_host_start", p->sub_uid);
		hutch_json_gen_int(g, "other_gids_host_start", p->sub_gid);
	} else {
		hutch_json_gen_kv(
			g, "warning",
			"--host-root: no user namespace: root inside is host root with the "
			"default container capabilities");
	}
	/* Who owns, on the host, what the sandbox leaves in its workspace. */
	hutch_json_gen_str(g, "writes_as");
	yajl_gen_map_open(g);
	hutch_json_gen_int(g, "uid", p->userns ? p->write_uid : 0);
	hutch_json_gen_int(g, "gid", p->userns ? p->write_gid : 0);
	hutch_json_gen_bool(g, "idmapped", p->ws_idmapped);
	hutch_json_gen_bool(g, "workspace_chowned", p->ws_chowned);
	hutch_json_gen_bool(g, "setid_bits_blocked", !rt_sb_root_inside(o));
	yajl_gen_map_close(g);
	hutch_json_gen_str(g, "binds");
	yajl_gen_array_open(g);
	for (size_t i = 0; p->binds && i < o->n_binds; i++) {
		if (o->binds[i].ro)
			continue;
		yajl_gen_map_open(g);
		hutch_json_gen_kv(g, "destination", o->binds[i].dst);
		hutch_json_gen_int(g, "uid", p->userns ? p->binds[i].uid : 0);
		hutch_json_gen_int(g, "gid", p->userns ? p->binds[i].gid : 0);
		hutch_json_gen_bool(g, "idmapped", p->binds[i].idmapped);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	yajl_gen_map_close(g);
}

static void gen_isolation(yajl_gen g, const struct rt_sb_opts *o, const struct rt_sb_plan *p)
{
	static const char *const ns_all[] = { "pid",	"ipc",	"uts",	  "mount",
					      "cgroup", "user", "network" };
	hutch_json_gen_str(g, "isolation");
	yajl_gen_map_open(g);
	hutch_json_gen_str(g, "namespaces");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < ARRAY_SIZE(ns_all); i++)
		if ((i != 5 || p->userns) && (i != 6 || o->network != RT_SB_NET_HOST))
			hutch_json_gen_str(g, ns_all[i]);
	yajl_gen_array_close(g);
	gen_user(g, o, p);
	hutch_json_gen_kv(g, "capabilities",
			  o->as_root	 ? "container-default, in the user namespace"
			  : o->host_root ? "container-default, host"
					 : "none");
	hutch_json_gen_bool(g, "no_new_privs", true);
	hutch_json_gen_kv(g, "seccomp", "default");
	hutch_json_gen_bool(g, "read_only_root", !rt_sb_root_inside(o));
	hutch_json_gen_bool(g, "throwaway_layer", p->layered);
	hutch_json_gen_kv(g, "rootfs",
			  p->rootfs_copy ? "copy (overlayfs unavailable)"
			  : p->layered	 ? "overlay"
					 : "directory");
	static const char *const nets[] = { "none", "host", "bridge" };
	hutch_json_gen_kv(g, "network", nets[o->network]);
	if (o->network == RT_SB_NET_BRIDGE && p->net_address)
		hutch_json_gen_kv(g, "network_address", p->net_address);
	hutch_json_gen_str(g, "limits");
	yajl_gen_map_open(g);
	gen_num_or_null(g, "memory_bytes", o->memory > 0, (long long)o->memory);
	hutch_json_gen_str(g, "cpus");
	if (o->cpus > 0)
		yajl_gen_double(g, o->cpus);
	else
		yajl_gen_null(g);
	gen_num_or_null(g, "pids", o->pids > 0, o->pids);
	gen_num_or_null(g, "timeout_s", o->timeout > 0, (long long)o->timeout);
	yajl_gen_map_close(g);
	hutch_json_gen_kv(g, "pid1", p->with_init ? "hutch-init" : "command");
	hutch_json_gen_kv(g, "landlock", "not applied (namespaces and a read-only root instead)");
	yajl_gen_map_close(g);
}

static char *gen_report(const struct rt_sb_opts *o, const struct rt_sb_plan *p,
			const struct rt_sb_result *r, size_t *len)
{
	_cleanup_gen_ yajl_gen g = yajl_gen_alloc(NULL);
	const struct cg_stats *s = &r->stats;
	yajl_gen_map_open(g);
	hutch_json_gen_int(g, "version", 1);
	hutch_json_gen_int(g, "exit_code", r->exit_code);
	gen_num_or_null(g, "signal", r->signal > 0, r->signal);
	hutch_json_gen_bool(g, "timed_out", r->timed_out);
	hutch_json_gen_bool(g, "oom_killed", r->oom_killed);
	hutch_json_gen_int(g, "wall_ms", (long long)r->wall_ms);
	gen_num_or_null(g, "cpu_user_ms", r->has_stats, (long long)(s->cpu_user_ns / 1000000));
	gen_num_or_null(g, "cpu_sys_ms", r->has_stats, (long long)(s->cpu_system_ns / 1000000));
	gen_num_or_null(g, "memory_peak_bytes", r->has_stats && s->mem_max_usage,
			(long long)s->mem_max_usage);
	gen_num_or_null(g, "pids_peak", r->has_stats && r->pids_peak, (long long)r->pids_peak);
	hutch_json_gen_kv(g, "runtime", r->runtime);
	if (r->host.active)
		rt_sb_gen_host(g, o, &r->host);
	else if (p)
		gen_isolation(g, o, p);
	hutch_json_gen_kv(g, "error", r->error);
	yajl_gen_map_close(g);
	return hutch_json_gen_finish(g, len);
}

int rt_sb_write_report(const struct rt_sb_opts *o, const struct rt_sb_plan *p,
		       const struct rt_sb_result *r, struct hutch_err *err)
{
	if (!o->report && o->report_fd < 0)
		return 0;
	size_t len;
	_cleanup_free_ char *json = gen_report(o, p, r, &len);
	json = hutch_xrealloc(json, len + 2);
	json[len++] = '\n';
	if (o->report_fd >= 0) {
		int w = hutch_write_all(o->report_fd, json, len);
		if (w < 0)
			return hutch_fail_errno(err, w, "--report-fd %d", o->report_fd);
	}
	if (o->report) {
		_cleanup_close_ int fd =
			open(o->report, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd < 0)
			return hutch_fail_errno(err, errno, "--report %s", o->report);
		int w = hutch_write_all(fd, json, len);
		if (w < 0)
			return hutch_fail_errno(err, w, "--report %s", o->report);
	}
	return 0;
}
