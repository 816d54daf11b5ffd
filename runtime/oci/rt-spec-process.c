// SPDX-License-Identifier: Apache-2.0
/*
 * The "process" object of config.json (also read alone by `exec --process`): what to run,
 * as whom, with which capabilities and rlimits. Names (capabilities, rlimits) are checked
 * here against namespaces/' tables so a typo fails before anything is created.
 */
#include "rt-spec-internal.h"

#include <stdio.h>
#include <inttypes.h>
#include <string.h>

/* The largest id the kernel accepts: (uid_t)-1 means "unchanged" to set*id(2). */
#define ID_MAX ((int64_t)UINT32_MAX - 1)

typedef int (*proc_step)(yajl_val proc, struct rt_process *p, struct hutch_err *err);

static int parse_flags(yajl_val proc, struct rt_process *p, struct hutch_err *err)
{
	int64_t adj = 0;
	int r = hutch_json_bool(proc, "terminal", "process.terminal", &p->terminal, err);
	if (r < 0)
		return r;
	r = hutch_json_bool(proc, "noNewPrivileges", "process.noNewPrivileges", &p->no_new_privs,
			    err);
	if (r < 0)
		return r;
	r = hutch_json_int(proc, "oomScoreAdj", "process.oomScoreAdj", -1000, 1000,
			   &p->has_oom_score_adj, &adj, err);
	p->oom_score_adj = (int)adj;
	return r;
}

static int parse_console(yajl_val proc, struct rt_process *p, struct hutch_err *err)
{
	int64_t h = 0, w = 0;
	yajl_val cs;

	int r = hutch_json_object(proc, "consoleSize", "process.consoleSize", &cs, err);
	if (r < 0 || !cs)
		return r;
	r = hutch_json_int(cs, "height", "process.consoleSize.height", 0, 65535, NULL, &h, err);
	if (r < 0)
		return r;
	r = hutch_json_int(cs, "width", "process.consoleSize.width", 0, 65535, NULL, &w, err);
	p->console_height = (unsigned short)h;
	p->console_width = (unsigned short)w;
	return r;
}

static int parse_gids(yajl_val user, struct rt_process *p, struct hutch_err *err)
{
	struct hutch_json_items it;
	int64_t gid;

	TRY(hutch_json_items(user, "additionalGids", "process.user.additionalGids", &it, err));
	if (!it.arr)
		return 0;
	p->gids_storage = hutch_xcalloc(it.n + 1, sizeof(gid_t));
	for (yajl_val v; hutch_json_next(&it, &v);) {
		TRY(hutch_json_int_value(v, it.field, 0, ID_MAX, &gid, err));
		p->gids_storage[it.i] = (gid_t)gid;
	}
	p->user.additional_gids = p->gids_storage;
	p->user.n_additional_gids = it.n;
	return 0;
}

static int parse_user(yajl_val proc, struct rt_process *p, struct hutch_err *err)
{
	int64_t uid = 0, gid = 0, umask = 0;
	yajl_val user;

	int r = hutch_json_object(proc, "user", "process.user", &user, err);
	if (r < 0 || !user)
		return r;
	r = hutch_json_int(user, "uid", "process.user.uid", 0, ID_MAX, NULL, &uid, err);
	if (r < 0)
		return r;
	r = hutch_json_int(user, "gid", "process.user.gid", 0, ID_MAX, NULL, &gid, err);
	if (r < 0)
		return r;
	r = hutch_json_int(user, "umask", "process.user.umask", 0, 0777, &p->user.has_umask, &umask,
			   err);
	if (r < 0)
		return r;
	p->user.uid = (uid_t)uid;
	p->user.gid = (gid_t)gid;
	p->user.umask = (mode_t)umask;
	return parse_gids(user, p, err);
}

