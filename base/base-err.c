// SPDX-License-Identifier: Apache-2.0
/*
 * The error convention: functions return -errno and fill a fixed-size struct hutch_err,
 * adding context on the way up. Also the allocation helpers and cleanup destructors.
 */
#include "hutch-base.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int vfill(struct hutch_err *err, int code, bool with_errno, const char *fmt, va_list ap)
{
	if (code < 0)
		code = -code;
	if (code == 0)
		code = EINVAL;
	if (!err)
		return -code;
	err->code = code;
	err->status = 0;
	int n = vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	if (with_errno && n >= 0 && (size_t)n < sizeof(err->msg))
		snprintf(err->msg + n, sizeof(err->msg) - n, ": %s", strerror(code));
	return -code;
}

int hutch_fail(struct hutch_err *err, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = vfill(err, code, false, fmt, ap);
	va_end(ap);
	return r;
}

int hutch_fail_errno(struct hutch_err *err, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = vfill(err, code, true, fmt, ap);
	va_end(ap);
	return r;
}

int hutch_err_prefix(struct hutch_err *err, const char *fmt, ...)
{
	char prefix[sizeof(err->msg)];
	char old[sizeof(err->msg)];
	va_list ap;

	if (err->code == 0)
		err->code = EINVAL;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	memcpy(old, err->msg, sizeof(old));
	size_t pl = strnlen(prefix, sizeof(err->msg) - 1);
	memcpy(err->msg, prefix, pl);
	size_t ol = strnlen(old, sizeof(err->msg) - 1 - pl);
	memcpy(err->msg + pl, old, ol);
	err->msg[pl + ol] = '\0';
	return -err->code;
}

void hutch_err_clear(struct hutch_err *err)
{
	err->code = 0;
	err->status = 0;
	err->msg[0] = '\0';
}

static void oom(void)
{
	static const char m[] = "hutch: error: out of memory\n";
	(void)!write(2, m, sizeof(m) - 1);
	abort();
}

void *hutch_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom();
	return p;
}

void *hutch_xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		oom();
	return p;
}

void *hutch_xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		oom();
	return p;
}

char *hutch_xstrdup(const char *s)
{
	char *p = strdup(s);
	if (!p)
		oom();
	return p;
}

char *hutch_xasprintf(const char *fmt, ...)
{
	char *p = NULL;
	va_list ap;
	va_start(ap, fmt);
	int n = vasprintf(&p, fmt, ap);
	va_end(ap);
	if (n < 0)
		oom();
	return p;
}

void hutch_freep(void *p)
{
	free(*(void **)p);
}

void hutch_closep(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;
		close(*fd);
		errno = saved;
	}
}

void hutch_fclosep(void *f)
{
	FILE *fp = *(FILE **)f;
	if (fp)
		fclose(fp);
}

void hutch_closedirp(DIR **d)
{
	if (*d)
		closedir(*d);
}

void hutch_strv_free(char **v)
{
	if (!v)
		return;
	for (char **p = v; *p; p++)
		free(*p);
	free(v);
}

void hutch_strv_push(char ***v, size_t *n, const char *s)
{
	*v = hutch_xrealloc(*v, (*n + 2) * sizeof(char *));
	(*v)[(*n)++] = hutch_xstrdup(s);
	(*v)[*n] = NULL;
}

size_t hutch_strv_len(const char *const *v)
{
	size_t n = 0;
	while (v && v[n])
		n++;
	return n;
}

char **hutch_strv_dup(const char *const *v)
{
	size_t n = hutch_strv_len(v);
	char **out = hutch_xcalloc(n + 1, sizeof(char *));
	for (size_t i = 0; i < n; i++)
		out[i] = hutch_xstrdup(v[i]);
	return out;
}

void hutch_strv_freep(char ***v)
{
	hutch_strv_free(*v);
}

bool hutch_str_has_prefix(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

int hutch_parse_u64(const char *s, uint64_t *out)
{
	char *end = NULL;
	if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
		return -EINVAL;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

int hutch_parse_i64(const char *s, int64_t *out)
{
	char *end = NULL;
	if (!s || !*s || *s == ' ' || *s == '+')
		return -EINVAL;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	*out = v;
	return 0;
}
