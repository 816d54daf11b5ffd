// SPDX-License-Identifier: Apache-2.0
/*
 * tcphog PAIRS STOP_MIB: opens up to PAIRS loopback TCP connections to itself and fills each
 * one's buffers (nothing is ever read), until STOP_MIB MiB are queued in all, then prints
 * "queued N MiB" and exits 0. Under a TCP memory limit the kernel stops taking data long
 * before STOP_MIB: the bound that a sandbox's memory limit must put on socket buffers.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static char buf[65536];

/* Sends into fd until the kernel takes no more for a while: the bytes it took. */
static long long fill(int fd)
{
	long long sent = 0;
	for (int idle = 0; idle < 3;) {
		ssize_t n = send(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n > 0) {
			sent += n;
			idle = 0;
			continue;
		}
		if (n < 0 && errno != EAGAIN && errno != ENOBUFS && errno != ENOMEM)
			break;
		struct pollfd p = { .fd = fd, .events = POLLOUT };
		poll(&p, 1, 10);
		idle++;
	}
	return sent;
}

int main(int argc, char **argv)
{
	int pairs = argc > 1 ? atoi(argv[1]) : 100;
	long long stop = (argc > 2 ? atoll(argv[2]) : 256) << 20, total = 0;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int srv = socket(AF_INET, SOCK_STREAM, 0);
	if (srv < 0 || bind(srv, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(srv, 1024) < 0 ||
	    getsockname(srv, (struct sockaddr *)&a, &len) < 0) {
		perror("tcphog: listen");
		return 1;
	}
	memset(buf, 'x', sizeof(buf));
	for (int i = 0; i < pairs && total < stop; i++) {
		int c = socket(AF_INET, SOCK_STREAM, 0);
		if (c < 0 || connect(c, (struct sockaddr *)&a, sizeof(a)) < 0)
			break; /* out of memory for sockets too: what is held is the answer */
		if (accept(srv, NULL, NULL) < 0)
			break;
		total += fill(c);
	}
	printf("queued %lld MiB\n", total >> 20);
	return 0;
}
