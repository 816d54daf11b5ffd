// SPDX-License-Identifier: Apache-2.0
/*
 * The parent half of the recipe: `create` (state dir, cgroup, clone, id maps, the seccomp
 * program while the init sets up, hooks, pid file), `start` (exec.fifo) and `delete`. A failure at any step rolls back
 * everything before it: no state dir, cgroup, mount or process is left behind.
 */
#include "rt.h"
#include "hutch-ids.h"
#include "hutch-path.h"
#include "rt-process.h"
#include "rt-json.h"
#include "img.h"
#include "cg-systemd.h"

#include <fcntl.h>
#include <linux/sched.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>

struct create_ctx {
	struct rt_global *g;
	const struct rt_create_opts *o;
	struct rt_spec *spec;
	char *config_text; /* create --config: copied into the state dir for later verbs */
	int dirfd;
	struct rt_state st;
	struct cg *cg;
	struct cg_sd_unit scope; /* --systemd-cgroup: the scope to start (st names it once made) */
	struct cg *scope_cg;	 /* v1: the scope's cgroup located, not made: x->cg once it is */
	struct sc_filter *filter;
	bool filter_follows; /* compiled in converse, while the init sets up */
	int sync[2];
	int console_fd;
	int fifo_fd;
	int memcg_fd;
	struct cg_join join; /* v1: the rest of the cgroups, which the init joins itself */
	int tramp_fd;
	int *tree_fds; /* per mount: its source as a detached tree (make_trees), or -1 */
	struct ns_cgroup_dir cgroup_dirs[16];
	size_t n_cgroup_dirs;
	pid_t pid;
	int pidfd;
	int pty_master;
	uint32_t new_ns;
};

static const char *const hook_names[RT_HOOK_COUNT] = {
	"prestart", "createRuntime", "createContainer", "startContainer", "poststart", "poststop",
};

static char *now_rfc3339(void)
{
	struct timespec ts;
	char buf[HUTCH_UTC_MAX];
	clock_gettime(CLOCK_REALTIME, &ts);
	hutch_utc_stamp(&ts, true, buf);
	return hutch_xstrdup(buf);
}

static int check_options(const struct create_ctx *x, struct hutch_err *err)
{
	const struct rt_spec *s = x->spec;
	if (!s->process.args)
		return hutch_fail(err, EINVAL, "process: required to create a container");
	const struct rt_namespace *mnt = rt_spec_ns(s, CLONE_NEWNS);
	if (mnt && mnt->path && ns_mount_ns_is_ours(mnt->path))
		return hutch_fail(err, EINVAL,
				  "linux.namespaces: mount %s is hutch's own: leave the mount "
				  "namespace out to share it",
				  mnt->path);
	if (s->process.terminal && !x->o->console_socket && !x->o->foreground)
		return hutch_fail(err, EINVAL,
				  "process.terminal: a detached container needs --console-socket");
	if (!s->process.terminal && x->o->console_socket)
		return hutch_fail(err, EINVAL,
				  "--console-socket: only valid with process.terminal true");
	/* Never dropped silently: hutch applies neither LSM yet. */
	if (s->process.apparmor_profile && *s->process.apparmor_profile)
		return hutch_fail(err, ENOTSUP, "process.apparmorProfile: %s",
				  access("/sys/kernel/security/apparmor", F_OK) < 0
					  ? "AppArmor is not enabled on this host"
					  : "not supported by hutch yet");
	if (s->process.selinux_label && *s->process.selinux_label)
		return hutch_fail(err, ENOTSUP, "process.selinuxLabel: %s",
				  access("/sys/fs/selinux/enforce", F_OK) < 0
					  ? "SELinux is not enabled on this host"
					  : "not supported by hutch yet");
	return 0;
}

int rt_connect_console(const char *path, struct hutch_err *err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof(sa.sun_path))
		return hutch_fail(err, ENAMETOOLONG, "--console-socket %s: path too long", path);
	strcpy(sa.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return hutch_fail_errno(err, errno, "--console-socket: socket");
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = errno;
		close(fd);
		return hutch_fail_errno(err, e, "--console-socket %s", path);
	}
	return fd;
}

