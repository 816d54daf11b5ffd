/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `hutch sandbox --network bridge` (rt-sandbox-net.c, rt-sandbox-egress.c, rt-sandbox-dns.c):
 * the lease, the veth, the firewall's elements, the DNS policy forwarder and the --publish
 * relay that a sandbox's run sets up around create/start and undoes at its end.
 */
#ifndef HUTCH_RT_SANDBOX_NET_H
#define HUTCH_RT_SANDBOX_NET_H

#include "rt-sandbox.h"

/* rt-sandbox-net.c: bridge mode around create/start. prepare leases the address and writes
 * the /etc files (before the spec is built); attach wires the veth into the sandbox's netns,
 * adds its firewall elements and starts its DNS forwarder (before start); release undoes it
 * all, reading the counters, and is safe to call always; reclaim cleans up after SIGKILLed
 * hutches. */
struct rt_sb_net {
	int ipam_fd;
	uint32_t addr; /* 0 = no lease */
	bool attached;
	char address[NET_IPV4_LEN + 4];
	uint32_t upstream[4]; /* the forwarder's nameservers */
	size_t n_upstream;
	pid_t dns_pid;	 /* the forwarder (0: none) */
	int dns_stop;	 /* closing it stops the forwarder */
	int dns_stats;	 /* it writes its figures here as it ends */
	bool dns_over;	 /* it took the lease over and finishes the teardown after hutch */
	pid_t proxy_pid; /* the --publish relay (0: none) */
	int proxy_stop;
};
/* No lease, no helper, no fd: what release may always be called on. */
#define RT_SB_NET_INIT                                                                             \
	{                                                                                          \
		.ipam_fd = -1, .dns_stop = -1, .dns_stats = -1, .proxy_stop = -1                   \
	}
int rt_sb_net_prepare(const struct rt_sb_opts *o, struct rt_sb_net *n, const char *etc_dir,
		      struct hutch_err *err);
int rt_sb_net_attach(const struct rt_sb_opts *o, struct rt_sb_net *n, pid_t pid,
		     struct hutch_err *err);
int rt_sb_net_attach_fd(const struct rt_sb_opts *o, struct rt_sb_net *n, int netns_fd,
			struct hutch_err *err);
/* The sandbox has ended: its helper may start removing its elements (before release). */
void rt_sb_net_hangup(struct rt_sb_net *n);
void rt_sb_net_release(struct rt_sb_net *n, struct rt_sb_egress_result *res);
void rt_sb_net_reclaim(void);
/* rt-sandbox-egress.c: the firewall's terms for o. rt-sandbox-dns.c: the forwarder process,
 * started once the veth exists (it binds the gateway on it), and stopped first at release. */
struct net_egress rt_sb_egress_of(const struct rt_sb_opts *o);
int rt_sb_dns_start(const struct rt_sb_opts *o, struct rt_sb_net *n, struct hutch_err *err);
int rt_sb_dns_go(struct rt_sb_net *n, struct hutch_err *err); /* the veth exists */
void rt_sb_dns_hangup(struct rt_sb_net *n);		      /* the sandbox has ended */
bool rt_sb_dns_stop(struct rt_sb_net *n, struct rt_sb_egress_result *res); /* its figures */
void rt_sb_dns_reap(struct rt_sb_net *n); /* waits for it: always, last */
int rt_sb_publish_start(const struct rt_sb_opts *o, struct rt_sb_net *n, struct hutch_err *err);
void rt_sb_publish_stop(struct rt_sb_net *n);
void rt_sb_gen_egress(struct yajl_gen_t *g, const struct rt_sb_opts *o,
		      const struct rt_sb_egress_result *r);

#endif
