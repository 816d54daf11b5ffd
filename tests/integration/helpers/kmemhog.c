// SPDX-License-Identifier: Apache-2.0
/*
 * kmemhog KIND STOP_MIB: pins memory in the kernel of one KIND, never read back, until STOP_MIB
 * MiB are held or the kernel takes no more, then prints "queued N MiB" and exits 0 (KIND
 * io_uring: "io_uring_setup: ERROR"). Kinds: unix-stream and unix-dgram (socketpairs, each
 * with the largest send buffer it may have, filled), pipe (pipes grown to the largest size
 * allowed, filled), udp (loopback sockets that never read, sent to: what their queues hold),
 * memfd (memfds of 16 MiB), io_uring (only tries the syscall); packet (AF_PACKET receivers,
 * CAP_NET_RAW's, fed by UDP on loopback), ping (ICMP datagram sockets echoing to themselves)
 * and netlink-ack (NETLINK_ROUTE sockets filled with the kernel's acks): each with the
 * largest receive buffer it may have, never read. Under a memory limit that charges the
 * object the kernel stops taking it long before STOP_MIB, or the hog is OOM-killed. When not
 * even one can be made: "socket: ERROR".
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_ether.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/ip_icmp.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

static char buf[65536];

/* Writes into fd (non-blocking) until it takes no more: the bytes it took. */
static long long fill(int fd, size_t chunk)
{
	long long sent = 0;
	for (;;) {
		ssize_t n = send(fd, buf, chunk, MSG_DONTWAIT);
		if (n < 0 && errno == ENOTSOCK)
			n = write(fd, buf, chunk);
		if (n <= 0)
			return sent;
		sent += n;
	}
}

static int big_sndbuf(int fd)
{
	int v = 1 << 30; /* the kernel caps it at twice wmem_max */
	return setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &v, sizeof(v));
}

/* What the unread socket's receive queue holds (its truesize), from SO_MEMINFO. */
static long long rmem(int fd)
{
	uint32_t mi[SK_MEMINFO_VARS] = { 0 };
	socklen_t len = sizeof(mi);
	if (getsockopt(fd, SOL_SOCKET, SO_MEMINFO, mi, &len) < 0)
		return -1;
	return mi[SK_MEMINFO_RMEM_ALLOC];
}

/* A loopback socket that never reads, with the largest receive buffer it may have, sent to
 * until its queue grows no more (loopback drops what does not fit, never blocks). */
static long long udp_one(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int r = socket(AF_INET, SOCK_DGRAM, 0), s = socket(AF_INET, SOCK_DGRAM, 0), v = 1 << 30;
	if (r < 0 || s < 0 || bind(r, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    getsockname(r, (struct sockaddr *)&a, &len) < 0 ||
	    connect(s, (struct sockaddr *)&a, sizeof(a)) < 0)
		return -1;
	setsockopt(r, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v));
	long long held = 0, last = -1;
	for (int idle = 0; idle < 2;) {
		for (int i = 0; i < 64; i++)
			if (send(s, buf, 8192, MSG_DONTWAIT) < 0)
				break;
		held = rmem(r);
		idle = held <= last ? idle + 1 : 0;
		last = held;
	}
	close(s);
	return held;
}

/* Sends into s (which queues into r) until r's queue grows no more: what r holds. */
static long long until_full(int r, int s, const struct sockaddr *to, socklen_t len, size_t chunk)
{
	long long held = 0, last = -1;
	for (int idle = 0; idle < 3;) {
		for (int i = 0; i < 64; i++)
			if (sendto(s, buf, chunk, MSG_DONTWAIT, to, len) < 0 &&
			    errno != ECONNREFUSED)
				break;
		held = rmem(r);
		idle = held <= last ? idle + 1 : 0;
		last = held;
	}
	return held;
}

static void big_rcvbuf(int fd)
{
	int v = 1 << 30; /* capped at twice rmem_max */
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v));
}

