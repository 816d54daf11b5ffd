/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `hutch sandbox`: one command in a short-lived, locked-down sandbox. The options come from
 * flags and a JSON profile through one table of setters; the sandbox is an OCI spec built in
 * memory and run through the same create/start path as `run`, or handed to another runtime.
 * The plan it is built from, bridge networking and named sandboxes have headers of their own:
 * rt-sandbox-plan.h, rt-sandbox-net.h and rt-sandbox-named.h.
 */
#ifndef HUTCH_RT_SANDBOX_H
#define HUTCH_RT_SANDBOX_H

#include "rt.h"
#include "ll.h"
#include "net-egress.h"

#define RT_SB_EXIT_FAIL 125    /* hutch could not start the sandbox */
#define RT_SB_EXIT_TIMEOUT 124 /* as timeout(1) */
/* rt-sandbox-root.c: the instance's sandbox state, ROOT/.sandbox (rt_root(): --root, else
 * HUTCH_ROOT, else the run dir). rt_sb_path(sub) names ROOT/.sandbox/sub (sub NULL: the
 * directory itself), kept for the run. rt_sb_subdir opens sub (one name) beneath it, made
 * 0700 when make (ROOT/.sandbox 0711, the caller's alone), else ENOENT when missing; never
 * through a symlink, from held fds: an fd the caller closes. */
const char *rt_sb_path(const char *sub);
int rt_sb_subdir(const char *sub, bool make, struct hutch_err *err);
/* runs/PID, flocked by each hutch sandbox (and by the runtime it delegates to: a dead hutch's
 * runc may still make cgroups) for its life, made before its cgroup (hutch-sb-PID): a sweep
 * removes only the cgroups of this root's runs (rt_sb_run_ours) whose hutch died, never
 * another root's; rt_sb_runs_prune then drops the records nobody holds (pid's alone when
 * pid > 0), but those whose cgroup keep(ctx) lists (NULL-terminated names; NULL: unknown, so
 * every record stays). keep is called once the dead records are held; keep NULL: drop them.
 * rt_sb_run_inherit lets the record through the exec of a delegated runtime. */
int rt_sb_run_take(struct hutch_err *err);
void rt_sb_run_release(int fd, bool keep); /* keep: its cgroup outlived the run */
void rt_sb_run_inherit(void);
bool rt_sb_run_ours(int pid);
void rt_sb_runs_prune(int pid, char **(*keep)(void *), void *ctx);
/* Whether runs/ holds a record other than this run's (a dead run's, or a live one's). */
bool rt_sb_runs_other(void);
/* After its cgroup was purged: pid's record, once the runtime that inherited it has ended too
 * (within ms; the next sweep's otherwise), dropped if again(ctx) then succeeds: the runtime
 * may have made the cgroup again before it ended, and again removes it for good. */
void rt_sb_run_drop_wait(int pid, int ms, int (*again)(void *), void *ctx);
#define RT_SB_ROOT rt_sb_path("state") /* the sb-N state dirs: the sandboxes' --root */
#define RT_SB_LOCKS rt_sb_path("locks")
#define RT_SB_NAMES rt_sb_path("names")
#define RT_SB_SCRATCH rt_sb_path("scratch")

#include "rt-sandbox-opts.h"

struct rt_sb_plan;    /* rt-sandbox-plan.h */
struct rt_sb_session; /* rt-sandbox-delegate.h */

/* rt-sandbox-setid.c: where a sandbox may leave setuid or setgid files (or file capabilities)
 * on the host, set or changed, its workspace and rw binds, and since when. */
