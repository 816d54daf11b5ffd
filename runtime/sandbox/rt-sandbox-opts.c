// SPDX-License-Identifier: Apache-2.0
/*
 * Sandbox options. One table maps each option to a setter taking a string; flags call it
 * directly and profile keys (the same names, '-' as '_') call it per value, so a flag and a
 * profile key can never mean different things. Errors name the flag or key.
 */
#include "rt-sandbox.h"
#include "rt-json.h"

#include <ctype.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

typedef int (*setter_fn)(struct rt_sb_opts *o, const char *v, struct hutch_err *err);

void rt_sb_opts_init(struct rt_sb_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->uid = 1000;
	o->gid = 1000;
	o->memory = 512ULL << 20;
	o->pids = 1024;
	o->timeout = 300;
	o->grace = 5;
	o->lock_timeout = -1;
	o->report_fd = -1;
	o->subnet = (struct net_subnet){ 0x0a590000, 24 }; /* 10.89.0.0/24 (podman: 10.88/16) */
	o->mtu = 1500;
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
	free(o->report);
	hutch_strv_free(o->command);
	hutch_strv_free(o->dns);
	hutch_strv_free(o->allow_read);
	hutch_strv_free(o->allow_rw);
	hutch_strv_free(o->deny);
}

int rt_sb_parse_size(const char *s, uint64_t *out)
{
	char *end = NULL;
	if (!s || !*s || *s == '-')
		return -EINVAL;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || v < 0)
		return -EINVAL;
	static const char units[] = "bkmgt";
	uint64_t mul = 1;
	if (*end) {
		const char *u = strchr(units, tolower((unsigned char)*end));
		if (!u || (end[1] && !(tolower((unsigned char)end[1]) == 'b' && !end[2])))
			return -EINVAL;
		for (long i = 0; i < u - units; i++)
			mul *= 1024;
	}
	if (v * (double)mul > 9.2e18)
		return -ERANGE;
	*out = (uint64_t)(v * (double)mul);
	return 0;
}

int rt_sb_parse_seconds(const char *s, double *out)
{
	char *end = NULL;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || v < 0 || !isfinite(v) || v > 1e7)
		return -EINVAL;
	*out = v;
	return 0;
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

static int set_image(struct rt_sb_opts *o, const char *v, struct hutch_err *err)
{
	(void)err;
	set_str(&o->image, v);
	return 0;
}

static int set_workspace(struct rt_sb_opts *o, const char *v, struct hutch_err *err)
{
	(void)err;
	set_str(&o->workspace, v);
	return 0;
}

static int set_cwd(struct rt_sb_opts *o, const char *v, struct hutch_err *err)
{
	TRY(abs_path("--cwd", v, err));
	set_str(&o->cwd, v);
	return 0;
}

