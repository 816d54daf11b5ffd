// SPDX-License-Identifier: Apache-2.0
/*
 * The sandbox report: one JSON object (docs/sandbox-report.schema.json, version 3) written
 * to --report FILE or --report-fd N when the sandbox ends, however it ends (a bad flag, a
 * busy lock, a missing image too), saying what ran, how it ended and why (failure, for a
 * reader that parses no text), what it used, and which isolation was applied. The file is
 * replaced whole (a temp file renamed over it), and an earlier run's is removed at the start.
 * Its directory is resolved once, when --report is given: the sandbox writes its workspace,
 * and a directory there swapped for a link must not take hutch's root writes elsewhere.
 */
#include "rt-sandbox.h"
#include "rt-sandbox-net.h"
#include "rt-sandbox-plan.h"
#include "rt-json.h"
#include "hutch-path.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>

static const char *const failures[] = {
	[RT_SB_FAIL_NONE] = NULL,
	[RT_SB_FAIL_BAD_OPTION] = "bad_option",
	[RT_SB_FAIL_LOCK_BUSY] = "lock_busy",
	[RT_SB_FAIL_IMAGE_MISSING] = "image_missing",
	[RT_SB_FAIL_SETUP] = "setup",
	[RT_SB_FAIL_EXEC] = "exec",
	[RT_SB_FAIL_TIMEOUT] = "timeout",
	[RT_SB_FAIL_OOM] = "oom",
	[RT_SB_FAIL_STOPPED] = "stopped",
	[RT_SB_FAIL_HUTCH_KILLED] = "hutch_killed",
};

static void gen_stamp(yajl_gen g, const char *key, const struct timespec *ts)
{
	char buf[HUTCH_UTC_MAX];
	hutch_utc_stamp(ts, true, buf);
	hutch_json_gen_kv(g, key, ts->tv_sec ? buf : NULL);
}

/* The image as given and as found: null in host mode, which runs none. */
static void gen_image(yajl_gen g, const struct rt_sb_opts *o, const struct rt_sb_plan *p)
{
	hutch_json_gen_str(g, "image");
	if (!o->image || o->isolation != RT_SB_ISO_NAMESPACES) {
		yajl_gen_null(g);
		return;
	}
	yajl_gen_map_open(g);
	hutch_json_gen_kv(g, "name", p && p->image_name ? p->image_name : o->image);
	hutch_json_gen_kv(g, "digest", p && p->image_digest[0] ? p->image_digest : NULL);
	yajl_gen_map_close(g);
}

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
	(void)o;
	hutch_json_gen_int(g, "uid", p->uid);
	hutch_json_gen_int(g, "gid", p->gid);
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
	hutch_json_gen_bool(g, "setid_bits_blocked", !rt_sb_root_inside(o) && !p->exec_unfiltered);
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

/* Rootless: which ids hutch's own namespace maps, and what --best-effort went without. */
static void gen_rootless(yajl_gen g, const struct rt_sb_plan *p)
{
	hutch_json_gen_str(g, "rootless");
	if (!p->rootless) {
		yajl_gen_null(g);
	} else {
		yajl_gen_map_open(g);
		hutch_json_gen_kv(g, "ids", p->single_id ? "one" : "subordinate");
		hutch_json_gen_kv(g, "one_id_because", p->single_id ? p->user.why : NULL);
		hutch_json_gen_bool(g, "cgroup", !p->no_cgroup);
		yajl_gen_map_close(g);
	}
	hutch_json_gen_str(g, "weakened");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < p->n_weakened; i++)
		hutch_json_gen_str(g, p->weakened[i]);
	yajl_gen_array_close(g);
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
	bool cg = !p->no_cgroup; /* rootless --best-effort: none applied (see "weakened") */
	gen_num_or_null(g, "memory_bytes", cg && o->memory > 0, (long long)o->memory);
	hutch_json_gen_str(g, "cpus");
	if (cg && o->cpus > 0)
		yajl_gen_double(g, o->cpus);
	else
		yajl_gen_null(g);
	gen_num_or_null(g, "pids", cg && o->pids > 0, o->pids);
	gen_num_or_null(g, "timeout_s", o->timeout > 0, (long long)o->timeout);
	yajl_gen_map_close(g);
	gen_rootless(g, p);
	hutch_json_gen_kv(g, "pid1", p->with_init ? "hutch-init" : "command");
	hutch_json_gen_kv(g, "landlock", "not applied (namespaces and a read-only root instead)");
	yajl_gen_map_close(g);
}

/* The limits the run hit (memory: the cgroup reached it, reclaiming or OOM-killing; pids: a
 * fork refused), and those set whose hits the runtime left no count of. Without figures (no
 * cgroup, or nothing ran) neither list names one. */
