// SPDX-License-Identifier: Apache-2.0
/*
 * The one flag parser: a verb's table of flags into the verb's own struct, by field offset.
 * It reads --name value, --name=value, -x value, -x, and "--" to end flags, as runc's
 * urfave/cli accepts them, naming for an unknown --flag the one it most likely meant; the
 * container id checks and --preserve-fds are here too, and the help formatted from a verb's
 * definition (`hutch VERB --help`, the sandbox's and the image subcommands' flag lines).
 */
#include "rt.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>

#include <string.h>

static const struct rt_flag *find_flag(const struct rt_flags *def, const char *name, size_t len,
				       char short_name)
{
	for (size_t i = 0; i < def->n; i++) {
		const struct rt_flag *f = &def->v[i];
		if (f->kind == RT_FLAG_PROFILE)
			continue;
		if (short_name ? f->short_name == short_name
			       : strlen(f->name) == len && !strncmp(f->name, name, len))
			return f;
	}
	return NULL;
}

const struct rt_flag *rt_flag_find(const struct rt_flags *def, const char *name)
{
	for (size_t i = 0; i < def->n; i++)
		if (!strcmp(def->v[i].name, name))
			return &def->v[i];
	return NULL;
}

bool rt_flag_takes_value(const struct rt_flag *f)
{
	return f->kind != RT_FLAG_BOOL && f->kind != RT_FLAG_FN_BOOL;
}

/* One flag's value (NULL: a bool given without one) into its field of out. */
static int store(const struct rt_flag *f, const char *verb, const char *v, void *out,
		 struct hutch_err *err)
{
	void *field = (char *)out + f->off;
	struct rt_strv *sv = field;
	int64_t n;
	switch (f->kind) {
	case RT_FLAG_BOOL: /* --detach=true style booleans, as urfave/cli accepts them */
		if (v && strcmp(v, "true") && strcmp(v, "false"))
			return hutch_fail(err, EINVAL, "%s: flag --%s takes no value", verb,
					  f->name);
		*(bool *)field = !v || !strcmp(v, "true");
		return 0;
	case RT_FLAG_STR:
		*(const char **)field = v;
		return 0;
	case RT_FLAG_INT:
		if (hutch_parse_i64(v, &n) < 0)
			return hutch_fail(err, EINVAL, "%s: flag --%s: expected a number, got %s",
					  verb, f->name, v);
		*(int64_t *)field = n;
		return 0;
	case RT_FLAG_STRV:
		hutch_strv_push(&sv->v, &sv->n, v);
		return 0;
	default:
		return f->fn(field, v ? v : "", err);
	}
}

#define NAME_MAX_LEN 63

/* The optimal string alignment distance (Levenshtein plus swapping two neighbours, the
 * commonest typo: --worksapce). Names longer than NAME_MAX_LEN are far from everything. */
static size_t distance(const char *a, size_t la, const char *b)
{
	size_t lb = strlen(b), d[3][NAME_MAX_LEN + 2];
	if (la > NAME_MAX_LEN || lb > NAME_MAX_LEN)
		return SIZE_MAX;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t *row = d[i % 3], *up = d[(i - 1) % 3], *up2 = d[(i + 1) % 3];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t cost = a[i - 1] != b[j - 1], v = up[j - 1] + cost;
			if (up[j] + 1 < v)
				v = up[j] + 1;
			if (row[j - 1] + 1 < v)
				v = row[j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    up2[j - 2] + 1 < v)
				v = up2[j - 2] + 1;
			row[j] = v;
		}
	}
	return d[la % 3][lb];
}

/* The one flag that NAME begins (--mem: --memory), if just one does. */
static const struct rt_flag *prefix_of(const struct rt_flags *def, const char *name, size_t len)
{
	const struct rt_flag *found = NULL;
	for (size_t i = 0; len >= 2 && i < def->n; i++) {
		if (def->v[i].kind == RT_FLAG_PROFILE || strncmp(def->v[i].name, name, len))
			continue;
		if (found)
			return NULL;
		found = &def->v[i];
	}
	return found;
}

/* The flag a mistyped --NAME most likely meant: one edit away (two, from 5 letters on, so
 * that --net is not taken for --env), closer than any other; else the one it begins. */
