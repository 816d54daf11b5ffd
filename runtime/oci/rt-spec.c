// SPDX-License-Identifier: Apache-2.0
/*
 * config.json: reading it, the top-level sections (ociVersion, root, hostname, hooks,
 * annotations) and the checks that span sections. process, mounts and linux have their own
 * files. Unknown field names are ignored, as the spec requires; a known field is either
 * honoured or refused with "<field>: not supported", never dropped.
 */
#include "rt-spec-internal.h"
#include "img.h"

#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <string.h>

/* runc reads config.json whole; anything this large is not a config. */
#define CONFIG_MAX (64u << 20)

static int parse_version(yajl_val top, struct rt_spec *spec, struct hutch_err *err)
{
	return hutch_json_string(top, "ociVersion", "ociVersion", true, &spec->oci_version, err);
}

static int parse_root(yajl_val top, struct rt_spec *spec, struct hutch_err *err)
{
	yajl_val root;
	int r = hutch_json_object(top, "root", "root", &root, err);
	if (r < 0)
		return r;
	if (!root)
		return hutch_fail(err, EINVAL, "root: required");
	r = hutch_json_string(root, "path", "root.path", true, &spec->root_path, err);
	if (r < 0)
		return r;
	if (!spec->root_path[0])
		return hutch_fail(err, EINVAL, "root.path: required");
	return hutch_json_bool(root, "readonly", "root.readonly", &spec->root_readonly, err);
}

static int parse_names(yajl_val top, struct rt_spec *spec, struct hutch_err *err)
{
	int r = hutch_json_string(top, "hostname", "hostname", false, &spec->hostname, err);
	if (r < 0)
		return r;
	return hutch_json_string(top, "domainname", "domainname", false, &spec->domainname, err);
}

static int parse_process(yajl_val top, struct rt_spec *spec, struct hutch_err *err)
{
	yajl_val v = hutch_json_get(top, "process");
	if (!v)
		return hutch_fail(err, EINVAL, "process: required");
	return rt_spec_parse_process(v, &spec->process, err);
}

static int parse_mounts(yajl_val top, struct rt_spec *spec, struct hutch_err *err)
{
	yajl_val v = hutch_json_get(top, "mounts");
	return v ? rt_spec_parse_mounts(v, spec, err) : 0;
}

static int parse_linux(yajl_val top, struct rt_spec *spec, struct hutch_err *err)
{
	yajl_val v = hutch_json_get(top, "linux");
	return v ? rt_spec_parse_linux(v, spec, err) : 0;
}

static int parse_hook(yajl_val v, const char *field, struct rt_hook *h, struct hutch_err *err)
{
	char f[HUTCH_FIELD_MAX];
	int64_t timeout = 0;

	if (!YAJL_IS_OBJECT(v))
		return hutch_fail(err, EINVAL, "%s: expected an object", field);
	hutch_json_field(f, "%s.path", field);
	int r = hutch_json_string(v, "path", f, true, &h->path, err);
	if (r < 0 || (r = rt_spec_check_abs(h->path, f, err)) < 0)
		return r;
	hutch_json_field(f, "%s.args", field);
	r = hutch_json_strv(v, "args", f, false, &h->args, NULL, err);
	if (r < 0)
		return r;
	hutch_json_field(f, "%s.env", field);
	r = hutch_json_strv(v, "env", f, false, &h->env, NULL, err);
	if (r < 0 || (r = rt_spec_check_env(h->env, f, err)) < 0)
		return r;
	hutch_json_field(f, "%s.timeout", field);
	r = hutch_json_int(v, "timeout", f, 1, INT_MAX, NULL, &timeout, err);
	h->timeout = (int)timeout;
	return r;
}

static const char *const hook_names[RT_HOOK_COUNT] = {
	[RT_HOOK_PRESTART] = "prestart",
	[RT_HOOK_CREATE_RUNTIME] = "createRuntime",
	[RT_HOOK_CREATE_CONTAINER] = "createContainer",
	[RT_HOOK_START_CONTAINER] = "startContainer",
	[RT_HOOK_POSTSTART] = "poststart",
	[RT_HOOK_POSTSTOP] = "poststop",
};

static int parse_hooks(yajl_val top, struct rt_spec *spec, struct hutch_err *err)
{
	char field[HUTCH_FIELD_MAX];
	struct hutch_json_items it;
	yajl_val hooks;

	TRY(hutch_json_object(top, "hooks", "hooks", &hooks, err));
	for (int k = 0; hooks && k < RT_HOOK_COUNT; k++) {
		hutch_json_field(field, "hooks.%s", hook_names[k]);
		TRY(hutch_json_items(hooks, hook_names[k], field, &it, err));
		if (!it.arr)
			continue;
		struct rt_hooks *hs = &spec->hooks[k];
		hs->n = it.n;
		hs->v = hutch_xcalloc(it.n + 1, sizeof(*hs->v));
		for (yajl_val v; hutch_json_next(&it, &v);)
			TRY(parse_hook(v, it.field, &hs->v[it.i], err));
	}
	return 0;
}

static int parse_annotations(yajl_val top, struct rt_spec *spec, struct hutch_err *err)
{
	yajl_val v;
	int r = hutch_json_object(top, "annotations", "annotations", &v, err);
	if (r < 0 || !v)
		return r;
	return rt_json_kv(v, "annotations", &spec->annotations, &spec->n_annotations, err);
}

/* In this order: linux before the checks that need to know which namespaces are new. */
static int (*const sections[])(yajl_val, struct rt_spec *, struct hutch_err *) = {
	parse_version, parse_root,  parse_names, parse_process,
	parse_mounts,  parse_linux, parse_hooks, parse_annotations,
};

