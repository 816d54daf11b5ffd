/* SPDX-License-Identifier: Apache-2.0 */
/*
 * runtime/: the CLI, container state and the setup recipe. This header is shared by the
 * runtime's own files only; the modules never include it.
 */
#ifndef HUTCH_RT_H
#define HUTCH_RT_H

#include "hutch-base.h"
#include "rt-spec.h"

#include <stdint.h>

#define RT_DEFAULT_ROOT "/run/hutch"

struct rt_global {
	const char *root;
	const char *log;
	bool log_json;
	bool debug;
	bool systemd_cgroup;
};

/* ---- command line (rt-cli.c) ---- */

struct rt_opt {
	const char *name; /* long name without "--" */
	char short_name;  /* 0 = none */
	bool has_arg;
	const char *help;
	const char *value; /* filled by rt_parse_opts: the argument, or "" for a flag */
};

/* Parses argv (argv[0] is the verb) into opts; returns the index of the first positional
 * argument. "--help"/"-h" set *help. Errors name the flag. */
int rt_parse_opts(int argc, char **argv, struct rt_opt *opts, size_t n_opts, bool *help,
		  struct hutch_err *err);
const char *rt_opt(const struct rt_opt *opts, size_t n, const char *name);
/* --preserve-fds N (absent: *out untouched). */
int rt_parse_preserve_fds(const char *v, int *out, struct hutch_err *err);
/* Exactly one positional: the container id, validated. */
int rt_one_id(int argc, char **argv, int first, const char **id, struct hutch_err *err);

struct rt_verb {
	const char *name;
	const char *summary;
	const char *usage; /* after "hutch VERB " */
	struct rt_opt *opts;
	size_t n_opts;
	int (*run)(struct rt_global *g, int argc, char **argv, int first, struct rt_opt *opts,
		   struct hutch_err *err);
	int fail_status; /* exit status when run fails; 0 means 1 */
	bool raw_args;	 /* the verb parses its own arguments */
	void (*help)(int fd);
};
const struct rt_verb *rt_verb_find(const char *name);
void rt_verb_help(const struct rt_verb *v, int fd);
void rt_main_help(int fd);
#define RT_VERB_FN(name)                                                                           \
	int rt_verb_##name(struct rt_global *g, int argc, char **argv, int first,                  \
			   struct rt_opt *opts, struct hutch_err *err)
RT_VERB_FN(spec);
RT_VERB_FN(create);
RT_VERB_FN(run);
RT_VERB_FN(start);
RT_VERB_FN(state);
RT_VERB_FN(kill);
RT_VERB_FN(delete);
RT_VERB_FN(list);
RT_VERB_FN(features);
extern const struct rt_verb rt_verbs[];
extern const size_t rt_n_verbs;

/* ---- state (rt-state.c) ---- */

enum rt_status { RT_CREATING, RT_CREATED, RT_RUNNING, RT_PAUSED, RT_STOPPED };
const char *rt_status_name(enum rt_status s);

struct rt_state {
	char *id;
	char *bundle, *rootfs, *created, *owner;
	pid_t pid;
	uint64_t start_time;
	char *cgroup_path; /* as given to cg_create */
	/* Where that put the cgroup in each hierarchy (cg_paths): what later verbs open. */
	struct cg_kv *cgroup_paths;
	size_t n_cgroup_paths;
	bool poststart; /* the bundle has poststart hooks (start re-reads it only then) */
	bool poststop;	/* the bundle has poststop hooks */
	bool creating;	/* create has not finished */
	struct cg_kv *annotations;
	size_t n_annotations;
};

/* The container's cgroup: at its saved paths, or (a state from before those) at path. */
int rt_open_cgroup(const char *path, const struct cg_kv *paths, size_t n, struct cg **out,
		   struct hutch_err *err);
static inline int rt_state_cgroup(const struct rt_state *st, struct cg **out, struct hutch_err *err)
{
	return rt_open_cgroup(st->cgroup_path, st->cgroup_paths, st->n_cgroup_paths, out, err);
}

int rt_validate_id(const char *id, struct hutch_err *err);
/* Creates <root>/<id> (EEXIST: "container ID already exists") and returns it locked. */
int rt_state_create_dir(const char *root, const char *id, int *dirfd, struct hutch_err *err);
/* Opens and locks <root>/<id> (ENOENT: "container ID does not exist"). */
int rt_state_open(const char *root, const char *id, int *dirfd, struct hutch_err *err);
int rt_state_save(int dirfd, const struct rt_state *st, struct hutch_err *err);
int rt_state_load(int dirfd, const char *id, struct rt_state *st, struct hutch_err *err);
void rt_state_clear(struct rt_state *st);
/* Removes the state directory's content and the directory itself. */
int rt_state_remove(const char *root, const char *id, int dirfd, struct hutch_err *err);
/* Live status: pid liveness (start time guards pid reuse; zombies are stopped) and exec.fifo
 * (created vs running). */
