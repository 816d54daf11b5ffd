// SPDX-License-Identifier: Apache-2.0
/*
 * The DNS policy forwarder's loop and its UDP side: queries from the sandbox are judged by
 * name, forwarded with a new random ID, and each answer's A records are reported to the
 * caller, who opens them in the firewall, before the answer is relayed.
 *
 * Upstream, each nameserver has one connected socket (a kernel-chosen source port), shared by
 * the queries in flight and told apart by their IDs, unique on it: a spoofed answer must
 * guess the port and an ID in flight. A socket of its own per query, as before, left the host
 * an entry in its connection-tracking table per lookup (30 s), which the sandbox's cap
 * (--max-connections) does not see: one sandbox made 2,805 under a cap of 16. A socket
 * serves new queries for ROTATE_MS, so its port changes too; its entry then lives out its
 * timeout (120 s once replies flowed both ways): a few entries per nameserver, at most.
 */
#include "net-internal.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>

#define MAX_PENDING 64
#define MAX_SOCKS 8 /* each upstream's current socket, and retired ones awaiting answers */
#define ROTATE_MS 30000
#define QUERY_MAX 1232 /* the EDNS buffer size of DNS flag day 2020: larger queries are not seen */
#define MSG_MAX 65536
#define FIXED_FDS 3 /* stop, UDP, TCP listener */

/* A socket to an upstream: fd < 0 when the slot is free. */
struct upsock {
	int fd;
	size_t upstream;
	double opened;
	unsigned users; /* queries in flight on it */
	bool retired;	/* takes no new query; closed once users is 0 */
};

/* One UDP query in flight: sock < 0 when the slot is free. */
struct pending {
	int sock; /* in fwd.socks */
	size_t upstream;
	double deadline;
	uint16_t client_id, id;
	bool matched;
	struct sockaddr_storage peer;
	socklen_t peer_len;
	char name[NET_DNS_NAME_MAX];
	size_t qlen;
	uint8_t q[QUERY_MAX]; /* as sent upstream, with our ID */
};

struct fwd {
	const struct net_dns_fwd *f;
	struct net_dns_stats *st;
	struct pending *pend;
	struct upsock socks[MAX_SOCKS];
	uint8_t *buf;
	struct net_dns_tcp *tcp;
};

static void fwd_free(struct fwd *s)
{
	for (size_t i = 0; i < MAX_SOCKS; i++)
		net_fd_reset(&s->socks[i].fd);
	free(s->pend);
	free(s->buf);
	net_dns_tcp_free(s->tcp);
}

static unsigned timeout_of(const struct net_dns_fwd *f)
{
	return f->timeout_ms ? f->timeout_ms : 2000;
}

static void put_id(uint8_t *msg, uint16_t id)
{
	msg[0] = (uint8_t)(id >> 8);
	msg[1] = (uint8_t)id;
}

static void sock_retire(struct upsock *u)
{
	u->retired = true;
	if (!u->users)
		net_fd_reset(&u->fd);
}

/* Frees p's slot, and its hold on its socket. */
static void pend_free(struct fwd *s, struct pending *p)
{
	if (p->sock >= 0) {
		struct upsock *u = &s->socks[p->sock];
		if (u->users && !--u->users && u->retired)
			net_fd_reset(&u->fd);
	}
	p->sock = -1;
}

/* The socket new queries to upstream i go out on (opened, or replaced once ROTATE_MS old). */
static int sock_for(struct fwd *s, size_t i, double now)
{
	int free_k = -1;
	for (int k = 0; k < MAX_SOCKS; k++) {
		struct upsock *u = &s->socks[k];
		if (u->fd >= 0 && !u->retired && u->upstream == i) {
			if (now - u->opened < ROTATE_MS)
				return k;
			sock_retire(u);
		}
		if (u->fd < 0 && free_k < 0)
			free_k = k;
	}
	if (free_k < 0)
		return -1; /* every slot holds queries in flight: this upstream waits */
	int fd = net_dns_fwd_connect(s->f, i, SOCK_DGRAM);
	if (fd < 0)
		return -1;
	s->socks[free_k] = (struct upsock){ .fd = fd, .upstream = i, .opened = now };
	return free_k;
}

