// SPDX-License-Identifier: Apache-2.0
/*
 * The sandbox as a typed OCI spec (struct rt_spec), built from its options and plan with no
 * JSON in between. Natively, create runs it as it runs a parsed config.json; a delegate gets
 * it written out by rt_spec_write. Both get the same mounts, namespaces, id maps, limits and
 * hardening, and rt_spec_check holds it to the checks a parsed config passes.
 */
#include "rt-sandbox.h"
#include "rt-spec-build.h"
#include "rt-sandbox-plan.h"

#include <sched.h>
#include <stdio.h>
#include <string.h>

#define SB_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#define ID_SPAN RT_SB_ID_SPAN

/*
 * Docker's default set, for --as-root and --host-root (package installs need chown, setuid,
 * ...), but CAP_NET_RAW, as podman leaves it out: AF_PACKET and raw sockets queue what they
 * receive in memory no cgroup is charged for (a 32m sandbox held 512 MiB, the hog's stop, of
 * AF_PACKET queues fed by loopback), and on --network bridge they could forge frames to the
 * sandboxes beside it. Package installs don't need it; ping, which does without ICMP
 * sockets, is not given those either (see docs/design.md).
 */
static const char *const root_caps[] = {
	"CAP_CHOWN",	   "CAP_DAC_OVERRIDE",	   "CAP_FSETID",     "CAP_FOWNER",
	"CAP_MKNOD",	   "CAP_SETGID",	   "CAP_SETUID",     "CAP_SETFCAP",
	"CAP_SETPCAP",	   "CAP_NET_BIND_SERVICE", "CAP_SYS_CHROOT", "CAP_KILL",
	"CAP_AUDIT_WRITE",
};

/* Without root inside, no setuid or setgid file: what the sandbox leaves in its workspace or
 * a bind could otherwise give a local user the id it wrote as. Root inside installs packages,
 * whose setuid files land in the throw-away layer. */
static unsigned seccomp_extras(const struct rt_sb_opts *o, const struct rt_sb_plan *p)
{
	return (rt_sb_root_inside(o) ? 0 : SC_DEFAULT_NO_SETID) |
	       (p->delegated ? SC_DEFAULT_NO_I386 : 0);
}

/* Whether KEY= of entry kv is set in v. */
static bool env_has(char *const *v, size_t n, const char *kv)
{
	size_t k = strcspn(kv, "=");
	for (size_t j = 0; j < n; j++)
		if (!strncmp(v[j], kv, k) && (v[j][k] == '=' || !v[j][k]))
			return true;
	return false;
}

/* The base environment, then the image's Env, then the options' own: each entry unless a
 * later one sets its key (the image's PATH replaces hutch's, --env replaces both). */
char **rt_sb_plan_env(const struct rt_sb_opts *o, const struct rt_sb_plan *sp)
{
	size_t n_img = sp->image_env ? hutch_strv_len((const char *const *)sp->image_env) : 0;
	char home[64], term[128];
	const char *host_term = getenv("TERM");
	snprintf(home, sizeof(home), "HOME=%s",
		 o->workspace		? "/workspace"
		 : rt_sb_root_inside(o) ? "/root"
					: "/tmp");
	snprintf(term, sizeof(term), "TERM=%s", host_term && *host_term ? host_term : "xterm");
	const char *base[] = { "PATH=" SB_PATH, home, "TMPDIR=/tmp", "LANG=C.UTF-8", term };
	char **env = hutch_xcalloc(1, sizeof(char *));
	size_t n = 0;
	for (size_t i = 0; i < ARRAY_SIZE(base) - (o->tty ? 0 : 1); i++)
		if (!env_has(sp->image_env, n_img, base[i]) && !env_has(o->env, o->n_env, base[i]))
			hutch_strv_push(&env, &n, base[i]);
	for (size_t j = 0; j < n_img; j++)
		if (!env_has(o->env, o->n_env, sp->image_env[j]))
			hutch_strv_push(&env, &n, sp->image_env[j]);
	for (size_t j = 0; j < o->n_env; j++)
		hutch_strv_push(&env, &n, o->env[j]);
	return env;
}

