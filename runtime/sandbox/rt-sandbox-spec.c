// SPDX-License-Identifier: Apache-2.0
/*
 * The sandbox as an OCI config, built in memory. The same document runs natively (parsed by
 * rt-spec.c) and is written to a delegate runtime's bundle, so both get exactly the same
 * mounts, namespaces, id maps, limits and hardening.
 */
#include "rt-sandbox.h"
#include "rt-json.h"

#include <stdio.h>
#include <string.h>

#define SB_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#define ID_SPAN RT_SB_ID_SPAN

/* Docker's default set, for --as-root (package installs need chown, setuid, ...). */
static const char *const root_caps[] = {
	"CAP_CHOWN",   "CAP_DAC_OVERRIDE", "CAP_FSETID",	   "CAP_FOWNER",
	"CAP_MKNOD",   "CAP_NET_RAW",	   "CAP_SETGID",	   "CAP_SETUID",
	"CAP_SETFCAP", "CAP_SETPCAP",	   "CAP_NET_BIND_SERVICE", "CAP_SYS_CHROOT",
	"CAP_KILL",    "CAP_AUDIT_WRITE",
};

static size_t strv_len(const char *const *v)
{
	size_t n = 0;
	while (v[n])
		n++;
	return n;
}

static void gen_int(yajl_gen g, const char *key, long long v)
{
	hutch_json_gen_str(g, key);
	yajl_gen_integer(g, v);
}

/* One id of disk as host (an idmapped mount's "on-disk X is seen as Y"): key [{...}]. */
static void gen_one_map(yajl_gen g, const char *key, uint32_t disk, uint32_t host)
{
	hutch_json_gen_str(g, key);
	yajl_gen_array_open(g);
	yajl_gen_map_open(g);
	hutch_json_gen_str(g, "containerID");
	yajl_gen_integer(g, disk);
	hutch_json_gen_str(g, "hostID");
	yajl_gen_integer(g, host);
	hutch_json_gen_str(g, "size");
	yajl_gen_integer(g, 1);
	yajl_gen_map_close(g);
	yajl_gen_array_close(g);
}

/* A bind of src whose on-disk uid:gid the sandbox user (host uid:gid of p) writes as. */
static void gen_idmapped(yajl_gen g, const char *dst, const char *src, uid_t uid, gid_t gid,
			 const struct rt_sb_plan *p)
{
	static const char *const opts[] = { "rbind", "nosuid", "nodev", "rw", "ridmap" };
	yajl_gen_map_open(g);
	hutch_json_gen_kv(g, "destination", dst);
	hutch_json_gen_kv(g, "type", "bind");
	hutch_json_gen_kv(g, "source", src);
	hutch_json_gen_strv(g, "options", opts, ARRAY_SIZE(opts));
	gen_one_map(g, "uidMappings", uid, p->host_uid);
	gen_one_map(g, "gidMappings", gid, p->host_gid);
	yajl_gen_map_close(g);
}

static void gen_mount(yajl_gen g, const char *dst, const char *type, const char *src,
		      const char *options)
{
	char buf[512];
	const char *opts[16];
	size_t n = 0;
	snprintf(buf, sizeof(buf), "%s", options);
	for (char *save = NULL, *o = strtok_r(buf, ",", &save); o && n < ARRAY_SIZE(opts);
	     o = strtok_r(NULL, ",", &save))
		opts[n++] = o;
	yajl_gen_map_open(g);
	hutch_json_gen_kv(g, "destination", dst);
	hutch_json_gen_kv(g, "type", type);
	hutch_json_gen_kv(g, "source", src);
	hutch_json_gen_strv(g, "options", opts, n);
	yajl_gen_map_close(g);
}

static void gen_env(yajl_gen g, const struct rt_sb_opts *o)
{
	char home[64], term[128];
	const char *host_term = getenv("TERM");
	snprintf(home, sizeof(home), "HOME=%s",
		 o->workspace		? "/workspace"
		 : rt_sb_root_inside(o) ? "/root"
					: "/tmp");
	snprintf(term, sizeof(term), "TERM=%s", host_term && *host_term ? host_term : "xterm");
	const char *base[] = { "PATH=" SB_PATH, home, "TMPDIR=/tmp", "LANG=C.UTF-8", term };
	hutch_json_gen_str(g, "env");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < ARRAY_SIZE(base) - (o->tty ? 0 : 1); i++) {
		size_t k = strcspn(base[i], "=");
		bool overridden = false;
		for (size_t j = 0; j < o->n_env; j++)
			overridden |= !strncmp(o->env[j], base[i], k + 1);
		if (!overridden)
			hutch_json_gen_str(g, base[i]);
	}
	for (size_t j = 0; j < o->n_env; j++)
		hutch_json_gen_str(g, o->env[j]);
	yajl_gen_array_close(g);
}

