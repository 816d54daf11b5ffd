/* SPDX-License-Identifier: Apache-2.0 */
/*
 * net/: a network namespace's links (lo, a veth pair onto a bridge) over rtnetlink, the
 * bridge's address leases (IPAM, files under a lock), and outbound NAT in nftables. Pure
 * parts (addresses, subnets) are testable anywhere; the rest acts on the current namespace.
 * The firewall and the DNS policy forwarder are in net-egress.h.
 */
#ifndef HUTCH_NET_H
#define HUTCH_NET_H

#include "hutch-base.h"

#include <stdint.h>

/* Brings lo up in the current network namespace: one RTM_NEWLINK message, no library. */
int net_loopback_up(struct hutch_err *err);

/* An IPv4 subnet; addresses are in host byte order throughout. */
struct net_subnet {
	uint32_t net;
	unsigned prefix; /* 8..30 */
};
/* "10.89.0.0/24"; host bits must be zero. An IPv6 subnet is -ENOTSUP ("not supported"). */
int net_subnet_parse(const char *s, struct net_subnet *out, struct hutch_err *err);
/* The gateway (the bridge's address) is the subnet's first host address. */
uint32_t net_subnet_gateway(const struct net_subnet *s);
bool net_subnet_contains(const struct net_subnet *s, uint32_t addr);
/* Whether s is free in this network namespace (net-route.c): 0, or -EADDRINUSE when it
 * overlaps an address of the host's or a route of link scope (a network on one of its links),
 * not a sandbox's veth's, err saying which ("overlaps the host's route A/N dev D"). */
int net_subnet_check_free(const struct net_subnet *s, struct hutch_err *err);
int net_ipv4_parse(const char *s, uint32_t *out); /* dotted quad only; -EINVAL otherwise */
#define NET_IPV4_LEN 16
void net_ipv4_format(uint32_t addr, char buf[NET_IPV4_LEN]);

/* A lease: the address and the process holding it (pid + start time, so pid reuse is seen). */
struct net_lease {
	uint32_t addr;
	pid_t pid;
	uint64_t start;
};
/* Called, under the lease lock, for each lease whose holder died, before it is dropped: the
 * caller removes what it made for that address (veth, nft rule). An error is ignored. */
typedef int (*net_lease_stale_fn)(const struct net_lease *l, void *arg, struct hutch_err *err);
/* Opens (making it) ROOT/<inode of this process's network namespace>/BRIDGE: one lease space
 * per bridge per network namespace. Returns a directory fd. */
int net_ipam_open(const char *root, const char *bridge, struct hutch_err *err);
/* True when a free address is still in use outside the leases (a veth its last holder's
 * kernel has yet to remove): another address is taken first. */
typedef bool (*net_addr_busy_fn)(uint32_t addr);
/* Leases the lowest free host address of s (after the gateway, before broadcast) to holder,
 * skipping those busy (may be NULL) calls busy unless every free one is. Stale leases are
 * reclaimed first. Concurrent callers are serialised by flock(DIR/lock). */
int net_ipam_lease(int dirfd, const struct net_subnet *s, pid_t holder, net_lease_stale_fn stale,
		   void *arg, net_addr_busy_fn busy, uint32_t *addr, struct hutch_err *err);
int net_ipam_release(int dirfd, uint32_t addr, struct hutch_err *err);
/* Hands addr's lease, held by from, to the live process to (which then releases it): -ENOENT
 * when from holds no such lease (it was reclaimed). */
int net_ipam_transfer(int dirfd, uint32_t addr, pid_t from, pid_t to, struct hutch_err *err);
/* Drops every stale lease; returns how many. */
int net_ipam_reclaim(int dirfd, net_lease_stale_fn stale, void *arg, struct hutch_err *err);

/* A sandbox's link: a routed veth pair (see net-bridge.c for why not a Linux bridge). */
struct net_veth {
	struct net_subnet subnet;
	unsigned mtu; /* of the veth pair */
};
/* Turns on IPv4 forwarding in this network namespace when it is off (never off again). */
int net_host_forwarding(struct hutch_err *err);
/* The host end's name for a sandbox address: "hv" + 8 hex digits. */
#define NET_IFNAME_LEN 16
void net_veth_name(uint32_t addr, char buf[NET_IFNAME_LEN]);
/* addr's host end exists in this network namespace (a net_addr_busy_fn). */
bool net_veth_lingers(uint32_t addr);
/* A veth pair: the host end gets the gateway as a /32 and a route to addr; the peer is
 * created directly inside netns_fd as eth0 with addr/prefix, the MTU, up, and a default route
 * via the gateway. */
int net_veth_attach(const struct net_veth *v, int netns_fd, uint32_t addr, struct hutch_err *err);
/* Deletes the host end of addr's veth (its peer goes with it); a missing link is fine. */
int net_veth_detach(uint32_t addr, struct hutch_err *err);

/* --publish [IP:]HOSTPORT:PORT (net-proxy.c): tcp, bound to 127.0.0.1 unless IP is given. */
struct net_publish {
	uint32_t addr; /* the host address listened on */
	uint16_t host_port, port;
};
int net_publish_parse(const char *s, struct net_publish *out, struct hutch_err *err);
/* A listening, non-blocking socket on p's host address and port. */
int net_publish_listen(const struct net_publish *p, struct hutch_err *err);
#define NET_PROXY_MAX 16
/* Relays each connection accepted on listen_fd[i] to target:port[i] until stop_fd is
 * readable or hangs up (0). Run in a process of its own. */
struct net_proxy {
	const int *listen_fd;
	const uint16_t *port;
	size_t n; /* <= NET_PROXY_MAX */
	uint32_t target;
	int stop_fd;
};
int net_proxy_run(const struct net_proxy *p, struct hutch_err *err);

#endif
