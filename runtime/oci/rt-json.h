/* SPDX-License-Identifier: Apache-2.0 */
/* JSON in the runtime: base/'s helpers (hutch-json.h), and objects of strings as cgroups/'
 * key/value pairs (rt-json.c). */
#ifndef HUTCH_RT_JSON_H
#define HUTCH_RT_JSON_H

#include "hutch-base.h"
#include "hutch-json.h"

/* An object whose values are all strings -> key/value pairs (*out malloc'd). */
struct cg_kv;
int rt_json_kv(yajl_val obj, const char *field, struct cg_kv **out, size_t *n,
	       struct hutch_err *err);
/* Frees n pairs and the array (NULL is fine). */
void rt_kv_free(struct cg_kv *v, size_t n);

#endif