/* An AF_PACKET socket sees every packet on loopback: UDP to a closed port feeds it. */
static long long packet_one(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
				 .sin_port = htons(9) };
	int r = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL));
	if (r < 0)
		return -1;
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -1;
	big_rcvbuf(r);
	long long held = until_full(r, s, (struct sockaddr *)&a, sizeof(a), 8192);
	close(s);
	return held;
}

/* An ICMP datagram socket (net.ipv4.ping_group_range) gets the replies to its own echoes. */
static long long ping_one(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_ICMP);
	if (s < 0)
		return -1;
	big_rcvbuf(s);
	struct icmphdr *h = (struct icmphdr *)buf;
	memset(h, 0, sizeof(*h));
	h->type = ICMP_ECHO;
	return until_full(s, s, (struct sockaddr *)&a, sizeof(a), 8192);
}

/* Every request to the kernel with NLM_F_ACK is answered into the sender's queue. */
static long long netlink_ack_one(void)
{
	static char req[65536];
	struct sockaddr_nl k = { .nl_family = AF_NETLINK };
	int s = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (s < 0)
		return -1;
	big_rcvbuf(s);
	size_t off = 0;
	for (; off + NLMSG_HDRLEN <= sizeof(req); off += NLMSG_HDRLEN)
		*(struct nlmsghdr *)(req + off) = (struct nlmsghdr){
			.nlmsg_len = NLMSG_HDRLEN,
			.nlmsg_type = NLMSG_MIN_TYPE + 2, /* RTM_DELLINK - 1: not a request */
			.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK,
		};
	memcpy(buf, req, sizeof(req));
	return until_full(s, s, (struct sockaddr *)&k, sizeof(k), off);
}

/* One unit of KIND: the bytes it pinned, or -1 when no more can be made. */
static long long one(const char *kind)
{
	int sv[2];
	if (!strcmp(kind, "unix-stream") || !strcmp(kind, "unix-dgram")) {
		int type = kind[5] == 's' ? SOCK_STREAM : SOCK_DGRAM;
		if (socketpair(AF_UNIX, type | SOCK_NONBLOCK, 0, sv) < 0)
			return -1;
		big_sndbuf(sv[0]);
		return fill(sv[0], type == SOCK_STREAM ? sizeof(buf) : 4096);
	}
	if (!strcmp(kind, "pipe")) {
		if (pipe2(sv, O_NONBLOCK) < 0)
			return -1;
		fcntl(sv[1], F_SETPIPE_SZ, 1 << 20); /* refused past the user's pipe pages */
		return fill(sv[1], sizeof(buf));
	}
	if (!strcmp(kind, "udp"))
		return udp_one();
	if (!strcmp(kind, "packet"))
		return packet_one();
	if (!strcmp(kind, "ping"))
		return ping_one();
	if (!strcmp(kind, "netlink-ack"))
		return netlink_ack_one();
	if (!strcmp(kind, "memfd")) {
		int fd = memfd_create("kmemhog", 0);
		if (fd < 0)
			return -1;
		long long n = 0;
		for (int i = 0; i < 256; i++) { /* 16 MiB per memfd */
			if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
				break;
			n += sizeof(buf);
		}
		return n ? n : -1;
	}
	return -1;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return fprintf(stderr, "usage: kmemhog KIND [STOP_MIB]\n"), 2;
	if (!strcmp(argv[1], "io_uring")) {
		char params[120] = { 0 };
		long r = syscall(SYS_io_uring_setup, 8, params);
		printf("io_uring_setup: %s\n", r < 0 ? strerror(errno) : "allowed");
		return 0;
	}
	long long stop = (argc > 2 ? atoll(argv[2]) : 256) << 20, total = 0;
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) { /* as many fds as it may have */
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	memset(buf, 'x', sizeof(buf));
	while (total < stop) {
		errno = 0;
		long long n = one(argv[1]);
		if (n < 0 && total == 0 && errno) {
			printf("socket: %s\n", strerror(errno));
			return 0;
		}
		if (n <= 0)
			break; /* out of fds, or of memory for one more */
		total += n;
	}
	printf("queued %lld MiB\n", total >> 20);
	return 0;
}
