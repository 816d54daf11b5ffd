// SPDX-License-Identifier: Apache-2.0
/*
 * The "linux" object of config.json: namespaces, id mappings, sysctls, devices, masked and
 * read-only paths, rootfs propagation. resources and seccomp have their own files. Fields
 * hutch does not implement (intelRdt, ...) fail as "linux.X: not supported". The kernel
 * attributes (personality, ...) are in rt-spec-sched.c.
 */
#include "rt-spec-internal.h"

#include <sched.h>
#include <string.h>
#include <sys/mount.h>

#define ID_MAX ((int64_t)UINT32_MAX - 1)

typedef int (*linux_step)(yajl_val linux_obj, struct rt_spec *spec, struct hutch_err *err);

static int parse_namespace(yajl_val v, const char *field, struct rt_namespace *ns,
			   struct hutch_err *err)
{
	char f[HUTCH_FIELD_MAX];
	_cleanup_free_ char *type = NULL;

	if (!YAJL_IS_OBJECT(v))
		return hutch_fail(err, EINVAL, "%s: expected an object", field);
	hutch_json_field(f, "%s.type", field);
	int r = hutch_json_string(v, "type", f, true, &type, err);
	if (r < 0)
		return r;
	ns->flag = ns_type_flag(type);
	if (ns->flag < 0)
		return hutch_fail(err, EINVAL, "%s: unknown namespace type %s", f, type);
	hutch_json_field(f, "%s.path", field);
	r = hutch_json_string(v, "path", f, false, &ns->path, err);
	if (r < 0 || !ns->path)
		return r;
	/* An empty path is how Go marshals "no path": create a new one. */
	if (!ns->path[0]) {
		free(steal_ptr(ns->path));
		return 0;
	}
	return rt_spec_check_abs(ns->path, f, err);
}

static int parse_namespaces(yajl_val lx, struct rt_spec *spec, struct hutch_err *err)
{
	struct hutch_json_items it;
	TRY(hutch_json_items(lx, "namespaces", "linux.namespaces", &it, err));
	spec->namespaces = hutch_xcalloc(it.n + 1, sizeof(*spec->namespaces));
	for (yajl_val v; hutch_json_next(&it, &v);) {
		struct rt_namespace *ns = &spec->namespaces[it.i];
		spec->n_namespaces = it.i + 1; /* so rt_spec_free frees what this one holds */
		TRY(parse_namespace(v, it.field, ns, err));
		if (rt_spec_ns(spec, ns->flag) != ns)
			return hutch_fail(err, EINVAL, "%s.type: duplicate namespace type %s",
					  it.field, hutch_json_get(v, "type")->u.string);
	}
	return 0;
}

static int parse_idmap(yajl_val v, const char *field, struct ns_idmap *m, struct hutch_err *err)
{
	static const char *const keys[] = { "containerID", "hostID", "size" };
	uint32_t *dst[] = { &m->container_id, &m->host_id, &m->size };
	char f[HUTCH_FIELD_MAX];
	int64_t val;

	if (!YAJL_IS_OBJECT(v))
		return hutch_fail(err, EINVAL, "%s: expected an object", field);
	for (size_t k = 0; k < ARRAY_SIZE(keys); k++) {
		hutch_json_field(f, "%s.%s", field, keys[k]);
		/* size 0 maps nothing, and the kernel rejects the whole map for it. */
		int r = hutch_json_req_int(v, keys[k], f, k == 2 ? 1 : 0, UINT32_MAX, &val, err);
		if (r < 0)
			return r;
		*dst[k] = (uint32_t)val;
	}
	return 0;
}

int rt_spec_parse_idmaps(yajl_val obj, const char *key, const char *prefix, struct ns_idmap **out,
			 size_t *n, struct hutch_err *err)
{
	char field[HUTCH_FIELD_MAX];
	struct hutch_json_items it;

	hutch_json_field(field, "%s.%s", prefix, key);
	TRY(hutch_json_items(obj, key, field, &it, err));
	if (!it.arr)
		return 0;
	*out = hutch_xcalloc(it.n + 1, sizeof(**out));
	*n = it.n;
	for (yajl_val v; hutch_json_next(&it, &v);)
		TRY(parse_idmap(v, it.field, &(*out)[it.i], err));
	return 0;
}

