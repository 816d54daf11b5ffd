// SPDX-License-Identifier: Apache-2.0
/*
 * `exec`: a new process inside a running container. The parent checks the container, pins
 * its init with a pidfd, and clones a child straight into the init's pid namespace and
 * cgroup; the child joins the init's other namespaces in one setns and then becomes the
 * process with the same steps as the init (rt-child.c), reporting failures over the sync
 * socket.
 */
#include "rt.h"
#include "hutch-ids.h"
#include "rt-process.h"
#include "rt-json.h"

#include <fcntl.h>
#include <limits.h>
#include <linux/sched.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>

/* What the child needs between clone and execve; all of it is the parent's memory. */
struct exec_child {
	const struct rt_process *p;
	const struct rt_spec *spec; /* the container's */
	const struct sc_filter *filter;
	int init_pidfd;
	int ns_flags; /* the init's namespaces that differ from ours, without pid */
	int root_fd;  /* the init's root, when we share its mount namespace: chrooted into */
	int sync_fd;
	int console_fd;
	int tramp_fd;
	int preserve_fds;
	bool die_with_parent;
	struct cg_join *join; /* v1: the container's cgroups, joined by the process itself */
};

struct exec_ctx {
	const struct rt_exec_target *t;
	const struct rt_process *p;
	const struct rt_exec_opts *o;
	struct sc_filter *filter;
	struct cg *cg;
	struct cg_join join;
	int init_pidfd;
	int ns_flags; /* including CLONE_NEWPID, which only the parent can use */
	int root_fd;  /* see exec_child */
	int sync[2];
	int console_fd;
	int tramp_fd;
	pid_t pid;
	int pidfd;
	int pty_master;
};

/* ---- the container, from its state and bundle ---- */

static int check_status(const char *id, enum rt_status s, bool ignore_paused, struct hutch_err *err)
{
	if (s == RT_STOPPED)
		return hutch_fail(err, ESRCH, "cannot exec in container %s: container not running",
				  id);
	if (s == RT_CREATING)
		return hutch_fail(err, EAGAIN, "cannot exec in container %s: it is being created",
				  id);
	if (s == RT_PAUSED && !ignore_paused)
		return hutch_fail(
			err, EBUSY,
			"cannot exec in a paused container (use --ignore-paused to override)");
	return 0;
}

int rt_exec_target_open(struct rt_global *g, const char *id, bool ignore_paused,
			struct rt_exec_target *t, struct hutch_err *err)
{
	struct rt_state st = { 0 };
	*t = (struct rt_exec_target){ 0 };
	TRY(rt_validate_id(id, err));
	/* Locked only while reading: the exec'd process may outlive us, and a paused
	 * container's `resume` must not wait for a frozen exec. */
	_cleanup_close_ int dirfd = -1;
	TRY(rt_state_open(g->root, id, &dirfd, err));
	int r = rt_state_load(dirfd, id, &st, err);
	if (r >= 0)
		r = check_status(id, rt_state_status(dirfd, &st), ignore_paused, err);
	if (r >= 0)
		r = rt_state_load_spec(dirfd, &st, &t->spec, err);
	if (r >= 0) {
		t->id = steal_ptr(st.id);
		t->created = steal_ptr(st.created);
		t->pid = st.pid;
		t->start_time = st.start_time;
		t->cgroup_path = steal_ptr(st.cgroup_path);
		t->cgroup_paths = steal_ptr(st.cgroup_paths);
		t->n_cgroup_paths = st.n_cgroup_paths;
		st.n_cgroup_paths = 0;
	}
	rt_state_clear(&st);
	return r;
}

void rt_exec_target_free(struct rt_exec_target *t)
{
	free(t->id);
	free(t->created);
	free(t->cgroup_path);
	rt_kv_free(t->cgroup_paths, t->n_cgroup_paths);
	rt_spec_free(t->spec);
	*t = (struct rt_exec_target){ 0 };
}

/* ---- the child ---- */

