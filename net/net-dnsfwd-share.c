// SPDX-License-Identifier: Apache-2.0
/*
 * What the DNS forwarder's UDP side (net-dnsfwd.c) and TCP side (net-dnsfwd-tcp.c) share: the
 * policy on a query, the checks on an upstream's answer before it may be relayed (and the
 * report of its A records to the caller), and the upstream socket with a fresh random ID.
 */
#include "net-internal.h"

#include <netinet/in.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>

#define MAX_ADDRS 256 /* beyond these an answer's addresses are not opened, so they fail closed */
#define CLASS_IN 1

enum net_dns_verdict net_dns_fwd_judge(const struct net_dns_fwd *f, const uint8_t *q, size_t len,
				       char name[NET_DNS_NAME_MAX], bool *matched)
{
	uint16_t qtype, qclass;
	if (net_dns_parse_query(q, len, name, &qtype, &qclass) < 0)
		return NET_DNS_DROP;
	*matched = false;
	for (size_t i = 0; i < f->n_patterns && !*matched; i++)
		*matched = net_dns_name_match(f->patterns[i], name);
	/* Meta types: ANY answers are large (amplification) and a zone transfer is no lookup. */
	if (qclass != CLASS_IN || (qtype >= 251 && qtype <= 255))
		return NET_DNS_REFUSE;
	return f->restricted && !*matched ? NET_DNS_REFUSE : NET_DNS_FORWARD;
}

/* Removes the addresses f refuses from r, in place: *rlen is updated. */
static int drop_addrs(const struct net_dns_fwd *f, struct net_dns_stats *st, uint8_t *r,
		      size_t *rlen, size_t cap)
{
	if (!f->drop_addr)
		return 0;
	struct net_dns_drop d = { f->drop_addr, f->arg };
	_cleanup_free_ uint8_t *out = hutch_xmalloc(cap);
	unsigned dropped;
	ssize_t n = net_dns_drop_a(r, *rlen, &d, out, cap, &dropped);
	if (n <= 0)
		return (int)n;
	memcpy(r, out, (size_t)n);
	*rlen = (size_t)n;
	st->dropped += dropped;
	return 0;
}

int net_dns_fwd_check(const struct net_dns_fwd *f, struct net_dns_stats *st, const uint8_t *q,
		      size_t qlen, uint8_t *r, size_t *rlen, size_t cap, const char *name,
		      bool matched)
{
	if (!net_dns_same_question(q, qlen, r, *rlen))
		return 1;
	/* Before anything is opened: what is removed is neither relayed nor opened. What
	 * cannot be read cannot be opened in the firewall either: not relayed. */
	if (drop_addrs(f, st, r, rlen, cap) < 0)
		return -EBADMSG;
	uint32_t addrs[MAX_ADDRS], ttl;
	int n = net_dns_answer_a(r, *rlen, addrs, MAX_ADDRS, &ttl);
	if (n < 0)
		return -EBADMSG;
	if (f->on_answer && f->on_answer(name, matched, addrs, (size_t)n, ttl, f->arg) < 0)
		return -EPERM;
	return 0;
}

int net_dns_fwd_connect(const struct net_dns_fwd *f, size_t i, int type)
{
	int fd = socket(AF_INET, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	/* TCP: closing resets, so the host keeps neither a TIME_WAIT socket nor a conntrack
	 * entry in TIME_WAIT (120 s) per query, only one in CLOSE (10 s) (net-dnsfwd-tcp.c). */
	struct linger abort_on_close = { .l_onoff = 1, .l_linger = 0 };
	if (type == SOCK_STREAM &&
	    setsockopt(fd, SOL_SOCKET, SO_LINGER, &abort_on_close, sizeof(abort_on_close)) < 0) {
		int r = -errno;
		close(fd);
		return r;
	}
	struct sockaddr_in a = {
		.sin_family = AF_INET,
		.sin_port = htons(f->upstream_port ? f->upstream_port : 53),
		.sin_addr.s_addr = htonl(f->upstream[i]),
	};
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0 && errno != EINPROGRESS) {
		int r = -errno;
		close(fd);
		return r;
	}
	return fd;
}

uint16_t net_dns_fwd_id(uint16_t fallback)
{
	uint16_t id;
	if (getrandom(&id, sizeof(id), GRND_NONBLOCK) != sizeof(id))
		return fallback; /* early boot: the source port still is random */
	return id;
}
