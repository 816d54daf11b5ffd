// SPDX-License-Identifier: Apache-2.0
/*
 * netforge: packets a sandbox with CAP_NET_RAW can forge, for tests/security/network.bats,
 * and the victims' side of the flows they aim at.
 *   netforge udp SRC SPORT DST DPORT TEXT
 *       one UDP datagram carrying TEXT from SRC:SPORT (any source: a raw socket).
 *   netforge unreach SRC DST ISRC ISPORT IDST IDPORT
 *       ICMP port unreachable from SRC to DST about the UDP datagram ISRC:ISPORT -> IDST:IDPORT.
 *   netforge lsrr SRC SPORT DST DPORT HOP TEXT
 *       as udp, with a loose source route option naming HOP (the next hop after DST).
 *   netforge arp DEV N TARGET
 *       N ARP requests for TARGET on DEV, each from another sender address (10.123.x.y).
 *   netforge flow SRC SPORT DST DPORT SECONDS
 *       a UDP socket on SRC:SPORT connected to DST:DPORT: sends "hello", then prints "got
 *       TEXT" for each datagram and "refused" for each ECONNREFUSED for SECONDS.
 *   netforge sink ADDR PORT SECONDS
 *       prints "from A:P TEXT" for each datagram received on ADDR:PORT for SECONDS.
 *   netforge query SPORT SERVER NAME
 *       one DNS query (A, IN) for NAME from port SPORT to SERVER:53; prints "answered" when a
 *       reply comes (within 3 s): the flow is then one conntrack calls established.
 * Every output line is flushed at once: the test reads them while it runs.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/ip_icmp.h>
#include <netinet/udp.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static uint32_t addr_of(const char *s)
{
	struct in_addr a;
	if (inet_pton(AF_INET, s, &a) != 1) {
		fprintf(stderr, "netforge: %s: not an IPv4 address\n", s);
		exit(2);
	}
	return a.s_addr;
}

static uint16_t csum(const void *p, size_t len)
{
	const uint8_t *b = p;
	uint32_t sum = 0;
	for (size_t i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)(b[i] << 8 | b[i + 1]);
	if (len & 1)
		sum += (uint32_t)(b[len - 1] << 8);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return htons((uint16_t)~sum);
}

/* An IPv4 header (optlen bytes of options follow it) for proto, len bytes after it. */
static size_t ip_header(uint8_t *p, uint32_t src, uint32_t dst, uint8_t proto, size_t optlen,
			size_t len)
{
	struct iphdr *ip = (struct iphdr *)p;
	memset(ip, 0, sizeof(*ip));
	ip->version = 4;
	ip->ihl = (unsigned)(5 + optlen / 4);
	ip->ttl = 64;
	ip->protocol = proto;
	ip->saddr = src;
	ip->daddr = dst;
	ip->tot_len = htons((uint16_t)(sizeof(*ip) + optlen + len));
	ip->check = csum(ip, sizeof(*ip) + optlen);
	return sizeof(*ip) + optlen;
}

static size_t udp_header(uint8_t *p, const char *sport, const char *dport, size_t len)
{
	struct udphdr *u = (struct udphdr *)p;
	u->source = htons((uint16_t)atoi(sport));
	u->dest = htons((uint16_t)atoi(dport));
	u->len = htons((uint16_t)(sizeof(*u) + len));
	u->check = 0; /* none: allowed over IPv4 */
	return sizeof(*u);
}

static int send_raw(const uint8_t *pkt, size_t len, uint32_t dst)
{
	int fd = socket(AF_INET, SOCK_RAW, IPPROTO_RAW); /* IP_HDRINCL: the source as given */
	if (fd < 0) {
		perror("netforge: raw socket");
		return 1;
	}
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = dst };
	if (sendto(fd, pkt, len, 0, (struct sockaddr *)&sa, sizeof(sa)) != (ssize_t)len) {
		perror("netforge: sendto");
		return 1;
	}
	close(fd);
	printf("sent\n");
	return 0;
}

/* udp and lsrr: options (a multiple of 4 bytes) between the IP and UDP headers. */
static int forge_udp(char **a, const uint8_t *opt, size_t optlen, const char *text)
{
	uint8_t pkt[1500];
	size_t tlen = strlen(text);
	size_t n = ip_header(pkt, addr_of(a[0]), addr_of(a[2]), IPPROTO_UDP, optlen,
			     sizeof(struct udphdr) + tlen);
	memcpy(pkt + 20, opt, optlen);
	n += udp_header(pkt + n, a[1], a[3], tlen);
	memcpy(pkt + n, text, tlen);
	return send_raw(pkt, n + tlen, addr_of(a[2]));
}

static int forge_lsrr(char **a)
{
	/* type 131 (copied, loose source route), length, pointer to the first address, then
	 * the route; an end-of-options byte pads it to 8. */
	uint8_t opt[8] = { 0x83, 7, 4 };
	uint32_t hop = addr_of(a[4]);
	memcpy(opt + 3, &hop, 4);
	return forge_udp(a, opt, sizeof(opt), a[5]);
}

static int forge_unreach(char **a)
{
	uint8_t pkt[128], inner[28];
	size_t in = ip_header(inner, addr_of(a[2]), addr_of(a[4]), IPPROTO_UDP, 0, 8 + 5);
	udp_header(inner + in, a[3], a[5], 5);
	struct icmphdr icmp = { .type = ICMP_DEST_UNREACH, .code = ICMP_PORT_UNREACH };
	size_t n = ip_header(pkt, addr_of(a[0]), addr_of(a[1]), IPPROTO_ICMP, 0,
			     sizeof(icmp) + sizeof(inner));
	memcpy(pkt + n + sizeof(icmp), inner, sizeof(inner));
	memcpy(pkt + n, &icmp, sizeof(icmp));
	struct icmphdr *h = (struct icmphdr *)(pkt + n);
	h->checksum = csum(h, sizeof(icmp) + sizeof(inner));
	return send_raw(pkt, n + sizeof(icmp) + sizeof(inner), addr_of(a[1]));
}

