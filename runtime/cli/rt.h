/* SPDX-License-Identifier: Apache-2.0 */
/*
 * runtime/: the global options, the command line and the verb table; the rest of the runtime's
 * shared declarations are in the topic headers it includes (state, create and the child,
 * exec and the cgroup verbs) and rt-image.h. Shared by the runtime's own files only; the
 * modules never include it.
 */
#ifndef HUTCH_RT_H
#define HUTCH_RT_H

#include "hutch-base.h"
#include "rt-cli.h"
#include "rt-spec.h"

#include <stdint.h>

#define RT_DEFAULT_ROOT "/run/hutch" /* host root's; rt_run_dir() is the caller's */

#define RT_SANDBOX_DIR ".sandbox" /* hutch sandbox's state in the root (rt-sandbox-root.c) */
#define RT_ROOT_MAX 256		  /* a sandbox's state paths beneath it fit hutch's buffers */

/* rt-rundir.c: the run directory (RT_DEFAULT_ROOT, or a rootless caller's own), and making
 * it: made and opened without following a symlink (its parents through hutch_chase), and
 * refused unless it is the caller's alone; then held open for the run. */
const char *rt_run_dir(void);
int rt_run_dir_make(struct hutch_err *err);
/* The instance root: flag (--root) when given, else $HUTCH_ROOT (absolute, else one error
 * naming it), else the run dir; kept for rt_root(). */
int rt_root_resolve(const char *flag, const char **out, struct hutch_err *err);
const char *rt_root(void);
const char *rt_root_flag(void); /* "--root" or "HUTCH_ROOT": where rt_root() came from */
/* rt_root(), made (mkdir -p) when make, else ENOENT when missing; never a symlink, and
 * refused unless the caller owns it and nobody else may write it. Held for the run: the fd
 * is not the caller's to close. */
int rt_root_open(bool make, struct hutch_err *err);
/* mkdir path (-p with parents), then open it: every component but the last through
 * hutch_chase, the last never a symlink (refused naming it). A directory fd, or -errno. */
int rt_make_dir(const char *what, const char *path, mode_t mode, bool parents,
		struct hutch_err *err);
/* fd is a regular file (a lock or a record planted as a FIFO or a device is not one). */
bool rt_regular(int fd);
/* rt-own-dirs.c: hutch's own directories for this caller, which no sandbox may write (the
 * state directory, the image stores, the seccomp caches or the "hutch" directories holding
 * them), as absolute paths, malloc'd and NULL-terminated. path resolved as far as it exists
 * (realpath of its longest existing prefix, the rest as it is), malloc'd. Whether path is dir
 * or beneath it (by name). */
char **rt_own_dirs(void);
/* rt-roots.c: the roots used (each registered, by path, device and inode, when its
 * .sandbox is opened), and those still there, malloc'd and NULL-terminated (an entry whose
 * root is gone is pruned). */
void rt_roots_register(int rootfd);
char **rt_roots_registered(void);
char *rt_path_resolve(const char *path);
bool rt_path_under(const char *path, const char *dir);

struct rt_global {
	const char *root;
	const char *log;
	bool log_json;
	bool debug;
	bool systemd_cgroup;
};

/* ---- command line (rt-cli.c, rt-verb-table.c) ---- */

/* Counts the fds the caller passed (3, 4, ... up to the first closed one): called first in
 * main, before any fd of hutch's own exists. */
void rt_count_caller_fds(void);
/* --preserve-fds N (absent: *out untouched); N beyond the fds the caller passed fails. */
int rt_parse_preserve_fds(const char *v, int *out, struct hutch_err *err);
/* Exactly one positional: the container id, validated. */
int rt_one_id(int argc, char **argv, int first, const char **id, struct hutch_err *err);

/* A verb, defined in its own file: its flags fill a struct of flags_size bytes that run
 * gets (argv[0] is the verb; argv[first..] its positionals). */
struct rt_verb {
	const char *name;
	const char *summary;
	const char *usage; /* after "hutch VERB " */
	struct rt_flags flags;
	size_t flags_size;
	int (*run)(struct rt_global *g, int argc, char **argv, int first, void *flags,
		   struct hutch_err *err);
	int fail_status; /* exit status when run fails; 0 means 1 */
	bool raw_args;	 /* the verb parses its own arguments */
	void (*help)(int fd);
};
#define RT_VERB_RUN(fn)                                                                            \
	int fn(struct rt_global *g, int argc, char **argv, int first, void *flags,                 \
	       struct hutch_err *err)
const struct rt_verb *rt_verb_find(const char *name);
int rt_verb_call(const struct rt_verb *v, struct rt_global *g, int argc, char **argv,
		 struct hutch_err *err);
void rt_verb_help(const struct rt_verb *v, int fd);
void rt_main_help(int fd);
/* Each defined in the file that runs it; rt-verb-table.c lists them in `hutch --help`'s order. */
extern const struct rt_verb rt_spec_verb, rt_create_verb, rt_run_verb; /* rt-verb-run.c */
extern const struct rt_verb rt_start_verb, rt_state_verb, rt_kill_verb, rt_delete_verb,
	rt_checkpoint_verb, rt_restore_verb; /* rt-verbs.c */
extern const struct rt_verb rt_list_verb, rt_features_verb, rt_exec_verb, rt_update_verb,
	rt_events_verb;
extern const struct rt_verb rt_ps_verb, rt_pause_verb, rt_resume_verb; /* rt-verb-cgroup.c */
extern const struct rt_verb rt_sandbox_verb, rt_image_verb, rt_bundle_verb;
extern const struct rt_verb rt_pool_verb;   /* rt-sandbox-pool.c */
extern const struct rt_verb rt_doctor_verb; /* rt-verb-doctor.c */

/* The recipe's pieces, by topic. */
#include "rt-state.h"
#include "rt-create.h"
#include "rt-exec.h"

#endif