static void plan_process(const struct rt_sb_opts *o, const struct rt_sb_plan *sp,
			 struct rt_process *p)
{
	bool root = rt_sb_root_inside(o);
	p->terminal = o->tty;
	p->user.uid = sp->uid;
	p->user.gid = sp->gid;
	p->args = hutch_strv_dup((const char *const *)sp->argv);
	p->env = rt_sb_plan_env(o, sp);
	p->cwd = hutch_xstrdup(sp->cwd);
	p->has_caps = true;
	for (size_t i = 0; root && i < ARRAY_SIZE(root_caps); i++)
		p->caps.bounding |= UINT64_C(1) << ns_cap_from_name(root_caps[i]);
	p->caps.effective = p->caps.permitted = p->caps.bounding;
	p->no_new_privs = true;
}

/* One id on disk as one host id: an idmapped bind's "on-disk X is seen as Y". */
static struct ns_idmap *one_map(uint32_t disk, uint32_t host)
{
	struct ns_idmap *m = hutch_xcalloc(1, sizeof(*m));
	*m = (struct ns_idmap){ .container_id = disk, .host_id = host, .size = 1 };
	return m;
}

/* A bind of src whose on-disk uid:gid the sandbox user (host uid:gid of p) writes as. */
static int add_idmapped(struct rt_spec *s, const char *dst, const char *src, uid_t uid, gid_t gid,
			const struct rt_sb_plan *p, struct hutch_err *err)
{
	TRY(rt_spec_add_mount(s, dst, "bind", src, "rbind,nosuid,nodev,rw,ridmap", err));
	struct ns_mount *m = &s->mounts[s->n_mounts - 1];
	m->uid_map = one_map(uid, p->host_uid);
	m->gid_map = one_map(gid, p->host_gid);
	m->n_uid_map = m->n_gid_map = 1;
	m->idmap = true;
	return 0;
}

/* The kernel's file systems: what runc's default config mounts. */
static const struct {
	const char *dst, *type, *src, *options;
} kernel_mounts[] = {
	{ "/proc", "proc", "proc", "nosuid,noexec,nodev" },
	{ "/dev", "tmpfs", "tmpfs", "nosuid,strictatime,mode=755,size=65536k" },
	{ "/dev/pts", "devpts", "devpts",
	  "nosuid,noexec,newinstance,ptmxmode=0666,mode=0620,gid=5" },
	{ "/dev/shm", "tmpfs", "shm", "nosuid,noexec,nodev,mode=1777,size=65536k" },
	{ "/dev/mqueue", "mqueue", "mqueue", "nosuid,noexec,nodev" },
	{ "/sys", "sysfs", "sysfs", "nosuid,noexec,nodev,ro" },
	{ "/sys/fs/cgroup", "cgroup", "cgroup", "nosuid,noexec,nodev,relatime,ro" },
};

/* The network's /etc files: the host's resolver, or the bridge's files made in scratch (never
 * in the image). */
static int add_net_files(struct rt_spec *s, const struct rt_sb_opts *o, const struct rt_sb_plan *p,
			 struct hutch_err *err)
{
	static const char *const net_files[] = { "resolv.conf", "hosts", "hostname" };
	if (o->network == RT_SB_NET_HOST && access("/etc/resolv.conf", R_OK) == 0)
		TRY(rt_spec_add_mount(s, "/etc/resolv.conf", "bind", "/etc/resolv.conf",
				      "bind,nosuid,nodev,ro", err));
	for (size_t i = 0; o->network == RT_SB_NET_BRIDGE && p->net_etc && i < 3; i++) {
		char dst[64], src[512];
		snprintf(dst, sizeof(dst), "/etc/%s", net_files[i]);
		snprintf(src, sizeof(src), "%s/%s", p->net_etc, net_files[i]);
		TRY(rt_spec_add_mount(s, dst, "bind", src, "bind,nosuid,nodev,noexec,ro", err));
	}
	return 0;
}

/* A caller's path is named in the spec only by its mount in scratch (rt-sandbox-paths.c). */
static bool anchored(const struct rt_sb_opts *o, const struct rt_sb_plan *p)
{
	bool all = !o->workspace || p->ws.at;
	for (size_t i = 0; i < o->n_binds; i++)
		all = all && p->srcs && i < p->n_srcs && p->srcs[i].at;
	return all;
}

