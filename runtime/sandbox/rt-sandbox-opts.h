/* SPDX-License-Identifier: Apache-2.0 */
/* `hutch sandbox`'s options: flags and profile into one struct (rt-sandbox-opts.c). Included
 * through rt-sandbox.h. */
#ifndef HUTCH_RT_SANDBOX_OPTS_H
#define HUTCH_RT_SANDBOX_OPTS_H

#include "rt.h"
#include "net.h"

struct rt_sb_bind {
	char *src, *dst;
	bool ro;
};

enum {
	RT_SB_SET_MEMORY = 1,
	RT_SB_SET_CPUS = 2,
	RT_SB_SET_PIDS = 4,
	RT_SB_SET_TIMEOUT = 8,
	RT_SB_SET_GRACE = 16,
	RT_SB_SET_ALL = 31,
};

struct rt_sb_tmpfs {
	char *path;
	uint64_t size;
};

#define RT_SB_N_UCOUNTS 14 /* /proc/sys/user's max_*, two rlimits (rt-sandbox-ucounts.c) */
/* How long --profile and --env-file may take when they name a pipe whose writer is slow. */
#define RT_SB_CALLER_FILE_MS 5000

enum rt_sb_network { RT_SB_NET_NONE, RT_SB_NET_HOST, RT_SB_NET_BRIDGE };

/* namespaces: the OCI sandbox; landlock: the host itself behind a mount view, Landlock and
 * seccomp (rt-sandbox-host.c); none: the host, unrestricted (with a warning). */
enum rt_sb_isolation { RT_SB_ISO_NAMESPACES, RT_SB_ISO_LANDLOCK, RT_SB_ISO_NONE };

/* --allow-host NAME[:PORT]: a normalised name or "*.suffix" pattern; port 0: every port. */
struct rt_sb_allow_host {
	char *pattern;
	uint16_t port;
};

struct rt_sb_opts {
	char *image, *workspace, *cwd, *hostname;
	struct rt_sb_bind *binds;
	size_t n_binds;
	struct rt_sb_tmpfs *tmpfs;
	size_t n_tmpfs;
	char **env; /* K=V, in order; later ones win */
	size_t n_env;
	bool has_user, as_root, host_root, tty;
	uid_t uid; /* inside */
	gid_t gid;
	bool has_owner; /* --workspace-owner: the host ids the sandbox writes as */
	uid_t owner_uid;
	gid_t owner_gid;
	uint64_t memory;		 /* bytes, 0 = unlimited */
	double cpus;			 /* 0 = unlimited */
	int64_t pids;			 /* 0 = unlimited */
	int64_t ucount[RT_SB_N_UCOUNTS]; /* --ucount: < 0 = the default */
	double timeout, grace;		 /* seconds, 0 = none */
	enum rt_sb_network network;
	struct net_subnet subnet; /* bridge mode (--subnet, --mtu, --dns) */
	unsigned mtu;
	char **dns; /* NULL-terminated IPv4 addresses */
	size_t n_dns;
	bool bridge_opts_set;
	/* Egress (rt-sandbox-egress.c): --allow-host, --allow-cidr, --deny-cidr, --egress. */
	struct rt_sb_allow_host *allow_host;
	size_t n_allow_host;
	struct net_cidr *allow_cidr, *deny_cidr;
	size_t n_allow_cidr, n_deny_cidr;
	bool egress_restricted;
	unsigned max_connections; /* --max-connections: the firewall's cap; 0 = none */
	bool egress_opts_set;
	bool deny_host_loopback;     /* --network host without the host's loopback */
	struct net_publish *publish; /* --publish */
	size_t n_publish;
	char *lock;
	bool no_wait;
	double lock_timeout; /* < 0: wait without limit */
	char *runtime;	     /* NULL or "native" */
	char *name;	     /* --name: a long-lived sandbox others exec into */
	bool detach;	     /* --detach: a supervisor keeps it; hutch returns once it runs */
	/* --report, resolved once when given (rt_sb_set_report): the directory held as an fd,
	 * the name in it, and the path as resolved, for messages. A directory swapped for a
	 * link later (the sandbox writes the workspace) is not followed: the report is cleared
	 * and written in the one held. */
	char *report;
	int report_dir_fd;
	char *report_name;
	int report_fd;
	char **command; /* NULL-terminated; NULL: the image's Cmd */
	size_t n_command;
	char *entrypoint;    /* --entrypoint: replaces the image's ("" or NULL: none) */
	bool has_entrypoint; /* given: the image's Entrypoint and Cmd are not used */
	/* host mode (--isolation landlock|none) */
	enum rt_sb_isolation isolation;
	char **allow_read, **allow_rw, **deny; /* NULL-terminated */
	size_t n_allow_read, n_allow_rw, n_deny;
	bool home_dotfiles, best_effort;
	bool network_set;     /* --network given: host mode's default is host, not none */
	char *pool;	      /* --pool NAME: a sandbox of that pool's (rt-sandbox-pool.c) */
	const char *pool_why; /* --pool: why it ran cold (NULL: pooled), for the report */
	double lock_wait_ms;  /* --pool: how long the client waited for --lock */
	unsigned limits_set;  /* RT_SB_SET_*: given (a flag or the profile); a pooled
			       * request's others are the pool's, not hutch's defaults */
	/* Set by C callers alone (image build, a pool), never by a flag or the profile. */
	struct rt_sb_pool_slot *pool_slot;    /* the sandbox waits for a pool's request */
	const char *store;		      /* the image store (NULL: img_store_default's) */
	const char *layer_upper, *layer_work; /* the throw-away layer kept here, on disk */
};

