// SPDX-License-Identifier: Apache-2.0
/*
 * The container's first process, from clone to execve: the child half of the recipe. It
 * tells the parent why it failed over the sync socket, stays non-dumpable until execve (so
 * nothing in the container can open /proc/<pid>/exe of hutch), and blocks on exec.fifo
 * until `hutch start`.
 */
#include "rt.h"
#include "hutch-ids.h"
#include "rt-process.h"
#include "net.h"

#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>

static bool is_new(const struct rt_child *c, int flag)
{
	return (c->new_ns & (uint32_t)flag) != 0;
}

static bool maps_root(const struct rt_spec *s)
{
	bool uid = s->n_uid_mappings == 0, gid = s->n_gid_mappings == 0; /* joined: its maps */
	for (size_t i = 0; i < s->n_uid_mappings; i++)
		uid |= s->uid_mappings[i].container_id == 0;
	for (size_t i = 0; i < s->n_gid_mappings; i++)
		gid |= s->gid_mappings[i].container_id == 0;
	return uid && gid;
}

/* A mount namespace of the container's own: made, or joined by path. Without one, its
 * mounts go on a private bind of the rootfs in ours, and it is chrooted, as under runc. */
static bool own_mount_ns(const struct rt_child *c)
{
	return is_new(c, CLONE_NEWNS) || rt_spec_ns(c->spec, CLONE_NEWNS);
}

/* Namespaces given by path: user first (it owns the others), then the rest; namespaces to
 * create that clone could not (because the user namespace was joined) are unshared after. */
static int join_namespaces(const struct rt_child *c, struct hutch_err *err)
{
	const struct rt_spec *s = c->spec;
	const struct rt_namespace *u = rt_spec_ns(s, CLONE_NEWUSER);
	if (u && u->path)
		TRY(ns_join(u->path, CLONE_NEWUSER, err));
	for (size_t i = 0; i < s->n_namespaces; i++) {
		const struct rt_namespace *n = &s->namespaces[i];
		if (n->path && n->flag != CLONE_NEWUSER && n->flag != CLONE_NEWPID)
			TRY(ns_join(n->path, n->flag, err));
	}
	/* Unshared here, not by clone: see clone_flags() in rt-create.c; on v1 only once the
	 * memory cgroup is joined (late_cgroup()). */
	uint32_t later = c->late_cgroupns ? 0 : c->new_ns & CLONE_NEWCGROUP;
	if (u && u->path)
		later = c->new_ns & ~(uint32_t)(CLONE_NEWUSER | CLONE_NEWPID);
	if (later && unshare((int)later) < 0)
		return hutch_fail_errno(err, errno, "unshare namespaces");
	if (rt_spec_ns(s, CLONE_NEWUSER) && maps_root(s)) {
		/* Become root of the user namespace now that the parent wrote the maps. (A map
		 * without 0, a rootless sandbox's single id: the creator's capabilities do.) */
		if (setresgid(0, 0, 0) < 0 || setresuid(0, 0, 0) < 0)
			return hutch_fail_errno(err, errno, "become root in the user namespace");
	}
	return 0;
}

/* The state for the container's hooks, which the parent sends as a memfd (rt-create.c). */
static int receive_state(const struct rt_child *c, char **state, struct hutch_err *err)
{
	struct stat st;
	_cleanup_close_ int fd = ns_recv_fd(c->sync_fd, err);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0)
		return hutch_fail_errno(err, errno, "the hooks' state");
	if (st.st_size > RT_STATE_MAX)
		return hutch_fail(err, EFBIG, "the hooks' state: larger than %d bytes",
				  RT_STATE_MAX);
	size_t len = (size_t)st.st_size;
	_cleanup_free_ char *buf = hutch_xmalloc(len + 1);
	ssize_t n = pread(fd, buf, len, 0);
	if (n != (ssize_t)len)
		return hutch_fail_errno(err, n < 0 ? errno : EIO, "the hooks' state: read");
	buf[len] = '\0';
	*state = steal_ptr(buf);
	return 0;
}

