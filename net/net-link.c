// SPDX-License-Identifier: Apache-2.0
/*
 * Networking inside a new network namespace: bringing the loopback interface up with a
 * single rtnetlink RTM_NEWLINK request, built by hand (no libmnl for one message).
 */
#include "net-internal.h"

#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <string.h>
#include <sys/socket.h>

struct link_req {
	struct nlmsghdr nh;
	struct ifinfomsg ifi;
};

ssize_t net_nl_recv(int fd, void *buf, size_t len)
{
	ssize_t n;
	while ((n = recv(fd, buf, len, 0)) < 0 && errno == EINTR)
		;
	return n < 0 ? -errno : n;
}

int net_nl_ack(int fd, uint32_t seq, const char *what, struct hutch_err *err)
{
	char buf[4096] __attribute__((aligned(NLMSG_ALIGNTO)));
	for (;;) {
		ssize_t n = net_nl_recv(fd, buf, sizeof(buf));
		if (n < 0)
			return hutch_fail_errno(err, (int)-n, "%s: netlink recv", what);
		size_t len = (size_t)n;
		for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, len);
		     h = NLMSG_NEXT(h, len)) {
			if (h->nlmsg_seq != seq || h->nlmsg_type != NLMSG_ERROR)
				continue;
			if (h->nlmsg_len < NLMSG_LENGTH(sizeof(struct nlmsgerr)))
				return hutch_fail(err, EBADMSG, "%s: truncated netlink ack", what);
			const struct nlmsgerr *e = NLMSG_DATA(h);
			return e->error < 0 ? hutch_fail_errno(err, -e->error, "%s", what) : 0;
		}
	}
}

int net_loopback_up(struct hutch_err *err)
{
	unsigned idx = if_nametoindex("lo");
	if (idx == 0)
		idx = 1; /* lo is always the first interface of a network namespace */
	_cleanup_close_ int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		return hutch_fail_errno(err, errno, "netlink socket");
	struct link_req req;
	memset(&req, 0, sizeof(req));
	req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(struct ifinfomsg));
	req.nh.nlmsg_type = RTM_NEWLINK;
	req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	req.nh.nlmsg_seq = 1;
	req.ifi.ifi_family = AF_UNSPEC;
	req.ifi.ifi_index = (int)idx;
	req.ifi.ifi_flags = IFF_UP;
	req.ifi.ifi_change = IFF_UP;
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	if (sendto(fd, &req, req.nh.nlmsg_len, 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0)
		return hutch_fail_errno(err, errno, "netlink send");
	return net_nl_ack(fd, req.nh.nlmsg_seq, "RTM_NEWLINK lo up", err);
}
