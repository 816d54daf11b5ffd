/* SPDX-License-Identifier: Apache-2.0 */
/* JSON through yajl, for every module that speaks it (runtime, images, seccomp). */
#ifndef HUTCH_JSON_H
#define HUTCH_JSON_H

#include "hutch-base.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

/* ---- reading (base-json.c) ---- */

void hutch_json_freep(yajl_val *v);
void hutch_json_gen_freep(yajl_gen *g);
#define _cleanup_json_ _cleanup_(hutch_json_freep)
#define _cleanup_gen_ _cleanup_(hutch_json_gen_freep)

/* Parses text (what names it in errors: "<what>: invalid JSON: ..."); refuses a string
 * holding a NUL byte, naming where. */
int hutch_json_parse(const char *text, const char *what, yajl_val *out, struct hutch_err *err);
/* Member of an object, or NULL when absent, null, or obj is not an object. The last of
 * duplicate keys wins, as with Go's encoding/json (runc, image tools). */
yajl_val hutch_json_get(yajl_val obj, const char *key);

/* Room for a full field name such as "linux.namespaces[12].type". */
#define HUTCH_FIELD_MAX 192
/* Formats a field name into buf (cut if too long: it only ever ends up in a message). */
char *hutch_json_field(char buf[HUTCH_FIELD_MAX], const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Typed getters. field is the full name for errors. Absent: 0 and *out untouched, unless
 * required, which fails with "<field>: required". Present with the wrong type fails. */
int hutch_json_string(yajl_val obj, const char *key, const char *field, bool required, char **out,
		      struct hutch_err *err);
int hutch_json_bool(yajl_val obj, const char *key, const char *field, bool *out,
		    struct hutch_err *err);
int hutch_json_int(yajl_val obj, const char *key, const char *field, int64_t min, int64_t max,
		   bool *present, int64_t *out, struct hutch_err *err);
/* The same for a value already at hand (an array element). */
int hutch_json_int_value(yajl_val v, const char *field, int64_t min, int64_t max, int64_t *out,
			 struct hutch_err *err);
/* hutch_json_int for a field that must be there ("<field>: required"). */
int hutch_json_req_int(yajl_val obj, const char *key, const char *field, int64_t min, int64_t max,
		       int64_t *out, struct hutch_err *err);
/* 0..max, up to 2^64-1 (which only yajl's raw text holds). */
int hutch_json_uint64(yajl_val obj, const char *key, const char *field, uint64_t max, bool *present,
		      uint64_t *out, struct hutch_err *err);
/* Array of strings -> NULL-terminated strv (n may be NULL). */
int hutch_json_strv(yajl_val obj, const char *key, const char *field, bool required, char ***out,
		    size_t *n, struct hutch_err *err);
/* Object or array members: absent (or null) gives 0 with *out = NULL; another type fails
 * with "<field>: expected an object" / "expected an array". */
int hutch_json_object(yajl_val obj, const char *key, const char *field, yajl_val *out,
		      struct hutch_err *err);
int hutch_json_array(yajl_val obj, const char *key, const char *field, yajl_val *out,
		     struct hutch_err *err);
/* The elements of obj's array key (absent or null: none), each with its field name:
 *	TRY(hutch_json_items(obj, "devices", "linux.devices", &it, err));
 *	v = calloc(it.n, ...);
 *	for (yajl_val d; hutch_json_next(&it, &d);) parse(d, it.field, &v[it.i]);
 */
struct hutch_json_items {
	yajl_val arr;
	size_t n, i; /* the count; the current element's index */
	const char *prefix;
	char field[HUTCH_FIELD_MAX]; /* "<field>[i]" */
};
int hutch_json_items(yajl_val obj, const char *key, const char *field, struct hutch_json_items *it,
		     struct hutch_err *err);
bool hutch_json_next(struct hutch_json_items *it, yajl_val *v);
/* Fails with "<prefix>.<key>: not supported" for the first of keys (NULL-terminated) that
 * obj holds with content; null, "", [] and {} ask for nothing and pass. */
int hutch_json_refuse(yajl_val obj, const char *const *keys, const char *prefix,
		      struct hutch_err *err);

/* ---- writing (base-json-gen.c) ---- */

/* A string (NUL-terminated), and key: [strings] with n of them, or up to a NULL when n is
 * SIZE_MAX; key: value (NULL value: null). */
void hutch_json_gen_str(yajl_gen g, const char *s);
void hutch_json_gen_strv(yajl_gen g, const char *key, const char *const *v, size_t n);
void hutch_json_gen_kv(yajl_gen g, const char *key, const char *value);
/* key: a number or a boolean (a NULL key: the value alone, in an array). Above INT64_MAX
 * yajl_gen_integer cannot go: _u64 writes the digits as a number (RLIM_INFINITY, stats). */
void hutch_json_gen_int(yajl_gen g, const char *key, long long v);
void hutch_json_gen_u64(yajl_gen g, const char *key, uint64_t v);
void hutch_json_gen_bool(yajl_gen g, const char *key, bool v);
/* Emits a parsed tree as is (numbers keep their text). */
void hutch_json_gen_value(yajl_gen g, yajl_val v);
/* The finished document, copied out (len may be NULL). */
char *hutch_json_gen_finish(yajl_gen g, size_t *len);

/* Can a JSON document carry s? Well-formed UTF-8 (RFC 3629: no overlong forms, surrogates or
 * code points past U+10FFFF), which a parser may otherwise refuse (yajl) or quietly replace
 * (Go's encoding/json, so runc). */
bool hutch_utf8_valid(const char *s);

/* ---- looking without a tree (base-json-scan.c) ---- */

/* That NUL check alone: "what: process.args[1]: a string holds a NUL byte (\u0000)". */
int hutch_json_check_nul(const char *text, const char *what, struct hutch_err *err);
/* Arrays and objects nested deeper than this are refused before yajl sees them: its tree is
 * built and freed by recursion, and 400,000 '[' (800 KB) overflowed the stack. No document
 * hutch reads needs more than a dozen levels. */
#define HUTCH_JSON_DEPTH_MAX 512
/* "what: invalid JSON: nested deeper than 512". Strings and comments (yajl allows them) do
 * not count; a text that is not JSON passes, for the parse to say what is wrong with it. */
int hutch_json_check_depth(const char *text, const char *what, struct hutch_err *err);
/*
 * Finds the object value of text's top-level member outer, then of its member inner (as
 * "linux" then "seccomp"), without parsing: *start and *len give its bytes. Only an
 * unambiguous answer counts: false when either key is missing or repeated, when any key has
 * an escape, when there is a comment, or when the text is not well-formed as far as scanned.
 * The caller then parses the whole text as usual.
 */
bool hutch_json_find_object(const char *text, const char *outer, const char *inner, size_t *start,
			    size_t *len);

#endif
