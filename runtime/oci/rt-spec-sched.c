// SPDX-License-Identifier: Apache-2.0
/*
 * The spec's kernel attributes of a process: linux.personality and process.ioPriority.
 * Names are checked against
 * namespaces/' tables and values against what the kernel would take, so that a mistake fails
 * naming its field before anything is created.
 */
#include "rt-spec-internal.h"

static int lookup(const struct ns_name_value *t, const char *name, const char *field,
		  const char *what, int64_t *out, struct hutch_err *err)
{
	int r = ns_lookup(t, name, out);
	if (r == -EOPNOTSUPP)
		return hutch_fail(err, EOPNOTSUPP, "%s: %s: not supported", field, name);
	if (r < 0)
		return hutch_fail(err, EINVAL, "%s: unknown %s %s", field, what, name);
	return 0;
}

/* A required string naming a table entry. */
static int named(yajl_val obj, const char *key, const char *field, const struct ns_name_value *t,
		 const char *what, int64_t *out, struct hutch_err *err)
{
	_cleanup_free_ char *s = NULL;
	int r = hutch_json_string(obj, key, field, true, &s, err);
	return r < 0 ? r : lookup(t, s, field, what, out, err);
}

static int parse_personality(yajl_val lx, struct rt_spec *spec, struct hutch_err *err)
{
	yajl_val v;
	int64_t domain;
	_cleanup_strv_ char **fl = NULL;
	int r = hutch_json_object(lx, "personality", "linux.personality", &v, err);
	if (r < 0 || !v)
		return r;
	r = named(v, "domain", "linux.personality.domain", ns_personality_domains, "domain",
		  &domain, err);
	if (r >= 0)
		r = hutch_json_strv(v, "flags", "linux.personality.flags", false, &fl, NULL, err);
	if (r < 0)
		return r;
	if (fl && fl[0]) /* the spec defines none yet */
		return hutch_fail(err, EOPNOTSUPP, "linux.personality.flags: %s: not supported",
				  fl[0]);
	spec->has_personality = true;
	spec->personality = (unsigned long)domain;
	return 0;
}

static int parse_ioprio(yajl_val proc, struct rt_process *p, struct hutch_err *err)
{
	yajl_val io;
	int64_t class, level;
	int r = hutch_json_object(proc, "ioPriority", "process.ioPriority", &io, err);
	if (r < 0 || !io)
		return r;
	r = named(io, "class", "process.ioPriority.class", ns_ioprio_classes, "class", &class, err);
	if (r >= 0)
		r = hutch_json_req_int(io, "priority", "process.ioPriority.priority", 0, 7, &level,
				       err);
	if (r < 0)
		return r;
	p->ioprio = (struct ns_ioprio){ .set = true, .class = (int)class, .level = (int)level };
	return 0;
}

int rt_spec_parse_sched(yajl_val proc, struct rt_process *p, struct hutch_err *err)
{
	return parse_ioprio(proc, p, err);
}

int rt_spec_parse_kernel(yajl_val lx, struct rt_spec *spec, struct hutch_err *err)
{
	return parse_personality(lx, spec, err);
}
