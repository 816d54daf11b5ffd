// SPDX-License-Identifier: Apache-2.0
/*
 * Bridge mode's links over rtnetlink: a routed veth pair per sandbox (no Linux bridge: each
 * sandbox's traffic must enter the host through an interface of its own, which the firewall
 * keys on), whose peer is created directly inside the sandbox's network namespace with its
 * address, MTU and default route, and deleting the host end afterwards.
 * Messages are built by hand with the kernel's headers rather than libmnl: see docs/networking.md
 * ("Why no libmnl") for why a shared library cannot serve a static binary here.
 */
#include "net-internal.h"

#include <fcntl.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/veth.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <arpa/inet.h>

#define MSG_MAX 1024

/* One request being built: a header and its attributes in a fixed buffer. */
struct nlmsg {
	union {
		struct nlmsghdr nh;
		char buf[MSG_MAX];
	} u;
};

static void *msg_init(struct nlmsg *m, uint16_t type, uint16_t flags, size_t hdr_len)
{
	memset(m, 0, sizeof(*m));
	m->u.nh.nlmsg_len = NLMSG_LENGTH(hdr_len);
	m->u.nh.nlmsg_type = type;
	m->u.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
	return NLMSG_DATA(&m->u.nh);
}

static void *msg_tail(struct nlmsg *m)
{
	return m->u.buf + NLMSG_ALIGN(m->u.nh.nlmsg_len);
}

/* The messages are small and fixed in shape: running out of room is a bug, not an input. */
static void *msg_put(struct nlmsg *m, size_t len)
{
	if (NLMSG_ALIGN(m->u.nh.nlmsg_len) + NLMSG_ALIGN(len) > MSG_MAX)
		abort();
	void *p = msg_tail(m);
	m->u.nh.nlmsg_len = NLMSG_ALIGN(m->u.nh.nlmsg_len) + (uint32_t)NLMSG_ALIGN(len);
	return p;
}

static void attr_put(struct nlmsg *m, uint16_t type, const void *data, size_t len)
{
	struct rtattr *a = msg_put(m, RTA_LENGTH(len));
	a->rta_type = type;
	a->rta_len = (unsigned short)RTA_LENGTH(len);
	if (len)
		memcpy(RTA_DATA(a), data, len);
}

static void attr_u32(struct nlmsg *m, uint16_t type, uint32_t v)
{
	attr_put(m, type, &v, sizeof(v));
}

static void attr_str(struct nlmsg *m, uint16_t type, const char *s)
{
	attr_put(m, type, s, strlen(s) + 1);
}

static struct rtattr *nest_start(struct nlmsg *m, uint16_t type)
{
	struct rtattr *a = msg_put(m, RTA_LENGTH(0));
	a->rta_type = type;
	return a;
}

static void nest_end(struct nlmsg *m, struct rtattr *a)
{
	a->rta_len = (unsigned short)((char *)msg_tail(m) - (char *)a);
}

static int nl_open(struct hutch_err *err)
{
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		return hutch_fail_errno(err, errno, "netlink socket");
	return fd;
}

/* Sends one request and waits for its ack; returns the kernel's -errno, err filled with what. */
static int nl_call(int fd, struct nlmsg *m, const char *what, struct hutch_err *err)
{
	static uint32_t seq;
	m->u.nh.nlmsg_seq = ++seq;
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	if (sendto(fd, m->u.buf, m->u.nh.nlmsg_len, 0, (struct sockaddr *)&kernel, sizeof(kernel)) <
	    0)
		return hutch_fail_errno(err, errno, "%s: netlink send", what);
	return net_nl_ack(fd, m->u.nh.nlmsg_seq, what, err);
}

