// SPDX-License-Identifier: Apache-2.0
/*
 * `hutch sandbox exec|ls|stop|rm`: what is done to a long-lived sandbox by its --name. exec
 * goes through the OCI exec path (rt-exec.c) with the spec the sandbox wrote to its state
 * dir, so the process gets the sandbox's user, capabilities, no_new_privs, seccomp filter,
 * cgroup and namespaces. stop and rm signal the sandbox and wait for the hutch that runs it
 * (its supervisor), which removes everything and writes the report as it ends.
 */
#include "rt-sandbox.h"
#include "hutch-ids.h"
#include "rt-sandbox-named.h"
#include "rt-sandbox-delegate.h"
#include "rt-json.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/syscall.h>

#define GONE_MS 30000 /* how long stop and rm wait for the supervisor after SIGKILL */

/* A running named sandbox: its id, record and the exec target (pid, cgroup, spec). */
struct named {
	const char *name;
	char id[64];
	struct rt_sb_record rec;
	struct rt_exec_target t;
	struct rt_sb_dl_ref dl; /* --runtime runc|crun|runsc: runtime[0] set */
	bool running;
};

static void named_free(struct named *n)
{
	rt_sb_record_clear(&n->rec);
	rt_exec_target_free(&n->t);
	rt_sb_session_ref_free(&n->dl);
}

/* A record whose state is gone, or names another sandbox (a pid reused), is no sandbox. */
static int open_named(const char *name, struct named *n, struct hutch_err *err)
{
	struct rt_global g = { .root = RT_SB_ROOT };
	struct hutch_err e = { 0 };
	n->name = name;
	TRY(rt_sb_name_resolve(name, n->id, sizeof(n->id), err));
	if (rt_sb_read_record(n->id, &n->rec) < 0 || !n->rec.name || strcmp(n->rec.name, name))
		return hutch_fail(err, ENOENT, "sandbox %s: no such sandbox", name);
	if (rt_sb_session_load(n->id, &n->dl) == 0) { /* its runtime's: rt-sandbox-delegate.h */
		n->dl.supervisor_start = n->rec.supervisor_start;
		n->running =
			n->dl.alive && rt_pid_alive(n->rec.supervisor, n->rec.supervisor_start);
		return 0;
	}
	int r = rt_exec_target_open(&g, n->id, true, &n->t, &e);
	if (r == -ENOENT)
		return hutch_fail(err, ENOENT, "sandbox %s: no such sandbox", name);
	n->running = r >= 0;
	return 0;
}

/* ---- exec ---- */

struct exec_flags {
	bool tty;
	struct rt_strv env;
	const char *cwd;
};

#define EFLAG(field) offsetof(struct exec_flags, field), NULL
static const struct rt_flag exec_table[] = {
	{ "tty", 't', RT_FLAG_BOOL, "allocate a pty and relay this terminal", EFLAG(tty) },
	{ "env", 'e', RT_FLAG_STRV, "KEY=VALUE in the environment (repeatable)", EFLAG(env) },
	{ "cwd", 0, RT_FLAG_STR, "working directory inside", EFLAG(cwd) },
};
static const struct rt_flags exec_def = RT_FLAGS(exec_table, 0);

/* The sandbox's own process (user, capabilities, rlimits, env), running cmd instead. */
static int exec_process(struct named *n, const struct exec_flags *f, char **cmd,
			struct rt_process *p, struct hutch_err *err)
{
	TRY(rt_exec_process_from_spec(n->t.spec, cmd, f->tty, f->cwd, &f->env, p, err));
	rt_process_skip_ambient(p);
	return 0;
}

/* A rootless sandbox's PID 1 is hutch's init, which never execs: its memory belongs to the
 * host's user namespace, so only host root may reach its namespaces (and keeping it so keeps
 * hutch's binary out of the sandbox's reach through /proc/1/exe). */
static int refuse_rootless(const struct named *n, struct hutch_err *err)
{
	if (!hutch_rootless())
		return 0;
	return hutch_fail(err, ENOTSUP,
			  "sandbox exec %s: not supported rootless (the sandbox's init may be "
			  "joined by host root only)",
			  n->name);
}

/* What the command may have set with root inside is cleared before exec returns, while the
 * sandbox runs on (the walk is made for that: base/base-setid.c); the count goes to the
 * sandbox's state, for its report. */
