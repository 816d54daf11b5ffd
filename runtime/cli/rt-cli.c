// SPDX-License-Identifier: Apache-2.0
/*
 * Verb option parsing from tables: --name value, --name=value, -x value, -x, and "--" to
 * end options, as runc's urfave/cli accepts them. Options may follow positionals.
 */
#include "rt.h"

#include <fcntl.h>

#include <string.h>

static struct rt_opt *find_long(struct rt_opt *opts, size_t n, const char *name, size_t len)
{
	for (size_t i = 0; i < n; i++)
		if (strlen(opts[i].name) == len && !strncmp(opts[i].name, name, len))
			return &opts[i];
	return NULL;
}

static struct rt_opt *find_short(struct rt_opt *opts, size_t n, char c)
{
	for (size_t i = 0; i < n; i++)
		if (opts[i].short_name == c)
			return &opts[i];
	return NULL;
}

/* Sets o's value from "--name=value" (inline) or the next argument. */
static int take_value(struct rt_opt *o, const char *inline_val, int argc, char **argv, int *i,
		      struct hutch_err *err)
{
	const char *val = inline_val;
	if (o->has_arg && !val) {
		if (*i + 1 >= argc)
			return hutch_fail(err, EINVAL, "%s: flag --%s requires a value", argv[0],
					  o->name);
		val = argv[++*i];
	} else if (!o->has_arg) {
		/* --detach=true style booleans, as urfave/cli accepts them */
		if (val && strcmp(val, "true") && strcmp(val, "false"))
			return hutch_fail(err, EINVAL, "%s: flag --%s takes no value", argv[0],
					  o->name);
		val = (!val || !strcmp(val, "true")) ? "" : NULL;
	}
	o->value = val;
	return 0;
}

/* Flags come first; the first positional or "--" ends them. Positionals end up at the end of
 * argv, in order, and the index of the first one is returned. */
int rt_parse_opts(int argc, char **argv, struct rt_opt *opts, size_t n_opts, bool *help,
		  struct hutch_err *err)
{
	_cleanup_free_ char **pos = hutch_xcalloc((size_t)argc + 1, sizeof(char *));
	int n_pos = 0, i;
	for (i = 1; i < argc; i++) {
		char *a = argv[i];
		struct rt_opt *o = NULL;
		const char *inline_val = NULL;
		if (!strcmp(a, "--")) {
			for (i++; i < argc; i++)
				pos[n_pos++] = argv[i];
			break;
		}
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			*help = true;
			continue;
		}
		if (a[0] == '-' && a[1] == '-') {
			const char *eq = strchr(a + 2, '=');
			size_t len = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
			o = find_long(opts, n_opts, a + 2, len);
			if (!o)
				return hutch_fail(err, EINVAL, "%s: unknown flag %.*s", argv[0],
						  (int)len + 2, a);
			inline_val = eq ? eq + 1 : NULL;
		} else if (a[0] == '-' && a[1] && !a[2]) {
			o = find_short(opts, n_opts, a[1]);
			if (!o)
				return hutch_fail(err, EINVAL, "%s: unknown flag %s", argv[0], a);
		} else if (a[0] == '-' && a[1]) {
			return hutch_fail(err, EINVAL, "%s: unknown flag %s", argv[0], a);
		} else {
			/* As runc's CLI: flags end at the first positional (exec ID sh -c ...). */
			for (; i < argc; i++)
				pos[n_pos++] = argv[i];
			break;
		}
		int r = take_value(o, inline_val, argc, argv, &i, err);
		if (r < 0)
			return r;
	}
	memcpy(&argv[argc - n_pos], pos, (size_t)n_pos * sizeof(char *));
	return argc - n_pos;
}

const char *rt_opt(const struct rt_opt *opts, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(opts[i].name, name))
			return opts[i].value;
	return NULL;
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