static int check_userns(const struct rt_spec *spec, struct hutch_err *err)
{
	const struct rt_namespace *user = rt_spec_ns(spec, CLONE_NEWUSER);
	const char *given = spec->n_uid_mappings   ? "linux.uidMappings"
			    : spec->n_gid_mappings ? "linux.gidMappings"
						   : NULL;

	if (!user && given)
		return hutch_fail(err, EINVAL, "%s: given without a user namespace", given);
	if (user && user->path && given)
		return hutch_fail(err, EOPNOTSUPP,
				  "%s: not supported when joining a user namespace (path %s)",
				  given, user->path);
	if (user && !user->path && !spec->n_uid_mappings)
		return hutch_fail(err, EINVAL,
				  "linux.uidMappings: required by a new user namespace");
	if (user && !user->path && !spec->n_gid_mappings)
		return hutch_fail(err, EINVAL,
				  "linux.gidMappings: required by a new user namespace");
	return 0;
}

static int parse_idmaps(yajl_val lx, struct rt_spec *spec, struct hutch_err *err)
{
	int r = rt_spec_parse_idmaps(lx, "uidMappings", "linux", &spec->uid_mappings,
				     &spec->n_uid_mappings, err);
	if (r < 0)
		return r;
	r = rt_spec_parse_idmaps(lx, "gidMappings", "linux", &spec->gid_mappings,
				 &spec->n_gid_mappings, err);
	if (r < 0)
		return r;
	return check_userns(spec, err);
}

static int parse_sysctl(yajl_val lx, struct rt_spec *spec, struct hutch_err *err)
{
	yajl_val obj;

	int r = hutch_json_object(lx, "sysctl", "linux.sysctl", &obj, err);
	if (r < 0 || !obj)
		return r;
	uint32_t new_ns = 0;
	static const int kinds[] = { CLONE_NEWNET, CLONE_NEWIPC, CLONE_NEWUTS, CLONE_NEWUSER };
	for (size_t k = 0; k < ARRAY_SIZE(kinds); k++)
		new_ns |= rt_spec_new_ns(spec, kinds[k]) ? (uint32_t)kinds[k] : 0;
	spec->sysctls = hutch_xcalloc(obj->u.object.len, sizeof(*spec->sysctls));
	for (size_t i = 0; i < obj->u.object.len; i++) {
		const char *key = obj->u.object.keys[i];
		yajl_val v = obj->u.object.values[i];
		if (!YAJL_IS_STRING(v))
			return hutch_fail(err, EINVAL, "linux.sysctl.%s: expected a string", key);
		/* Against the namespaces created, not joined: a joined one may be the host's. */
		r = ns_check_sysctl(key, new_ns, err);
		if (r < 0)
			return hutch_err_prefix(err, "linux.sysctl: ");
		spec->sysctls[i].key = hutch_xstrdup(key);
		spec->sysctls[i].value = hutch_xstrdup(v->u.string);
		spec->n_sysctls = i + 1;
	}
	return 0;
}

static int parse_device_type(yajl_val v, const char *field, struct ns_device *d,
			     struct hutch_err *err)
{
	char f[HUTCH_FIELD_MAX];
	_cleanup_free_ char *type = NULL;

	hutch_json_field(f, "%s.type", field);
	int r = hutch_json_string(v, "type", f, true, &type, err);
	if (r < 0)
		return r;
	if (strlen(type) != 1 || !strchr("cbup", type[0]))
		return hutch_fail(err, EINVAL, "%s: unknown device type %s (c, b, u or p)", f,
				  type);
	d->type = type[0];
	return 0;
}