static const struct {
	int flag;
	const char *name;
} ns_files[] = {
	{ CLONE_NEWUSER, "user" }, { CLONE_NEWNS, "mnt" },  { CLONE_NEWNET, "net" },
	{ CLONE_NEWIPC, "ipc" },   { CLONE_NEWUTS, "uts" }, { CLONE_NEWCGROUP, "cgroup" },
	{ CLONE_NEWTIME, "time" }, { CLONE_NEWPID, "pid" },
};

/* All of the init's namespaces at once: the kernel orders them (user first) and either
 * joins all or none. Those we share with the init are left out, as setns refuses to
 * re-enter one's own user namespace. */
static int join_container(const struct exec_child *c, struct hutch_err *err)
{
	if (c->ns_flags && setns(c->init_pidfd, c->ns_flags) < 0)
		return hutch_fail_errno(err, errno, "join the container's namespaces");
	/* A container without a mount namespace of its own is chrooted: so are we. */
	if (c->root_fd >= 0 && (fchdir(c->root_fd) < 0 || chroot(".") < 0 || chdir("/") < 0))
		return hutch_fail_errno(err, errno, "enter the container's root");
	if (c->root_fd >= 0)
		close(c->root_fd);
	/* A credential change resets dumpable to the suid_dumpable sysctl. */
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	return 0;
}

static int close_fds(const struct exec_child *c, struct hutch_err *err)
{
	int keep[] = { c->sync_fd, c->tramp_fd };
	return rt_close_fds_but(c->preserve_fds, keep, ARRAY_SIZE(keep), err);
}

/* Everything the exec'd process does between clone and execve. Keep it a list. */
static int child_setup(const struct exec_child *c, char *exe, size_t exe_len, char ***env,
		       struct hutch_err *err)
{
	const struct rt_process *p = c->p;
	/* The container's /dev/console stays the init's: an exec must not stack mounts in the
	 * container's mount namespace. The master goes to --console-socket, or to us. */
	const struct rt_terminal term = { false, c->console_fd, c->sync_fd };
	TRY(rt_sync_expect(c->sync_fd, RT_SYNC_GO, err));
	TRY(cg_join_self(c->join, err)); /* v1 (born into v2's): the container's cgroups */
	TRY(ns_set_rlimits(p->rlimits, p->n_rlimits, err)); /* raising needs the host's caps */
	TRY(rt_set_kernel_attrs(c->spec, p, err));	    /* the container's, and its own */
	TRY(join_container(c, err));			    /* root and cwd: the container's */
	TRY(rt_setup_terminal(p, &term, err));		    /* in the container's devpts */
	TRY(close_fds(c, err));				    /* before cwd: no fd to escape */
	TRY(rt_enter_cwd(p->cwd, err));
	*env = rt_env_with_home(p->env, p->user.uid);  /* the root's passwd, before the switch */
	TRY(rt_become_user(p, true, err));	       /* keeps capabilities */
	TRY(rt_find_executable(p, exe, exe_len, err)); /* as the final user */
	return 0;
}

