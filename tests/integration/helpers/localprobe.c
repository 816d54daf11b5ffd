// SPDX-License-Identifier: Apache-2.0
/*
 * localprobe tcp PORT | localprobe abstract NAME: connects to 127.0.0.1:PORT, or to the abstract
 * unix socket NAME, and prints "KIND: " and the first line the peer sends, or the error that
 * stopped it ("tcp: Connection refused"). Exits 0 either way: what it prints is the answer.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct sockaddr_storage ss = { 0 };
	socklen_t len;
	int fd;
	if (argc != 3)
		return fprintf(stderr, "usage: localprobe tcp PORT | abstract NAME\n"), 2;
	if (!strcmp(argv[1], "tcp")) {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;
		a->sin_family = AF_INET;
		a->sin_port = htons((unsigned short)atoi(argv[2]));
		a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		len = sizeof(*a);
		fd = socket(AF_INET, SOCK_STREAM, 0);
	} else {
		struct sockaddr_un *u = (struct sockaddr_un *)&ss;
		size_t n = strlen(argv[2]);
		if (n >= sizeof(u->sun_path) - 1)
			return 2;
		u->sun_family = AF_UNIX;
		memcpy(u->sun_path + 1, argv[2], n); /* sun_path[0] = 0: abstract */
		len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
		fd = socket(AF_UNIX, SOCK_STREAM, 0);
	}
	struct timeval tv = { .tv_sec = 5 };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	char line[128] = { 0 };
	if (fd < 0 || connect(fd, (struct sockaddr *)&ss, len) < 0) {
		printf("%s: %s\n", argv[1], strerror(errno));
		return 0;
	}
	ssize_t n = read(fd, line, sizeof(line) - 1);
	if (n < 0)
		snprintf(line, sizeof(line), "%s\n", strerror(errno));
	printf("%s: %s", argv[1], line);
	return 0;
}
