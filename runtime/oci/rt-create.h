/* SPDX-License-Identifier: Apache-2.0 */
/* create/start/delete, the child between clone and execve, the parent/child sync and
 * waiting (rt-create.c, rt-child.c, rt-sync.c, rt-console.c). Included through rt.h. */
#ifndef HUTCH_RT_CREATE_H
#define HUTCH_RT_CREATE_H

#include "hutch-base.h"
#include "rt-spec.h"
#include "rt-state.h"
#include <stdint.h>
#include <sys/types.h>

struct rt_global;

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
	int tramp_fd;	/* the exec trampoline (rt_trampoline_open) */
	const struct sc_filter *filter;
	bool filter_follows; /* the parent sends the filter during setup (rt_sync_send_filter) */
	bool send_pty;	     /* foreground run: send the pty master to the parent */
	bool hooks_sync;     /* parent runs prestart/createRuntime hooks mid-setup */
	uint32_t new_ns;     /* CLONE_NEW* created for this container */
	int memcg_fd;	     /* v1: memory cgroup.procs, joined just before execve; else -1 */
	bool dropped;	     /* privileges already dropped (a seccomp listener needs it early) */
	bool late_cgroupns;  /* v1: unshare the cgroup namespace after the memory cgroup join */
	const struct ns_cgroup_dir *cgroup_dirs; /* v1: bound in place of cgroup mounts */
	size_t n_cgroup_dirs;
	const int *tree_fds; /* per spec mount: the parent's tree of its source, or -1 */
	char **env;	     /* process.env, with HOME (rt_env_with_home) */
};
__attribute__((noreturn)) void rt_child_main(struct rt_child *c);

/* ---- becoming the process (rt-process.c): what the init and exec share ---- */

/* The terminal: with process.terminal a pty whose master goes to console_fd (a connected
 * --console-socket) or else over sync_fd to the caller, who relays; without, a session of
 * the process's own. console: the init's (bound over /dev/console), not an exec's. */
struct rt_terminal {
	bool console;
	int console_fd, sync_fd;
};
int rt_setup_terminal(const struct rt_process *p, const struct rt_terminal *t,
		      struct hutch_err *err);
/* Closes every fd from 3 + preserve_fds on but keep (which must lie above the preserved). */
int rt_close_fds_but(int preserve_fds, const int *keep, size_t n_keep, struct hutch_err *err);
int rt_enter_cwd(const char *cwd, struct hutch_err *err);
/* A missing cwd is made (mkdir -p inside /, the root after pivot), as runc and crun do. */
int rt_make_cwd(const char *cwd, struct hutch_err *err);
/* process.user, keeping capabilities; not dumpable; then a new session keyring (its). */
int rt_become_user(const struct rt_process *p, bool new_keyring, struct hutch_err *err);
/* The kernel attributes the spec gives the process, which execve keeps (rt-sched.c): set
 * before the privileges are dropped. */
int rt_set_kernel_attrs(const struct rt_spec *s, const struct rt_process *p, struct hutch_err *err);
/* Finds args[0] in the process's PATH; errors say "no such file or directory" (status 127)
 * or "permission denied" (126), the texts container clients map to exit codes. */
int rt_find_executable(const struct rt_process *p, char *out, size_t len, struct hutch_err *err);
/* The home directory in a passwd line (name:pw:uid:gid:gecos:home:shell) when its uid is
 * uid and its home is not empty. */
bool rt_passwd_home(const char *line, uid_t uid, char *out, size_t len);
/* env with HOME when it has none (or an empty one), as runc: uid's home in the container's
 * /etc/passwd, else "/". Reads / as the process's root: after pivot or setns, before the
 * user switch (the file may be root's only). env itself when it has HOME. */
char **rt_env_with_home(char *const *env, uid_t uid);
/* env with LISTEN_FDS and LISTEN_PID for preserved fds (env itself when there are none). */
char **rt_listen_env(char *const *env, int preserve_fds);
/* What a process gives up before execve, in the order rt_drop_privileges gives. */
struct rt_drop {
	const struct ns_caps *caps; /* NULL: left as they are */
	bool no_new_privs;
	int landlock_fd; /* a Landlock ruleset to restrict to, or -1 */
	const struct sc_filter *filter;
	int *notify_fd; /* a filter with NOTIFY rules: its listener's fd (NULL: refused) */
};
int rt_drop_privileges(const struct rt_drop *d, struct hutch_err *err);
/* rt_drop_privileges for a process's capabilities and no_new_privs, and filter. */
int rt_drop_process_privileges(const struct rt_process *p, const struct sc_filter *filter,
			       int *notify_fd, struct hutch_err *err);
/* Empties the signal mask and restores every disposition (or those in which) to default. */
void rt_reset_signals(void);
void rt_reset_signals_in(const sigset_t *which);

/* The exec trampoline (rt-trampoline.c): a sealed memfd (O_CLOEXEC) that every container
 * process is exec'd through, so /proc/self/exe is never hutch's binary meanwhile. */
int rt_trampoline_open(struct hutch_err *err);
/* The trampoline's argv for exe with argv (malloc'd; made before the seccomp filter). */
char **rt_trampoline_argv(const char *exe, char *const *argv);
/* When filter allows execve but would deny the trampoline's execveat, *out is a copy that
 * lets that one call through (else NULL: filter serves as it is). */
int rt_trampoline_filter(const struct sc_filter *filter, int fd, struct sc_filter **out,
			 struct hutch_err *err);
/* Returns only on failure, with -errno. */
int rt_trampoline_exec(int fd, char **targv, char *const *envp);

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
	bool timed_out, killed;
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