static void clear_setid(const struct named *n)
{
	char dir[512];
	snprintf(dir, sizeof(dir), "%s/%s", RT_SB_ROOT, n->id);
	struct rt_sb_setid_counts c = { 0 };
	if (rt_sb_setid_clear(&n->rec.setid, &c))
		rt_sb_setid_note(dir, &c);
}

/* Through the sandbox's runtime, whose exec gives the process the container's seccomp,
 * cgroup and namespaces. */
static int exec_delegated(struct named *n, const struct exec_flags *f, char **cmd,
			  struct hutch_err *err)
{
	TRY(refuse_rootless(n, err));
	int r = rt_sb_session_exec(&n->dl, n->id, n->rec.supervisor, f->tty, f->cwd, &f->env, cmd,
				   err);
	clear_setid(n);
	return r;
}

static int cmd_exec(int argc, char **argv, struct hutch_err *err)
{
	struct exec_flags f = { 0 };
	_cleanup_(rt_process_free) struct rt_process p = { 0 };
	struct named n = { 0 };
	bool help = false;
	int i = rt_parse_flags(&exec_def, argc, argv, &f, &help, err), r = 0;
	if (i >= 0 && help) {
		dprintf(1, "usage: hutch sandbox exec [OPTIONS] NAME -- COMMAND [ARGS...]\n\n");
		rt_flags_help(1, &exec_def, 16, RT_HELP_SHORT);
		goto out;
	}
	if (i >= 0 && i + 1 < argc && !strcmp(argv[i + 1], "--"))
		memmove(&argv[i + 1], &argv[i + 2], (size_t)(argc - i - 1) * sizeof(char *)),
			argc--;
	if (i >= 0 && i + 1 >= argc)
		i = hutch_fail(err, EINVAL,
			       "sandbox exec: usage: hutch sandbox exec [OPTIONS] NAME -- COMMAND");
	r = i < 0 ? i : open_named(argv[i], &n, err);
	hutch_phase("lookup"); /* the session's state and spec */
	if (r >= 0 && !n.running)
		r = hutch_fail(err, ESRCH, "sandbox %s: not running", n.name);
	if (r >= 0 && n.dl.runtime[0]) {
		r = exec_delegated(&n, &f, &argv[i + 1], err);
		goto out;
	}
	if (r >= 0)
		r = exec_process(&n, &f, &argv[i + 1], &p, err);
	if (r >= 0)
		r = refuse_rootless(&n, err);
	if (r >= 0) {
		struct rt_exec_opts o = { .die_with_parent = true };
		r = rt_exec_run(&n.t, &p, &o, err);
		clear_setid(&n); /* whether or not the command ran: it may have, in part */
		hutch_phase("setid_clear");
	}
out:
	rt_flags_free(&exec_def, &f);
	named_free(&n);
	return r;
}

/* ---- ls ---- */

struct entry {
	char *id, *name, *image, *created;
	pid_t pid;
	const char *status;
};

static int load_delegated(const char *id, struct rt_sb_dl_ref *dl, struct entry *v)
{
	struct rt_sb_record rec = { 0 };
	rt_sb_read_record(id, &rec);
	*v = (struct entry){ .id = hutch_xstrdup(id),
			     .name = steal_ptr(rec.name),
			     .image = steal_ptr(rec.image),
			     .created = steal_ptr(dl->created),
			     .pid = dl->alive ? dl->pid : 0,
			     .status = !dl->alive ? "stopped"
				       : dl->pid  ? "running"
						  : "creating" };
	rt_sb_record_clear(&rec);
	return 0;
}

static int load_entry(const char *id, struct entry *v)
{
	struct rt_state st = { 0 };
	struct rt_sb_record rec = { 0 };
	struct hutch_err e = { 0 };
	_cleanup_close_ int dfd = -1;
	struct rt_sb_dl_ref dl;
	if (rt_sb_session_load(id, &dl) == 0) /* a delegated session's: no state.json */
		return load_delegated(id, &dl, v);
	/* One deleted meanwhile, or still being created, is left out. */
	if (rt_state_open(RT_SB_ROOT, id, &dfd, &e) < 0 || rt_state_load(dfd, id, &st, &e) < 0) {
		rt_state_clear(&st);
		return -ENOENT;
	}
	enum rt_status s = rt_state_status(dfd, &st);
	rt_sb_read_record(id, &rec);
	*v = (struct entry){ .id = hutch_xstrdup(id),
			     .name = steal_ptr(rec.name),
			     .image = steal_ptr(rec.image),
			     .created = steal_ptr(st.created),
			     .pid = s == RT_STOPPED ? 0 : st.pid,
			     .status = rt_status_name(s) };
	rt_sb_record_clear(&rec);
	rt_state_clear(&st);
	return 0;
}