struct rt_sb_setid_path {
	char *flag, *path; /* "--workspace" or "--bind", and the host path: as given, then (once
			    * resolved) the absolute one it resolved to */
	dev_t dev;	   /* what it resolved to, which the walk must find there again */
	ino_t ino;
	bool resolved; /* dev and ino are known */
	bool held;     /* fd: the resolved directory or file, in the run's own hutch only */
	int fd;
};
struct rt_sb_setid {
	struct timespec since; /* taken before the sandbox is made */
	struct rt_sb_setid_path *paths;
	size_t n; /* 0: nothing writable on the host (or host mode) */
};
void rt_sb_setid_plan(const struct rt_sb_opts *o, struct rt_sb_setid *s);
/* Each path as resolved (p's fds, in o's order): what every later walk looks at, whatever
 * the cwd of the `sandbox exec` that walks. */
void rt_sb_setid_resolved(const struct rt_sb_opts *o, const struct rt_sb_plan *p,
			  struct rt_sb_setid *s);
void rt_sb_setid_free(struct rt_sb_setid *s);
/* What the walks did: files whose bits or capability went, device nodes removed. */
struct rt_sb_setid_counts {
	uint64_t cleared, devices;
};
/* Clears the bits and capabilities of files changed since s->since under each path, and
 * removes the device nodes made or changed since, saying on stderr what it did; adds that to
 * *c. False when s has no path. */
bool rt_sb_setid_clear(const struct rt_sb_setid *s, struct rt_sb_setid_counts *c);
/* A named sandbox's record (sandbox.json) carries s for `sandbox exec`, which walks after
 * each command and notes its count in the state dir for the sandbox's report. */
struct yajl_gen_t;
struct yajl_val_s;
void rt_sb_setid_gen(struct yajl_gen_t *g, const struct rt_sb_setid *s);
void rt_sb_setid_parse(struct yajl_val_s *doc, struct rt_sb_setid *s);
void rt_sb_setid_note(const char *state_dir, const struct rt_sb_setid_counts *c);
void rt_sb_setid_noted(const char *state_dir, struct rt_sb_setid_counts *c);

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
	RT_SB_FAIL_STOPPED,	 /* sandbox stop, rm -f, or a HUP/INT/QUIT/TERM sent to hutch */
	RT_SB_FAIL_HUTCH_KILLED, /* hutch died before its report: the watcher's (rt-sandbox-watch.c) */
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
	bool stopped; /* ended by sandbox stop|rm -f or a signal sent to hutch, passed on */
	double wall_ms;
	bool has_stats;
	struct cg_stats stats;
	uint64_t pids_peak;
	/* With has_stats: OOM kills, memory limit hits and forks refused, each read where it
	 * counts the sandbox's own processes; -1 where the runtime left no such count. */
	int64_t oom_kills, mem_hits, pids_refused;
	const char *runtime;
	const char *error;
	struct rt_sb_host host;
	struct rt_sb_egress_result egress;
	bool setid_walked;	  /* the workspace and rw binds were walked */
	uint64_t setid_cleared;	  /* files whose setid bits or capability the walks removed */
	uint64_t devices_removed; /* device nodes the walks removed */
};
/* A signal that, sent to hutch and passed on, asks the command to end (rt_waiter.forwarded). */
static inline bool rt_sb_stop_signal(int sig)
{
	return sig == SIGHUP || sig == SIGINT || sig == SIGQUIT || sig == SIGTERM;
}
/* `sandbox stop|rm -f` marks the sandbox's state dir (the name RT_SB_STOPPED) before it signals,
 * so its supervisor's report says stopped. */
#define RT_SB_STOPPED "stopped"
int rt_sb_write_report(const struct rt_sb_opts *o, const struct rt_sb_plan *p,
		       const struct rt_sb_result *r, struct hutch_err *err);
/* An earlier run's --report file, removed when a run starts: it is never read as this one's. */
void rt_sb_clear_report(const struct rt_sb_opts *o);
/* rt-sandbox-opts.c: --report and --report-fd among argv, for a report of the flags that
 * failed to parse. */
void rt_sb_find_report(int argc, char **argv, struct rt_sb_opts *o);

/* rt-sandbox-watch.c: with --report or --report-fd, a process that writes the report of a
 * hutch killed before it wrote its own: start forks it (the socket to it, or -1: none; it
 * keeps notify_fd, --detach's pipe, open until it is done), say tells it 'W' (hutch is about
 * to write the report) or 'D' (it did). */
