// SPDX-License-Identifier: Apache-2.0
/*
 * The sandbox's process from its options over the image's own config, as `docker run` reads
 * one: Env beneath --env, WorkingDir unless --cwd, Entrypoint + Cmd with `-- CMD` replacing
 * Cmd and --entrypoint replacing both, and User unless --user. One rule differs: an image's
 * User is honoured only when it is not root. Root inside is the caller's decision
 * (--as-root), and an image saying "root", or nothing, gets the non-root default.
 */
#include "rt-sandbox.h"
#include "rt-sandbox-plan.h"
#include "img.h"
#include "img-rootfs.h"

#include <fcntl.h>
#include <string.h>

/* Entrypoint + Cmd, each replaced as docker run replaces them. */
static char **plan_argv(const struct rt_sb_opts *o, const struct img_run_config *c)
{
	char **argv = hutch_xcalloc(1, sizeof(char *));
	size_t n = 0;
	char *const *ep = o->has_entrypoint ? NULL : c ? c->entrypoint : NULL;
	/* --entrypoint drops the image's Cmd too: its arguments were the old program's. */
	char *const *cmd = o->command ? o->command : o->has_entrypoint ? NULL : c ? c->cmd : NULL;
	if (o->has_entrypoint && o->entrypoint && *o->entrypoint)
		hutch_strv_push(&argv, &n, o->entrypoint);
	for (size_t i = 0; ep && ep[i]; i++)
		hutch_strv_push(&argv, &n, ep[i]);
	for (size_t i = 0; cmd && cmd[i]; i++)
		hutch_strv_push(&argv, &n, cmd[i]);
	return argv;
}

/* The image's User when it is not root: looked up in the image's own /etc/passwd and
 * /etc/group (inside the rootfs), a number without a group getting gid 0 as in docker. */
static int plan_user(const struct rt_sb_opts *o, struct rt_sb_plan *p, struct hutch_err *err)
{
	const char *user = p->image_config ? p->image_config->user : NULL;
	p->uid = rt_sb_root_inside(o) ? 0 : o->uid;
	p->gid = rt_sb_root_inside(o) ? 0 : o->gid;
	if (!user || o->has_user || rt_sb_root_inside(o))
		return 0;
	uint32_t uid, gid;
	/* A number needs no file (a name fails on a rootfs that would not open). */
	_cleanup_close_ int rootfd = open(p->rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (img_resolve_user(rootfd, user, &uid, &gid, err) < 0)
		return hutch_err_prefix(err, "--image %s: config.User: ", o->image);
	if (uid == 0)
		return 0; /* root: the default, unless the caller asks for --as-root */
	if (uid >= RT_SB_ID_SPAN || gid >= RT_SB_ID_SPAN)
		return hutch_fail(err, ERANGE,
				  "--image %s: config.User %s: ids inside are 0-%u; give --user",
				  o->image, user, RT_SB_ID_SPAN - 1);
	p->uid = uid;
	p->gid = gid;
	return 0;
}

int rt_sb_plan_process(const struct rt_sb_opts *o, struct rt_sb_plan *p, struct hutch_err *err)
{
	const struct img_run_config *c = p->image_config;
	TRY(plan_user(o, p, err));
	for (size_t i = 0; c && c->env && c->env[i]; i++)
		if (!strchr(c->env[i], '=') || c->env[i][0] == '=')
			return hutch_fail(err, EINVAL,
					  "--image %s: config.Env[%zu]: expected KEY=VALUE",
					  o->image, i);
	p->image_env = c && c->env ? hutch_strv_dup((const char *const *)c->env) : NULL;
	p->cwd = hutch_xstrdup(o->cwd		     ? o->cwd
			       : c && c->working_dir ? c->working_dir
			       : o->workspace	     ? "/workspace"
						     : "/");
	if (p->cwd[0] != '/')
		return hutch_fail(err, EINVAL, "--image %s: config.WorkingDir %s: not absolute",
				  o->image, p->cwd);
	p->argv = plan_argv(o, c);
	if (!p->argv[0] || !p->argv[0][0])
		return hutch_fail(err, EINVAL,
				  "sandbox: no command (hutch sandbox [OPTIONS] -- CMD), and the "
				  "image %s has no Entrypoint or Cmd",
				  o->image);
	return 0;
}

void rt_sb_plan_clear(struct rt_sb_plan *p)
{
	rt_sb_paths_clear(p);
	free(p->rootfs);
	free(p->image_name);
	free(p->cgroup);
	free(p->binds);
	hutch_strv_free(p->argv);
	hutch_strv_free(p->image_env);
	free(p->cwd);
	if (p->image_config)
		img_run_config_clear(p->image_config);
	free(p->image_config);
	if (p->has_image_pin) /* the run is over: its layers are prune's again */
		img_unpin(p->image_pin, steal_ptr(p->image_pin_path));
	p->has_image_pin = false;
	img_store_free(steal_ptr(p->held_store));
}