/* The parent sends our timens_offsets (after the state), which we could not open. */
static int enter_new_time(const struct rt_child *c, struct hutch_err *err)
{
	_cleanup_close_ int fd = ns_recv_fd(c->sync_fd, err);
	if (fd < 0)
		return fd;
	return ns_enter_new_time(fd, &c->spec->time_offsets, err);
}

static int setup_rootfs(const struct rt_child *c, struct hutch_err *err)
{
	const struct rt_spec *s = c->spec;
	struct ns_rootfs cfg = {
		.rootfs = s->rootfs,
		.readonly = s->root_readonly,
		.propagation = s->rootfs_propagation,
		.mounts = s->mounts,
		.n_mounts = s->n_mounts,
		.devices = s->devices,
		.n_devices = s->n_devices,
		.in_userns = rt_spec_ns(s, CLONE_NEWUSER) != NULL,
		.cgroup_dirs = c->cgroup_dirs,
		.n_cgroup_dirs = c->n_cgroup_dirs,
		.new_mount_ns = own_mount_ns(c),
		.tree_fds = c->tree_fds,
	};
	return ns_mount_rootfs(&cfg, err);
}

/* createContainer hooks run in the container's namespaces before pivot, in the rootfs; as
 * runc's, with the process's env unless they have their own (startContainer: prepare_exec). */
static int create_hooks(const struct rt_child *c, const char *state, struct hutch_err *err)
{
	const struct rt_hook_where where = { .cwd = c->spec->rootfs,
					     .env = c->spec->process.env,
					     .tramp_fd = c->tramp_fd };
	if (c->spec->hooks[RT_HOOK_CREATE_CONTAINER].n == 0)
		return 0;
	return rt_hooks_run_in(&c->spec->hooks[RT_HOOK_CREATE_CONTAINER], &where, "createContainer",
			       state, err);
}

static int parent_hooks(const struct rt_child *c, struct hutch_err *err)
{
	if (!c->hooks_sync)
		return 0;
	TRY(rt_sync_send(c->sync_fd, RT_SYNC_HOOKS, NULL, err));
	return rt_sync_expect(c->sync_fd, RT_SYNC_HOOKS_DONE, err);
}

/* Closes every fd but stdio, the preserved ones and those the rest of setup needs, so that
 * nothing of hutch's reaches the container (nor a cwd through /proc/self/fd). */
static int close_fds(const struct rt_child *c, struct hutch_err *err)
{
	int keep[] = { c->sync_fd, c->fifo_fd, c->opts->init_fd, c->memcg_fd, c->tramp_fd };
	TRY(rt_close_fds_but(c->opts->preserve_fds, keep, ARRAY_SIZE(keep), err));
	if (c->console_fd >= 0)
		close(c->console_fd);
	return 0;
}

/* The memory cgroup is joined last (v1 always, v2 under a tiny limit), so hutch's setup is
 * not charged to the container (a 176 KiB limit still starts), then the cgroup namespace is
 * made, rooted at the now complete cgroup. Needs CAP_SYS_ADMIN: before the privileges are
 * dropped. */
static int late_cgroup(struct rt_child *c, struct hutch_err *err)
{
	if (c->memcg_fd < 0)
		return 0;
	int r = write(c->memcg_fd, "0", 1) < 0
			? hutch_fail_errno(err, errno, "join the memory cgroup")
			: 0;
	close(c->memcg_fd);
	c->memcg_fd = -1;
	if (r >= 0 && c->late_cgroupns)
		ns_raise_effective(); /* the user switch emptied it */
	if (r >= 0 && c->late_cgroupns && unshare(CLONE_NEWCGROUP) < 0)
		r = hutch_fail_errno(err, errno, "unshare the cgroup namespace");
	return r;
}

static int receive_filter(struct rt_child *c, struct hutch_err *err)
{
	struct sc_filter *f = NULL;
	if (!c->filter_follows)
		return 0;
	TRY(rt_sync_recv_filter(c->sync_fd, &f, err));
	c->filter = f; /* lives until execve */
	return 0;
}

/* The last privileged steps, once, wherever they come: the memory cgroup, then
 * capabilities, no_new_privs and the filter (rt_drop_privileges's order). */
