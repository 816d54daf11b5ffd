// SPDX-License-Identifier: Apache-2.0
/*
 * The DNS forwarder's TCP side (RFC 7766): a few clients at once, each a small state machine
 * on non-blocking sockets driven by the loop in net-dnsfwd.c, so no step can block it. Every
 * step has a deadline; a client's queries are served one after another on its connection,
 * each forwarded over a TCP connection of its own, under the same policy as over UDP.
 *
 * Those upstream connections are the host's, in its connection-tracking table, where the
 * sandbox's cap does not see them: each ends with a reset (net_dns_fwd_connect's SO_LINGER
 * 0), which leaves the entry 10 s in CLOSE rather than 120 s in TIME_WAIT (and no TIME_WAIT
 * socket), and they are opened at most TCP_PER_S a second after a burst of TCP_BURST (a
 * query waits for its turn): 16,100 TIME_WAIT entries from one sandbox before, about
 * TCP_BURST + 10 * TCP_PER_S now.
 */
#include "net-internal.h"

#include <poll.h>
#include <string.h>
#include <sys/socket.h>

#define TCP_QUERY_MAX 4096
#define TCP_PER_S 5
#define TCP_BURST 10

enum state {
	T_FREE,
	T_QUERY,   /* reading a length-prefixed query from the client */
	T_WAIT,	   /* waiting for its turn to connect to upstream */
	T_CONNECT, /* connecting to upstream */
	T_SEND,	   /* writing the query to upstream */
	T_RECV,	   /* reading upstream's answer */
	T_REPLY,   /* writing the reply to the client */
};

struct conn {
	struct net_dns_tcp *owner; /* its turns to connect */
	enum state st;
	int cfd, ufd;
	size_t upstream;
	double deadline; /* of the current step */
	uint16_t client_id;
	bool matched;
	char name[NET_DNS_NAME_MAX];
	size_t qlen;		      /* with the prefix */
	uint8_t q[2 + TCP_QUERY_MAX]; /* as sent upstream, with our ID */
	size_t have, want;	      /* in buf */
	uint8_t buf[2 + 65535];	      /* what is being read or written */
};

struct net_dns_tcp {
	struct conn c[NET_DNS_TCP_MAX];
	int pfd_of[NET_DNS_TCP_MAX]; /* the conn's index in net_dns_tcp_poll's pfd, or -1 */
	double tokens, refilled;     /* upstream connections allowed now, and since when */
};

static unsigned timeout_of(const struct net_dns_fwd *f)
{
	return f->timeout_ms ? f->timeout_ms : 2000;
}

struct net_dns_tcp *net_dns_tcp_new(void)
{
	struct net_dns_tcp *t = hutch_xcalloc(1, sizeof(*t));
	for (size_t i = 0; i < NET_DNS_TCP_MAX; i++) {
		t->c[i].cfd = t->c[i].ufd = -1;
		t->c[i].owner = t;
	}
	t->tokens = 1e9; /* capped at the burst on first use */
	return t;
}

/* Takes the turn to open an upstream connection: 0, or the ms until there is one. */
static double take_turn(struct net_dns_tcp *t, const struct net_dns_fwd *f, double now)
{
	double rate = f->tcp_per_s ? f->tcp_per_s : TCP_PER_S;
	double burst = f->tcp_burst ? f->tcp_burst : TCP_BURST;
	t->tokens += (now - t->refilled) * rate / 1000;
	if (t->tokens > burst)
		t->tokens = burst;
	t->refilled = now;
	if (t->tokens >= 1) {
		t->tokens -= 1;
		return 0;
	}
	return (1 - t->tokens) * 1000 / rate;
}

static void conn_close(struct conn *c)
{
	net_fd_reset(&c->cfd);
	net_fd_reset(&c->ufd);
	c->st = T_FREE;
}

void net_dns_tcp_free(struct net_dns_tcp *t)
{
	for (size_t i = 0; t && i < NET_DNS_TCP_MAX; i++)
		conn_close(&t->c[i]);
	free(t);
}

bool net_dns_tcp_full(const struct net_dns_tcp *t)
{
	for (size_t i = 0; i < NET_DNS_TCP_MAX; i++)
		if (t->c[i].st == T_FREE)
			return false;
	return true;
}

/* Waits for the client's next query (a connection may carry several, one after another). */
static void next_query(struct conn *c, const struct net_dns_fwd *f, double now)
{
	net_fd_reset(&c->ufd);
	c->st = T_QUERY;
	c->have = 0;
	c->want = 2;
	c->deadline = now + timeout_of(f);
}

