/* SPDX-License-Identifier: Apache-2.0 */
/* create/start/delete, the child between clone and execve, the parent/child sync and
 * waiting (rt-create.c, rt-child.c, rt-sync.c, rt-console.c). Included through rt.h; what
 * the init and an exec share in becoming the process is in rt-process.h. */
#ifndef HUTCH_RT_CREATE_H
#define HUTCH_RT_CREATE_H

#include "hutch-base.h"
#include "rt-spec.h"
#include "rt-state.h"
#include <stdint.h>
#include <sys/types.h>

struct rt_global;
struct cg_join;

/* ---- create / start / delete (rt-create.c, rt-child.c) ---- */

struct rt_create_opts {
	const char *id;
	const char *bundle;
	const char *config; /* crun's --config: this file, not <bundle>/config.json */
	const char *pid_file;
	const char *console_socket;
	int preserve_fds;
	bool no_pivot;
	bool no_new_keyring;
	bool foreground; /* `run` without -d: the caller relays the terminal and waits */
	bool no_cgroup;	 /* rootless, nothing delegated: the container gets no cgroup */
	struct rt_spec
		*spec; /* already parsed (sandbox): used instead of the bundle's, not freed */
	/* With init_fd >= 0, PID 1 is init (the sandbox's, rt_sb_init), which starts the
	 * command through the trampoline and reports its wait status on init_fd. */
	int init_fd;
	__attribute__((noreturn)) void (*init)(int tramp_fd, char **targv, char *const *envp,
					       int init_fd);
	bool command_later; /* init learns its command after start (a pooled sandbox's) */
	bool keep_lock;	    /* run: the state dir stays locked for its start (rt_created.dirfd) */
	bool keep_cg;	    /* the cgroup it made, handed over (rt_created.cg) */
	/* Called once the child has its namespaces and sets up on its own (a sandbox wires its
	 * network namespace then); a failure fails the create. */
	int (*after_go)(pid_t pid, void *arg, struct hutch_err *err);
	void *after_go_arg;
};

struct rt_created {
	pid_t pid;
	int pidfd;
	int pty_master; /* foreground run with terminal: the master to relay, else -1 */
	int dirfd;	/* keep_lock: the state dir, still locked (else not set) */
	struct cg *cg;	/* keep_cg: the container's cgroup, the caller's to free (or NULL) */
};

int rt_container_create(struct rt_global *g, const struct rt_create_opts *o, struct rt_created *out,
			struct hutch_err *err);
int rt_container_start(struct rt_global *g, const char *id, struct hutch_err *err);
/* start of a container this process created with keep_lock, its state dir still locked
 * (dirfd, closed here): nothing else can have started, paused or deleted it since. */
int rt_container_start_held(const char *id, int dirfd, struct hutch_err *err);
int rt_container_delete(struct rt_global *g, const char *id, bool force, struct hutch_err *err);
/* A sweep's delete of a stale state, trusting none of it (rt-verbs.c). */
int rt_container_reap(struct rt_global *g, const char *id, const char *cgroup,
		      struct hutch_err *err);

/* ---- the child (rt-child.c): runs between clone and execve ---- */

struct rt_child {
	const struct rt_spec *spec;
	const struct rt_create_opts *opts;
	int sync_fd;
	int fifo_fd;	/* O_PATH of exec.fifo: opening it for writing blocks until start */
	int console_fd; /* connected --console-socket, or -1 */
	int tramp_fd;	/* the exec trampoline (rt_trampoline_open) */
	const struct sc_filter *filter;
	bool filter_follows;  /* the parent sends the filter during setup (rt_sync_send_filter) */
	bool send_pty;	      /* foreground run: send the pty master to the parent */
	bool hooks_sync;      /* parent runs prestart/createRuntime hooks mid-setup */
	uint32_t new_ns;      /* CLONE_NEW* created for this container */
	int memcg_fd;	      /* v1: memory's tasks, joined just before execve; else -1 */
	struct cg_join *join; /* v1: the other cgroups, joined right after GO */
	bool dropped;	      /* privileges already dropped (a seccomp listener needs it early) */
	bool late_cgroupns;   /* v1: unshare the cgroup namespace after the memory cgroup join */
	const struct ns_cgroup_dir *cgroup_dirs; /* v1: bound in place of cgroup mounts */
	size_t n_cgroup_dirs;
	const int *tree_fds; /* per spec mount: the parent's tree of its source, or -1 */
	char **env;	     /* process.env, with HOME (rt_env_with_home) */
	char **exec_env;     /* env with LISTEN_FDS, and the trampoline's argv: made before the */
	char **targv;	     /* filter, as is everything the init needs from there on */
	struct rt_hook_ready *hooks_ready; /* per startContainer hook (rt_hooks_prepare) */
};
__attribute__((noreturn)) void rt_child_main(struct rt_child *c);

/* ---- parent/child sync (rt-sync.c) ---- */

enum rt_sync_type {
	RT_SYNC_GO = 1, /* parent -> child: id maps written, state saved */
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
/* The seccomp program, parent -> child, as one packet (see rt_child.filter_follows). */
int rt_sync_send_filter(int fd, const struct sc_filter *f, struct hutch_err *err);
int rt_sync_recv_filter(int fd, struct sc_filter **out, struct hutch_err *err);
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
	void (*term)(void *arg); /* the timeout's SIGTERM, when not to pid (NULL: to pid) */
	void *term_arg;
	/* fds (ending in -1; NULL: none) whose hangup kills the tree: a pooled sandbox's
	 * client and pool. */
	const int *hangup;
	bool hung_up;
	bool timed_out, killed;
	int forwarded; /* the last signal sent to hutch and passed on (not SIGWINCH) */
	int64_t term_at;
	int status;
};
int rt_wait_container(struct rt_waiter *w, struct hutch_err *err);
/* Relays stdin/stdout <-> master until the container exits; returns its exit code. */
int rt_relay_and_wait(int master, int pidfd, pid_t pid, struct hutch_err *err);
/* Waits for pid; returns the exit code or 128+signal. Forwards SIGINT/SIGTERM/... to it. */
int rt_wait_forward(int pidfd, pid_t pid, struct hutch_err *err);

/* --console-socket and --pid-file, shared by create and exec. */
int rt_connect_console(const char *path, struct hutch_err *err);
int rt_write_pid_file(const char *path, pid_t pid, struct hutch_err *err);

#endif