static int drop_now(struct rt_child *c, int *notify_fd, struct hutch_err *err)
{
	if (c->dropped)
		return 0;
	c->dropped = true; /* failed or not, not again */
	TRY(late_cgroup(c, err));
	hutch_phase("memcg_join");
	return rt_drop_process_privileges(&c->spec->process, c->filter, notify_fd, err);
}

static int trampoline_filter(struct rt_child *c, struct hutch_err *err)
{
	struct sc_filter *f = NULL;
	TRY(rt_trampoline_filter(c->filter, c->tramp_fd, &f, err));
	if (f)
		c->filter = f; /* lives until execve */
	return 0;
}

/* A seccomp listener gets its fd at create, as runc does: the filter is loaded before READY
 * and the notify fd handed to the parent, which passes it on to listenerPath. */
static int early_filter(struct rt_child *c, struct hutch_err *err)
{
	int nfd = -1;
	if (!c->filter || !sc_filter_needs_listener(c->filter))
		return 0;
	TRY(drop_now(c, &nfd, err));
	int r = rt_sync_send(c->sync_fd, RT_SYNC_SECCOMP, NULL, err);
	if (r >= 0)
		r = ns_send_fd(c->sync_fd, nfd, "seccompFd", err);
	close(nfd);
	return r;
}

/* startContainer hooks run in process.cwd, with the process's env unless they have their own,
 * through the trampoline. */
static struct rt_hook_where start_where(const struct rt_child *c)
{
	return (struct rt_hook_where){ .env = c->spec->process.env, .tramp_fd = c->tramp_fd };
}

/*
 * What execve and the startContainer hooks need, made while no filter is loaded (it comes at
 * create with a seccomp listener, else at start): the exec's argv and env, and each hook's
 * stdin, a pipe already holding the state, and its argv for the trampoline. After the filter the init makes only the hooks'
 * fork, execve and wait4, then its own execve, as runc's init does.
 */
static int prepare_exec(struct rt_child *c, const char *exe, const char *state,
			struct hutch_err *err)
{
	const struct rt_hooks *h = &c->spec->hooks[RT_HOOK_START_CONTAINER];
	c->exec_env = rt_listen_env(c->env, c->opts->preserve_fds);
	c->targv = rt_trampoline_argv(exe, c->spec->process.args);
	/* create exits once we are ready; a sandbox's hutch stays, and the init must not
	 * outlive it. */
	if (c->opts->init_fd < 0)
		prctl(PR_SET_PDEATHSIG, 0, 0, 0, 0);
	if (h->n == 0)
		return 0;
	const struct rt_hook_where where = start_where(c);
	TRY(rt_hooks_check_filter(h, "startContainer", c->filter, err)); /* their timeouts */
	c->hooks_ready = hutch_xcalloc(h->n, sizeof(*c->hooks_ready));
	return rt_hooks_prepare(h, &where, "startContainer", state, c->hooks_ready, err);
}

/* The fd the open of exec.fifo will return, the lowest free one once late_cgroup has closed
 * the memory cgroup's: the answer is written there. */
static int answer_fd_to_be(const struct rt_child *c)
{
	int fd = fcntl(c->fifo_fd, F_DUPFD_CLOEXEC, 0);
	if (fd >= 0)
		close(fd);
	if (c->memcg_fd >= 0 && (fd < 0 || c->memcg_fd < fd))
		fd = c->memcg_fd;
	return fd;
}

/*
 * Without startContainer hooks nothing privileged is left after READY, so the init drops
 * its privileges and loads the filter then, while create finishes, rather than after start
 * opens exec.fifo: the load (~0.2 ms here) leaves start's path. The open of exec.fifo, the
 * close of its O_PATH fd and the write of READY then follow the filter (as runc's open,
 * write and close of its fifo follow its own), so only when the filter lets exactly those
 * calls through, as drop_early asks it; a profile that denies one gets the filter at start.
 */