static void gen_limits(yajl_gen g, const struct rt_sb_opts *o, const struct rt_sb_result *r)
{
	const struct {
		const char *name;
		bool set;
		int64_t n;
	} l[] = {
		{ "memory", o->memory > 0, r->oom_killed ? 1 : r->mem_hits },
		{ "pids", o->pids > 0, r->pids_refused },
	};
	hutch_json_gen_str(g, "limits_hit");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < ARRAY_SIZE(l); i++)
		if (r->has_stats && l[i].set && l[i].n > 0)
			hutch_json_gen_str(g, l[i].name);
	if (r->timed_out)
		hutch_json_gen_str(g, "timeout");
	yajl_gen_array_close(g);
	hutch_json_gen_str(g, "limits_unknown");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < ARRAY_SIZE(l); i++)
		if (r->has_stats && l[i].set && l[i].n < 0)
			hutch_json_gen_str(g, l[i].name);
	yajl_gen_array_close(g);
}

static char *gen_report(const struct rt_sb_opts *o, const struct rt_sb_plan *p,
			const struct rt_sb_result *r, size_t *len)
{
	_cleanup_gen_ yajl_gen g = yajl_gen_alloc(NULL);
	const struct cg_stats *s = &r->stats;
	yajl_gen_map_open(g);
	hutch_json_gen_int(g, "version", 3);
	hutch_json_gen_kv(g, "id", r->id);
	hutch_json_gen_int(g, "exit_code", r->exit_code);
	hutch_json_gen_kv(g, "failure", failures[r->failure]);
	gen_num_or_null(g, "signal", r->signal > 0, r->signal);
	hutch_json_gen_bool(g, "timed_out", r->timed_out);
	hutch_json_gen_bool(g, "oom_killed", r->oom_killed);
	gen_num_or_null(g, "oom_kills", r->has_stats && r->oom_kills >= 0, r->oom_kills);
	gen_limits(g, o, r);
	hutch_json_gen_int(g, "wall_ms", (long long)r->wall_ms);
	gen_stamp(g, "started_at", &r->started);
	gen_stamp(g, "ended_at", &r->ended);
	hutch_json_gen_int(g, "lock_wait_ms", (long long)r->lock_wait_ms);
	gen_num_or_null(g, "cpu_user_ms", r->has_stats, (long long)(s->cpu_user_ns / 1000000));
	gen_num_or_null(g, "cpu_sys_ms", r->has_stats, (long long)(s->cpu_system_ns / 1000000));
	gen_num_or_null(g, "memory_peak_bytes", r->has_stats && s->mem_max_usage,
			(long long)s->mem_max_usage);
	gen_num_or_null(g, "pids_peak", r->has_stats && r->pids_peak, (long long)r->pids_peak);
	gen_num_or_null(g, "setid_bits_cleared", r->setid_walked, (long long)r->setid_cleared);
	gen_num_or_null(g, "device_nodes_removed", r->setid_walked, (long long)r->devices_removed);
	hutch_json_gen_kv(g, "runtime", r->runtime);
	if (o->pool) { /* --pool: whether a pooled sandbox ran it, and if not why */
		hutch_json_gen_str(g, "pool");
		yajl_gen_map_open(g);
		hutch_json_gen_kv(g, "name", o->pool);
		hutch_json_gen_bool(g, "pooled", !o->pool_why);
		hutch_json_gen_kv(g, "cold_because", o->pool_why);
		yajl_gen_map_close(g);
	}
	gen_image(g, o, p);
	if (r->host.active)
		rt_sb_gen_host(g, o, &r->host);
	else if (p)
		gen_isolation(g, o, p);
	rt_sb_gen_egress(g, o, &r->egress);
	hutch_json_gen_kv(g, "error", r->error);
	yajl_gen_map_close(g);
	return hutch_json_gen_finish(g, len);
}

/* What stands at the report's name: nothing, a file or a link (0: replaced, never followed),
 * an fd's link (1: /dev/stdout would become a file, /proc's can't), or something else. */
static int check_name(int dirfd, const char *name, const char *shown, struct hutch_err *err)
{
	struct stat st;
	struct statfs fs;
	if (fstatfs(dirfd, &fs) == 0 && fs.f_type == PROC_SUPER_MAGIC)
		return 1; /* /dev/fd/N, /proc/self/fd/N */
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : hutch_fail_errno(err, errno, "--report %s", shown);
	if (S_ISREG(st.st_mode))
		return 0;
	if (S_ISLNK(st.st_mode)) {
		char target[8];
		ssize_t n = readlinkat(dirfd, name, target, sizeof(target));
		return n >= 6 && !memcmp(target, "/proc/", 6) ? 1 : 0;
	}
	const char *kind = S_ISDIR(st.st_mode)	  ? "a directory"
			   : S_ISFIFO(st.st_mode) ? "a FIFO"
			   : S_ISSOCK(st.st_mode) ? "a socket"
						  : "a device";
	return hutch_fail(err, EINVAL, "--report %s: %s, not a regular file", shown, kind);
}

