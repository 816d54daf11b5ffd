/* SPDX-License-Identifier: Apache-2.0 */
/* Container state (rt-state.c) and hooks (rt-hooks.c). Included through rt.h. */
#ifndef HUTCH_RT_STATE_H
#define HUTCH_RT_STATE_H

#include "hutch-base.h"
#include "rt-spec.h"

#include <stdint.h>
#include <sys/types.h>

struct rt_global;

/* ---- state (rt-state.c) ---- */

/* state.json is read back whole up to RT_STATE_MAX bytes, and saved only up to it. All else
 * it holds is ids and paths (a few KiB per cgroup hierarchy), so the annotations may take
 * RT_ANNOTATIONS_MAX of it as JSON: create refuses more before it makes anything. */
#define RT_STATE_MAX (1 << 20)
#define RT_ANNOTATIONS_MAX (RT_STATE_MAX - (64 << 10))

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
	struct cg_kv *cgroup_made; /* the parents create made (cg_made_parents), for delete */
	size_t n_cgroup_made;
	char *systemd_unit; /* --systemd-cgroup: the scope (delete stops it, update sets it) */
	/* No mount namespace of its own: the rootfs's mount id before create bound it in ours
	 * (ns_undo_host_rootfs at delete); 0 otherwise. */
	uint64_t rootfs_mnt_id;
	bool poststart;	 /* the bundle has poststart hooks (start re-reads it only then) */
	bool poststop;	 /* the bundle has poststop hooks */
	bool creating;	 /* create has not finished */
	bool own_config; /* create --config: the config is the copy in the state dir */
	struct cg_kv *annotations;
	size_t n_annotations;
};

/* The container's cgroup: at its saved paths, or (a state from before those) at path. */
int rt_open_cgroup(const char *path, const struct cg_kv *paths, size_t n, struct cg **out,
		   struct hutch_err *err);
/* The same for a state, with the parents its create made (removed with it by cg_destroy). */
int rt_state_cgroup(const struct rt_state *st, struct cg **out, struct hutch_err *err);

int rt_validate_id(const char *id, struct hutch_err *err);
/* Creates <root>/<id> (EEXIST: "container ID already exists") and returns it locked. */
int rt_state_create_dir(const char *root, const char *id, int *dirfd, struct hutch_err *err);
/* Opens and locks <root>/<id> (ENOENT: "container ID does not exist"). */
int rt_state_open(const char *root, const char *id, int *dirfd, struct hutch_err *err);
/* Opens it for a reader that must not wait for the lock (list): *locked says whether it was
 * free (else a create, say, holds it). state.json is replaced whole, never seen half written. */
int rt_state_peek(const char *root, const char *id, int *dirfd, bool *locked,
		  struct hutch_err *err);
/* Lets the lock go (start, while it waits for the process's execve), and takes it again:
 * ENOENT when the container was deleted meanwhile. */
void rt_state_unlock(int dirfd);
int rt_state_relock(int dirfd, const char *id, struct hutch_err *err);
int rt_state_save(int dirfd, const struct rt_state *st, struct hutch_err *err);
/* Fails, naming annotations and the limit, when they exceed RT_ANNOTATIONS_MAX as JSON. */
int rt_state_check_annotations(const struct cg_kv *a, size_t n, struct hutch_err *err);
int rt_state_load(int dirfd, const char *id, struct rt_state *st, struct hutch_err *err);
void rt_state_clear(struct rt_state *st);
/* The container's config: the state dir's copy (create --config) or the bundle's, with the
 * root create resolved (st->rootfs), not looked up again. */
int rt_state_load_spec(int dirfd, const struct rt_state *st, struct rt_spec **out,
		       struct hutch_err *err);
/* Removes the state directory's content and the directory itself. */
int rt_state_remove(const char *root, const char *id, int dirfd, struct hutch_err *err);
/* Live status: pid liveness (start time guards pid reuse; zombies are stopped) and exec.fifo
 * (created vs running). */
enum rt_status rt_state_status(int dirfd, const struct rt_state *st);
bool rt_pid_alive(pid_t pid, uint64_t start_time);
/* The OCI state document. */
char *rt_state_json(const struct rt_state *st, enum rt_status status, size_t *len);
/* The ids of the state dirs under root, sorted (strcmp); none when root is missing. */
int rt_state_list_ids(const char *root, char ***ids, struct hutch_err *err);

/* ---- hooks (rt-hooks.c) ---- */

/* Runtime-namespace hooks: in hutch's cwd, with hutch's environment unless they have env. */
int rt_hooks_run(const struct rt_hooks *hooks, const char *name, const char *state_json,
		 struct hutch_err *err);
/* Container hooks (createContainer, startContainer): a hook without env gets env (runc gives
 * them the process's), runs in cwd (NULL: where we are), and is exec'd through the trampoline
 * tramp_fd (rt_trampoline_open), as the container's process is. */
struct rt_hook_where {
	const char *cwd;
	char *const *env;
	int tramp_fd;
};
int rt_hooks_run_in(const struct rt_hooks *hooks, const struct rt_hook_where *where,
		    const char *name, const char *state_json, struct hutch_err *err);
/* startContainer hooks, which run under the container's seccomp filter, as runc's: before
 * it, rt_hooks_prepare makes what each needs (ready[i]: its stdin, a pipe already holding the
 * state, close-on-exec; its trampoline argv); after it, rt_hooks_run_ready makes only the
 * hooks' fork, execveat and wait4 (and pidfd_open, poll and kill for a hook with a timeout). */
struct rt_hook_ready {
	int stdin_fd;
	char **targv;
};
int rt_hooks_prepare(const struct rt_hooks *hooks, const struct rt_hook_where *where,
		     const char *name, const char *state_json, struct rt_hook_ready *ready,
		     struct hutch_err *err);
/* Fails, naming the hook's timeout and the syscall, when filter denies one of those that
 * keeping a hook's timeout takes (pidfd_open, poll, kill, wait4): it could not be killed. */
int rt_hooks_check_filter(const struct rt_hooks *hooks, const char *name,
			  const struct sc_filter *filter, struct hutch_err *err);
int rt_hooks_run_ready(const struct rt_hooks *hooks, const struct rt_hook_where *where,
		       const char *name, const struct rt_hook_ready *ready, struct hutch_err *err);

#endif
