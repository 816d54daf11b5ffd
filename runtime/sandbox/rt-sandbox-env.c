// SPDX-License-Identifier: Apache-2.0
/*
 * --env and --env-file. A file's lines are read as a shell and Docker read them: blank lines
 * and # comments, `export KEY=VALUE`, a value in double quotes (\" \\ \n \$ escaped) or single
 * quotes (literal), and a bare KEY, which takes the caller's value as `--env KEY` does. A line
 * it cannot read is an error, never skipped: a dropped line is a variable the command silently
 * goes without.
 */
#include "rt-sandbox.h"
#include "hutch-path.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

static bool blank(char c)
{
	return c == ' ' || c == '\t';
}

static const char *skip_blanks(const char *p)
{
	while (blank(*p))
		p++;
	return p;
}

/* Docker refuses a name with blanks; quotes in one would be a value that lost its '='. */
static int check_key(const char *k, size_t len, struct hutch_err *err)
{
	if (!len)
		return hutch_fail(err, EINVAL, "no variable name");
	for (size_t i = 0; i < len; i++)
		if (blank(k[i]) || k[i] == '"' || k[i] == '\'')
			return hutch_fail(err, EINVAL,
					  "\"%.*s\" is not a variable name (no blanks or quotes)",
					  (int)(len > 64 ? 64 : len), k);
	return 0;
}

/* After the closing quote: blanks, then nothing or a # comment, as a shell allows. */
static int after_quote(const char *p, struct hutch_err *err)
{
	p = skip_blanks(p);
	if (*p && *p != '#')
		return hutch_fail(err, EINVAL, "\"%.32s\" after the closing quote", p);
	return 0;
}

/* q: just past the opening quote; out: room for the rest of the line. */
static int unquote(const char *q, char quote, char *out, struct hutch_err *err)
{
	size_t n = 0;
	for (; *q && *q != quote; q++) {
		/* as a shell's double quotes: these four escape; any other backslash stays */
		if (quote == '"' && *q == '\\' && q[1] && strchr("\"\\$n", q[1])) {
			q++;
			out[n++] = *q == 'n' ? '\n' : *q;
		} else {
			out[n++] = *q;
		}
	}
	out[n] = '\0';
	if (!*q)
		return hutch_fail(err, EINVAL, "unterminated %s quote",
				  quote == '"' ? "double" : "single");
	return after_quote(q + 1, err);
}

int rt_sb_env_line(const char *line, char **ret_kv, struct hutch_err *err)
{
	const char *p = skip_blanks(line);
	*ret_kv = NULL;
	if (!*p || *p == '#')
		return 0;
	if (!strncmp(p, "export", 6) && blank(p[6]))
		p = skip_blanks(p + 6);
	size_t klen = strcspn(p, "=");
	if (!p[klen]) { /* a bare KEY: trailing blanks are not part of it */
		while (klen && blank(p[klen - 1]))
			klen--;
		if (check_key(p, klen, err) < 0)
			return -EINVAL;
		*ret_kv = hutch_xasprintf("%.*s", (int)klen, p);
		return 1;
	}
	if (check_key(p, klen, err) < 0)
		return -EINVAL;
	const char *v = p + klen + 1;
	if (*v != '"' && *v != '\'') { /* unquoted: the rest of the line, as it always was */
		*ret_kv = hutch_xstrdup(p);
		return 1;
	}
	_cleanup_free_ char *kv = hutch_xmalloc(strlen(p) + 1);
	memcpy(kv, p, klen + 1);
	if (unquote(v + 1, *v, kv + klen + 1, err) < 0)
		return -EINVAL;
	*ret_kv = steal_ptr(kv);
	return 1;
}

static void add_env(struct rt_sb_opts *o, char *kv)
{
	size_t klen = strcspn(kv, "=");
	for (size_t i = 0; i < o->n_env; i++)
		if (!strncmp(o->env[i], kv, klen) && o->env[i][klen] == '=') {
			free(o->env[i]);
			o->env[i] = kv;
			return;
		}
	o->env = hutch_xrealloc(o->env, (o->n_env + 1) * sizeof(char *));
	o->env[o->n_env++] = kv;
}

/* K=V sets; a bare K takes the host's value, as docker run -e K does (absent: not set). */
int rt_sb_set_env(void *p, const char *v, struct hutch_err *err)
{
	struct rt_sb_opts *o = p;
	if (!*v || *v == '=')
		return hutch_fail(err, EINVAL, "--env %s: expected KEY=VALUE or KEY", v);
	if (strchr(v, '=')) {
		add_env(o, hutch_xstrdup(v));
		return 0;
	}
	const char *host = getenv(v);
	if (host)
		add_env(o, hutch_xasprintf("%s=%s", v, host));
	return 0;
}

/* One line of the file (rt_sb_env_line), given as --env would be. */
static int env_file_line(struct rt_sb_opts *o, char *l, size_t len, struct hutch_err *err)
{
	_cleanup_free_ char *kv = NULL;
	if (memchr(l, '\0', len))
		return hutch_fail(err, EINVAL, "a NUL byte");
	l[strcspn(l, "\r")] = '\0';
	int r = rt_sb_env_line(l, &kv, err);
	return r > 0 ? rt_sb_set_env(o, kv, err) : r;
}

int rt_sb_set_env_file(void *p, const char *v, struct hutch_err *err)
{
	struct rt_sb_opts *o = p;
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	/* A pipe of the caller's (<(...)) is read; a FIFO without a writer is an error at once. */
	int r = hutch_read_caller_file("--env-file", v, 1 << 20, RT_SB_CALLER_FILE_MS, &text, &len,
				       err);
	if (r < 0)
		return r;
	int line = 1;
	for (char *l = text, *end = text + len; l < end; line++) {
		char *nl = memchr(l, '\n', (size_t)(end - l));
		size_t n = nl ? (size_t)(nl - l) : (size_t)(end - l);
		l[n] = '\0';
		if (env_file_line(o, l, n, err) < 0)
			return hutch_err_prefix(err, "--env-file %s line %d: ", v, line);
		l += n + 1;
	}
	return 0;
}
