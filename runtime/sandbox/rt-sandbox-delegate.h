/* SPDX-License-Identifier: Apache-2.0 */
/*
 * --runtime runc|crun|runsc|PATH (rt-sandbox-delegate.c), and a named session under such a
 * runtime (rt-sandbox-delegate-session.c, rt-sandbox-delegate-named.c): the supervisor runs the container and keeps its
 * records; `sandbox exec|stop|rm|ls` reach it through the runtime's own exec, kill and delete,
 * run in the supervisor's mount namespace, where the runtime's state and the bundle live.
 */
#ifndef HUTCH_RT_SANDBOX_DELEGATE_H
#define HUTCH_RT_SANDBOX_DELEGATE_H

#include "rt-sandbox.h"
#include "rt-sandbox-named.h"

enum rt_sb_dl_kind { KIND_RUNC, KIND_CRUN, KIND_RUNSC };

struct delegate {
	char path[4096];
	int fd; /* the binary, resolved once: every run of it is through this fd */
	enum rt_sb_dl_kind kind;
	bool runsc_hostinet; /* bridge: runsc's host stack inside the wired namespace */
	char bundle[256], state[256], log[256];
};

/* The caller's stdio as the runtime may take it (it chowns its stdio to the container's user). */
struct stdio_plan {
	int fd[3];
	pid_t copier[3];
};

/* rt-sandbox-delegate.c, for sessions: the runtime resolved (its fd in d->fd), run through that
 * fd, crun's view without cgroup2 on a hybrid host, the stdio plan, and the error the runtime
 * logged to d->log (err->status 126/127 when it is about running the command). */
int rt_sb_dl_find(const char *name, struct delegate *d, struct hutch_err *err);
void rt_sb_dl_exec(const struct delegate *d, const char *const *argv);
void rt_sb_dl_hide_unified(const struct delegate *d);
int rt_sb_dl_plan_stdio(const char *scratch, struct stdio_plan *sp, struct hutch_err *err);
void rt_sb_dl_use_stdio(const struct stdio_plan *sp);
void rt_sb_dl_end_stdio(struct stdio_plan *sp);
int rt_sb_dl_runtime_error(const struct delegate *d, struct hutch_err *err);

/* The supervisor's side of a named delegated sandbox (set in sandbox_delegate_in.session). */
struct rt_sb_session {
	const struct rt_sb_opts *o;
	const struct rt_spec *spec; /* as handed to the runtime: exec's process comes from it */
	const char *image;
	const struct rt_sb_setid *setid;
	int *notify_fd; /* --detach: the caller, told once the container runs */
	int owner_fd;	/* held for the session's life (clean_stale) */
};
/* begin: the state dir's records (before the runtime runs); started: waits until the runtime
 * says the container runs (or the runtime ended, or timeout_ms > 0 passed), then tells
 * --detach's caller; end: lets the
 * owner lock go (the state dir goes with the sandbox's, in rt-sandbox.c). */
int rt_sb_session_begin(struct sandbox_delegate_in *in, const struct delegate *d,
			struct hutch_err *err);
int rt_sb_session_started(struct sandbox_delegate_in *in, const struct delegate *d, int run_pidfd,
			  int64_t timeout_ms, struct hutch_err *err);
void rt_sb_session_end(struct sandbox_delegate_in *in);
/* Its state dir, RT_SB_ROOT/ID (an fd), and the record there that names its runtime. */
#define DL_RECORD "delegate.json"
int rt_sb_session_dir(const char *id, struct hutch_err *err);

/* `sandbox exec|stop|rm|ls` on it. load: ENOENT unless sandbox ID is a delegated one. */
struct rt_sb_dl_ref {
	char runtime[4096];
	char scratch[200]; /* the supervisor's scratch tmpfs (its mount namespace's) */
	pid_t pid;	   /* the container's, as the runtime said (0: not yet) */
	char *created;
	bool alive;		   /* its supervisor holds the owner lock */
	uint64_t supervisor_start; /* sandbox.json's: the caller sets it after load */
	char cgroup2[512]; /* the cgroup2 cgroup the run joined (--deny-host-loopback), or "" */
};
int rt_sb_session_load(const char *id, struct rt_sb_dl_ref *s);
void rt_sb_session_ref_free(struct rt_sb_dl_ref *s);
struct rt_strv;
/* The command's exit status (128+N for a signal), or < 0 with err (status 126/127/125). */
int rt_sb_session_exec(const struct rt_sb_dl_ref *s, const char *id, pid_t supervisor, bool tty,
		       const char *cwd, const struct rt_strv *env, char **cmd,
		       struct hutch_err *err);
/* signal: "TERM" to the container's first process, "KILL" to all of it (kill --all). */
int rt_sb_session_signal(const struct rt_sb_dl_ref *s, const char *id, pid_t supervisor,
			 const char *signal, struct hutch_err *err);

#endif
