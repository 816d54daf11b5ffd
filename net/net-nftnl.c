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
#include <sys/syscall.h>
#include <linux/membarrier.h>
#include <sys/time.h>
#include <unistd.h>

#define BATCH_MAX 16384

struct batch {
	char buf[BATCH_MAX] __attribute__((aligned(NLMSG_ALIGNTO)));
	size_t len, msg;       /* msg: the current message's offset */
	uint32_t seq, n_acked; /* n_acked: messages that ask for an ack */
	bool full;
	bool del; /* a deletion batch: elements go out, by key */
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

/* One message of type (NFT_MSG_*) in table "hutch"'s subsystem: an addition makes, and may
 * not replace, what it names; a deletion takes the key alone. */
static void nft_msg(struct batch *b, uint16_t type, uint16_t flags, uint8_t family)
{
	msg_begin(b, (NFNL_SUBSYS_NFTABLES << 8) | type, flags | NLM_F_ACK, family, 0);
}

/* One element into set of table "hutch" of family (out of it, in a deletion batch): its
 * key, its last key for an interval set, an object for a map. */
static void element_of(struct batch *b, uint8_t family, const char *set, const struct key *k,
		       const struct key *end, const char *objref)
{
	if (b->del)
		nft_msg(b, NFT_MSG_DELSETELEM, 0, family);
	else
		nft_msg(b, NFT_MSG_NEWSETELEM, NLM_F_CREATE, family);
	str(b, NFTA_SET_ELEM_LIST_TABLE, "hutch");
	str(b, NFTA_SET_ELEM_LIST_SET, set);
	size_t list = nest(b, NFTA_SET_ELEM_LIST_ELEMENTS);
	size_t el = nest(b, NFTA_LIST_ELEM);
	data(b, NFTA_SET_ELEM_KEY, k->v, k->len);
	if (end)
		data(b, NFTA_SET_ELEM_KEY_END, end->v, end->len);
	if (objref && !b->del)
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
	nft_msg(b, b->del ? NFT_MSG_DELOBJ : NFT_MSG_NEWOBJ, b->del ? 0 : NLM_F_CREATE,
		NFPROTO_INET);
	str(b, NFTA_OBJ_TABLE, "hutch");
	str(b, NFTA_OBJ_NAME, name);
	uint32_t type = htonl(NFT_OBJECT_COUNTER);
	attr(b, NFTA_OBJ_TYPE, &type, sizeof(type));
	if (b->del) {
		msg_end(b);
		return;
	}
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
	/* Deleted with its rule (no NLM_F_NONREC), once nothing jumps to it. */
	if (b->del)
		nft_msg(b, NFT_MSG_DELCHAIN, 0, NFPROTO_INET);
	else
		nft_msg(b, NFT_MSG_NEWCHAIN, NLM_F_CREATE | NLM_F_EXCL, NFPROTO_INET);
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
	nft_msg(b, NFT_MSG_NEWSETELEM, NLM_F_CREATE, NFPROTO_INET);
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

/* The keys a sandbox's elements have: its veth, veth . address, address, veth . gateway. */
struct keys {
	char veth[NET_IFNAME_LEN], ok[32], no[32], lim[32], rf[32];
	struct key ifn, src, a, dns;
};

static void keys_of(struct keys *k, uint32_t addr, const struct net_subnet *s)
{
	memset(k, 0, sizeof(*k));
	net_veth_name(addr, k->veth);
	snprintf(k->ok, sizeof(k->ok), "ok_%s", k->veth);
	snprintf(k->no, sizeof(k->no), "no_%s", k->veth);
	snprintf(k->lim, sizeof(k->lim), "lim_%s", k->veth);
	snprintf(k->rf, sizeof(k->rf), "rf_%s", k->veth);
	key_ifname(&k->ifn, k->veth);
	k->src = k->ifn;
	key_u32(&k->src, addr);
	key_u32(&k->a, addr);
	k->dns = k->ifn;
	key_u32(&k->dns, net_subnet_gateway(s));
}

/* net-nft.c's own_script: the sandbox's cap and its record of refused destinations. */
static void own(struct batch *b, const struct keys *k, unsigned max_conns)
{
	if (max_conns) {
		chain(b, k->lim);
		limit_rule(b, k->lim, max_conns);
		jump_element(b, "limits", &k->ifn, k->lim);
	}
	refused_set(b, k->rf);
	chain(b, k->rf);
	record_rule(b, k->rf);
	jump_element(b, "record", &k->ifn, k->rf);
}

/* The elements that name nothing of the sandbox's own: the same in both batches. */
static void plain_elements(struct batch *b, const struct keys *k, const struct net_egress *eg)
{
	element(b, "layout_3", &k->ifn, NULL, NULL); /* ENOENT on an older layout's table */
	element(b, "sandboxes", &k->ifn, NULL, NULL);
	element(b, "sources", &k->src, NULL, NULL);
	element_of(b, NFPROTO_ARP, "sandboxes", &k->ifn, NULL, NULL); /* its ARP's sender */
	element_of(b, NFPROTO_ARP, "sources", &k->src, NULL, NULL);
	element(b, "addrs", &k->a, NULL, NULL);
	element(b, "dns", &k->dns, NULL, NULL);
	if (eg->restricted)
		element(b, "restricted", &k->ifn, NULL, NULL);
	for (size_t i = 0; i < eg->n_allow; i++)
		cidr(b, k->veth, &eg->allow[i], false);
	for (size_t i = 0; i < eg->n_deny; i++)
		cidr(b, k->veth, &eg->deny[i], true);
}

static void batch_edge(struct batch *b, uint16_t type)
{
	msg_begin(b, type, 0, AF_UNSPEC, NFNL_SUBSYS_NFTABLES);
	msg_end(b);
}

/* The order of net-nft.c's add_script: counters before the maps that name them, chains and
 * sets before the rules and maps that name them. */
static void build(struct batch *b, uint32_t addr, const struct net_subnet *s,
		  const struct net_egress *eg)
{
	struct keys k;
	keys_of(&k, addr, s);
	batch_edge(b, NFNL_MSG_BATCH_BEGIN);
	counter(b, k.ok);
	counter(b, k.no);
	element(b, "ok_ctr", &k.ifn, NULL, k.ok);
	element(b, "no_ctr", &k.ifn, NULL, k.no);
	own(b, &k, eg->max_conns);
	plain_elements(b, &k, eg);
	batch_edge(b, NFNL_MSG_BATCH_END);
}

/* What build made, out again: the elements first (the maps' among them, which name the
 * sandbox's chains and counters), then its chains with their rules, its set, its counters. */
static void build_del(struct batch *b, uint32_t addr, const struct net_subnet *s,
		      const struct net_egress *eg)
{
	struct keys k;
	keys_of(&k, addr, s);
	b->del = true;
	batch_edge(b, NFNL_MSG_BATCH_BEGIN);
	plain_elements(b, &k, eg);
	element(b, "ok_ctr", &k.ifn, NULL, NULL);
	element(b, "no_ctr", &k.ifn, NULL, NULL);
	element(b, "record", &k.ifn, NULL, NULL);
	if (eg->max_conns) {
		element(b, "limits", &k.ifn, NULL, NULL);
		chain(b, k.lim);
	}
	chain(b, k.rf);
	nft_msg(b, NFT_MSG_DELSET, 0, NFPROTO_INET);
	str(b, NFTA_SET_TABLE, "hutch");
	str(b, NFTA_SET_NAME, k.rf);
	msg_end(b);
	counter(b, k.ok);
	counter(b, k.no);
	batch_edge(b, NFNL_MSG_BATCH_END);
}

/* Every acked message's ack, or the first error (the kernel then has undone the batch). */
static int acks(int fd, uint32_t want)
{
	char buf[8192] __attribute__((aligned(NLMSG_ALIGNTO)));
	uint32_t got = 0;
	while (got < want) {
		ssize_t n = net_nl_recv(fd, buf, sizeof(buf));
		if (n < 0)
			return (int)n;
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

/*
 * The process's one NETLINK_NETFILTER socket, for nf_tables and conntrack alike, opened on
 * first use and never closed but by the exit. The release of such a socket makes nf_tables
 * wait, holding its ruleset's lock, for the release work of the namespace's last transactions
 * (an RCU grace period, 8-16 ms on the development VM): a socket closed after each batch held
 * that lock through every bridge start's veth registration (which takes it too) and through
 * every other sandbox's firewall change. One socket a process is one such wait, at its end.
 */
static int nfnl_fd = -1;

int net_nfnl_socket(void)
{
	if (nfnl_fd >= 0) {
		char buf[4096];
		while (recv(nfnl_fd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
			; /* what an earlier use left unread (an error after a timeout) */
		return nfnl_fd;
	}
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_NETFILTER);
	if (fd < 0)
		return -errno;
	struct timeval tv = { .tv_sec = 2 };
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one)); /* short errors */
	nfnl_fd = fd;
	return fd;
}

/* An RCU grace period (MEMBARRIER_CMD_GLOBAL is the kernel's synchronize_rcu): the release
 * work of the process's last transactions, which waits for one that began before, is then
 * done or about to be, and the socket's release at exit finds it so. Without membarrier
 * (nohz_full, a filter), the exit waits as it would have. */
void net_nfnl_quiesce(void)
{
	if (nfnl_fd >= 0)
		syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0);
}

void net_nfnl_forget(void)
{
	nfnl_fd = -1; /* the parent's: closed by the child's fd sweep, or to be left alone */
}

static int send_batch(const struct batch *b);

int net_nftnl_sandbox_add(uint32_t addr, const struct net_subnet *s, const struct net_egress *eg)
{
	static struct batch b; /* 16 KB: off the stack */
	memset(&b, 0, sizeof(b));
	build(&b, addr, s, eg);
	return send_batch(&b);
}

const struct nlattr *net_nla_first(const void *p, size_t len)
{
	const struct nlattr *a = p;
	return len >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN && a->nla_len <= len ? a : NULL;
}

const struct nlattr *net_nla_next(const struct nlattr *a, size_t *len)
{
	size_t step = NLA_ALIGN(a->nla_len);
	if (step >= *len)
		return NULL;
	*len -= step;
	return net_nla_first((const char *)a + step, *len);
}

const struct nlattr *net_nla_find(const void *p, size_t len, uint16_t type)
{
	for (const struct nlattr *a = net_nla_first(p, len); a; a = net_nla_next(a, &len))
		if ((a->nla_type & NLA_TYPE_MASK) == type)
			return a;
	return NULL;
}

#define NLA_DATA(a) ((const char *)(a) + NLA_HDRLEN)
#define NLA_LEN(a) ((size_t)(a)->nla_len - NLA_HDRLEN)

/* Whether an element of set's list (one dumped message's) has a key that begins with veth's
 * name, as every key of the sets of timed elements does. */
static bool names_veth(const struct nlmsghdr *h, const struct key *veth)
{
	size_t hdr = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(struct nfgenmsg));
	if (h->nlmsg_len < hdr)
		return false;
	const struct nlattr *list = net_nla_find((const char *)h + hdr, h->nlmsg_len - hdr,
						 NFTA_SET_ELEM_LIST_ELEMENTS);
	if (!list)
		return false;
	size_t len = NLA_LEN(list);
	for (const struct nlattr *el = net_nla_first(NLA_DATA(list), len); el;
	     el = net_nla_next(el, &len)) {
		const struct nlattr *k = net_nla_find(NLA_DATA(el), NLA_LEN(el), NFTA_SET_ELEM_KEY);
		const struct nlattr *v =
			k ? net_nla_find(NLA_DATA(k), NLA_LEN(k), NFTA_DATA_VALUE) : NULL;
		if (v && NLA_LEN(v) >= veth->len && !memcmp(NLA_DATA(v), veth->v, veth->len))
			return true;
	}
	return false;
}

/* 1 if set of table "inet hutch" holds an element of veth's, 0 if not, or -errno. */
static int set_names_veth(int fd, const char *set, const struct key *veth)
{
	static struct batch b;
	memset(&b, 0, sizeof(b));
	msg_begin(&b, (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_GETSETELEM, NLM_F_DUMP, NFPROTO_INET,
		  0);
	str(&b, NFTA_SET_ELEM_LIST_TABLE, "hutch");
	str(&b, NFTA_SET_ELEM_LIST_SET, set);
	msg_end(&b);
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	if (sendto(fd, b.buf, b.len, 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0)
		return -errno;
	/* As large as any use of the socket asked for (net-ct.c's): the kernel sizes a dump's
	 * messages by the largest read, and a shorter one would cut elements off. */
	static char buf[65536] __attribute__((aligned(NLMSG_ALIGNTO)));
	int found = 0;
	for (;;) {
		ssize_t n = net_nl_recv(fd, buf, sizeof(buf));
		if (n < 0)
			return (int)n;
		size_t len = (size_t)n;
		for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, len);
		     h = NLMSG_NEXT(h, len)) {
			if (h->nlmsg_type == NLMSG_DONE)
				return found;
			if (h->nlmsg_type == NLMSG_ERROR)
				return ((struct nlmsgerr *)NLMSG_DATA(h))->error;
			found |= names_veth(h, veth);
		}
	}
}

int net_nftnl_sandbox_del(uint32_t addr, const struct net_subnet *s, const struct net_egress *eg)
{
	/* The DNS forwarder's timed elements (an allowed name's addresses) are not among what
	 * the start added: with any of them there, it is the listing's work, which removes all. */
	int fd = net_nfnl_socket();
	if (fd < 0)
		return fd;
	struct key veth = { .len = 0 };
	char name[NET_IFNAME_LEN];
	net_veth_name(addr, name);
	key_ifname(&veth, name);
	for (size_t i = 0; i < 2; i++) {
		int r = set_names_veth(fd, i ? "dns_port" : "dns_net", &veth);
		if (r != 0)
			return r < 0 ? r : -EEXIST;
	}
	static struct batch b;
	memset(&b, 0, sizeof(b));
	build_del(&b, addr, s, eg);
	return send_batch(&b);
}

static int send_batch(const struct batch *b)
{
	if (b->full)
		return -E2BIG;
	int fd = net_nfnl_socket();
	if (fd < 0)
		return fd;
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	if (sendto(fd, b->buf, b->len, 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0)
		return -errno;
	return acks(fd, b->n_acked);
}