static void gen_process(yajl_gen g, const struct rt_sb_opts *o)
{
	uid_t uid = rt_sb_root_inside(o) ? 0 : o->uid;
	gid_t gid = rt_sb_root_inside(o) ? 0 : o->gid;
	hutch_json_gen_str(g, "process");
	yajl_gen_map_open(g);
	hutch_json_gen_str(g, "terminal");
	yajl_gen_bool(g, o->tty);
	hutch_json_gen_str(g, "user");
	yajl_gen_map_open(g);
	gen_int(g, "uid", uid);
	gen_int(g, "gid", gid);
	yajl_gen_map_close(g);
	hutch_json_gen_strv(g, "args", (const char *const *)o->command, o->n_command);
	gen_env(g, o);
	hutch_json_gen_kv(g, "cwd", o->cwd ? o->cwd : o->workspace ? "/workspace" : "/");
	hutch_json_gen_str(g, "capabilities");
	yajl_gen_map_open(g);
	static const char *const sets[] = { "bounding", "effective", "permitted" };
	for (size_t i = 0; i < ARRAY_SIZE(sets); i++)
		hutch_json_gen_strv(g, sets[i], root_caps,
				    rt_sb_root_inside(o) ? ARRAY_SIZE(root_caps) : 0);
	hutch_json_gen_strv(g, "inheritable", NULL, 0);
	hutch_json_gen_strv(g, "ambient", NULL, 0);
	yajl_gen_map_close(g);
	hutch_json_gen_str(g, "noNewPrivileges");
	yajl_gen_bool(g, 1);
	yajl_gen_map_close(g);
}

static void gen_mounts(yajl_gen g, const struct rt_sb_opts *o, const struct rt_sb_plan *p)
{
	char buf[128];
	hutch_json_gen_str(g, "mounts");
	yajl_gen_array_open(g);
	gen_mount(g, "/proc", "proc", "proc", "nosuid,noexec,nodev");
	gen_mount(g, "/dev", "tmpfs", "tmpfs", "nosuid,strictatime,mode=755,size=65536k");
	gen_mount(g, "/dev/pts", "devpts", "devpts",
		  "nosuid,noexec,newinstance,ptmxmode=0666,mode=0620,gid=5");
	gen_mount(g, "/dev/shm", "tmpfs", "shm", "nosuid,noexec,nodev,mode=1777,size=65536k");
	gen_mount(g, "/dev/mqueue", "mqueue", "mqueue", "nosuid,noexec,nodev");
	gen_mount(g, "/sys", "sysfs", "sysfs", "nosuid,noexec,nodev,ro");
	gen_mount(g, "/sys/fs/cgroup", "cgroup", "cgroup", "nosuid,noexec,nodev,relatime,ro");
	for (size_t i = 0; i < o->n_tmpfs; i++) {
		snprintf(buf, sizeof(buf), "nosuid,nodev,mode=1777,size=%llu",
			 (unsigned long long)o->tmpfs[i].size);
		gen_mount(g, o->tmpfs[i].path, "tmpfs", "tmpfs", buf);
	}
	/* Idmapped mounts: natively, binds with their maps (hutch makes the trees); a delegate
	 * finds them in the rootfs already (rt_sb_attach_idmapped), as few runtimes idmap. */
	if (o->workspace && p->ws_idmapped && !p->delegated)
		gen_idmapped(g, "/workspace", o->workspace, p->write_uid, p->write_gid, p);
	else if (o->workspace && !p->ws_idmapped)
		gen_mount(g, "/workspace", "bind", o->workspace, "rbind,nosuid,nodev,rw");
	for (size_t i = 0; i < o->n_binds; i++)
		if (p->binds[i].idmapped && !p->delegated)
			gen_idmapped(g, o->binds[i].dst, o->binds[i].src, p->binds[i].uid,
				     p->binds[i].gid, p);
		else if (!p->binds[i].idmapped)
			gen_mount(g, o->binds[i].dst, "bind", o->binds[i].src,
				  o->binds[i].ro ? "rbind,nosuid,nodev,ro"
						 : "rbind,nosuid,nodev,rw");
	if (o->network == RT_SB_NET_HOST && access("/etc/resolv.conf", R_OK) == 0)
		gen_mount(g, "/etc/resolv.conf", "bind", "/etc/resolv.conf",
			  "bind,nosuid,nodev,ro");
	static const char *const net_files[] = { "resolv.conf", "hosts", "hostname" };
	for (size_t i = 0; o->network == RT_SB_NET_BRIDGE && p->net_etc && i < 3; i++) {
		char dst[64], src[512]; /* generated in the scratch tmpfs, never in the image */
		snprintf(dst, sizeof(dst), "/etc/%s", net_files[i]);
		snprintf(src, sizeof(src), "%s/%s", p->net_etc, net_files[i]);
		gen_mount(g, dst, "bind", src, "bind,nosuid,nodev,noexec,ro");
	}
	yajl_gen_array_close(g);
}

