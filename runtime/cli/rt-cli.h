/* SPDX-License-Identifier: Apache-2.0 */
/* The command line's one parser (rt-cli.c): a verb's flags, described by a table, into that
 * verb's own struct, and the help lines formatted from the same table. Included
 * through rt.h. */
#ifndef HUTCH_RT_CLI_H
#define HUTCH_RT_CLI_H

#include "hutch-base.h"

#include <stddef.h>
#include <stdint.h>

/* A repeatable flag's values, in order; v is NULL-terminated and owns its strings. */
struct rt_strv {
	char **v;
	size_t n;
};

enum rt_flag_kind {
	RT_FLAG_BOOL,	 /* bool: --f, --f=true, --f=false */
	RT_FLAG_STR,	 /* const char *, into argv; the last one given wins */
	RT_FLAG_INT,	 /* int64_t */
	RT_FLAG_STRV,	 /* struct rt_strv: every value, in order */
	RT_FLAG_FN,	 /* the value goes to fn(field, value) */
	RT_FLAG_FN_LIST, /* the same, but repeatable: a sandbox profile gives it an array */
	RT_FLAG_FN_BOOL, /* takes no value: fn gets "", or VALUE of --f=VALUE */
	RT_FLAG_PROFILE, /* never a flag: a sandbox profile key only (fn, an array) */
};

struct rt_flag {
	const char *name; /* without "--" */
	char short_name;  /* 0: none */
	enum rt_flag_kind kind;
	const char *help; /* NULL: accepted, but not listed */
	size_t off;	  /* of the field in the verb's flags struct */
	int (*fn)(void *field, const char *v, struct hutch_err *err);
};

/* How arguments read: runc's grammar for exec and ps (flags end at the first positional,
 * --help anywhere among them) unless the mode says otherwise. */
enum {
	/* flags may follow positionals: image import FILE --name N, and the runc verbs whose
	 * parser reorders arguments (update ID --cpu-period N, kill ID KILL --all) */
	RT_PARSE_ANYWHERE = 1 << 0,
	/* `hutch sandbox`'s own conventions, which its callers and tests know: every argument
	 * that starts with '-' is a flag ("-" too), --help is not one, an unknown flag is named
	 * with its value, and a missing value reads "--f: requires a value". */
	RT_PARSE_SANDBOX = 1 << 1,
};

struct rt_flags {
	const struct rt_flag *v;
	size_t n;
	unsigned mode;
};
#define RT_FLAGS(table, mode)                                                                      \
	{                                                                                          \
		table, ARRAY_SIZE(table), mode                                                     \
	}

/* Parses argv (argv[0] is the verb) into out, which the caller zeroed (or set to defaults);
 * returns the index of the first positional, the positionals moved to the end of argv in
 * order. "--help"/"-h" set *help. Errors name the flag. */
int rt_parse_flags(const struct rt_flags *def, int argc, char **argv, void *out, bool *help,
		   struct hutch_err *err);
/* Frees what rt_parse_flags allocated in out (the strv kinds). */
void rt_flags_free(const struct rt_flags *def, void *out);
/* The flag (or profile key) called name, or NULL. */
const struct rt_flag *rt_flag_find(const struct rt_flags *def, const char *name);
bool rt_flag_takes_value(const struct rt_flag *f);

enum { RT_HELP_SHORT = 1 << 0, RT_HELP_VALUE = 1 << 1 };
/* One "  FLAG  HELP" line per listed flag, FLAG padded to width. */
void rt_flags_help(int fd, const struct rt_flags *def, int width, unsigned style);

#endif
