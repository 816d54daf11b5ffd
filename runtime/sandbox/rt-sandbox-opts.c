// SPDX-License-Identifier: Apache-2.0
/*
 * Sandbox options. One table maps each option to a setter taking a string; flags reach it
 * through the common parser (rt-cli.c) and profile keys (the same names, '-' as '_') call it
 * per value, so a flag and a profile key can never mean different things. Errors name the
 * flag or key.
 */
#include "rt-sandbox.h"
#include "rt-sandbox-named.h"
#include "rt-json.h"
#include "rt-sandbox-pool.h"
#include "hutch-ids.h"
#include "hutch-path.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>

void rt_sb_opts_init(struct rt_sb_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->uid = 1000;
	o->gid = 1000;
	o->memory = 512ULL << 20;
	o->pids = 1024;
	rt_sb_ucounts_init(o);
	o->timeout = 300;
	o->grace = 5;
	o->lock_timeout = -1;
	o->report_dir_fd = -1;
	o->report_fd = -1;
	o->subnet = (struct net_subnet){ 0x0a590000, 24 }; /* 10.89.0.0/24 (podman: 10.88/16) */
	o->mtu = 1500;
	o->max_connections = RT_SB_MAX_CONNECTIONS;
	o->tmpfs = hutch_xcalloc(1, sizeof(*o->tmpfs));
	o->tmpfs[o->n_tmpfs++] = (struct rt_sb_tmpfs){ hutch_xstrdup("/tmp"), 256ULL << 20 };
}

void rt_sb_opts_free(struct rt_sb_opts *o)
{
	free(o->image);
	free(o->workspace);
	free(o->cwd);
	free(o->hostname);
	for (size_t i = 0; i < o->n_binds; i++) {
		free(o->binds[i].src);
		free(o->binds[i].dst);
	}
	free(o->binds);
	for (size_t i = 0; i < o->n_tmpfs; i++)
		free(o->tmpfs[i].path);
	free(o->tmpfs);
	for (size_t i = 0; i < o->n_env; i++)
		free(o->env[i]);
	free(o->env);
	free(o->lock);
	free(o->runtime);
	free(o->name);
	free(o->pool);
	free(o->report);
	free(o->report_name);
	if (o->report_dir_fd >= 0)
		close(o->report_dir_fd);
	hutch_strv_free(o->command);
	free(o->entrypoint);
	hutch_strv_free(o->dns);
	rt_sb_egress_free(o);
	hutch_strv_free(o->allow_read);
	hutch_strv_free(o->allow_rw);
	hutch_strv_free(o->deny);
}

static void set_str(char **field, const char *v)
{
	free(*field);
	*field = hutch_xstrdup(v);
}

static int abs_path(const char *what, const char *v, struct hutch_err *err)
{
	if (v[0] != '/')
		return hutch_fail(err, EINVAL, "%s %s: must be an absolute path", what, v);
	if (strstr(v, "/../") || !strcmp(v + strlen(v) - (strlen(v) >= 3 ? 3 : 0), "/.."))
		return hutch_fail(err, EINVAL, "%s %s: '..' is not allowed", what, v);
	return 0;
}

static int set_image(void *p, const char *v, struct hutch_err *err)
{
	struct rt_sb_opts *o = p;
	(void)err;
	set_str(&o->image, v);
	return 0;
}

static int set_workspace(void *p, const char *v, struct hutch_err *err)
{
	struct rt_sb_opts *o = p;
	(void)err;
	set_str(&o->workspace, v);
	return 0;
}

static int set_cwd(void *p, const char *v, struct hutch_err *err)
{
	struct rt_sb_opts *o = p;
	TRY(abs_path("--cwd", v, err));
	set_str(&o->cwd, v);
	return 0;
}

/* As docker run's: one program (its arguments are the command), "" for none. */
static int set_entrypoint(void *p, const char *v, struct hutch_err *err)
{
	struct rt_sb_opts *o = p;
	(void)err;
	set_str(&o->entrypoint, v);
	o->has_entrypoint = true;
	return 0;
}

static int set_hostname(void *p, const char *v, struct hutch_err *err)
{
	struct rt_sb_opts *o = p;
	if (!*v || strlen(v) > 64 || strchr(v, '/'))
		return hutch_fail(err, EINVAL, "--hostname %s: not a valid host name", v);
	set_str(&o->hostname, v);
	return 0;
}

