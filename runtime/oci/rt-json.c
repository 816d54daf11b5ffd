// SPDX-License-Identifier: Apache-2.0
/*
 * JSON through yajl. Typed getters over the tree API that name the full field in every
 * error ("process.user.uid: expected an integer"), so the spec parsers stay one line per
 * field; and the few yajl_gen helpers that `hutch spec`, state and features output share.
 */
#include "rt-json.h"
#include "cg.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <yajl/yajl_parse.h>

void rt_json_freep(yajl_val *v)
{
	if (*v)
		yajl_tree_free(*v);
}

void rt_json_gen_freep(yajl_gen *g)
{
	if (*g)
		yajl_gen_free(*g);
}

/* ---- NUL bytes ("\u0000") in strings, which C strings would cut short ---- */

struct nul_scan {
	struct {
		char key[64]; /* in an object: the current key */
		long index;   /* in an array: the current index; -1 in an object */
	} f[32];
	int depth; /* frames in use; deeper ones are counted but not kept */
	char where[RT_FIELD_MAX];
};

static void nul_path(struct nul_scan *s, const char *key)
{
	size_t n = 0;
	int kept = s->depth < (int)ARRAY_SIZE(s->f) ? s->depth : (int)ARRAY_SIZE(s->f);
	s->where[0] = '\0';
	for (int i = 0; i < kept && n < sizeof(s->where); i++) {
		if (s->f[i].index >= 0)
			n += (size_t)snprintf(s->where + n, sizeof(s->where) - n, "[%ld]",
					      s->f[i].index);
		else if (!key || i + 1 < kept)
			n += (size_t)snprintf(s->where + n, sizeof(s->where) - n, "%s%s",
					      n ? "." : "", s->f[i].key);
	}
	if (key && n < sizeof(s->where))
		snprintf(s->where + n, sizeof(s->where) - n, "%s%.*s", n ? "." : "", 48, key);
}

static void nul_next(struct nul_scan *s) /* a value ended: the enclosing array moves on */
{
	if (s->depth > 0 && s->depth <= (int)ARRAY_SIZE(s->f) && s->f[s->depth - 1].index >= 0)
		s->f[s->depth - 1].index++;
}

static int nul_push(void *ctx, long index)
{
	struct nul_scan *s = ctx;
	if (s->depth < (int)ARRAY_SIZE(s->f))
		s->f[s->depth] = (typeof(s->f[0])){ .key = "", .index = index };
	s->depth++;
	return 1;
}

static int nul_pop(void *ctx)
{
	struct nul_scan *s = ctx;
	s->depth--;
	nul_next(s);
	return 1;
}

static int nul_map(void *ctx)
{
	return nul_push(ctx, -1);
}

static int nul_array(void *ctx)
{
	return nul_push(ctx, 0);
}

static int nul_key(void *ctx, const unsigned char *k, size_t len)
{
	struct nul_scan *s = ctx;
	if (memchr(k, '\0', len)) {
		nul_path(s, NULL);
		snprintf(s->where + strlen(s->where), sizeof(s->where) - strlen(s->where),
			 "%s(a key)", s->where[0] ? " " : "");
		return 0;
	}
	if (s->depth > 0 && s->depth <= (int)ARRAY_SIZE(s->f))
		snprintf(s->f[s->depth - 1].key, sizeof(s->f[0].key), "%.*s", (int)len, k);
	return 1;
}

static int nul_string(void *ctx, const unsigned char *v, size_t len)
{
	struct nul_scan *s = ctx;
	if (memchr(v, '\0', len)) {
		nul_path(s, NULL);
		return 0;
	}
	nul_next(s);
	return 1;
}

static int nul_scalar(void *ctx)
{
	nul_next(ctx);
	return 1;
}

static int nul_bool(void *ctx, int b)
{
	(void)b;
	return nul_scalar(ctx);
}

static int nul_number(void *ctx, const char *n, size_t len)
{
	(void)n, (void)len;
	return nul_scalar(ctx);
}

/* An escaped NUL: "\u0000" after an even run of backslashes (an odd one escapes the last). */
static bool may_hold_nul(const char *text)
{
	for (const char *p = text; (p = strstr(p, "\\u0000")); p++) {
		size_t run = 0;
		while (p - run > text && p[-(ptrdiff_t)run - 1] == '\\')
			run++;
		if (run % 2 == 0)
			return true;
	}
	return false;
}

