// SPDX-License-Identifier: Apache-2.0
/*
 * A pooled sandbox's supervisor, once the sandbox is started (its init has dropped its
 * privileges and loaded the filter, and forked the process that will be the command, which
 * waits): it tells the pool it is ready, takes one client's connection, and when the request
 * fits the pool's profile gives the sandbox the request's parts: the workspace (an idmapped
 * copy of the client's tree, moved in by a helper that joined the sandbox's mount namespace),
 * the limits, and the command with its stdio, cwd and env, which that process runs.
 */
#include "rt-sandbox-pool.h"
#include "rt-sandbox-plan.h"
#include "hutch-path.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

/* Says 'R' and waits for the pool to hand over a connection; -ECANCELED when it stopped. */
static int next_client(struct rt_sb_pool_slot *s, struct hutch_err *err)
{
	struct hutch_err e = { 0 };
	if (write(s->chan, "R", 1) != 1)
		return hutch_fail(err, ECANCELED, "pool %s: stopped", s->pool);
	int fd = ns_recv_fd(s->chan, &e);
	if (fd < 0)
		return hutch_fail(err, ECANCELED, "pool %s: stopped", s->pool);
	s->conn = s->hangup[1] = fd;
	return 0;
}

static void set_env(struct rt_sb_opts *o, const char *kv)
{
	size_t k = strcspn(kv, "=");
	for (size_t i = 0; i < o->n_env; i++)
		if (!strncmp(o->env[i], kv, k) && (o->env[i][k] == '=' || !o->env[i][k])) {
			free(o->env[i]);
			o->env[i] = hutch_xstrdup(kv);
			return;
		}
	hutch_strv_push(&o->env, &o->n_env, kv);
}

/* The request's options over the pool's: what a cold run of it would have. */
static void amend(struct rt_sb_pool_slot *s, struct rt_sb_pool_req *r)
{
	struct rt_sb_opts *o = s->o;
	hutch_strv_free(o->command); /* none: the image's Cmd, as cold */
	o->command = steal_ptr(r->o.command);
	o->n_command = hutch_strv_len((const char *const *)o->command);
	for (size_t i = 0; i < r->o.n_env; i++)
		set_env(o, r->o.env[i]);
	if (r->o.cwd) {
		free(o->cwd);
		o->cwd = steal_ptr(r->o.cwd);
	}
	o->workspace = steal_ptr(r->o.workspace);
	o->has_owner = r->o.has_owner;
	o->owner_uid = r->o.owner_uid, o->owner_gid = r->o.owner_gid;
	o->memory = r->o.memory, o->cpus = r->o.cpus, o->pids = r->o.pids;
	o->timeout = r->o.timeout, o->grace = r->o.grace;
	o->lock_wait_ms = r->o.lock_wait_ms;
	o->report = steal_ptr(r->o.report);
	o->report_name = steal_ptr(r->o.report_name);
	o->report_dir_fd = r->o.report_dir_fd, r->o.report_dir_fd = -1;
	o->report_fd = r->o.report_fd, r->o.report_fd = -1;
	o->pool = hutch_xstrdup(s->pool);
	o->pool_why = NULL;
}

/* The limits the request did not give are the pool's profile's, as a cold run with that
 * profile and the request's flags would have them (not hutch's defaults). */
static void inherit_limits(const struct rt_sb_opts *pool, struct rt_sb_opts *req)
{
	unsigned set = req->limits_set;
	if (!(set & RT_SB_SET_MEMORY))
		req->memory = pool->memory;
	if (!(set & RT_SB_SET_CPUS))
		req->cpus = pool->cpus;
	if (!(set & RT_SB_SET_PIDS))
		req->pids = pool->pids;
	if (!(set & RT_SB_SET_TIMEOUT))
		req->timeout = pool->timeout;
	if (!(set & RT_SB_SET_GRACE))
		req->grace = pool->grace;
}