/* The host id for a container id (identity without a user namespace). */
static uint32_t host_id(const struct ns_idmap *m, size_t n, uint32_t id)
{
	if (n == 0)
		return id;
	for (size_t i = 0; i < n; i++)
		if (id >= m[i].container_id && id - m[i].container_id < m[i].size)
			return m[i].host_id + (id - m[i].container_id);
	return 65534; /* unmapped: nobody can open it, which fails clearly at start */
}

/* prestart and createRuntime hooks, which the child asks the parent to run mid-setup. */
static bool parent_hooks(const struct rt_spec *s)
{
	return s->hooks[RT_HOOK_PRESTART].n || s->hooks[RT_HOOK_CREATE_RUNTIME].n;
}

/*
 * Bind sources as detached trees made here, with the host's privileges, for the init to
 * attach: idmapped ones always (only the host's root may idmap a host filesystem), and every
 * bind when the container has a user namespace, whose root could not even reach a source
 * under a directory closed to it (a store's 0700 tmp, a workspace beneath /root).
 */
static int make_trees(struct create_ctx *x, struct hutch_err *err)
{
	const struct rt_spec *s = x->spec;
	bool userns = rt_spec_ns(s, CLONE_NEWUSER) != NULL;
	/* A rootless caller has no privilege here: the container's root binds them itself,
	 * in its own mount namespace, and idmapped mounts are refused (only the host's root may
	 * idmap a host filesystem). */
	bool may = hutch_may_mount();
	x->tree_fds = hutch_xmalloc((s->n_mounts ? s->n_mounts : 1) * sizeof(int));
	for (size_t i = 0; i < s->n_mounts; i++)
		x->tree_fds[i] = -1;
	for (size_t i = 0; i < s->n_mounts; i++) {
		const struct ns_mount *m = &s->mounts[i];
		if (!m->bind || !m->source || (!m->idmap && !userns) || (!may && !m->idmap))
			continue;
		if (!may)
			return hutch_fail(
				err, EPERM,
				"mounts[%zu] (%s): an idmapped mount: not supported rootless", i,
				m->destination);
		struct ns_tree_opts o = { .recursive = m->recursive,
					  .idmap = m->idmap,
					  .idmap_recursive = m->idmap_recursive,
					  .uids = m->uid_map,
					  .gids = m->gid_map,
					  .n_uids = m->n_uid_map,
					  .n_gids = m->n_gid_map };
		x->tree_fds[i] = ns_make_tree(m->source, &o, err);
		if (x->tree_fds[i] < 0)
			return hutch_err_prefix(err, "mounts[%zu] (%s): ", i, m->destination);
	}
	return 0;
}

/* v2: below this memory limit the init joins its cgroup late (see plan_memcg). */
#define LATE_JOIN_BELOW (1024 * 1024)

/* runc's rootless rule: without host root a container needs a user namespace of its own
 * (which only a caller without CAP_SYS_ADMIN here lacks the power to do without). */
static int check_rootless(const struct create_ctx *x, struct hutch_err *err)
{
	if (hutch_may_mount() || rt_spec_ns(x->spec, CLONE_NEWUSER))
		return 0;
	return hutch_fail(err, EPERM,
			  "rootless (uid %u): linux.namespaces needs a user namespace (hutch spec "
			  "--rootless writes one)",
			  (unsigned)geteuid());
}

static int check_spec(struct create_ctx *x, struct hutch_err *err)
{
	TRY(check_options(x, err));
	TRY(check_rootless(x, err));
	TRY(rt_state_check_annotations(x->spec->annotations, x->spec->n_annotations, err));
	rt_process_skip_ambient(&x->spec->process);
	return 0;
}

/* The profile is looked up in the cache (or compiled) while the init sets up, when the parent
 * would only wait: off the start's critical path. Not when prestart or createRuntime hooks
 * talk over the sync socket meanwhile: then here. */
static int plan_seccomp(struct create_ctx *x, struct hutch_err *err)
{
	x->filter_follows = x->spec->has_seccomp && !parent_hooks(x->spec);
	if (x->spec->has_seccomp && !x->filter_follows)
		TRY(rt_spec_compile_seccomp(x->spec, &x->filter, err));
	return 0;
}