/* A destination must not cover what the sandbox itself provides. */
static int check_dst(const char *flag, const char *dst, struct hutch_err *err)
{
	static const char *const reserved[] = { "/proc", "/sys", "/dev" };
	TRY(abs_path(flag, dst, err));
	if (!strcmp(dst, "/"))
		return hutch_fail(err, EINVAL, "%s: cannot mount over /", flag);
	for (size_t i = 0; i < ARRAY_SIZE(reserved); i++) {
		size_t n = strlen(reserved[i]);
		if (!strncmp(dst, reserved[i], n) && (dst[n] == '\0' || dst[n] == '/'))
			return hutch_fail(err, EINVAL, "%s %s: %s is provided by the sandbox", flag,
					  dst, reserved[i]);
	}
	return 0;
}

static int add_bind(struct rt_sb_opts *o, const char *flag, const char *v, bool ro,
		    struct hutch_err *err)
{
	_cleanup_free_ char *copy = hutch_xstrdup(v);
	char *src = copy, *dst = strchr(copy, ':'), *mode = NULL;
	if (dst) {
		*dst++ = '\0';
		mode = strchr(dst, ':');
		if (mode)
			*mode++ = '\0';
	}
	if (mode && strcmp(mode, "ro") && strcmp(mode, "rw"))
		return hutch_fail(err, EINVAL, "%s %s: mode must be ro or rw", flag, v);
	if (!*src || src[0] != '/')
		return hutch_fail(err, EINVAL, "%s %s: source must be an absolute path", flag, v);
	if (!dst || !*dst)
		dst = src;
	TRY(check_dst(flag, dst, err));
	o->binds = hutch_xrealloc(o->binds, (o->n_binds + 1) * sizeof(*o->binds));
	o->binds[o->n_binds++] = (struct rt_sb_bind){ hutch_xstrdup(src), hutch_xstrdup(dst),
						      ro || (mode && !strcmp(mode, "ro")) };
	return 0;
}

static int set_bind(void *p, const char *v, struct hutch_err *err)
{
	struct rt_sb_opts *o = p;
	return add_bind(o, "--bind", v, false, err);
}

static int set_ro_bind(void *p, const char *v, struct hutch_err *err)
{
	struct rt_sb_opts *o = p;
	return add_bind(o, "--ro-bind", v, true, err);
}

static int set_tmpfs(void *p, const char *v, struct hutch_err *err)
{
	struct rt_sb_opts *o = p;
	_cleanup_free_ char *path = hutch_xstrdup(v);
	char *size = strchr(path, ':');
	uint64_t bytes = 256ULL << 20;
	if (size) {
		*size++ = '\0';
		int r = rt_sb_parse_size(size, &bytes);
		if (r < 0 || bytes == 0)
			return hutch_fail(err, r == -ERANGE ? ERANGE : EINVAL,
					  "--tmpfs %s: invalid size %s (%s)", v, size,
					  r == -ERANGE ? "too large"
						       : "e.g. 64k, 512m, 1GiB; not 0");
	}
	TRY(check_dst("--tmpfs", path, err));
	for (size_t i = 0; i < o->n_tmpfs; i++)
		if (!strcmp(o->tmpfs[i].path, path)) { /* --tmpfs /tmp:1g resizes the default */
			o->tmpfs[i].size = bytes;
			return 0;
		}
	o->tmpfs = hutch_xrealloc(o->tmpfs, (o->n_tmpfs + 1) * sizeof(*o->tmpfs));
	o->tmpfs[o->n_tmpfs++] = (struct rt_sb_tmpfs){ steal_ptr(path), bytes };
	return 0;
}

