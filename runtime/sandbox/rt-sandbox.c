// SPDX-License-Identifier: Apache-2.0
/*
 * `hutch sandbox`: one recipe (rt_sandbox_run) for its three modes, which differ in the run
 * step alone: natively, the spec goes through the ordinary create/start path with hutch's
 * init as PID 1; delegated, it is handed to another runtime; in host mode, the command runs
 * on the host behind a mount view, Landlock and seccomp. Nothing outlives the command but a
 * native run's delete, which a helper finishes after hutch has returned (delete_later): what
 * a killed hutch or helper leaves is removed by the next invocation.
 */
#include "rt-sandbox.h"
#include "rt-sandbox-lock.h"
#include "hutch-ids.h"
#include "rt-spec-build.h"
#include "rt-sandbox-plan.h"
#include "rt-sandbox-named.h"
#include "rt-sandbox-delegate.h"
#include "rt-sandbox-net.h"
#include "rt-sandbox-pool.h"
#include "rt-image.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#define SB_SCRATCH RT_SB_SCRATCH

struct sandbox {
	const struct rt_sb_opts *o;
	struct rt_sb_plan plan;
	struct rt_sb_result res;
	char id[64];
	struct rt_global g;
	struct cg *cg;
	pid_t init_pid;
	struct rt_sb_net net;
	struct rt_sb_ticket *ticket; /* --lock's place in line */
	int owner_fd;
	int run_fd;	/* runs/PID: its cgroup is this root's to sweep once we are gone */
	int name_fd;	/* --name's record, held while the sandbox lives */
	int *notify_fd; /* --detach: the pipe to the caller until the command started */
	char *rootfs;
	struct rt_sb_setid setid; /* where the sandbox may leave setid bits, and since when */
	char error[sizeof(((struct hutch_err *)0)->msg)];
};

/* When pid started, in seconds of the realtime clock (0 when it is gone). */
static double started_at(pid_t pid)
{
	uint64_t ticks = 0;
	char state = 0;
	struct timespec real, boot;
	if (hutch_proc_stat(pid, &ticks, &state) < 0 || state == 'Z' || state == 'X')
		return 0;
	clock_gettime(CLOCK_REALTIME, &real);
	clock_gettime(CLOCK_BOOTTIME, &boot);
	double booted =
		(double)real.tv_sec - (double)boot.tv_sec + (real.tv_nsec - boot.tv_nsec) / 1e9;
	return booted + (double)ticks / (double)sysconf(_SC_CLK_TCK);
}

/* Whether the hutch of pid that made something at time made (a state dir, a cgroup) runs:
 * the pid is alive and its process is older than that thing. */
static bool maker_alive(int pid, time_t made)
{
	double t = pid > 0 ? started_at(pid) : 0;
	return t > 0 && t < (double)made + 1;
}

/* Sandboxes whose hutch died (an init without its hutch, a create it never finished). A
 * held owner lock, or a live hutch of the pid in the id (mid-create), means it runs. */
