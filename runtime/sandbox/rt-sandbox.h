/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `hutch sandbox`: one command in a short-lived, locked-down sandbox. The options come from
 * flags and a JSON profile through one table of setters; the sandbox is an OCI spec built in
 * memory and run through the same create/start path as `run`, or handed to another runtime.
 */
#ifndef HUTCH_RT_SANDBOX_H
#define HUTCH_RT_SANDBOX_H

#include "rt.h"
#include "ll.h"
#include "net-egress.h"

#define RT_SB_EXIT_FAIL 125    /* hutch could not start the sandbox */
#define RT_SB_EXIT_TIMEOUT 124 /* as timeout(1) */
/* Beneath the caller's state directory (host root's, or a rootless caller's own). */
#define RT_SB_ROOT rt_run_path("sandbox")
#define RT_SB_LOCKS rt_run_path("locks")
#define RT_SB_NAMES rt_run_path("sandbox-names")

#include "rt-sandbox-opts.h"

#define RT_SB_ID_SPAN 65536U /* ids 0..65535 exist inside */

/* An rw --bind's on-disk owner, and whether it is idmapped onto the sandbox user. */
struct rt_sb_bind_ids {
	uid_t uid;
	gid_t gid;
	bool idmapped;
};

struct img_run_config;

/* What the sandbox's spec is built from beside its options (rt-sandbox-plan.c). */
struct rt_sb_plan {
	char *rootfs; /* what root.path points at (the image, or an overlay on it) */
	/* The process, the options over the image's config (rt-sandbox-image.c). */
	uid_t uid; /* inside (root's 0 with --as-root or --host-root) */
	gid_t gid;
	char **argv;			     /* Entrypoint + Cmd, as the options replace them */
	char **image_env;		     /* the image's Env, beneath the options' own */
	char *cwd;			     /* --cwd, the image's WorkingDir, /workspace or / */
	struct img_run_config *image_config; /* a store image's (NULL: a directory) */
	uid_t host_uid; /* the host id the sandbox user (root with --as-root) runs as */
	gid_t host_gid;
	uint32_t sub_uid,
		sub_gid; /* host starts of the subordinate ranges every other id maps to */
	uid_t write_uid; /* the host ids its files in the workspace get */
	gid_t write_gid;
	bool full_range;      /* --as-root: every id inside is subordinate, root's included */
	bool host_root;	      /* --host-root: no user namespace */
	bool delegated;	      /* --runtime other than native */
	bool ws_idmapped;     /* the workspace is an idmapped mount hutch attaches */
	bool ws_chowned;      /* --workspace-owner gave the directory to write_uid:write_gid */
	bool ws_gid_replaced; /* the workspace's group is root's: write_gid is subordinate */
	struct rt_sb_bind_ids *binds; /* per o->binds */
	bool layered;		      /* a throw-away layer over the image */
	bool rootfs_copy;	      /* layered by copying the image (no overlayfs) */
	bool with_init;		      /* PID 1 is hutch's init (native runs) */
	bool userns;
	char *cgroup; /* the sandbox's cgroup path, as cg_open takes it */
	const char
		*cgroups_path; /* linux.cgroupsPath in the spec (a child of cgroup for delegates) */
	char *image_name;      /* the image: NAME:TAG in the store, or the path given */
	char image_digest[72]; /* its manifest digest ("" for a directory) */
	const char *net_etc;   /* bridge: dir with resolv.conf, hosts, hostname to bind */
	const char *net_address; /* bridge: the sandbox's leased address, "A.B.C.D/N" */
	const char *netns_path;	 /* bridge, delegated: the namespace the runtime joins */
	const char *sysfs;	 /* and a sysfs of it, bound as /sys (none: a new sysfs) */
	/* Rootless (rt-sandbox-rootless.c): hutch's own user namespace, made first. */
	bool rootless;
	bool single_id;		 /* only the caller's id is mapped: the sandbox user is it */
	struct ns_rootless user; /* the caller's ids and ranges (why: one id only) */
	bool no_cgroup;		 /* rootless, nothing delegated, --best-effort: no limits */
	char weakened[4][192];	 /* what --best-effort ran without, for stderr and the report */
	size_t n_weakened;
};
/* rt-sandbox-plan.c: the sandbox's OCI spec, typed, held to rt_spec_check; bundle is where it
 * runs (hooks' cwd), the plan says where its rootfs is. */