__attribute__((noreturn)) static void exec_child_main(const struct exec_child *c)
{
	struct hutch_err err = { 0 };
	char exe[PATH_MAX];

	/* First: nothing in the container may ptrace us or open our /proc files while we
	 * still hold host fds. */
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	hutch_phase_in("exec-child");
	char **env = NULL;
	if (child_setup(c, exe, sizeof(exe), &env, &err) < 0)
		goto fail;
	hutch_phase("setup"); /* namespaces, root and cwd joined, the user switched */
	env = rt_listen_env(env, c->preserve_fds);
	char **targv = rt_trampoline_argv(exe, c->p->args);
	struct sc_filter *patched = NULL; /* the trampoline's execveat let through */
	if (rt_trampoline_filter(c->filter, c->tramp_fd, &patched, &err) < 0)
		goto fail;
	/* READY before the privilege drop: the seccomp profile may forbid send. */
	if (rt_sync_send(c->sync_fd, RT_SYNC_READY, NULL, &err) < 0)
		_exit(1);
	int nfd = -1; /* a filter with NOTIFY rules: its listener's fd, for listenerPath */
	if (rt_drop_process_privileges(c->p, patched ? patched : c->filter, &nfd, &err) < 0)
		goto fail;
	if (nfd >= 0 && (rt_sync_send(c->sync_fd, RT_SYNC_SECCOMP, NULL, &err) < 0 ||
			 ns_send_fd(c->sync_fd, nfd, "seccompFd", &err) < 0))
		goto fail;
	if (nfd >= 0)
		close(nfd);
	/* setresuid cleared it; set now, it survives the execve of the same credentials. A
	 * parent that died before shows as the sync socket's hangup. */
	prctl(PR_SET_PDEATHSIG, c->die_with_parent ? SIGKILL : 0, 0, 0, 0);
	struct pollfd hup = { .fd = c->sync_fd, .events = 0 };
	if (c->die_with_parent && poll(&hup, 1, 0) > 0 && (hup.revents & POLLHUP))
		_exit(1);
	rt_reset_signals();
	hutch_phase("exec");
	int e = -rt_trampoline_exec(c->tramp_fd, targv, env);
	hutch_fail_errno(&err, e, "exec %s through the trampoline", exe);
	err.status = 126;
	rt_sync_send(c->sync_fd, RT_SYNC_ERROR, &err, &err);
	_exit(err.status);
fail:
	rt_sync_send(c->sync_fd, RT_SYNC_ERROR, &err, &err);
	_exit(1);
}

/* ---- the parent ---- */

static int check_options(const struct exec_ctx *x, struct hutch_err *err)
{
	const struct rt_process *p = x->p;
	if (!p->args || !p->args[0])
		return hutch_fail(err, EINVAL, "exec: no command given");
	if (p->terminal && x->o->detach && !x->o->console_socket)
		return hutch_fail(err, EINVAL, "--tty with --detach needs --console-socket");
	if (!p->terminal && x->o->console_socket)
		return hutch_fail(err, EINVAL, "--console-socket: only valid with --tty");
	if (p->apparmor_profile && *p->apparmor_profile)
		return hutch_fail(err, ENOTSUP, "AppArmor profile %s: %s", p->apparmor_profile,
				  access("/sys/kernel/security/apparmor", F_OK) < 0
					  ? "AppArmor is not enabled on this host"
					  : "not supported by hutch");
	if (p->selinux_label && *p->selinux_label)
		return hutch_fail(err, ENOTSUP, "SELinux label %s: %s", p->selinux_label,
				  access("/sys/fs/selinux/enforce", F_OK) < 0
					  ? "SELinux is not enabled on this host"
					  : "not supported by hutch");
	return 0;
}

static int same_ns(pid_t pid, const char *name, bool *same, struct hutch_err *err)
{
	char path[64];
	struct stat own, theirs;
	snprintf(path, sizeof(path), "/proc/self/ns/%s", name);
	if (stat(path, &own) < 0) {
		*same = true; /* a namespace type this kernel does not have */
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)pid, name);
	if (stat(path, &theirs) < 0)
		return hutch_fail_errno(err, errno, "stat %s", path);
	*same = own.st_ino == theirs.st_ino && own.st_dev == theirs.st_dev;
	return 0;
}

static bool init_exited(int pidfd)
{
	struct pollfd p = { .fd = pidfd, .events = POLLIN };
	return poll(&p, 1, 0) != 0;
}

/* Pins the init with a pidfd and finds the namespaces to join. The start time proves the
 * pid was not reused before the pidfd was opened; the pidfd not being readable after the
 * /proc lookups proves they were about the same process. */
