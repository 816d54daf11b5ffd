// SPDX-License-Identifier: Apache-2.0
/*
 * A sandbox's connection-tracking entries, removed when its address is given up: a next
 * sandbox on the address must not inherit them (an entry still "established" lets its packets
 * through without the policy's checks), and they hold slots of the host's table. ctnetlink by
 * hand, as net-nftnl.c does nf_tables: a dump filtered by the kernel (CTA_FILTER, Linux 5.8)
 * and checked again here, then a delete per entry by its original tuple. Each dump walks the
 * host's whole hash table (262144 buckets, a lock each: ~3.5 ms of CPU on the development VM,
 * whatever the netns holds), so there is one per direction asked for, at the end only.
 */
#include "net-internal.h"

#include <arpa/inet.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>
#include <linux/netlink.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

/* The kernel's CTA_FILTER flag bits (nf_conntrack_netlink.c; not in the uapi headers). */
#define FILTER_IP_SRC (1U << 0)
#define FILTER_IP_DST (1U << 1)
#define ROUND 2048 /* entries deleted per dump */
#define ROUNDS 64  /* rounds per direction: the cap keeps a sandbox well below */
#define BUF 65536

struct entry {
	uint8_t tuple[128]; /* CTA_TUPLE_ORIG as the dump gave it */
	size_t len;
	uint16_t zone; /* CTA_ZONE, network order; 0: none */
};

struct msg {
	char buf[512] __attribute__((aligned(NLMSG_ALIGNTO)));
	size_t len;
};

static void *put(struct msg *m, size_t len)
{
	void *p = m->buf + m->len;
	memset(p, 0, NLMSG_ALIGN(len));
	m->len += NLMSG_ALIGN(len);
	return p;
}

static struct nlattr *attr(struct msg *m, uint16_t type, const void *data, size_t len)
{
	struct nlattr *a = put(m, NLA_HDRLEN + len);
	a->nla_type = type;
	a->nla_len = (uint16_t)(NLA_HDRLEN + len);
	if (len)
		memcpy((char *)a + NLA_HDRLEN, data, len);
	return a;
}

static void begin(struct msg *m, uint8_t cmd, uint16_t flags)
{
	m->len = 0;
	struct nlmsghdr *h = put(m, NLMSG_HDRLEN);
	struct nfgenmsg *g = put(m, sizeof(*g));
	h->nlmsg_type = (NFNL_SUBSYS_CTNETLINK << 8) | cmd;
	h->nlmsg_flags = NLM_F_REQUEST | flags;
	g->nfgen_family = AF_INET;
	g->version = NFNETLINK_V0;
}

static void end(struct msg *m)
{
	((struct nlmsghdr *)m->buf)->nlmsg_len = (uint32_t)m->len;
}

/* A dump of the IPv4 entries whose original source (or destination) is addr; without the
 * kernel's filter, of every IPv4 entry. */
static void dump_request(struct msg *m, uint32_t addr, bool dst, bool filter)
{
	begin(m, IPCTNL_MSG_CT_GET, NLM_F_DUMP);
	if (!filter) {
		end(m);
		return;
	}
	size_t orig = m->len;
	attr(m, CTA_TUPLE_ORIG | NLA_F_NESTED, NULL, 0);
	size_t ip = m->len;
	attr(m, CTA_TUPLE_IP | NLA_F_NESTED, NULL, 0);
	uint32_t be = htonl(addr);
	attr(m, dst ? CTA_IP_V4_DST : CTA_IP_V4_SRC, &be, sizeof(be));
	((struct nlattr *)(m->buf + ip))->nla_len = (uint16_t)(m->len - ip);
	((struct nlattr *)(m->buf + orig))->nla_len = (uint16_t)(m->len - orig);
	size_t nest = m->len;
	attr(m, CTA_FILTER | NLA_F_NESTED, NULL, 0);
	uint32_t flags = dst ? FILTER_IP_DST : FILTER_IP_SRC, none = 0;
	attr(m, CTA_FILTER_ORIG_FLAGS, &flags, sizeof(flags));
	attr(m, CTA_FILTER_REPLY_FLAGS, &none, sizeof(none));
	((struct nlattr *)(m->buf + nest))->nla_len = (uint16_t)(m->len - nest);
	end(m);
}

#define PAYLOAD(a) ((const char *)(a) + NLA_HDRLEN)
#define PAYLOAD_LEN(a) ((size_t)(a)->nla_len - NLA_HDRLEN)