/* [0, inside) and (inside, 65535] go to the subordinate range; inside -> host. With the full
 * range (--as-root) inside is 0 and host the range's start: one line. */
static void gen_map(yajl_gen g, const char *key, uint32_t inside, uint32_t host, uint32_t other)
{
	hutch_json_gen_str(g, key);
	yajl_gen_array_open(g);
	uint32_t v[3][3] = { { 0, other, inside },
			     { inside, host, 1 },
			     { inside + 1, other + inside + 1, ID_SPAN - inside - 1 } };
	if (host == other + inside) /* contiguous: one line */
		v[0][2] = 0, v[1][2] = ID_SPAN, v[1][0] = 0, v[1][1] = other, v[2][2] = 0;
	for (size_t i = 0; i < 3; i++) {
		if (v[i][2] == 0)
			continue;
		yajl_gen_map_open(g);
		gen_int(g, "containerID", v[i][0]);
		gen_int(g, "hostID", v[i][1]);
		gen_int(g, "size", v[i][2]);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
}

static void gen_resources(yajl_gen g, const struct rt_sb_opts *o)
{
	hutch_json_gen_str(g, "resources");
	yajl_gen_map_open(g);
	hutch_json_gen_str(g, "devices");
	yajl_gen_array_open(g);
	yajl_gen_map_open(g);
	hutch_json_gen_str(g, "allow");
	yajl_gen_bool(g, 0);
	hutch_json_gen_kv(g, "access", "rwm");
	yajl_gen_map_close(g);
	yajl_gen_array_close(g);
	if (o->memory) {
		hutch_json_gen_str(g, "memory");
		yajl_gen_map_open(g);
		gen_int(g, "limit", (long long)o->memory);
		yajl_gen_map_close(g);
	}
	if (o->cpus > 0) {
		hutch_json_gen_str(g, "cpu");
		yajl_gen_map_open(g);
		gen_int(g, "quota", (long long)(o->cpus * 100000));
		gen_int(g, "period", 100000);
		yajl_gen_map_close(g);
	}
	if (o->pids) {
		hutch_json_gen_str(g, "pids");
		yajl_gen_map_open(g);
		gen_int(g, "limit", o->pids);
		yajl_gen_map_close(g);
	}
	yajl_gen_map_close(g);
}

static void gen_linux(yajl_gen g, const struct rt_sb_opts *o, const struct rt_sb_plan *p,
		      const char *id)
{
	const char *ns[8] = { "pid", "ipc", "uts", "mount", "cgroup" };
	size_t n = 5;
	if (p->userns)
		ns[n++] = "user";
	if (o->network != RT_SB_NET_HOST) /* bridge: hutch wires eth0 in after create */
		ns[n++] = "network";
	hutch_json_gen_str(g, "linux");
	yajl_gen_map_open(g);
	hutch_json_gen_str(g, "namespaces");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < n; i++) {
		yajl_gen_map_open(g);
		hutch_json_gen_kv(g, "type", ns[i]);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	if (p->userns) {
		bool root = o->as_root;
		gen_map(g, "uidMappings", root ? 0 : o->uid, p->host_uid, p->sub_uid);
		gen_map(g, "gidMappings", root ? 0 : o->gid, p->host_gid, p->sub_gid);
	}
	(void)id;
	hutch_json_gen_kv(g, "cgroupsPath", p->cgroups_path);
	gen_resources(g, o);
	if (p->seccomp_json) {
		_cleanup_json_ yajl_val sc = NULL;
		struct hutch_err e = { 0 };
		if (hutch_json_parse(p->seccomp_json, "seccomp profile", &sc, &e) == 0) {
			hutch_json_gen_str(g, "seccomp");
			hutch_json_gen_value(g, sc);
		}
	}
	hutch_json_gen_strv(g, "maskedPaths", rt_default_masked, strv_len(rt_default_masked));
	hutch_json_gen_strv(g, "readonlyPaths", rt_default_readonly, strv_len(rt_default_readonly));
	yajl_gen_map_close(g);
}

char *rt_sb_spec_json(const struct rt_sb_opts *o, const struct rt_sb_plan *p, const char *id,
		      size_t *len)
{
	_cleanup_gen_ yajl_gen g = yajl_gen_alloc(NULL);
	yajl_gen_map_open(g);
	hutch_json_gen_kv(g, "ociVersion", "1.0.2-dev");
	gen_process(g, o);
	hutch_json_gen_str(g, "root");
	yajl_gen_map_open(g);
	hutch_json_gen_kv(g, "path", p->rootfs);
	hutch_json_gen_str(g, "readonly");
	yajl_gen_bool(g, !rt_sb_root_inside(o));
	yajl_gen_map_close(g);
	hutch_json_gen_kv(g, "hostname", o->hostname ? o->hostname : "sandbox");
	gen_mounts(g, o, p);
	gen_linux(g, o, p, id);
	yajl_gen_map_close(g);
	return hutch_json_gen_finish(g, len);
}