static int parse_device(yajl_val v, const char *field, struct ns_device *d, struct hutch_err *err)
{
	static const struct {
		const char *key;
		int64_t max;
	} nums[] = { { "major", UINT32_MAX },
		     { "minor", UINT32_MAX },
		     { "fileMode", 07777 },
		     { "uid", ID_MAX },
		     { "gid", ID_MAX } };
	int64_t val[ARRAY_SIZE(nums)] = { 0, 0, 0666, 0, 0 };
	char f[HUTCH_FIELD_MAX];
	int r;

	if (!YAJL_IS_OBJECT(v))
		return hutch_fail(err, EINVAL, "%s: expected an object", field);
	hutch_json_field(f, "%s.path", field);
	if ((r = hutch_json_string(v, "path", f, true, &d->path, err)) < 0 ||
	    (r = rt_spec_check_abs(d->path, f, err)) < 0 ||
	    (r = parse_device_type(v, field, d, err)) < 0)
		return r;
	for (size_t k = 0; k < ARRAY_SIZE(nums); k++) {
		hutch_json_field(f, "%s.%s", field, nums[k].key);
		/* A fifo has no device number; every other node needs both. */
		if (k < 2 && d->type != 'p')
			r = hutch_json_req_int(v, nums[k].key, f, 0, nums[k].max, &val[k], err);
		else
			r = hutch_json_int(v, nums[k].key, f, 0, nums[k].max, NULL, &val[k], err);
		if (r < 0)
			return r;
	}
	d->major = val[0];
	d->minor = val[1];
	d->file_mode = (mode_t)val[2];
	d->uid = (uid_t)val[3];
	d->gid = (gid_t)val[4];
	return 0;
}

static int parse_devices(yajl_val lx, struct rt_spec *spec, struct hutch_err *err)
{
	struct hutch_json_items it;
	TRY(hutch_json_items(lx, "devices", "linux.devices", &it, err));
	if (!it.arr)
		return 0;
	spec->devices = hutch_xcalloc(it.n + 1, sizeof(*spec->devices));
	spec->n_devices = it.n;
	for (yajl_val v; hutch_json_next(&it, &v);)
		TRY(parse_device(v, it.field, &spec->devices[it.i], err));
	return 0;
}

static int parse_resources(yajl_val lx, struct rt_spec *spec, struct hutch_err *err)
{
	yajl_val v;
	int r = hutch_json_object(lx, "resources", "linux.resources", &v, err);
	if (r < 0 || !v)
		return r;
	r = rt_spec_parse_resources(v, spec, err);
	if (r >= 0)
		spec->has_resources = true;
	return r;
}

static int parse_seccomp(yajl_val lx, struct rt_spec *spec, struct hutch_err *err)
{
	yajl_val v;
	if (spec->seccomp_json) { /* cut out unparsed: see rt-spec-seccomp.c */
		spec->has_seccomp = true;
		return 0;
	}
	int r = hutch_json_object(lx, "seccomp", "linux.seccomp", &v, err);
	if (r < 0 || !v)
		return r;
	r = rt_spec_parse_seccomp(v, &spec->seccomp, err);
	if (r >= 0)
		spec->has_seccomp = true;
	return r;
}

static int parse_propagation(yajl_val lx, struct rt_spec *spec, struct hutch_err *err)
{
	static const struct {
		const char *name;
		unsigned long flags;
	} modes[] = {
		{ "private", MS_PRIVATE },	 { "rprivate", MS_PRIVATE | MS_REC },
		{ "slave", MS_SLAVE },		 { "rslave", MS_SLAVE | MS_REC },
		{ "shared", MS_SHARED },	 { "rshared", MS_SHARED | MS_REC },
		{ "unbindable", MS_UNBINDABLE }, { "runbindable", MS_UNBINDABLE | MS_REC },
	};
	_cleanup_free_ char *s = NULL;

	int r = hutch_json_string(lx, "rootfsPropagation", "linux.rootfsPropagation", false, &s,
				  err);
	if (r < 0 || !s || !s[0])
		return r;
	for (size_t i = 0; i < ARRAY_SIZE(modes); i++)
		if (strcmp(s, modes[i].name) == 0) {
			spec->rootfs_propagation = modes[i].flags;
			return 0;
		}
	return hutch_fail(err, EINVAL, "linux.rootfsPropagation: unknown propagation %s", s);
}