int rt_sb_spec(const struct rt_sb_opts *o, const struct rt_sb_plan *p, const char *bundle,
	       struct rt_spec **out, struct hutch_err *err);

/* rt-sandbox-rootless.c: for a rootless caller, before anything of the sandbox exists: the
 * cgroup base (a delegated one, else none with --best-effort, else a refusal naming the
 * fix); then, before the scratch mount namespace, the user namespace that owns it. */
int rt_sb_rootless_cgroup(const struct rt_sb_opts *o, struct rt_sb_plan *p, char **base,
			  struct hutch_err *err);
int rt_sb_rootless_enter(const struct rt_sb_opts *o, struct rt_sb_plan *p, struct hutch_err *err);

/* rt-sandbox-ids.c: the host ids (refusing root-owned workspaces and rw binds), then, once
 * the rootfs exists, the idmapped mounts of what the sandbox user does not own. */
uint32_t rt_sb_sub_ids(const char *file); /* root's range in /etc/subuid or subgid */
/* The subordinate ranges and the user namespace, which the rootfs needs; then, with the
 * process planned, the host ids it runs and writes as. */
void rt_sb_plan_ranges(const struct rt_sb_opts *o, struct rt_sb_plan *p);
int rt_sb_plan_ids(const struct rt_sb_opts *o, struct rt_sb_plan *p, struct hutch_err *err);
int rt_sb_attach_idmapped(const struct rt_sb_opts *o, const struct rt_sb_plan *p,
			  struct hutch_err *err);
void rt_sb_note_ids(const struct rt_sb_opts *o, const struct rt_sb_plan *p);
/* rt-sandbox-rootfs.c: p->rootfs, the image as is or under a throw-away layer in scratch with
 * the mount points the options need. */
int rt_sb_plan_rootfs(const struct rt_sb_opts *o, struct rt_sb_plan *p, const char *scratch,
		      struct hutch_err *err);
/* --image is a directory (a path wins), else NAME[:TAG] in the store. */
bool rt_sb_image_is_dir(const char *image);

/* rt-sandbox-image.c: the process of p (user, argv, env, cwd): the options where given,
 * else the image's config (read by rt_sb_plan_rootfs), else hutch's defaults. After the
 * rootfs (a named User is looked up in its /etc/passwd), before rt_sb_plan_ids. */
int rt_sb_plan_process(const struct rt_sb_opts *o, struct rt_sb_plan *p, struct hutch_err *err);
void rt_sb_plan_clear(struct rt_sb_plan *p);

/* rt-sandbox-report.c */
/* What host mode applied, by value: the set-up child fills it in and sends it back whole. */
#define RT_SB_WEAK_MAX 8
struct rt_sb_host {
	bool active, mount_view, userns, netns, tcp_rules, landlock, seccomp, cgroup;
	struct ll_ruleset ll;
	size_t n_placeholders;
	char weakened[RT_SB_WEAK_MAX][192]; /* what --best-effort ran without */
	size_t n_weakened;
};

/* Why the run did not end as the command chose, for an orchestrator that reads no text. */
enum rt_sb_failure {
	RT_SB_FAIL_NONE,
	RT_SB_FAIL_BAD_OPTION,	  /* a flag, the profile or a C caller's options */
	RT_SB_FAIL_LOCK_BUSY,	  /* --lock held (--no-wait, or --lock-timeout ran out) */
	RT_SB_FAIL_IMAGE_MISSING, /* no such image directory or store image */
	RT_SB_FAIL_SETUP,	  /* anything else before the command ran */
	RT_SB_FAIL_EXEC,	  /* the command could not be run (126) or found (127) */
	RT_SB_FAIL_TIMEOUT,
	RT_SB_FAIL_OOM,
};

/* What the egress policy did (bridge mode), for the report. */
struct rt_sb_egress_result {
	bool present;
	struct net_egress_stats fw;
	bool dns;
	struct net_dns_stats dns_stats;
};