static int link_up(int fd, int index, const char *name, struct hutch_err *err)
{
	struct nlmsg m;
	struct ifinfomsg *ifi = msg_init(&m, RTM_NEWLINK, 0, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = index;
	ifi->ifi_flags = IFF_UP;
	ifi->ifi_change = IFF_UP;
	char what[64];
	snprintf(what, sizeof(what), "set %s up", name);
	return nl_call(fd, &m, what, err);
}

static int add_addr(int fd, int index, uint32_t addr, unsigned prefix, const char *name,
		    struct hutch_err *err)
{
	struct nlmsg m;
	struct ifaddrmsg *ifa = msg_init(&m, RTM_NEWADDR, NLM_F_CREATE | NLM_F_EXCL, sizeof(*ifa));
	ifa->ifa_family = AF_INET;
	ifa->ifa_prefixlen = (unsigned char)prefix;
	ifa->ifa_scope = RT_SCOPE_UNIVERSE;
	ifa->ifa_index = (unsigned)index;
	uint32_t be = htonl(addr);
	attr_put(&m, IFA_LOCAL, &be, sizeof(be));
	attr_put(&m, IFA_ADDRESS, &be, sizeof(be));
	char a[NET_IPV4_LEN], what[96];
	net_ipv4_format(addr, a);
	snprintf(what, sizeof(what), "add %s/%u to %s", a, prefix, name);
	return nl_call(fd, &m, what, err);
}

/* A route through index: the default one via gw, or (gw 0) the on-link host route to dst. */
static int add_route(int fd, int index, uint32_t dst, uint32_t gw, const char *what,
		     struct hutch_err *err)
{
	struct nlmsg m;
	struct rtmsg *rt = msg_init(&m, RTM_NEWROUTE, NLM_F_CREATE | NLM_F_EXCL, sizeof(*rt));
	rt->rtm_family = AF_INET;
	rt->rtm_table = RT_TABLE_MAIN;
	rt->rtm_protocol = RTPROT_BOOT;
	rt->rtm_scope = gw ? RT_SCOPE_UNIVERSE : RT_SCOPE_LINK;
	rt->rtm_type = RTN_UNICAST;
	if (gw) {
		uint32_t be = htonl(gw);
		attr_put(&m, RTA_GATEWAY, &be, sizeof(be));
	} else {
		uint32_t be = htonl(dst);
		rt->rtm_dst_len = 32;
		attr_put(&m, RTA_DST, &be, sizeof(be));
	}
	attr_u32(&m, RTA_OIF, (uint32_t)index);
	return nl_call(fd, &m, what, err);
}

/* Forwarding is per network namespace; turning it on also resets some per-interface
 * settings (accept_redirects...), hence only when off and only once bridge mode is used. */
int net_host_forwarding(struct hutch_err *err)
{
	_cleanup_free_ char *cur = NULL;
	const char *path = "/proc/sys/net/ipv4/ip_forward";
	if (hutch_read_file_at(AT_FDCWD, path, 16, &cur, NULL, err) >= 0 && cur[0] == '1')
		return 0;
	hutch_err_clear(err);
	if (hutch_write_str_at(AT_FDCWD, path, "1", err) < 0)
		return hutch_err_prefix(err, "enable IPv4 forwarding: ");
	return 0;
}

void net_veth_name(uint32_t addr, char buf[NET_IFNAME_LEN])
{
	snprintf(buf, NET_IFNAME_LEN, "hv%08x", addr);
}

bool net_veth_lingers(uint32_t addr)
{
	char host[NET_IFNAME_LEN];
	net_veth_name(addr, host);
	return if_nametoindex(host) != 0;
}

/*
 * One queue each way, asked for: a veth asked for none gets one per CPU (for XDP), and the
 * kernel then cuts each end back to one once it is registered, a cut that waits for an
 * expedited RCU grace period under the RTNL lock, twice a pair: ~1.4 ms of every bridge
 * start here, and each start's wait held up every other user of the lock (a next sandbox's
 * veth, the kernel's removal of the last one's network namespace). A sandbox's eth0 is one
 * stream of packets through the host's firewall: one queue is all it ever used.
 */
static void one_queue(struct nlmsg *m)
{
	attr_u32(m, IFLA_NUM_TX_QUEUES, 1);
	attr_u32(m, IFLA_NUM_RX_QUEUES, 1);
}

static int create_veth(int fd, const struct net_veth *v, int netns_fd, const char *host,
		       struct hutch_err *err)
{
	struct nlmsg m;
	struct ifinfomsg *ifi = msg_init(&m, RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	attr_str(&m, IFLA_IFNAME, host);
	attr_u32(&m, IFLA_MTU, v->mtu);
	one_queue(&m);
	struct rtattr *info = nest_start(&m, IFLA_LINKINFO);
	attr_str(&m, IFLA_INFO_KIND, "veth");
	struct rtattr *data = nest_start(&m, IFLA_INFO_DATA);
	struct rtattr *peer = nest_start(&m, VETH_INFO_PEER);
	struct ifinfomsg *pifi = msg_put(&m, sizeof(*pifi));
	pifi->ifi_family = AF_UNSPEC;
	attr_str(&m, IFLA_IFNAME, "eth0");
	attr_u32(&m, IFLA_MTU, v->mtu);
	one_queue(&m);
	attr_u32(&m, IFLA_NET_NS_FD, (uint32_t)netns_fd);
	nest_end(&m, peer);
	nest_end(&m, data);
	nest_end(&m, info);
	char what[64];
	snprintf(what, sizeof(what), "create veth %s", host);
	return nl_call(fd, &m, what, err);
}

/* A netlink socket belongs to the namespace it was made in: make one inside the sandbox's
 * netns and come straight back. hutch is single-threaded here, so nothing else sees it. */
static int socket_in(int netns_fd, int *eth0, struct hutch_err *err)
{
	_cleanup_close_ int self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (self < 0)
		return hutch_fail_errno(err, errno, "open /proc/self/ns/net");
	if (setns(netns_fd, CLONE_NEWNET) < 0)
		return hutch_fail_errno(err, errno, "setns into the sandbox's network namespace");
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	int saved = errno;
	*eth0 = (int)if_nametoindex("eth0");
	if (setns(self, CLONE_NEWNET) < 0)
		abort(); /* we would go on configuring the host from inside the sandbox */
	if (fd < 0)
		return hutch_fail_errno(err, saved, "netlink socket in the sandbox");
	if (*eth0 == 0) {
		close(fd);
		return hutch_fail(err, ENODEV, "eth0 missing in the sandbox");
	}
	return fd;
}

/* A per-interface sysctl of the host end; a kernel without it has nothing to turn off. */
static void host_end_sysctl(const char *host, const char *path, const char *value)
{
	char p[128];
	snprintf(p, sizeof(p), path, host);
	struct hutch_err e = { 0 };
	hutch_write_str_at(AT_FDCWD, p, value, &e);
}

/* The host end carries no IPv6: the kernel then drops what the sandbox sends over v6 (router
 * solicitations included) before the firewall, which refuses v6 anyway, would count it. The
 * strict reverse path filter drops a source that is not routed back through this veth (only
 * the sandbox's address is), beside the firewall's check (the effective value is the higher of
 * this and conf/all, so a host's loose mode, 2, wins: the firewall does not depend on it). No
 * source route is accepted from it, whatever conf/all says (both must allow it), beside the
 * firewall's drop of IP options. */
static void host_end_sysctls(const char *host)
{
	host_end_sysctl(host, "/proc/sys/net/ipv6/conf/%s/disable_ipv6", "1");
	host_end_sysctl(host, "/proc/sys/net/ipv4/conf/%s/rp_filter", "1");
	host_end_sysctl(host, "/proc/sys/net/ipv4/conf/%s/accept_source_route", "0");
}

/* The host end: the gateway as a /32 and a host route to the sandbox's address, so that
 * every packet from the sandbox enters the host through its own interface (the firewall's
 * key). The gateway address may sit on many host ends at once. */
static int host_end(int fd, const struct net_veth *v, uint32_t addr, const char *host,
		    struct hutch_err *err)
{
	int idx = (int)if_nametoindex(host);
	if (idx == 0)
		return hutch_fail_errno(err, errno, "veth %s", host);
	host_end_sysctls(host);
	TRY(add_addr(fd, idx, net_subnet_gateway(&v->subnet), 32, host, err));
	TRY(link_up(fd, idx, host, err));
	char what[64];
	snprintf(what, sizeof(what), "add the route to %s", host);
	return add_route(fd, idx, addr, 0, what, err);
}

int net_veth_attach(const struct net_veth *v, int netns_fd, uint32_t addr, struct hutch_err *err)
{
	char host[NET_IFNAME_LEN];
	net_veth_name(addr, host);
	_cleanup_close_ int fd = nl_open(err);
	if (fd < 0)
		return fd;
	TRY(create_veth(fd, v, netns_fd, host, err));
	TRY(host_end(fd, v, addr, host, err));
	int eth0 = 0;
	_cleanup_close_ int in = socket_in(netns_fd, &eth0, err);
	if (in < 0)
		return in;
	/* lo too: a namespace made for another runtime or host mode has nobody else to bring it
	 * up (127.0.0.1 would go out eth0, to the host, and be dropped there). */
	TRY(link_up(in, 1, "lo", err));
	/* Inside, the whole subnet is on-link, as on a bridge: the gateway is reached by ARP. */
	TRY(add_addr(in, eth0, addr, v->subnet.prefix, "eth0", err));
	TRY(link_up(in, eth0, "eth0", err));
	/* The route needs eth0 up and its subnet route in place to accept the gateway. */
	return add_route(in, eth0, 0, net_subnet_gateway(&v->subnet), "add default route", err);
}

int net_veth_detach(uint32_t addr, struct hutch_err *err)
{
	char host[NET_IFNAME_LEN];
	net_veth_name(addr, host);
	_cleanup_close_ int fd = nl_open(err);
	if (fd < 0)
		return fd;
	struct nlmsg m;
	struct ifinfomsg *ifi = msg_init(&m, RTM_DELLINK, 0, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	attr_str(&m, IFLA_IFNAME, host);
	char what[64];
	snprintf(what, sizeof(what), "delete veth %s", host);
	int r = nl_call(fd, &m, what, err);
	if (r == -ENODEV) { /* the sandbox's netns died and took the pair with it */
		hutch_err_clear(err);
		return 0;
	}
	return r;
}
