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
/* Counts the fds the caller passed (3, 4, ... up to the first closed one): called first in
 * main, before any fd of hutch's own exists. */
void rt_count_caller_fds(void);
/* --preserve-fds N (absent: *out untouched); N beyond the fds the caller passed fails. */
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
RT_VERB_FN(pause);
RT_VERB_FN(resume);
RT_VERB_FN(ps);
RT_VERB_FN(update);
RT_VERB_FN(events);
RT_VERB_FN(exec);
RT_VERB_FN(image);
RT_VERB_FN(bundle); /* rt-verb-bundle.c: an OCI bundle from a stored image */
extern const struct rt_verb rt_verbs[];
extern const size_t rt_n_verbs;

/* The recipe's pieces, by topic. */
#include "rt-state.h"
#include "rt-create.h"
#include "rt-exec.h"

#endif