struct rt_sb_result {
	char id[32];			/* sb-PID: every run's (its state's too, when it has one) */
	struct timespec started, ended; /* realtime */
	double lock_wait_ms;
	enum rt_sb_failure failure;
	int exit_code;
	int signal; /* 0 = none */
	bool timed_out, oom_killed;
	double wall_ms;
	bool has_stats;
	struct cg_stats stats;
	uint64_t pids_peak;
	const char *runtime;
	const char *error;
	struct rt_sb_host host;
	struct rt_sb_egress_result egress;
};
int rt_sb_write_report(const struct rt_sb_opts *o, const struct rt_sb_plan *p,
		       const struct rt_sb_result *r, struct hutch_err *err);
/* An earlier run's --report file, removed when a run starts: it is never read as this one's. */
void rt_sb_clear_report(const struct rt_sb_opts *o);
/* rt-sandbox-opts.c: --report and --report-fd among argv, for a report of the flags that
 * failed to parse. */
void rt_sb_find_report(int argc, char **argv, struct rt_sb_opts *o);

/* rt-sandbox-lock.c */
int rt_sb_lock(const struct rt_sb_opts *o, int *fd, struct hutch_err *err);
/* Removes the lock file, then lets go of the lock (fd < 0: nothing). */
void rt_sb_unlock(const struct rt_sb_opts *o, int fd);

/* rt-sandbox-named.c: --name's record (take: EEXIST when its sandbox runs; set writes the
 * id; release removes it), a sweep of killed hutches' records, and a name's id. */
int rt_sb_name_take(const char *name, int *fd, struct hutch_err *err);
void rt_sb_name_set(int fd, const char *id);
void rt_sb_name_release(const char *name, int fd);
void rt_sb_names_sweep(void);
int rt_sb_name_resolve(const char *name, char *id, size_t len, struct hutch_err *err);
/* The sandbox's spec (config.json: its state dir is the bundle exec reads) and sandbox.json. */
struct rt_sb_record {
	char *name, *image; /* NULL: none */
	pid_t supervisor;   /* the hutch that runs it */
	int64_t grace_ms;
};
int rt_sb_write_record(const struct rt_sb_opts *o, const char *dir, const struct rt_spec *spec,
		       const char *image, struct hutch_err *err);
int rt_sb_read_record(const char *id, struct rt_sb_record *r);
void rt_sb_record_clear(struct rt_sb_record *r);
/* --detach: forks the supervisor (0 in it, with *fd the pipe to the caller, stdio /dev/null
 * and no other fd), the caller waits (0 once the command started, NAME printed; else the
 * supervisor's error). */
pid_t rt_sb_detach(const struct rt_sb_opts *o, const struct rt_global *g, int *fd,
		   struct hutch_err *err);
int rt_sb_detach_wait(const struct rt_sb_opts *o, pid_t pid, int fd, struct hutch_err *err);
int rt_sb_notify_started(int *fd, struct hutch_err *err); /* closes *fd */
void rt_sb_notify_failed(int fd, const struct hutch_err *err);
/* rt-sandbox-cmds.c: `sandbox exec|ls|stop|rm` (argv[0] the subcommand). */
bool rt_sb_is_subcommand(const char *arg);
int rt_sb_subcommand(int argc, char **argv, struct hutch_err *err);
void rt_sb_print_subcommands(int fd);

/* rt-sandbox-delegate.c: runs the bundle with another runtime and waits (w has the timeout,
 * grace and kill_tree set; pidfd/pid/status are filled in). */
struct sandbox_delegate_in {
	const char *runtime, *scratch, *id;
	const char *config;	   /* config.json text */
	const char *cgroup;	   /* linux.cgroupsPath, absolute */
	const char *parent_cgroup; /* hutch's own, holding cgroup: killed if hutch dies */
	bool network_none;
	bool network_bridge; /* the spec joins the namespace hutch wired (runsc: its netstack) */
	int netns_fd;	     /* that namespace (bridge), or -1 */
	bool has_stats;	     /* out: the container cgroup's figures, read before delete */
	struct cg_stats stats;
};
int rt_sb_delegate(struct sandbox_delegate_in *in, struct rt_waiter *w, struct hutch_err *err);

/* rt-sandbox-init.c: PID 1 of a native sandbox, which starts the command through the exec
 * trampoline (targv: rt_trampoline_argv); sync_fd reports the command's wait status and,
 * when it could not be run, execve's errno (two ints; the errno 0 when it ran). */