int rt_json_check_nul(const char *text, const char *what, struct hutch_err *err)
{
	static const yajl_callbacks cb = {
		.yajl_null = nul_scalar,
		.yajl_boolean = nul_bool,
		.yajl_number = nul_number,
		.yajl_string = nul_string,
		.yajl_start_map = nul_map,
		.yajl_map_key = nul_key,
		.yajl_end_map = nul_pop,
		.yajl_start_array = nul_array,
		.yajl_end_array = nul_pop,
	};
	if (!may_hold_nul(text))
		return 0;
	struct nul_scan s = { .depth = 0 };
	yajl_handle h = yajl_alloc(&cb, NULL, &s);
	yajl_config(h, yajl_allow_comments, 1);
	yajl_status st = yajl_parse(h, (const unsigned char *)text, strlen(text));
	if (st == yajl_status_ok)
		st = yajl_complete_parse(h);
	yajl_free(h);
	if (st != yajl_status_client_canceled)
		return 0; /* no NUL in a string after all, or not JSON: the parse says so */
	return hutch_fail(err, EINVAL, "%s: %s: a string holds a NUL byte (\\u0000)", what,
			  s.where[0] ? s.where : "the top level");
}

int rt_json_parse(const char *text, const char *what, yajl_val *out, struct hutch_err *err)
{
	char buf[256] = "";
	int r = rt_json_check_nul(text, what, err);
	if (r < 0)
		return r;

	yajl_val v = yajl_tree_parse(text, buf, sizeof(buf));
	if (!v) {
		/* yajl appends the offending text and a caret on further lines: keep one line. */
		buf[strcspn(buf, "\n")] = '\0';
		return hutch_fail(err, EINVAL, "%s: invalid JSON: %s", what,
				  buf[0] ? buf : "parse error");
	}
	*out = v;
	return 0;
}

yajl_val rt_json_get(yajl_val obj, const char *key)
{
	if (!YAJL_IS_OBJECT(obj))
		return NULL;
	/* The last duplicate wins, as with Go's encoding/json that runc uses. */
	for (size_t i = obj->u.object.len; i-- > 0;) {
		if (strcmp(obj->u.object.keys[i], key) != 0)
			continue;
		yajl_val v = obj->u.object.values[i];
		/* null means "not given", as Go unmarshals it into a nil pointer or slice. */
		return YAJL_IS_NULL(v) ? NULL : v;
	}
	return NULL;
}

char *rt_field(char buf[RT_FIELD_MAX], const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, RT_FIELD_MAX, fmt, ap);
	va_end(ap);
	return buf;
}

/* The member, or NULL; fails "<field>: required" when required and absent. */
static int member(yajl_val obj, const char *key, const char *field, bool required, yajl_val *out,
		  struct hutch_err *err)
{
	*out = rt_json_get(obj, key);
	if (!*out && required)
		return hutch_fail(err, EINVAL, "%s: required", field);
	return 0;
}

int rt_json_string(yajl_val obj, const char *key, const char *field, bool required, char **out,
		   struct hutch_err *err)
{
	yajl_val v;
	int r = member(obj, key, field, required, &v, err);
	if (r < 0 || !v)
		return r;
	if (!YAJL_IS_STRING(v))
		return hutch_fail(err, EINVAL, "%s: expected a string", field);
	free(*out);
	*out = hutch_xstrdup(v->u.string);
	return 0;
}

int rt_json_bool(yajl_val obj, const char *key, const char *field, bool *out, struct hutch_err *err)
{
	yajl_val v = rt_json_get(obj, key);
	if (!v)
		return 0;
	if (!YAJL_IS_TRUE(v) && !YAJL_IS_FALSE(v))
		return hutch_fail(err, EINVAL, "%s: expected true or false", field);
	*out = YAJL_IS_TRUE(v);
	return 0;
}

int rt_json_int_value(yajl_val v, const char *field, int64_t min, int64_t max, int64_t *out,
		      struct hutch_err *err)
{
	if (!YAJL_IS_NUMBER(v))
		return hutch_fail(err, EINVAL, "%s: expected an integer", field);
	if (!YAJL_IS_INTEGER(v))
		return hutch_fail(err, EINVAL,
				  "%s: %s: expected an integer in %" PRId64 "..%" PRId64, field,
				  v->u.number.r, min, max);
	int64_t i = v->u.number.i;
	if (i < min || i > max)
		return hutch_fail(err, ERANGE, "%s: %" PRId64 " out of range %" PRId64 "..%" PRId64,
				  field, i, min, max);
	*out = i;
	return 0;
}

int rt_json_int(yajl_val obj, const char *key, const char *field, int64_t min, int64_t max,
		bool *present, int64_t *out, struct hutch_err *err)
{
	yajl_val v = rt_json_get(obj, key);
	if (present)
		*present = false;
	if (!v)
		return 0;
	int r = rt_json_int_value(v, field, min, max, out, err);
	if (r < 0)
		return r;
	if (present)
		*present = true;
	return 0;
}

int rt_json_req_int(yajl_val obj, const char *key, const char *field, int64_t min, int64_t max,
		    int64_t *out, struct hutch_err *err)
{
	yajl_val v = rt_json_get(obj, key);
	if (!v)
		return hutch_fail(err, EINVAL, "%s: required", field);
	return rt_json_int_value(v, field, min, max, out, err);
}