static int plan_mounts(struct rt_spec *s, const struct rt_sb_opts *o, const struct rt_sb_plan *p,
		       struct hutch_err *err)
{
	char buf[128];
	if (!anchored(o, p))
		return hutch_fail(err, EINVAL, "sandbox: a workspace or bind source not resolved");
	for (size_t i = 0; i < ARRAY_SIZE(kernel_mounts); i++) {
		bool bind_sys = p->sysfs && !strcmp(kernel_mounts[i].dst, "/sys");
		const char *opts =
			bind_sys ? "rbind,nosuid,noexec,nodev,ro" : kernel_mounts[i].options;
		/* One id mapped: no tty group (gid 5) to give ptys, as runc's rootless spec. */
		if (p->single_id && !strcmp(kernel_mounts[i].type, "devpts"))
			opts = "nosuid,noexec,newinstance,ptmxmode=0666,mode=0620";
		TRY(rt_spec_add_mount(s, kernel_mounts[i].dst,
				      bind_sys ? "bind" : kernel_mounts[i].type,
				      bind_sys ? p->sysfs : kernel_mounts[i].src, opts, err));
	}
	for (size_t i = 0; i < o->n_tmpfs; i++) {
		snprintf(buf, sizeof(buf), "nosuid,nodev,mode=1777,size=%llu",
			 (unsigned long long)o->tmpfs[i].size);
		TRY(rt_spec_add_mount(s, o->tmpfs[i].path, "tmpfs", "tmpfs", buf, err));
	}
	/* Idmapped mounts: natively, binds with their maps (hutch makes the trees); a delegate
	 * finds them in the rootfs already (rt_sb_attach_idmapped), as few runtimes idmap.
	 * Sources are never the caller's paths, but their mounts in scratch (src.at), made
	 * from the fds they were resolved into (rt-sandbox-paths.c). */
	if (o->workspace && p->ws_idmapped && !p->delegated)
		TRY(add_idmapped(s, "/workspace", p->ws.at, p->write_uid, p->write_gid, p, err));
	else if (o->workspace && (!p->ws_idmapped || p->idmap_at_src))
		TRY(rt_spec_add_mount(s, "/workspace", "bind", p->ws.at, "rbind,nosuid,nodev,rw",
				      err));
	for (size_t i = 0; i < o->n_binds; i++) {
		const struct rt_sb_bind *b = &o->binds[i];
		const char *src = p->srcs[i].at;
		if (p->binds[i].idmapped && !p->delegated)
			TRY(add_idmapped(s, b->dst, src, p->binds[i].uid, p->binds[i].gid, p, err));
		else if (!p->binds[i].idmapped || p->idmap_at_src)
			TRY(rt_spec_add_mount(
				s, b->dst, "bind", src,
				b->ro ? "rbind,nosuid,nodev,ro" : "rbind,nosuid,nodev,rw", err));
	}
	return add_net_files(s, o, p, err);
}

/* [0, inside) and (inside, 65535] go to the subordinate range; inside -> host. With the full
 * range (--as-root) inside is 0 and host the range's start: one line. */
static struct ns_idmap *plan_map(uint32_t inside, uint32_t host, uint32_t other, size_t *n)
{
	struct ns_idmap v[3] = { { 0, other, inside },
				 { inside, host, 1 },
				 { inside + 1, other + inside + 1, ID_SPAN - inside - 1 } };
	if (host == other + inside) /* contiguous: one line */
		v[0].size = 0, v[1] = (struct ns_idmap){ 0, other, ID_SPAN }, v[2].size = 0;
	struct ns_idmap *out = hutch_xcalloc(3, sizeof(*out));
	*n = 0;
	for (size_t i = 0; i < 3; i++)
		if (v[i].size)
			out[(*n)++] = v[i];
	return out;
}