static const struct rt_flag *suggest(const struct rt_flags *def, const char *name, size_t len)
{
	const struct rt_flag *best = NULL;
	size_t best_d = SIZE_MAX;
	bool tie = false;
	for (size_t i = 0; i < def->n; i++) {
		if (def->v[i].kind == RT_FLAG_PROFILE)
			continue;
		size_t d = distance(name, len, def->v[i].name);
		if (d < best_d) {
			best = &def->v[i];
			best_d = d;
			tie = false;
		} else if (d == best_d) {
			tie = true;
		}
	}
	if (best && !tie && best_d <= (len >= 5 ? 2u : 1u))
		return best;
	return prefix_of(def, name, len);
}

static int unknown_long(const struct rt_flags *def, const char *verb, const char *a, size_t len,
			struct hutch_err *err)
{
	bool sb = def->mode & RT_PARSE_SANDBOX;
	const struct rt_flag *s = suggest(def, a + 2, len);
	/* the sandbox names the whole argument (--bogus=1); the OCI verbs only the flag */
	return hutch_fail(err, EINVAL, "%s: unknown flag %.*s%s%s%s", verb,
			  sb ? (int)strlen(a) : (int)len + 2, a, s ? " (did you mean --" : "",
			  s ? s->name : "", s ? "?)" : "");
}

/* argv[*i], which starts with '-': the flag it names, and its value (after '=' or the next
 * argument, which *i then moves past). */
static int parse_one(const struct rt_flags *def, int argc, char **argv, int *i, void *out,
		     struct hutch_err *err)
{
	const char *a = argv[*i], *eq = NULL;
	const struct rt_flag *f;
	bool sb = def->mode & RT_PARSE_SANDBOX;
	if (a[1] == '-') {
		eq = strchr(a + 2, '=');
		size_t len = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
		f = find_flag(def, a + 2, len, 0);
		if (!f)
			return unknown_long(def, argv[0], a, len, err);
	} else {
		/* one letter: -d, -b VALUE; runc has no -dt or -bVALUE either */
		f = a[1] && !a[2] ? find_flag(def, NULL, 0, a[1]) : NULL;
		if (!f)
			return hutch_fail(err, EINVAL, "%s: unknown flag %s", argv[0], a);
	}
	const char *v = eq ? eq + 1 : NULL;
	if (rt_flag_takes_value(f) && !v) {
		if (*i + 1 >= argc)
			return sb ? hutch_fail(err, EINVAL, "--%s: requires a value", f->name)
				  : hutch_fail(err, EINVAL, "%s: flag --%s requires a value",
					       argv[0], f->name);
		v = argv[++*i];
	}
	return store(f, argv[0], v, out, err);
}

static bool is_help(const char *a)
{
	return !strcmp(a, "--help") || !strcmp(a, "-h");
}

int rt_parse_flags(const struct rt_flags *def, int argc, char **argv, void *out, bool *help,
		   struct hutch_err *err)
{
	_cleanup_free_ char **pos = hutch_xcalloc((size_t)argc + 1, sizeof(char *));
	bool sb = def->mode & RT_PARSE_SANDBOX;
	int n_pos = 0, i;
	for (i = 1; i < argc; i++) {
		char *a = argv[i];
		if (!strcmp(a, "--")) {
			i++;
			break;
		}
		if (!sb && is_help(a)) {
			*help = true;
			continue;
		}
		if (a[0] != '-' || (!a[1] && !sb)) {
			/* As runc's CLI: flags end at the first positional (exec ID sh -c ...). */
			if (!(def->mode & RT_PARSE_ANYWHERE))
				break;
			pos[n_pos++] = a;
			continue;
		}
		int r = parse_one(def, argc, argv, &i, out, err);
		if (r < 0)
			return r;
	}
	for (; i < argc; i++)
		pos[n_pos++] = argv[i];
	memcpy(&argv[argc - n_pos], pos, (size_t)n_pos * sizeof(char *));
	return argc - n_pos;
}

void rt_flags_free(const struct rt_flags *def, void *out)
{
	for (size_t i = 0; i < def->n; i++) {
		if (def->v[i].kind != RT_FLAG_STRV)
			continue;
		struct rt_strv *sv = (struct rt_strv *)((char *)out + def->v[i].off);
		hutch_strv_free(sv->v);
		*sv = (struct rt_strv){ 0 };
	}
}

