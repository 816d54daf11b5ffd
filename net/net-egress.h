/* SPDX-License-Identifier: Apache-2.0 */
/*
 * net/'s egress policy, what a bridge-mode sandbox may reach: the nftables firewall
 * (net-nft*.c), and the DNS wire format (net-dns.c) and policy forwarder (net-dnsfwd*.c)
 * that opens the addresses of allowed names in it. The links and leases are in net.h.
 */
#ifndef HUTCH_NET_EGRESS_H
#define HUTCH_NET_EGRESS_H

#include "net.h"

/*
 * The firewall: nftables table "inet hutch", made once per network namespace and shared by
 * every sandbox, whose rules look a packet's veth up in sets. A sandbox adds its elements in
 * one transaction and removes them all (found by its veth's name) at the end; see net-nft.c.
 * libnftables is dlopen'ed on first use.
 */
struct net_cidr {
	uint32_t addr; /* host order, host bits zero */
	unsigned prefix;
	uint16_t port_lo, port_hi; /* tcp and udp; 0-0: every port and protocol */
};
/* "A.B.C.D[/N][:PORT[-PORT]]"; host bits must be zero. */
int net_cidr_parse(const char *s, struct net_cidr *out, struct hutch_err *err);
struct net_egress {
	bool restricted; /* only what is allowed; else all but the default refusals */
	const struct net_cidr *allow;
	size_t n_allow;
	const struct net_cidr *deny; /* wins over everything; ports ignored */
	size_t n_deny;
	unsigned max_conns; /* a new connection over this many tracked ones is refused; 0: none */
};
/* net-special.c: the ranges refused unless --allow-cidr names them (the firewall's set
 * "special"), and what the DNS forwarder makes of an answer's address: removed (the host's
 * own, a special range, the sandboxes' subnet, --deny-cidr), kept but not opened (one of those
 * that an --allow-cidr covers: that allow alone lets connections through), or opened for an
 * allowed name (the rest). */
extern const struct net_cidr net_special[];
extern const size_t net_n_special;
bool net_cidr_contains(const struct net_cidr *c, uint32_t addr); /* ports aside */
enum net_answer { NET_ANSWER_OPEN, NET_ANSWER_KEEP, NET_ANSWER_DROP };
struct net_answer_policy {
	const struct net_egress *eg;
	const struct net_subnet *subnet;
	const uint32_t *host; /* the host's own IPv4 addresses */
	size_t n_host;
};
enum net_answer net_answer_judge(const struct net_answer_policy *p, uint32_t addr);
/* The IPv4 addresses of this network namespace's interfaces (host order): how many, up to
 * max, or -errno. */
int net_host_addrs(uint32_t *out, size_t max);
/* In a child that closed the fds it inherited: forget the parent's libnftables context. */
void net_nft_after_fork(void);
/* Before a process that changed the firewall exits: waits for an RCU grace period, so that
 * the exit's release of its netlink socket holds nf_tables's lock for no wait (net-nftnl.c). */
void net_nfnl_quiesce(void);
int net_nft_sandbox_add(uint32_t addr, const struct net_subnet *s, const struct net_egress *eg,
			struct hutch_err *err);
/* Opens dst[0..n) (each a /32, with c's ports) to addr's sandbox for timeout_s seconds: what
 * the DNS forwarder does with an allowed name's answer. */
int net_nft_allow_addrs(uint32_t addr, const uint32_t *dst, size_t n, const struct net_cidr *c,
			unsigned timeout_s, struct hutch_err *err);
struct net_refused {
	uint32_t addr;
	uint8_t proto; /* IPPROTO_TCP or IPPROTO_UDP */
	uint16_t port;
	uint64_t packets;
};
#define NET_REFUSED_MAX 8
#define NET_REFUSED_SLOTS 256 /* refused destinations a sandbox's own set records */
struct net_egress_stats {
	uint64_t allowed, refused; /* connections (first packets) let through and refused */
	uint64_t capped;	   /* new connections refused over max_conns */
	struct net_refused dest[NET_REFUSED_MAX]; /* refused tcp/udp destinations, most hit first */
	size_t n_dest;
};
/* Removes every element and counter of addr's sandbox, reading its counters into st first
 * (st may be NULL). A missing table is fine. */
int net_nft_sandbox_del(uint32_t addr, struct net_egress_stats *st, struct hutch_err *err);
/* The same without counters, for the sandbox net_nft_sandbox_add(addr, s, eg) made: one
 * batch when its elements are what that added (nothing since, as net_nft_allow_addrs adds),
 * else by the listing. */
int net_nft_sandbox_del_known(uint32_t addr, const struct net_subnet *s,
			      const struct net_egress *eg, struct hutch_err *err);

/* Removes the connection-tracking entries whose original source is addr, and with to_too
 * those whose original destination is addr (connections made to it, as --publish's relay
 * makes), (net-ct.c): how many, or -errno. */
int net_ct_flush_addr(uint32_t addr, bool to_too, struct hutch_err *err);

/* Pure, for net_nft_sandbox_del and its tests: from "nft list table inet hutch" output, the
 * script deleting veth's elements and counters (malloc'ed, "" when none), and its stats. */
char *net_nft_del_script(const char *listing, const char *veth, struct net_egress_stats *st);

