/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The warm pool (docs/pool.md): `hutch pool serve` keeps N sandboxes made up to the point
 * where only a request's parts are missing (rt-sandbox-pool.c); each is kept by a supervisor
 * that takes one request and is then torn down (rt-sandbox-pool-slot.c); `hutch sandbox
 * --pool` sends the request (rt-sandbox-pool-client.c); the messages (rt-sandbox-pool-msg.c).
 */
#ifndef HUTCH_RT_SANDBOX_POOL_H
#define HUTCH_RT_SANDBOX_POOL_H

#include "rt-sandbox.h"

struct rt_sb_plan;
struct cg;

/* A request's largest message: a larger one (a huge argv or env) runs cold. */
#define RT_SB_POOL_MSG_MAX (128 * 1024)

int rt_sb_set_pool(void *p, const char *v, struct hutch_err *err);
/* The pool's socket and lock: ROOT/.sandbox/pools/NAME.{sock,lock}. A directory fd. */
int rt_sb_pools_dir(bool make, struct hutch_err *err);

/* What travels from the client to the pooled sandbox: the options a request may set
 * (command, env, cwd, workspace, limits, timeout, report), its fds, and its shape: the
 * options that must be the pool's (rt_sb_pool_shape). */
#define RT_SB_POOL_BINDS 8 /* a request with more runs cold */
struct rt_sb_pool_req {
	struct rt_sb_opts o; /* only the fields above are set */
	char **shape;
	int stdio[3];
	int ws_fd, ws_tree; /* --workspace: O_PATH, and a detached copy of its tree */
	int bind_fd[RT_SB_POOL_BINDS], bind_tree[RT_SB_POOL_BINDS]; /* per o.binds, the same */
};
void rt_sb_pool_req_clear(struct rt_sb_pool_req *r);
/* "FLAG=VALUE" for each option a pooled sandbox cannot change. */
char **rt_sb_pool_shape(const struct rt_sb_opts *o);
/* The first of req's shape that differs from pool's, as a reason (NULL: none). An empty
 * --image or --network in a request means the pool's. */
char *rt_sb_pool_shape_differs(char *const *req, char *const *pool);
struct rt_sb_src;
int rt_sb_pool_req_send(int sock, const struct rt_sb_opts *o, const int stdio[3],
			const struct rt_sb_src *ws, const struct rt_sb_src *binds,
			struct hutch_err *err);
int rt_sb_pool_req_recv(int sock, struct rt_sb_pool_req *r, struct hutch_err *err);

/* The answers to a client: 'C' run it cold (err.msg: why; the pool's image and network, for
 * a request that named none), 'D' refused (not root), 'X' done (status, and err when hutch
 * failed). pool: the pool's options, or NULL. */
struct rt_sb_pool_reply {
	char kind;
	int status;
	struct hutch_err err;
	int network;
	char image[4096];
};
int rt_sb_pool_reply(int sock, const struct rt_sb_opts *pool, char kind, int status,
		     const struct hutch_err *e);

/* The command a pooled init's child runs (rt_sb_pool_init), sent by its supervisor. */
struct rt_sb_pool_cmd {
	char **argv, **env, *cwd;
	int stdio[3];
};
int rt_sb_pool_cmd_send(int sock, char *const *argv, char *const *env, const char *cwd,
			const int stdio[3], struct hutch_err *err);
int rt_sb_pool_cmd_recv(int sock, struct rt_sb_pool_cmd *c);
/* In the errno the init reports: the request's cwd could not be entered (not the program). */
#define RT_SB_POOL_CWD_ERR 0x10000
__attribute__((noreturn)) void rt_sb_pool_init(int tramp_fd, char **targv, char *const *envp,
					       int sync_fd);

/* rt-sandbox-pool-slot.c: a pooled sandbox's supervisor. Its options (the pool's profile) are
 * amended by the request it takes. */
struct rt_sb_pool_slot {
	const char *pool;
	int chan;      /* to the pool: 'R' when ready; a client's connection comes back */
	int conn;      /* that connection (-1: none yet) */
	int hangup[3]; /* chan, conn, -1: either gone kills the command */
	struct rt_sb_opts *o;
	char **shape;	  /* the pool's */
	double served_at; /* when the request came (hutch_now_ms) */
};
/* Once started: waits for a request that fits, then attaches its workspace, writes its
 * limits and sends its command to the init's waiting child (init_sock). */
struct rt_sb_pool_sandbox {
	struct rt_sb_plan *plan;
	struct cg *cg;
	pid_t init;
	int init_sock;
	struct rt_sb_setid *setid; /* planned anew for the request's workspace */
};
int rt_sb_pool_take(struct rt_sb_pool_slot *s, const struct rt_sb_pool_sandbox *sb,
		    struct hutch_err *err);

/* rt-sandbox-pool-mounts.c: why the request's binds can't go into this sandbox (no mount
 * point of their kind in its rootfs; NULL: they can), and the workspace and binds attached:
 * each checked and idmapped as a cold run's, moved in by a helper that joined the mount
 * namespace of the init. The binds move from r into o (the report lists them). */
/* Each fd of a request is what it must be (a workspace and each bind the root of its tree,
 * a report's directory and single name, stdio never a directory), --workspace-owner never
 * root's, no workspace or rw bind holding hutch's own directories. */
int rt_sb_pool_req_check(const struct rt_sb_pool_req *r, struct hutch_err *err);
char *rt_sb_pool_binds_misfit(const struct rt_sb_plan *p, const struct rt_sb_pool_req *r);
int rt_sb_pool_attach(struct rt_sb_opts *o, struct rt_sb_plan *p, pid_t init,
		      struct rt_sb_pool_req *r, struct hutch_err *err);

/* rt-sandbox-pool-client.c: `hutch sandbox --pool`: the command's status when pooled, or
 * RT_SB_POOL_COLD with o->pool_why set when it must run cold. */
#define RT_SB_POOL_COLD 1000
/* ... or refused in the client (err: why), with o->pool_why set, before the pool was asked. */
#define RT_SB_POOL_REFUSED 1001
int rt_sb_pool_run(struct rt_sb_opts *o, struct rt_sb_ticket *t, struct hutch_err *err);

#endif
