// SPDX-License-Identifier: Apache-2.0
/*
 * The pool's messages, each one SOCK_SEQPACKET datagram with its fds: a client's request
 * (a fixed head, then tagged NUL-terminated strings: never JSON, since an argv need not be
 * UTF-8), the answers to it, and the command a pooled init runs. What a request may not
 * change is compared as its shape: one "FLAG=VALUE" string per option.
 */
#include "rt-sandbox-pool.h"
#include "rt-sandbox-plan.h"

#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>

#define POOL_MAGIC 0x68706c31U /* "hpl1": the same hutch on both sides */
#define POOL_MAX_FDS (6 + 2 * RT_SB_POOL_BINDS)

/* Then, shifted by REQ_SET_SHIFT, which limits the request gave (RT_SB_SET_*). */
enum { REQ_COMMAND = 1, REQ_WS = 2, REQ_OWNER = 4, REQ_REPORT_DIR = 8, REQ_REPORT_FD = 16 };
#define REQ_SET_SHIFT 5

struct req_head {
	uint32_t magic, flags;
	uint32_t owner_uid, owner_gid;
	uint32_t n_binds;
	int64_t pids;
	uint64_t memory;
	double cpus, timeout, grace, lock_wait_ms;
};

struct buf {
	char *data;
	size_t len;
};

static void put(struct buf *b, char tag, const char *s)
{
	size_t n = strlen(s) + 2;
	b->data = hutch_xrealloc(b->data, b->len + n);
	b->data[b->len] = tag;
	memcpy(b->data + b->len + 1, s, n - 1);
	b->len += n;
}

static int send_msg(int sock, const void *data, size_t len, const int *fds, size_t n_fds,
		    struct hutch_err *err)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * POOL_MAX_FDS)];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = (void *)data, .iov_len = len };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	if (len > RT_SB_POOL_MSG_MAX)
		return hutch_fail(err, E2BIG, "--pool: the request is larger than %d bytes",
				  RT_SB_POOL_MSG_MAX);
	if (n_fds) {
		memset(&u, 0, sizeof(u));
		m.msg_control = u.buf;
		m.msg_controllen = CMSG_SPACE(sizeof(int) * n_fds);
		struct cmsghdr *c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * n_fds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * n_fds);
	}
	ssize_t w;
	do
		w = sendmsg(sock, &m, MSG_NOSIGNAL);
	while (w < 0 && errno == EINTR);
	return w < 0 ? hutch_fail_errno(err, errno, "--pool: send") : 0;
}

/* One message into buf (NUL-terminated past its end), its fds (close-on-exec) into fds and,
 * when cred is given, its sender's credentials (uid -1 when it came without). The length, 0
 * at the peer's end. */
static ssize_t recv_msg(int sock, char *buf, size_t cap, int *fds, size_t *n_fds,
			struct ucred *cred)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * POOL_MAX_FDS) + CMSG_SPACE(sizeof(struct ucred))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = buf, .iov_len = cap - 1 };
	struct msghdr m = { .msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = u.buf,
			    .msg_controllen = sizeof(u.buf) };
	ssize_t n;
	*n_fds = 0;
	do
		n = recvmsg(sock, &m, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (cred)
		*cred = (struct ucred){ .pid = 0, .uid = (uid_t)-1, .gid = (gid_t)-1 };
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
		if (cred && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS &&
		    c->cmsg_len == CMSG_LEN(sizeof(*cred)))
			memcpy(cred, CMSG_DATA(c), sizeof(*cred));
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k; i++) {
			int fd;
			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (*n_fds < POOL_MAX_FDS)
				fds[(*n_fds)++] = fd;
			else
				close(fd);
		}
	}
	if (m.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) {
		for (size_t i = 0; i < *n_fds; i++)
			close(fds[i]);
		*n_fds = 0;
		return -EMSGSIZE;
	}
	buf[n] = '\0';
	return n;
}

/* ---- the shape ---- */

