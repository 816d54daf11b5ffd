// SPDX-License-Identifier: Apache-2.0
/*
 * What a sandbox never reaches unless a caller names it with --allow-cidr: the host itself,
 * the special-purpose ranges (private, loopback, link-local with the cloud metadata service,
 * shared, multicast, reserved) and the sandboxes' subnet. The firewall refuses them (its set
 * "special" is made from the list here), and the DNS forwarder removes them from answers, so
 * that an allowed name's answer can neither open them nor point a client at them (DNS
 * rebinding, as dnsmasq's stop-dns-rebind and unbound's private-address stop it).
 */
#include "net-internal.h"

#include <ifaddrs.h>
#include <netinet/in.h>

const struct net_cidr net_special[] = {
	{ .addr = 0x00000000, .prefix = 8 },  /* "this network", 0.0.0.0 the host itself */
	{ .addr = 0x0a000000, .prefix = 8 },  /* private */
	{ .addr = 0x64400000, .prefix = 10 }, /* shared (carrier-grade NAT) */
	{ .addr = 0x7f000000, .prefix = 8 },  /* loopback */
	{ .addr = 0xa9fe0000, .prefix = 16 }, /* link-local: the cloud metadata service */
	{ .addr = 0xac100000, .prefix = 12 }, /* private */
	{ .addr = 0xc0a80000, .prefix = 16 }, /* private */
	{ .addr = 0xe0000000, .prefix = 4 },  /* multicast */
	{ .addr = 0xf0000000, .prefix = 4 },  /* reserved, and the broadcast address */
};
const size_t net_n_special = ARRAY_SIZE(net_special);

bool net_cidr_contains(const struct net_cidr *c, uint32_t addr)
{
	uint32_t mask = c->prefix ? ~0U << (32 - c->prefix) : 0;
	return (addr & mask) == c->addr;
}

static bool in_list(const struct net_cidr *c, size_t n, uint32_t addr)
{
	for (size_t i = 0; i < n; i++)
		if (net_cidr_contains(&c[i], addr))
			return true;
	return false;
}

enum net_answer net_answer_judge(const struct net_answer_policy *p, uint32_t addr)
{
	const struct net_egress *eg = p->eg;
	if (in_list(eg->deny, eg->n_deny, addr)) /* wins over every allow */
		return NET_ANSWER_DROP;
	bool host = false;
	for (size_t i = 0; i < p->n_host && !host; i++)
		host = p->host[i] == addr;
	if (!host && !net_subnet_contains(p->subnet, addr) &&
	    !in_list(net_special, net_n_special, addr))
		return NET_ANSWER_OPEN;
	/* Only the caller's own --allow-cidr reaches these: the answer may say so, but it
	 * opens nothing (the allow, with its ports, is what lets connections through). */
	return in_list(eg->allow, eg->n_allow, addr) ? NET_ANSWER_KEEP : NET_ANSWER_DROP;
}

int net_host_addrs(uint32_t *out, size_t max)
{
	struct ifaddrs *list = NULL;
	if (getifaddrs(&list) < 0)
		return -errno;
	size_t n = 0;
	for (struct ifaddrs *i = list; i && n < max; i = i->ifa_next)
		if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET)
			out[n++] = ntohl(((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr);
	freeifaddrs(list);
	return (int)n;
}
