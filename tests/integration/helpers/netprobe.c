// SPDX-License-Identifier: Apache-2.0
/*
 * netprobe: what tests/security/network.bats does from inside a busybox sandbox.
 *   netprobe conns ADDR PORT PORT_LAST N HOLD_S
 *       N blocking TCP connects to ADDR, on ports PORT..PORT_LAST in turn; prints
 *       "ok A refused R other O ms T", then holds the open ones for HOLD_S seconds.
 *   netprobe dns udp|tcp SERVER NAME
 *       one A query for NAME; prints "rcode N answers N", then "A a.b.c.d" or "CNAME" per
 *       record of the answer section (and "TC" when truncated).
 *   netprobe dnsmany udp|tcp SERVER NAME N
 *       N A queries for NAME one after another, over one UDP socket or one TCP connection;
 *       prints "answered A of N" (A: the replies with RCODE 0).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int conns(const char *addr, int port, int last, int n, int hold)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1)
		return 2;
	int ok = 0, refused = 0, other = 0, p = port;
	double t0 = now_ms();
	for (int i = 0; i < n; i++) {
		int fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd < 0) {
			other++;
			continue;
		}
		struct timeval tv = { .tv_sec = 2 };
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		sa.sin_port = htons((uint16_t)p);
		p = p == last ? port : p + 1;
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
			ok++; /* kept open until the end */
			continue;
		}
		if (errno == ECONNREFUSED)
			refused++;
		else
			other++;
		close(fd);
	}
	printf("ok %d refused %d other %d ms %.0f\n", ok, refused, other, now_ms() - t0);
	fflush(stdout);
	sleep((unsigned)hold);
	return 0;
}

static size_t query(unsigned char *q, const char *name)
{
	static const unsigned char hdr[12] = { 0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0 };
	memcpy(q, hdr, 12);
	size_t n = 12;
	for (const char *l = name; *l;) {
		size_t len = strcspn(l, ".");
		q[n++] = (unsigned char)len;
		memcpy(q + n, l, len);
		n += len;
		l += len + (l[len] == '.');
	}
	q[n++] = 0;
	memcpy(q + n, "\0\1\0\1", 4); /* A, IN */
	return n + 4;
}

/* Skips the name at *off (pointers end it). */
static int skip_name(const unsigned char *m, size_t len, size_t *off)
{
	while (*off < len) {
		unsigned char l = m[*off];
		if ((l & 0xc0) == 0xc0) {
			*off += 2;
			return 0;
		}
		*off += 1 + (size_t)l;
		if (!l)
			return 0;
	}
	return -1;
}

static int print_answer(const unsigned char *m, size_t len)
{
	if (len < 12)
		return 1;
	unsigned qd = m[4] << 8 | m[5], an = m[6] << 8 | m[7];
	printf("rcode %d answers %u%s\n", m[3] & 0xf, an, m[2] & 0x02 ? " TC" : "");
	size_t off = 12;
	for (unsigned i = 0; i < qd; i++)
		if (skip_name(m, len, &off) < 0 || (off += 4) > len)
			return 1;
	for (unsigned i = 0; i < an; i++) {
		if (skip_name(m, len, &off) < 0 || off + 10 > len)
			return 1;
		unsigned type = m[off] << 8 | m[off + 1], rdlen = m[off + 8] << 8 | m[off + 9];
		if (off + 10 + rdlen > len)
			return 1;
		if (type == 1 && rdlen == 4)
			printf("A %u.%u.%u.%u\n", m[off + 10], m[off + 11], m[off + 12],
			       m[off + 13]);
		else if (type == 5)
			printf("CNAME\n");
		off += 10 + rdlen;
	}
	return 0;
}

static int dns(const char *proto, const char *server, const char *name)
{
	bool tcp = !strcmp(proto, "tcp");
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(53) };
	if (inet_pton(AF_INET, server, &sa.sin_addr) != 1)
		return 2;
	int fd = socket(AF_INET, tcp ? SOCK_STREAM : SOCK_DGRAM, 0);
	struct timeval tv = { .tv_sec = 3 };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		perror("connect");
		return 1;
	}
	unsigned char q[300], m[65536 + 2];
	size_t qlen = query(q + 2, name);
	q[0] = (unsigned char)(qlen >> 8);
	q[1] = (unsigned char)qlen;
	if (send(fd, tcp ? q : q + 2, tcp ? qlen + 2 : qlen, 0) < 0) {
		perror("send");
		return 1;
	}
	size_t got = 0, want = tcp ? 2 : sizeof(m);
	do {
		ssize_t r = recv(fd, m + got, sizeof(m) - got, 0);
		if (r <= 0) {
			perror("recv");
			return 1;
		}
		got += (size_t)r;
		if (tcp && got >= 2)
			want = 2 + (size_t)(m[0] << 8 | m[1]);
	} while (tcp && got < want);
	return print_answer(tcp ? m + 2 : m, tcp ? want - 2 : got);
}

/* One query over fd (a TCP connection with tcp): its reply's RCODE, or -1. */
static int ask(int fd, bool tcp, const char *name, uint16_t id)
{
	unsigned char q[300], m[65536 + 2];
	size_t qlen = query(q + 2, name);
	q[2] = (unsigned char)(id >> 8);
	q[3] = (unsigned char)id;
	q[0] = (unsigned char)(qlen >> 8);
	q[1] = (unsigned char)qlen;
	if (send(fd, tcp ? q : q + 2, tcp ? qlen + 2 : qlen, 0) < 0)
		return -1;
	size_t got = 0, want = tcp ? 2 : 1;
	while (got < want) {
		ssize_t r = recv(fd, m + got, sizeof(m) - got, 0);
		if (r <= 0)
			return -1;
		got += (size_t)r;
		if (tcp && got >= 2)
			want = 2 + (size_t)(m[0] << 8 | m[1]);
	}
	const unsigned char *h = tcp ? m + 2 : m;
	return (tcp ? want - 2 : got) >= 12 && h[0] == q[2] && h[1] == q[3] ? h[3] & 0xf : -1;
}

static int dnsmany(const char *proto, const char *server, const char *name, int n)
{
	bool tcp = !strcmp(proto, "tcp");
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(53) };
	if (inet_pton(AF_INET, server, &sa.sin_addr) != 1)
		return 2;
	int fd = socket(AF_INET, tcp ? SOCK_STREAM : SOCK_DGRAM, 0);
	struct timeval tv = { .tv_sec = 3 };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		perror("connect");
		return 1;
	}
	int answered = 0;
	for (int i = 0; i < n; i++)
		answered += ask(fd, tcp, name, (uint16_t)(i + 1)) == 0;
	printf("answered %d of %d\n", answered, n);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 7 && !strcmp(argv[1], "conns"))
		return conns(argv[2], atoi(argv[3]), atoi(argv[4]), atoi(argv[5]), atoi(argv[6]));
	if (argc == 5 && !strcmp(argv[1], "dns"))
		return dns(argv[2], argv[3], argv[4]);
	if (argc == 6 && !strcmp(argv[1], "dnsmany"))
		return dnsmany(argv[2], argv[3], argv[4], atoi(argv[5]));
	fprintf(stderr, "usage: netprobe conns ADDR PORT PORT_LAST N HOLD_S | "
			"dns udp|tcp SERVER NAME | dnsmany udp|tcp SERVER NAME N\n");
	return 2;
}
