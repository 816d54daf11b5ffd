// SPDX-License-Identifier: Apache-2.0
/* An object of strings as key/value pairs (annotations, linux.resources.unified): the JSON
 * helper that speaks cgroups/' struct cg_kv. The rest is base/'s (hutch-json.h). */
#include "rt-json.h"
#include "cg.h"

#include <string.h>

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
