/* SPDX-License-Identifier: Apache-2.0 */
/* Shared between the files of net/ and nothing else. */
#ifndef HUTCH_NET_INTERNAL_H
#define HUTCH_NET_INTERNAL_H

#include "net.h"
#include "net-egress.h"

/* Waits on a NETLINK_ROUTE socket for the ack of request seq: 0, or the kernel's -errno with
 * err naming what. Other messages are skipped. */
int net_nl_ack(int fd, uint32_t seq, const char *what, struct hutch_err *err);
/* recv() of one netlink read, again after EINTR: its length, or -errno. */
ssize_t net_nl_recv(int fd, void *buf, size_t len);

/* Closes *fd if open and marks it closed (hutch_closep leaves the number: it is a destructor). */
static inline void net_fd_reset(int *fd)
{
	hutch_closep(fd);
	*fd = -1;
}

/* Shared by the two sides of the DNS forwarder (net-dnsfwd-share.c). */
#define NET_DNS_RCODE_SERVFAIL 2
#define NET_DNS_RCODE_REFUSED 5
enum net_dns_verdict { NET_DNS_DROP, NET_DNS_REFUSE, NET_DNS_FORWARD };
/* Parses query q and applies f's policy; name and matched are set unless DROP. */
enum net_dns_verdict net_dns_fwd_judge(const struct net_dns_fwd *f, const uint8_t *q, size_t len,
				       char name[NET_DNS_NAME_MAX], bool *matched);
/* Whether upstream's r (*rlen bytes, in a buffer of cap) may be relayed for q (as sent): 0 yes,
 * with the addresses f->drop_addr refuses removed from it (*rlen updated, st counts them) and
 * on_answer told of the rest; 1 it answers another query (dropped); < 0 answer SERVFAIL
 * instead. */
int net_dns_fwd_check(const struct net_dns_fwd *f, struct net_dns_stats *st, const uint8_t *q,
		      size_t qlen, uint8_t *r, size_t *rlen, size_t cap, const char *name,
		      bool matched);
/* A non-blocking socket (SOCK_DGRAM or SOCK_STREAM) connected or connecting to upstream i. */
int net_dns_fwd_connect(const struct net_dns_fwd *f, size_t i, int type);
/* A fresh random query ID for upstream: the sandbox's own could be guessed by a spoofer. */
uint16_t net_dns_fwd_id(uint16_t fallback);

struct pollfd;
struct net_dns_tcp; /* the TCP clients of one forwarder */
struct net_dns_tcp *net_dns_tcp_new(void);
void net_dns_tcp_free(struct net_dns_tcp *t);
bool net_dns_tcp_full(const struct net_dns_tcp *t);
int net_dns_tcp_accept(struct net_dns_tcp *t, const struct net_dns_fwd *f, double now,
		       struct hutch_err *err);
/* Fills pfd (room for NET_DNS_TCP_MAX) for the clients; lowers *next to their next deadline. */
#define NET_DNS_TCP_MAX 4
size_t net_dns_tcp_poll(struct net_dns_tcp *t, struct pollfd *pfd, double *next);
/* Moves each client on by what poll said (pfd as filled by net_dns_tcp_poll) and the time. */
void net_dns_tcp_step(struct net_dns_tcp *t, const struct net_dns_fwd *f, struct net_dns_stats *st,
		      const struct pollfd *pfd, double now);

/* net-nftnl.c: the process's NETLINK_NETFILTER socket (nf_tables and conntrack), opened on
 * first use, emptied of what an earlier use left, never closed: the fd, or -errno. A forked
 * child forgets its parent's (net_nft_after_fork). */
int net_nfnl_socket(void);
void net_nfnl_forget(void);
struct nlattr;
/* Netlink attributes in [p, p+len): the first (NULL if none or malformed), the one after a
 * (*len is what is left from a; NULL at the end), and the first of type (or NULL). */
const struct nlattr *net_nla_first(const void *p, size_t len);
const struct nlattr *net_nla_next(const struct nlattr *a, size_t *len);
const struct nlattr *net_nla_find(const void *p, size_t len, uint16_t type);

/* net-nftnl.c: a sandbox's elements (eg's CIDRs narrowest first) in one raw nf_tables batch,
 * into the table net-nft.c made: 0, or -errno (the kernel undid the batch), and no text. */
int net_nftnl_sandbox_add(uint32_t addr, const struct net_subnet *s, const struct net_egress *eg);
/* What net_nftnl_sandbox_add added (the same s and eg), out again in one batch: 0, or -errno
 * (the kernel undid the batch: something was missing). -EEXIST, and nothing removed, when the
 * sets of timed elements hold one of the veth's (the DNS forwarder's): net_nft_sandbox_del's
 * work, by the listing. */
int net_nftnl_sandbox_del(uint32_t addr, const struct net_subnet *s, const struct net_egress *eg);

#endif