enum rt_status rt_state_status(int dirfd, const struct rt_state *st);
bool rt_pid_alive(pid_t pid, uint64_t start_time);
/* The OCI state document. */
char *rt_state_json(const struct rt_state *st, enum rt_status status, size_t *len);
int rt_state_list_ids(const char *root, char ***ids, struct hutch_err *err);

/* ---- hooks (rt-hooks.c) ---- */

int rt_hooks_run(const struct rt_hooks *hooks, const char *name, const char *state_json,
		 struct hutch_err *err);

/* ---- create / start / delete (rt-create.c, rt-child.c) ---- */

struct rt_create_opts {
	const char *id;
	const char *bundle;
	const char *pid_file;
	const char *console_socket;
	int preserve_fds;
	bool no_pivot;
	bool no_new_keyring;
	bool foreground; /* `run` without -d: the caller relays the terminal and waits */
	struct rt_spec
		*spec; /* already parsed (sandbox): used instead of the bundle's, not freed */
	int init_fd;   /* >= 0: PID 1 is hutch's init, reporting the command's status here */
};

struct rt_created {
	pid_t pid;
	int pidfd;
	int pty_master; /* foreground run with terminal: the master to relay, else -1 */
};

int rt_container_create(struct rt_global *g, const struct rt_create_opts *o, struct rt_created *out,
			struct hutch_err *err);
int rt_container_start(struct rt_global *g, const char *id, struct hutch_err *err);
int rt_container_delete(struct rt_global *g, const char *id, bool force, struct hutch_err *err);

/* ---- the child (rt-child.c): runs between clone and execve ---- */

struct rt_child {
	const struct rt_spec *spec;
	const struct rt_create_opts *opts;
	int sync_fd;
	int fifo_fd;	/* O_PATH of exec.fifo: opening it for writing blocks until start */
	int console_fd; /* connected --console-socket, or -1 */
	const struct sc_filter *filter;
	bool send_pty;	    /* foreground run: send the pty master to the parent */
	bool hooks_sync;    /* parent runs prestart/createRuntime hooks mid-setup */
	uint32_t new_ns;    /* CLONE_NEW* created for this container */
	int memcg_fd;	    /* v1: memory cgroup.procs, joined just before execve; else -1 */
	bool dropped;	    /* privileges already dropped (a seccomp listener needs it early) */
	bool late_cgroupns; /* v1: unshare the cgroup namespace after the memory cgroup join */
	const struct ns_cgroup_dir *cgroup_dirs; /* v1: bound in place of cgroup mounts */
	size_t n_cgroup_dirs;
};
__attribute__((noreturn)) void rt_child_main(struct rt_child *c);
/* Pieces of the child's setup that `exec` shares. */
int rt_enter_cwd(const char *cwd, struct hutch_err *err);
/* Finds args[0] in the process's PATH; errors say "no such file or directory" (status 127)
 * or "permission denied" (126), the texts container clients map to exit codes. */
int rt_find_executable(const struct rt_process *p, char *out, size_t len, struct hutch_err *err);
/* seccomp, capabilities and no_new_privs in the order that lets each one work. */
int rt_drop_privileges(const struct rt_process *p, const struct sc_filter *filter,
		       struct hutch_err *err);
/* The same; a filter with NOTIFY rules is loaded with a listener whose fd goes to notify_fd
 * (NULL: such a filter is refused). */
int rt_drop_privileges_fd(const struct rt_process *p, const struct sc_filter *filter,
			  int *notify_fd, struct hutch_err *err);
void rt_reset_signals(void);

/* ---- parent/child sync (rt-sync.c) ---- */

enum rt_sync_type {
	RT_SYNC_GO = 1, /* parent -> child: id maps written, cgroup joined */
	RT_SYNC_HOOKS,	/* child -> parent: mounts done; run prestart/createRuntime */
	RT_SYNC_HOOKS_DONE,
	RT_SYNC_PTY,	 /* child -> parent: the pty master follows as SCM_RIGHTS */
	RT_SYNC_READY,	 /* child -> parent: set up, waiting for start */
	RT_SYNC_ERROR,	 /* child -> parent: err follows */
	RT_SYNC_SECCOMP, /* child -> parent: the seccomp notify fd follows as SCM_RIGHTS */
};

struct rt_sync_msg {
	uint32_t type;
	struct hutch_err err;
};

int rt_sync_send(int fd, enum rt_sync_type type, const struct hutch_err *e, struct hutch_err *err);
int rt_sync_recv(int fd, struct rt_sync_msg *msg, struct hutch_err *err);
int rt_sync_expect(int fd, enum rt_sync_type type, struct hutch_err *err);
/* clone3 used as fork (0 in the child): the pidfd into *pidfd, born into cgroup cgfd (v2;
 * -1 none), and inside the pid namespace pidns_fd (a namespace fd or a pidfd; -1 none). */