static void plan_namespaces(struct rt_spec *s, const struct rt_sb_opts *o,
			    const struct rt_sb_plan *p)
{
	static const int always[] = { CLONE_NEWPID, CLONE_NEWIPC, CLONE_NEWUTS, CLONE_NEWNS,
				      CLONE_NEWCGROUP };
	s->namespaces = hutch_xcalloc(ARRAY_SIZE(always) + 2, sizeof(*s->namespaces));
	for (size_t i = 0; i < ARRAY_SIZE(always); i++)
		s->namespaces[s->n_namespaces++].flag = always[i];
	if (p->userns)
		s->namespaces[s->n_namespaces++].flag = CLONE_NEWUSER;
	if (o->network != RT_SB_NET_HOST) { /* bridge: hutch wires eth0 in after create */
		s->namespaces[s->n_namespaces].path =
			p->netns_path ? hutch_xstrdup(p->netns_path) : NULL; /* a delegate's */
		s->namespaces[s->n_namespaces++].flag = CLONE_NEWNET;
	}
	if (!p->userns)
		return;
	if (p->single_id) { /* rootless without subordinate ids: the sandbox user alone */
		s->uid_mappings = one_map(p->uid, p->host_uid);
		s->gid_mappings = one_map(p->gid, p->host_gid);
		s->n_uid_mappings = s->n_gid_mappings = 1;
		return;
	}
	s->uid_mappings = plan_map(p->uid, p->host_uid, p->sub_uid, &s->n_uid_mappings);
	s->gid_mappings = plan_map(p->gid, p->host_gid, p->sub_gid, &s->n_gid_mappings);
}

/* No device but the defaults every container gets; the options' limits. */
static void plan_resources(struct rt_spec *s, const struct rt_sb_opts *o,
			   const struct rt_sb_plan *p)
{
	static const struct cg_device_rule deny_all = { false, 'a', -1, -1, "rwm" };
	struct cg_resources *r = &s->resources;
	if (p->no_cgroup) /* rootless --best-effort: said on stderr and in the report */
		return;
	s->has_resources = true;
	rt_spec_set_devices(s, &deny_all, 1);
	rt_sb_plan_limits(o, r);
}

void rt_sb_plan_limits(const struct rt_sb_opts *o, struct cg_resources *r)
{
	if (o->memory)
		r->mem_limit = (struct cg_i64){ true, (int64_t)o->memory };
	/* v1 charges TCP buffers to nothing unless this is set: loopback connections to itself
	 * held GBs beyond --memory, out of the host's tcp_mem. Its own counter, capped the same. */
	if (o->memory && !cg_is_v2())
		r->mem_kernel_tcp = (struct cg_i64){ true, (int64_t)o->memory };
	if (o->cpus > 0) {
		r->cpu_quota = (struct cg_i64){ true, (int64_t)(o->cpus * 100000) };
		r->cpu_period = (struct cg_i64){ true, 100000 };
	}
	if (o->pids)
		r->pids_limit = (struct cg_i64){ true, o->pids };
}

int rt_sb_spec(const struct rt_sb_opts *o, const struct rt_sb_plan *p, const char *bundle,
	       struct rt_spec **out, struct hutch_err *err)
{
	struct rt_spec *s = hutch_xcalloc(1, sizeof(*s));
	s->oci_version = hutch_xstrdup("1.0.2-dev");
	plan_process(o, p, &s->process);
	s->root_path = hutch_xstrdup(p->rootfs);
	s->rootfs = hutch_xstrdup(p->rootfs);
	s->root_readonly = !rt_sb_root_inside(o);
	s->hostname = hutch_xstrdup(o->hostname ? o->hostname : "sandbox");
	int r = plan_mounts(s, o, p, err);
	/* After the mounts, whose sources are absolute: the bundle is where hooks would run. */
	s->bundle = hutch_xstrdup(bundle);
	plan_namespaces(s, o, p);
	s->cgroups_path = p->cgroups_path ? hutch_xstrdup(p->cgroups_path) : NULL;
	plan_resources(s, o, p);
	rt_sb_plan_ucounts(o, p, s); /* written by the init in the new user namespace */
	/* The built-in profile, for the bounding set: compiled (natively) or written out. */
	s->has_seccomp = s->seccomp_default = true;
	s->seccomp_extras = seccomp_extras(o, p);
	s->masked_paths = hutch_strv_dup(rt_default_masked);
	s->readonly_paths = hutch_strv_dup(rt_default_readonly);
	s->n_masked_paths = hutch_strv_len(rt_default_masked);
	s->n_readonly_paths = hutch_strv_len(rt_default_readonly);
	if (r >= 0)
		r = rt_spec_check(s, err);
	if (r < 0) {
		rt_spec_free(s);
		return r;
	}
	*out = s;
	return 0;
}