int rt_json_uint64(yajl_val obj, const char *key, const char *field, bool *present, uint64_t *out,
		   struct hutch_err *err)
{
	yajl_val v = rt_json_get(obj, key);
	if (present)
		*present = false;
	if (!v)
		return 0;
	if (!YAJL_IS_NUMBER(v))
		return hutch_fail(err, EINVAL, "%s: expected an integer", field);
	/* Values above INT64_MAX (RLIM_INFINITY is 2^64-1) only exist as yajl's raw text. */
	const char *raw = v->u.number.r;
	uint64_t u;
	if (raw[strspn(raw, "0123456789")] != '\0' || hutch_parse_u64(raw, &u) < 0)
		return hutch_fail(err, EINVAL, "%s: %s: expected an unsigned 64-bit integer", field,
				  raw);
	*out = u;
	if (present)
		*present = true;
	return 0;
}

/* Array of strings -> strv; elements are named "<field>[i]" in errors. */
static int to_strv(yajl_val arr, const char *field, char ***out, size_t *n, struct hutch_err *err)
{
	size_t len = arr->u.array.len;
	_cleanup_strv_ char **v = hutch_xcalloc(len + 1, sizeof(char *));

	for (size_t i = 0; i < len; i++) {
		yajl_val s = arr->u.array.values[i];
		if (!YAJL_IS_STRING(s))
			return hutch_fail(err, EINVAL, "%s[%zu]: expected a string", field, i);
		v[i] = hutch_xstrdup(s->u.string);
	}
	hutch_strv_free(*out);
	*out = steal_ptr(v);
	if (n)
		*n = len;
	return 0;
}

int rt_json_strv(yajl_val obj, const char *key, const char *field, bool required, char ***out,
		 size_t *n, struct hutch_err *err)
{
	yajl_val v;
	int r = member(obj, key, field, required, &v, err);
	if (r < 0 || !v)
		return r;
	if (!YAJL_IS_ARRAY(v))
		return hutch_fail(err, EINVAL, "%s: expected an array of strings", field);
	return to_strv(v, field, out, n, err);
}

int rt_json_object(yajl_val obj, const char *key, const char *field, yajl_val *out,
		   struct hutch_err *err)
{
	*out = rt_json_get(obj, key);
	if (*out && !YAJL_IS_OBJECT(*out)) {
		*out = NULL;
		return hutch_fail(err, EINVAL, "%s: expected an object", field);
	}
	return 0;
}

int rt_json_array(yajl_val obj, const char *key, const char *field, yajl_val *out,
		  struct hutch_err *err)
{
	*out = rt_json_get(obj, key);
	if (*out && !YAJL_IS_ARRAY(*out)) {
		*out = NULL;
		return hutch_fail(err, EINVAL, "%s: expected an array", field);
	}
	return 0;
}

static bool has_content(yajl_val v)
{
	if (!v)
		return false;
	if (YAJL_IS_STRING(v))
		return v->u.string[0] != '\0';
	if (YAJL_IS_ARRAY(v))
		return v->u.array.len > 0;
	if (YAJL_IS_OBJECT(v))
		return v->u.object.len > 0;
	return true;
}

int rt_json_refuse(yajl_val obj, const char *const *keys, const char *prefix, struct hutch_err *err)
{
	for (; *keys; keys++)
		if (has_content(rt_json_get(obj, *keys)))
			return hutch_fail(err, EOPNOTSUPP, "%s%s%s: not supported", prefix,
					  prefix[0] ? "." : "", *keys);
	return 0;
}

void rt_kv_free(struct cg_kv *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++) {
		free(v[i].key);
		free(v[i].value);
	}
	free(v);
}

int rt_json_kv(yajl_val obj, const char *field, struct cg_kv **out, size_t *n,
	       struct hutch_err *err)
{
	size_t len = obj->u.object.len;
	struct cg_kv *kv = hutch_xcalloc(len + 1, sizeof(*kv));

	/* Hand the array over first so the caller's free covers a failure half way. */
	*out = kv;
	*n = 0;
	for (size_t i = 0; i < len; i++) {
		yajl_val v = obj->u.object.values[i];
		if (!YAJL_IS_STRING(v))
			return hutch_fail(err, EINVAL, "%s.%s: expected a string", field,
					  obj->u.object.keys[i]);
		kv[i].key = hutch_xstrdup(obj->u.object.keys[i]);
		kv[i].value = hutch_xstrdup(v->u.string);
		*n = i + 1;
	}
	return 0;
}

void rt_gen_kv(yajl_gen g, const char *key, const char *value)
{
	hutch_json_gen_str(g, key);
	if (value)
		hutch_json_gen_str(g, value);
	else
		yajl_gen_null(g);
}

char *rt_gen_finish(yajl_gen g, size_t *len)
{
	const unsigned char *buf = NULL;
	size_t l = 0;

	if (yajl_gen_get_buf(g, &buf, &l) != yajl_gen_status_ok)
		return NULL;
	char *s = hutch_xmalloc(l + 1);
	memcpy(s, buf, l);
	s[l] = '\0';
	if (len)
		*len = l;
	return s;
}