static int parse_id(const char *s, uint32_t *out)
{
	uint64_t v;
	if (hutch_parse_u64(s, &v) < 0 || v > 65535)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

static int set_user(void *p, const char *v, struct hutch_err *err)
{
	struct rt_sb_opts *o = p;
	_cleanup_free_ char *copy = hutch_xstrdup(v);
	char *g = strchr(copy, ':');
	uint32_t uid, gid;
	if (g)
		*g++ = '\0';
	if (parse_id(copy, &uid) < 0 || (g && parse_id(g, &gid) < 0))
		return hutch_fail(err, EINVAL, "--user %s: expected UID[:GID], numbers 0-65535", v);
	o->uid = uid;
	o->gid = g ? gid : uid;
	o->has_user = true;
	return 0;
}

static int set_flag(bool *f, const char *name, const char *v, struct hutch_err *err)
{
	if (!strcmp(v, "true") || !*v)
		*f = true;
	else if (!strcmp(v, "false"))
		*f = false;
	else
		return hutch_fail(err, EINVAL, "%s: expected true or false, got %s", name, v);
	return 0;
}

static int set_as_root(void *p, const char *v, struct hutch_err *err)
{
	struct rt_sb_opts *o = p;
	return set_flag(&o->as_root, "--as-root", v, err);
}

static int set_host_root(void *p, const char *v, struct hutch_err *err)
{
	struct rt_sb_opts *o = p;
	return set_flag(&o->host_root, "--host-root", v, err);
}

/* Host ids, not ids inside: any uid or gid but 0, which is exactly what the flag is for. */
static int set_workspace_owner(void *p, const char *v, struct hutch_err *err)
{
	struct rt_sb_opts *o = p;
	char *end = NULL;
	errno = 0;
	unsigned long u = strtoul(v, &end, 10), g = 0;
	bool ok = end != v && *end == ':' && !errno;
	if (ok) {
		const char *gs = end + 1;
		g = strtoul(gs, &end, 10);
		ok = end != gs && !*end && !errno;
	}
	if (!ok || u > 0xfffffffeUL || g > 0xfffffffeUL || v[0] == '-' || strchr(v, '-'))
		return hutch_fail(err, EINVAL, "--workspace-owner %s: expected UID:GID (host ids)",
				  v);
	if (u == 0 || g == 0)
		return hutch_fail(
			err, EINVAL,
			"--workspace-owner %s: uid and gid 0 are root's; the point is that "
			"the sandbox writes as an unprivileged host id",
			v);
	o->owner_uid = (uid_t)u;
	o->owner_gid = (gid_t)g;
	o->has_owner = true;
	return 0;
}

static int set_tty(void *p, const char *v, struct hutch_err *err)
{
	struct rt_sb_opts *o = p;
	return set_flag(&o->tty, "--tty", v, err);
}

static int set_no_wait(void *p, const char *v, struct hutch_err *err)
{
	struct rt_sb_opts *o = p;
	return set_flag(&o->no_wait, "--no-wait", v, err);
}

static int set_memory(void *p, const char *v, struct hutch_err *err)
{
	struct rt_sb_opts *o = p;
	o->limits_set |= RT_SB_SET_MEMORY;
	return rt_sb_parse_memory(v, &o->memory, err);
}

static int set_cpus(void *p, const char *v, struct hutch_err *err)
{
	struct rt_sb_opts *o = p;
	o->limits_set |= RT_SB_SET_CPUS;
	return rt_sb_parse_cpus(v, &o->cpus, err);
}

static int set_pids(void *p, const char *v, struct hutch_err *err)
{
	struct rt_sb_opts *o = p;
	int64_t n;
	if (hutch_parse_i64(v, &n) < 0 || n < 0 || n == 1 || n > 4194304)
		return hutch_fail(err, EINVAL, "--pids %s: expected at least 2 (or 0)", v);
	o->limits_set |= RT_SB_SET_PIDS;
	o->pids = n;
	return 0;
}

static int set_timeout(void *p, const char *v, struct hutch_err *err)
{
	struct rt_sb_opts *o = p;
	if (rt_sb_parse_seconds(v, &o->timeout) < 0)
		return hutch_fail(err, EINVAL, "--timeout %s: expected seconds", v);
	o->limits_set |= RT_SB_SET_TIMEOUT;
	return 0;
}

static int set_grace(void *p, const char *v, struct hutch_err *err)
{
	struct rt_sb_opts *o = p;
	if (rt_sb_parse_seconds(v, &o->grace) < 0)
		return hutch_fail(err, EINVAL, "--grace %s: expected seconds", v);
	o->limits_set |= RT_SB_SET_GRACE;
	return 0;
}

static int set_lock_timeout(void *p, const char *v, struct hutch_err *err)
{
	struct rt_sb_opts *o = p;
	if (rt_sb_parse_seconds(v, &o->lock_timeout) < 0)
		return hutch_fail(err, EINVAL, "--lock-timeout %s: expected seconds", v);
	return 0;
}

static int set_network(void *p, const char *v, struct hutch_err *err)
{
	struct rt_sb_opts *o = p;
	TRY(rt_sb_parse_network(v, &o->network, err));
	o->network_set = true;
	return 0;
}

/* Bridge mode (rt-sandbox-net.c). */
static int set_subnet(void *p, const char *v, struct hutch_err *err)
{
	struct rt_sb_opts *o = p;
	o->bridge_opts_set = true;
	return net_subnet_parse(v, &o->subnet, err) < 0 ? hutch_err_prefix(err, "--subnet: ") : 0;
}

static int set_mtu(void *p, const char *v, struct hutch_err *err)
{
	struct rt_sb_opts *o = p;
	uint64_t mtu;
	if (hutch_parse_u64(v, &mtu) < 0 || mtu < 576 || mtu > 65535)
		return hutch_fail(err, EINVAL, "--mtu %s: expected 576 to 65535", v);
	o->mtu = (unsigned)mtu;
	o->bridge_opts_set = true;
	return 0;
}

static int set_dns(void *p, const char *v, struct hutch_err *err)
{
	struct rt_sb_opts *o = p;
	uint32_t a;
	if (strchr(v, ':'))
		return hutch_fail(err, ENOTSUP, "--dns %s: IPv6 is not supported", v);
	if (net_ipv4_parse(v, &a) < 0)
		return hutch_fail(err, EINVAL, "--dns %s: expected an IPv4 address", v);
	o->dns = hutch_xrealloc(o->dns, (o->n_dns + 2) * sizeof(char *));
	o->dns[o->n_dns++] = hutch_xstrdup(v);
	o->dns[o->n_dns] = NULL;
	o->bridge_opts_set = true;
	return 0;
}

/* Host mode (rt-sandbox-host.c). */
static int set_isolation(void *p, const char *v, struct hutch_err *err)
{
	struct rt_sb_opts *o = p;
	static const char *const names[] = { "namespaces", "landlock", "none" };
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (!strcmp(v, names[i])) {
			o->isolation = (enum rt_sb_isolation)i;
			return 0;
		}
	return hutch_fail(err, EINVAL, "--isolation %s: expected namespaces, landlock or none", v);
}

static int add_path(char ***list, size_t *n, const char *flag, const char *v, struct hutch_err *err)
{
	TRY(abs_path(flag, v, err));
	*list = hutch_xrealloc(*list, (*n + 2) * sizeof(char *));
	(*list)[(*n)++] = hutch_xstrdup(v);
	(*list)[*n] = NULL;
	return 0;
}

static int set_allow_read(void *p, const char *v, struct hutch_err *err)
{
	struct rt_sb_opts *o = p;
	return add_path(&o->allow_read, &o->n_allow_read, "--allow-read", v, err);
}

static int set_allow_rw(void *p, const char *v, struct hutch_err *err)
{
	struct rt_sb_opts *o = p;
	if (!strcmp(v, "/"))
		return hutch_fail(err, EINVAL, "--allow-rw /: use --isolation none instead");
	return add_path(&o->allow_rw, &o->n_allow_rw, "--allow-rw", v, err);
}

static int set_deny(void *p, const char *v, struct hutch_err *err)
{
	struct rt_sb_opts *o = p;
	if (!strcmp(v, "/"))
		return hutch_fail(err, EINVAL, "--deny /: denies everything");
	return add_path(&o->deny, &o->n_deny, "--deny", v, err);
}

static int set_home_dotfiles(void *p, const char *v, struct hutch_err *err)
{
	struct rt_sb_opts *o = p;
	return set_flag(&o->home_dotfiles, "--allow-home-dotfiles", v, err);
}

static int set_best_effort(void *p, const char *v, struct hutch_err *err)
{
	struct rt_sb_opts *o = p;
	return set_flag(&o->best_effort, "--best-effort", v, err);
}

static int set_deny_host_loopback(void *p, const char *v, struct hutch_err *err)
{
	struct rt_sb_opts *o = p;
	return set_flag(&o->deny_host_loopback, "--deny-host-loopback", v, err);
}

static int set_allow_network(void *p, const char *v, struct hutch_err *err)
{
	struct rt_sb_opts *o = p;
	bool on = false;
	TRY(set_flag(&on, "--allow-network", v, err));
	return set_network(o, on ? "host" : "none", err);
}

static int set_lock(void *p, const char *v, struct hutch_err *err)
{
	struct rt_sb_opts *o = p;
	if (!*v || strchr(v, '/') || !strcmp(v, ".") || !strcmp(v, "..") || strlen(v) > 200)
		return hutch_fail(err, EINVAL, "--lock %s: not a valid lock name", v);
	set_str(&o->lock, v);
	return 0;
}

static int set_runtime(void *p, const char *v, struct hutch_err *err)
{
	struct rt_sb_opts *o = p;
	if (!*v)
		return hutch_fail(err, EINVAL, "--runtime: empty");
	set_str(&o->runtime, v);
	return 0;
}

/* The caller's fd, checked now: one it never opened would be written wherever hutch's own
 * fd of that number pointed by the end. */
static int set_report_fd(void *p, const char *v, struct hutch_err *err)
{
	struct rt_sb_opts *o = p;
	uint64_t fd;
	if (hutch_parse_u64(v, &fd) < 0 || fd < 3 || fd > 1 << 20)
		return hutch_fail(err, EINVAL, "--report-fd %s: expected an fd number >= 3", v);
	int fl = fcntl((int)fd, F_GETFL);
	if (fl < 0)
		return hutch_fail(err, EBADF,
				  "--report-fd %s: not open (the caller opens it: %s>FILE)", v, v);
	if ((fl & O_ACCMODE) == O_RDONLY)
		return hutch_fail(err, EBADF, "--report-fd %s: not open for writing", v);
	o->report_fd = (int)fd;
	return 0;
}

static int set_command(void *p, const char *v, struct hutch_err *err)
{
	struct rt_sb_opts *o = p;
	(void)err;
	o->command = hutch_xrealloc(o->command, (o->n_command + 2) * sizeof(char *));
	o->command[o->n_command++] = hutch_xstrdup(v);
	o->command[o->n_command] = NULL;
	return 0;
}

/* --profile is applied before every other flag, wherever it is (rt_sb_parse_args). */
static int skip_profile(void *p, const char *v, struct hutch_err *err)
{
	(void)p, (void)v, (void)err;
	return 0;
}

/* Every setter takes the whole struct rt_sb_opts (off 0). The lists append, and the bools
 * take true or false from a profile. */
static const struct rt_flag options[] = {
	{ "image", 'i', RT_FLAG_FN, "root filesystem directory (read-only)", 0, set_image },
	{ "workspace", 'w', RT_FLAG_FN, "host directory mounted read-write at /workspace", 0,
	  set_workspace },
	{ "tmpfs", 0, RT_FLAG_FN_LIST, "PATH[:SIZE] private tmpfs (default /tmp:256m)", 0,
	  set_tmpfs },
	{ "bind", 0, RT_FLAG_FN_LIST, "SRC[:DST[:ro|rw]] bind mount", 0, set_bind },
	{ "ro-bind", 0, RT_FLAG_FN_LIST, "SRC[:DST] read-only bind mount", 0, set_ro_bind },
	{ "env", 'e', RT_FLAG_FN_LIST, "KEY=VALUE, or KEY to pass the host's value", 0,
	  rt_sb_set_env },
	{ "env-file", 0, RT_FLAG_FN_LIST,
	  "file of KEY=VALUE lines (# comments, export, quotes), or a pipe (<(...)); a FIFO "
	  "with no writer is an error",
	  0, rt_sb_set_env_file },
	{ "cwd", 0, RT_FLAG_FN,
	  "working directory (default the image's WorkingDir, else /workspace or /)", 0, set_cwd },
	{ "entrypoint", 0, RT_FLAG_FN,
	  "program to run instead of the image's Entrypoint, with the command as its arguments "
	  "('' for none; the image's Cmd is then not used)",
	  0, set_entrypoint },
	{ "hostname", 0, RT_FLAG_FN, "host name (default sandbox)", 0, set_hostname },
	{ "user", 'u', RT_FLAG_FN,
	  "UID[:GID] inside (default the image's User unless it is root, else 1000:1000)", 0,
	  set_user },
	{ "workspace-owner", 0, RT_FLAG_FN,
	  "UID:GID: the host ids the sandbox writes as (for a root-owned workspace, whose "
	  "directory hutch then gives to them)",
	  0, set_workspace_owner },
	{ "as-root", 0, RT_FLAG_FN_BOOL,
	  "root inside a user namespace (subordinate host ids), Docker's default capabilities but "
	  "CAP_NET_RAW there, a writable throw-away layer: for package installs",
	  0, set_as_root },
	{ "host-root", 0, RT_FLAG_FN_BOOL,
	  "host root without a user namespace (what --as-root was): warns every time", 0,
	  set_host_root },
	{ "tty", 't', RT_FLAG_FN_BOOL, "allocate a pty and relay this terminal", 0, set_tty },
	{ "memory", 'm', RT_FLAG_FN, "memory limit (default 512m; 0 = none)", 0, set_memory },
	{ "cpus", 0, RT_FLAG_FN,
	  "CPU quota in CPUs, e.g. 1.5, up to the usable CPUs (default none)", 0, set_cpus },
	{ "pids", 0, RT_FLAG_FN, "process limit (default 1024; 0 = none)", 0, set_pids },
	{ "ucount", 0, RT_FLAG_FN_LIST,
	  "NAME=N: the user namespace's limit /proc/sys/user/max_NAME, per uid inside (default "
	  "inotify_instances=16, inotify_watches=8192, fanotify_*=8 and 8192, *_namespaces=256), "
	  "or its RLIMIT_SIGPENDING or RLIMIT_MSGQUEUE, for the whole sandbox (sigpending=1024, "
	  "msgqueue=204800 bytes)",
	  0, rt_sb_set_ucount },
	{ "timeout", 0, RT_FLAG_FN, "seconds before SIGTERM (default 300; 0 = none)", 0,
	  set_timeout },
	{ "grace", 0, RT_FLAG_FN, "seconds from SIGTERM to SIGKILL of the tree (default 5)", 0,
	  set_grace },
	{ "network", 0, RT_FLAG_FN,
	  "none (loopback only, default), bridge (a veth, NAT and hutch's egress rules) or host "
	  "(the default with --isolation landlock)",
	  0, set_network },
	{ "subnet", 0, RT_FLAG_FN, "bridge: IPv4 subnet (default 10.89.0.0/24)", 0, set_subnet },
	{ "mtu", 0, RT_FLAG_FN, "bridge: MTU of eth0 (default 1500)", 0, set_mtu },
	{ "dns", 0, RT_FLAG_FN_LIST,
	  "bridge: upstream nameserver of hutch's DNS forwarder (default: the host's)", 0,
	  set_dns },
	{ "egress", 0, RT_FLAG_FN,
	  "bridge: open (the internet; default) or restricted (only what is allowed)", 0,
	  rt_sb_set_egress },
	{ "allow-host", 0, RT_FLAG_FN_LIST,
	  "bridge: NAME[:PORT] or *.DOMAIN[:PORT] reachable (its DNS answers open it)", 0,
	  rt_sb_set_allow_host },
	{ "allow-cidr", 0, RT_FLAG_FN_LIST,
	  "bridge: A.B.C.D[/N][:PORT[-PORT]] reachable, even the host or a private range", 0,
	  rt_sb_set_allow_cidr },
	{ "publish", 'p', RT_FLAG_FN_LIST,
	  "bridge: [IP:]HOSTPORT:PORT, the sandbox's tcp PORT on the host (IP default 127.0.0.1)",
	  0, rt_sb_set_publish },
	{ "deny-host-loopback", 0, RT_FLAG_FN_BOOL,
	  "--network host: refuse 127.0.0.0/8, 0.0.0.0/8, :: and ::1 (root only; "
	  "docs/networking.md)",
	  0, set_deny_host_loopback },
	{ "deny-cidr", 0, RT_FLAG_FN_LIST, "bridge: A.B.C.D[/N] unreachable (wins over allows)", 0,
	  rt_sb_set_deny_cidr },
	{ "max-connections", 0, RT_FLAG_FN,
	  "bridge: tracked connections at once; more are refused (default 1024; 0 = none)", 0,
	  rt_sb_set_max_connections },
	{ "isolation", 0, RT_FLAG_FN,
	  "namespaces (default), landlock (the host, restricted) or none (unrestricted)", 0,
	  set_isolation },
	{ "allow-read", 0, RT_FLAG_FN_LIST, "PATH readable in host mode", 0, set_allow_read },
	{ "allow-rw", 0, RT_FLAG_FN_LIST, "PATH readable and writable in host mode", 0,
	  set_allow_rw },
	{ "allow-read-write", 0, RT_FLAG_FN_LIST, NULL, 0,
	  set_allow_rw }, /* the profile's allow_read_write */
	{ "deny", 0, RT_FLAG_FN_LIST, "PATH unreadable and unwritable in host mode (wins)", 0,
	  set_deny },
	{ "allow-home-dotfiles", 0, RT_FLAG_FN_BOOL, "host mode: read ~/.* (not ~)", 0,
	  set_home_dotfiles },
	{ "allow-network", 0, RT_FLAG_FN_BOOL, NULL, 0,
	  set_allow_network }, /* the profile's allow_network */
	{ "best-effort", 0, RT_FLAG_FN_BOOL,
	  "run without what can't be enforced (host mode; rootless limits), and report it", 0,
	  set_best_effort },
	{ "lock", 0, RT_FLAG_FN,
	  "NAME: one sandbox per name at a time, in the order their hutch started", 0, set_lock },
	{ "no-wait", 0, RT_FLAG_FN_BOOL, "fail at once when the lock is held or waited for", 0,
	  set_no_wait },
	{ "lock-timeout", 0, RT_FLAG_FN, "seconds to wait in line for the lock", 0,
	  set_lock_timeout },
	{ "runtime", 0, RT_FLAG_FN, "native (default), runc, crun, runsc or a path", 0,
	  set_runtime },
	{ "name", 0, RT_FLAG_FN, "NAME: a long-lived sandbox that `sandbox exec NAME` joins", 0,
	  rt_sb_set_name },
	{ "detach", 'd', RT_FLAG_FN_BOOL, "with --name: return once the command runs", 0,
	  rt_sb_set_detach },
	{ "pool", 0, RT_FLAG_FN, "NAME: take a ready sandbox of `hutch pool serve --name NAME`", 0,
	  rt_sb_set_pool },
	{ "report", 0, RT_FLAG_FN,
	  "write the JSON report to FILE, replaced whole (its directory is resolved as the flag "
	  "is read; not a FIFO)",
	  0, rt_sb_set_report },
	{ "report-fd", 0, RT_FLAG_FN, "write the JSON report to fd N", 0, set_report_fd },
	{ "profile", 0, RT_FLAG_FN,
	  "JSON profile, or a pipe (<(...)); flags override it; a FIFO with no writer is an error",
	  0, skip_profile },
	{ "command", 0, RT_FLAG_PROFILE, NULL, 0, set_command },
};
static const struct rt_flags sb_flags = RT_FLAGS(options, RT_PARSE_SANDBOX);

/* After a parse error: --report and --report-fd wherever they stand, through their own
 * setters, so that the bad flag's report is written. The first value given is kept. */
void rt_sb_find_report(int argc, char **argv, struct rt_sb_opts *o)
{
	static const char *const names[] = { "report", "report-fd" };
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		for (size_t k = 0; k < ARRAY_SIZE(names); k++) {
			size_t n = strlen(names[k]);
			const char *a = argv[i], *v = NULL;
			if (strncmp(a, "--", 2) || strncmp(a + 2, names[k], n))
				continue;
			if (a[2 + n] == '=')
				v = a + 3 + n;
			else if (!a[2 + n] && i + 1 < argc)
				v = argv[i + 1];
			struct hutch_err ignored = { 0 };
			if (v && (k ? o->report_fd < 0 : !o->report))
				rt_flag_find(&sb_flags, names[k])->fn(o, v, &ignored);
		}
	}
}