__attribute__((noreturn)) void rt_sb_init(int tramp_fd, char **targv, char *const *envp,
					  int sync_fd);

/* rt-sandbox-host.c: host mode. rt_sb_check_host checks what host mode can't take;
 * rt_sb_run_host runs the command and fills r (exit, timeout, stats and r->host);
 * rt_sb_gen_host writes the report's isolation object for it. */
int rt_sb_check_host(const struct rt_sb_opts *o, struct hutch_err *err);
int rt_sb_run_host(const struct rt_sb_opts *o, struct rt_sb_result *r, struct hutch_err *err);
struct yajl_gen_t;
void rt_sb_gen_host(struct yajl_gen_t *g, const struct rt_sb_opts *o, const struct rt_sb_host *h);

/* rt-sandbox-net.c: bridge mode around create/start. prepare leases the address and writes
 * the /etc files (before the spec is built); attach wires the veth into the sandbox's netns,
 * adds its firewall elements and starts its DNS forwarder (before start); release undoes it
 * all, reading the counters, and is safe to call always; reclaim cleans up after SIGKILLed
 * hutches. */
struct rt_sb_net {
	int ipam_fd;
	uint32_t addr; /* 0 = no lease */
	bool attached;
	char address[NET_IPV4_LEN + 4];
	uint32_t upstream[4]; /* the forwarder's nameservers */
	size_t n_upstream;
	pid_t dns_pid;	 /* the forwarder (0: none) */
	int dns_stop;	 /* closing it stops the forwarder */
	int dns_stats;	 /* it writes its figures here as it ends */
	pid_t proxy_pid; /* the --publish relay (0: none) */
	int proxy_stop;
};
/* No lease, no helper, no fd: what release may always be called on. */
#define RT_SB_NET_INIT                                                                             \
	{                                                                                          \
		.ipam_fd = -1, .dns_stop = -1, .dns_stats = -1, .proxy_stop = -1                   \
	}
int rt_sb_net_prepare(const struct rt_sb_opts *o, struct rt_sb_net *n, const char *etc_dir,
		      struct hutch_err *err);
int rt_sb_net_attach(const struct rt_sb_opts *o, struct rt_sb_net *n, pid_t pid,
		     struct hutch_err *err);
int rt_sb_net_attach_fd(const struct rt_sb_opts *o, struct rt_sb_net *n, int netns_fd,
			struct hutch_err *err);
/* The sandbox has ended: its helper may start removing its elements (before release). */
void rt_sb_net_hangup(struct rt_sb_net *n);
void rt_sb_net_release(struct rt_sb_net *n, struct rt_sb_egress_result *res);
void rt_sb_net_reclaim(void);
/* rt-sandbox-egress.c: the firewall's terms for o. rt-sandbox-dns.c: the forwarder process,
 * started once the veth exists (it binds the gateway on it), and stopped first at release. */
struct net_egress rt_sb_egress_of(const struct rt_sb_opts *o);
int rt_sb_dns_start(const struct rt_sb_opts *o, struct rt_sb_net *n, struct hutch_err *err);
int rt_sb_dns_go(struct rt_sb_net *n, struct hutch_err *err); /* the veth exists */
void rt_sb_dns_hangup(struct rt_sb_net *n);		      /* the sandbox has ended */
bool rt_sb_dns_stop(struct rt_sb_net *n, struct rt_sb_egress_result *res); /* its figures */
void rt_sb_dns_reap(struct rt_sb_net *n); /* waits for it: always, last */
int rt_sb_publish_start(const struct rt_sb_opts *o, struct rt_sb_net *n, struct hutch_err *err);
void rt_sb_publish_stop(struct rt_sb_net *n);
void rt_sb_gen_egress(struct yajl_gen_t *g, const struct rt_sb_opts *o,
		      const struct rt_sb_egress_result *r);

/* rt-sandbox.c: the sandbox of o, run to its end: the command's exit status (124 on its
 * timeout), or < 0 with err set when the sandbox could not run (its status is then
 * RT_SB_EXIT_FAIL, or err->status). The report is written when o asks for one. It enters a
 * mount namespace of its own: a caller that goes on afterwards runs it in a child. */
int rt_sandbox_run(const struct rt_global *g, const struct rt_sb_opts *o, struct hutch_err *err);

#endif