/* Root inside: --as-root (a user namespace's) or --host-root (the host's). */
static inline bool rt_sb_root_inside(const struct rt_sb_opts *o)
{
	return o->as_root || o->host_root;
}

/* rt-sandbox-opts.c: defaults, then profile, then flags (lists append, values replace). */
void rt_sb_opts_init(struct rt_sb_opts *o);
void rt_sb_opts_free(struct rt_sb_opts *o);
int rt_sb_parse_args(struct rt_sb_opts *o, int argc, char **argv, struct hutch_err *err);
int rt_sb_load_profile(struct rt_sb_opts *o, const char *path, struct hutch_err *err);
int rt_sb_check(const struct rt_sb_opts *o, struct hutch_err *err);
/* The caller's --workspace and rw --bind sources against hutch's own directories
 * (rt_own_dirs): refused when one holds or lies in one. Flags and profiles only: an image
 * build binds a directory of its own in the store. */
int rt_sb_check_own_dirs(const struct rt_sb_opts *o, struct hutch_err *err);
/* rt-sandbox-env.c: the setters of --env and --env-file (p: the struct rt_sb_opts), and one
 * file line: 0 for a blank or comment line, 1 with *ret_kv "KEY=VALUE" (unquoted) or a bare
 * "KEY" (the caller's value). */
int rt_sb_set_env(void *p, const char *v, struct hutch_err *err);
int rt_sb_set_env_file(void *p, const char *v, struct hutch_err *err);
int rt_sb_env_line(const char *line, char **ret_kv, struct hutch_err *err);
/* rt-sandbox-report.c: the setter of --report (p: the struct rt_sb_opts). */
int rt_sb_set_report(void *p, const char *v, struct hutch_err *err);
/* Bytes, or a number with a binary unit (k, m, g, t; any case; then nothing, B or iB).
 * -EINVAL or -ERANGE, which rt_sb_size_error words for the flag. */
int rt_sb_parse_size(const char *s, uint64_t *out);
int rt_sb_size_error(const char *flag, const char *v, int r, struct hutch_err *err);
/* The values of --memory, --timeout and --network, for callers with flags of their own. */
int rt_sb_parse_memory(const char *v, uint64_t *out, struct hutch_err *err);
int rt_sb_parse_seconds(const char *s, double *out);
/* --cpus: 0 (no quota), or 0.01 up to the CPUs of this process's affinity mask. */
int rt_sb_parse_cpus(const char *v, double *out, struct hutch_err *err);
int rt_sb_usable_cpus(void);
int rt_sb_parse_network(const char *v, enum rt_sb_network *out, struct hutch_err *err);
void rt_sb_print_help(int fd);
/* rt-sandbox-egress.c: the setters of --allow-host, --allow-cidr, --deny-cidr and --egress,
 * what they need (rt_sb_check), and freeing them. */
int rt_sb_set_allow_host(void *p, const char *v, struct hutch_err *err);
int rt_sb_set_allow_cidr(void *p, const char *v, struct hutch_err *err);
int rt_sb_set_deny_cidr(void *p, const char *v, struct hutch_err *err);
int rt_sb_set_egress(void *p, const char *v, struct hutch_err *err);
/* A bridge sandbox's tracked connections at once. The host's table holds 262144 entries on a
 * machine of more than 4 GiB (nf_conntrack_max): at 1024, the 253 sandboxes of a /24 stay
 * below that together. */
#define RT_SB_MAX_CONNECTIONS 1024
int rt_sb_set_max_connections(void *p, const char *v, struct hutch_err *err);
int rt_sb_set_publish(void *p, const char *v, struct hutch_err *err);
int rt_sb_check_egress(const struct rt_sb_opts *o, struct hutch_err *err);
void rt_sb_egress_free(struct rt_sb_opts *o);
/* rt-sandbox-ucounts.c: --ucount's setter, the defaults, and what it needs (rt_sb_check). */
void rt_sb_ucounts_init(struct rt_sb_opts *o);
int rt_sb_set_ucount(void *p, const char *v, struct hutch_err *err);
int rt_sb_check_ucounts(const struct rt_sb_opts *o, struct hutch_err *err);
/* rt-sandbox-named.c: the setters of --name and --detach, and what they can't be combined
 * with (rt_sb_check). */
int rt_sb_set_name(void *p, const char *v, struct hutch_err *err);
int rt_sb_set_detach(void *p, const char *v, struct hutch_err *err);
int rt_sb_check_named(const struct rt_sb_opts *o, struct hutch_err *err);

#endif