/* The request's limits, where they are not the pool's (which the cgroup has). */
static int write_limits(const struct rt_sb_opts *pool, const struct rt_sb_opts *req, struct cg *cg,
			struct hutch_err *err)
{
	struct cg_resources res = { 0 };
	if (!cg ||
	    (req->memory == pool->memory && req->cpus == pool->cpus && req->pids == pool->pids))
		return 0;
	rt_sb_plan_limits(req, &res);
	if (!req->memory && pool->memory) {
		res.mem_limit = (struct cg_i64){ true, -1 };
		if (!cg_is_v2())
			res.mem_kernel_tcp = (struct cg_i64){ true, -1 };
	}
	if (req->cpus <= 0 && pool->cpus > 0)
		res.cpu_quota = (struct cg_i64){ true, -1 };
	if (!req->pids && pool->pids)
		res.pids_limit = (struct cg_i64){ true, -1 };
	int r = cg_apply(cg, &res, err);
	return r < 0 ? hutch_err_prefix(err, "--memory, --cpus, --pids: ") : 0;
}

/* The process a cold run of the amended options would have: argv, env and cwd. */
static int send_command(const struct rt_sb_opts *o, struct rt_sb_plan *p, int init_sock,
			const int stdio[3], struct hutch_err *err)
{
	struct rt_sb_plan t = *p; /* its rootfs, image config and user; the process anew */
	t.argv = t.image_env = NULL;
	t.cwd = NULL;
	int r = rt_sb_plan_process(o, &t, err);
	_cleanup_strv_ char **env = r >= 0 ? rt_sb_plan_env(o, &t) : NULL;
	if (r >= 0)
		r = rt_sb_pool_cmd_send(init_sock, t.argv, env, t.cwd, stdio, err);
	hutch_strv_free(t.image_env);
	hutch_strv_free(p->argv); /* the plan's are the request's now: its messages name them */
	free(p->cwd);
	p->argv = t.argv, p->cwd = t.cwd;
	return r;
}

static int serve(struct rt_sb_pool_slot *s, const struct rt_sb_pool_sandbox *sb,
		 struct rt_sb_pool_req *r, struct hutch_err *err)
{
	inherit_limits(s->o, &r->o);
	int limits = write_limits(s->o, &r->o, sb->cg, err);
	amend(s, r); /* first: a failure below is reported where the request asked */
	if (limits < 0)
		return limits;
	int rr = rt_sb_pool_attach(s->o, sb->plan, sb->init, r, err);
	if (rr < 0)
		return rr;
	/* What the command may leave setid there is walked when it ends, as after a cold run;
	 * since now, before it runs. */
	rt_sb_setid_free(sb->setid);
	rt_sb_setid_plan(s->o, sb->setid);
	rt_sb_setid_resolved(s->o, sb->plan, sb->setid);
	return send_command(s->o, sb->plan, sb->init_sock, r->stdio, err);
}

int rt_sb_pool_take(struct rt_sb_pool_slot *s, const struct rt_sb_pool_sandbox *sb,
		    struct hutch_err *err)
{
	for (;;) {
		struct rt_sb_pool_req r;
		int rr = next_client(s, err);
		if (rr < 0)
			return rr;
		rr = rt_sb_pool_req_recv(s->conn, &r, err);
		if (rr >= 0)
			rr = rt_sb_pool_req_check(&r, err);
		_cleanup_free_ char *why =
			rr < 0 ? NULL : rt_sb_pool_shape_differs(r.shape, s->shape);
		if (rr >= 0 && !why) /* a bind needs its mount point in the rootfs made ahead */
			why = rt_sb_pool_binds_misfit(sb->plan, &r);
		if (rr >= 0 && !why) {
			s->served_at = hutch_now_ms();
			rr = serve(s, sb, &r, err);
			rt_sb_pool_req_clear(&r);
			return rr;
		}
		/* Nothing of it reached the sandbox, which waits for the next one. */
		struct hutch_err cold = { 0 };
		snprintf(cold.msg, sizeof(cold.msg), "%s", why ? why : "");
		rt_sb_pool_reply(s->conn, s->o, why ? 'C' : 'X', RT_SB_EXIT_FAIL,
				 why ? &cold : err);
		rt_sb_pool_req_clear(&r);
		close(s->conn);
		s->conn = s->hangup[1] = -1;
		*err = (struct hutch_err){ 0 };
	}
}
