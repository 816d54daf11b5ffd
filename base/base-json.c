// SPDX-License-Identifier: Apache-2.0
/*
 * Reading JSON through yajl's tree: typed getters that name the full field in every error
 * ("process.user.uid: expected an integer"), so that a parser stays one line per field, for
 * every module that reads JSON (the spec, seccomp profiles, image manifests and configs).
 */
#include "hutch-json.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void hutch_json_freep(yajl_val *v)
{
	if (*v)
		yajl_tree_free(*v);
}

void hutch_json_gen_freep(yajl_gen *g)
{
	if (*g)
		yajl_gen_free(*g);
}

int hutch_json_parse(const char *text, const char *what, yajl_val *out, struct hutch_err *err)
{
	char buf[256] = "";
	int r = hutch_json_check_depth(text, what, err);
	if (r >= 0)
		r = hutch_json_check_nul(text, what, err);
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

yajl_val hutch_json_get(yajl_val obj, const char *key)
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

char *hutch_json_field(char buf[HUTCH_FIELD_MAX], const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, HUTCH_FIELD_MAX, fmt, ap);
	va_end(ap);
	return buf;
}

/* The member, or NULL; fails "<field>: required" when required and absent. */
static int member(yajl_val obj, const char *key, const char *field, bool required, yajl_val *out,
		  struct hutch_err *err)
{
	*out = hutch_json_get(obj, key);
	if (!*out && required)
		return hutch_fail(err, EINVAL, "%s: required", field);
	return 0;
}

int hutch_json_string(yajl_val obj, const char *key, const char *field, bool required, char **out,
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

int hutch_json_bool(yajl_val obj, const char *key, const char *field, bool *out,
		    struct hutch_err *err)
{
	yajl_val v = hutch_json_get(obj, key);
	if (!v)
		return 0;
	if (!YAJL_IS_TRUE(v) && !YAJL_IS_FALSE(v))
		return hutch_fail(err, EINVAL, "%s: expected true or false", field);
	*out = YAJL_IS_TRUE(v);
	return 0;
}

int hutch_json_int_value(yajl_val v, const char *field, int64_t min, int64_t max, int64_t *out,
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

int hutch_json_int(yajl_val obj, const char *key, const char *field, int64_t min, int64_t max,
		   bool *present, int64_t *out, struct hutch_err *err)
{
	yajl_val v = hutch_json_get(obj, key);
	if (present)
		*present = false;
	if (!v)
		return 0;
	int r = hutch_json_int_value(v, field, min, max, out, err);
	if (r < 0)
		return r;
	if (present)
		*present = true;
	return 0;
}

int hutch_json_req_int(yajl_val obj, const char *key, const char *field, int64_t min, int64_t max,
		       int64_t *out, struct hutch_err *err)
{
	yajl_val v = hutch_json_get(obj, key);
	if (!v)
		return hutch_fail(err, EINVAL, "%s: required", field);
	return hutch_json_int_value(v, field, min, max, out, err);
}

int hutch_json_uint64(yajl_val obj, const char *key, const char *field, uint64_t max, bool *present,
		      uint64_t *out, struct hutch_err *err)
{
	yajl_val v = hutch_json_get(obj, key);
	if (present)
		*present = false;
	if (!v)
		return 0;
	if (!YAJL_IS_NUMBER(v))
		return hutch_fail(err, EINVAL, "%s: expected an unsigned integer", field);
	/* Values above INT64_MAX (RLIM_INFINITY is 2^64-1) only exist as yajl's raw text. */
	const char *raw = v->u.number.r;
	uint64_t u;
	if (raw[strspn(raw, "0123456789")] != '\0' || hutch_parse_u64(raw, &u) < 0)
		return hutch_fail(err, EINVAL, "%s: %s: expected an unsigned integer", field, raw);
	if (u > max)
		return hutch_fail(err, ERANGE, "%s: %" PRIu64 " out of range 0..%" PRIu64, field, u,
				  max);
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

int hutch_json_strv(yajl_val obj, const char *key, const char *field, bool required, char ***out,
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

int hutch_json_object(yajl_val obj, const char *key, const char *field, yajl_val *out,
		      struct hutch_err *err)
{
	*out = hutch_json_get(obj, key);
	if (*out && !YAJL_IS_OBJECT(*out)) {
		*out = NULL;
		return hutch_fail(err, EINVAL, "%s: expected an object", field);
	}
	return 0;
}

int hutch_json_array(yajl_val obj, const char *key, const char *field, yajl_val *out,
		     struct hutch_err *err)
{
	*out = hutch_json_get(obj, key);
	if (*out && !YAJL_IS_ARRAY(*out)) {
		*out = NULL;
		return hutch_fail(err, EINVAL, "%s: expected an array", field);
	}
	return 0;
}

int hutch_json_items(yajl_val obj, const char *key, const char *field, struct hutch_json_items *it,
		     struct hutch_err *err)
{
	*it = (struct hutch_json_items){ .prefix = field, .i = SIZE_MAX };
	TRY(hutch_json_array(obj, key, field, &it->arr, err));
	it->n = it->arr ? it->arr->u.array.len : 0;
	return 0;
}

bool hutch_json_next(struct hutch_json_items *it, yajl_val *v)
{
	size_t i = it->i + 1; /* SIZE_MAX + 1: the first */
	if (i >= it->n)
		return false;
	it->i = i;
	hutch_json_field(it->field, "%s[%zu]", it->prefix, i);
	*v = it->arr->u.array.values[i];
	return true;
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

int hutch_json_refuse(yajl_val obj, const char *const *keys, const char *prefix,
		      struct hutch_err *err)
{
	for (; *keys; keys++)
		if (has_content(hutch_json_get(obj, *keys)))
			return hutch_fail(err, EOPNOTSUPP, "%s%s%s: not supported", prefix,
					  prefix[0] ? "." : "", *keys);
	return 0;
}