/* --pool NAME (rt-sandbox-pool.c serves it). */
int rt_sb_set_pool(void *p, const char *v, struct hutch_err *err)
{
	struct rt_sb_opts *o = p;
	struct hutch_err e = { 0 };
	if (strlen(v) > 64 || rt_validate_id(v, &e) < 0)
		return hutch_fail(err, EINVAL,
				  "--pool %s: not a valid pool name (1-64 of [a-zA-Z0-9_+.-], not "
				  ". or ..)",
				  v);
	free(o->pool);
	o->pool = hutch_xstrdup(v);
	return 0;
}

void rt_sb_print_help(int fd)
{
	dprintf(fd, "usage: hutch sandbox [OPTIONS] [-- COMMAND [ARGS...]]\n\n"
		    "Runs COMMAND in a short-lived, locked-down sandbox. Exit status: the\n"
		    "command's, 124 on timeout, 125 when the sandbox could not start. A store\n"
		    "image's Entrypoint, Cmd, Env, WorkingDir and (non-root) User apply where the\n"
		    "options give none; -- COMMAND replaces its Cmd.\n\noptions:\n");
	rt_flags_help(fd, &sb_flags, 22, RT_HELP_SHORT);
	dprintf(fd,
		"\nhost ids (docs/sandbox-ids.md): what the sandbox writes to the host is owned "
		"by\n"
		"an unprivileged id, never by root. The sandbox user runs as the workspace's "
		"owner\n"
		"(a root-owned workspace is refused: chown it or give --workspace-owner), else as "
		"a\n"
		"subordinate id of root's /etc/subuid range; a group-root workspace gets a\n"
		"subordinate gid; an rw --bind of another user's is idmapped, so its files stay\n"
		"that user's (a root-owned one is refused); no setuid or setgid bit can be set.\n"
		"--as-root is root in a user namespace whose ids are all subordinate, writing\n"
		"the workspace as its owner. Only --host-root is the host's root (warned of).\n"
		"Setid files in the workspace and rw binds that a run made (root inside) or\n"
		"changed lose their bits when it ends. Neither may hold or lie in hutch's own\n"
		"directories (state, image store, seccomp cache).\n");
	rt_sb_print_subcommands(fd);
}

