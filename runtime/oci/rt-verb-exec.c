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
	const char *process_file, *cwd, *user, *console_socket, *pid_file, *preserve_fds;
	const char *apparmor, *process_label;
	struct rt_strv env, gids, caps, cgroups; /* repeatable flags, in order */
	bool no_new_privs, tty, detach, ignore_paused;
};

#define FLAG(field) offsetof(struct exec_flags, field), NULL
static const struct rt_flag exec_flags[] = {
	{ "process", 'p', RT_FLAG_STR, "an OCI process JSON file to run instead of COMMAND",
	  FLAG(process_file) },
	{ "cwd", 0, RT_FLAG_STR, "working directory inside the container", FLAG(cwd) },
	{ "env", 'e', RT_FLAG_STRV, "set KEY=VALUE in the environment (repeatable)", FLAG(env) },
	{ "user", 'u', RT_FLAG_STR, "run as UID[:GID] (numbers)", FLAG(user) },
	{ "additional-gids", 'g', RT_FLAG_STRV, "add a supplementary group id (repeatable)",
	  FLAG(gids) },
	{ "cap", 'c', RT_FLAG_STRV, "add a capability (repeatable)", FLAG(caps) },
	{ "no-new-privs", 0, RT_FLAG_BOOL, "set no_new_privs for the process", FLAG(no_new_privs) },
	{ "tty", 't', RT_FLAG_BOOL, "allocate a pseudo-terminal", FLAG(tty) },
	{ "console-socket", 0, RT_FLAG_STR, "unix socket that receives the pty master fd",
	  FLAG(console_socket) },
	{ "detach", 'd', RT_FLAG_BOOL, "return once the process runs", FLAG(detach) },
	{ "pid-file", 0, RT_FLAG_STR, "write the process's pid to this file", FLAG(pid_file) },
	{ "preserve-fds", 0, RT_FLAG_STR, "pass N more fds (3..3+N-1) to the process",
	  FLAG(preserve_fds) },
	{ "apparmor", 0, RT_FLAG_STR, "AppArmor profile (not supported)", FLAG(apparmor) },
	{ "process-label", 0, RT_FLAG_STR, "SELinux label (not supported)", FLAG(process_label) },
	{ "ignore-paused", 0, RT_FLAG_BOOL, "allow exec in a paused container",
	  FLAG(ignore_paused) },
	{ "cgroup", 0, RT_FLAG_STRV,
	  "join this existing sub-cgroup: [CONTROLLER[,CONTROLLER...]:]PATH (repeatable)",
	  FLAG(cgroups) },
};