/* The state dir, locked: the lock serialises every operation on the id. */
static int make_state(struct create_ctx *x, struct hutch_err *err)
{
	TRY(rt_state_create_dir(x->g->root, x->o->id, &x->dirfd, err));
	hutch_fault_point("create:state-dir");
	x->st.id = hutch_xstrdup(x->o->id);
	x->st.bundle = hutch_xstrdup(x->spec->bundle);
	x->st.rootfs = hutch_xstrdup(x->spec->rootfs);
	x->st.created = now_rfc3339();
	/* list's OWNER, as runc's: the user the state belongs to ("" is root). */
	x->st.owner = hutch_rootless() ? hutch_user_name(geteuid()) : NULL;
	if (!x->st.owner)
		x->st.owner = hutch_rootless() ? hutch_xasprintf("%u", (unsigned)geteuid())
					       : hutch_xstrdup("");
	x->st.creating = true;
	x->st.poststart = x->spec->hooks[RT_HOOK_POSTSTART].n > 0;
	x->st.poststop = x->spec->hooks[RT_HOOK_POSTSTOP].n > 0;
	if (!rt_spec_ns(x->spec, CLONE_NEWNS)) /* its mounts will be made in ours */
		x->st.rootfs_mnt_id = ns_mount_id(x->spec->rootfs);
	/* Borrowed from the spec for the state document; ctx_free gives them back. */
	x->st.annotations = x->spec->annotations;
	x->st.n_annotations = x->spec->n_annotations;
	/* start's, exec's and delete's spec: the file may be gone or changed by then */
	x->st.own_config = x->config_text != NULL;
	if (x->config_text)
		TRY(hutch_write_atomic_at(x->dirfd, "config.json", x->config_text,
					  strlen(x->config_text), 0600, err));
	return 0;
}

/* runc's rootless rule: a cgroup the caller may not make is no error while the spec sets no
 * limit (the devices list aside: without CAP_MKNOD in the host's namespace a device node
 * can't be made anyway). A limit that can't be had is, naming the fix. */
static int rootless_cgroup(struct create_ctx *x, int r, struct hutch_err *err)
{
	if (r != -EACCES && r != -EPERM && r != -EROFS)
		return r;
	if (x->spec->has_resources && cg_limits_set(&x->spec->resources))
		return hutch_err_prefix(err, "rootless: linux.resources sets limits, which need a "
					     "cgroup delegated to this user (or drop them): ");
	cg_destroy(x->cg, &(struct hutch_err){ 0 });
	cg_free(steal_ptr(x->cg));
	free(steal_ptr(x->st.cgroup_path));
	rt_kv_free(x->st.cgroup_paths, x->st.n_cgroup_paths);
	x->st.cgroup_paths = NULL;
	x->st.n_cgroup_paths = 0;
	return rt_state_save(x->dirfd, &x->st, err);
}

/* --systemd-cgroup: the scope's name and cgroup. systemd makes it in configure, once the init
 * exists to be put in it, and only then does the state name it: a unit of that name that
 * another container holds (systemd refuses to make it again) is never this one's to stop.
 * A create killed before the state names it leaves an init that exits when its sync socket
 * closes, and systemd collects the emptied scope. On v1 the scope's directories are located
 * here (touching nothing) for the mount plan: the init binds them after GO. */
static int locate_scope(struct create_ctx *x, struct hutch_err *err)
{
	struct cg_sd_unit *u = &x->scope;
	TRY(cg_sd_parse(x->spec->cgroups_path, x->o->id, u, err));
	if (hutch_rootless())
		return hutch_fail(err, ENOTSUP, "--systemd-cgroup: not supported rootless");
	if (!cg_sd_booted())
		return hutch_fail(err, ENOTSUP,
				  "--systemd-cgroup: systemd is not this host's init "
				  "(no /run/systemd/system): use the cgroupfs driver");
	return cg_is_v2() ? 0 : cg_locate(u->path, &x->scope_cg, err);
}

/* The scope with the init in it, then what systemd has no property for in its files
 * (Delegate=yes makes them ours), as runc does. On v1, systemd makes the scope only in the
 * hierarchies it manages: the others (cpuset, freezer, ...) are made here, recorded first so
 * that a killed create's delete removes them. */