/* Flags up to "--" (or the first positional); the rest is the command. --profile is applied
 * first wherever it appears, so that flags override it. */
int rt_sb_parse_args(struct rt_sb_opts *o, int argc, char **argv, struct hutch_err *err)
{
	bool help = false; /* not a sandbox flag: RT_PARSE_SANDBOX leaves it alone */
	int i;
	for (i = 1; i < argc; i++)
		if (!strncmp(argv[i], "--profile", 9) && (argv[i][9] == '=' || !argv[i][9])) {
			const char *v =
				argv[i][9] ? argv[i] + 10 : (i + 1 < argc ? argv[i + 1] : NULL);
			if (!v)
				return hutch_fail(err, EINVAL, "--profile: requires a file");
			TRY(rt_sb_load_profile(o, v, err));
		} else if (!strcmp(argv[i], "--")) {
			break;
		}
	i = rt_parse_flags(&sb_flags, argc, argv, o, &help, err);
	if (i < 0)
		return i;
	if (i < argc) { /* the command line replaces a profile's command */
		hutch_strv_free(o->command);
		o->command = NULL;
		o->n_command = 0;
		for (; i < argc; i++)
			set_command(o, argv[i], err);
	}
	return 0;
}

/* A profile value as the string a flag would carry. */
static int value_string(yajl_val v, char *buf, size_t len)
{
	if (YAJL_IS_STRING(v))
		snprintf(buf, len, "%s", YAJL_GET_STRING(v));
	else if (YAJL_IS_TRUE(v) || YAJL_IS_FALSE(v))
		snprintf(buf, len, "%s", YAJL_IS_TRUE(v) ? "true" : "false");
	else if (YAJL_IS_NUMBER(v))
		snprintf(buf, len, "%s", YAJL_GET_NUMBER(v));
	else
		return -EINVAL;
	return 0;
}