/* A random ID no other query in flight on socket k has. */
static uint16_t fresh_id(const struct fwd *s, int k, uint16_t fallback)
{
	uint16_t id = fallback;
	for (int tries = 0; tries < 16; tries++) {
		id = net_dns_fwd_id(id + 1);
		bool taken = false;
		for (size_t i = 0; i < MAX_PENDING && !taken; i++)
			taken = s->pend[i].sock == k && s->pend[i].id == id;
		if (!taken)
			break;
	}
	return id;
}

static void reply_to(struct fwd *s, const struct pending *p, const uint8_t *msg, size_t len)
{
	sendto(s->f->udp_fd, msg, len, MSG_DONTWAIT | MSG_NOSIGNAL,
	       (const struct sockaddr *)&p->peer, p->peer_len);
}

/* An empty reply to p's query with rcode, under the sandbox's own ID; frees the slot. */
static void answer_empty(struct fwd *s, struct pending *p, unsigned rcode)
{
	uint8_t out[QUERY_MAX];
	ssize_t n = net_dns_reply_empty(p->q, p->qlen, rcode, out, sizeof(out));
	if (n > 0) {
		put_id(out, p->client_id);
		reply_to(s, p, out, (size_t)n);
	}
	pend_free(s, p);
	if (rcode == NET_DNS_RCODE_SERVFAIL)
		s->st->failed++;
}

/* Sends p's query to upstream i, or the next one that takes it; SERVFAIL when none does. */
static void try_upstream(struct fwd *s, struct pending *p, size_t i, double now)
{
	pend_free(s, p);
	for (; i < s->f->n_upstream; i++) {
		int k = sock_for(s, i, now);
		if (k < 0)
			continue;
		p->id = fresh_id(s, k, p->client_id);
		put_id(p->q, p->id);
		if (send(s->socks[k].fd, p->q, p->qlen, MSG_NOSIGNAL) != (ssize_t)p->qlen) {
			sock_retire(
				&s->socks[k]); /* an error it held (an ICMP's): a new one next */
			continue;
		}
		p->sock = k;
		s->socks[k].users++;
		p->upstream = i;
		p->deadline = now + timeout_of(s->f);
		return;
	}
	answer_empty(s, p, NET_DNS_RCODE_SERVFAIL);
}

static struct pending *free_slot(struct fwd *s)
{
	for (size_t i = 0; i < MAX_PENDING; i++)
		if (s->pend[i].sock < 0)
			return &s->pend[i];
	return NULL;
}

static void on_query(struct fwd *s, size_t len, const struct sockaddr_storage *peer,
		     socklen_t peer_len, double now)
{
	struct pending tmp = { .sock = -1, .peer = *peer, .peer_len = peer_len };
	enum net_dns_verdict v =
		len > QUERY_MAX ? NET_DNS_DROP
				: net_dns_fwd_judge(s->f, s->buf, len, tmp.name, &tmp.matched);
	if (v == NET_DNS_DROP) {
		s->st->failed++;
		return;
	}
	struct pending *p = v == NET_DNS_FORWARD ? free_slot(s) : NULL;
	if (p)
		*p = tmp;
	else
		p = &tmp; /* refused, or the table is full: answered from here */
	memcpy(p->q, s->buf, len);
	p->qlen = len;
	p->client_id = (uint16_t)(s->buf[0] << 8 | s->buf[1]);
	if (v == NET_DNS_REFUSE) {
		s->st->refused++;
		answer_empty(s, p, NET_DNS_RCODE_REFUSED);
		return;
	}
	if (p == &tmp) { /* the table is full */
		answer_empty(s, p, NET_DNS_RCODE_SERVFAIL);
		return;
	}
	try_upstream(s, p, 0, now);
}

