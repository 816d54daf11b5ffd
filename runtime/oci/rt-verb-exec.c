// SPDX-License-Identifier: Apache-2.0
/*
 * `hutch exec [OPTIONS] ID [COMMAND...]`: the flags turned into the process to run, either
 * an OCI process JSON (--process, as podman and containerd's shim use it) or the bundle's
 * process with the command and runc's overrides (--cwd, --env, --user, --cap, ...).
 * rt-exec.c runs it.
 */
#include "rt.h"

#include <ctype.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#define PROCESS_MAX (4 << 20)
/* The largest id the kernel accepts: (uid_t)-1 means "unchanged" to set*id(2). */
#define ID_MAX ((uint64_t)UINT32_MAX - 1)

struct exec_flags {
	const char *id;
	char **cmd; /* argv's tail, NULL-terminated */
	const char *process_file, *cwd, *user;
	char **env, **gids, **caps; /* repeatable flags, in order; NULL-terminated */
	bool no_new_privs, tty;
};

static void exec_flags_free(struct exec_flags *f)
{
	free(f->env);
	free(f->gids);
	free(f->caps);
}

static const struct rt_opt *find_flag(const struct rt_opt *opts, size_t n, const char *a)
{
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(opts[i].name);
		if (a[1] == '-' && !strncmp(a + 2, opts[i].name, len) &&
		    (a[2 + len] == '\0' || a[2 + len] == '='))
			return &opts[i];
		if (a[1] && a[1] != '-' && a[1] == opts[i].short_name && !a[2])
			return &opts[i];
	}
	return NULL;
}

/* Every value of a repeatable flag: rt_parse_opts keeps only the last, but leaves the flags
 * in argv[1..first) as given, so they are walked again with the same grammar. */
static char **flag_values(int first, char **argv, const struct rt_opt *opts, size_t n,
			  const char *name)
{
	char **out = hutch_xcalloc((size_t)first + 1, sizeof(char *));
	size_t k = 0;
	for (int i = 1; i < first; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--"))
			break;
		const struct rt_opt *o = a[0] == '-' ? find_flag(opts, n, a) : NULL;
		if (!o || !o->has_arg)
			continue;
		const char *eq = a[1] == '-' ? strchr(a, '=') : NULL;
		const char *v = eq ? eq + 1 : i + 1 < first ? argv[++i] : NULL;
		if (v && !strcmp(o->name, name))
			out[k++] = (char *)v;
	}
	return out;
}

static int read_flags(int argc, char **argv, int first, const struct rt_opt *opts,
		      struct exec_flags *f, struct hutch_err *err)
{
	size_t n = rt_verb_find("exec")->n_opts;
	if (argc - first < 1)
		return hutch_fail(err, EINVAL, "exec: usage: hutch exec [OPTIONS] ID COMMAND...");
	f->id = argv[first];
	f->cmd = &argv[first + 1];
	f->process_file = rt_opt(opts, n, "process");
	f->cwd = rt_opt(opts, n, "cwd");
	f->user = rt_opt(opts, n, "user");
	f->no_new_privs = rt_opt(opts, n, "no-new-privs") != NULL;
	f->tty = rt_opt(opts, n, "tty") != NULL;
	f->env = flag_values(first, argv, opts, n, "env");
	f->gids = flag_values(first, argv, opts, n, "additional-gids");
	f->caps = flag_values(first, argv, opts, n, "cap");
	if (!f->process_file && !f->cmd[0])
		return hutch_fail(err, EINVAL, "exec: no command given (or --process FILE)");
	if (!f->process_file)
		return 0;
	/* The file is the whole process: an override beside it would be silently lost. */
	if (f->cmd[0])
		return hutch_fail(err, EINVAL, "exec: --process cannot be combined with a command");
	static const char *const per_process[] = { "cwd",      "env",
						   "user",     "additional-gids",
						   "cap",      "no-new-privs",
						   "apparmor", "process-label" };
	for (size_t i = 0; i < ARRAY_SIZE(per_process); i++)
		if (rt_opt(opts, n, per_process[i]))
			return hutch_fail(
				err, EINVAL,
				"--%s cannot be combined with --process (set it in the file)",
				per_process[i]);
	return 0;
}