/* A verb's flags into its struct, then its run function, or its help. */
int rt_verb_call(const struct rt_verb *v, struct rt_global *g, int argc, char **argv,
		 struct hutch_err *err)
{
	_cleanup_free_ void *flags = hutch_xcalloc(1, v->flags_size ? v->flags_size : 1);
	bool help = v->raw_args && argc == 2 && is_help(argv[1]);
	int first = 1, r = 0;
	if (!v->raw_args)
		first = rt_parse_flags(&v->flags, argc, argv, flags, &help, err);
	if (!v->raw_args && first >= 0)
		hutch_phase("parse"); /* a raw verb says when it has parsed */
	if (first < 0)
		r = first;
	else if (help)
		rt_verb_help(v, 1);
	else
		r = v->run(g, argc, argv, first, flags, err);
	rt_flags_free(&v->flags, flags);
	return r;
}

int rt_one_id(int argc, char **argv, int first, const char **id, struct hutch_err *err)
{
	if (argc - first != 1)
		return hutch_fail(err, EINVAL, "%s: expected exactly one container id, got %d",
				  argv[0], argc - first);
	*id = argv[first];
	return rt_validate_id(*id, err);
}

int rt_validate_id(const char *id, struct hutch_err *err)
{
	if (!*id || !strcmp(id, ".") || !strcmp(id, ".."))
		return hutch_fail(err, EINVAL, "invalid container id \"%s\"", id);
	if (!strcmp(id, RT_SANDBOX_DIR)) /* the root's sandbox state */
		return hutch_fail(err, EINVAL, "invalid container id \"%s\": reserved by hutch",
				  id);
	if (strlen(id) > 1024)
		return hutch_fail(err, EINVAL, "invalid container id: longer than 1024 characters");
	for (const char *p = id; *p; p++)
		if (!(*p >= 'a' && *p <= 'z') && !(*p >= 'A' && *p <= 'Z') &&
		    !(*p >= '0' && *p <= '9') && !strchr("_+-.", *p))
			return hutch_fail(
				err, EINVAL,
				"invalid container id \"%s\": only [a-zA-Z0-9_+.-] allowed", id);
	return 0;
}

#define PRESERVE_MAX 4096

/* How many of fds 3, 4, ... the caller gave us, counted before hutch opens any fd of its own:
 * only those may pass with --preserve-fds. Otherwise an fd of hutch's (the state dir's lock,
 * a cgroup, exec.fifo) would take a free number in the range and reach the container. */
static int caller_fds = -1;

void rt_count_caller_fds(void)
{
	int n = 0;
	while (n < PRESERVE_MAX && fcntl(3 + n, F_GETFD) >= 0)
		n++;
	caller_fds = n;
}

int rt_parse_preserve_fds(const char *v, int *out, struct hutch_err *err)
{
	uint64_t n;
	if (!v)
		return 0;
	if (hutch_parse_u64(v, &n) < 0 || n > PRESERVE_MAX)
		return hutch_fail(err, EINVAL, "--preserve-fds: invalid number %s", v);
	if (caller_fds >= 0 && (int)n > caller_fds)
		return hutch_fail(
			err, EBADF,
			"--preserve-fds %s: fd %d is not open (only fds the caller opened, "
			"3 to 3+N-1, can pass)",
			v, 3 + caller_fds);
	*out = (int)n;
	return 0;
}

/* ---- help, formatted from a verb's definition ---- */

void rt_flags_help(int fd, const struct rt_flags *def, int width, unsigned style)
{
	for (size_t i = 0; i < def->n; i++) {
		const struct rt_flag *f = &def->v[i];
		char flag[64];
		char s = style & RT_HELP_SHORT ? f->short_name : 0;
		if (!f->help)
			continue;
		/* without a short name, the long one is indented by one column more than the
		 * "-x, " form would put it at: what the help has always looked like */
		snprintf(flag, sizeof(flag), "%s%c%s--%s%s", s ? "-" : "", s ? s : ' ',
			 s ? ", " : "  ", f->name,
			 style & RT_HELP_VALUE && rt_flag_takes_value(f) ? " VALUE" : "");
		if (!(style & RT_HELP_SHORT))
			dprintf(fd, "  %-*s %s\n", width, flag + 3, f->help);
		else
			dprintf(fd, "  %-*s %s\n", width, s ? flag : flag + 2, f->help);
	}
}

void rt_verb_help(const struct rt_verb *v, int fd)
{
	if (v->help) {
		v->help(fd);
		return;
	}
	dprintf(fd, "usage: hutch [GLOBAL OPTIONS] %s %s\n\n%s\n", v->name, v->usage, v->summary);
	if (v->flags.n)
		dprintf(fd, "\noptions:\n");
	rt_flags_help(fd, &v->flags, 30, RT_HELP_SHORT | RT_HELP_VALUE);
	dprintf(fd, "  %-30s %s\n", "-h, --help", "show this help");
}