/* Reads what came in on udp_fd: a bounded batch, so upstream answers are not starved. */
static int read_queries(struct fwd *s, double now, struct hutch_err *err)
{
	for (int i = 0; i < 32; i++) {
		struct sockaddr_storage peer;
		socklen_t peer_len = sizeof(peer);
		ssize_t n = recvfrom(s->f->udp_fd, s->buf, MSG_MAX, MSG_DONTWAIT | MSG_TRUNC,
				     (struct sockaddr *)&peer, &peer_len);
		if (n < 0) {
			/* an ICMP error for an earlier reply, or a passing shortage: not fatal */
			if (errno == EAGAIN || errno == EINTR || errno == ECONNREFUSED ||
			    errno == ENOBUFS || errno == ENOMEM || errno == EHOSTUNREACH ||
			    errno == ENETUNREACH)
				return 0;
			return hutch_fail_errno(err, errno, "dns: receive a query");
		}
		on_query(s, n > MSG_MAX ? MSG_MAX + 1 : (size_t)n, &peer, peer_len, now);
	}
	return 0;
}

/* An answer of len bytes (in buf) came on socket k: relayed to the query in flight with its
 * ID, if any and if it answers that query. */
static void on_answer(struct fwd *s, int k, size_t len)
{
	uint16_t id = (uint16_t)(len >= 2 ? s->buf[0] << 8 | s->buf[1] : 0);
	struct pending *p = NULL;
	for (size_t i = 0; i < MAX_PENDING && !p; i++)
		if (s->pend[i].sock == k && s->pend[i].id == id)
			p = &s->pend[i];
	/* A rebuilt answer may be no longer than what upstream found the client could take. */
	size_t cap = len > 512 ? len : 512;
	int r = p ? net_dns_fwd_check(s->f, s->st, p->q, p->qlen, s->buf, &len, cap, p->name,
				      p->matched)
		  : 1;
	if (r > 0) {
		s->st->forged++; /* keep waiting for the real one */
		return;
	}
	if (r < 0) {
		answer_empty(s, p, NET_DNS_RCODE_SERVFAIL);
		return;
	}
	put_id(s->buf, p->client_id);
	reply_to(s, p, s->buf, len);
	s->st->answered++;
	pend_free(s, p);
}

/* Upstream sent something on socket k (or an ICMP error came back): a bounded batch. */
static void on_upstream(struct fwd *s, int k, double now)
{
	for (int i = 0; i < 32 && s->socks[k].fd >= 0; i++) {
		ssize_t n = recv(s->socks[k].fd, s->buf, MSG_MAX, MSG_DONTWAIT);
		if (n >= 0) {
			on_answer(s, k, (size_t)n);
			continue;
		}
		if (errno == EAGAIN || errno == EINTR)
			return;
		/* ECONNREFUSED (port unreachable): its queries go to the next upstream */
		sock_retire(&s->socks[k]);
		for (size_t j = 0; j < MAX_PENDING; j++)
			if (s->pend[j].sock == k)
				try_upstream(s, &s->pend[j], s->pend[j].upstream + 1, now);
		return;
	}
}