static int parse_command(yajl_val proc, struct rt_process *p, struct hutch_err *err)
{
	size_t n = 0;
	int r = hutch_json_strv(proc, "args", "process.args", true, &p->args, &n, err);
	if (r < 0)
		return r;
	if (n == 0 || !p->args[0][0])
		return hutch_fail(err, EINVAL, "process.args: must name a program");
	r = hutch_json_strv(proc, "env", "process.env", false, &p->env, NULL, err);
	if (r < 0)
		return r;
	/* Callers may rely on env being a (possibly empty) list. */
	if (!p->env)
		p->env = hutch_xcalloc(1, sizeof(char *));
	r = rt_spec_check_env(p->env, "process.env", err);
	if (r < 0)
		return r;
	r = hutch_json_string(proc, "cwd", "process.cwd", true, &p->cwd, err);
	if (r < 0)
		return r;
	return rt_spec_check_abs(p->cwd, "process.cwd", err);
}

/* One capability set: names -> bits. */
static int parse_cap_set(yajl_val caps, const char *key, uint64_t *out, struct hutch_err *err)
{
	char field[HUTCH_FIELD_MAX];
	_cleanup_strv_ char **names = NULL;

	hutch_json_field(field, "process.capabilities.%s", key);
	int r = hutch_json_strv(caps, key, field, false, &names, NULL, err);
	for (size_t i = 0; r >= 0 && names && names[i]; i++) {
		int cap = ns_cap_from_name(names[i]);
		if (cap < 0 || cap > 63)
			return hutch_fail(err, EINVAL, "%s: unknown capability %s", field,
					  names[i]);
		*out |= UINT64_C(1) << cap;
	}
	return r;
}

static int parse_caps(yajl_val proc, struct rt_process *p, struct hutch_err *err)
{
	yajl_val caps;
	int r = hutch_json_object(proc, "capabilities", "process.capabilities", &caps, err);
	if (r < 0 || !caps)
		return r;
	p->has_caps = true;
	const struct {
		const char *key;
		uint64_t *set;
	} sets[] = {
		{ "bounding", &p->caps.bounding },	 { "effective", &p->caps.effective },
		{ "inheritable", &p->caps.inheritable }, { "permitted", &p->caps.permitted },
		{ "ambient", &p->caps.ambient },
	};
	for (size_t i = 0; i < ARRAY_SIZE(sets); i++) {
		r = parse_cap_set(caps, sets[i].key, sets[i].set, err);
		if (r < 0)
			return r;
	}
	return 0;
}

int rt_process_skip_ambient(struct rt_process *p)
{
	uint64_t bad = p->caps.ambient & ~(p->caps.permitted & p->caps.inheritable);
	char names[512] = "";
	size_t len = 0;
	int n = 0;

	for (int i = 0; i < 64; i++) {
		if (!(bad & (1ULL << i)))
			continue;
		const char *name = ns_cap_name(i);
		if (len < sizeof(names))
			len += (size_t)snprintf(names + len, sizeof(names) - len, "%s%s",
						n ? ", " : "", name ? name : "?");
		n++;
	}
	if (!n)
		return 0;
	/* A debug line, not a warning: runc's own `spec` lists three such capabilities, and
	 * runc and crun skip them silently; a warning on every run of that config is noise. */
	hutch_debug("process.capabilities.ambient: %s %s not both permitted and inheritable, so "
		    "the kernel cannot raise %s; ignoring, as runc does",
		    names, n > 1 ? "are" : "is", n > 1 ? "them" : "it");
	p->caps.ambient &= ~bad;
	return n;
}