int net_dns_tcp_accept(struct net_dns_tcp *t, const struct net_dns_fwd *f, double now,
		       struct hutch_err *err)
{
	for (size_t i = 0; i < NET_DNS_TCP_MAX; i++) {
		struct conn *c = &t->c[i];
		if (c->st != T_FREE)
			continue;
		c->cfd = accept4(f->tcp_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (c->cfd >= 0) {
			next_query(c, f, now);
			return 0;
		}
		/* a client gone before its accept, or a passing shortage */
		if (errno == EAGAIN || errno == EINTR || errno == ECONNABORTED || errno == EPROTO ||
		    errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM ||
		    errno == EPERM)
			return 0;
		return hutch_fail_errno(err, errno, "dns: accept a TCP client");
	}
	return 0;
}

size_t net_dns_tcp_poll(struct net_dns_tcp *t, struct pollfd *pfd, double *next)
{
	size_t n = 0;
	for (size_t i = 0; i < NET_DNS_TCP_MAX; i++) {
		struct conn *c = &t->c[i];
		t->pfd_of[i] = -1;
		if (c->st == T_FREE)
			continue;
		bool client = c->st == T_QUERY || c->st == T_REPLY;
		bool in = c->st == T_QUERY || c->st == T_RECV;
		t->pfd_of[i] = (int)n;
		pfd[n++] = (struct pollfd){ .fd = c->st == T_WAIT ? -1
						  : client	  ? c->cfd
								  : c->ufd,
					    .events = in ? POLLIN : POLLOUT };
		if (c->deadline < *next)
			*next = c->deadline;
	}
	return n;
}

static void put16(uint8_t *p, size_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* Queues for the client an empty reply to its query (in q, or in buf when not copied yet). */
static void reply_empty(struct conn *c, const uint8_t *q, size_t qlen, unsigned rcode,
			struct net_dns_stats *st, double deadline)
{
	ssize_t n = net_dns_reply_empty(q, qlen, rcode, c->buf + 2, sizeof(c->buf) - 2);
	if (n < 0) {
		conn_close(c);
		return;
	}
	put16(c->buf, (size_t)n);
	put16(c->buf + 2, c->client_id);
	net_fd_reset(&c->ufd);
	c->st = T_REPLY;
	c->have = 0;
	c->want = 2 + (size_t)n;
	c->deadline = deadline;
	if (rcode == NET_DNS_RCODE_SERVFAIL)
		st->failed++;
}

/* Connects to upstream i, or the next one that takes it (when its turn comes: T_WAIT until
 * then); SERVFAIL when none does. */
static void try_upstream(struct conn *c, const struct net_dns_fwd *f, struct net_dns_stats *st,
			 size_t i, double now)
{
	net_fd_reset(&c->ufd);
	double wait = i < f->n_upstream ? take_turn(c->owner, f, now) : 0;
	if (wait > 0) {
		c->upstream = i;
		c->st = T_WAIT;
		c->deadline = now + wait;
		return;
	}
	for (; i < f->n_upstream; i++) {
		c->ufd = net_dns_fwd_connect(f, i, SOCK_STREAM);
		if (c->ufd < 0)
			continue;
		c->upstream = i;
		c->st = T_CONNECT;
		c->deadline = now + timeout_of(f);
		return;
	}
	reply_empty(c, c->q + 2, c->qlen - 2, NET_DNS_RCODE_SERVFAIL, st, now + timeout_of(f));
}

/* A whole query is in buf. */
static void on_query(struct conn *c, const struct net_dns_fwd *f, struct net_dns_stats *st,
		     double now)
{
	size_t len = c->want - 2;
	st->tcp++;
	c->client_id = (uint16_t)(c->buf[2] << 8 | c->buf[3]);
	enum net_dns_verdict v = net_dns_fwd_judge(f, c->buf + 2, len, c->name, &c->matched);
	if (v == NET_DNS_DROP) {
		st->failed++;
		conn_close(c);
		return;
	}
	if (v == NET_DNS_REFUSE || len > TCP_QUERY_MAX) {
		if (v == NET_DNS_REFUSE)
			st->refused++;
		reply_empty(c, c->buf + 2, len,
			    v == NET_DNS_REFUSE ? NET_DNS_RCODE_REFUSED : NET_DNS_RCODE_SERVFAIL,
			    st, now + timeout_of(f));
		return;
	}
	memcpy(c->q, c->buf, c->want);
	c->qlen = c->want;
	put16(c->q + 2, net_dns_fwd_id(c->client_id));
	try_upstream(c, f, st, 0, now);
}

/* Upstream's whole answer is in buf. */
static void on_answer(struct conn *c, const struct net_dns_fwd *f, struct net_dns_stats *st,
		      double now)
{
	size_t len = c->want - 2;
	int r = net_dns_fwd_check(f, st, c->q + 2, c->qlen - 2, c->buf + 2, &len,
				  sizeof(c->buf) - 2, c->name, c->matched);
	if (r > 0) { /* on our own connection: upstream is confused, ask the next */
		st->forged++;
		try_upstream(c, f, st, c->upstream + 1, now);
		return;
	}
	if (r < 0) {
		reply_empty(c, c->q + 2, c->qlen - 2, NET_DNS_RCODE_SERVFAIL, st,
			    now + timeout_of(f));
		return;
	}
	put16(c->buf, len); /* the answer may have lost records */
	c->want = 2 + len;
	put16(c->buf + 2, c->client_id);
	net_fd_reset(&c->ufd);
	st->answered++;
	c->st = T_REPLY;
	c->have = 0;
	c->deadline = now + timeout_of(f);
}

/* Reads into buf up to want, learning want from the prefix. 1: complete; 0: not yet;
 * < 0: EOF, error or a message too short to be DNS. Never past want: a pipelined next
 * query stays in the socket for its turn. */
static int read_msg(struct conn *c, int fd)
{
	ssize_t n = recv(fd, c->buf + c->have, c->want - c->have, MSG_DONTWAIT);
	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -errno;
	if (n == 0)
		return -ECONNRESET;
	c->have += (size_t)n;
	if (c->have == 2 && c->want == 2) {
		c->want = 2 + (size_t)(c->buf[0] << 8 | c->buf[1]);
		if (c->want < 2 + 12)
			return -EBADMSG;
	}
	return c->have == c->want ? 1 : 0;
}

/* Writes from p (len) at *done; 1: all written; 0: not yet; < 0: error. */
static int write_some(int fd, const uint8_t *p, size_t len, size_t *done)
{
	ssize_t n = send(fd, p + *done, len - *done, MSG_DONTWAIT | MSG_NOSIGNAL);
	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -errno;
	*done += (size_t)n;
	return *done == len ? 1 : 0;
}

static void step_upstream(struct conn *c, const struct net_dns_fwd *f, struct net_dns_stats *st,
			  double now)
{
	int r = 0, e = 0;
	socklen_t elen = sizeof(e);
	switch (c->st) {
	case T_CONNECT:
		if (getsockopt(c->ufd, SOL_SOCKET, SO_ERROR, &e, &elen) < 0 || e) {
			r = -1;
			break;
		}
		c->st = T_SEND;
		c->have = 0;
		__attribute__((fallthrough)); /* connected: the socket is writable */
	case T_SEND:
		r = write_some(c->ufd, c->q, c->qlen, &c->have);
		if (r > 0) {
			c->st = T_RECV;
			c->have = 0;
			c->want = 2;
		}
		break;
	case T_RECV:
		r = read_msg(c, c->ufd);
		if (r > 0)
			on_answer(c, f, st, now);
		break;
	default:
		break;
	}
	if (r < 0)
		try_upstream(c, f, st, c->upstream + 1, now);
}

static void step_conn(struct conn *c, const struct net_dns_fwd *f, struct net_dns_stats *st,
		      double now)
{
	int r;
	switch (c->st) {
	case T_QUERY:
		r = read_msg(c, c->cfd);
		if (r < 0)
			conn_close(c);
		else if (r > 0)
			on_query(c, f, st, now);
		break;
	case T_REPLY:
		r = write_some(c->cfd, c->buf, c->want, &c->have);
		if (r < 0)
			conn_close(c);
		else if (r > 0)
			next_query(c, f, now);
		break;
	default:
		step_upstream(c, f, st, now);
		break;
	}
}

/* A step ran out of time: upstream's are retried on the next; a client's end its connection;
 * a wait for the turn to connect is over. */
static void expire(struct conn *c, const struct net_dns_fwd *f, struct net_dns_stats *st,
		   double now)
{
	if (c->st == T_WAIT) { /* its turn */
		try_upstream(c, f, st, c->upstream, now);
		return;
	}
	if (c->st == T_CONNECT || c->st == T_SEND || c->st == T_RECV) {
		st->timeouts++;
		try_upstream(c, f, st, c->upstream + 1, now);
		return;
	}
	if (c->st == T_REPLY || (c->st == T_QUERY && c->have > 0))
		st->failed++;
	conn_close(c);
}

void net_dns_tcp_step(struct net_dns_tcp *t, const struct net_dns_fwd *f, struct net_dns_stats *st,
		      const struct pollfd *pfd, double now)
{
	for (size_t i = 0; i < NET_DNS_TCP_MAX; i++) {
		struct conn *c = &t->c[i];
		if (t->pfd_of[i] < 0 || c->st == T_FREE)
			continue;
		if (pfd[t->pfd_of[i]].revents)
			step_conn(c, f, st, now);
		if (c->st != T_FREE && now >= c->deadline)
			expire(c, f, st, now);
	}
}
