// SPDX-License-Identifier: Apache-2.0
/*
 * Sandbox option values and combinations: the parsers of sizes, seconds, --memory and
 * --network (shared with image build's flags), rt_sb_check, which refuses the option sets
 * that cannot run, once flags and profile are all in, and rt_sb_check_own_dirs, which keeps
 * the caller's writable paths out of hutch's own directories.
 */
#include "rt-sandbox.h"
#include "hutch-ids.h"
#include "rt-sandbox-plan.h"
#include "hutch-json.h"

#include <ctype.h>
#include <limits.h>
#include <fcntl.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* What may follow a size's unit letter: nothing, B (1kb, as it always could) or iB (1KiB, the
 * name the kernel and systemd print). Any case; a unit is always binary (1k = 1024). */
static bool unit_tail(const char *t, bool byte)
{
	if (!*t)
		return true;
	if (tolower((unsigned char)t[0]) == 'b' && !t[1])
		return !byte; /* "1bb" is no size */
	return !byte && tolower((unsigned char)t[0]) == 'i' &&
	       tolower((unsigned char)t[1]) == 'b' && !t[2];
}

/* A number, as strtod reads it (so 1.5g, which sizes have always taken), then a unit. */
int rt_sb_parse_size(const char *s, uint64_t *out)
{
	char *end = NULL;
	if (!s || !*s || *s == '-')
		return -EINVAL;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || !(v >= 0)) /* !(v >= 0): NaN too, which (uint64_t) can't take */
		return -EINVAL;
	static const char units[] = "bkmgt";
	uint64_t mul = 1;
	if (*end) {
		const char *u = strchr(units, tolower((unsigned char)*end));
		if (!u || !unit_tail(end + 1, *u == 'b'))
			return -EINVAL;
		for (long i = 0; i < u - units; i++)
			mul *= 1024;
	}
	if (v * (double)mul > 9.2e18) /* and inf: no limit is that large */
		return -ERANGE;
	*out = (uint64_t)(v * (double)mul);
	return 0;
}