static int start_scope(struct create_ctx *x, struct hutch_err *err)
{
	const struct rt_spec *s = x->spec;
	TRY(cg_sd_start(&x->scope, x->pid, s->has_resources ? &s->resources : NULL, err));
	x->st.systemd_unit = hutch_xstrdup(x->scope.unit); /* ours from here: rollback stops it */
	x->st.cgroup_path = hutch_xstrdup(x->scope.path);
	hutch_fault_point("create:scope-started");
	bool v1 = x->scope_cg; /* located in locate_scope on v1 only */
	if (v1)
		x->cg = steal_ptr(x->scope_cg);
	else
		TRY(cg_open(x->st.cgroup_path, &x->cg, err));
	x->st.n_cgroup_paths = cg_paths(x->cg, &x->st.cgroup_paths);
	TRY(rt_state_save(x->dirfd, &x->st, err));
	if (v1) {
		TRY(cg_make_scope(x->cg, x->pid, err));
		x->st.n_cgroup_made = cg_made_parents(x->cg, &x->st.cgroup_made);
		TRY(rt_state_save(x->dirfd, &x->st, err));
	}
	hutch_fault_point("create:scope-saved");
	return s->has_resources ? cg_apply(x->cg, &s->resources, err) : 0;
}

static int make_cgroup(struct create_ctx *x, struct hutch_err *err)
{
	if (x->o->no_cgroup)
		return 0;
	if (x->g->systemd_cgroup)
		return locate_scope(x, err);
	TRY(cg_resolve_path(x->spec->cgroups_path, x->o->id, &x->st.cgroup_path, err));
	TRY(cg_locate(x->st.cgroup_path, &x->cg, err));
	x->st.n_cgroup_paths = cg_paths(x->cg, &x->st.cgroup_paths);
	/* Saved before the cgroup exists: a create killed from here on leaves a state that
	 * names it, and `delete` removes it. */
	TRY(rt_state_save(x->dirfd, &x->st, err));
	hutch_fault_point("create:cgroup-recorded");
	int r = cg_make(x->cg, err);
	if (r < 0 && hutch_rootless())
		return rootless_cgroup(x, r, err);
	if (r < 0)
		return r;
	hutch_fault_point("create:cgroup-made");
	x->st.n_cgroup_made = cg_made_parents(x->cg, &x->st.cgroup_made);
	if (x->st.n_cgroup_made) /* so that delete removes them too */
		TRY(rt_state_save(x->dirfd, &x->st, err));
	/* Rootless, a device filter can be neither had (v2's is a BPF program, which needs
	 * host capabilities) nor needed: without CAP_MKNOD in the host's namespace no device
	 * node can be made, and the ones bound in keep their host permissions (as runc). */
	if (hutch_rootless())
		x->spec->resources.n_devices = 0;
	if (x->spec->has_resources)
		TRY(cg_apply(x->cg, &x->spec->resources, err));
	return 0;
}

/* The console socket, exec.fifo, the sync pair and the exec trampoline's memfd. */
static int open_channels(struct create_ctx *x, struct hutch_err *err)
{
	if (x->o->console_socket) {
		x->console_fd = rt_connect_console(x->o->console_socket, err);
		if (x->console_fd < 0)
			return x->console_fd;
	}
	if (mkfifoat(x->dirfd, "exec.fifo", 0600) < 0)
		return hutch_fail_errno(err, errno, "create exec.fifo");
	/* The child opens it after switching to the process's user: let that user (as the
	 * host sees it) open it, as runc does. */
	uid_t uid =
		host_id(x->spec->uid_mappings, x->spec->n_uid_mappings, x->spec->process.user.uid);
	gid_t gid =
		host_id(x->spec->gid_mappings, x->spec->n_gid_mappings, x->spec->process.user.gid);
	if ((uid || gid) && fchownat(x->dirfd, "exec.fifo", uid, gid, AT_SYMLINK_NOFOLLOW) < 0)
		return hutch_fail_errno(err, errno, "chown exec.fifo");
	x->fifo_fd = openat(x->dirfd, "exec.fifo", O_PATH | O_CLOEXEC);
	if (x->fifo_fd < 0)
		return hutch_fail_errno(err, errno, "open exec.fifo");
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, x->sync) < 0)
		return hutch_fail_errno(err, errno, "sync socketpair");
	x->tramp_fd = rt_trampoline_open(err);
	return x->tramp_fd < 0 ? x->tramp_fd : 0;
}