/* ID and the command (argv's tail, NULL-terminated), which --process excludes. */
static int check_args(int argc, char **argv, int first, const struct exec_flags *f, char ***cmd,
		      struct hutch_err *err)
{
	if (argc - first < 1)
		return hutch_fail(err, EINVAL, "exec: usage: hutch exec [OPTIONS] ID COMMAND...");
	*cmd = &argv[first + 1];
	if (!f->process_file && !(*cmd)[0])
		return hutch_fail(err, EINVAL, "exec: no command given (or --process FILE)");
	if (!f->process_file)
		return 0;
	/* The file is the whole process: an override beside it would be silently lost. */
	if ((*cmd)[0])
		return hutch_fail(err, EINVAL, "exec: --process cannot be combined with a command");
	const struct {
		const char *name;
		bool set;
	} per_process[] = { { "cwd", f->cwd },		 { "env", f->env.n },
			    { "user", f->user },	 { "additional-gids", f->gids.n },
			    { "cap", f->caps.n },	 { "no-new-privs", f->no_new_privs },
			    { "apparmor", f->apparmor }, { "process-label", f->process_label } };
	for (size_t i = 0; i < ARRAY_SIZE(per_process); i++)
		if (per_process[i].set)
			return hutch_fail(
				err, EINVAL,
				"--%s cannot be combined with --process (set it in the file)",
				per_process[i].name);
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

static int apply_gids(struct rt_process *p, const struct rt_strv *gids, struct hutch_err *err)
{
	size_t n = gids->n, have = p->user.n_additional_gids;
	if (n == 0)
		return 0;
	p->gids_storage = hutch_xrealloc(p->gids_storage, (have + n) * sizeof(gid_t));
	for (size_t i = 0; i < n; i++) {
		uint32_t g;
		if (parse_id(gids->v[i], strlen(gids->v[i]), &g) < 0)
			return hutch_fail(err, EINVAL, "--additional-gids %s: expected a number",
					  gids->v[i]);
		p->gids_storage[have + i] = g;
	}
	p->user.additional_gids = p->gids_storage;
	p->user.n_additional_gids = have + n;
	return 0;
}

/* KEY=VALUE replaces KEY's earlier value (getenv would see the first), else is appended. */
static int apply_env(struct rt_process *p, const struct rt_strv *env, struct hutch_err *err)
{
	char **add = env->v ? env->v : (char *[]){ NULL };
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
static int apply_caps(struct rt_process *p, const struct rt_strv *cv, struct hutch_err *err)
{
	char **caps = cv->v ? cv->v : (char *[]){ NULL };
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

int rt_exec_process_from_spec(struct rt_spec *spec, char *const *cmd, bool tty, const char *cwd,
			      const struct rt_strv *env, struct rt_process *p,
			      struct hutch_err *err)
{
	*p = spec->process;
	spec->process = (struct rt_process){ 0 };
	hutch_strv_free(p->args);
	size_t n = 0;
	while (cmd[n])
		n++;
	p->args = hutch_xcalloc(n + 1, sizeof(char *));
	for (size_t i = 0; i < n; i++)
		p->args[i] = hutch_xstrdup(cmd[i]);
	p->terminal = tty; /* as runc: no terminal unless asked for */
	if (cwd) {
		if (cwd[0] != '/')
			return hutch_fail(err, EINVAL, "--cwd %s: must be an absolute path", cwd);
		free(p->cwd);
		p->cwd = hutch_xstrdup(cwd);
	}
	return apply_env(p, env, err);
}

/* The bundle's process, taken over from the spec, with the command line's changes. */
static int process_from_spec(struct rt_spec *spec, const struct exec_flags *f, char **cmd,
			     struct rt_process *p, struct hutch_err *err)
{
	int r = rt_exec_process_from_spec(spec, cmd, f->tty, f->cwd, &f->env, p, err);
	if (r >= 0 && f->no_new_privs)
		p->no_new_privs = true;
	if (r >= 0 && f->user)
		r = apply_user(p, f->user, err);
	if (r >= 0)
		r = apply_gids(p, &f->gids, err);
	/* No capabilities object means the process keeps all: nothing to add to. */
	if (r >= 0 && p->has_caps)
		r = apply_caps(p, &f->caps, err);
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

static RT_VERB_RUN(verb_exec)
{
	const struct exec_flags *f = flags;
	_cleanup_(rt_exec_target_free) struct rt_exec_target t = { 0 };
	_cleanup_(rt_process_free) struct rt_process p = { 0 };
	struct rt_exec_opts o = { .pid_file = f->pid_file,
				  .console_socket = f->console_socket,
				  .detach = f->detach,
				  .cgroups = f->cgroups.v,
				  .n_cgroups = f->cgroups.n };
	char **cmd = NULL;

	TRY(check_args(argc, argv, first, f, &cmd, err));
	TRY(rt_parse_preserve_fds(f->preserve_fds, &o.preserve_fds, err));
	TRY(rt_exec_target_open(g, argv[first], f->ignore_paused, &t, err));
	if (f->process_file)
		TRY(process_from_file(f->process_file, f->tty, &p, err));
	else
		TRY(process_from_spec(t.spec, f, cmd, &p, err));
	/* Set on the process, checked (with the spec's own) where it runs. */
	if (f->apparmor && *f->apparmor) {
		free(p.apparmor_profile);
		p.apparmor_profile = hutch_xstrdup(f->apparmor);
	}
	if (f->process_label && *f->process_label) {
		free(p.selinux_label);
		p.selinux_label = hutch_xstrdup(f->process_label);
	}
	rt_process_skip_ambient(&p);
	return rt_exec_run(&t, &p, &o, err);
}

const struct rt_verb rt_exec_verb = {
	.name = "exec",
	.summary = "run another process in a running container",
	.usage = "[OPTIONS] ID COMMAND [ARGS...] | [OPTIONS] --process FILE ID",
	.flags = RT_FLAGS(exec_flags, 0),
	.flags_size = sizeof(struct exec_flags),
	.run = verb_exec,
	.fail_status = 255, /* as runc; 126/127 from err.status */
};