static int parse_id(const char *s, size_t len, uint32_t *out)
{
	char buf[16];
	uint64_t v;
	if (len == 0 || len >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = '\0';
	for (size_t i = 0; i < len; i++)
		if (!isdigit((unsigned char)buf[i]))
			return -EINVAL;
	if (hutch_parse_u64(buf, &v) < 0 || v > ID_MAX)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

/* "UID" or "UID:GID", numbers only: names would have to be looked up in the container. */
static int apply_user(struct rt_process *p, const char *spec, struct hutch_err *err)
{
	const char *colon = strchr(spec, ':');
	uint32_t uid, gid = p->user.gid;
	size_t ulen = colon ? (size_t)(colon - spec) : strlen(spec);
	if (parse_id(spec, ulen, &uid) < 0 ||
	    (colon && parse_id(colon + 1, strlen(colon + 1), &gid) < 0))
		return hutch_fail(err, EINVAL, "--user %s: expected UID[:GID] (numbers)", spec);
	p->user.uid = uid;
	p->user.gid = gid;
	return 0;
}

static int apply_gids(struct rt_process *p, char **gids, struct hutch_err *err)
{
	size_t n = 0, have = p->user.n_additional_gids;
	while (gids[n])
		n++;
	if (n == 0)
		return 0;
	p->gids_storage = hutch_xrealloc(p->gids_storage, (have + n) * sizeof(gid_t));
	for (size_t i = 0; i < n; i++) {
		uint32_t g;
		if (parse_id(gids[i], strlen(gids[i]), &g) < 0)
			return hutch_fail(err, EINVAL, "--additional-gids %s: expected a number",
					  gids[i]);
		p->gids_storage[have + i] = g;
	}
	p->user.additional_gids = p->gids_storage;
	p->user.n_additional_gids = have + n;
	return 0;
}

/* KEY=VALUE replaces KEY's earlier value (getenv would see the first), else is appended. */
static int apply_env(struct rt_process *p, char **add, struct hutch_err *err)
{
	size_t n = 0;
	while (p->env && p->env[n])
		n++;
	for (; *add; add++) {
		const char *eq = strchr(*add, '=');
		if (!eq || eq == *add)
			return hutch_fail(err, EINVAL, "--env %s: expected KEY=VALUE", *add);
		size_t klen = (size_t)(eq - *add) + 1, i;
		for (i = 0; i < n && strncmp(p->env[i], *add, klen); i++)
			;
		if (i == n) {
			p->env = hutch_xrealloc(p->env, (n + 2) * sizeof(char *));
			p->env[++n] = NULL;
		} else {
			free(p->env[i]);
		}
		p->env[i] = hutch_xstrdup(*add);
	}
	return 0;
}

/* As runc: added to the bounding, effective and permitted sets, and to ambient only where
 * inheritable allows it (ambient needs both). "sys_admin" is CAP_SYS_ADMIN. */
static int apply_caps(struct rt_process *p, char **caps, struct hutch_err *err)
{
	for (; *caps; caps++) {
		char name[64];
		snprintf(name, sizeof(name), "%s%s", strncasecmp(*caps, "CAP_", 4) ? "CAP_" : "",
			 *caps);
		for (char *c = name; *c; c++)
			*c = (char)toupper((unsigned char)*c);
		int cap = ns_cap_from_name(name);
		if (cap < 0 || cap > 63)
			return hutch_fail(err, EINVAL, "--cap %s: unknown capability", *caps);
		uint64_t bit = UINT64_C(1) << cap;
		p->caps.bounding |= bit;
		p->caps.effective |= bit;
		p->caps.permitted |= bit;
		p->caps.ambient |= p->caps.inheritable & bit;
	}
	return 0;
}

/* The bundle's process, taken over from the spec, with the command line's changes. */
static int process_from_spec(struct rt_spec *spec, const struct exec_flags *f, struct rt_process *p,
			     struct hutch_err *err)
{
	*p = spec->process;
	spec->process = (struct rt_process){ 0 };
	hutch_strv_free(p->args);
	size_t n = 0;
	while (f->cmd[n])
		n++;
	p->args = hutch_xcalloc(n + 1, sizeof(char *));
	for (size_t i = 0; i < n; i++)
		p->args[i] = hutch_xstrdup(f->cmd[i]);
	p->terminal = f->tty; /* as runc: no terminal unless asked for */
	if (f->cwd) {
		if (f->cwd[0] != '/')
			return hutch_fail(err, EINVAL, "--cwd %s: must be an absolute path",
					  f->cwd);
		free(p->cwd);
		p->cwd = hutch_xstrdup(f->cwd);
	}
	if (f->no_new_privs)
		p->no_new_privs = true;
	int r = apply_env(p, f->env, err);
	if (r >= 0 && f->user)
		r = apply_user(p, f->user, err);
	if (r >= 0)
		r = apply_gids(p, f->gids, err);
	/* No capabilities object means the process keeps all: nothing to add to. */
	if (r >= 0 && p->has_caps)
		r = apply_caps(p, f->caps, err);
	return r;
}

static int process_from_file(const char *path, bool tty, struct rt_process *p,
			     struct hutch_err *err)
{
	_cleanup_free_ char *json = NULL;
	int r = hutch_read_file_at(AT_FDCWD, path, PROCESS_MAX, &json, NULL, err);
	if (r >= 0)
		r = rt_process_parse(json, p, err);
	if (r < 0)
		return hutch_err_prefix(err, "--process %s: ", path);
	p->terminal = p->terminal || tty; /* conmon passes --tty beside the file */
	return 0;
}

static int exec_opts(const struct rt_opt *opts, struct rt_exec_opts *o, struct hutch_err *err)
{
	size_t n = rt_verb_find("exec")->n_opts;
	o->pid_file = rt_opt(opts, n, "pid-file");
	o->console_socket = rt_opt(opts, n, "console-socket");
	o->detach = rt_opt(opts, n, "detach") != NULL;
	return rt_parse_preserve_fds(rt_opt(opts, n, "preserve-fds"), &o->preserve_fds, err);
}

RT_VERB_FN(exec)
{
	_cleanup_(exec_flags_free) struct exec_flags f = { 0 };
	_cleanup_(rt_exec_target_free) struct rt_exec_target t = { 0 };
	_cleanup_(rt_process_free) struct rt_process p = { 0 };
	struct rt_exec_opts o = { 0 };
	size_t n = rt_verb_find("exec")->n_opts;

	TRY(read_flags(argc, argv, first, opts, &f, err));
	TRY(exec_opts(opts, &o, err));
	/* Set on the process, checked (with the spec's own) where it runs. */
	const char *apparmor = rt_opt(opts, n, "apparmor"),
		   *label = rt_opt(opts, n, "process-label");
	TRY(rt_exec_target_open(g, f.id, rt_opt(opts, n, "ignore-paused") != NULL, &t, err));
	if (f.process_file)
		TRY(process_from_file(f.process_file, f.tty, &p, err));
	else
		TRY(process_from_spec(t.spec, &f, &p, err));
	if (apparmor && *apparmor) {
		free(p.apparmor_profile);
		p.apparmor_profile = hutch_xstrdup(apparmor);
	}
	if (label && *label) {
		free(p.selinux_label);
		p.selinux_label = hutch_xstrdup(label);
	}
	rt_process_skip_ambient(&p);
	return rt_exec_run(&t, &p, &o, err);
}