int rt_sb_watch_start(const struct rt_sb_opts *o, const struct rt_sb_result *r, int notify_fd);
void rt_sb_watch_say(int fd, char word);

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
	/* Hybrid host, --deny-host-loopback: cgroup.procs of parent_cgroup in the cgroup2
	 * hierarchy, which the runtime joins before it runs, else -1. crun (cgroup2 hidden)
	 * and runsc leave the container in their own cgroup2 cgroup there, where the filter
	 * on ours would not reach it. */
	int cgroup2_procs;
	const char *cgroup2_dir; /* that cgroup's directory (a session's execs join it too) */
	/* The spec's process.rlimits: runc and crun make the user namespace, which takes its
	 * limits on what it queues of root's from theirs (ns_userns_limits_lower). */
	const struct ns_rlimit *rlimits;
	size_t n_rlimits;
	bool has_stats; /* out: the container cgroup's figures, read before delete */
	struct cg_stats stats;
	/* What the runtime cannot give of what o asks goes to plan's weakened (report, stderr). */
	const struct rt_sb_opts *o;
	struct rt_sb_plan *plan;
	struct rt_sb_session *session; /* --name: rt-sandbox-delegate.h; else NULL */
};
int rt_sb_delegate(struct sandbox_delegate_in *in, struct rt_waiter *w, struct hutch_err *err);
/* rt-sandbox-plaincg.c: what a runtime made for cgroup (.../hutch-sb-PID) in the unmounted
 * controllers' plain directories on /sys/fs/cgroup, removed; the hutch-sb-* there, listed. */
void rt_sb_plaincg_remove(const char *cgroup);
/* The directories of cgroup's parent path missing before the run in those plain directories
 * (a runtime makes them too), shallowest first, for rt_sb_plaincg_remove_parents after it. */
size_t rt_sb_plaincg_missing(const char *cgroup, char ***dirs);
void rt_sb_plaincg_remove_parents(char **dirs, size_t n);
void rt_sb_plaincg_list(const char *base, struct cg_child **v, size_t *n);

/* rt-sandbox-init.c: PID 1 of a native sandbox, which starts the command through the exec
 * trampoline (targv: rt_trampoline_argv); sync_fd reports the command's wait status and,
 * when it could not be run, execve's errno (two ints; the errno 0 when it ran). */
__attribute__((noreturn)) void rt_sb_init(int tramp_fd, char **targv, char *const *envp,
					  int sync_fd);

/* runtime/host/rt-host.c: host mode. rt_sb_check_host checks what host mode can't take;
 * rt_sb_run_host runs the command and fills r (exit, timeout, stats and r->host);
 * rt_sb_gen_host writes the report's isolation object for it. rt_sb_host_reclaim removes
 * what the root's killed host runs left, as their records (host-runs/PID) name it. */
int rt_sb_check_host(const struct rt_sb_opts *o, struct hutch_err *err);
int rt_sb_run_host(const struct rt_sb_opts *o, struct rt_sb_result *r, struct hutch_err *err);
void rt_sb_host_reclaim(void);
struct yajl_gen_t;
void rt_sb_gen_host(struct yajl_gen_t *g, const struct rt_sb_opts *o, const struct rt_sb_host *h);

/* rt-sandbox.c: the sandbox of o, run to its end: the command's exit status (124 on its
 * timeout), or < 0 with err set when the sandbox could not run (its status is then
 * RT_SB_EXIT_FAIL, or err->status). The report is written when o asks for one. It enters a
 * mount namespace of its own: a caller that goes on afterwards runs it in a child. t: the
 * --lock ticket its caller took (left, or forgotten in a --detach caller), or NULL. */
struct rt_sb_ticket; /* rt-sandbox-lock.h */
int rt_sandbox_run(const struct rt_global *g, const struct rt_sb_opts *o, struct rt_sb_ticket *t,
		   struct hutch_err *err);

#endif