static int plan_memcg(struct create_ctx *x, struct hutch_err *err)
{
	/* The init joins the cgroup holding memory itself, just before execve, so that hutch's
	 * setup (~160 KiB of copied pages and mount and namespace objects) is not charged to
	 * the container and a tiny limit still starts. Always on v1, where joining is a write
	 * either way. On v2 only under a tiny limit: there the init is otherwise born into its
	 * cgroup (CLONE_INTO_CGROUP), and a migration costs a grace period (~10 ms) of the
	 * cgroup-wide lock that a birth does not. On v1 the init joins the other hierarchies
	 * itself too, as soon as GO comes, through "tasks", which skips that lock (cg.h); a
	 * hybrid host's cgroup2 one it is born into. */
	x->memcg_fd = -ENOENT;
	/* A v1 systemd scope's directories, made before GO; systemd puts the init in its
	 * memory cgroup at once. */
	const struct cg *cg = x->cg ? x->cg : x->scope_cg;
	if (!cg)
		return 0;
	if (x->cg && (cg_dirfd(x->cg) < 0 || cg_memory_max(x->cg) < LATE_JOIN_BELOW))
		x->memcg_fd = cg_open_self(x->cg, "memory", err);
	if (x->memcg_fd < 0 && x->memcg_fd != -ENOENT)
		return x->memcg_fd;
	if (x->cg && cg_dirfd(x->cg) < 0)
		TRY(cg_join_open(x->cg, "memory", &x->join, err));
	const char *names[16], *dirs[16];
	x->n_cgroup_dirs = cg_hierarchy_dirs(cg, names, dirs, ARRAY_SIZE(names) - 1);
	for (size_t i = 0; i < x->n_cgroup_dirs; i++)
		x->cgroup_dirs[i] = (struct ns_cgroup_dir){ names[i], dirs[i] };
	const char *unified = cg_unified_dir(cg); /* hybrid: bound as the v1 ones are */
	if (unified)
		x->cgroup_dirs[x->n_cgroup_dirs++] = (struct ns_cgroup_dir){ "", unified };
	return 0;
}

/* Namespaces clone creates directly. A joined user namespace must own the new ones, so in
 * that case the child unshares them after setns (only pid and user go through clone). The
 * cgroup namespace is always unshared by the child once it is in its cgroup: clone3 makes
 * namespaces before CLONE_INTO_CGROUP moves it, which would root the namespace too high. */
static uint64_t clone_flags(struct create_ctx *x)
{
	static const int all[] = { CLONE_NEWPID, CLONE_NEWNET,	CLONE_NEWNS,	 CLONE_NEWIPC,
				   CLONE_NEWUTS, CLONE_NEWUSER, CLONE_NEWCGROUP, CLONE_NEWTIME };
	for (size_t i = 0; i < ARRAY_SIZE(all); i++)
		if (rt_spec_new_ns(x->spec, all[i]))
			x->new_ns |= (uint32_t)all[i];
	if (x->spec->has_time_offsets) /* the child makes it, to write them first */
		x->new_ns &= ~(uint32_t)CLONE_NEWTIME;
	const struct rt_namespace *u = rt_spec_ns(x->spec, CLONE_NEWUSER);
	if (u && u->path)
		return x->new_ns & CLONE_NEWPID;
	return x->new_ns & ~(uint64_t)CLONE_NEWCGROUP;
}

/* A pid namespace given by path: an fd for rt_clone() to join around the clone. */
static int pid_ns_fd(const struct rt_spec *s, int *fd, struct hutch_err *err)
{
	const struct rt_namespace *p = rt_spec_ns(s, CLONE_NEWPID);
	*fd = -1;
	if (!p || !p->path)
		return 0;
	*fd = open(p->path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0)
		return hutch_fail_errno(err, errno, "linux.namespaces: pid %s", p->path);
	return 0;
}