/* DNS (net-dns.c, pure): the wire format as the sandbox's policy forwarder needs it. */
#define NET_DNS_NAME_MAX 254 /* presentation form incl. NUL */
/* The first question of a query: its name lowercased, dotted, without the final dot ("" for
 * the root), and its type and class. -EINVAL for anything but one well-formed standard query
 * (QR=0, OPCODE=0, QDCOUNT=1, ANCOUNT=NSCOUNT=0, no compression in the question, labels <= 63
 * of printable ASCII without '.', name <= 253). */
int net_dns_parse_query(const uint8_t *msg, size_t len, char name[NET_DNS_NAME_MAX],
			uint16_t *qtype, uint16_t *qclass);
/* Builds into out (cap bytes; may be q) a reply to query q holding only q's header and question,
 * with RCODE rcode (5 REFUSED, 2 SERVFAIL), QR=1, RA=1, q's ID and RD. Its length, or -EINVAL. */
ssize_t net_dns_reply_empty(const uint8_t *q, size_t qlen, unsigned rcode, uint8_t *out,
			    size_t cap);
/* The IPv4 addresses (host order) of the A records of class IN in a response's answer section,
 * up to max, and the smallest TTL among them (0 when none). Compression pointers are followed
 * safely. Returns how many were stored, or -EINVAL for a malformed message. */
int net_dns_answer_a(const uint8_t *msg, size_t len, uint32_t *addrs, size_t max,
		     uint32_t *min_ttl);
/* Removes from response msg every A record of class IN, in any section, whose address drop()
 * refuses (and an IN AAAA mapping one, ::ffff:a.b.c.d), and every other record whose type's
 * low byte is A's or AAAA's in any class (musl reads them as addresses), rebuilding it into
 * out (cap bytes) with every name written in full (a kept record may point into a dropped one). Returns 0 when nothing is dropped (msg stands as it is), else the
 * new length, with *dropped the records removed; -EINVAL for a malformed message, -ENOSPC when
 * cap cannot hold its question. A rebuilt message that does not fit is its header and question
 * alone with TC set, so that the client asks again over TCP. */
struct net_dns_drop {
	bool (*drop)(uint32_t addr, void *arg); /* addr in host order */
	void *arg;
};
ssize_t net_dns_drop_a(const uint8_t *msg, size_t len, const struct net_dns_drop *d, uint8_t *out,
		       size_t cap, unsigned *dropped);
/* Whether response r answers query q: QR set, same ID, same first question (any case). */
bool net_dns_same_question(const uint8_t *q, size_t qlen, const uint8_t *r, size_t rlen);
/* A pattern is a lowercase name ("example.com": that name only) or "*.example.com" (any name
 * strictly below it, at any depth; not example.com itself). Case-insensitive on name. */
bool net_dns_name_match(const char *pattern, const char *name);
/* Validates and lowercases a user's pattern: labels of [a-z0-9_-], 1..63 characters, <= 253 in
 * all, and only a leading "*." as wildcard. -EINVAL with err naming the pattern otherwise. */
int net_dns_pattern_parse(const char *in, char out[NET_DNS_NAME_MAX], struct hutch_err *err);

/* The DNS policy forwarder of one bridge-mode sandbox (net-dnsfwd.c), run in a process of its
 * own: single-threaded, poll(), no global state. Sockets are the caller's, bound already. */
struct net_dns_fwd {
	int udp_fd;		  /* the UDP socket the sandbox queries */
	int tcp_fd;		  /* a listening TCP socket, or -1 (made non-blocking) */
	int stop_fd;		  /* readable or hung up: net_dns_fwd_run returns 0 */
	const uint32_t *upstream; /* IPv4 nameservers (host order), tried in order on timeout */
	size_t n_upstream;
	uint16_t upstream_port; /* 0: 53 */
	bool restricted;	/* only names matching a pattern are forwarded; others: REFUSED */
	const char *const *patterns; /* normalised (net_dns_pattern_parse), also for on_answer */
	size_t n_patterns;
	/* Whether an address in an answer is to be removed from it (DNS rebinding: the host's
	 * own, private ranges...), for every name, before on_answer sees the rest. May be NULL. */
	bool (*drop_addr)(uint32_t addr, void *arg);
	/* Called for each answer before it is relayed, with its A records, their smallest TTL
	 * and whether the question matched a pattern. A failure (< 0) turns the reply into
	 * SERVFAIL: an address the firewall did not open must not be handed out. May be NULL. */
	int (*on_answer)(const char *name, bool matched, const uint32_t *addrs, size_t n,
			 uint32_t ttl, void *arg);
	void *arg;
	unsigned timeout_ms; /* per upstream try; 0: 2000 */
	/* Upstream TCP connections (the host's, in its conntrack table) opened at most this
	 * many a second after a burst; 0: 5 and 10. */
	unsigned tcp_per_s, tcp_burst;
};
struct net_dns_stats {
	uint64_t answered, refused; /* relayed from upstream; refused by policy */
	uint64_t failed;	    /* malformed queries dropped, and SERVFAIL replies */
	uint64_t forged;	    /* upstream packets that answered no query in flight */
	uint64_t timeouts;	    /* upstream tries that timed out */
	uint64_t tcp;		    /* queries that came over TCP */
	uint64_t dropped;	    /* A records removed from answers (drop_addr) */
};
/* Serves until stop_fd fires (0) or a socket fails for good (-errno, err says which). Refuses
 * queries of class other than IN and of types 251-255 (IXFR, AXFR, MAILB, MAILA, ANY). */
int net_dns_fwd_run(const struct net_dns_fwd *f, struct net_dns_stats *st, struct hutch_err *err);

#endif