static void shape_add(char ***v, size_t *n, const char *flag, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void shape_add(char ***v, size_t *n, const char *flag, const char *fmt, ...)
{
	va_list ap;
	char val[512];
	va_start(ap, fmt);
	vsnprintf(val, sizeof(val), fmt, ap);
	va_end(ap);
	_cleanup_free_ char *s = hutch_xasprintf("%s=%s", flag, val);
	hutch_strv_push(v, n, s);
}

/* The bytes of n items as hex: the egress lists, compared as they were parsed. */
static char *hex(const void *p, size_t len)
{
	char *s = hutch_xcalloc(1, 2 * len + 1);
	for (size_t i = 0; i < len; i++)
		sprintf(s + 2 * i, "%02x", ((const unsigned char *)p)[i]);
	return s;
}

static void shape_image(const struct rt_sb_opts *o, char ***v, size_t *n)
{
	struct stat st;
	if (!o->image)
		shape_add(v, n, "--image", "%s", "");
	else if (rt_sb_image_is_dir(o->image) && stat(o->image, &st) == 0)
		shape_add(v, n, "--image", "dir:%llu:%llu", (unsigned long long)st.st_dev,
			  (unsigned long long)st.st_ino);
	else
		shape_add(v, n, "--image", "%s", o->image);
}

static void shape_egress(const struct rt_sb_opts *o, char ***v, size_t *n)
{
	_cleanup_free_ char *allow = hex(o->allow_cidr, o->n_allow_cidr * sizeof(*o->allow_cidr));
	_cleanup_free_ char *deny = hex(o->deny_cidr, o->n_deny_cidr * sizeof(*o->deny_cidr));
	_cleanup_free_ char *pub = hex(o->publish, o->n_publish * sizeof(*o->publish));
	_cleanup_free_ char *sub = hex(&o->subnet, sizeof(o->subnet));
	_cleanup_free_ char *hosts = hutch_xstrdup(""), *dns = hutch_xstrdup("");
	for (size_t i = 0; i < o->n_allow_host; i++) {
		char *h = hutch_xasprintf("%s%s:%u,", hosts, o->allow_host[i].pattern,
					  o->allow_host[i].port);
		free(hosts);
		hosts = h;
	}
	for (size_t i = 0; i < o->n_dns; i++) {
		char *d = hutch_xasprintf("%s%s,", dns, o->dns[i]);
		free(dns);
		dns = d;
	}
	shape_add(v, n, "--subnet", "%s/%u/%s", sub, o->mtu, dns);
	shape_add(v, n, "--egress", "%d/%u/%d/%s/%s/%s", o->egress_restricted, o->max_connections,
		  o->deny_host_loopback, hosts, allow, deny);
	shape_add(v, n, "--publish", "%s", pub);
}

char **rt_sb_pool_shape(const struct rt_sb_opts *o)
{
	static const char *const nets[] = { "none", "host", "bridge" };
	char **v = hutch_xcalloc(1, sizeof(char *));
	size_t n = 0;
	shape_image(o, &v, &n);
	shape_add(&v, &n, "--network", "%s", o->network_set ? nets[o->network] : "");
	shape_add(&v, &n, "--user", "%d:%u:%u", o->has_user, o->uid, o->gid);
	shape_add(&v, &n, "--as-root", "%d", o->as_root);
	shape_add(&v, &n, "--host-root", "%d", o->host_root);
	shape_add(&v, &n, "--tty", "%d", o->tty);
	shape_add(&v, &n, "--hostname", "%s", o->hostname ? o->hostname : "");
	shape_add(&v, &n, "--entrypoint", "%d:%s", o->has_entrypoint,
		  o->entrypoint ? o->entrypoint : "");
	shape_add(&v, &n, "--isolation", "%d", (int)o->isolation);
	shape_add(&v, &n, "--runtime", "%s", o->runtime ? o->runtime : "native");
	shape_add(&v, &n, "--name", "%s", o->name ? o->name : "");
	for (size_t i = 0; i < o->n_tmpfs; i++)
		shape_add(&v, &n, "--tmpfs", "%s:%llu", o->tmpfs[i].path,
			  (unsigned long long)o->tmpfs[i].size);
	_cleanup_free_ char *uc = hex(o->ucount, sizeof(o->ucount));
	shape_add(&v, &n, "--ucount", "%s", uc);
	shape_egress(o, &v, &n);
	return v;
}

char *rt_sb_pool_shape_differs(char *const *req, char *const *pool)
{
	size_t i = 0;
	for (; req[i] && pool[i]; i++) {
		const char *eq = strchr(req[i], '=');
		size_t k = eq ? (size_t)(eq - req[i]) : strlen(req[i]);
		bool any = eq && !eq[1] &&
			   (!strcmp(req[i], "--image=") || !strcmp(req[i], "--network="));
		if (!any && strcmp(req[i], pool[i]))
			return hutch_xasprintf("%.*s differs from the pool's profile", (int)k,
					       req[i]);
	}
	return req[i] || pool[i] ? hutch_xstrdup("--tmpfs differs from the pool's profile") : NULL;
}

/* ---- the request ---- */

int rt_sb_pool_req_send(int sock, const struct rt_sb_opts *o, const int stdio[3],
			const struct rt_sb_src *ws, const struct rt_sb_src *binds,
			struct hutch_err *err)
{
	struct req_head h = { .magic = POOL_MAGIC,
			      .owner_uid = o->owner_uid,
			      .owner_gid = o->owner_gid,
			      .pids = o->pids,
			      .memory = o->memory,
			      .cpus = o->cpus,
			      .timeout = o->timeout,
			      .grace = o->grace,
			      .lock_wait_ms = o->lock_wait_ms };
	int fds[POOL_MAX_FDS] = { stdio[0], stdio[1], stdio[2] };
	size_t n_fds = 3;
	_cleanup_strv_ char **shape = rt_sb_pool_shape(o);
	struct buf b = { .data = hutch_xmalloc(sizeof(h)), .len = sizeof(h) };
	h.flags = (o->command ? REQ_COMMAND : 0) | (o->has_owner ? REQ_OWNER : 0) |
		  (o->limits_set & RT_SB_SET_ALL) << REQ_SET_SHIFT;
	for (size_t i = 0; o->command && o->command[i]; i++)
		put(&b, 'a', o->command[i]);
	for (size_t i = 0; i < o->n_env; i++)
		put(&b, 'e', o->env[i]);
	for (char **s = shape; *s; s++)
		put(&b, 's', *s);
	if (o->cwd)
		put(&b, 'c', o->cwd);
	if (o->workspace && ws->fd >= 0) {
		h.flags |= REQ_WS;
		put(&b, 'w', o->workspace);
		fds[n_fds++] = ws->fd, fds[n_fds++] = ws->tree;
	}
	if (o->n_binds > RT_SB_POOL_BINDS) {
		free(b.data);
		return hutch_fail(err, E2BIG, "--bind: more than %d in a pooled request",
				  RT_SB_POOL_BINDS);
	}
	h.n_binds = (uint32_t)o->n_binds;
	for (size_t i = 0; i < o->n_binds; i++) { /* "ro:DST:SRC": neither holds a ':' */
		_cleanup_free_ char *v = hutch_xasprintf("%s:%s:%s", o->binds[i].ro ? "ro" : "rw",
							 o->binds[i].dst, o->binds[i].src);
		put(&b, 'B', v);
		fds[n_fds++] = binds[i].fd, fds[n_fds++] = binds[i].tree;
	}
	if (o->report)
		put(&b, 'r', o->report);
	if (o->report_dir_fd >= 0 && o->report_name) {
		h.flags |= REQ_REPORT_DIR;
		put(&b, 'n', o->report_name);
		fds[n_fds++] = o->report_dir_fd;
	} else if (o->report_fd >= 0) {
		h.flags |= REQ_REPORT_FD;
		fds[n_fds++] = o->report_fd;
	}
	memcpy(b.data, &h, sizeof(h));
	int r = send_msg(sock, b.data, b.len, fds, n_fds, err);
	free(b.data);
	return r;
}

static int req_bind(struct rt_sb_opts *o, const char *v)
{
	const char *dst = v + 3, *src = strlen(v) > 3 ? strchr(dst, ':') : NULL;
	if (!src || v[2] != ':' || o->n_binds >= RT_SB_POOL_BINDS)
		return -EBADMSG;
	o->binds = hutch_xrealloc(o->binds, (o->n_binds + 1) * sizeof(*o->binds));
	o->binds[o->n_binds++] =
		(struct rt_sb_bind){ .src = hutch_xstrdup(src + 1),
				     .dst = hutch_xasprintf("%.*s", (int)(src - dst), dst),
				     .ro = !strncmp(v, "ro", 2) };
	return 0;
}

/* The tagged strings of a message into r's fields. */
static int req_strings(const char *p, const char *end, struct rt_sb_pool_req *r)
{
	size_t n_argv = 0, n_shape = 0;
	struct rt_sb_opts *o = &r->o;
	r->shape = hutch_xcalloc(1, sizeof(char *));
	for (; p < end; p += strlen(p) + 1) {
		char tag = *p++;
		char **one = tag == 'c'	  ? &o->cwd
			     : tag == 'w' ? &o->workspace
			     : tag == 'r' ? &o->report
			     : tag == 'n' ? &o->report_name
					  : NULL;
		if (tag == 'a')
			hutch_strv_push(&o->command, &n_argv, p);
		else if (tag == 'e')
			hutch_strv_push(&o->env, &o->n_env, p);
		else if (tag == 's')
			hutch_strv_push(&r->shape, &n_shape, p);
		else if (tag == 'B') {
			if (req_bind(o, p) < 0)
				return -EBADMSG;
		} else if (one && !*one)
			*one = hutch_xstrdup(p);
		else
			return -EBADMSG;
	}
	return 0;
}

static int take_fds(struct rt_sb_pool_req *r, const struct req_head *h, const int *fds, size_t n)
{
	uint32_t flags = h->flags;
	size_t want = 3 + (flags & REQ_WS ? 2 : 0) + 2 * (size_t)h->n_binds +
		      (flags & (REQ_REPORT_DIR | REQ_REPORT_FD) ? 1 : 0);
	if (n != want || h->n_binds > RT_SB_POOL_BINDS)
		return -EBADMSG;
	size_t i = 0;
	for (; i < 3; i++)
		r->stdio[i] = fds[i];
	if (flags & REQ_WS)
		r->ws_fd = fds[i], r->ws_tree = fds[i + 1], i += 2;
	for (size_t k = 0; k < h->n_binds; k++, i += 2)
		r->bind_fd[k] = fds[i], r->bind_tree[k] = fds[i + 1];
	if (flags & REQ_REPORT_DIR)
		r->o.report_dir_fd = fds[i];
	if (flags & REQ_REPORT_FD)
		r->o.report_fd = fds[i];
	return 0;
}

/* Who sent the message, as the kernel stamped it when it was sent (SO_PASSCRED, set on the
 * pool's socket before any client connected): not whoever connected, who may have handed
 * the connection on. A live process of root's. */
static bool sender_is_root(const struct ucred *cr)
{
	return cr->uid == 0 && cr->pid > 0 && (kill(cr->pid, 0) == 0 || errno == EPERM);
}

static void req_reset(struct rt_sb_pool_req *r)
{
	*r = (struct rt_sb_pool_req){ .stdio = { -1, -1, -1 }, .ws_fd = -1, .ws_tree = -1 };
	for (size_t i = 0; i < RT_SB_POOL_BINDS; i++)
		r->bind_fd[i] = r->bind_tree[i] = -1;
	r->o.report_fd = r->o.report_dir_fd = -1;
}

int rt_sb_pool_req_recv(int sock, struct rt_sb_pool_req *r, struct hutch_err *err)
{
	struct req_head h;
	int fds[POOL_MAX_FDS];
	size_t n_fds = 0;
	_cleanup_free_ char *buf = hutch_xmalloc(RT_SB_POOL_MSG_MAX + 1);
	req_reset(r);
	rt_sb_opts_init(&r->o);
	struct ucred cr;
	ssize_t n = recv_msg(sock, buf, RT_SB_POOL_MSG_MAX + 1, fds, &n_fds, &cr);
	if (n < 0)
		return hutch_fail_errno(err, (int)-n, "pool: the request");
	int e = sender_is_root(&cr) ? 0 : EPERM;
	if ((size_t)n >= sizeof(h))
		memcpy(&h, buf, sizeof(h));
	if (!e && ((size_t)n < sizeof(h) || h.magic != POOL_MAGIC ||
		   ((size_t)n > sizeof(h) && buf[n - 1] != '\0')))
		e = EBADMSG;
	if (!e && take_fds(r, &h, fds, n_fds) < 0)
		e = EBADMSG;
	if (e) {
		for (size_t i = 0; i < n_fds; i++)
			close(fds[i]);
		if (e == EPERM)
			return hutch_fail(err, e,
					  "pool: a request sent by uid %d (pid %d) refused: "
					  "the pool serves root (uid 0) alone",
					  (int)cr.uid, (int)cr.pid);
		return hutch_fail(err, e, "pool: a malformed request (another hutch version?)");
	}
	if (req_strings(buf + sizeof(h), buf + n, r) < 0 || r->o.n_binds != h.n_binds)
		return hutch_fail(err, EBADMSG, "pool: a malformed request");
	if ((h.flags & REQ_COMMAND) && !r->o.command)
		r->o.command = hutch_xcalloc(1, sizeof(char *));
	r->o.has_owner = h.flags & REQ_OWNER;
	r->o.owner_uid = h.owner_uid, r->o.owner_gid = h.owner_gid;
	r->o.limits_set = (h.flags >> REQ_SET_SHIFT) & RT_SB_SET_ALL;
	r->o.pids = h.pids, r->o.memory = h.memory, r->o.cpus = h.cpus;
	r->o.timeout = h.timeout, r->o.grace = h.grace;
	r->o.lock_wait_ms = h.lock_wait_ms;
	return 0;
}

void rt_sb_pool_req_clear(struct rt_sb_pool_req *r)
{
	for (int i = 0; i < 3; i++)
		if (r->stdio[i] >= 0)
			close(r->stdio[i]);
	if (r->ws_fd >= 0)
		close(r->ws_fd);
	if (r->ws_tree >= 0)
		close(r->ws_tree);
	if (r->o.report_fd >= 0)
		close(r->o.report_fd);
	r->o.report_fd = -1;
	for (size_t i = 0; i < RT_SB_POOL_BINDS; i++) {
		if (r->bind_fd[i] >= 0)
			close(r->bind_fd[i]);
		if (r->bind_tree[i] >= 0)
			close(r->bind_tree[i]);
	}
	rt_sb_opts_free(&r->o);
	hutch_strv_free(r->shape);
	req_reset(r);
}

int rt_sb_pool_reply(int sock, const struct rt_sb_opts *pool, char kind, int status,
		     const struct hutch_err *e)
{
	struct hutch_err ignored = { 0 };
	struct rt_sb_pool_reply r = { .kind = kind, .status = status, .network = -1 };
	if (e)
		r.err = *e;
	if (pool && pool->image && strlen(pool->image) < sizeof(r.image))
		snprintf(r.image, sizeof(r.image), "%s", pool->image);
	if (pool)
		r.network = (int)pool->network;
	return send_msg(sock, &r, sizeof(r), NULL, 0, &ignored);
}

/* ---- the command, to the init ---- */

int rt_sb_pool_cmd_send(int sock, char *const *argv, char *const *env, const char *cwd,
			const int stdio[3], struct hutch_err *err)
{
	struct buf b = { 0 };
	for (size_t i = 0; argv[i]; i++)
		put(&b, 'a', argv[i]);
	for (size_t i = 0; env[i]; i++)
		put(&b, 'e', env[i]);
	put(&b, 'c', cwd);
	int r = send_msg(sock, b.data, b.len, stdio, 3, err);
	free(b.data);
	return r;
}

/* In the init, after the filter: what it holds lives until its execve or its end. */
int rt_sb_pool_cmd_recv(int sock, struct rt_sb_pool_cmd *c)
{
	int fds[POOL_MAX_FDS];
	size_t n_fds = 0, n_argv = 0, n_env = 0;
	char *buf = hutch_xmalloc(RT_SB_POOL_MSG_MAX + 1);
	ssize_t n = recv_msg(sock, buf, RT_SB_POOL_MSG_MAX + 1, fds, &n_fds, NULL);
	if (n <= 0 || n_fds != 3)
		return -EBADMSG;
	*c = (struct rt_sb_pool_cmd){ .argv = hutch_xcalloc(1, sizeof(char *)),
				      .env = hutch_xcalloc(1, sizeof(char *)),
				      .stdio = { fds[0], fds[1], fds[2] } };
	for (const char *p = buf; p < buf + n; p += strlen(p) + 1) {
		char tag = *p++;
		if (tag == 'a')
			hutch_strv_push(&c->argv, &n_argv, p);
		else if (tag == 'e')
			hutch_strv_push(&c->env, &n_env, p);
		else if (tag == 'c')
			c->cwd = (char *)p;
	}
	return n_argv && c->cwd ? 0 : -EBADMSG;
}