/* One dumped entry: kept in e when its original tuple has addr on the side asked. */
static bool take(const struct nlmsghdr *h, uint32_t addr, bool dst, struct entry *e)
{
	size_t hdr = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(struct nfgenmsg));
	if (h->nlmsg_len < hdr)
		return false;
	const char *p = (const char *)h + hdr;
	size_t len = h->nlmsg_len - hdr;
	const struct nlattr *orig = net_nla_find(p, len, CTA_TUPLE_ORIG);
	const struct nlattr *ip =
		orig ? net_nla_find(PAYLOAD(orig), PAYLOAD_LEN(orig), CTA_TUPLE_IP) : NULL;
	const struct nlattr *a =
		ip ? net_nla_find(PAYLOAD(ip), PAYLOAD_LEN(ip), dst ? CTA_IP_V4_DST : CTA_IP_V4_SRC)
		   : NULL;
	uint32_t be;
	if (!a || PAYLOAD_LEN(a) != 4 || orig->nla_len > sizeof(e->tuple))
		return false;
	memcpy(&be, PAYLOAD(a), 4);
	if (ntohl(be) != addr)
		return false;
	memcpy(e->tuple, orig, orig->nla_len);
	e->len = orig->nla_len;
	const struct nlattr *z = net_nla_find(p, len, CTA_ZONE);
	e->zone = 0;
	if (z && PAYLOAD_LEN(z) == 2)
		memcpy(&e->zone, PAYLOAD(z), 2);
	return true;
}

/* Dumps the matching entries into v (up to ROUND); *more when some did not fit. */
static int dump(int fd, uint32_t addr, bool dst, bool filter, struct entry *v, size_t *n,
		bool *more, char *buf)
{
	struct msg m;
	dump_request(&m, addr, dst, filter);
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	if (sendto(fd, m.buf, m.len, 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0)
		return -errno;
	*n = 0;
	*more = false;
	for (;;) {
		ssize_t got = net_nl_recv(fd, buf, BUF);
		if (got < 0)
			return (int)got;
		size_t len = (size_t)got;
		for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, len);
		     h = NLMSG_NEXT(h, len)) {
			if (h->nlmsg_type == NLMSG_DONE)
				return 0;
			if (h->nlmsg_type == NLMSG_ERROR)
				return ((struct nlmsgerr *)NLMSG_DATA(h))->error;
			struct entry e;
			if (!take(h, addr, dst, &e))
				continue;
			if (*n < ROUND)
				v[(*n)++] = e;
			else
				*more = true;
		}
	}
}

/* The errors of deletes (entries gone meanwhile): how many. */
static size_t drain(int fd, char *buf)
{
	size_t failed = 0;
	ssize_t got;
	while ((got = recv(fd, buf, BUF, MSG_DONTWAIT)) > 0) {
		size_t len = (size_t)got;
		for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, len);
		     h = NLMSG_NEXT(h, len))
			failed += h->nlmsg_type == NLMSG_ERROR;
	}
	return failed;
}

/* Deletes v[0..n): one message each, no ack asked (an error comes back all the same, and
 * is drained as it goes). Returns how many went. */
static size_t delete_all(int fd, const struct entry *v, size_t n, char *buf)
{
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	size_t done = 0, failed = 0;
	for (size_t i = 0; i < n; i++) {
		struct msg m;
		begin(&m, IPCTNL_MSG_CT_DELETE, 0);
		memcpy(put(&m, v[i].len), v[i].tuple, v[i].len);
		if (v[i].zone)
			attr(&m, CTA_ZONE, &v[i].zone, 2);
		end(&m);
		if (sendto(fd, m.buf, m.len, 0, (struct sockaddr *)&kernel, sizeof(kernel)) >= 0)
			done++;
		if (i % 256 == 255)
			failed += drain(fd, buf);
	}
	failed += drain(fd, buf);
	return done > failed ? done - failed : 0;
}

int net_ct_flush_addr(uint32_t addr, bool to_too, struct hutch_err *err)
{
	char a[NET_IPV4_LEN];
	net_ipv4_format(addr, a);
	int fd = net_nfnl_socket(); /* the process's, kept: see net-nftnl.c */
	if (fd < 0)
		return hutch_fail_errno(err, -fd, "conntrack: netlink socket");
	_cleanup_free_ struct entry *v = hutch_xcalloc(ROUND, sizeof(*v));
	_cleanup_free_ char *buf = hutch_xmalloc(BUF);
	size_t removed = 0;
	bool filter = true;
	for (int dst = 0; dst < 1 + to_too; dst++) {
		bool more = true;
		for (int round = 0; more && round < ROUNDS; round++) {
			size_t n = 0;
			int r = dump(fd, addr, dst, filter, v, &n, &more, buf);
			if ((r == -EINVAL || r == -EOPNOTSUPP) && filter) { /* before Linux 5.8 */
				filter = false;
				r = dump(fd, addr, dst, filter, v, &n, &more, buf);
			}
			if (r < 0)
				return hutch_fail(err, -r, "conntrack: list the entries of %s: %s",
						  a, strerror(-r));
			removed += delete_all(fd, v, n, buf);
		}
	}
	return (int)(removed > INT32_MAX ? INT32_MAX : removed);
}
