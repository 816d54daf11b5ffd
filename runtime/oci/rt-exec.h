/* SPDX-License-Identifier: Apache-2.0 */
/* The cgroup-backed verbs' container handle and exec (rt-verb-cgroup.c, rt-exec.c). Included through rt.h. */
#ifndef HUTCH_RT_EXEC_H
#define HUTCH_RT_EXEC_H

#include "hutch-base.h"
#include "rt-spec.h"
#include "rt-state.h"
#include <stdint.h>
#include <sys/types.h>

struct rt_global;

/* ---- cgroup-backed verbs (rt-verb-cgroup.c, rt-verb-update.c, rt-verb-events.c) ---- */

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

/* The container an exec joins, from its state (locked only while read) and its bundle. */
struct rt_exec_target {
	char *id;
	char *created; /* for the state a seccomp listener gets */
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
	bool die_with_parent; /* the process gets SIGKILL when this hutch dies (sandbox exec) */
	char *const *cgroups; /* --cgroup values (rt_exec_cgroup_paths) */
	size_t n_cgroups;
};
/* Runs p in the container t. Detached: returns 0 once p has exec'd, the pid file written.
 * Foreground: relays a terminal or forwards signals, and returns p's exit code (or
 * 128+signal). */
int rt_exec_run(const struct rt_exec_target *t, const struct rt_process *p,
		const struct rt_exec_opts *o, struct hutch_err *err);
/* Pure (rt-exec-cgroup.c): the cgroup paths (per hierarchy, as the state keeps them) that
 * exec --cgroup values put the process in: "PATH" for every hierarchy (alone), or
 * "CTRL[,CTRL...]:PATH" for those; PATH is relative to the container's cgroup and may not
 * leave it. A controller prefix is refused on v2. *out has n entries, as paths. */
int rt_exec_cgroup_paths(const struct cg_kv *paths, size_t n, bool v2, char *const *args,
			 size_t n_args, struct cg_kv **out, struct hutch_err *err);
/* rt-verb-exec.c: the container's process (taken over from spec, which keeps none) running
 * cmd instead, with a terminal only when tty asks, cwd (absolute; NULL: the spec's) and each
 * KEY=VALUE of env replacing KEY's value, else appended: what `exec` and `sandbox exec`
 * share. */
struct rt_strv;
int rt_exec_process_from_spec(struct rt_spec *spec, char *const *cmd, bool tty, const char *cwd,
			      const struct rt_strv *env, struct rt_process *p,
			      struct hutch_err *err);

#endif