/* The poll set: FIXED_FDS, then the upstream sockets (idx says which), then TCP's. */
static size_t poll_set(struct fwd *s, struct pollfd *pfd, size_t *idx, size_t *n_udp, double *next)
{
	const struct net_dns_fwd *f = s->f;
	bool tcp_room = f->tcp_fd >= 0 && !net_dns_tcp_full(s->tcp);
	pfd[0] = (struct pollfd){ .fd = f->stop_fd, .events = POLLIN };
	pfd[1] = (struct pollfd){ .fd = f->udp_fd, .events = POLLIN };
	pfd[2] = (struct pollfd){ .fd = tcp_room ? f->tcp_fd : -1, .events = POLLIN };
	size_t n = FIXED_FDS;
	for (size_t k = 0; k < MAX_SOCKS; k++) {
		if (s->socks[k].fd < 0)
			continue;
		idx[n - FIXED_FDS] = k;
		pfd[n++] = (struct pollfd){ .fd = s->socks[k].fd, .events = POLLIN };
	}
	for (size_t i = 0; i < MAX_PENDING; i++)
		if (s->pend[i].sock >= 0 && s->pend[i].deadline < *next)
			*next = s->pend[i].deadline;
	*n_udp = n - FIXED_FDS;
	return n + net_dns_tcp_poll(s->tcp, pfd + n, next);
}

static int wait_events(struct pollfd *pfd, size_t n, double next, struct hutch_err *err)
{
	double left = next - hutch_now_ms();
	int ms = left <= 0 ? 0 : left > 60000 ? 60000 : (int)left + 1;
	if (poll(pfd, n, ms) < 0 && errno != EINTR)
		return hutch_fail_errno(err, errno, "dns: poll");
	return 0;
}

static void step_udp(struct fwd *s, const struct pollfd *pfd, const size_t *idx, size_t n,
		     double now)
{
	for (size_t k = 0; k < n; k++)
		if (pfd[k].revents)
			on_upstream(s, (int)idx[k], now);
	for (size_t i = 0; i < MAX_PENDING; i++) {
		struct pending *p = &s->pend[i];
		if (p->sock >= 0 && now >= p->deadline) {
			s->st->timeouts++;
			try_upstream(s, p, p->upstream + 1, now);
		}
	}
}

static int fwd_setup(struct fwd *s, const struct net_dns_fwd *f, struct hutch_err *err)
{
	if (f->udp_fd < 0 || f->n_upstream == 0 || !f->upstream)
		return hutch_fail(err, EINVAL, "dns: a UDP socket and an upstream are needed");
	if (f->tcp_fd >= 0 && fcntl(f->tcp_fd, F_SETFL, fcntl(f->tcp_fd, F_GETFL) | O_NONBLOCK) < 0)
		return hutch_fail_errno(err, errno, "dns: make the TCP socket non-blocking");
	s->pend = hutch_xcalloc(MAX_PENDING, sizeof(*s->pend));
	for (size_t i = 0; i < MAX_PENDING; i++)
		s->pend[i].sock = -1;
	s->buf = hutch_xmalloc(MSG_MAX);
	s->tcp = net_dns_tcp_new();
	return 0;
}

int net_dns_fwd_run(const struct net_dns_fwd *f, struct net_dns_stats *st, struct hutch_err *err)
{
	_cleanup_(fwd_free) struct fwd s = { .f = f, .st = st };
	for (size_t k = 0; k < MAX_SOCKS; k++)
		s.socks[k].fd = -1;
	int r = fwd_setup(&s, f, err);
	if (r < 0)
		return r;
	for (;;) {
		struct pollfd pfd[FIXED_FDS + MAX_SOCKS + NET_DNS_TCP_MAX];
		size_t idx[MAX_SOCKS], n_udp;
		double next = hutch_now_ms() + 60000;
		size_t n = poll_set(&s, pfd, idx, &n_udp, &next);
		r = wait_events(pfd, n, next, err);
		if (r < 0)
			return r;
		if (pfd[0].revents)
			return 0;
		double now = hutch_now_ms();
		step_udp(&s, pfd + FIXED_FDS, idx, n_udp, now);
		net_dns_tcp_step(s.tcp, f, st, pfd + FIXED_FDS + n_udp, now);
		if (pfd[1].revents) { /* POLLERR too: recvfrom says what */
			r = read_queries(&s, now, err);
			if (r < 0)
				return r;
		}
		if (pfd[2].revents) {
			r = net_dns_tcp_accept(s.tcp, f, now, err);
			if (r < 0)
				return r;
		}
	}
}
