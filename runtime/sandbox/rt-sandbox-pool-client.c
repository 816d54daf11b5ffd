// SPDX-License-Identifier: Apache-2.0
/*
 * `hutch sandbox --pool NAME`: the client's side. It holds --lock, resolves the workspace as
 * a cold run would (by fd, in its own namespaces), sends the request with its stdio and waits
 * for the status. A pool that is not running, has no sandbox ready, or whose profile the
 * request does not fit sends it back: the sandbox then runs cold, and the report says why.
 */
#include "rt-sandbox-pool.h"
#include "rt-sandbox-plan.h"
#include "rt-sandbox-lock.h"
#include "hutch-ids.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

/* Root's alone (the socket's mode is set after its bind: the directory keeps everyone else
 * out meanwhile), as hutch's other own directories are. */
int rt_sb_pools_dir(bool make, struct hutch_err *err)
{
	struct stat st;
	int fd = rt_sb_subdir("pools", make, err);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0 || st.st_uid != 0 || (st.st_mode & 077)) {
		close(fd);
		return hutch_fail(
			err, EPERM,
			"%s: not a directory of root's alone (mode 0700, uid 0); remove it",
			rt_sb_path("pools"));
	}
	return fd;
}

static int cold(struct rt_sb_opts *o, const char *why)
{
	static char reason[sizeof(((struct hutch_err *)0)->msg)];
	snprintf(reason, sizeof(reason), "%s", why);
	o->pool_why = reason;
	return RT_SB_POOL_COLD;
}

/* The pool's socket, by its directory's fd: no path length limit, no swapped directory. */
static int dial(const char *name, int *sock, struct hutch_err *err)
{
	struct hutch_err e = { 0 };
	_cleanup_close_ int dir = rt_sb_pools_dir(false, &e);
	if (dir < 0)
		return e.code == ENOENT ? -ENOENT : (*err = e, -e.code);
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	snprintf(a.sun_path, sizeof(a.sun_path), "/proc/self/fd/%d/%s.sock", dir, name);
	_cleanup_close_ int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return hutch_fail_errno(err, errno, "--pool %s: socket", name);
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		int r = errno;
		if (r == ENOENT || r == ECONNREFUSED)
			return -ENOENT;
		return hutch_fail_errno(err, r, "--pool %s: connect", name);
	}
	*sock = steal_fd(fd);
	return 0;
}

/* A closed stdio fd goes as /dev/null: the command's is then empty, as a cold run's would
 * be missing. */
static void stdio_fds(int fds[3])
{
	for (int i = 0; i < 3; i++) {
		fds[i] = fcntl(i, F_GETFD) >= 0 ? i : open("/dev/null", O_RDWR | O_CLOEXEC);
	}
}

/* The end: 'C', 'D' or 'X'. */
static int answer(int sock, struct rt_sb_opts *o, struct hutch_err *err)
{
	struct rt_sb_pool_reply r = { 0 };
	ssize_t n;
	do
		n = recv(sock, &r, sizeof(r), 0);
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(r))
		return hutch_fail(err, EPIPE,
				  "--pool %s: the pooled sandbox ended without a status", o->pool);
	r.err.msg[sizeof(r.err.msg) - 1] = '\0';
	r.image[sizeof(r.image) - 1] = '\0';
	if (r.kind == 'C' && !o->image && r.image[0]) /* the pool's, as pooled */
		o->image = hutch_xstrdup(r.image);
	if (r.kind == 'C' && !o->network_set && r.network >= 0)
		o->network = (enum rt_sb_network)r.network;
	if (r.kind == 'C')
		return cold(o, r.err.msg);
	if (r.kind == 'D')
		return hutch_fail(err, EPERM, "--pool %s: %s", o->pool, r.err.msg);
	if (r.kind != 'X')
		return hutch_fail(err, EBADMSG, "--pool %s: a malformed answer", o->pool);
	if (r.err.code) {
		*err = r.err;
		err->status = r.status;
		return -r.err.code;
	}
	return r.status;
}

static void src_close(struct rt_sb_src *s)
{
	if (s->fd >= 0)
		close(s->fd);
	if (s->tree >= 0)
		close(s->tree);
	free(s->real);
}

/* The request, at once (the pool answers a refusal without reading it, and holds the
 * connection until we close it: a close with our request unread would reset it before we read
 * the answer); then the answer. */
static int send_request(int sock, struct rt_sb_opts *o, const struct rt_sb_src *ws,
			const struct rt_sb_src *binds, struct hutch_err *err)
{
	struct hutch_err e = { 0 };
	int fds[3];
	stdio_fds(fds);
	int r = rt_sb_pool_req_send(sock, o, fds, ws, binds, &e);
	for (int i = 0; i < 3; i++)
		if (fds[i] != i)
			close(fds[i]);
	if (r == -E2BIG)
		return cold(o, e.msg);
	if (r < 0 && r != -EPIPE && r != -ECONNRESET) {
		*err = e;
		return r;
	}
	return answer(sock, o, err); /* a refusal may have come first */
}

int rt_sb_pool_run(struct rt_sb_opts *o, struct rt_sb_ticket *t, struct hutch_err *err)
{
	struct hutch_err e = { 0 };
	struct rt_sb_src ws = { .fd = -1, .tree = -1 };
	_cleanup_close_ int sock = -1;
	int r;
	if (geteuid() != 0)
		return hutch_fail(err, EPERM,
				  "--pool %s: a pool serves root (uid 0) alone; run without --pool",
				  o->pool);
	/* Held from here until the status, as a cold run holds it; before a sandbox is taken,
	 * which waits for nobody's lock. A failure: the cold run reports it. */
	double t0 = hutch_now_ms();
	if (rt_sb_lock_enter(o, t, &e) < 0 || rt_sb_lock_wait(o, t, &e) < 0)
		return cold(o, e.msg);
	o->lock_wait_ms = hutch_now_ms() - t0; /* the report's, which the pooled sandbox writes */
	struct rt_sb_src binds[RT_SB_POOL_BINDS];
	size_t n = 0;
	if (o->n_binds > RT_SB_POOL_BINDS) { /* which runs cold */
		snprintf(e.msg, sizeof(e.msg), "--bind: more than %d in a pooled request",
			 RT_SB_POOL_BINDS);
		return cold(o, e.msg);
	}
	r = o->workspace ? rt_sb_resolve_workspace(o->workspace, &ws, &e) : 0;
	for (; r >= 0 && n < o->n_binds; n++)
		r = rt_sb_resolve_bind(&o->binds[n], &binds[n], &e);
	if (r < 0) { /* what a cold run would fail with: the error, not a cold run's */
		*err = e;
		cold(o, e.msg);
		r = RT_SB_POOL_REFUSED;
	} else if ((r = dial(o->pool, &sock, err)) == -ENOENT)
		r = cold(o, "no pool of that name is running");
	else if (r >= 0)
		r = send_request(sock, o, &ws, binds, err);
	src_close(&ws);
	for (size_t i = 0; i < n; i++)
		src_close(&binds[i]);
	return r;
}