int rt_sb_size_error(const char *flag, const char *v, int r, struct hutch_err *err)
{
	if (r == -ERANGE)
		return hutch_fail(err, ERANGE, "%s %s: size too large", flag, v);
	return hutch_fail(err, EINVAL, "%s %s: not a size (bytes, or e.g. 64k, 512m, 1GiB, 2t)",
			  flag, v);
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

int rt_sb_parse_memory(const char *v, uint64_t *out, struct hutch_err *err)
{
	int r = rt_sb_parse_size(v, out);
	if (r < 0)
		return rt_sb_size_error("--memory", v, r, err);
	if (*out && *out < (4ULL << 20))
		return hutch_fail(err, EINVAL, "--memory %s: expected a size of at least 4m (or 0)",
				  v);
	return 0;
}

/* The CPUs this process may run on: a quota above them could never be used, and is
 * more likely a typo or a profile written for another machine. The affinity mask, not
 * the online count, since taskset or a cpuset (a container's) narrows it. */
int rt_sb_usable_cpus(void)
{
	for (int n = 1024; n <= 1 << 18; n *= 2) {
		cpu_set_t *set = CPU_ALLOC(n);
		size_t sz = CPU_ALLOC_SIZE(n);
		int count = -1, e = 0;
		if (!set)
			break;
		if (sched_getaffinity(0, sz, set) == 0)
			count = CPU_COUNT_S(sz, set);
		else
			e = errno;
		CPU_FREE(set);
		if (count > 0)
			return count;
		if (e != EINVAL) /* EINVAL: the kernel's mask is larger; anything else: give up */
			break;
	}
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (int)n : 1;
}

int rt_sb_parse_cpus(const char *v, double *out, struct hutch_err *err)
{
	char *end = NULL;
	double c = strtod(v, &end);
	if (end == v || *end || !isfinite(c) || (c != 0 && (c < 0.01 || c > 4096)))
		return hutch_fail(err, EINVAL, "--cpus %s: expected 0.01 to 4096 (or 0)", v);
	int usable = rt_sb_usable_cpus();
	if (c > usable)
		return hutch_fail(err, EINVAL, "--cpus %s: more than the %d CPU%s hutch may run on",
				  v, usable, usable == 1 ? "" : "s");
	*out = c;
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

/* Namespaces mode runs an OCI config, JSON, which carries UTF-8 only: rt_spec_parse would
 * refuse the config, and a Go runtime (runc) would quietly run U+FFFD in place of the bytes. */
static int check_utf8(const struct rt_sb_opts *o, struct hutch_err *err)
{
	const char *const one[][2] = { { "--image", o->image },
				       { "--workspace", o->workspace },
				       { "--cwd", o->cwd },
				       { "--entrypoint", o->entrypoint },
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

/* What only host root can do, refused up front for a rootless caller (docs/rootless.md). */
static int check_rootless(const struct rt_sb_opts *o, struct hutch_err *err)
{
	const char *what = NULL;
	if (!hutch_rootless() || o->isolation != RT_SB_ISO_NAMESPACES)
		return 0;
	if (o->network == RT_SB_NET_BRIDGE)
		what = "--network bridge (its veth and firewall live in the host's network "
		       "namespace; use --network none or host)";
	else if (o->runtime && strcmp(o->runtime, "native") != 0)
		what = "--runtime (only the native runtime runs rootless)";
	else if (o->host_root)
		what = "--host-root (there is no host root to be)";
	else if (o->has_owner)
		what = "--workspace-owner (giving a directory away needs root)";
	else if (o->as_root)
		what = "--as-root (the image's files are host root's, whom a rootless "
		       "namespace cannot map)";
	if (!what)
		return 0;
	return hutch_fail(err, EPERM, "sandbox: %s: not supported rootless (uid %u)", what,
			  (unsigned)geteuid());
}

/* Bridge mode's subnet must not take the host's addresses or shadow a network it reaches
 * directly: its gateway and sandboxes would (a sandbox got the host's gateway's address). */
static int check_subnet(const struct rt_sb_opts *o, struct hutch_err *err)
{
	if (net_subnet_check_free(&o->subnet, err) >= 0)
		return 0;
	char a[NET_IPV4_LEN];
	net_ipv4_format(o->subnet.net, a);
	return hutch_err_prefix(err, "--subnet %s/%u: ", a, o->subnet.prefix);
}

/* No command is fine where an image may name one: a store image's Entrypoint and Cmd (checked
 * once its config is read, rt-sandbox-image.c), or --entrypoint's program. "" names none. */
static bool command_may_come(const struct rt_sb_opts *o)
{
	if (o->has_entrypoint)
		return o->entrypoint && *o->entrypoint;
	return o->isolation == RT_SB_ISO_NAMESPACES && o->image && !rt_sb_image_is_dir(o->image);
}

int rt_sb_check(const struct rt_sb_opts *o, struct hutch_err *err)
{
	if (o->command ? !o->command[0] || !o->command[0][0] : !command_may_come(o))
		return hutch_fail(err, EINVAL,
				  "sandbox: no command (hutch sandbox [OPTIONS] -- CMD)");
	if (o->has_entrypoint && o->isolation != RT_SB_ISO_NAMESPACES)
		return hutch_fail(err, EINVAL, "--entrypoint: needs --isolation namespaces");
	if (o->isolation != RT_SB_ISO_NAMESPACES)
		TRY(rt_sb_check_host(o, err));
	else if (o->n_allow_read || o->n_allow_rw || o->n_deny || o->home_dotfiles)
		return hutch_fail(err, EINVAL,
				  "--allow-read, --allow-rw, --deny and --allow-home-dotfiles need "
				  "--isolation landlock");
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
	TRY(rt_sb_check_egress(o, err));
	TRY(rt_sb_check_ucounts(o, err));
	if (o->network == RT_SB_NET_BRIDGE && o->isolation == RT_SB_ISO_NONE)
		return hutch_fail(err, ENOTSUP,
				  "--network bridge with --isolation none: not supported (none "
				  "restricts nothing; --isolation landlock has bridge)");
	TRY(check_rootless(o, err));
	if (o->network == RT_SB_NET_BRIDGE)
		TRY(check_subnet(o, err));
	if (o->tty && !isatty(0))
		return hutch_fail(err, EINVAL, "--tty: standard input is not a terminal");
	return rt_sb_check_named(o, err);
}

/* A directory by device and inode, and the mount it was seen through: its place in the tree
 * (the same directory bind-mounted elsewhere has other ancestors). */
struct node {
	dev_t dev;
	ino_t ino;
	uint64_t mnt; /* 0: unknown (before Linux 5.8) */
	bool dir;
};

/* The source's walk: the source itself, and the places known not to lead to it (its own
 * ancestors, and every chain of ancestors already walked to the top without meeting it). */
struct walk {
	struct node src;
	struct node *clean;
	size_t n;
};

static int node_at(int dir, const char *path, struct node *n)
{
	struct statx sx;
	if (statx(dir, path, path[0] ? 0 : AT_EMPTY_PATH, STATX_TYPE | STATX_INO | STATX_MNT_ID,
		  &sx) < 0)
		return -errno;
	*n = (struct node){ .dev = makedev(sx.stx_dev_major, sx.stx_dev_minor),
			    .ino = sx.stx_ino,
			    .mnt = sx.stx_mask & STATX_MNT_ID ? sx.stx_mnt_id : 0,
			    .dir = S_ISDIR(sx.stx_mode) };
	return 0;
}

static bool same(struct node a, struct node b)
{
	return a.dev == b.dev && a.ino == b.ino;
}

static void add_clean(struct walk *w, struct node n)
{
	if (!n.mnt)
		return; /* no place known: never taken as one walked */
	w->clean = hutch_xrealloc(w->clean, (w->n + 1) * sizeof(*w->clean));
	w->clean[w->n++] = n;
}

static bool known_clean(const struct walk *w, struct node n)
{
	for (size_t i = 0; i < w->n; i++)
		if (same(n, w->clean[i]) && n.mnt == w->clean[i].mnt)
			return true;
	return false;
}

/*
 * Whether path (or, when it does not exist yet, its nearest existing ancestor) is the source
 * or lies beneath it, by device and inode, going up ".." through the mounts: another name for
 * the source (a bind mount of it elsewhere on the host) is the source too, where names differ.
 * The ancestors are looked at by stat alone (PATH/.., PATH/../.., ...), and the walk stops at
 * a place (a directory in a mount) an earlier walk, or the source's own, already went up
 * from: each registered root of a kind (/tmp/X/state) costs three stats, not a walk to the
 * top. path_n: path's own (when it exists).
 */
static bool below_src(struct walk *w, const char *path, struct node *path_n)
{
	char p[PATH_MAX];
	struct node n, last;
	_cleanup_close_ int dir = AT_FDCWD;
	bool exact = true;
	if (snprintf(p, sizeof(p), "%s", path) >= (int)sizeof(p))
		return false;
	while (node_at(AT_FDCWD, p, &n) < 0 || !n.dir) {
		char *slash = strrchr(p, '/');
		if (!slash || slash == p)
			return false;
		*slash = '\0';
		exact = false;
	}
	if (exact)
		*path_n = n;
	for (int depth = 0; depth < 4096; depth++) {
		if (same(n, w->src))
			return true;
		if (known_clean(w, n))
			break;
		add_clean(w, n); /* were it to meet the source: the check fails, the walk ends */
		last = n;
		if (strlen(p) + 4 > sizeof(p)) { /* a deep tree: go on from there */
			int next = openat(dir, p, O_PATH | O_DIRECTORY | O_CLOEXEC);
			if (next < 0)
				break;
			if (dir >= 0)
				close(dir);
			dir = next;
			strcpy(p, ".");
		}
		strcat(p, "/..");
		if (node_at(dir, p, &n) < 0 || (same(n, last) && n.mnt == last.mnt))
			break; /* the top */
	}
	return false;
}

/* The source's own chain up to the top: it, then its ancestors (clean: a walk that reaches
 * one of them has passed the source's level without meeting it). */
static int src_walk(const char *real, struct walk *w, struct node **chain, size_t *n)
{
	_cleanup_close_ int fd = open(real, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || node_at(fd, "", &w->src) < 0)
		return -1;
	*chain = hutch_xcalloc(1, sizeof(**chain));
	(*chain)[(*n)++] = w->src;
	for (int depth = 0; depth < 4096; depth++) {
		struct node up_n;
		int up = openat(fd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
		bool top = up < 0 || node_at(up, "", &up_n) < 0 ||
			   (same(up_n, (*chain)[*n - 1]) && up_n.mnt == (*chain)[*n - 1].mnt);
		close(fd);
		fd = up;
		if (top)
			break;
		*chain = hutch_xrealloc(*chain, (*n + 1) * sizeof(**chain));
		(*chain)[(*n)++] = up_n;
		add_clean(w, up_n);
	}
	return 0;
}

/* A workspace or rw bind holding one of hutch's own directories (or lying in one) would let
 * the sandbox rewrite what later runs trust: the seccomp cache that every sandbox loads, a
 * named sandbox's spec, an image. */
static int check_own(const char *flag, const char *src, char *const *own, struct hutch_err *err)
{
	_cleanup_free_ char *real = realpath(src, NULL);
	_cleanup_free_ struct node *chain = NULL;
	struct walk w = { .clean = NULL };
	size_t n = 0;
	if (!real || src_walk(real, &w, &chain, &n) < 0) {
		free(w.clean);
		return 0; /* the mount says why, naming the flag */
	}
	int r = 0;
	for (; *own && r == 0; own++) {
		struct node own_n = { .dir = false };
		/* By name, unresolved: a link on the way that lies in the source is the
		 * sandbox's to repoint. Then by inode, which follows the links as they are now. */
		if (rt_path_under(*own, real) || below_src(&w, *own, &own_n))
			r = hutch_fail(err, EPERM,
				       "%s %s: holds %s, one of hutch's own directories, "
				       "which no sandbox may write",
				       flag, src, *own);
		for (size_t i = 0; r == 0 && own_n.dir && i < n; i++)
			if (same(own_n, chain[i]))
				r = hutch_fail(err, EPERM,
					       "%s %s: inside %s, one of hutch's own directories, "
					       "which no sandbox may write",
					       flag, src, *own);
	}
	free(w.clean);
	return r;
}

int rt_sb_check_own_dirs(const struct rt_sb_opts *o, struct hutch_err *err)
{
	if (o->isolation != RT_SB_ISO_NAMESPACES || (!o->workspace && !o->n_binds))
		return 0;
	_cleanup_strv_ char **own = rt_own_dirs();
	if (o->workspace)
		TRY(check_own("--workspace", o->workspace, own, err));
	for (size_t i = 0; i < o->n_binds; i++)
		if (!o->binds[i].ro)
			TRY(check_own("--bind", o->binds[i].src, own, err));
	return 0;
}
