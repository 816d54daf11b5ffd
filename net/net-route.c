// SPDX-License-Identifier: Apache-2.0
/*
 * The host's own IPv4 addresses and connected routes, read over rtnetlink (a dump of every
 * table, built by hand as net-bridge.c builds its requests), for one question: may bridge
 * mode's subnet be used here? One that overlaps them takes their addresses: its gateway, a
 * /32 on each veth, and its sandboxes' host routes, more specific than the network's, shadow
 * the host's own (a sandbox got the address of the host's gateway).
 */
#include "net-internal.h"

#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <arpa/inet.h>

#define DUMP_BUF 65536

struct route {
	uint32_t dst; /* host order */
	unsigned len;
	unsigned oif;
	unsigned char type, scope;
};

static bool overlaps(uint32_t a, unsigned alen, uint32_t b, unsigned blen)
{
	unsigned l = alen < blen ? alen : blen;
	uint32_t mask = l ? ~0U << (32 - l) : 0;
	return ((a ^ b) & mask) == 0;
}

/* A sandbox's host end ("hv" and 8 hex digits): bridge mode's own address and route. */
static bool is_veth(const char *dev)
{
	if (strlen(dev) != 10 || strncmp(dev, "hv", 2))
		return false;
	return strspn(dev + 2, "0123456789abcdef") == 8;
}

/* An address of the host's (a local route) or a network on one of its links (a unicast
 * route of link scope), other than a sandbox's; the default route overlaps everything and
 * a route through a gateway is no address of the host's. A device gone since the dump (a
 * sandbox's veth goes with its network namespace, moments after its run) has none either. */
static bool is_hosts(const struct route *r, char dev[IF_NAMESIZE])
{
	if (r->len == 0 ||
	    (r->type != RTN_LOCAL && !(r->type == RTN_UNICAST && r->scope == RT_SCOPE_LINK)))
		return false;
	if (!r->oif || !if_indextoname(r->oif, dev))
		return false;
	return !is_veth(dev);
}

static void parse_route(const struct nlmsghdr *h, struct route *r)
{
	const struct rtmsg *rt = NLMSG_DATA(h);
	*r = (struct route){ .len = rt->rtm_dst_len, .type = rt->rtm_type, .scope = rt->rtm_scope };
	int alen = (int)RTM_PAYLOAD(h);
	for (const struct rtattr *a = RTM_RTA(rt); RTA_OK(a, alen); a = RTA_NEXT(a, alen)) {
		if (a->rta_type == RTA_DST && RTA_PAYLOAD(a) == 4) {
			uint32_t be;
			memcpy(&be, RTA_DATA(a), 4);
			r->dst = ntohl(be);
		} else if (a->rta_type == RTA_OIF && RTA_PAYLOAD(a) == 4) {
			memcpy(&r->oif, RTA_DATA(a), 4);
		}
	}
}

/* The first route of one batch of the dump that s overlaps fails; 1 when the dump is over. */
static int check_batch(const struct net_subnet *s, const char *buf, size_t len,
		       struct hutch_err *err)
{
	for (const struct nlmsghdr *h = (const struct nlmsghdr *)buf; NLMSG_OK(h, len);
	     h = NLMSG_NEXT(h, len)) {
		if (h->nlmsg_type == NLMSG_DONE)
			return 1;
		if (h->nlmsg_type == NLMSG_ERROR) {
			const struct nlmsgerr *e = NLMSG_DATA(h);
			return hutch_fail_errno(err, e->error < 0 ? -e->error : EIO,
						"read the host's routes");
		}
		if (h->nlmsg_type != RTM_NEWROUTE ||
		    h->nlmsg_len < NLMSG_LENGTH(sizeof(struct rtmsg)))
			continue;
		struct route r;
		char dev[IF_NAMESIZE], a[NET_IPV4_LEN];
		parse_route(h, &r);
		if (!overlaps(r.dst, r.len, s->net, s->prefix) || !is_hosts(&r, dev))
			continue;
		net_ipv4_format(r.dst, a);
		if (r.type == RTN_LOCAL)
			return hutch_fail(err, EADDRINUSE, "overlaps the host's address %s (%s)", a,
					  dev);
		return hutch_fail(err, EADDRINUSE, "overlaps the host's route %s/%u dev %s", a,
				  r.len, dev);
	}
	return 0;
}

int net_subnet_check_free(const struct net_subnet *s, struct hutch_err *err)
{
	_cleanup_close_ int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		return hutch_fail_errno(err, errno, "netlink socket");
	struct {
		struct nlmsghdr nh;
		struct rtmsg rt;
	} req = { .nh = { .nlmsg_len = NLMSG_LENGTH(sizeof(struct rtmsg)),
			  .nlmsg_type = RTM_GETROUTE,
			  .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP,
			  .nlmsg_seq = 1 },
		  .rt = { .rtm_family = AF_INET } };
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	if (sendto(fd, &req, req.nh.nlmsg_len, 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0)
		return hutch_fail_errno(err, errno, "read the host's routes: netlink send");
	_cleanup_free_ char *buf = hutch_xmalloc(DUMP_BUF);
	for (;;) {
		ssize_t n = net_nl_recv(fd, buf, DUMP_BUF);
		if (n < 0)
			return hutch_fail_errno(err, (int)-n,
						"read the host's routes: netlink recv");
		int r = check_batch(s, buf, (size_t)n, err);
		if (r != 0)
			return r < 0 ? r : 0;
	}
}
