// SPDX-License-Identifier: Apache-2.0
/*
 * A sandbox's firewall elements in one nf_tables netlink batch, built here: the start path
 * needs no library (libnftables costs a dlopen, a second libc and a cache fill, several ms
 * of CPU beside the container's creation). Only adding known elements to the tables' known
 * sets ("inet hutch", and "arp hutch"'s two), and the sandbox's own two chains (one fixed
 * rule each) and set, is done this way; the tables themselves, the listing and every removal
 * stay in libnftables (net-nft.c), which also takes over when this fails, so its error text
 * is the one shown.
 *
 * Keys are nf_tables registers: each field of a concatenation rounded up to 4 bytes, the
 * interface name as IFNAMSIZ bytes, addresses and ports in network order. An interval set's
 * element carries its last key too (a prefix's broadcast, a range's high port). Rules and the
 * set are written as nft 1.0 writes them (nft --debug=netlink shows it), so that its listing
 * reads them back the same.
 */
#include "net-internal.h"

#include <arpa/inet.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netlink.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define BATCH_MAX 16384

struct batch {
	char buf[BATCH_MAX] __attribute__((aligned(NLMSG_ALIGNTO)));
	size_t len, msg;       /* msg: the current message's offset */
	uint32_t seq, n_acked; /* n_acked: messages that ask for an ack */
	bool full;
};

static void *put(struct batch *b, size_t len)
{
	if (b->len + NLMSG_ALIGN(len) > sizeof(b->buf)) {
		b->full = true;
		return NULL;
	}
	void *p = b->buf + b->len;
	memset(p, 0, NLMSG_ALIGN(len));
	b->len += NLMSG_ALIGN(len);
	return p;
}

static void msg_end(struct batch *b)
{
	if (!b->full)
		((struct nlmsghdr *)(b->buf + b->msg))->nlmsg_len = (uint32_t)(b->len - b->msg);
}

static void msg_begin(struct batch *b, uint16_t type, uint16_t flags, uint8_t family,
		      uint16_t res_id)
{
	size_t at = b->len;
	struct nlmsghdr *h = put(b, NLMSG_HDRLEN);
	struct nfgenmsg *g = put(b, sizeof(*g));
	if (!h || !g)
		return;
	b->msg = at;
	h->nlmsg_type = type;
	h->nlmsg_flags = NLM_F_REQUEST | flags;
	h->nlmsg_seq = ++b->seq;
	g->nfgen_family = family;
	g->version = NFNETLINK_V0;
	g->res_id = htons(res_id);
	if (flags & NLM_F_ACK)
		b->n_acked++;
}

static struct nlattr *attr(struct batch *b, uint16_t type, const void *data, size_t len)
{
	struct nlattr *a = put(b, NLA_HDRLEN + len);
	if (!a)
		return NULL;
	a->nla_type = type;
	a->nla_len = (uint16_t)(NLA_HDRLEN + len);
	if (len)
		memcpy((char *)a + NLA_HDRLEN, data, len);
	return a;
}

static size_t nest(struct batch *b, uint16_t type)
{
	size_t at = b->len;
	attr(b, type | NLA_F_NESTED, NULL, 0);
	return at;
}

static void nest_end(struct batch *b, size_t at)
{
	if (!b->full)
		((struct nlattr *)(b->buf + at))->nla_len = (uint16_t)(b->len - at);
}

static void str(struct batch *b, uint16_t type, const char *s)
{
	attr(b, type, s, strlen(s) + 1);
}

/* A key or value: NFTA_DATA_VALUE in a nest of type. */
static void data(struct batch *b, uint16_t type, const void *v, size_t len)
{
	size_t n = nest(b, type);
	attr(b, NFTA_DATA_VALUE, v, len);
	nest_end(b, n);
}

struct key {
	uint8_t v[32];
	size_t len;
};