static int spawn(struct create_ctx *x, struct hutch_err *err)
{
	_cleanup_close_ int pidns = -1;
	TRY(pid_ns_fd(x->spec, &pidns, err));
	/* v2, unless joining late; a hybrid host's cgroup2 hierarchy */
	int born_in = !x->cg		    ? -1
		      : cg_dirfd(x->cg) < 0 ? cg_clone_fd(x->cg)
		      : x->memcg_fd >= 0    ? -1
					    : cg_dirfd(x->cg);
	uint64_t flags = clone_flags(x);
	/* A new user namespace copies our soft limits, which then bound what it queues of its
	 * owner's: the container's own, for the clone (ns-misc.c). */
	struct ns_userns_limits saved = { 0 };
	if (flags & CLONE_NEWUSER)
		TRY(ns_userns_limits_lower(x->spec->process.rlimits, x->spec->process.n_rlimits,
					   &saved, err));
	pid_t pid = rt_clone(flags, born_in, pidns, &x->pidfd, err);
	if (pid != 0)
		ns_userns_limits_restore(&saved);
	if (pid < 0)
		return pid;
	if (pid == 0) {
		close(x->sync[0]);
		struct rt_child c = {
			.spec = x->spec,
			.opts = x->o,
			.sync_fd = x->sync[1],
			.fifo_fd = x->fifo_fd,
			.console_fd = x->console_fd,
			.tramp_fd = x->tramp_fd,
			.filter = x->filter,
			.filter_follows = x->filter_follows,
			.send_pty = x->o->foreground && x->spec->process.terminal,
			.hooks_sync = parent_hooks(x->spec),
			.new_ns = x->new_ns,
			.memcg_fd = x->memcg_fd,
			.join = &x->join,
			.late_cgroupns = x->memcg_fd >= 0 && (x->new_ns & CLONE_NEWCGROUP),
			.cgroup_dirs = x->cgroup_dirs,
			.n_cgroup_dirs = x->n_cgroup_dirs,
			.tree_fds = x->tree_fds,
		};
		rt_child_main(&c);
	}
	x->pid = pid;
	cg_join_close(&x->join); /* the init's now */
	close(x->sync[1]);
	x->sync[1] = -1;
	hutch_fault_point("create:cloned");
	return 0;
}

/* prestart, then createRuntime. prestart's state says "created", as runtime-tools checks
 * (prestart was once part of start); createRuntime's "creating", as the spec's lifecycle. */
static int run_parent_hooks(struct create_ctx *x, struct hutch_err *err)
{
	size_t len;
	_cleanup_free_ char *created = rt_state_json(&x->st, RT_CREATED, &len);
	_cleanup_free_ char *creating = rt_state_json(&x->st, RT_CREATING, &len);
	TRY(rt_hooks_run(&x->spec->hooks[RT_HOOK_PRESTART], hook_names[RT_HOOK_PRESTART], created,
			 err));
	return rt_hooks_run(&x->spec->hooks[RT_HOOK_CREATE_RUNTIME],
			    hook_names[RT_HOOK_CREATE_RUNTIME], creating, err);
}

/* The seccomp notify fd goes to linux.seccomp.listenerPath with the container's state. */
static int pass_notify_fd(struct create_ctx *x, struct hutch_err *err)
{
	_cleanup_close_ int fd = ns_recv_fd(x->sync[0], err);
	if (fd < 0)
		return fd;
	size_t len;
	_cleanup_free_ char *state = rt_state_json(&x->st, RT_CREATING, &len);
	return sc_send_to_listener(x->spec->seccomp.listener_path, fd, 0, state,
				   x->spec->seccomp.listener_metadata, err);
}

/* Compiles the filter now, during the init's setup. An init that has already failed cannot
 * take it (EPIPE): its own error, waiting on the socket, is the one to report. */
static int send_filter(struct create_ctx *x, struct hutch_err *err)
{
	TRY(rt_spec_compile_seccomp(x->spec, &x->filter, err));
	int r = rt_sync_send_filter(x->sync[0], x->filter, err);
	if (r == -EPIPE || r == -ECONNRESET)
		return 0;
	return r;
}

/* The init's /proc/PID/timens_offsets, for it to write once it has made its time namespace
 * (see ns-time.c). An init that has already failed cannot take it: its error counts. */
static int send_timens_fd(struct create_ctx *x, struct hutch_err *err)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/timens_offsets", (int)x->pid);
	_cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return hutch_fail_errno(err, errno, "linux.timeOffsets: open %s", path);
	int r = ns_send_fd(x->sync[0], fd, "timens_offsets", err);
	return r == -EPIPE || r == -ECONNRESET ? 0 : r;
}

/* The state for the container's hooks, as a memfd: a packet of it could not exceed the
 * socket's send buffer (~208 KiB), nor a fixed buffer of the child's. */