/* Checks across sections, as runc's config validator makes them. */
int rt_spec_check(struct rt_spec *spec, struct hutch_err *err)
{
	if (spec->hostname && spec->hostname[0] && !rt_spec_ns(spec, CLONE_NEWUTS))
		return hutch_fail(err, EINVAL,
				  "hostname: needs a UTS namespace in linux.namespaces");
	if (spec->domainname && spec->domainname[0] && !rt_spec_ns(spec, CLONE_NEWUTS))
		return hutch_fail(err, EINVAL,
				  "domainname: needs a UTS namespace in linux.namespaces");
	int r = rt_spec_check_sched(spec, err);
	return r < 0 ? r : rt_spec_check_idmapped_mounts(spec, err);
}

/* rootfs (unless NULL) is the root a created container's state keeps: not looked up again. */
static int parse_tree(yajl_val top, const char *bundle, const char *rootfs, struct rt_spec *spec,
		      struct hutch_err *err)
{
	char real[PATH_MAX];
	int r;

	if (!YAJL_IS_OBJECT(top))
		return hutch_fail(err, EINVAL, "config.json: expected a JSON object");
	/* Before mounts: relative bind sources are relative to the bundle, as with runc. */
	if (bundle) {
		if (!realpath(bundle, real))
			return hutch_fail_errno(err, errno, "bundle %s", bundle);
		spec->bundle = hutch_xstrdup(real);
	}
	for (size_t i = 0; i < ARRAY_SIZE(sections); i++) {
		r = sections[i](top, spec, err);
		if (r < 0)
			return r;
	}
	r = rt_spec_check(spec, err);
	if (r < 0 || !bundle)
		return r;
	if (rootfs) {
		spec->rootfs = hutch_xstrdup(rootfs);
		return 0;
	}
	return img_resolve_rootfs(spec->bundle, spec->root_path, &spec->rootfs, err);
}

/* Takes text: when linux.seccomp is cut out of it, the spec keeps it for seccomp_json. */
static int parse_owned(char *text, const char *bundle, const char *rootfs, struct rt_spec **out,
		       struct hutch_err *err)
{
	_cleanup_json_ yajl_val top = NULL;
	_cleanup_free_ char *owned = text, *rest = NULL;
	const char *seccomp = NULL;
	struct rt_spec *spec;

	int r = hutch_json_check_nul(text, "config.json", err); /* the profile's part too */
	if (r < 0)
		return r;
	rt_spec_cut_seccomp(text, &rest, &seccomp);
	r = hutch_json_parse(rest ? rest : text, "config.json", &top, err);
	if (r < 0)
		return r;
	spec = hutch_xcalloc(1, sizeof(*spec));
	if (seccomp) {
		spec->seccomp_json = seccomp;
		spec->seccomp_text = steal_ptr(owned);
	}
	r = parse_tree(top, bundle, rootfs, spec, err);
	if (r < 0) {
		rt_spec_free(spec);
		return r;
	}
	*out = spec;
	return 0;
}

int rt_spec_parse(const char *json, const char *bundle, struct rt_spec **out, struct hutch_err *err)
{
	return parse_owned(hutch_xstrdup(json), bundle, NULL, out, err);
}

static int load_at(int dirfd, const char *path, const char *bundle, const char *rootfs,
		   char **ret_text, struct rt_spec **out, struct hutch_err *err)
{
	_cleanup_free_ char *text = NULL;
	int r = hutch_read_file_at(dirfd, path, CONFIG_MAX, &text, NULL, err);
	if (r < 0)
		return r;
	_cleanup_free_ char *copy = ret_text ? hutch_xstrdup(text) : NULL;
	r = parse_owned(steal_ptr(text), bundle, rootfs, out, err);
	if (r >= 0 && ret_text)
		*ret_text = steal_ptr(copy);
	return r;
}

int rt_spec_load_at(int dirfd, const char *path, const char *bundle, char **ret_text,
		    struct rt_spec **out, struct hutch_err *err)
{
	return load_at(dirfd, path, bundle, NULL, ret_text, out, err);
}

int rt_spec_load_created(int dirfd, const char *path, const char *bundle, const char *rootfs,
			 struct rt_spec **out, struct hutch_err *err)
{
	return load_at(dirfd, path, bundle, rootfs, NULL, out, err);
}

int rt_spec_load(const char *bundle, struct rt_spec **out, struct hutch_err *err)
{
	_cleanup_free_ char *path = hutch_xasprintf("%s/config.json", bundle);
	return rt_spec_load_at(AT_FDCWD, path, bundle, NULL, out, err);
}

static void free_hooks(struct rt_hooks *hs)
{
	for (size_t i = 0; i < hs->n; i++) {
		free(hs->v[i].path);
		hutch_strv_free(hs->v[i].args);
		hutch_strv_free(hs->v[i].env);
	}
	free(hs->v);
}

void rt_spec_free(struct rt_spec *spec)
{
	if (!spec)
		return;
	free(spec->oci_version);
	free(spec->bundle);
	free(spec->root_path);
	free(spec->rootfs);
	free(spec->hostname);
	free(spec->domainname);
	rt_process_free(&spec->process);
	rt_spec_free_mounts(spec);
	rt_spec_free_linux(spec);
	rt_spec_free_resources(spec);
	rt_spec_free_seccomp(spec);
	for (int k = 0; k < RT_HOOK_COUNT; k++)
		free_hooks(&spec->hooks[k]);
	rt_kv_free(spec->annotations, spec->n_annotations);
	free(spec);
}