static void print_json(const struct entry *v, size_t n)
{
	_cleanup_gen_ yajl_gen g = yajl_gen_alloc(NULL);
	yajl_gen_array_open(g);
	for (size_t i = 0; i < n; i++) {
		yajl_gen_map_open(g);
		hutch_json_gen_kv(g, "name", v[i].name);
		hutch_json_gen_kv(g, "id", v[i].id);
		hutch_json_gen_int(g, "pid", v[i].pid);
		hutch_json_gen_kv(g, "status", v[i].status);
		hutch_json_gen_kv(g, "created", v[i].created);
		hutch_json_gen_kv(g, "image", v[i].image);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	size_t len;
	_cleanup_free_ char *text = hutch_json_gen_finish(g, &len);
	printf("%s\n", text);
}

static void print_table(const struct entry *v, size_t n)
{
	printf("%-20s %-12s %-8s %-8s %-30s %s\n", "NAME", "ID", "PID", "STATUS", "CREATED",
	       "IMAGE");
	for (size_t i = 0; i < n; i++)
		printf("%-20s %-12s %-8d %-8s %-30s %s\n", v[i].name ? v[i].name : "-", v[i].id,
		       (int)v[i].pid, v[i].status, v[i].created ? v[i].created : "-",
		       v[i].image ? v[i].image : "-");
}

struct ls_flags {
	const char *format;
};
static const struct rt_flag ls_table[] = {
	{ "format", 'f', RT_FLAG_STR, "table (default) or json", offsetof(struct ls_flags, format),
	  NULL },
};
static const struct rt_flags ls_def = RT_FLAGS(ls_table, 0);

static int cmd_ls(int argc, char **argv, struct hutch_err *err)
{
	struct ls_flags f = { 0 };
	bool help = false;
	_cleanup_strv_ char **ids = NULL;
	int i = rt_parse_flags(&ls_def, argc, argv, &f, &help, err);
	if (i < 0)
		return i;
	if (help) {
		dprintf(1, "usage: hutch sandbox ls [--format table|json]\n\n");
		rt_flags_help(1, &ls_def, 16, RT_HELP_SHORT);
		return 0;
	}
	if (i < argc)
		return hutch_fail(err, EINVAL, "sandbox ls: takes no arguments");
	if (f.format && strcmp(f.format, "table") && strcmp(f.format, "json"))
		return hutch_fail(err, EINVAL, "--format: expected table or json, got %s",
				  f.format);
	int n = rt_state_list_ids(RT_SB_ROOT, &ids, err);
	if (n == -ENOENT)
		n = 0;
	if (n < 0)
		return n;
	struct entry *v = hutch_xcalloc((size_t)n + 1, sizeof(*v));
	size_t got = 0;
	for (int k = 0; k < n; k++)
		if (load_entry(ids[k], &v[got]) == 0)
			got++;
	if (f.format && !strcmp(f.format, "json"))
		print_json(v, got);
	else
		print_table(v, got);
	for (size_t k = 0; k < got; k++) {
		free(v[k].id);
		free(v[k].name);
		free(v[k].image);
		free(v[k].created);
	}
	free(v);
	return 0;
}

/* ---- stop and rm ---- */

static bool wait_fd(int fd, int64_t ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int r;
	while ((r = poll(&p, 1, ms > INT32_MAX ? INT32_MAX : (int)ms)) < 0 && errno == EINTR)
		;
	return r > 0;
}

static void kill_tree(struct named *n, int init_pidfd)
{
	struct cg *cg = NULL;
	struct hutch_err e = { 0 };
	if (init_pidfd >= 0)
		syscall(SYS_pidfd_send_signal, init_pidfd, SIGKILL, NULL, 0);
	if (rt_open_cgroup(n->t.cgroup_path, n->t.cgroup_paths, n->t.n_cgroup_paths, &cg, &e) >= 0)
		cg_signal_all(cg, SIGKILL, &e);
	cg_free(cg);
}

/* Tells the supervisor, whose report then says "stopped", that the end was asked for. */
static void mark_stopped(const struct named *n)
{
	struct hutch_err e = { 0 };
	_cleanup_close_ int root = rt_sb_subdir("state", false, &e);
	_cleanup_close_ int dir =
		root >= 0 ? openat(root, n->id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
			  : -1;
	_cleanup_close_ _unused_ int fd =
		dir >= 0 ? openat(dir, RT_SB_STOPPED,
				  O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600)
			 : -1;
}

/* Through its runtime: kill TERM, then kill --all KILL after grace_ms (< 0: at once); then
 * until its supervisor, which deletes the container and removes the rest, is gone. */
static int end_delegated(struct named *n, int64_t grace_ms, struct hutch_err *err)
{
	_cleanup_close_ int sup = (int)syscall(SYS_pidfd_open, n->rec.supervisor, 0);
	struct hutch_err e = { 0 };
	pid_t pid = n->rec.supervisor;
	if (!n->running) { /* its hutch was killed: its keeper removed the rest */
		struct rt_global g = { .root = RT_SB_ROOT };
		rt_container_delete(&g, n->id, true, &e);
		rt_sb_names_sweep();
		return 0;
	}
	if (sup < 0)
		return hutch_fail_errno(err, errno, "sandbox %s: its hutch (pid %d)", n->name,
					(int)pid);
	mark_stopped(n);
	if (grace_ms >= 0) {
		rt_sb_session_signal(&n->dl, n->id, pid, "TERM", &e);
		if (!wait_fd(sup, grace_ms))
			rt_sb_session_signal(&n->dl, n->id, pid, "KILL", &e);
	} else {
		rt_sb_session_signal(&n->dl, n->id, pid, "KILL", &e);
	}
	if (!wait_fd(sup, GONE_MS))
		return hutch_fail(err, ETIMEDOUT, "sandbox %s: its hutch (pid %d) did not end",
				  n->name, (int)pid);
	return 0;
}

/* The helper that deletes a native sandbox once its supervisor has returned holds the owner
 * lock of its state until the state is gone (rt-sandbox.c, delete_later): up to GONE_MS. */
static void wait_deleted(const struct named *n)
{
	struct hutch_err e = { 0 };
	char name[96];
	snprintf(name, sizeof(name), "%s/owner.lock", n->id);
	_cleanup_close_ int root = rt_sb_subdir("state", false, &e);
	_cleanup_close_ int fd =
		root < 0 ? -1 : openat(root, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || !rt_regular(fd))
		return;
	for (int i = 0; i < GONE_MS / 5 && flock(fd, LOCK_SH | LOCK_NB) < 0 && errno == EWOULDBLOCK;
	     i++)
		usleep(5000);
}

/* SIGTERM to the command (through its init) and SIGKILL of the tree after grace_ms (< 0: at
 * once), then until its supervisor, which removes it, is gone (and its teardown helper). */
static int end_sandbox(struct named *n, int64_t grace_ms, struct hutch_err *err)
{
	if (n->dl.runtime[0])
		return end_delegated(n, grace_ms, err);
	_cleanup_close_ int sup = (int)syscall(SYS_pidfd_open, n->rec.supervisor, 0);
	_cleanup_close_ int init = -1;
	/* Checked once the pidfd pins the pid: a process that took it since is not its hutch. */
	if (sup >= 0 && !rt_pid_alive(n->rec.supervisor, n->rec.supervisor_start))
		close(steal_fd(sup));
	if (n->running) {
		init = (int)syscall(SYS_pidfd_open, n->t.pid, 0);
		if (init >= 0 && !rt_pid_alive(n->t.pid, n->t.start_time))
			close(steal_fd(init));
	}
	if (n->running)
		mark_stopped(n);
	if (init >= 0 && grace_ms >= 0) {
		syscall(SYS_pidfd_send_signal, init, SIGTERM, NULL, 0);
		if (!wait_fd(init, grace_ms))
			kill_tree(n, init);
	} else if (n->running) {
		kill_tree(n, init);
	}
	if (sup >= 0 && !wait_fd(sup, GONE_MS))
		return hutch_fail(err, ETIMEDOUT, "sandbox %s: its hutch (pid %d) did not end",
				  n->name, (int)n->rec.supervisor);
	if (sup >= 0)
		wait_deleted(n);
	if (sup < 0) { /* its hutch was killed: what it left is removed here */
		struct rt_global g = { .root = RT_SB_ROOT };
		struct hutch_err e = { 0 };
		kill_tree(n, -1);
		rt_container_delete(&g, n->id, true, &e);
		rt_sb_names_sweep();
		/* its cgroup went with its state */
		rt_sb_runs_prune(n->rec.supervisor, NULL, NULL);
	}
	return 0;
}

struct stop_flags {
	const char *time;
	bool force;
};
static const struct rt_flag stop_table[] = {
	{ "time", 't', RT_FLAG_STR, "seconds from SIGTERM to SIGKILL (default: its --grace)",
	  offsetof(struct stop_flags, time), NULL },
};
static const struct rt_flag rm_table[] = {
	{ "force", 'f', RT_FLAG_BOOL, "kill a running sandbox first",
	  offsetof(struct stop_flags, force), NULL },
};
static const struct rt_flags stop_def = RT_FLAGS(stop_table, 0);
static const struct rt_flags rm_def = RT_FLAGS(rm_table, 0);

static int cmd_stop_rm(int argc, char **argv, struct hutch_err *err)
{
	bool rm = !strcmp(argv[0], "rm"), help = false;
	const struct rt_flags *def = rm ? &rm_def : &stop_def;
	struct stop_flags f = { 0 };
	struct named n = { 0 };
	double secs = -1;
	int i = rt_parse_flags(def, argc, argv, &f, &help, err);
	if (i < 0)
		return i;
	if (help) {
		dprintf(1, "usage: hutch sandbox %s\n\n",
			rm ? "rm [-f] NAME" : "stop [--time SECONDS] NAME");
		rt_flags_help(1, def, 16, RT_HELP_SHORT);
		return 0;
	}
	if (i + 1 != argc)
		return hutch_fail(err, EINVAL, "sandbox %s: expected one NAME", argv[0]);
	if (f.time && rt_sb_parse_seconds(f.time, &secs) < 0)
		return hutch_fail(err, EINVAL, "--time %s: expected seconds", f.time);
	int r = open_named(argv[i], &n, err);
	if (r >= 0 && rm && n.running && !f.force)
		r = hutch_fail(err, EBUSY, "sandbox %s: is running (stop it, or rm -f)", n.name);
	if (r >= 0)
		r = end_sandbox(&n,
				rm	    ? -1
				: secs >= 0 ? (int64_t)(secs * 1000)
					    : n.rec.grace_ms,
				err);
	named_free(&n);
	return r;
}

/* ---- the subcommands ---- */

static const struct {
	const char *name;
	int (*run)(int argc, char **argv, struct hutch_err *err);
	const char *usage;
} subcommands[] = {
	{ "exec", cmd_exec, "exec [-t] [-e K=V]... [--cwd DIR] NAME -- CMD [ARGS...]" },
	{ "ls", cmd_ls, "ls [--format table|json]" },
	{ "stop", cmd_stop_rm, "stop [--time SECONDS] NAME" },
	{ "rm", cmd_stop_rm, "rm [-f] NAME" },
};

bool rt_sb_is_subcommand(const char *arg)
{
	for (size_t i = 0; i < ARRAY_SIZE(subcommands); i++)
		if (!strcmp(arg, subcommands[i].name))
			return true;
	return false;
}

int rt_sb_subcommand(int argc, char **argv, struct hutch_err *err)
{
	for (size_t i = 0; i < ARRAY_SIZE(subcommands); i++)
		if (!strcmp(argv[0], subcommands[i].name))
			return subcommands[i].run(argc, argv, err);
	return hutch_fail(err, EINVAL, "sandbox %s: unknown subcommand", argv[0]);
}

void rt_sb_print_subcommands(int fd)
{
	dprintf(fd, "\nlong-lived sandboxes (--name NAME [--detach]; docs/sandbox-named.md):\n");
	for (size_t i = 0; i < ARRAY_SIZE(subcommands); i++)
		dprintf(fd, "  hutch sandbox %s\n", subcommands[i].usage);
}