static int send_state(struct create_ctx *x, struct hutch_err *err)
{
	size_t len;
	_cleanup_free_ char *state = rt_state_json(&x->st, RT_CREATING, &len);
	_cleanup_close_ int fd = memfd_create("hutch-state", MFD_CLOEXEC);
	if (fd < 0)
		return hutch_fail_errno(err, errno, "the hooks' state: memfd_create");
	int r = hutch_write_all(fd, state, len);
	if (r < 0)
		return hutch_fail_errno(err, -r, "the hooks' state: write");
	return ns_send_fd(x->sync[0], fd, "the hooks' state", err);
}

/* The parent's side of the conversation with the child, until it is ready to exec. */
/* Id maps, the systemd scope, the OOM score and the state: then GO. */
static int configure(struct create_ctx *x, struct hutch_err *err)
{
	const struct rt_spec *s = x->spec;
	if (x->new_ns & CLONE_NEWUSER)
		TRY(ns_write_idmaps(x->pid, s->uid_mappings, s->n_uid_mappings, s->gid_mappings,
				    s->n_gid_mappings, err));
	hutch_phase("idmaps");
	if (x->scope.unit)
		TRY(start_scope(x, err));
	if (s->process.has_oom_score_adj)
		TRY(ns_set_oom_score_adj(x->pid, s->process.oom_score_adj, err));
	TRY(hutch_proc_stat(x->pid, &x->st.start_time, NULL));
	x->st.pid = x->pid;
	TRY(rt_state_save(x->dirfd, &x->st, err)); /* a killed create can now be cleaned up */
	TRY(rt_sync_send(x->sync[0], RT_SYNC_GO, NULL, err));
	hutch_fault_point("create:go");
	if (s->hooks[RT_HOOK_CREATE_CONTAINER].n || s->hooks[RT_HOOK_START_CONTAINER].n)
		TRY(send_state(x, err));
	if (s->has_time_offsets)
		TRY(send_timens_fd(x, err));
	if (x->filter_follows)
		TRY(send_filter(x, err));
	if (x->o->after_go) /* overlaps the child's mounts: it needs only the namespaces */
		TRY(x->o->after_go(x->pid, x->o->after_go_arg, err));
	return 0;
}

/* What the child asks for mid-setup (hooks, the pty, a seccomp listener) until READY. */
static int converse(struct create_ctx *x, struct hutch_err *err)
{
	for (;;) {
		struct rt_sync_msg m;
		TRY(rt_sync_recv(x->sync[0], &m, err));
		switch (m.type) {
		case RT_SYNC_HOOKS:
			TRY(run_parent_hooks(x, err));
			TRY(rt_sync_send(x->sync[0], RT_SYNC_HOOKS_DONE, NULL, err));
			break;
		case RT_SYNC_PTY:
			x->pty_master = ns_recv_fd(x->sync[0], err);
			if (x->pty_master < 0)
				return x->pty_master;
			break;
		case RT_SYNC_SECCOMP:
			TRY(pass_notify_fd(x, err));
			break;
		case RT_SYNC_READY:
			hutch_fault_point("create:ready");
			return 0;
		case RT_SYNC_ERROR:
			*err = m.err;
			return -(m.err.code ? m.err.code : EINVAL);
		default:
			return hutch_fail(err, EPROTO, "sync: unexpected message %u", m.type);
		}
	}
}

/* Resolved as a caller's path (no link followed where another user could have put one: a
 * container may write the directories it is given), and written in the directory found. */
int rt_write_pid_file(const char *path, pid_t pid, struct hutch_err *err)
{
	char buf[32];
	int n = snprintf(buf, sizeof(buf), "%d", (int)pid);
	_cleanup_free_ char *name = NULL;
	_cleanup_close_ int dirfd = hutch_chase("--pid-file", path, HUTCH_CHASE_PARENT, &name, err);
	if (dirfd < 0)
		return dirfd;
	int r = hutch_write_atomic_at(dirfd, name, buf, (size_t)n, 0644, err);
	return r < 0 ? hutch_err_prefix(err, "--pid-file %s: ", path) : 0;
}

static void rollback(struct create_ctx *x)
{
	struct hutch_err ignored = { 0 };
	if (x->pid > 0) {
		kill(x->pid, SIGKILL);
		waitpid(x->pid, NULL, 0);
	}
	if (x->cg)
		cg_destroy(x->cg, &ignored);
	if (x->st.systemd_unit)
		cg_sd_stop(x->st.systemd_unit, &ignored);
	ns_undo_host_rootfs(x->spec->rootfs, x->st.rootfs_mnt_id, &ignored);
	if (x->dirfd >= 0)
		rt_state_remove(x->g->root, x->o->id, x->dirfd, &ignored);
}