static bool drop_early(const struct rt_child *c, const char *fifo)
{
	if (c->dropped || c->spec->hooks[RT_HOOK_START_CONTAINER].n)
		return false;
	if (!c->filter)
		return true;
	uint64_t open_args[6] = { (uint64_t)AT_FDCWD, (uint64_t)(uintptr_t)fifo,
				  O_WRONLY | O_CLOEXEC };
	uint64_t close_args[6] = { (uint64_t)c->fifo_fd };
	uint64_t write_args[6] = { (uint64_t)answer_fd_to_be(c), 0, sizeof(struct rt_sync_msg) };
	return sc_filter_allows(c->filter, SYS_openat, open_args) &&
	       sc_filter_allows(c->filter, SYS_close, close_args) &&
	       sc_filter_allows(c->filter, SYS_write, write_args);
}

static bool answer(int fd, enum rt_sync_type type, const struct hutch_err *e)
{
	struct rt_sync_msg m = { .type = type };
	if (e)
		m.err = *e;
	return hutch_write_all(fd, &m, sizeof(m)) == 0;
}

/*
 * Blocks until `hutch start` opens exec.fifo (having dropped privileges already when
 * drop_early says so), then answers it: READY, then the filter and the startContainer hooks,
 * which can still fail: an ERROR then follows, else start takes the fifo's end for success
 * (the execve closes it, as *fifo_out is close-on-exec). So nothing but the hooks' fork,
 * execve and wait4 comes between the filter and execve. The open is the raw syscall
 * drop_early asked the filter about.
 */
static int wait_for_start(struct rt_child *c, int *fifo_out, bool *told, struct hutch_err *err)
{
	static const char name[] = "startContainer";
	const struct rt_hook_where where = start_where(c);
	char fifo[HUTCH_FD_PATH_MAX];
	int r = drop_early(c, hutch_fd_path(c->fifo_fd, fifo)) ? drop_now(c, NULL, err) : 0;
	int fd = (int)syscall(SYS_openat, AT_FDCWD, fifo, O_WRONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return hutch_fail_errno(err, errno, "open exec.fifo");
	close(c->fifo_fd);
	c->fifo_fd = -1;
	if (r >= 0 && !answer(fd, RT_SYNC_READY, NULL))
		r = hutch_fail_errno(err, errno, "answer start through exec.fifo");
	if (r >= 0)
		r = drop_now(c, NULL, err); /* the filter, unless drop_early loaded it */
	if (r >= 0 && c->hooks_ready)
		r = rt_hooks_run_ready(&c->spec->hooks[RT_HOOK_START_CONTAINER], &where, name,
				       c->hooks_ready, err);
	if (r < 0) {
		*told = answer(fd, RT_SYNC_ERROR, err);
		return r;
	}
	*fifo_out = fd;
	return 0;
}

/* Everything the child does between clone and execve. Keep it a list. */
static int child_setup(struct rt_child *c, char **state, char *exe, size_t exe_len,
		       struct hutch_err *err)
{
	const struct rt_spec *s = c->spec;
	const struct rt_process *p = &s->process;
	const struct rt_terminal term = { true, c->console_fd, c->sync_fd };
	TRY(rt_sync_expect(c->sync_fd, RT_SYNC_GO, err)); /* id maps written, state saved */
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);		  /* rootless: once the maps are */
	hutch_phase("go");
	TRY(cg_join_self(c->join, err)); /* v1: before all it makes (devices: mknod) */
	if (c->spec->hooks[RT_HOOK_CREATE_CONTAINER].n || c->spec->hooks[RT_HOOK_START_CONTAINER].n)
		TRY(receive_state(c, state, err));
	TRY(join_namespaces(c, err));
	hutch_phase("namespaces");
	if (s->has_time_offsets) /* not through clone: see ns-time.c */
		TRY(enter_new_time(c, err));
	if (is_new(c, CLONE_NEWUTS))
		TRY(ns_set_hostname(s->hostname, s->domainname, err));
	if (is_new(c, CLONE_NEWNET))
		TRY(net_loopback_up(err));
	TRY(setup_rootfs(c, err));	   /* host paths: before pivot */
	TRY(create_hooks(c, *state, err)); /* still sees host paths */
	TRY(parent_hooks(c, err));	   /* prestart, createRuntime */
	hutch_phase("mounts");		   /* and the hooks */
	TRY(own_mount_ns(c) ? ns_pivot_root(s->rootfs, c->opts->no_pivot, err)
			    : ns_chroot_root(s->rootfs, err));
	hutch_phase("pivot_root");
	TRY(rt_make_cwd(p->cwd, err)); /* before a read-only root is remounted so */
	TRY(ns_write_sysctls(s->sysctls, s->n_sysctls, err)); /* needs the new /proc */
	TRY(ns_mask_paths(s->masked_paths, s->n_masked_paths, err));
	TRY(ns_readonly_paths(s->readonly_paths, s->n_readonly_paths, err));
	TRY(rt_setup_terminal(p, &term, err));		    /* binds /dev/console */
	TRY(ns_finish_mounts(s->mounts, s->n_mounts, err)); /* ro /dev: after its last node */
	TRY(ns_finish_rootfs(s->root_readonly, s->rootfs_propagation, err));
	hutch_phase("paths"); /* sysctls, masked and read-only paths, terminal, read-only root */
	TRY(ns_set_rlimits(p->rlimits, p->n_rlimits, err)); /* may need CAP_SYS_RESOURCE */
	TRY(rt_set_kernel_attrs(s, p, err));		    /* some need capabilities */
	TRY(close_fds(c, err));				    /* before cwd: no fd to escape */
	TRY(rt_enter_cwd(p->cwd, err));
	c->env = rt_env_with_home(p->env, p->user.uid); /* the root's passwd, before the switch */
	TRY(rt_become_user(p, !c->opts->no_new_keyring, err)); /* keeps capabilities */
	hutch_phase("user");
	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0); /* reset by the uid change (dead: READY fails) */
	exe[0] = '\0'; /* command_later: the init finds the command itself */
	if (!c->opts->command_later)
		TRY(rt_find_executable(p, exe, exe_len, err)); /* as the final user */
	TRY(receive_filter(c, err));		/* when the parent made it meanwhile */
	TRY(trampoline_filter(c, err));		/* its execveat must pass */
	TRY(prepare_exec(c, exe, *state, err)); /* all the rest needs: before any filter */
	TRY(early_filter(c, err));		/* only with a seccomp listener */
	hutch_phase("prepare_exec");
	return 0;
}

