// SPDX-License-Identifier: Apache-2.0
/*
 * The "mounts" array of config.json -> struct ns_mount. Options are parsed by namespaces/
 * (ns_mount_parse_options); this file settles what runc settles before that: relative
 * destinations, relative bind sources, and "bind" as the type of every bind mount.
 */
#include "rt-spec-internal.h"

#include <string.h>

static int parse_destination(yajl_val v, const char *field, struct ns_mount *m,
			     struct hutch_err *err)
{
	char f[HUTCH_FIELD_MAX];

	hutch_json_field(f, "%s.destination", field);
	int r = hutch_json_string(v, "destination", f, true, &m->destination, err);
	if (r < 0)
		return r;
	if (!m->destination[0])
		return hutch_fail(err, EINVAL, "%s: required", f);
	/* runc takes a relative destination as relative to the container's /. */
	if (m->destination[0] != '/') {
		char *abs = hutch_xasprintf("/%s", m->destination);
		free(m->destination);
		m->destination = abs;
	}
	return 0;
}

static int parse_options(yajl_val v, const char *field, struct ns_mount *m, struct hutch_err *err)
{
	char f[HUTCH_FIELD_MAX];
	_cleanup_strv_ char **opts = NULL;
	size_t n = 0;

	hutch_json_field(f, "%s.options", field);
	int r = hutch_json_strv(v, "options", f, false, &opts, &n, err);
	if (r < 0)
		return r;
	r = ns_mount_parse_options(m, opts, n, err);
	if (r < 0)
		return hutch_err_prefix(err, "%s: ", f);
	return 0;
}

/* Bind mounts: the type is a dummy ("none", "bind", absent) and the source a host path. */
static void settle_bind(struct ns_mount *m, const char *bundle)
{
	/* crun's reading: a "bind" type alone asks for a bind mount, where runc would fail
	 * in mount(2) with ENODEV. */
	if (m->type && strcmp(m->type, "bind") == 0)
		m->bind = true;
	if (!m->bind)
		return;
	free(m->type);
	m->type = hutch_xstrdup("bind");
	/* runc works in the bundle directory, so a relative source is relative to it. */
	if (bundle && m->source && m->source[0] != '/') {
		char *abs = hutch_xasprintf("%s/%s", bundle, m->source);
		free(m->source);
		m->source = abs;
	}
}

static int parse_mount(yajl_val v, const char *field, const char *bundle, struct ns_mount *m,
		       struct hutch_err *err)
{
	char f[HUTCH_FIELD_MAX];

	if (!YAJL_IS_OBJECT(v))
		return hutch_fail(err, EINVAL, "%s: expected an object", field);
	int r = parse_destination(v, field, m, err);
	if (r < 0)
		return r;
	r = rt_spec_parse_idmaps(v, "uidMappings", field, &m->uid_map, &m->n_uid_map, err);
	if (r >= 0)
		r = rt_spec_parse_idmaps(v, "gidMappings", field, &m->gid_map, &m->n_gid_map, err);
	if (r < 0)
		return r;
	hutch_json_field(f, "%s.type", field);
	r = hutch_json_string(v, "type", f, false, &m->type, err);
	if (r < 0)
		return r;
	hutch_json_field(f, "%s.source", field);
	r = hutch_json_string(v, "source", f, false, &m->source, err);
	if (r < 0 || (r = parse_options(v, field, m, err)) < 0)
		return r;
	settle_bind(m, bundle);
	if (m->n_uid_map || m->n_gid_map)
		m->idmap = true; /* mappings ask for it (runtime-spec 1.1), the option or not */
	return 0;
}

int rt_spec_add_mount(struct rt_spec *spec, const char *destination, const char *type,
		      const char *source, const char *options, struct hutch_err *err)
{
	_cleanup_free_ char *buf = hutch_xstrdup(options ? options : "");
	_cleanup_free_ char **opts = hutch_xcalloc(strlen(buf) / 2 + 2, sizeof(char *));
	size_t n = 0;
	for (char *save = NULL, *o = strtok_r(buf, ",", &save); o; o = strtok_r(NULL, ",", &save))
		opts[n++] = o;
	spec->mounts = hutch_xrealloc(spec->mounts, (spec->n_mounts + 1) * sizeof(*spec->mounts));
	struct ns_mount *m = &spec->mounts[spec->n_mounts++];
	*m = (struct ns_mount){ .destination = destination[0] == '/'
						       ? hutch_xstrdup(destination)
						       : hutch_xasprintf("/%s", destination),
				.type = type ? hutch_xstrdup(type) : NULL,
				.source = source ? hutch_xstrdup(source) : NULL };
	TRY(ns_mount_parse_options(m, opts, n, err));
	settle_bind(m, spec->bundle);
	return 0;
}

int rt_spec_check_idmapped_mounts(struct rt_spec *spec, struct hutch_err *err)
{
	for (size_t i = 0; i < spec->n_mounts; i++) {
		struct ns_mount *m = &spec->mounts[i];
		if (!m->idmap)
			continue;
		if (!m->bind)
			return hutch_fail(err, EINVAL, "mounts[%zu]: idmapped mounts must be binds",
					  i);
		if (!m->n_uid_map && !m->n_gid_map) { /* "idmap" alone: the container's maps */
			if (!spec->n_uid_mappings || !spec->n_gid_mappings)
				return hutch_fail(err, EINVAL,
						  "mounts[%zu]: idmap without uidMappings needs "
						  "linux.uidMappings and gidMappings",
						  i);
			m->uid_map = hutch_xmalloc(spec->n_uid_mappings * sizeof(*m->uid_map));
			memcpy(m->uid_map, spec->uid_mappings,
			       spec->n_uid_mappings * sizeof(*m->uid_map));
			m->n_uid_map = spec->n_uid_mappings;
			m->gid_map = hutch_xmalloc(spec->n_gid_mappings * sizeof(*m->gid_map));
			memcpy(m->gid_map, spec->gid_mappings,
			       spec->n_gid_mappings * sizeof(*m->gid_map));
			m->n_gid_map = spec->n_gid_mappings;
		}
		if (!m->n_uid_map || !m->n_gid_map)
			return hutch_fail(err, EINVAL,
					  "mounts[%zu]: uidMappings and gidMappings go together",
					  i);
	}
	return 0;
}

int rt_spec_parse_mounts(yajl_val mounts, struct rt_spec *spec, struct hutch_err *err)
{
	char field[HUTCH_FIELD_MAX];

	if (!YAJL_IS_ARRAY(mounts))
		return hutch_fail(err, EINVAL, "mounts: expected an array");
	spec->n_mounts = mounts->u.array.len;
	spec->mounts = hutch_xcalloc(spec->n_mounts, sizeof(*spec->mounts));
	for (size_t i = 0; i < spec->n_mounts; i++) {
		hutch_json_field(field, "mounts[%zu]", i);
		int r = parse_mount(mounts->u.array.values[i], field, spec->bundle,
				    &spec->mounts[i], err);
		if (r < 0)
			return r;
	}
	return 0;
}

void rt_spec_free_mounts(struct rt_spec *spec)
{
	for (size_t i = 0; i < spec->n_mounts; i++) {
		struct ns_mount *m = &spec->mounts[i];
		free(m->destination);
		free(m->type);
		free(m->source);
		free(m->data);
		free(m->uid_map);
		free(m->gid_map);
	}
	free(spec->mounts);
	spec->mounts = NULL;
	spec->n_mounts = 0;
}