static int forge_arp(const char *dev, int n, const char *target)
{
	int fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ARP));
	if (fd < 0) {
		perror("netforge: packet socket");
		return 1;
	}
	struct ifreq ifr = { 0 };
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
	if (ioctl(fd, SIOCGIFHWADDR, &ifr) < 0) {
		perror("netforge: SIOCGIFHWADDR");
		return 1;
	}
	struct sockaddr_ll ll = { .sll_family = AF_PACKET,
				  .sll_protocol = htons(ETH_P_ARP),
				  .sll_ifindex = (int)if_nametoindex(dev),
				  .sll_halen = 6 };
	memset(ll.sll_addr, 0xff, 6);
	uint32_t tip = addr_of(target);
	int sent = 0;
	for (int i = 0; i < n; i++) {
		uint8_t f[42] = { 0 };
		memset(f, 0xff, 6);
		memcpy(f + 6, ifr.ifr_hwaddr.sa_data, 6);
		f[12] = 0x08, f[13] = 0x06;		    /* ARP */
		f[14] = 0, f[15] = 1, f[16] = 8, f[17] = 0; /* Ethernet, IPv4 */
		f[18] = 6, f[19] = 4, f[20] = 0, f[21] = 1; /* request */
		memcpy(f + 22, ifr.ifr_hwaddr.sa_data, 6);
		uint32_t sip =
			htonl(0x0a7b0000u | (uint32_t)(i / 250 << 8) | (uint32_t)(i % 250 + 1));
		memcpy(f + 28, &sip, 4);
		memcpy(f + 38, &tip, 4);
		sent += sendto(fd, f, sizeof(f), 0, (struct sockaddr *)&ll, sizeof(ll)) ==
			sizeof(f);
	}
	printf("sent %d\n", sent);
	return sent == n ? 0 : 1;
}

static int bound(const char *addr, const char *port, int seconds)
{
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons((uint16_t)atoi(port)),
				  .sin_addr.s_addr = addr_of(addr) };
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		perror("netforge: bind");
		exit(1);
	}
	struct timeval tv = { .tv_sec = seconds };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

/* flow (connected: "refused" is what an ICMP error does to it) and sink. */
static int receive(int fd, int seconds, int connected)
{
	double end = now_s() + seconds;
	while (now_s() < end) {
		char buf[512];
		struct sockaddr_in from;
		socklen_t flen = sizeof(from);
		ssize_t r = recvfrom(fd, buf, sizeof(buf) - 1, 0, (struct sockaddr *)&from, &flen);
		if (r < 0 && errno == ECONNREFUSED) {
			printf("refused\n");
		} else if (r >= 0) {
			buf[r] = '\0';
			if (connected)
				printf("got %s\n", buf);
			else
				printf("from %s:%u %s\n", inet_ntoa(from.sin_addr),
				       ntohs(from.sin_port), buf);
		}
		fflush(stdout);
	}
	return 0;
}

static int flow(char **a)
{
	int fd = bound(a[0], a[1], 1);
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons((uint16_t)atoi(a[3])),
				  .sin_addr.s_addr = addr_of(a[2]) };
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || send(fd, "hello", 5, 0) != 5) {
		perror("netforge: flow");
		return 1;
	}
	printf("flowing\n");
	fflush(stdout);
	return receive(fd, atoi(a[4]), 1);
}

static int dns_query(char **a)
{
	int fd = bound("0.0.0.0", a[0], 3);
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons(53),
				  .sin_addr.s_addr = addr_of(a[1]) };
	uint8_t q[300] = { 0x12, 0x34, 0x01, 0x00, 0, 1 }, r[512];
	size_t n = 12;
	for (const char *l = a[2]; *l && n < 260;) {
		size_t len = strcspn(l, ".");
		q[n++] = (uint8_t)len;
		memcpy(q + n, l, len);
		n += len;
		l += len + (l[len] == '.');
	}
	q[n++] = 0;
	memcpy(q + n, "\0\1\0\1", 4);
	if (sendto(fd, q, n + 4, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    recv(fd, r, sizeof(r), 0) < 12) {
		perror("netforge: query");
		return 1;
	}
	printf("answered\n");
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	const char *cmd = argc > 1 ? argv[1] : "";
	if (argc == 7 && !strcmp(cmd, "udp"))
		return forge_udp(argv + 2, NULL, 0, argv[6]);
	if (argc == 8 && !strcmp(cmd, "unreach"))
		return forge_unreach(argv + 2);
	if (argc == 8 && !strcmp(cmd, "lsrr"))
		return forge_lsrr(argv + 2);
	if (argc == 5 && !strcmp(cmd, "arp"))
		return forge_arp(argv[2], atoi(argv[3]), argv[4]);
	if (argc == 7 && !strcmp(cmd, "flow"))
		return flow(argv + 2);
	if (argc == 5 && !strcmp(cmd, "query"))
		return dns_query(argv + 2);
	if (argc == 5 && !strcmp(cmd, "sink"))
		return receive(bound(argv[2], argv[3], 1), atoi(argv[4]), 0);
	fprintf(stderr,
		"usage: netforge udp|unreach|lsrr|arp|flow|sink|query ARGS (see its source)\n");
	return 2;
}