int rt_sb_set_report(void *p, const char *v, struct hutch_err *err)
{
	struct rt_sb_opts *o = p;
	_cleanup_free_ char *name = NULL;
	_cleanup_close_ int dirfd = hutch_chase("--report", v, HUTCH_CHASE_PARENT, &name, err);
	if (dirfd < 0)
		return dirfd;
	_cleanup_free_ char *dir = hutch_fd_realpath(dirfd);
	_cleanup_free_ char *shown = hutch_xasprintf("%s/%s", strcmp(dir, "/") ? dir : "", name);
	int r = check_name(dirfd, name, shown, err);
	if (r < 0)
		return r;
	if (r > 0) /* renamed over, /dev/stdout would be a file; /proc's can't be replaced */
		return hutch_fail(err, EINVAL, "--report %s: not a file (to write to an fd: %s)", v,
				  "--report-fd N");
	free(o->report);
	free(o->report_name);
	if (o->report_dir_fd >= 0)
		close(o->report_dir_fd);
	o->report = steal_ptr(shown);
	o->report_name = steal_ptr(name);
	o->report_dir_fd = steal_fd(dirfd);
	return 0;
}

/* A write that failed in the directory held: whatever is at the name goes (the sandbox may
 * have written a report of its own there, in a workspace it then filled: a reader must find
 * none rather than that one), and the error says where that directory is now, if it moved. */
static int report_failed(const struct rt_sb_opts *o, struct hutch_err *err)
{
	int gone = unlinkat(o->report_dir_fd, o->report_name, 0) == 0 || errno == ENOENT;
	size_t used = strlen(err->msg);
	snprintf(err->msg + used, sizeof(err->msg) - used, "%s%s",
		 gone ? "; nothing is left at its name" : "; what is at its name stays: ",
		 gone ? "" : strerror(errno));
	_cleanup_free_ char *now = hutch_fd_realpath(o->report_dir_fd);
	size_t n = strlen(o->report) - strlen(o->report_name) - 1;
	if (strlen(now) == n && !strncmp(now, o->report, n))
		return hutch_err_prefix(err, "--report %s: ", o->report);
	return hutch_err_prefix(
		err, "--report %s (its directory, resolved at the start, is now %s): ", o->report,
		now);
}

/* SIGPIPE ignored around the write: a reader that is gone is an error to report, not the
 * end of hutch before the --report file is written and the sandbox is cleaned up. */
static int write_fd(int fd, const char *json, size_t len, struct hutch_err *err)
{
	struct sigaction ign = { .sa_handler = SIG_IGN }, old;
	sigaction(SIGPIPE, &ign, &old);
	int w = hutch_write_all(fd, json, len);
	sigaction(SIGPIPE, &old, NULL);
	return w < 0 ? hutch_fail_errno(err, w, "--report-fd %d", fd) : 0;
}

int rt_sb_write_report(const struct rt_sb_opts *o, const struct rt_sb_plan *p,
		       const struct rt_sb_result *r, struct hutch_err *err)
{
	if (!o->report && o->report_fd < 0)
		return 0;
	if (o->report && o->report_dir_fd < 0) /* set by a C caller without rt_sb_set_report */
		return hutch_fail(err, EBADF, "--report %s: not opened", o->report);
	size_t len;
	_cleanup_free_ char *json = gen_report(o, p, r, &len);
	json = hutch_xrealloc(json, len + 2);
	json[len++] = '\n';
	int ret = 0;
	/* Whole or not at all: a reader never sees half a report. Written in the directory
	 * resolved when --report was given, never through its path again. */
	if (o->report &&
	    hutch_write_atomic_at(o->report_dir_fd, o->report_name, json, len, 0600, err) < 0)
		ret = report_failed(o, err);
	struct hutch_err e = { 0 };
	if (o->report_fd >= 0 && write_fd(o->report_fd, json, len, &e) < 0 && ret == 0) {
		*err = e;
		ret = -e.code;
	}
	return ret;
}

void rt_sb_clear_report(const struct rt_sb_opts *o)
{
	/* The name itself (a link too, never what it points to), in the directory held. Absent
	 * already is fine; something else the write names. */
	if (o->report_dir_fd >= 0)
		unlinkat(o->report_dir_fd, o->report_name, 0);
}