static int set_hostname(struct rt_sb_opts *o, const char *v, struct hutch_err *err)
{
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

static int set_bind(struct rt_sb_opts *o, const char *v, struct hutch_err *err)
{
	return add_bind(o, "--bind", v, false, err);
}

static int set_ro_bind(struct rt_sb_opts *o, const char *v, struct hutch_err *err)
{
	return add_bind(o, "--ro-bind", v, true, err);
}

static int set_tmpfs(struct rt_sb_opts *o, const char *v, struct hutch_err *err)
{
	_cleanup_free_ char *path = hutch_xstrdup(v);
	char *size = strchr(path, ':');
	uint64_t bytes = 256ULL << 20;
	if (size) {
		*size++ = '\0';
		if (rt_sb_parse_size(size, &bytes) < 0 || bytes == 0)
			return hutch_fail(err, EINVAL, "--tmpfs %s: invalid size %s", v, size);
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

static void add_env(struct rt_sb_opts *o, char *kv)
{
	size_t klen = strcspn(kv, "=");
	for (size_t i = 0; i < o->n_env; i++)
		if (!strncmp(o->env[i], kv, klen) && o->env[i][klen] == '=') {
			free(o->env[i]);
			o->env[i] = kv;
			return;
		}
	o->env = hutch_xrealloc(o->env, (o->n_env + 1) * sizeof(char *));
	o->env[o->n_env++] = kv;
}

/* K=V sets; a bare K takes the host's value, as docker run -e K does (absent: not set). */
static int set_env(struct rt_sb_opts *o, const char *v, struct hutch_err *err)
{
	if (!*v || *v == '=')
		return hutch_fail(err, EINVAL, "--env %s: expected KEY=VALUE or KEY", v);
	if (strchr(v, '=')) {
		add_env(o, hutch_xstrdup(v));
		return 0;
	}
	const char *host = getenv(v);
	if (host)
		add_env(o, hutch_xasprintf("%s=%s", v, host));
	return 0;
}

static int set_env_file(struct rt_sb_opts *o, const char *v, struct hutch_err *err)
{
	_cleanup_free_ char *text = NULL;
	int r = hutch_read_file_at(AT_FDCWD, v, 1 << 20, &text, NULL, err);
	if (r < 0)
		return hutch_err_prefix(err, "--env-file: ");
	char *save = NULL;
	int line = 0;
	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		line++;
		l[strcspn(l, "\r")] = '\0';
		if (!*l || *l == '#')
			continue;
		if (set_env(o, l, err) < 0)
			return hutch_err_prefix(err, "--env-file %s line %d: ", v, line);
	}
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

static int set_user(struct rt_sb_opts *o, const char *v, struct hutch_err *err)
{
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

static int set_as_root(struct rt_sb_opts *o, const char *v, struct hutch_err *err)
{
	return set_flag(&o->as_root, "--as-root", v, err);
}

static int set_host_root(struct rt_sb_opts *o, const char *v, struct hutch_err *err)
{
	return set_flag(&o->host_root, "--host-root", v, err);
}

/* Host ids, not ids inside: any uid or gid but 0, which is exactly what the flag is for. */
static int set_workspace_owner(struct rt_sb_opts *o, const char *v, struct hutch_err *err)
{
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

static int set_tty(struct rt_sb_opts *o, const char *v, struct hutch_err *err)
{
	return set_flag(&o->tty, "--tty", v, err);
}

static int set_no_wait(struct rt_sb_opts *o, const char *v, struct hutch_err *err)
{
	return set_flag(&o->no_wait, "--no-wait", v, err);
}

int rt_sb_parse_memory(const char *v, uint64_t *out, struct hutch_err *err)
{
	if (rt_sb_parse_size(v, out) < 0 || (*out && *out < (4ULL << 20)))
		return hutch_fail(err, EINVAL, "--memory %s: expected a size of at least 4m (or 0)",
				  v);
	return 0;
}

static int set_memory(struct rt_sb_opts *o, const char *v, struct hutch_err *err)
{
	return rt_sb_parse_memory(v, &o->memory, err);
}

static int set_cpus(struct rt_sb_opts *o, const char *v, struct hutch_err *err)
{
	char *end = NULL;
	double c = strtod(v, &end);
	if (end == v || *end || !isfinite(c) || (c != 0 && (c < 0.01 || c > 4096)))
		return hutch_fail(err, EINVAL, "--cpus %s: expected 0.01 to 4096 (or 0)", v);
	o->cpus = c;
	return 0;
}

static int set_pids(struct rt_sb_opts *o, const char *v, struct hutch_err *err)
{
	int64_t n;
	if (hutch_parse_i64(v, &n) < 0 || n < 0 || n == 1 || n > 4194304)
		return hutch_fail(err, EINVAL, "--pids %s: expected at least 2 (or 0)", v);
	o->pids = n;
	return 0;
}

static int set_timeout(struct rt_sb_opts *o, const char *v, struct hutch_err *err)
{
	if (rt_sb_parse_seconds(v, &o->timeout) < 0)
		return hutch_fail(err, EINVAL, "--timeout %s: expected seconds", v);
	return 0;
}

static int set_grace(struct rt_sb_opts *o, const char *v, struct hutch_err *err)
{
	if (rt_sb_parse_seconds(v, &o->grace) < 0)
		return hutch_fail(err, EINVAL, "--grace %s: expected seconds", v);
	return 0;
}

static int set_lock_timeout(struct rt_sb_opts *o, const char *v, struct hutch_err *err)
{
	if (rt_sb_parse_seconds(v, &o->lock_timeout) < 0)
		return hutch_fail(err, EINVAL, "--lock-timeout %s: expected seconds", v);
	return 0;
}

int rt_sb_parse_network(const char *v, enum rt_sb_network *out, struct hutch_err *err)
{
	if (!strcmp(v, "none"))
		*out = RT_SB_NET_NONE;
	else if (!strcmp(v, "host"))
		*out = RT_SB_NET_HOST;
	else if (!strcmp(v, "bridge"))
		*out = RT_SB_NET_BRIDGE;
	else
		return hutch_fail(err, EINVAL, "--network %s: expected none, host or bridge", v);
	return 0;
}

static int set_network(struct rt_sb_opts *o, const char *v, struct hutch_err *err)
{
	TRY(rt_sb_parse_network(v, &o->network, err));
	o->network_set = true;
	return 0;
}

/* Bridge mode (rt-sandbox-net.c). */
static int set_subnet(struct rt_sb_opts *o, const char *v, struct hutch_err *err)
{
	o->bridge_opts_set = true;
	return net_subnet_parse(v, &o->subnet, err) < 0 ? hutch_err_prefix(err, "--subnet: ") : 0;
}

static int set_mtu(struct rt_sb_opts *o, const char *v, struct hutch_err *err)
{
	uint64_t mtu;
	if (hutch_parse_u64(v, &mtu) < 0 || mtu < 576 || mtu > 65535)
		return hutch_fail(err, EINVAL, "--mtu %s: expected 576 to 65535", v);
	o->mtu = (unsigned)mtu;
	o->bridge_opts_set = true;
	return 0;
}

static int set_dns(struct rt_sb_opts *o, const char *v, struct hutch_err *err)
{
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
static int set_isolation(struct rt_sb_opts *o, const char *v, struct hutch_err *err)
{
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

static int set_allow_read(struct rt_sb_opts *o, const char *v, struct hutch_err *err)
{
	return add_path(&o->allow_read, &o->n_allow_read, "--allow-read", v, err);
}

static int set_allow_rw(struct rt_sb_opts *o, const char *v, struct hutch_err *err)
{
	if (!strcmp(v, "/"))
		return hutch_fail(err, EINVAL, "--allow-rw /: use --isolation none instead");
	return add_path(&o->allow_rw, &o->n_allow_rw, "--allow-rw", v, err);
}

static int set_deny(struct rt_sb_opts *o, const char *v, struct hutch_err *err)
{
	if (!strcmp(v, "/"))
		return hutch_fail(err, EINVAL, "--deny /: denies everything");
	return add_path(&o->deny, &o->n_deny, "--deny", v, err);
}

static int set_home_dotfiles(struct rt_sb_opts *o, const char *v, struct hutch_err *err)
{
	return set_flag(&o->home_dotfiles, "--allow-home-dotfiles", v, err);
}

static int set_best_effort(struct rt_sb_opts *o, const char *v, struct hutch_err *err)
{
	return set_flag(&o->best_effort, "--best-effort", v, err);
}

static int set_allow_network(struct rt_sb_opts *o, const char *v, struct hutch_err *err)
{
	bool on = false;
	TRY(set_flag(&on, "--allow-network", v, err));
	return set_network(o, on ? "host" : "none", err);
}

static int set_lock(struct rt_sb_opts *o, const char *v, struct hutch_err *err)
{
	if (!*v || strchr(v, '/') || !strcmp(v, ".") || !strcmp(v, "..") || strlen(v) > 200)
		return hutch_fail(err, EINVAL, "--lock %s: not a valid lock name", v);
	set_str(&o->lock, v);
	return 0;
}

static int set_runtime(struct rt_sb_opts *o, const char *v, struct hutch_err *err)
{
	if (!*v)
		return hutch_fail(err, EINVAL, "--runtime: empty");
	set_str(&o->runtime, v);
	return 0;
}

static int set_report(struct rt_sb_opts *o, const char *v, struct hutch_err *err)
{
	(void)err;
	set_str(&o->report, v);
	return 0;
}

static int set_report_fd(struct rt_sb_opts *o, const char *v, struct hutch_err *err)
{
	uint64_t fd;
	if (hutch_parse_u64(v, &fd) < 0 || fd < 3 || fd > 1 << 20)
		return hutch_fail(err, EINVAL, "--report-fd %s: expected an fd number >= 3", v);
	o->report_fd = (int)fd;
	return 0;
}

static int set_command(struct rt_sb_opts *o, const char *v, struct hutch_err *err)
{
	(void)err;
	o->command = hutch_xrealloc(o->command, (o->n_command + 2) * sizeof(char *));
	o->command[o->n_command++] = hutch_xstrdup(v);
	o->command[o->n_command] = NULL;
	return 0;
}

/* kind: 's' value, 'l' list (repeatable), 'b' boolean flag, 'p' profile only. */
static const struct sb_option {
	const char *name;
	char short_name, kind;
	setter_fn set;
	const char *help;
} options[] = {
	{ "image", 'i', 's', set_image, "root filesystem directory (read-only)" },
	{ "workspace", 'w', 's', set_workspace, "host directory mounted read-write at /workspace" },
	{ "tmpfs", 0, 'l', set_tmpfs, "PATH[:SIZE] private tmpfs (default /tmp:256m)" },
	{ "bind", 0, 'l', set_bind, "SRC[:DST[:ro|rw]] bind mount" },
	{ "ro-bind", 0, 'l', set_ro_bind, "SRC[:DST] read-only bind mount" },
	{ "env", 'e', 'l', set_env, "KEY=VALUE, or KEY to pass the host's value" },
	{ "env-file", 0, 'l', set_env_file, "file of KEY=VALUE lines" },
	{ "cwd", 0, 's', set_cwd, "working directory (default /workspace or /)" },
	{ "hostname", 0, 's', set_hostname, "host name (default sandbox)" },
	{ "user", 'u', 's', set_user, "UID[:GID] inside (default 1000:1000)" },
	{ "workspace-owner", 0, 's', set_workspace_owner,
	  "UID:GID: the host ids the sandbox writes as (for a root-owned workspace, whose "
	  "directory hutch then gives to them)" },
	{ "as-root", 0, 'b', set_as_root,
	  "root inside a user namespace (subordinate host ids), default capabilities there, "
	  "a writable throw-away layer: for package installs" },
	{ "host-root", 0, 'b', set_host_root,
	  "host root without a user namespace (what --as-root was): warns every time" },
	{ "tty", 't', 'b', set_tty, "allocate a pty and relay this terminal" },
	{ "memory", 'm', 's', set_memory, "memory limit (default 512m; 0 = none)" },
	{ "cpus", 0, 's', set_cpus, "CPU quota in CPUs, e.g. 1.5 (default none)" },
	{ "pids", 0, 's', set_pids, "process limit (default 1024; 0 = none)" },
	{ "timeout", 0, 's', set_timeout, "seconds before SIGTERM (default 300; 0 = none)" },
	{ "grace", 0, 's', set_grace, "seconds from SIGTERM to SIGKILL of the tree (default 5)" },
	{ "network", 0, 's', set_network,
	  "none (loopback only, default), bridge (NAT via hutch0) or host (the default with "
	  "--isolation landlock)" },
	{ "subnet", 0, 's', set_subnet, "bridge: IPv4 subnet (default 10.89.0.0/24)" },
	{ "mtu", 0, 's', set_mtu, "bridge: MTU of eth0 (default 1500)" },
	{ "dns", 0, 'l', set_dns, "bridge: nameserver for resolv.conf (default: the host's)" },
	{ "isolation", 0, 's', set_isolation,
	  "namespaces (default), landlock (the host, restricted) or none (unrestricted)" },
	{ "allow-read", 0, 'l', set_allow_read, "PATH readable in host mode" },
	{ "allow-rw", 0, 'l', set_allow_rw, "PATH readable and writable in host mode" },
	{ "allow-read-write", 0, 'l', set_allow_rw, NULL }, /* the profile's allow_read_write */
	{ "deny", 0, 'l', set_deny, "PATH unreadable and unwritable in host mode (wins)" },
	{ "allow-home-dotfiles", 0, 'b', set_home_dotfiles, "host mode: read ~/.* (not ~)" },
	{ "allow-network", 0, 'b', set_allow_network, NULL }, /* the profile's allow_network */
	{ "best-effort", 0, 'b', set_best_effort,
	  "host mode: run without what can't be enforced, and report it" },
	{ "lock", 0, 's', set_lock, "NAME: one sandbox per name at a time" },
	{ "no-wait", 0, 'b', set_no_wait, "fail at once when the lock is held" },
	{ "lock-timeout", 0, 's', set_lock_timeout, "seconds to wait for the lock" },
	{ "runtime", 0, 's', set_runtime, "native (default), runc, crun, runsc or a path" },
	{ "report", 0, 's', set_report, "write the JSON report to FILE" },
	{ "report-fd", 0, 's', set_report_fd, "write the JSON report to fd N" },
	{ "profile", 0, 's', NULL, "JSON profile; flags override it" },
	{ "command", 0, 'p', set_command, NULL },
};

void rt_sb_print_help(int fd)
{
	dprintf(fd,
		"usage: hutch sandbox [OPTIONS] -- COMMAND [ARGS...]\n\n"
		"Runs COMMAND in a short-lived, locked-down sandbox. Exit status: the\n"
		"command's, 124 on timeout, 125 when the sandbox could not start.\n\noptions:\n");
	for (size_t i = 0; i < ARRAY_SIZE(options); i++) {
		const struct sb_option *op = &options[i];
		if (!op->help)
			continue;
		char flag[48];
		snprintf(flag, sizeof(flag), "%s%c%s--%s", op->short_name ? "-" : "",
			 op->short_name ? op->short_name : ' ', op->short_name ? ", " : "  ",
			 op->name);
		dprintf(fd, "  %-22s %s\n", op->short_name ? flag : flag + 2, op->help);
	}
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
		"the workspace as its owner. Only --host-root is the host's root (warned of).\n");
}

static const struct sb_option *find_option(const char *name, size_t len, char short_name)
{
	for (size_t i = 0; i < ARRAY_SIZE(options); i++) {
		const struct sb_option *op = &options[i];
		if (op->kind == 'p')
			continue;
		if (short_name ? op->short_name == short_name
			       : strlen(op->name) == len && !strncmp(op->name, name, len))
			return op;
	}
	return NULL;
}

/* Flags up to "--" (or the first positional); the rest is the command. --profile is applied
 * first wherever it appears, so that flags override it. */
int rt_sb_parse_args(struct rt_sb_opts *o, int argc, char **argv, struct hutch_err *err)
{
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
	for (i = 1; i < argc && strcmp(argv[i], "--") && argv[i][0] == '-'; i++) {
		const char *a = argv[i], *val = NULL;
		const char *eq = a[1] == '-' ? strchr(a, '=') : NULL;
		const struct sb_option *op =
			a[1] == '-'
				? find_option(a + 2, eq ? (size_t)(eq - a - 2) : strlen(a + 2), 0)
				: (a[1] && !a[2] ? find_option(NULL, 0, a[1]) : NULL);
		if (!op)
			return hutch_fail(err, EINVAL, "sandbox: unknown flag %s", a);
		if (eq)
			val = eq + 1;
		else if (op->kind != 'b' && ++i >= argc)
			return hutch_fail(err, EINVAL, "--%s: requires a value", op->name);
		else if (op->kind != 'b')
			val = argv[i];
		if (!op->set) /* --profile: already applied */
			continue;
		TRY(op->set(o, val ? val : "", err));
	}
	if (i < argc && !strcmp(argv[i], "--"))
		i++;
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
	const struct sb_option *op = NULL;
	for (size_t i = 0; i < ARRAY_SIZE(options); i++)
		if (!strcmp(options[i].name, name) && options[i].set)
			op = &options[i];
	if (!op)
		return hutch_fail(err, EINVAL, "profile key %s: unknown", key);
	bool list = op->kind == 'l' || op->kind == 'p';
	if (list && !YAJL_IS_ARRAY(v))
		return hutch_fail(err, EINVAL, "profile key %s: expected an array", key);
	size_t n = list ? v->u.array.len : 1;
	for (size_t i = 0; i < n; i++) {
		yajl_val item = list ? v->u.array.values[i] : v;
		if (value_string(item, buf, sizeof(buf)) < 0 ||
		    (op->kind == 'b' && !YAJL_IS_TRUE(item) && !YAJL_IS_FALSE(item)))
			return hutch_fail(err, EINVAL, "profile key %s: wrong type", key);
		if (op->set(o, buf, err) < 0)
			return hutch_err_prefix(err, "profile key %s: ", key);
	}
	return 0;
}

int rt_sb_load_profile(struct rt_sb_opts *o, const char *path, struct hutch_err *err)
{
	_cleanup_free_ char *text = NULL;
	_cleanup_json_ yajl_val doc = NULL;
	TRY(hutch_read_file_at(AT_FDCWD, path, 1 << 20, &text, NULL, err) < 0
		    ? hutch_err_prefix(err, "--profile: ")
		    : 0);
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

/* Namespaces mode runs an OCI config, JSON, which carries UTF-8 only: rt_spec_parse would
 * refuse the config, and a Go runtime (runc) would quietly run U+FFFD in place of the bytes. */
static int check_utf8(const struct rt_sb_opts *o, struct hutch_err *err)
{
	const char *const one[][2] = { { "--image", o->image },
				       { "--workspace", o->workspace },
				       { "--cwd", o->cwd },
				       { "--hostname", o->hostname } };
	const char *bad = NULL;
	for (size_t i = 0; !bad && i < ARRAY_SIZE(one); i++)
		if (one[i][1] && !hutch_utf8_valid(one[i][1]))
			bad = one[i][0];
	for (size_t i = 0; !bad && i < o->n_binds; i++)
		if (!hutch_utf8_valid(o->binds[i].src) || !hutch_utf8_valid(o->binds[i].dst))
			bad = "--bind or --ro-bind";
	for (size_t i = 0; !bad && i < o->n_tmpfs; i++)
		if (!hutch_utf8_valid(o->tmpfs[i].path))
			bad = "--tmpfs";
	for (size_t i = 0; !bad && i < o->n_env; i++)
		if (!hutch_utf8_valid(o->env[i]))
			bad = "--env";
	for (size_t i = 0; !bad && i < o->n_command; i++)
		if (!hutch_utf8_valid(o->command[i]))
			bad = "the command";
	if (bad) /* without the value: the message must stay UTF-8 too (--report) */
		return hutch_fail(err, EILSEQ,
				  "%s: not valid UTF-8, which the sandbox's OCI config "
				  "(JSON) cannot carry",
				  bad);
	return 0;
}

int rt_sb_check(const struct rt_sb_opts *o, struct hutch_err *err)
{
	if (!o->command || !o->command[0] || !o->command[0][0]) /* "" names no program */
		return hutch_fail(err, EINVAL,
				  "sandbox: no command (hutch sandbox [OPTIONS] -- CMD)");
	if (o->isolation != RT_SB_ISO_NAMESPACES)
		TRY(rt_sb_check_host(o, err));
	else if (o->n_allow_read || o->n_allow_rw || o->n_deny || o->home_dotfiles ||
		 o->best_effort)
		return hutch_fail(err, EINVAL,
				  "--allow-read, --allow-rw, --deny, --allow-home-dotfiles and "
				  "--best-effort need --isolation landlock");
	else if (!o->image)
		return hutch_fail(err, EINVAL, "--image: required (a root filesystem directory)");
	else
		TRY(check_utf8(o, err));
	if (o->as_root && o->has_user)
		return hutch_fail(err, EINVAL, "--as-root and --user cannot be combined");
	if (o->host_root && (o->has_user || o->as_root))
		return hutch_fail(err, EINVAL, "--host-root cannot be combined with %s",
				  o->as_root ? "--as-root" : "--user");
	if (o->has_owner && !o->workspace)
		return hutch_fail(err, EINVAL, "--workspace-owner needs --workspace");
	if (o->host_root && o->isolation != RT_SB_ISO_NAMESPACES)
		return hutch_fail(err, EINVAL, "--host-root needs --isolation namespaces");
	if ((o->no_wait || o->lock_timeout >= 0) && !o->lock)
		return hutch_fail(err, EINVAL, "--no-wait and --lock-timeout need --lock");
	if (o->bridge_opts_set && o->network != RT_SB_NET_BRIDGE)
		return hutch_fail(err, EINVAL, "--subnet, --mtu and --dns need --network bridge");
	if (o->network == RT_SB_NET_BRIDGE && o->isolation != RT_SB_ISO_NAMESPACES)
		return hutch_fail(err, ENOTSUP, "--network bridge with --isolation: not supported");
	if (o->network == RT_SB_NET_BRIDGE && o->runtime && strcmp(o->runtime, "native"))
		return hutch_fail(err, ENOTSUP,
				  "--network bridge with --runtime %s: not supported (native only)",
				  o->runtime);
	if (o->tty && !isatty(0))
		return hutch_fail(err, EINVAL, "--tty: standard input is not a terminal");
	return 0;
}