static void ctx_free(struct create_ctx *x)
{
	x->st.annotations = NULL; /* borrowed from the spec */
	x->st.n_annotations = 0;
	rt_state_clear(&x->st);
	free(x->config_text);
	cg_sd_unit_clear(&x->scope);
	cg_free(x->scope_cg);
	cg_join_close(&x->join);
	cg_free(x->cg);
	sc_filter_free(x->filter);
	for (size_t i = 0; x->tree_fds && i < x->spec->n_mounts; i++)
		if (x->tree_fds[i] >= 0)
			close(x->tree_fds[i]);
	free(x->tree_fds);
	if (!x->o->spec)
		rt_spec_free(x->spec);
	int fds[] = { x->dirfd,	  x->sync[0],  x->sync[1], x->console_fd,
		      x->fifo_fd, x->memcg_fd, x->tramp_fd };
	for (size_t i = 0; i < ARRAY_SIZE(fds); i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

static int finish(struct create_ctx *x, struct hutch_err *err)
{
	if (x->o->pid_file)
		TRY(rt_write_pid_file(x->o->pid_file, x->pid, err));
	x->st.creating = false;
	return rt_state_save(x->dirfd, &x->st, err);
}

/* The parent's recipe, in this order; a step that fails undoes every earlier one
 * (rollback), so a failed create leaves no state dir, cgroup, process or fd. */
static int (*const create_steps[])(struct create_ctx *, struct hutch_err *) = {
	check_spec,    /* before anything exists */
	plan_seccomp,  /* compiled now, or sent while the child sets up */
	make_state,    /* the id's lock; from here on rollback has something to undo */
	make_cgroup,   /* named in a saved state first: delete --force finds a half-made one */
	open_channels, /* console, exec.fifo, sync pair, trampoline */
	make_trees,    /* bind sources, with the host's privileges, before the user ns */
	plan_memcg,    /* join memory late (setup not charged) or be born into the cgroup */
	spawn,	       /* clone3 into the new namespaces */
	configure,     /* id maps, cgroup, OOM score, state; GO */
	converse,      /* hooks, pty, seccomp listener, until READY */
	finish,	       /* pid file, then the final state */
};
/* Each step's name in --debug's phase lines, in create_steps's order. */
static const char *const create_step_names[] = { "check",      "seccomp_plan", "lock",
						 "cgroup",     "channels",     "trees",
						 "memcg_plan", "clone",	       "configure",
						 "converse",   "finish" };
_Static_assert(ARRAY_SIZE(create_step_names) == ARRAY_SIZE(create_steps), "a name per step");

int rt_container_create(struct rt_global *g, const struct rt_create_opts *o, struct rt_created *out,
			struct hutch_err *err)
{
	struct create_ctx x = { .g = g,
				.o = o,
				.dirfd = -1,
				.sync = { -1, -1 },
				.console_fd = -1,
				.fifo_fd = -1,
				.memcg_fd = -1,
				.tramp_fd = -1,
				.pidfd = -1,
				.pty_master = -1 };
	int r = 0;
	if (!o->spec && o->config) /* relative to the cwd, as crun; the root to the bundle */
		r = rt_spec_load_at(AT_FDCWD, o->config, o->bundle, &x.config_text, &x.spec, err);
	else if (!o->spec)
		r = rt_spec_load(o->bundle, &x.spec, err);
	if (r < 0)
		return r;
	if (o->spec)
		x.spec = o->spec;
	hutch_phase("spec");
	for (size_t i = 0; r >= 0 && i < ARRAY_SIZE(create_steps); i++) {
		r = create_steps[i](&x, err);
		hutch_phase(create_step_names[i]);
	}
	if (r < 0) {
		rollback(&x);
	} else {
		out->pid = x.pid;
		out->pidfd = steal_fd(x.pidfd);
		out->pty_master = steal_fd(x.pty_master);
		if (o->keep_lock)
			out->dirfd = steal_fd(x.dirfd);
		if (o->keep_cg)
			out->cg = steal_ptr(x.cg);
	}
	if (x.pidfd >= 0)
		close(x.pidfd);
	if (x.pty_master >= 0)
		close(x.pty_master);
	ctx_free(&x);
	return r < 0 ? r : 0;
}