static int profile_key(struct rt_sb_opts *o, const char *key, yajl_val v, struct hutch_err *err)
{
	char name[64], buf[4096];
	snprintf(name, sizeof(name), "%s", key);
	for (char *p = name; *p; p++)
		if (*p == '_')
			*p = '-';
	const struct rt_flag *op = rt_flag_find(&sb_flags, name);
	if (!op || op->fn == skip_profile)
		return hutch_fail(err, EINVAL, "profile key %s: unknown", key);
	bool list = op->kind == RT_FLAG_FN_LIST || op->kind == RT_FLAG_PROFILE;
	if (list && !YAJL_IS_ARRAY(v))
		return hutch_fail(err, EINVAL, "profile key %s: expected an array", key);
	size_t n = list ? v->u.array.len : 1;
	for (size_t i = 0; i < n; i++) {
		yajl_val item = list ? v->u.array.values[i] : v;
		if (value_string(item, buf, sizeof(buf)) < 0 ||
		    (op->kind == RT_FLAG_FN_BOOL && !YAJL_IS_TRUE(item) && !YAJL_IS_FALSE(item)))
			return hutch_fail(err, EINVAL, "profile key %s: wrong type", key);
		if (op->fn(o, buf, err) < 0)
			return hutch_err_prefix(err, "profile key %s: ", key);
	}
	return 0;
}

int rt_sb_load_profile(struct rt_sb_opts *o, const char *path, struct hutch_err *err)
{
	_cleanup_free_ char *text = NULL;
	_cleanup_json_ yajl_val doc = NULL;
	/* A pipe of the caller's (<(...)) is read; a FIFO without a writer is an error at once. */
	TRY(hutch_read_caller_file("--profile", path, 1 << 20, RT_SB_CALLER_FILE_MS, &text, NULL,
				   err));
	TRY(hutch_json_parse(text, path, &doc, err));
	if (!YAJL_IS_OBJECT(doc))
		return hutch_fail(err, EINVAL, "profile %s: expected a JSON object", path);
	yajl_val ver = hutch_json_get(doc, "version");
	if (!ver || !YAJL_IS_INTEGER(ver) || YAJL_GET_INTEGER(ver) != 1)
		return hutch_fail(err, EINVAL, "profile %s: \"version\": 1 is required", path);
	for (size_t i = 0; i < doc->u.object.len; i++) {
		const char *key = doc->u.object.keys[i];
		if (strcmp(key, "version") && profile_key(o, key, doc->u.object.values[i], err) < 0)
			return hutch_err_prefix(err, "profile %s: ", path);
	}
	return 0;
}