static int pin_init(struct exec_ctx *x, struct hutch_err *err)
{
	pid_t pid = x->t->pid;
	x->init_pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (x->init_pidfd < 0 || !rt_pid_alive(pid, x->t->start_time))
		return hutch_fail(err, ESRCH, "cannot exec in container %s: container not running",
				  x->t->id);
	for (size_t i = 0; i < ARRAY_SIZE(ns_files); i++) {
		bool same = true;
		TRY(same_ns(pid, ns_files[i].name, &same, err));
		if (!same)
			x->ns_flags |= ns_files[i].flag;
	}
	char root[64];
	snprintf(root, sizeof(root), "/proc/%d/root", (int)pid);
	if (!(x->ns_flags & CLONE_NEWNS) &&
	    (x->root_fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		return hutch_fail_errno(err, errno, "open %s", root);
	if (init_exited(x->init_pidfd))
		return hutch_fail(err, ESRCH, "cannot exec in container %s: container not running",
				  x->t->id);
	return 0;
}

/* v1: every hierarchy's sub-cgroup that --cgroup names exists (v2: cg_open_paths said so). */
static int check_sub_cgroups(struct cg *cg, struct hutch_err *err)
{
	const char *names[32], *dirs[32];
	size_t n = cg_hierarchy_dirs(cg, names, dirs, ARRAY_SIZE(dirs));
	for (size_t i = 0; i < n; i++)
		if (access(dirs[i], F_OK) < 0)
			return hutch_fail_errno(err, errno, "--cgroup: cgroup %s", dirs[i]);
	return 0;
}

/* The container's cgroup, or the sub-cgroups that --cgroup names (which must exist). */
static int open_cgroup(struct exec_ctx *x, struct hutch_err *err)
{
	const struct rt_exec_target *t = x->t;
	struct cg_kv *paths = NULL;
	if (!t->cgroup_path && !t->n_cgroup_paths) /* none: rootless, nothing delegated */
		return x->o->n_cgroups ? hutch_fail(err, ENOENT,
						    "--cgroup: the container has "
						    "no cgroup")
				       : 0;
	if (!x->o->n_cgroups)
		return rt_open_cgroup(t->cgroup_path, t->cgroup_paths, t->n_cgroup_paths, &x->cg,
				      err);
	int r = rt_exec_cgroup_paths(t->cgroup_paths, t->n_cgroup_paths, cg_is_v2(), x->o->cgroups,
				     x->o->n_cgroups, &paths, err);
	if (r >= 0) {
		r = cg_open_paths(paths, t->n_cgroup_paths, &x->cg, err);
		if (r < 0)
			hutch_err_prefix(err, "--cgroup: ");
		rt_kv_free(paths, t->n_cgroup_paths);
	}
	return r < 0 ? r : check_sub_cgroups(x->cg, err);
}

/* Cgroup, seccomp program, console and sync socket: everything made before clone. */
static int prepare(struct exec_ctx *x, struct hutch_err *err)
{
	TRY(check_options(x, err));
	TRY(pin_init(x, err));
	TRY(open_cgroup(x, err));
	if (x->cg) /* v1: the process joins itself, which skips a grace period (cg.h) */
		TRY(cg_join_open(x->cg, NULL, &x->join, err));
	if (x->t->spec->has_seccomp) /* the container's filter applies to every process */
		TRY(rt_spec_compile_seccomp(x->t->spec, &x->filter, err));
	if (x->o->console_socket) {
		x->console_fd = rt_connect_console(x->o->console_socket, err);
		if (x->console_fd < 0)
			return x->console_fd;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, x->sync) < 0)
		return hutch_fail_errno(err, errno, "sync socketpair");
	x->tramp_fd = rt_trampoline_open(err);
	return x->tramp_fd < 0 ? x->tramp_fd : 0;
}

/* Rootless, joining the pid namespace needs capabilities in the user namespace that owns it.
 * A short-lived middle process joins that one (as runc's nsexec does) and clones the exec'd
 * process as hutch's own child (CLONE_PARENT), sends back its pid and pidfd, and exits. So
 * hutch stays in its own namespaces, and what it forks later (a sanitizer's tracer at exit)
 * lands in its own pid namespace, not the container's. 0 in the exec'd process. */
static pid_t clone_rootless(struct exec_ctx *x, struct hutch_err *err)
{
	int sp[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
		return hutch_fail_errno(err, errno, "exec: socketpair");
	x->ns_flags &= ~CLONE_NEWUSER; /* the middle joins it; the process inherits it */
	pid_t mid = fork();
	if (mid < 0) {
		close(sp[0]), close(sp[1]);
		return hutch_fail_errno(err, errno, "exec: fork");
	}
	if (mid == 0) {
		struct hutch_err e = { 0 };
		int pidfd = -1;
		pid_t pid = -1;
		close(sp[0]);
		if (setns(x->init_pidfd, CLONE_NEWUSER) == 0)
			pid = rt_clone(CLONE_PARENT, cg_clone_fd(x->cg),
				       (x->ns_flags & CLONE_NEWPID) ? x->init_pidfd : -1, &pidfd,
				       &e);
		if (pid == 0) {
			close(sp[1]);
			return 0;
		}
		_exit(pid > 0 && write(sp[1], &pid, sizeof(pid)) == (ssize_t)sizeof(pid) &&
				      ns_send_fd(sp[1], pidfd, "pidfd", &e) >= 0
			      ? 0
			      : 1);
	}
	close(sp[1]);
	pid_t pid = -1;
	int fd = read(sp[0], &pid, sizeof(pid)) == (ssize_t)sizeof(pid) ? ns_recv_fd(sp[0], err)
									: -EPERM;
	close(sp[0]);
	while (waitpid(mid, NULL, 0) < 0 && errno == EINTR)
		;
	if (fd < 0)
		return hutch_fail(err, -fd,
				  "exec in container %s: join its user and pid namespaces",
				  x->t->id);
	x->pidfd = fd;
	return pid;
}

static int spawn(struct exec_ctx *x, struct hutch_err *err)
{
	/* Straight into the init's pid namespace and its cgroup2 cgroup (v2, hybrid). */
	pid_t pid = hutch_rootless() && (x->ns_flags & CLONE_NEWUSER)
			    ? clone_rootless(x, err)
			    : rt_clone(0, cg_clone_fd(x->cg),
				       (x->ns_flags & CLONE_NEWPID) ? x->init_pidfd : -1, &x->pidfd,
				       err);
	if (pid < 0)
		return hutch_err_prefix(err, "exec in container %s: ", x->t->id);
	if (pid == 0) {
		close(x->sync[0]);
		const struct exec_child c = {
			.p = x->p,
			.spec = x->t->spec,
			.filter = x->filter,
			.init_pidfd = x->init_pidfd,
			.ns_flags = x->ns_flags & ~CLONE_NEWPID,
			.root_fd = x->root_fd,
			.sync_fd = x->sync[1],
			.console_fd = x->console_fd,
			.tramp_fd = x->tramp_fd,
			.preserve_fds = x->o->preserve_fds,
			.die_with_parent = x->o->die_with_parent,
			.join = &x->join,
		};
		exec_child_main(&c);
	}
	x->pid = pid;
	cg_join_close(&x->join); /* the process's now */
	hutch_fault_point("exec:cloned");
	close(steal_fd(x->sync[1]));
	if (x->console_fd >= 0) /* the child sends the pty; the receiver sees EOF after */
		close(steal_fd(x->console_fd));
	return 0;
}

/* The exec'd process's notify fd goes to the container's listenerPath, as the init's does at
 * create: the process state names the exec'd process, the state the container. */
static int pass_notify_fd(struct exec_ctx *x, struct hutch_err *err)
{
	_cleanup_close_ int fd = ns_recv_fd(x->sync[0], err);
	if (fd < 0)
		return fd;
	const struct rt_spec *s = x->t->spec;
	struct rt_state st = { .id = x->t->id,
			       .created = x->t->created,
			       .bundle = s->bundle,
			       .rootfs = s->rootfs,
			       .pid = x->t->pid,
			       .annotations = s->annotations,
			       .n_annotations = s->n_annotations };
	size_t len;
	_cleanup_free_ char *state = rt_state_json(&st, RT_RUNNING, &len);
	return sc_send_to_listener(s->seccomp.listener_path, fd, x->pid, state,
				   s->seccomp.listener_metadata, err);
}

/* Until the process has exec'd: the sync socket is close-on-exec, so EOF after READY
 * means execve succeeded, and an ERROR after READY that it failed. */
static int converse(struct exec_ctx *x, struct hutch_err *err)
{
	if (x->p->has_oom_score_adj)
		TRY(ns_set_oom_score_adj(x->pid, x->p->oom_score_adj, err));
	TRY(rt_sync_send(x->sync[0], RT_SYNC_GO, NULL, err));
	bool ready = false;
	for (;;) {
		struct rt_sync_msg m;
		int r = rt_sync_recv(x->sync[0], &m, err);
		if (r == -EPIPE && ready)
			return 0;
		if (r == -EPIPE)
			return hutch_fail(err, EPIPE, "exec: the process died during setup");
		if (r < 0)
			return r;
		switch (m.type) {
		case RT_SYNC_PTY:
			x->pty_master = ns_recv_fd(x->sync[0], err);
			if (x->pty_master < 0)
				return x->pty_master;
			break;
		case RT_SYNC_READY:
			hutch_fault_point("exec:ready");
			ready = true;
			break;
		case RT_SYNC_SECCOMP:
			TRY(pass_notify_fd(x, err));
			break;
		case RT_SYNC_ERROR:
			*err = m.err;
			return -(m.err.code ? m.err.code : EINVAL);
		default:
			return hutch_fail(err, EPROTO, "sync: unexpected message %u", m.type);
		}
	}
}

static void ctx_free(struct exec_ctx *x)
{
	cg_join_close(&x->join);
	cg_free(x->cg);
	sc_filter_free(x->filter);
	int fds[] = {
		x->init_pidfd, x->root_fd, x->sync[0], x->sync[1], x->console_fd, x->tramp_fd
	};
	for (size_t i = 0; i < ARRAY_SIZE(fds); i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

static void rollback(struct exec_ctx *x)
{
	if (x->pid > 0) {
		kill(x->pid, SIGKILL);
		waitpid(x->pid, NULL, 0);
	}
	if (x->pidfd >= 0)
		close(x->pidfd);
	if (x->pty_master >= 0)
		close(x->pty_master);
}

static int write_pid_file(struct exec_ctx *x, struct hutch_err *err)
{
	return x->o->pid_file ? rt_write_pid_file(x->o->pid_file, x->pid, err) : 0;
}

/* exec's recipe, in this order; a failed step kills what spawn started (rollback). */
static int (*const exec_steps[])(struct exec_ctx *, struct hutch_err *) = {
	prepare,	/* the init pinned, its cgroup and filter; console, sync, trampoline */
	spawn,		/* clone into the container's cgroup, joining its namespaces */
	converse,	/* GO; the pty and a seccomp listener's fd, until READY */
	write_pid_file, /* once the process runs */
};
static const char *const exec_step_names[] = { "prepare", "clone", "converse", "pid_file" };
_Static_assert(ARRAY_SIZE(exec_step_names) == ARRAY_SIZE(exec_steps), "a name per step");

int rt_exec_run(const struct rt_exec_target *t, const struct rt_process *p,
		const struct rt_exec_opts *o, struct hutch_err *err)
{
	struct exec_ctx x = { .t = t,
			      .p = p,
			      .o = o,
			      .init_pidfd = -1,
			      .root_fd = -1,
			      .sync = { -1, -1 },
			      .console_fd = -1,
			      .tramp_fd = -1,
			      .pidfd = -1,
			      .pty_master = -1 };
	int r = 0;
	for (size_t i = 0; r >= 0 && i < ARRAY_SIZE(exec_steps); i++) {
		r = exec_steps[i](&x, err);
		hutch_phase(exec_step_names[i]);
	}
	if (r < 0) {
		rollback(&x);
		ctx_free(&x);
		return r;
	}
	ctx_free(&x);
	_cleanup_close_ int pidfd = x.pidfd;
	_cleanup_close_ int master = x.pty_master;
	if (o->detach)
		return 0; /* whoever reaps orphans (a shim, conmon) reaps it */
	r = master >= 0 ? rt_relay_and_wait(master, pidfd, x.pid, err)
			: rt_wait_forward(pidfd, x.pid, err);
	hutch_phase("wait");
	return r;
}