static int parse_rlimit(yajl_val v, const char *field, struct ns_rlimit *rl, struct hutch_err *err)
{
	char f[HUTCH_FIELD_MAX];
	_cleanup_free_ char *type = NULL;
	bool has_soft, has_hard;

	if (!YAJL_IS_OBJECT(v))
		return hutch_fail(err, EINVAL, "%s: expected an object", field);
	hutch_json_field(f, "%s.type", field);
	int r = hutch_json_string(v, "type", f, true, &type, err);
	if (r < 0)
		return r;
	rl->resource = ns_rlimit_from_name(type);
	if (rl->resource < 0)
		return hutch_fail(err, EINVAL, "%s: unknown rlimit %s", f, type);
	hutch_json_field(f, "%s.soft", field);
	r = hutch_json_uint64(v, "soft", f, UINT64_MAX, &has_soft, &rl->soft, err);
	if (r >= 0 && !has_soft)
		r = hutch_fail(err, EINVAL, "%s: required", f);
	if (r < 0)
		return r;
	hutch_json_field(f, "%s.hard", field);
	r = hutch_json_uint64(v, "hard", f, UINT64_MAX, &has_hard, &rl->hard, err);
	if (r >= 0 && !has_hard)
		r = hutch_fail(err, EINVAL, "%s: required", f);
	if (r < 0)
		return r;
	if (rl->soft > rl->hard)
		return hutch_fail(err, EINVAL,
				  "%s: soft limit %" PRIu64 " above hard limit %" PRIu64, field,
				  rl->soft, rl->hard);
	return 0;
}

static int parse_rlimits(yajl_val proc, struct rt_process *p, struct hutch_err *err)
{
	struct hutch_json_items it;

	TRY(hutch_json_items(proc, "rlimits", "process.rlimits", &it, err));
	if (!it.arr)
		return 0;
	p->rlimits = hutch_xcalloc(it.n + 1, sizeof(*p->rlimits));
	for (yajl_val v; hutch_json_next(&it, &v);) {
		TRY(parse_rlimit(v, it.field, &p->rlimits[it.i], err));
		p->n_rlimits = it.i + 1;
		/* setrlimit would apply both, the last silently winning: refuse instead. */
		for (size_t j = 0; j < it.i; j++)
			if (p->rlimits[j].resource == p->rlimits[it.i].resource)
				return hutch_fail(err, EINVAL,
						  "%s.type: duplicate %s (as rlimits[%zu])",
						  it.field, hutch_json_get(v, "type")->u.string, j);
	}
	return 0;
}

static int parse_security(yajl_val proc, struct rt_process *p, struct hutch_err *err)
{
	int r = hutch_json_string(proc, "apparmorProfile", "process.apparmorProfile", false,
				  &p->apparmor_profile, err);
	if (r < 0)
		return r;
	return hutch_json_string(proc, "selinuxLabel", "process.selinuxLabel", false,
				 &p->selinux_label, err);
}

int rt_spec_parse_process(yajl_val proc, struct rt_process *p, struct hutch_err *err)
{
	static const char *const refused[] = { "execCPUAffinity", NULL };
	static const proc_step steps[] = {
		parse_flags, parse_console, parse_user,	    parse_command,
		parse_caps,  parse_rlimits, parse_security, rt_spec_parse_sched,
	};

	if (!YAJL_IS_OBJECT(proc))
		return hutch_fail(err, EINVAL, "process: expected an object");
	int r = hutch_json_refuse(proc, refused, "process", err);
	for (size_t i = 0; r >= 0 && i < ARRAY_SIZE(steps); i++)
		r = steps[i](proc, p, err);
	return r;
}

int rt_process_parse(const char *json, struct rt_process *out, struct hutch_err *err)
{
	_cleanup_json_ yajl_val top = NULL;

	*out = (struct rt_process){ 0 };
	int r = hutch_json_parse(json, "process", &top, err);
	if (r < 0)
		return r;
	r = rt_spec_parse_process(top, out, err);
	if (r < 0)
		rt_process_free(out);
	return r;
}

void rt_process_free(struct rt_process *p)
{
	hutch_strv_free(p->args);
	hutch_strv_free(p->env);
	free(p->cwd);
	free(p->gids_storage);
	free(p->rlimits);
	free(p->apparmor_profile);
	free(p->selinux_label);
	*p = (struct rt_process){ 0 };
}