static int parse_path_list(yajl_val lx, const char *key, char ***out, size_t *n,
			   struct hutch_err *err)
{
	char field[HUTCH_FIELD_MAX];

	hutch_json_field(field, "linux.%s", key);
	int r = hutch_json_strv(lx, key, field, false, out, n, err);
	for (size_t i = 0; r >= 0 && *out && (*out)[i]; i++)
		if ((*out)[i][0] != '/')
			return hutch_fail(err, EINVAL, "%s[%zu]: %s: must be an absolute path",
					  field, i, (*out)[i]);
	return r;
}

static int parse_paths(yajl_val lx, struct rt_spec *spec, struct hutch_err *err)
{
	int r = parse_path_list(lx, "maskedPaths", &spec->masked_paths, &spec->n_masked_paths, err);
	if (r < 0)
		return r;
	return parse_path_list(lx, "readonlyPaths", &spec->readonly_paths, &spec->n_readonly_paths,
			       err);
}

static int parse_cgroups_path(yajl_val lx, struct rt_spec *spec, struct hutch_err *err)
{
	return hutch_json_string(lx, "cgroupsPath", "linux.cgroupsPath", false, &spec->cgroups_path,
				 err);
}

static int parse_mount_label(yajl_val lx, struct rt_spec *spec, struct hutch_err *err)
{
	_cleanup_free_ char *label = NULL;

	(void)spec;
	int r = hutch_json_string(lx, "mountLabel", "linux.mountLabel", false, &label, err);
	if (r < 0 || !label || !label[0])
		return r;
	/* runc drops the label on a host without SELinux; hutch has no SELinux support at all,
	 * so either way a label it cannot apply is an error. */
	if (access("/sys/fs/selinux/enforce", F_OK) < 0)
		return hutch_fail(err, EOPNOTSUPP,
				  "linux.mountLabel: not supported (SELinux is not enabled)");
	return hutch_fail(err, EOPNOTSUPP, "linux.mountLabel: not supported");
}

int rt_spec_parse_linux(yajl_val lx, struct rt_spec *spec, struct hutch_err *err)
{
	static const char *const refused[] = { "intelRdt", "netDevices", NULL };
	/* namespaces first: id maps, sysctls and time offsets are checked against them. */
	static const linux_step steps[] = {
		parse_namespaces,   parse_idmaps,  parse_sysctl,	 parse_devices,
		parse_cgroups_path, parse_paths,   parse_propagation,	 parse_mount_label,
		parse_resources,    parse_seccomp, rt_spec_parse_kernel,
	};

	if (!YAJL_IS_OBJECT(lx))
		return hutch_fail(err, EINVAL, "linux: expected an object");
	int r = hutch_json_refuse(lx, refused, "linux", err);
	for (size_t i = 0; r >= 0 && i < ARRAY_SIZE(steps); i++)
		r = steps[i](lx, spec, err);
	return r;
}

void rt_spec_free_linux(struct rt_spec *spec)
{
	for (size_t i = 0; i < spec->n_namespaces; i++)
		free(spec->namespaces[i].path);
	free(spec->namespaces);
	free(spec->uid_mappings);
	free(spec->gid_mappings);
	for (size_t i = 0; i < spec->n_sysctls; i++) {
		free(spec->sysctls[i].key);
		free(spec->sysctls[i].value);
	}
	free(spec->sysctls);
	for (size_t i = 0; i < spec->n_devices; i++)
		free(spec->devices[i].path);
	free(spec->devices);
	hutch_strv_free(spec->masked_paths);
	hutch_strv_free(spec->readonly_paths);
	free(spec->cgroups_path);
}
