// SPDX-License-Identifier: Apache-2.0
/*
 * Writing a parsed yajl tree back out, for documents that are read, amended and written
 * again (a spec's seccomp profile, an image config, a seccomp listener's state).
 */
#include "hutch-json.h"

#include <string.h>

static void gen_str(yajl_gen g, const char *s)
{
	yajl_gen_string(g, (const unsigned char *)s, strlen(s));
}

void hutch_json_gen_value(yajl_gen g, yajl_val v)
{
	if (YAJL_IS_OBJECT(v)) {
		yajl_gen_map_open(g);
		for (size_t i = 0; i < v->u.object.len; i++) {
			gen_str(g, v->u.object.keys[i]);
			hutch_json_gen_value(g, v->u.object.values[i]);
		}
		yajl_gen_map_close(g);
	} else if (YAJL_IS_ARRAY(v)) {
		yajl_gen_array_open(g);
		for (size_t i = 0; i < v->u.array.len; i++)
			hutch_json_gen_value(g, v->u.array.values[i]);
		yajl_gen_array_close(g);
	} else if (YAJL_IS_STRING(v)) {
		gen_str(g, YAJL_GET_STRING(v));
	} else if (YAJL_IS_NUMBER(v)) {
		const char *num = YAJL_GET_NUMBER(v);
		yajl_gen_number(g, num, strlen(num));
	} else if (YAJL_IS_TRUE(v) || YAJL_IS_FALSE(v)) {
		yajl_gen_bool(g, YAJL_IS_TRUE(v));
	} else {
		yajl_gen_null(g);
	}
}
