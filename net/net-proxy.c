// SPDX-License-Identifier: Apache-2.0
/*
 * --publish: a TCP relay from listening sockets on the host to the sandbox's address, in a
 * process of hutch's own. A userspace relay rather than DNAT: a published port on 127.0.0.1
 * would need route_localnet for DNAT, and the relay's connections come from the gateway
 * (the host), so the firewall's rules for what the sandbox sends stay as they are (its
 * replies are part of a connection the host opened). Single-threaded, poll(), a fixed table
 * of connections with a buffer per direction; half-closes are passed on.
 */
#include "net-internal.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <arpa/inet.h>

#define CONNS 64
#define BUF 16384

struct pipe_half {
	char buf[BUF];
	size_t len, off;
	bool eof; /* the reading side said so; passed on once buf is drained */
};

struct conn {
	int fd[2]; /* client, sandbox; -1: free slot */
	bool connecting;
	struct pipe_half half[2]; /* half[i]: read from fd[i], written to fd[1 - i] */
};

static void conn_close(struct conn *c)
{
	for (int i = 0; i < 2; i++)
		if (c->fd[i] >= 0)
			close(c->fd[i]);
	c->fd[0] = c->fd[1] = -1;
}

static void accept_one(const struct net_proxy *p, size_t i, struct conn *conns)
{
	int cl = accept4(p->listen_fd[i], NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (cl < 0)
		return;
	struct conn *c = NULL;
	for (size_t k = 0; k < CONNS && !c; k++)
		if (conns[k].fd[0] < 0)
			c = &conns[k];
	int up = c ? socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0) : -1;
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons(p->port[i]),
				  .sin_addr.s_addr = htonl(p->target) };
	if (up < 0 ||
	    (connect(up, (struct sockaddr *)&sa, sizeof(sa)) < 0 && errno != EINPROGRESS)) {
		if (up >= 0)
			close(up);
		close(cl); /* full, or the sandbox refused at once */
		return;
	}
	memset(c, 0, sizeof(*c));
	c->fd[0] = cl;
	c->fd[1] = up;
	c->connecting = true;
}

static short events_of(const struct conn *c, int i)
{
	if (c->connecting)
		return i == 1 ? POLLOUT : 0;
	short ev = 0;
	const struct pipe_half *in = &c->half[i], *out = &c->half[1 - i];
	if (!in->eof && in->len == 0)
		ev |= POLLIN;
	if (out->len > out->off)
		ev |= POLLOUT;
	return ev;
}

/* Moves one connection on; false when it is over. */
static bool conn_step(struct conn *c, const short rev[2])
{
	if (c->connecting) {
		if (!rev[1])
			return true;
		int e = 0;
		socklen_t l = sizeof(e);
		if (getsockopt(c->fd[1], SOL_SOCKET, SO_ERROR, &e, &l) < 0 || e)
			return false;
		c->connecting = false;
		return true;
	}
	for (int i = 0; i < 2; i++) {
		struct pipe_half *in = &c->half[i];
		if (rev[i] & POLLERR)
			return false;
		/* Hung up both ways after its end of file: nothing can reach it any more. */
		if ((rev[i] & POLLHUP) && in->eof && in->len == 0)
			return false;
		if ((rev[i] & (POLLIN | POLLHUP | POLLERR)) && !in->eof && in->len == 0) {
			ssize_t n = read(c->fd[i], in->buf, sizeof(in->buf));
			if (n < 0 && errno != EAGAIN && errno != EINTR)
				return false;
			if (n == 0)
				in->eof = true;
			if (n > 0)
				in->len = (size_t)n, in->off = 0;
		}
		if (in->len > in->off) {
			ssize_t n = send(c->fd[1 - i], in->buf + in->off, in->len - in->off,
					 MSG_NOSIGNAL);
			if (n < 0 && errno != EAGAIN && errno != EINTR)
				return false;
			if (n > 0)
				in->off += (size_t)n;
			if (in->off == in->len)
				in->len = in->off = 0;
		}
		if (in->eof && in->len == 0)
			shutdown(c->fd[1 - i], SHUT_WR);
	}
	return !(c->half[0].eof && c->half[1].eof);
}