static void clean_stale(struct rt_global *g, const char *base)
{
	_cleanup_strv_ char **ids = NULL;
	struct hutch_err e = { 0 };
	if (rt_state_list_ids(g->root, &ids, &e) <= 0)
		return;
	_cleanup_close_ int root = rt_sb_subdir("state", false, &e);
	for (char **id = ids; root >= 0 && *id; id++) {
		struct stat st;
		int pid = 0;
		_cleanup_close_ int dir =
			openat(root, *id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (dir < 0 || fstat(dir, &st) < 0)
			continue;
		/* Never a wait: O_NONBLOCK, and only a regular file is a lock. */
		_cleanup_close_ int fd =
			openat(dir, "owner.lock", O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0 && rt_regular(fd) && flock(fd, LOCK_EX | LOCK_NB) < 0)
			continue; /* its hutch is alive */
		if (sscanf(*id, "sb-%d", &pid) == 1 && maker_alive(pid, st.st_ctim.tv_sec))
			continue; /* being created by a live hutch */
		/* Its cgroup is the one hutch makes for sb-N, whatever its state says. */
		char exact[32];
		snprintf(exact, sizeof(exact), "sb-%d", pid);
		_cleanup_free_ char *cg =
			base && pid > 0 && !strcmp(exact, *id)
				? hutch_xasprintf("%s/hutch-sb-%d", strcmp(base, "/") ? base : "",
						  pid)
				: NULL;
		if (rt_container_reap(g, *id, cg, &e) >= 0 && cg)
			rt_sb_plaincg_remove(cg);
	}
}

/* Whether sb-PID's state is held: by its hutch, or by the helper that deletes it once hutch
 * has returned (delete_later). */
static bool state_held(int pid)
{
	struct hutch_err e = { 0 };
	char name[48];
	snprintf(name, sizeof(name), "sb-%d/owner.lock", pid);
	_cleanup_close_ int root = rt_sb_subdir("state", false, &e);
	_cleanup_close_ int fd =
		root < 0 ? -1 : openat(root, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	return fd >= 0 && rt_regular(fd) && flock(fd, LOCK_EX | LOCK_NB) < 0;
}

/* Removes a dead run's cgroup: its processes killed, its plain dirs too. */
static int purge_run_cgroup(void *path)
{
	struct hutch_err e = { 0 };
	int r = cg_purge(path, &e);
	rt_sb_plaincg_remove(path);
	return r;
}

/* The names of the cgroups beneath base (a runtime's plain dirs too), NULL when unknown. */
static char **cgroups_left(void *base)
{
	struct cg_child *v = NULL;
	size_t n = 0;
	struct hutch_err e = { 0 };
	if (base && cg_list_children(base, &v, &n, &e) < 0)
		return NULL;
	if (base)
		rt_sb_plaincg_list(base, &v, &n);
	char **left = hutch_xcalloc(n + 1, sizeof(char *));
	for (size_t i = 0; i < n; i++)
		left[i] = steal_ptr(v[i].name);
	cg_children_free(v, n);
	return left;
}

/*
 * The cgroups of sandboxes whose hutch died (hutch-sb-PID beneath our cgroup): a hutch killed
 * before its state existed (delegated and host runs keep none) leaves one that nothing else
 * names. Its PID is gone, or belongs to a process started after the cgroup was made; and it
 * is this root's (runs/PID): another root's are its own sweep's. Then the records nobody
 * holds, but those whose cgroup is still there (its last processes were still exiting, or
 * its runtime made it after the listing above): the next sweep tries again. No base (no
 * cgroup of ours): the records alone.
 */
static void sweep_cgroups(char *base)
{
	struct cg_child *v = NULL;
	size_t n = 0;
	struct hutch_err e = { 0 };
	if (!rt_sb_runs_other())
		return; /* every cgroup it would remove is a run's with a record, and so is a record */
	if (base && cg_list_children(base, &v, &n, &e) >= 0) {
		rt_sb_plaincg_list(base, &v, &n); /* a delegate's, in unmounted controllers' dirs */
		for (size_t i = 0; i < n; i++) {
			int pid = 0, end = 0;
			if (sscanf(v[i].name, "hutch-sb-%d%n", &pid, &end) != 1 || v[i].name[end] ||
			    pid <= 0 || pid == getpid())
				continue;
			if (maker_alive(pid, v[i].made) || !rt_sb_run_ours(pid) || state_held(pid))
				continue;
			_cleanup_free_ char *path =
				hutch_xasprintf("%s/%s", strcmp(base, "/") ? base : "", v[i].name);
			/* Its runtime's CLI may outlive it, holding the record (and making the
			 * cgroup again): the record goes once that has ended too. */
			if (purge_run_cgroup(path) >= 0)
				rt_sb_run_drop_wait(pid, 1000, purge_run_cgroup, path);
		}
		cg_children_free(v, n);
	}
	rt_sb_runs_prune(0, cgroups_left, base);
}

/* A private mount namespace holding a tmpfs for scratch state: it vanishes with hutch. The
 * throw-away layer lives there too, so it may grow as far as the sandbox's memory limit
 * (its pages are charged to the writer's cgroup, which the limit bounds either way). */
static int enter_scratch(const struct rt_sb_opts *o, struct hutch_err *err)
{
	if (unshare(CLONE_NEWNS) < 0)
		return hutch_fail_errno(err, errno, "sandbox: private mount namespace");
	const struct ns_mount_op slave =
		NS_MOUNT_OP(NS_OP_PROPAGATION, .target = "/", .flags = MS_REC | MS_SLAVE,
			    .label = "sandbox: make / a slave mount");
	int r = ns_mount_apply_host(&slave, 1, err);
	if (r < 0)
		return r;
	/* Made in the held state dir, and never a symlink: then mounted on by its path, which
	 * only root (or a rootless caller) could change. */
	int fd = rt_sb_subdir("scratch", true, err);
	if (fd < 0)
		return hutch_err_prefix(err, "sandbox: ");
	close(fd);
	/* 0711: the sandbox's mapped root must traverse it to reach the overlay root. */
	uint64_t size = o->memory > (64ULL << 20) ? o->memory : 64ULL << 20;
	char data[64];
	snprintf(data, sizeof(data), "mode=0711,size=%llu", (unsigned long long)size);
	if (o->memory == 0) /* no limit: tmpfs's own default, half the RAM */
		snprintf(data, sizeof(data), "mode=0711");
	const struct ns_mount_op scratch =
		NS_MOUNT_OP(NS_OP_MOUNT_AT, .target = SB_SCRATCH, .source = "tmpfs",
			    .fstype = "tmpfs", .flags = MS_NOSUID | MS_NODEV, .data = data,
			    .label = "sandbox: mount scratch tmpfs");
	return ns_mount_apply_host(&scratch, 1, err);
}

static bool delegated(const struct rt_sb_opts *o)
{
	return o->runtime && strcmp(o->runtime, "native") != 0;
}

static void kill_tree(void *arg)
{
	struct sandbox *sb = arg;
	struct hutch_err e = { 0 };
	if (sb->cg)
		cg_signal_all(sb->cg, SIGKILL, &e);
	else if (sb->init_pid > 0) /* no cgroup (rootless): the pid namespace dies with its init */
		kill(sb->init_pid, SIGKILL);
}

/* The cgroup's counts, for the report alone (none asked for: not read). */
static void collect(struct sandbox *sb)
{
	struct hutch_err e = { 0 };
	if (!sb->o->report && sb->o->report_fd < 0)
		return;
	if (sb->cg && cg_get_stats(sb->cg, &sb->res.stats, &e) >= 0) {
		const struct cg_stats *st = &sb->res.stats;
		sb->res.has_stats = true;
		sb->res.oom_killed = st->oom_kills > 0;
		sb->res.pids_peak = st->pids_peak;
		/* A native sandbox's processes are in this cgroup itself. */
		sb->res.oom_kills = (int64_t)st->oom_kills;
		sb->res.mem_hits = (int64_t)st->mem_failcnt;
		sb->res.pids_refused = (int64_t)st->pids_max_events;
	}
}

/*
 * Where a delegated run's counts are. Ours has the lower memory limit (run_delegated), so its
 * failcnt. v1 counts an OOM kill and a refused fork in the process's own cgroup, the
 * runtime's, which runc and crun remove before they return (runsc's lasts until delete); v2
 * counts both up the tree, in ours too. Under runsc the host's OOM kills are of gVisor's own
 * processes, whose memory is the sandbox's: none counts one of the sandbox's processes.
 */
static void delegated_counts(struct sandbox *sb, const struct sandbox_delegate_in *in)
{
	const struct cg_stats *ours = &sb->res.stats;
	if (!cg_is_v2() || strcmp(sb->o->runtime, "runsc") == 0)
		sb->res.oom_kills = -1;
	if (!ours->pids_events_tree)
		sb->res.pids_refused = in->has_stats ? (int64_t)in->stats.pids_max_events : -1;
	if (in->has_stats && in->stats.oom_kills > 0)
		sb->res.oom_killed = true;
}

static int state_dir(struct sandbox *sb, struct hutch_err *err);

/* Whether the command ended because it was asked to: a signal sent to hutch and passed on, or
 * (a named sandbox) `sandbox stop|rm -f`, which marks its state dir first. */
static bool stopped(struct sandbox *sb, const struct rt_waiter *w)
{
	struct hutch_err e = { 0 };
	if (rt_sb_stop_signal(w->forwarded))
		return true;
	if (!sb->o->name)
		return false;
	_cleanup_close_ int dir = state_dir(sb, &e);
	return dir >= 0 && faccessat(dir, RT_SB_STOPPED, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}

/* The sandbox's state dir (made by create), opened from the held state root. */
static int state_dir(struct sandbox *sb, struct hutch_err *err)
{
	_cleanup_close_ int root = rt_sb_subdir("state", false, err);
	if (root < 0)
		return root;
	int fd = openat(root, sb->id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return fd >= 0 ? fd : hutch_fail_errno(err, errno, "sandbox: %s/%s", sb->g.root, sb->id);
}

/* Marks the state dir as ours for as long as we live (see clean_stale). */
static int own_state(struct sandbox *sb, struct hutch_err *err)
{
	_cleanup_close_ int dir = state_dir(sb, err);
	if (dir < 0)
		return dir;
	sb->owner_fd = openat(dir, "owner.lock",
			      O_RDWR | O_CREAT | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (sb->owner_fd >= 0 && !rt_regular(sb->owner_fd))
		return hutch_fail(err, EINVAL, "sandbox: %s/%s/owner.lock: not a regular file",
				  sb->g.root, sb->id);
	if (sb->owner_fd < 0 || flock(sb->owner_fd, LOCK_EX) < 0)
		return hutch_fail_errno(err, errno, "sandbox: %s/%s/owner.lock", sb->g.root,
					sb->id);
	return 0;
}

/* The state dir is the bundle: a named sandbox's spec is written there for `sandbox exec`,
 * which runs outside the private mount namespace that holds scratch. Its root.path (as the
 * state's rootfs) is a mount in that namespace, out of exec's reach, and is never looked up
 * again (rt_state_load_spec): exec joins the init's mount namespace, found from its pid. */
static int record(struct sandbox *sb, struct rt_spec *spec, struct hutch_err *err)
{
	_cleanup_close_ int dir = state_dir(sb, err);
	if (dir < 0)
		return dir;
	if (!sb->o->name) { /* ls's image and supervisor; exec needs a name */
		struct hutch_err e = { 0 };
		_cleanup_free_ char *text = hutch_xasprintf("{\"supervisor\":%d}", (int)getpid());
		hutch_write_atomic_at(dir, "sandbox.json", text, strlen(text), 0600, &e);
		return 0;
	}
	return rt_sb_write_record(sb->o, dir, spec,
				  sb->plan.image_name ? sb->plan.image_name : sb->o->image,
				  &sb->setid, err);
}

/* Bridge mode's veth, address and firewall, wired into the init's network namespace while it
 * still mounts (rt_create_opts.after_go): in place before the command runs. */
static int wire_net(pid_t pid, void *arg, struct hutch_err *err)
{
	struct sandbox *sb = arg;
	return rt_sb_net_attach(sb->o, &sb->net, pid, err);
}

/* Create, start and wait, with hutch's init as PID 1 reporting the command's status. */
static int run_native(struct sandbox *sb, struct hutch_err *err)
{
	struct rt_spec *spec = NULL;
	int pipefd[2] = { -1, -1 };
	struct rt_created c = { .pidfd = -1, .pty_master = -1, .dirfd = -1, .cg = NULL };
	char bundle[512];
	snprintf(bundle, sizeof(bundle), "%s/%s", sb->g.root, sb->id);
	struct rt_sb_pool_slot *pool = sb->o->pool_slot; /* a pool's: the command comes later */
	sb->plan.with_init = true;
	int r = rt_sb_spec(sb->o, &sb->plan, bundle, &spec, err);
	hutch_phase("sandbox_spec");
	if (r >= 0 && (pool ? socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pipefd)
			    : pipe2(pipefd, O_CLOEXEC)) < 0)
		r = hutch_fail_errno(err, errno, "sandbox: pipe");
	struct rt_create_opts co = { .id = sb->id,
				     .spec = spec,
				     .foreground = true,
				     .no_cgroup = sb->plan.no_cgroup,
				     .init_fd = pipefd[1],
				     .init = pool ? rt_sb_pool_init : rt_sb_init,
				     .command_later = pool != NULL,
				     .keep_lock =
					     true,    /* its start follows: nothing comes between */
				     .keep_cg = true, /* not opened again by its path */
				     .after_go =
					     sb->o->network == RT_SB_NET_BRIDGE ? wire_net : NULL,
				     .after_go_arg = sb };
	if (r >= 0)
		r = rt_container_create(&sb->g, &co, &c, err);
	if (pipefd[1] >= 0)
		close(pipefd[1]);
	_cleanup_close_ int rd = pipefd[0];
	_cleanup_close_ int pidfd = c.pidfd;
	_cleanup_close_ int master = c.pty_master;
	_cleanup_close_ int held = c.dirfd; /* let go of before any delete, which takes it */
	sb->cg = steal_ptr(c.cg);
	if (r >= 0)
		r = record(sb, spec, err);
	rt_spec_free(spec);
	if (r < 0)
		return r;
	TRY(own_state(sb, err));
	hutch_phase("record");
	hutch_fault_point("sandbox:created");
	sb->init_pid = c.pid;
	if (!sb->cg && sb->plan.cgroup)
		TRY(cg_open(sb->plan.cgroup, &sb->cg, err));
	if (sb->o->deny_host_loopback) /* before start: the command's first socket is filtered */
		TRY(cg_deny_loopback(sb->cg, err));
	r = rt_container_start_held(sb->id, held, err); /* no status check: still created */
	held = -1;
	if (r < 0)
		return r;
	if (pool) { /* started ahead, its command's process waiting: the request now */
		const struct rt_sb_pool_sandbox ps = { &sb->plan, sb->cg, c.pid, rd, &sb->setid };
		TRY(rt_sb_pool_take(pool, &ps, err));
		clock_gettime(CLOCK_REALTIME, &sb->res.started);
		sb->res.lock_wait_ms = sb->o->lock_wait_ms; /* its client's */
	}
	hutch_fault_point("sandbox:started");
	TRY(rt_sb_notify_started(sb->notify_fd, err)); /* --detach: the caller returns */
	struct rt_waiter w = { .pidfd = pidfd,
			       .pid = c.pid,
			       .master = master,
			       .timeout_ms = (int64_t)(sb->o->timeout * 1000),
			       .grace_ms = (int64_t)(sb->o->grace * 1000),
			       .kill_tree = kill_tree,
			       .kill_arg = sb,
			       .hangup = pool ? pool->hangup : NULL };
	r = rt_wait_container(&w, err);
	hutch_phase("wait");
	if (r < 0)
		return r;
	hutch_fault_point("sandbox:waited");
	int msg[2] = { 0, 0 }, status;
	if (hutch_read_all(rd, msg, sizeof(msg)) != (ssize_t)sizeof(msg))
		msg[0] = w.status, msg[1] = 0; /* init itself was killed (the timeout's SIGKILL) */
	status = msg[0];
	if (msg[1]) { /* the command never ran: say why, as a create-time failure would */
		snprintf(sb->error, sizeof(sb->error), "exec %s: %s", sb->plan.argv[0],
			 strerror(msg[1]));
		if (msg[1] & RT_SB_POOL_CWD_ERR) /* a pooled sandbox's cwd, which is not made */
			snprintf(sb->error, sizeof(sb->error), "--cwd %s: %s", sb->plan.cwd,
				 strerror(msg[1] & ~RT_SB_POOL_CWD_ERR));
		sb->res.error = sb->error;
		sb->res.failure = RT_SB_FAIL_EXEC;
	}
	sb->res.timed_out = w.timed_out;
	sb->res.stopped = stopped(sb, &w);
	sb->res.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
	sb->res.exit_code = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
	if (w.timed_out)
		sb->res.exit_code = RT_SB_EXIT_TIMEOUT;
	collect(sb);
	return 0;
}

/*
 * runc (1.1) ignores kernelTCP, which crun applies: on v1 its container's TCP buffers would
 * be charged to nothing (runsc's netstack is the sandbox's own memory). A createRuntime hook
 * writes the limit into runc's cgroup once runc has made it, before the command runs: a
 * child cgroup does not inherit ours (it charges no socket until its own limit is set).
 */
static void tcp_limit_hook(struct sandbox *sb, struct rt_spec *spec)
{
	const char *names[32], *dirs[32];
	struct rt_hooks *h = &spec->hooks[RT_HOOK_CREATE_RUNTIME];
	if (!spec->resources.mem_kernel_tcp.set || strcmp(sb->o->runtime, "runc") != 0)
		return;
	size_t n = cg_hierarchy_dirs(sb->cg, names, dirs, ARRAY_SIZE(names));
	for (size_t i = 0; i < n; i++) {
		if (!strstr(names[i], "memory"))
			continue;
		char **all = hutch_xcalloc(7, sizeof(char *)); /* sh -c SCRIPT sh LIMIT FILE */
		all[0] = hutch_xstrdup("sh");
		all[1] = hutch_xstrdup("-c");
		all[2] = hutch_xstrdup("echo \"$1\" >\"$2\"");
		all[3] = hutch_xstrdup("sh");
		all[4] = hutch_xasprintf("%lld", (long long)spec->resources.mem_kernel_tcp.v);
		all[5] = hutch_xasprintf("%s/c/memory.kmem.tcp.limit_in_bytes", dirs[i]);
		h->v = hutch_xrealloc(h->v, (h->n + 1) * sizeof(*h->v));
		h->v[h->n++] = (struct rt_hook){ .path = hutch_xstrdup("/bin/sh"), .args = all };
	}
}

static void spec_freep(struct rt_spec **spec)
{
	rt_spec_free(*spec);
}

/* The same sandbox through another runtime; hutch keeps the parent cgroup. */
static int run_delegated(struct sandbox *sb, struct hutch_err *err)
{
	_cleanup_free_ char *cgpath = NULL, *config = NULL;
	/* The runtime's cgroup is a child of ours (plan.cgroup), so hutch can kill the tree and
	 * read the totals. */
	cgpath = hutch_xasprintf("%s/c", sb->plan.cgroup);
	sb->plan.cgroups_path = cgpath;
	_cleanup_close_ int ns = -1;
	if (sb->o->network == RT_SB_NET_BRIDGE) {
		/* The runtime joins a namespace wired beforehand: the same veth, address,
		 * firewall elements and DNS forwarder as a native run. The pin is in scratch,
		 * whose unmount at the end lets the namespace (and the veth) go. */
		ns = ns_netns_new(rt_sb_path("scratch/netns"), rt_sb_path("scratch/sys"), err);
		if (ns < 0)
			return ns;
		sb->plan.netns_path = rt_sb_path("scratch/netns");
		sb->plan.sysfs = rt_sb_path("scratch/sys");
		TRY(rt_sb_net_attach_fd(sb->o, &sb->net, ns, err));
	} else if (sb->o->network == RT_SB_NET_HOST) {
		/* A user namespace may not mount the sysfs of a network namespace it does not
		 * own (runc fails there, crun binds instead): the host's, bound, as runc's own
		 * rootless spec has it. */
		sb->plan.sysfs = "/sys";
	}
	_cleanup_(spec_freep) struct rt_spec *spec = NULL; /* a session's exec reads it */
	TRY(rt_sb_spec(sb->o, &sb->plan, SB_SCRATCH, &spec, err));
	int r = cg_create(sb->plan.cgroup, &sb->cg, err);
	if (r >= 0) /* the hook names the runtime's cgroup beneath ours */
		tcp_limit_hook(sb, spec);
	rt_sb_ucount_hook(sb->o->runtime, spec);
	if (r >= 0)
		r = rt_spec_write(spec, &config, err);
	size_t n_rlimits = spec->process.n_rlimits;
	_cleanup_free_ struct ns_rlimit *rlimits = hutch_xcalloc(n_rlimits + 1, sizeof(*rlimits));
	if (n_rlimits)
		memcpy(rlimits, spec->process.rlimits, n_rlimits * sizeof(*rlimits));
	if (r < 0)
		return r;
	hutch_fault_point("sandbox:delegate-cgroup");
	_cleanup_close_ int cgroup2_procs = -1;
	if (sb->o->deny_host_loopback) { /* inherited by the runtime's cgroup beneath ours */
		TRY(cg_deny_loopback(sb->cg, err));
		if (!cg_is_v2() && (cgroup2_procs = cg_open_procs(sb->cg, CG_UNIFIED, err)) < 0)
			return cgroup2_procs;
	}
	/* The runtime removes its own cgroup, and with it the OOM count, before it returns. One
	 * page less on ours makes ours the cgroup that runs out, whose OOM hutch can see; the
	 * container still sees the limit it was given. */
	_cleanup_close_ int oomfd = -1;
	if (sb->o->memory > 4096) {
		struct cg_resources lim = { .mem_limit = { true, (int64_t)sb->o->memory - 4096 } };
		TRY(cg_apply(sb->cg, &lim, err));
		oomfd = cg_oom_watch(sb->cg,
				     err); /* v1: the notifier; v2 counts in memory.events */
		if (oomfd < 0 && oomfd != -ENOTSUP)
			return oomfd;
	}
	struct sandbox_delegate_in in = { .runtime = sb->o->runtime,
					  .scratch = SB_SCRATCH,
					  .id = sb->id,
					  .config = config,
					  .cgroup = cgpath,
					  .parent_cgroup = sb->plan.cgroup,
					  .network_none = sb->o->network == RT_SB_NET_NONE,
					  .network_bridge = sb->o->network == RT_SB_NET_BRIDGE,
					  .netns_fd = ns,
					  .cgroup2_procs = cgroup2_procs,
					  .cgroup2_dir = cgroup2_procs >= 0 ? cg_unified_dir(sb->cg)
									    : NULL,
					  .rlimits = rlimits,
					  .n_rlimits = n_rlimits,
					  .o = sb->o,
					  .plan = &sb->plan };
	struct rt_sb_session session = { .o = sb->o,
					 .spec = spec,
					 .image = sb->plan.image_name ? sb->plan.image_name
								      : sb->o->image,
					 .setid = &sb->setid,
					 .notify_fd = sb->notify_fd,
					 .owner_fd = -1 };
	if (sb->o->name)
		in.session = &session;
	struct rt_waiter w = { .timeout_ms = (int64_t)(sb->o->timeout * 1000),
			       .grace_ms = (int64_t)(sb->o->grace * 1000),
			       .kill_tree = kill_tree,
			       .kill_arg = sb };
	r = rt_sb_delegate(&in, &w, err);
	collect(sb);
	if (sb->res.has_stats)
		delegated_counts(sb, &in);
	if (in.has_stats) {
		sb->res.stats = in.stats;
		sb->res.pids_peak = in.stats.pids_peak;
	}
	if (cg_oom_fired(oomfd))
		sb->res.oom_killed = true;
	struct hutch_err e = { 0 };
	cg_destroy(sb->cg, &e);
	if (r < 0)
		return r;
	sb->res.timed_out = w.timed_out;
	sb->res.stopped = stopped(sb, &w);
	sb->res.signal = WIFSIGNALED(w.status) ? WTERMSIG(w.status) : 0;
	sb->res.exit_code =
		WIFSIGNALED(w.status) ? 128 + WTERMSIG(w.status) : WEXITSTATUS(w.status);
	/* runc reports a signal-killed container as 128+N itself. */
	if (!sb->res.signal && sb->res.exit_code > 128 && sb->res.exit_code < 128 + 65)
		sb->res.signal = sb->res.exit_code - 128;
	if (w.timed_out)
		sb->res.exit_code = RT_SB_EXIT_TIMEOUT;
	return 0;
}

/*
 * An absolute path beneath our own cgroup in every hierarchy: a relative one means different
 * directories to processes in different cgroups (on v1 each hierarchy places us apart), and
 * the hutch that cleans up after a killed one may be any of them. crun and runsc also read a
 * relative cgroupsPath from the hierarchy root.
 */
static void sandbox_cgroup(struct sandbox *sb, const char *base)
{
	sb->plan.cgroup = hutch_xasprintf("%s/hutch-%s", strcmp(base, "/") ? base : "", sb->id);
	sb->plan.cgroups_path = sb->plan.cgroup;
}

static int run_host(struct sandbox *sb, struct hutch_err *err)
{
	return rt_sb_run_host(sb->o, &sb->res, err);
}

/* The one step in which the three ways of making the sandbox differ. */
static const struct sb_mode {
	const char *name;
	bool image; /* a root filesystem, state, scratch and an id mapping (not host mode) */
	int (*run)(struct sandbox *sb, struct hutch_err *err);
} modes[] = { { "native", true, run_native },
	      { NULL, true, run_delegated }, /* named by --runtime */
	      { "host", false, run_host } };

static const struct sb_mode *sb_mode(const struct rt_sb_opts *o)
{
	if (o->isolation != RT_SB_ISO_NAMESPACES)
		return &modes[2];
	return delegated(o) ? &modes[1] : &modes[0];
}

/* What killed hutches left: stale state (whose delete removes its cgroup), then cgroups
 * nothing names, then the dead sandboxes' network leases. Host mode keeps no state; its
 * sweep is best effort (an unprivileged caller may own no cgroup). */
static int sweep(struct sandbox *sb, const struct sb_mode *m, struct hutch_err *err)
{
	_cleanup_free_ char *base = NULL;
	rt_sb_locks_sweep(); /* dead tickets, empty queues: every mode's */
	if (!m->image) {
		struct hutch_err e = { 0 };
		sb->run_fd = rt_sb_run_take(&e); /* none: a killed run's cgroup stays (warned) */
		if (sb->run_fd < 0 && geteuid() == 0)
			hutch_warn("sandbox: %s, ignoring", e.msg);
		if (geteuid() == 0 && cg_own_common(&base, &e) < 0)
			base = NULL;
		sweep_cgroups(base);
		if (geteuid() == 0)
			rt_sb_net_reclaim(); /* host mode has bridge too */
		return 0;
	}
	if (hutch_rootless()) /* before any state: a refusal leaves nothing */
		TRY(rt_sb_rootless_cgroup(sb->o, &sb->plan, &base, err));
	else
		TRY(cg_own_common(&base, err));
	int root = rt_sb_subdir("state", true, err); /* RT_SB_ROOT, the state root */
	if (root < 0)
		return hutch_err_prefix(err, "sandbox: ");
	close(root);
	sb->run_fd = rt_sb_run_take(err); /* before our cgroup exists */
	if (sb->run_fd < 0)
		return hutch_err_prefix(err, "sandbox: ");
	clean_stale(&sb->g, base);
	rt_sb_names_sweep();
	rt_sb_host_reclaim(); /* the root's killed host runs: their records name their cgroups */
	sweep_cgroups(base);  /* after clean_stale, which deletes what has state */
	if (!hutch_rootless())
		rt_sb_net_reclaim(); /* after clean_stale: the dead sandboxes' netns are gone */
	snprintf(sb->id, sizeof(sb->id), "sb-%d", (int)getpid());
	rt_sb_name_set(sb->name_fd, sb->id);
	if (base)
		sandbox_cgroup(sb, base);
	return 0;
}

/* The sandbox's root filesystem, host ids and network, before its spec is made. Host mode
 * has none of these: its view is planned in its own child (rt-host-view.c). */
static int plan(struct sandbox *sb, const struct sb_mode *m, struct hutch_err *err)
{
	if (!m->image)
		return 0;
	sb->plan.delegated = m->run == run_delegated;
	rt_sb_plan_ranges(sb->o, &sb->plan); /* before the rootfs: --as-root's view */
	/* Before the user namespace: who owns a directory decides whether a symlink in it is
	 * followed, and only the caller's namespace shows the real owners. */
	int r = rt_sb_resolve_paths(sb->o, &sb->plan, err);
	hutch_phase("resolve"); /* the image's and the caller's paths */
	if (r == -ENOENT && sb->plan.image.fd < 0 && rt_sb_image_is_dir(sb->o->image))
		sb->res.failure = RT_SB_FAIL_IMAGE_MISSING;
	if (r < 0)
		return r;
	rt_sb_setid_resolved(sb->o, &sb->plan, &sb->setid); /* the walks' paths, from any cwd */
	TRY(rt_sb_rootless_enter(sb->o, &sb->plan, err));   /* it owns the mount namespace */
	TRY(enter_scratch(sb->o, err));
	hutch_fault_point("sandbox:scratch");
	TRY(rt_sb_anchor_paths(sb->o, &sb->plan, SB_SCRATCH, err)); /* the spec names these */
	/* The lease and /etc files precede the spec; the network helper forked here does its
	 * firewall work while the rootfs and the container are made. */
	if (sb->o->network == RT_SB_NET_BRIDGE) {
		TRY(rt_sb_net_prepare(sb->o, &sb->net, rt_sb_path("scratch/net"), err));
		sb->plan.net_etc = rt_sb_path("scratch/net");
		sb->plan.net_address = sb->net.address;
	}
	r = rt_sb_plan_rootfs(sb->o, &sb->plan, SB_SCRATCH, err);
	hutch_phase("rootfs");
	if (r == -ENOENT)
		sb->res.failure = RT_SB_FAIL_IMAGE_MISSING;
	if (r < 0)
		return r;
	/* The image's config: its User is looked up in the rootfs, and decides the host ids. */
	r = rt_sb_plan_process(sb->o, &sb->plan, err);
	if (r < 0 && sb->plan.argv && !sb->plan.argv[0]) /* no command from flags or image */
		sb->res.failure = RT_SB_FAIL_BAD_OPTION;
	if (r < 0)
		return r;
	TRY(rt_sb_plan_ids(sb->o, &sb->plan, err));
	TRY(rt_sb_attach_idmapped(sb->o, &sb->plan, err)); /* into the rootfs just made */
	hutch_fault_point("sandbox:rootfs");
	rt_sb_note_ids(&sb->plan);
	return 0;
}

/* The report (when asked for), with the error when the sandbox failed: the result. */
/* Every run's report names it, its start and its runtime (never null), from the start. */
static void begin(struct rt_sb_result *res, const struct rt_sb_opts *o)
{
	snprintf(res->id, sizeof(res->id), "sb-%d", (int)getpid());
	clock_gettime(CLOCK_REALTIME, &res->started);
	res->runtime = o->runtime ? o->runtime : sb_mode(o)->name;
}

/* Why it ended, when not as the command chose: the step that failed said so, or else the
 * status and the result do. */
static enum rt_sb_failure failure(const struct rt_sb_result *res, int r,
				  const struct hutch_err *err)
{
	if (res->failure != RT_SB_FAIL_NONE)
		return res->failure;
	if (r < 0)
		return err->status == 126 || err->status == 127 ? RT_SB_FAIL_EXEC
								: RT_SB_FAIL_SETUP;
	/* Only the command's own end: a child's OOM kill the command outlived is not one. The
	 * cgroup does not say whom it killed; a SIGKILL while it counted a kill is taken as it. */
	if (res->timed_out)
		return RT_SB_FAIL_TIMEOUT;
	if (res->oom_killed && res->signal == SIGKILL)
		return RT_SB_FAIL_OOM;
	return res->stopped ? RT_SB_FAIL_STOPPED : RT_SB_FAIL_NONE;
}

static int finish(struct sandbox *sb, int r, struct hutch_err *err)
{
	if (r < 0) {
		sb->res.exit_code = err->status ? err->status : RT_SB_EXIT_FAIL;
		sb->res.error = err->msg;
	}
	sb->res.failure = failure(&sb->res, r, err);
	clock_gettime(CLOCK_REALTIME, &sb->res.ended);
	struct hutch_err rerr = { 0 };
	if (rt_sb_write_report(sb->o, sb->plan.rootfs ? &sb->plan : NULL, &sb->res, &rerr) < 0 &&
	    r >= 0) {
		*err = rerr;
		r = -rerr.code;
	}
	return r < 0 ? r : sb->res.exit_code;
}

/* The sandbox's state (and with it its cgroup and its init's mount namespace), first read
 * for what a named sandbox's execs cleared, which they counted there. */
static void delete_state(struct sandbox *sb, struct rt_sb_setid_counts *by_execs)
{
	struct hutch_err e = { 0 };
	char dir[512];
	snprintf(dir, sizeof(dir), "%s/%s", sb->g.root, sb->id);
	if (sb->o->name && by_execs)
		rt_sb_setid_noted(dir, by_execs);
	rt_container_delete(&sb->g, sb->id, true, &e);
}

/* What a named sandbox's execs cleared, which they counted in its state dir. */
static void noted(struct sandbox *sb, struct rt_sb_setid_counts *by_execs)
{
	char dir[512];
	snprintf(dir, sizeof(dir), "%s/%s", sb->g.root, sb->id);
	if (sb->o->name)
		rt_sb_setid_noted(dir, by_execs);
}

/* The setid files the sandbox may have set or changed on the host (rt-sandbox-setid.c), once
 * nothing of the sandbox runs; with what its execs cleared, for the report. */
static void clear_setid(struct sandbox *sb, struct rt_sb_setid_counts c)
{
	if (!rt_sb_setid_clear(&sb->setid, &c))
		return;
	sb->res.setid_walked = true;
	sb->res.setid_cleared = c.cleared;
	sb->res.devices_removed = c.devices;
}

/* Whether the cgroup at path (BASE/NAME) is still there, in any hierarchy. */
static bool cgroup_left(const char *path)
{
	struct cg_child *v = NULL;
	size_t n = 0;
	struct hutch_err e = { 0 };
	_cleanup_free_ char *base = hutch_xstrdup(path);
	char *slash = strrchr(base, '/');
	if (!slash)
		return false;
	const char *name = path + (slash - base) + 1;
	if (slash == base) /* a child of / */
		slash[1] = '\0';
	else
		*slash = '\0';
	bool left = false;
	if (cg_list_children(base, &v, &n, &e) < 0)
		return false;
	for (size_t i = 0; i < n && !left; i++)
		left = !strcmp(v[i].name, name);
	cg_children_free(v, n);
	return left;
}

/* The end of the run's record: kept, with its cgroup, when the cgroup's removal failed (a
 * process still exiting): the root's to sweep. */
static void release_run(struct sandbox *sb)
{
	bool keep_run = sb->plan.cgroup && sb->run_fd >= 0 && cgroup_left(sb->plan.cgroup);
	rt_sb_run_release(sb->run_fd, keep_run);
	sb->run_fd = -1;
}

/*
 * What may finish after hutch has returned: the delete of a native sandbox whose init it
 * waited for (its pid namespace, and with it every process of the sandbox, is gone, so the
 * setid walk is done already), and the run's record. A helper of its own session does it,
 * with no fd of the caller's: it holds the owner lock and the record as hutch did, so a sweep
 * leaves them be while it runs and takes them as a killed hutch's once it is killed. The
 * lock, the name and the report are hutch's, and done before. Not forked: done here.
 */
static void delete_later(struct sandbox *sb)
{
	/* Ignored before the fork, which the helper inherits: hutch may lead a terminal's
	 * session (script, ssh -t), whose end sends SIGHUP to its foreground group, the helper
	 * among them until its setsid(); that killed one at random, leaving its delete to the
	 * next sweep. The sandbox is gone by now: hutch has nothing left to forward it to. */
	signal(SIGHUP, SIG_IGN);
	/* hutch is a pid namespace's init, or its init's child (unshare -pf, a container's
	 * `sh -c`): that namespace may end as soon as hutch returns, and the kernel then kills
	 * every process in it, the helper too, leaving the delete to a sweep that may never
	 * come (the root's next run). So the delete is done before hutch returns. A host's
	 * init never ends, and there it only costs the caller those milliseconds. */
	pid_t pid = getpid() == 1 || getppid() == 1 ? -1 : fork();
	if (pid > 0 || pid < 0) {
		if (pid < 0) {
			delete_state(sb, NULL);
			release_run(sb);
		}
		if (sb->run_fd >= 0) /* the helper's now: never unlinked here */
			close(sb->run_fd);
		sb->run_fd = -1;
		return;
	}
	/* The image's pin too: its layers stay until the overlay on them is gone. */
	int keep[] = { sb->run_fd, sb->owner_fd, sb->plan.has_image_pin ? sb->plan.image_pin : -1 };
	setsid();
	hutch_close_fds_from(3, keep, ARRAY_SIZE(keep));
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	for (int fd = 0; fd < 3 && null >= 0; fd++)
		dup2(null, fd);
	hutch_fault_point("sandbox:teardown"); /* killed here, it leaves it all to a sweep */
	delete_state(sb, NULL);
	release_run(sb);
	_exit(0);
}

static void sandbox_free(struct sandbox *sb)
{
	rt_sb_setid_free(&sb->setid);
	cg_free(sb->cg);
	rt_sb_unlock(sb->o, sb->ticket);
	rt_sb_name_release(sb->o->name, sb->name_fd);
	if (sb->owner_fd >= 0)
		close(sb->owner_fd);
	release_run(sb);	     /* last: our cgroup is gone */
	rt_sb_plan_clear(&sb->plan); /* after: release_run reads its cgroup's path */
}

/* The lock and the name, before anything else of the sandbox exists. The ticket was taken
 * as the flags were read, or is taken here (a C caller's; or its error is reported here). */
static int take_locks(struct sandbox *sb, struct hutch_err *err)
{
	const struct rt_sb_opts *o = sb->o;
	int r = rt_sb_lock_enter(o, sb->ticket, err);
	if (r >= 0 && o->name)
		r = rt_sb_name_take(o->name, &sb->name_fd, err);
	double t0 = hutch_now_ms();
	if (r >= 0) /* one sandbox per lock name, in the order of the tickets */
		r = rt_sb_lock_wait(o, sb->ticket, err);
	if (r == -EWOULDBLOCK || r == -EEXIST)
		sb->res.failure = RT_SB_FAIL_LOCK_BUSY;
	sb->res.lock_wait_ms = hutch_now_ms() - t0;
	return r;
}

static int run(const struct rt_global *g, const struct rt_sb_opts *o, struct rt_sb_ticket *t,
	       int *notify_fd, struct hutch_err *err)
{
	struct sandbox sb = { .o = o,
			      .g = { .root = RT_SB_ROOT, .log = g->log, .log_json = g->log_json },
			      .net = RT_SB_NET_INIT,
			      .ticket = t,
			      .owner_fd = -1,
			      .run_fd = -1,
			      .name_fd = -1,
			      .notify_fd = notify_fd };
	const struct sb_mode *m = sb_mode(o);
	bool ran = false;
	struct rt_sb_setid_counts by_execs = { 0 }; /* what a named sandbox's execs did */
	begin(&sb.res, o);
	rt_sb_setid_plan(o, &sb.setid); /* its start: before the sandbox exists */
	rt_sb_clear_report(o);		/* an earlier run's is never read as this one's */
	int watch = rt_sb_watch_start(o, &sb.res, *notify_fd); /* if we are killed */
	int r = rt_sb_check(o, err); /* a C caller's options are checked as a flag's are */
	if (r < 0)
		sb.res.failure = RT_SB_FAIL_BAD_OPTION;
	if (r >= 0)
		r = take_locks(&sb, err);
	hutch_phase("sandbox_lock");
	if (r >= 0)
		hutch_fault_point("sandbox:locked");
	double t0 = hutch_now_ms();
	if (r >= 0) /* before the sandbox names its own cgroup, which a sweep must not take */
		r = sweep(&sb, m, err);
	hutch_phase("sweep");
	if (r >= 0)
		r = plan(&sb, m, err);
	hutch_phase("plan");
	if (r >= 0) {
		t0 = hutch_now_ms(); /* the lock wait and the set-up are not the command's time */
		r = m->run(&sb, err);
		ran = true;
		if (o->pool_slot && o->pool_slot->served_at > 0) /* nor a pooled one's wait */
			t0 = o->pool_slot->served_at;
	}
	sb.res.wall_ms = hutch_now_ms() - t0;
	rt_sb_net_hangup(&sb.net); /* its firewall work overlaps the delete */
	bool later = r >= 0 && m->run == run_native && sb.init_pid > 0;
	if (later) /* what a named sandbox's execs cleared, before the helper deletes it */
		noted(&sb, &by_execs);
	else if (sb.id[0]) /* state, and with it the cgroup and the mount namespace's init */
		delete_state(&sb, &by_execs);
	if (ran) /* nothing of the sandbox runs: its init was waited for, or it was deleted */
		clear_setid(&sb, by_execs);
	hutch_phase("setid_clear");
	rt_sb_net_release(&sb.net, &sb.res.egress); /* after delete: the netns and veth are gone */
	hutch_phase("net_release");
	/* What the sandbox may have left at the report's name goes first: a file the watcher
	 * finds there after 'W' is then hutch's, never the sandbox's. */
	rt_sb_clear_report(o);
	rt_sb_watch_say(watch, 'W');
	hutch_fault_point("sandbox:reporting");
	r = finish(&sb, r, err);
	hutch_phase("report");
	rt_sb_watch_say(watch, 'D');
	if (watch >= 0)
		close(watch);
	rt_sb_dns_reap(&sb.net); /* after the report: its exit overlaps the report's writing */
	if (later) {		 /* the lock and name first: the helper holds neither */
		rt_sb_unlock(o, sb.ticket);
		rt_sb_name_release(o->name, sb.name_fd);
		sb.name_fd = -1;
		delete_later(&sb);
	}
	sandbox_free(&sb); /* the lock last but one: a waiter starts when we are done */
	hutch_phase("unlock");
	return r;
}

/* A sandbox's cgroup is hutch's own, beneath the caller's: no systemd driver. */
static int refuse_systemd_cgroup(const struct rt_global *g, struct hutch_err *err)
{
	return g->systemd_cgroup ? hutch_fail(err, ENOTSUP,
					      "--systemd-cgroup: not supported by hutch sandbox "
					      "(an OCI runtime option)")
				 : 0;
}

/* With --detach, a supervisor runs it all and says when the command has started (or why it
 * could not, once the report is written and the name and lock are free). */
int rt_sandbox_run(const struct rt_global *g, const struct rt_sb_opts *o, struct rt_sb_ticket *t,
		   struct hutch_err *err)
{
	int fd = -1;
	struct rt_sb_ticket own = RT_SB_TICKET_INIT;
	if (!t)
		t = &own;
	TRY(refuse_systemd_cgroup(g, err));
	if (!o->detach || rt_sb_check(o, err) < 0)
		return run(g, o, t, &fd, err);
	pid_t pid = rt_sb_detach(o, g, t, &fd, err);
	if (pid < 0)
		return pid;
	if (pid > 0) {
		rt_sb_ticket_forget(t); /* the supervisor's now: it waits, it leaves the line */
		return rt_sb_detach_wait(o, pid, fd, err);
	}
	int r = run(g, o, t, &fd, err);
	if (r < 0 && fd >= 0)
		rt_sb_notify_failed(fd, err);
	_exit(r < 0 ? RT_SB_EXIT_FAIL : r);
}

/* The report of a request refused before any sandbox (a bad flag, wherever --report stands,
 * or a --pool request's path): not pooled, and why. */
static int refused(int argc, char **argv, struct rt_sb_opts *o, enum rt_sb_failure f, int r,
		   struct hutch_err *err)
{
	struct sandbox sb = { .o = o, .res.failure = f };
	if (o->pool && !o->pool_why)
		o->pool_why = err->msg;
	rt_sb_find_report(argc, argv, o);
	begin(&sb.res, o);
	rt_sb_clear_report(o);
	return finish(&sb, r, err);
}

static RT_VERB_RUN(verb_sandbox)
{
	struct rt_sb_opts o;
	(void)first, (void)flags;
	if (argc > 1 && rt_sb_is_subcommand(argv[1])) /* exactly exec, ls, stop or rm */
		return rt_sb_subcommand(argc - 1, argv + 1, err);
	struct rt_sb_ticket t = RT_SB_TICKET_INIT;
	struct hutch_err lock_err = { 0 };
	rt_sb_opts_init(&o);
	int r = rt_sb_parse_args(&o, argc, argv, err);
	hutch_phase("parse");
	if (r >= 0) /* first: the place in line; an error is reported by the run, which retries */
		rt_sb_lock_enter(&o, &t, &lock_err);
	if (r >= 0)
		r = refuse_systemd_cgroup(g, err); /* a bad option too, with its report */
	if (r >= 0)
		r = rt_sb_check_own_dirs(&o, err); /* the caller's paths, not an image build's */
	hutch_phase("own_dirs");		   /* and the flags' other checks */
	if (r >= 0 && o.pool) { /* a pool's sandbox, else (no pool, or it can't) cold */
		r = rt_sb_pool_run(&o, &t, err);
		if (r == RT_SB_POOL_COLD)
			r = rt_sandbox_run(g, &o, &t, err);
		else if (r == RT_SB_POOL_REFUSED)
			r = refused(argc, argv, &o, RT_SB_FAIL_SETUP, -err->code, err);
	} else if (r >= 0) {
		r = rt_sandbox_run(g, &o, &t, err);
	} else {
		r = refused(argc, argv, &o, RT_SB_FAIL_BAD_OPTION, r, err);
	}
	rt_sb_unlock(&o, &t); /* left by the run already, unless it never ran */
	rt_sb_opts_free(&o);
	return r;
}

const struct rt_verb rt_sandbox_verb = {
	.name = "sandbox",
	.summary = "run one command in a short-lived, locked-down sandbox",
	.usage = "[OPTIONS] [-- COMMAND [ARGS...]]",
	.run = verb_sandbox,
	.fail_status = RT_SB_EXIT_FAIL,
	.raw_args = true, /* its profile, applied before the flags */
	.help = rt_sb_print_help,
};