static void key_ifname(struct key *k, const char *name)
{
	memset(k->v + k->len, 0, IFNAMSIZ);
	memcpy(k->v + k->len, name, strnlen(name, IFNAMSIZ - 1));
	k->len += IFNAMSIZ;
}

static void key_u32(struct key *k, uint32_t host_order)
{
	uint32_t be = htonl(host_order);
	memcpy(k->v + k->len, &be, 4);
	k->len += 4;
}

static void key_port(struct key *k, uint16_t port)
{
	uint16_t be = htons(port);
	memset(k->v + k->len, 0, 4);
	memcpy(k->v + k->len, &be, 2);
	k->len += 4;
}

/* One element into set of table "hutch" of family: its key, its last key for an interval set,
 * an object for a map. */
static void element_of(struct batch *b, uint8_t family, const char *set, const struct key *k,
		       const struct key *end, const char *objref)
{
	msg_begin(b, (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_NEWSETELEM, NLM_F_CREATE | NLM_F_ACK,
		  family, 0);
	str(b, NFTA_SET_ELEM_LIST_TABLE, "hutch");
	str(b, NFTA_SET_ELEM_LIST_SET, set);
	size_t list = nest(b, NFTA_SET_ELEM_LIST_ELEMENTS);
	size_t el = nest(b, NFTA_LIST_ELEM);
	data(b, NFTA_SET_ELEM_KEY, k->v, k->len);
	if (end)
		data(b, NFTA_SET_ELEM_KEY_END, end->v, end->len);
	if (objref)
		str(b, NFTA_SET_ELEM_OBJREF, objref);
	nest_end(b, el);
	nest_end(b, list);
	msg_end(b);
}

/* Into a set of table "inet hutch". */
static void element(struct batch *b, const char *set, const struct key *k, const struct key *end,
		    const char *objref)
{
	element_of(b, NFPROTO_INET, set, k, end, objref);
}

static void counter(struct batch *b, const char *name)
{
	msg_begin(b, (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_NEWOBJ, NLM_F_CREATE | NLM_F_ACK,
		  NFPROTO_INET, 0);
	str(b, NFTA_OBJ_TABLE, "hutch");
	str(b, NFTA_OBJ_NAME, name);
	uint32_t type = htonl(NFT_OBJECT_COUNTER);
	attr(b, NFTA_OBJ_TYPE, &type, sizeof(type));
	size_t d = nest(b, NFTA_OBJ_DATA);
	uint64_t zero = 0;
	attr(b, NFTA_COUNTER_BYTES, &zero, sizeof(zero));
	attr(b, NFTA_COUNTER_PACKETS, &zero, sizeof(zero));
	nest_end(b, d);
	msg_end(b);
}

static uint32_t last_of(const struct net_cidr *c)
{
	return c->prefix >= 32 ? c->addr : c->addr | (~0U >> c->prefix);
}

/* --allow-cidr and --deny-cidr: "VETH" . FIRST [. LO] to "VETH" . LAST [. HI]. */
static void cidr(struct batch *b, const char *veth, const struct net_cidr *c, bool deny)
{
	struct key k = { .len = 0 }, end = { .len = 0 };
	key_ifname(&k, veth);
	key_ifname(&end, veth);
	key_u32(&k, c->addr);
	key_u32(&end, last_of(c));
	bool ports = !deny && c->port_lo;
	if (ports) {
		key_port(&k, c->port_lo);
		key_port(&end, c->port_hi);
	}
	element(b, deny ? "deny_net" : ports ? "allow_port" : "allow_net", &k, &end, NULL);
}

static void be32(struct batch *b, uint16_t type, uint32_t host_order)
{
	uint32_t v = htonl(host_order);
	attr(b, type, &v, sizeof(v));
}

/* An expression of a rule: NFTA_LIST_ELEM { NAME, DATA { ... } }; end with expr_end. */
struct expr {
	size_t elem, data;
};

static struct expr expr_begin(struct batch *b, const char *name)
{
	struct expr e = { .elem = nest(b, NFTA_LIST_ELEM) };
	str(b, NFTA_EXPR_NAME, name);
	e.data = nest(b, NFTA_EXPR_DATA);
	return e;
}

static void expr_end(struct batch *b, struct expr e)
{
	nest_end(b, e.data);
	nest_end(b, e.elem);
}

/* A verdict (jump, goto) to chain, as a nest of type. */
static void verdict(struct batch *b, uint16_t type, int code, const char *chain)
{
	size_t d = nest(b, type);
	size_t v = nest(b, NFTA_DATA_VERDICT);
	be32(b, NFTA_VERDICT_CODE, (uint32_t)code);
	str(b, NFTA_VERDICT_CHAIN, chain);
	nest_end(b, v);
	nest_end(b, d);
}

/* A chain of the sandbox's own: EXCL, so that one left behind sends the start to
 * libnftables, whose script empties it. */
static void chain(struct batch *b, const char *name)
{
	msg_begin(b, (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_NEWCHAIN,
		  NLM_F_CREATE | NLM_F_EXCL | NLM_F_ACK, NFPROTO_INET, 0);
	str(b, NFTA_CHAIN_TABLE, "hutch");
	str(b, NFTA_CHAIN_NAME, name);
	msg_end(b);
}

/* Returns the NFTA_RULE_EXPRESSIONS nest; close it, then the message, with rule_end. */
static size_t rule_begin(struct batch *b, const char *chain_name)
{
	msg_begin(b, (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_NEWRULE,
		  NLM_F_CREATE | NLM_F_APPEND | NLM_F_ACK, NFPROTO_INET, 0);
	str(b, NFTA_RULE_TABLE, "hutch");
	str(b, NFTA_RULE_CHAIN, chain_name);
	return nest(b, NFTA_RULE_EXPRESSIONS);
}

static void rule_end(struct batch *b, size_t exprs)
{
	nest_end(b, exprs);
	msg_end(b);
}

/* "ct count over N counter goto capped" in chain lim_VETH. */
static void limit_rule(struct batch *b, const char *lim, unsigned max)
{
	size_t r = rule_begin(b, lim);
	struct expr e = expr_begin(b, "connlimit");
	be32(b, NFTA_CONNLIMIT_COUNT, max);
	be32(b, NFTA_CONNLIMIT_FLAGS, NFT_CONNLIMIT_F_INV); /* "over" */
	expr_end(b, e);
	expr_end(b, expr_begin(b, "counter"));
	e = expr_begin(b, "immediate");
	be32(b, NFTA_IMMEDIATE_DREG, NFT_REG_VERDICT);
	verdict(b, NFTA_IMMEDIATE_DATA, NFT_GOTO, "capped");
	expr_end(b, e);
	rule_end(b, r);
}

#define REFUSED_SET_ID 1

/* Set rf_VETH: ipv4_addr . inet_proto . inet_service, dynamic, 256 slots, a counter each.
 * The user data is nft's own for this type (it reads the listing back with it). */
static void refused_set(struct batch *b, const char *name)
{
	static const uint8_t udata[] = { 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x03, 0x08,
					 0x00, 0x04, 0x0d, 0x00, 0x00, 0x00, 0x01, 0x00 };
	msg_begin(b, (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_NEWSET,
		  NLM_F_CREATE | NLM_F_EXCL | NLM_F_ACK, NFPROTO_INET, 0);
	str(b, NFTA_SET_TABLE, "hutch");
	str(b, NFTA_SET_NAME, name);
	be32(b, NFTA_SET_FLAGS, NFT_SET_EVAL);
	be32(b, NFTA_SET_KEY_TYPE, 7 << 12 | 12 << 6 | 13); /* nft's concatenated type ids */
	be32(b, NFTA_SET_KEY_LEN, 12);
	be32(b, NFTA_SET_ID, REFUSED_SET_ID);
	size_t d = nest(b, NFTA_SET_DESC);
	be32(b, NFTA_SET_DESC_SIZE, NET_REFUSED_SLOTS);
	nest_end(b, d);
	attr(b, NFTA_SET_USERDATA, udata, sizeof(udata));
	size_t e = nest(b, NFTA_SET_EXPR);
	str(b, NFTA_EXPR_NAME, "counter");
	nest_end(b, nest(b, NFTA_EXPR_DATA));
	nest_end(b, e);
	msg_end(b);
}

static void payload(struct batch *b, uint32_t base, uint32_t offset, uint32_t len, uint32_t reg)
{
	struct expr e = expr_begin(b, "payload");
	be32(b, NFTA_PAYLOAD_DREG, reg);
	be32(b, NFTA_PAYLOAD_BASE, base);
	be32(b, NFTA_PAYLOAD_OFFSET, offset);
	be32(b, NFTA_PAYLOAD_LEN, len);
	expr_end(b, e);
}

static void meta(struct batch *b, uint32_t key, uint32_t reg)
{
	struct expr e = expr_begin(b, "meta");
	be32(b, NFTA_META_DREG, reg);
	be32(b, NFTA_META_KEY, key);
	expr_end(b, e);
}

/* "add @rf_VETH { ip daddr . meta l4proto . th dport }" in chain rf_VETH, as nft words it:
 * the key's fields in consecutive 32-bit registers. */
static void record_rule(struct batch *b, const char *rf)
{
	size_t r = rule_begin(b, rf);
	meta(b, NFT_META_NFPROTO, NFT_REG_1);
	struct expr e = expr_begin(b, "cmp");
	be32(b, NFTA_CMP_SREG, NFT_REG_1);
	be32(b, NFTA_CMP_OP, NFT_CMP_EQ);
	uint8_t v4 = NFPROTO_IPV4;
	data(b, NFTA_CMP_DATA, &v4, 1);
	expr_end(b, e);
	payload(b, NFT_PAYLOAD_NETWORK_HEADER, 16, 4, NFT_REG_1);
	meta(b, NFT_META_L4PROTO, NFT_REG32_01);
	payload(b, NFT_PAYLOAD_TRANSPORT_HEADER, 2, 2, NFT_REG32_02);
	e = expr_begin(b, "dynset");
	str(b, NFTA_DYNSET_SET_NAME, rf);
	be32(b, NFTA_DYNSET_SET_ID, REFUSED_SET_ID);
	be32(b, NFTA_DYNSET_OP, NFT_DYNSET_OP_ADD);
	be32(b, NFTA_DYNSET_SREG_KEY, NFT_REG_1);
	expr_end(b, e);
	rule_end(b, r);
}

/* "VETH" : jump CHAIN into verdict map. */
static void jump_element(struct batch *b, const char *map, const struct key *k, const char *to)
{
	msg_begin(b, (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_NEWSETELEM, NLM_F_CREATE | NLM_F_ACK,
		  NFPROTO_INET, 0);
	str(b, NFTA_SET_ELEM_LIST_TABLE, "hutch");
	str(b, NFTA_SET_ELEM_LIST_SET, map);
	size_t list = nest(b, NFTA_SET_ELEM_LIST_ELEMENTS);
	size_t el = nest(b, NFTA_LIST_ELEM);
	data(b, NFTA_SET_ELEM_KEY, k->v, k->len);
	verdict(b, NFTA_SET_ELEM_DATA, NFT_JUMP, to);
	nest_end(b, el);
	nest_end(b, list);
	msg_end(b);
}

/* net-nft.c's own_script: the sandbox's cap and its record of refused destinations. */
static void own(struct batch *b, const char *veth, const struct key *ifn, unsigned max_conns)
{
	char lim[32], rf[32];
	snprintf(lim, sizeof(lim), "lim_%s", veth);
	snprintf(rf, sizeof(rf), "rf_%s", veth);
	if (max_conns) {
		chain(b, lim);
		limit_rule(b, lim, max_conns);
		jump_element(b, "limits", ifn, lim);
	}
	refused_set(b, rf);
	chain(b, rf);
	record_rule(b, rf);
	jump_element(b, "record", ifn, rf);
}

/* The order of net-nft.c's add_script: counters before the maps that name them, chains and
 * sets before the rules and maps that name them. */
static void build(struct batch *b, uint32_t addr, const struct net_subnet *s,
		  const struct net_egress *eg)
{
	char veth[NET_IFNAME_LEN], ok[32], no[32];
	net_veth_name(addr, veth);
	snprintf(ok, sizeof(ok), "ok_%s", veth);
	snprintf(no, sizeof(no), "no_%s", veth);
	msg_begin(b, NFNL_MSG_BATCH_BEGIN, 0, AF_UNSPEC, NFNL_SUBSYS_NFTABLES);
	msg_end(b);
	struct key ifn = { .len = 0 }, src = { .len = 0 }, a = { .len = 0 }, dns = { .len = 0 };
	key_ifname(&ifn, veth);
	src = ifn;
	key_u32(&src, addr);
	key_u32(&a, addr);
	dns = ifn;
	key_u32(&dns, net_subnet_gateway(s));
	element(b, "layout_3", &ifn, NULL, NULL); /* ENOENT on an older layout's table */
	element(b, "sandboxes", &ifn, NULL, NULL);
	element(b, "sources", &src, NULL, NULL);
	element_of(b, NFPROTO_ARP, "sandboxes", &ifn, NULL, NULL); /* its ARP's sender address */
	element_of(b, NFPROTO_ARP, "sources", &src, NULL, NULL);
	element(b, "addrs", &a, NULL, NULL);
	element(b, "dns", &dns, NULL, NULL);
	counter(b, ok);
	counter(b, no);
	element(b, "ok_ctr", &ifn, NULL, ok);
	element(b, "no_ctr", &ifn, NULL, no);
	own(b, veth, &ifn, eg->max_conns);
	if (eg->restricted)
		element(b, "restricted", &ifn, NULL, NULL);
	for (size_t i = 0; i < eg->n_allow; i++)
		cidr(b, veth, &eg->allow[i], false);
	for (size_t i = 0; i < eg->n_deny; i++)
		cidr(b, veth, &eg->deny[i], true);
	msg_begin(b, NFNL_MSG_BATCH_END, 0, AF_UNSPEC, NFNL_SUBSYS_NFTABLES);
	msg_end(b);
}

/* Every acked message's ack, or the first error (the kernel then has undone the batch). */
static int acks(int fd, uint32_t want)
{
	char buf[8192] __attribute__((aligned(NLMSG_ALIGNTO)));
	uint32_t got = 0;
	while (got < want) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		size_t len = (size_t)n;
		for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, len);
		     h = NLMSG_NEXT(h, len)) {
			if (h->nlmsg_type != NLMSG_ERROR)
				continue;
			const struct nlmsgerr *e = NLMSG_DATA(h);
			if (e->error < 0)
				return e->error;
			got++;
		}
	}
	return 0;
}

int net_nftnl_sandbox_add(uint32_t addr, const struct net_subnet *s, const struct net_egress *eg)
{
	static struct batch b; /* 16 KB: off the stack */
	memset(&b, 0, sizeof(b));
	build(&b, addr, s, eg);
	if (b.full)
		return -E2BIG;
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_NETFILTER);
	if (fd < 0)
		return -errno;
	struct timeval tv = { .tv_sec = 2 };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	int r = 0;
	if (sendto(fd, b.buf, b.len, 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0)
		r = -errno;
	if (r == 0)
		r = acks(fd, b.n_acked);
	close(fd);
	return r;
}