void rt_child_main(struct rt_child *c)
{
	struct hutch_err err = { 0 };
	char exe[PATH_MAX];
	_cleanup_free_ char *state = NULL; /* for the hooks (none: NULL) */

	hutch_phase_in("child");
	/* Rootless, the parent holds no capability over a non-dumpable child's /proc files
	 * (they become host root's): it must write the id maps first (see child_setup). */
	if (!hutch_rootless())
		prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	/* Read while /proc is at hand: then only these need resetting before execve, one
	 * syscall each, rather than all 64 after the seccomp filter. Nothing below ignores or
	 * catches another signal for good. */
	sigset_t not_default;
	bool have_set = hutch_signals_not_default(&not_default) == 0;
	if (child_setup(c, &state, exe, sizeof(exe), &err) < 0)
		goto fail;
	if (rt_sync_send(c->sync_fd, RT_SYNC_READY, NULL, &err) < 0)
		_exit(1);
	close(c->sync_fd);
	c->sync_fd = -1;
	/* Before the filter, which may deny them; the hooks start with them reset too. */
	rt_reset_signals_in(have_set ? &not_default : NULL);
	bool told = false;
	int fifo = -1;
	if (wait_for_start(c, &fifo, &told, &err) < 0) {
		if (!told) /* start reports what it was told */
			dprintf(2, "hutch: error: %s\n", err.msg);
		_exit(1);
	}
	hutch_phase("exec"); /* from the filter: waiting for start's open of exec.fifo */
	if (c->opts->init_fd >= 0) {
		close(fifo); /* start waits for its end; this init forks the command and stays */
		c->opts->init(c->tramp_fd, c->targv, c->exec_env, c->opts->init_fd);
	}
	int e = -rt_trampoline_exec(c->tramp_fd, c->targv, c->exec_env);
	dprintf(2, "hutch: error: exec %s through the trampoline: %s\n", exe, strerror(e));
	_exit(126);
fail:
	if (c->sync_fd >= 0)
		rt_sync_send(c->sync_fd, RT_SYNC_ERROR, &err, &err);
	_exit(1);
}
