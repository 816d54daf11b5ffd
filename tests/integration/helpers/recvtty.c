// SPDX-License-Identifier: Apache-2.0
/*
 * recvtty SOCKET [INPUT]: the receiving end of the console-socket protocol, for tty.bats.
 * Listens on a unix socket, accepts one connection, insists on exactly one fd in exactly one
 * SCM_RIGHTS message and that it is a terminal, optionally writes INPUT to it, then copies
 * everything the container writes to stdout until the last slave closes (EIO).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define MAX_FDS 8

static int die(const char *what)
{
	fprintf(stderr, "recvtty: %s: %s\n", what, strerror(errno));
	return 1;
}

static int listen_on(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || strlen(path) >= sizeof(sa.sun_path))
		return -1;
	strcpy(sa.sun_path, path);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 1) < 0)
		return -1;
	return fd;
}

/* Returns the one fd received, or -1 with a message when the peer sent anything else. */
static int recv_one_fd(int conn)
{
	char data[256], ctl[CMSG_SPACE(sizeof(int) * MAX_FDS)];
	struct iovec iov = { .iov_base = data, .iov_len = sizeof(data) };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof(ctl)
	};
	struct cmsghdr *c;
	int fd = -1, n_fds = 0, n_msgs = 0;

	if (recvmsg(conn, &msg, MSG_CMSG_CLOEXEC) < 0)
		return die("recvmsg"), -1;
	if (msg.msg_flags & MSG_CTRUNC) {
		fprintf(stderr, "recvtty: control data truncated: more than %d fds\n", MAX_FDS);
		return -1;
	}
	for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		n_msgs++;
		n_fds += (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		memcpy(&fd, CMSG_DATA(c), sizeof(int));
	}
	if (n_msgs != 1 || n_fds != 1) {
		fprintf(stderr, "recvtty: expected 1 fd in 1 SCM_RIGHTS message, got %d in %d\n",
			n_fds, n_msgs);
		return -1;
	}
	if (!isatty(fd)) {
		fprintf(stderr, "recvtty: received fd is not a terminal\n");
		return -1;
	}
	return fd;
}

int main(int argc, char **argv)
{
	char buf[4096];
	int sock, conn, master;
	ssize_t n;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: recvtty SOCKET [INPUT]\n");
		return 2;
	}
	sock = listen_on(argv[1]);
	if (sock < 0)
		return die(argv[1]);
	conn = accept4(sock, NULL, NULL, SOCK_CLOEXEC);
	if (conn < 0)
		return die("accept");
	master = recv_one_fd(conn);
	if (master < 0)
		return 1;
	close(conn);
	close(sock);
	if (argc == 3 && write(master, argv[2], strlen(argv[2])) < 0)
		return die("write to terminal");
	while ((n = read(master, buf, sizeof(buf))) > 0)
		if (fwrite(buf, 1, n, stdout) != (size_t)n)
			return die("write to stdout");
	if (n < 0 && errno != EIO)
		return die("read from terminal");
	return fflush(stdout) == 0 ? 0 : 1;
}
