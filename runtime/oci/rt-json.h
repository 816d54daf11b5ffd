/* SPDX-License-Identifier: Apache-2.0 */
/*
 * JSON through yajl: typed getters for the tree API that name the field in their errors
 * ("process.args[2]: expected a string"), and cleanup helpers for yajl handles.
 */
#ifndef HUTCH_RT_JSON_H
#define HUTCH_RT_JSON_H

#include "hutch-base.h"
#include "hutch-json.h"

#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

void rt_json_freep(yajl_val *v);
void rt_json_gen_freep(yajl_gen *g);
#define _cleanup_json_ _cleanup_(rt_json_freep)
#define _cleanup_gen_ _cleanup_(rt_json_gen_freep)

/* Parses text; a syntax error is reported as "<what>: invalid JSON: ...". */
/* Parses text (what names it in errors); refuses a string holding a NUL byte, naming where. */
int rt_json_parse(const char *text, const char *what, yajl_val *out, struct hutch_err *err);
/* That NUL check alone: "what: process.args[1]: a string holds a NUL byte (\u0000)". */
int rt_json_check_nul(const char *text, const char *what, struct hutch_err *err);
/* Member of an object, or NULL when absent (or obj is not an object). */
yajl_val rt_json_get(yajl_val obj, const char *key);

/* Typed getters. field is the full name for errors. Absent: 0 and *out untouched, unless
 * required, which fails with "<field>: required". Present with the wrong type fails. */
int rt_json_string(yajl_val obj, const char *key, const char *field, bool required, char **out,
		   struct hutch_err *err);
int rt_json_bool(yajl_val obj, const char *key, const char *field, bool *out,
		 struct hutch_err *err);
int rt_json_int(yajl_val obj, const char *key, const char *field, int64_t min, int64_t max,
		bool *present, int64_t *out, struct hutch_err *err);
/* The same for a value already at hand (an array element). */
int rt_json_int_value(yajl_val v, const char *field, int64_t min, int64_t max, int64_t *out,
		      struct hutch_err *err);
/* rt_json_int for a field that must be there ("<field>: required"). */
int rt_json_req_int(yajl_val obj, const char *key, const char *field, int64_t min, int64_t max,
		    int64_t *out, struct hutch_err *err);
int rt_json_uint64(yajl_val obj, const char *key, const char *field, bool *present, uint64_t *out,
		   struct hutch_err *err);
/* Array of strings -> NULL-terminated strv (n may be NULL). */
int rt_json_strv(yajl_val obj, const char *key, const char *field, bool required, char ***out,
		 size_t *n, struct hutch_err *err);

/* Room for a full field name such as "linux.namespaces[12].type". */
#define RT_FIELD_MAX 192
/* Formats a field name into buf (cut if too long: it only ever ends up in a message). */
char *rt_field(char buf[RT_FIELD_MAX], const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Object or array members: absent (or null) gives 0 with *out = NULL; another type fails
 * with "<field>: expected an object" / "expected an array". */
int rt_json_object(yajl_val obj, const char *key, const char *field, yajl_val *out,
		   struct hutch_err *err);
int rt_json_array(yajl_val obj, const char *key, const char *field, yajl_val *out,
		  struct hutch_err *err);
/* Fails with "<prefix>.<key>: not supported" for the first of keys (NULL-terminated) that
 * obj holds with content; null, "", [] and {} ask for nothing and pass. */
int rt_json_refuse(yajl_val obj, const char *const *keys, const char *prefix,
		   struct hutch_err *err);
/* An object whose values are all strings -> key/value pairs (*out malloc'd). */
struct cg_kv;
int rt_json_kv(yajl_val obj, const char *field, struct cg_kv **out, size_t *n,
	       struct hutch_err *err);
/* Frees n pairs and the array (NULL is fine). */
void rt_kv_free(struct cg_kv *v, size_t n);

/* yajl_gen convenience: a string, and the finished buffer copied out. */
void rt_gen_kv(yajl_gen g, const char *key, const char *value); /* NULL value -> null */
char *rt_gen_finish(yajl_gen g, size_t *len);

#endif