pid_t rt_clone(uint64_t flags, int cgfd, int pidns_fd, int *pidfd, struct hutch_err *err);

/* ---- waiting and the terminal (rt-console.c) ---- */

/* Waits for a container's init: forwards signals, relays stdin/stdout <-> master when
 * master >= 0, and on timeout sends SIGTERM, then after grace calls kill_tree (or SIGKILLs
 * the init). Returns the exit code or 128+signal; status gets the raw wait status. */
struct rt_waiter {
	int pidfd;
	pid_t pid;
	int master;
	int64_t timeout_ms; /* 0 = none */
	int64_t grace_ms;   /* < 0 = never kill */
	void (*kill_tree)(void *arg);
	void *kill_arg;
	bool timed_out, killed;
	int64_t term_at;
	int status;
};
int rt_wait_container(struct rt_waiter *w, struct hutch_err *err);
/* Relays stdin/stdout <-> master until the container exits; returns its exit code. */
int rt_relay_and_wait(int master, int pidfd, pid_t pid, struct hutch_err *err);
/* Waits for pid; returns the exit code or 128+signal. Forwards SIGINT/SIGTERM/... to it. */
int rt_wait_forward(int pidfd, pid_t pid, struct hutch_err *err);

/* ---- cgroup-backed verbs (rt-verb-cgroup.c, rt-verb-update.c, rt-verb-events.c) ---- */

RT_VERB_FN(pause);
RT_VERB_FN(resume);
RT_VERB_FN(ps);
RT_VERB_FN(update);
RT_VERB_FN(events);

/* A container opened (and locked) together with its cgroup. */
struct rt_ctr {
	int dirfd;
	struct rt_state st;
	enum rt_status status;
	struct cg *cg; /* NULL when the cgroup is gone */
};
int rt_ctr_open(struct rt_global *g, const char *id, struct rt_ctr *c, struct hutch_err *err);
void rt_ctr_close(struct rt_ctr *c);
/* After SIGKILL to the init of a paused container: a v1-frozen task dies only once thawed, so
 * thaw it (as runc). No-op when the container is not frozen. */
int rt_ctr_thaw_for_kill(const struct rt_state *st, struct hutch_err *err);

/* ---- exec (rt-exec.c, rt-verb-exec.c) ---- */

RT_VERB_FN(exec);

/* The container an exec joins, from its state (locked only while read) and its bundle. */
struct rt_exec_target {
	char *id;
	pid_t pid;
	uint64_t start_time;
	char *cgroup_path;
	struct cg_kv *cgroup_paths;
	size_t n_cgroup_paths;
	struct rt_spec *spec;
};
/* Refuses a stopped ("container not running"), creating or (unless ignore_paused) paused
 * container. */
int rt_exec_target_open(struct rt_global *g, const char *id, bool ignore_paused,
			struct rt_exec_target *t, struct hutch_err *err);
void rt_exec_target_free(struct rt_exec_target *t);

struct rt_exec_opts {
	const char *pid_file;
	const char *console_socket;
	int preserve_fds;
	bool detach;
};
/* Runs p in the container t. Detached: returns 0 once p has exec'd, the pid file written.
 * Foreground: relays a terminal or forwards signals, and returns p's exit code (or
 * 128+signal). */
int rt_exec_run(const struct rt_exec_target *t, const struct rt_process *p,
		const struct rt_exec_opts *o, struct hutch_err *err);
/* Shared with create. */
int rt_connect_console(const char *path, struct hutch_err *err);
int rt_write_pid_file(const char *path, pid_t pid, struct hutch_err *err);

/* ---- images (rt-verb-image.c, rt-image-build.c) ---- */

RT_VERB_FN(image);
void rt_image_print_help(int fd);
RT_VERB_FN(bundle); /* rt-verb-bundle.c: an OCI bundle from a stored image */

/* Set only in the child that runs an image build's sandbox: plan_rootfs then keeps the
 * overlay's upper and work dirs there (in the store, on disk) instead of in scratch. */
extern const char *rt_sb_build_upper, *rt_sb_build_work;
/* --image: a directory (a path wins), else NAME[:TAG] in the store. */
bool rt_image_is_dir(const char *image);
/* Mounts a stored image at scratch/root: its layers under an overlay whose upper is
 * scratch/upper (or the build's). The store stays locked (shared) until hutch exits, so
 * prune cannot pull layers from under a running sandbox. Where overlayfs is unavailable
 * (or HUTCH_NO_OVERLAY=1), the layers are copied into a tmpfs at scratch/root instead and
 * 1 is returned (0 for the overlay). */
int rt_image_rootfs(const char *image, const char *scratch, char **rootfs, struct hutch_err *err);

#endif