int net_proxy_run(const struct net_proxy *p, struct hutch_err *err)
{
	struct conn *conns = hutch_xcalloc(CONNS, sizeof(*conns));
	for (size_t k = 0; k < CONNS; k++)
		conns[k].fd[0] = conns[k].fd[1] = -1;
	struct pollfd pfd[1 + NET_PROXY_MAX + 2 * CONNS];
	int r = 0;
	for (;;) {
		size_t n = 0;
		pfd[n++] = (struct pollfd){ .fd = p->stop_fd, .events = POLLIN };
		for (size_t i = 0; i < p->n; i++)
			pfd[n++] = (struct pollfd){ .fd = p->listen_fd[i], .events = POLLIN };
		for (size_t k = 0; k < CONNS; k++)
			for (int i = 0; i < 2; i++)
				pfd[n++] = (struct pollfd){
					.fd = conns[k].fd[i],
					.events = conns[k].fd[0] >= 0 ? events_of(&conns[k], i) : 0
				};
		if (poll(pfd, n, -1) < 0) {
			if (errno == EINTR)
				continue;
			r = hutch_fail_errno(err, errno, "publish: poll");
			break;
		}
		if (pfd[0].revents)
			break;
		for (size_t i = 0; i < p->n; i++)
			if (pfd[1 + i].revents & POLLIN)
				accept_one(p, i, conns);
		for (size_t k = 0; k < CONNS; k++) {
			const struct pollfd *q = &pfd[1 + p->n + 2 * k];
			short rev[2] = { q[0].revents, q[1].revents };
			if (conns[k].fd[0] >= 0 && q[0].fd >= 0 && !conn_step(&conns[k], rev))
				conn_close(&conns[k]);
		}
	}
	for (size_t k = 0; k < CONNS; k++)
		conn_close(&conns[k]);
	free(conns);
	return r;
}

int net_publish_parse(const char *s, struct net_publish *out, struct hutch_err *err)
{
	/* [IP:]HOSTPORT:PORT */
	_cleanup_free_ char *v = hutch_xstrdup(s);
	char *last = strrchr(v, ':');
	if (!last)
		return hutch_fail(err, EINVAL, "--publish %s: expected [IP:]HOSTPORT:PORT", s);
	*last = '\0';
	char *mid = strrchr(v, ':');
	const char *ip = mid ? v : "127.0.0.1", *hp = mid ? mid + 1 : v;
	if (mid)
		*mid = '\0';
	uint64_t h, c;
	struct net_publish p;
	if (hutch_parse_u64(hp, &h) < 0 || h == 0 || h > 65535 ||
	    hutch_parse_u64(last + 1, &c) < 0 || c == 0 || c > 65535)
		return hutch_fail(err, EINVAL, "--publish %s: ports are 1 to 65535", s);
	if (strchr(ip, '[') || net_ipv4_parse(ip, &p.addr) < 0)
		return hutch_fail(err, strchr(ip, '[') ? ENOTSUP : EINVAL, "--publish %s: %s", s,
				  strchr(ip, '[') ? "IPv6 is not supported"
						  : "expected an IPv4 address");
	p.host_port = (uint16_t)h;
	p.port = (uint16_t)c;
	*out = p;
	return 0;
}

int net_publish_listen(const struct net_publish *p, struct hutch_err *err)
{
	_cleanup_close_ int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return hutch_fail_errno(err, errno, "publish: socket");
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons(p->host_port),
				  .sin_addr.s_addr = htonl(p->addr) };
	char a[NET_IPV4_LEN];
	net_ipv4_format(p->addr, a);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 64) < 0)
		return hutch_fail_errno(err, errno, "--publish %s:%u", a, p->host_port);
	return steal_fd(fd);
}
