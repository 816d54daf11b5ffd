// SPDX-License-Identifier: Apache-2.0
/*
 * Host mode with --network bridge: a command on the host, but in a network namespace of its
 * own with the same veth, NAT, egress rules and DNS forwarder as a sandbox (rt-sandbox-net.c),
 * so that it has a network without the host's loopback services. hutch makes and wires the
 * namespace before the fork; the child joins it and sees the generated resolv.conf and hosts
 * over the host's, in its private mount view (bound before the view clones /etc).
 */
#include "rt-host.h"

#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

int rt_host_net_prepare(struct rt_host *hs, struct hutch_err *err)
{
	if (rt_host_network(hs->o) != RT_SB_NET_BRIDGE)
		return 0;
	if (geteuid() != 0)
		return hutch_fail(err, ENOTSUP,
				  "--network bridge in host mode: not supported as non-root");
	hs->net_dir = hutch_xasprintf(RT_DEFAULT_ROOT "/host-net-%d", (int)getpid());
	mkdir(RT_DEFAULT_ROOT, 0711);
	hs->netns_fd = ns_netns_new(NULL, NULL, err);
	if (hs->netns_fd < 0)
		return hs->netns_fd;
	TRY(rt_sb_net_prepare(hs->o, &hs->net, hs->net_dir, err));
	return rt_sb_net_attach_fd(hs->o, &hs->net, hs->netns_fd, err);
}

/* In the child, for the view: the namespace, and the generated files over the host's. */
int rt_host_net_enter(struct rt_host *hs, struct hutch_err *err)
{
	if (setns(hs->netns_fd, CLONE_NEWNET) < 0)
		return hutch_fail_errno(err, errno, "sandbox: join the bridge's network namespace");
	close(hs->netns_fd); /* not the command's */
	hs->netns_fd = -1;
	hs->h->netns = true;
	return 0;
}

size_t rt_host_net_binds(const struct rt_host *hs, struct ns_view_bind out[2], char *owned[2])
{
	size_t n = 0;
	if (hs->net_dir == NULL)
		return 0;
	if (hs->resolv) { /* the host's file (its real path), whatever links lead to it */
		owned[n] = hutch_xasprintf("%s/resolv.conf", hs->net_dir);
		out[n] = (struct ns_view_bind){ owned[n], hs->resolv };
		n++;
	}
	if (access("/etc/hosts", F_OK) == 0) {
		owned[n] = hutch_xasprintf("%s/hosts", hs->net_dir);
		out[n] = (struct ns_view_bind){ owned[n], "/etc/hosts" };
		n++;
	}
	return n;
}

bool rt_host_net_helper(const struct rt_host *hs, pid_t pid)
{
	return pid > 0 && (pid == hs->net.dns_pid || pid == hs->net.proxy_pid);
}

void rt_host_net_release(struct rt_host *hs, struct rt_sb_result *res)
{
	if (!hs->net_dir)
		return;
	rt_sb_net_hangup(&hs->net);
	if (hs->netns_fd >= 0)
		close(hs->netns_fd); /* the namespace (and the veth) go with the command */
	hs->netns_fd = -1;
	rt_sb_net_release(&hs->net, &res->egress);
	rt_sb_dns_reap(&hs->net);
	static const char *const files[] = { "resolv.conf", "hosts", "hostname" };
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		_cleanup_free_ char *p = hutch_xasprintf("%s/%s", hs->net_dir, files[i]);
		unlink(p);
	}
	rmdir(hs->net_dir);
	free(hs->net_dir);
	hs->net_dir = NULL;
}
