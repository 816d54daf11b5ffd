// SPDX-License-Identifier: Apache-2.0
/*
 * Writing JSON through yajl_gen: strings, string arrays and key/value pairs, a parsed tree
 * written back as it is (for documents that are read, amended and written again: a spec's
 * seccomp profile, an image config, a seccomp listener's state), and whether a string may go
 * into a document at all (UTF-8).
 */
#include "hutch-json.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

void hutch_json_gen_str(yajl_gen g, const char *s)
{
	yajl_gen_string(g, (const unsigned char *)s, strlen(s));
}

void hutch_json_gen_strv(yajl_gen g, const char *key, const char *const *v, size_t n)
{
	hutch_json_gen_str(g, key);
	yajl_gen_array_open(g);
	for (size_t i = 0; v && i < n && (n != SIZE_MAX || v[i]); i++)
		hutch_json_gen_str(g, v[i]);
	yajl_gen_array_close(g);
}

bool hutch_utf8_valid(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	while (*p) {
		unsigned char c = *p++;
		size_t more = c < 0x80		       ? 0
			      : c >= 0xc2 && c <= 0xdf ? 1
			      : c >= 0xe0 && c <= 0xef ? 2
			      : c >= 0xf0 && c <= 0xf4 ? 3
						       : 4;
		if (more == 4)
			return false; /* a continuation byte, or a lead byte RFC 3629 forbids */
		/* The second byte's range rules out overlong forms, surrogates and > U+10FFFF. */
		unsigned char lo = c == 0xe0 ? 0xa0 : c == 0xf0 ? 0x90 : 0x80;
		unsigned char hi = c == 0xed ? 0x9f : c == 0xf4 ? 0x8f : 0xbf;
		for (size_t i = 0; i < more; i++, p++)
			if (*p < (i ? 0x80 : lo) || *p > (i ? 0xbf : hi))
				return false; /* also the NUL that ends s too early */
	}
	return true;
}

void hutch_json_gen_value(yajl_gen g, yajl_val v)
{
	if (YAJL_IS_OBJECT(v)) {
		yajl_gen_map_open(g);
		for (size_t i = 0; i < v->u.object.len; i++) {
			hutch_json_gen_str(g, v->u.object.keys[i]);
			hutch_json_gen_value(g, v->u.object.values[i]);
		}
		yajl_gen_map_close(g);
	} else if (YAJL_IS_ARRAY(v)) {
		yajl_gen_array_open(g);
		for (size_t i = 0; i < v->u.array.len; i++)
			hutch_json_gen_value(g, v->u.array.values[i]);
		yajl_gen_array_close(g);
	} else if (YAJL_IS_STRING(v)) {
		hutch_json_gen_str(g, YAJL_GET_STRING(v));
	} else if (YAJL_IS_NUMBER(v)) {
		const char *num = YAJL_GET_NUMBER(v);
		yajl_gen_number(g, num, strlen(num));
	} else if (YAJL_IS_TRUE(v) || YAJL_IS_FALSE(v)) {
		yajl_gen_bool(g, YAJL_IS_TRUE(v));
	} else {
		yajl_gen_null(g);
	}
}

void hutch_json_gen_kv(yajl_gen g, const char *key, const char *value)
{
	hutch_json_gen_str(g, key);
	if (value)
		hutch_json_gen_str(g, value);
	else
		yajl_gen_null(g);
}

void hutch_json_gen_int(yajl_gen g, const char *key, long long v)
{
	if (key)
		hutch_json_gen_str(g, key);
	yajl_gen_integer(g, v);
}

void hutch_json_gen_u64(yajl_gen g, const char *key, uint64_t v)
{
	char buf[24];
	int n = snprintf(buf, sizeof(buf), "%" PRIu64, v);
	if (key)
		hutch_json_gen_str(g, key);
	yajl_gen_number(g, buf, (size_t)n);
}

void hutch_json_gen_bool(yajl_gen g, const char *key, bool v)
{
	if (key)
		hutch_json_gen_str(g, key);
	yajl_gen_bool(g, v);
}

char *hutch_json_gen_finish(yajl_gen g, size_t *len)
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
