// SPDX-License-Identifier: Apache-2.0
/*
 * sclistener SOCKET STATE_FILE ERRNO: a seccomp notify agent for the tests. Listens on the
 * unix socket SOCKET, takes connections from the runtime (the init's at create, each exec's),
 * writes the container process state each brought (JSON) to STATE_FILE, STATE_FILE.2, ...,
 * then answers every notification on the fds that came with them: mkdir and mkdirat fail
 * with ERRNO (0: they succeed, done by the kernel through SECCOMP_USER_NOTIF_FLAG_CONTINUE),
 * anything else continues. Exits when every filtered process is gone (POLLHUP on each fd).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

static int recv_state(int conn, char *buf, size_t len)
{
	union {
		char b[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = buf, .iov_len = len - 1 };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b, .msg_controllen = sizeof(u.b)
	};
	ssize_t n = recvmsg(conn, &mh, MSG_CMSG_CLOEXEC);
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
	int fd = -1;
	if (n <= 0 || !c || c->cmsg_type != SCM_RIGHTS)
		return -1;
	/* The rest of a long state may follow in more segments. */
	size_t got = (size_t)n;
	while (got < len - 1) {
		struct pollfd p = { .fd = conn, .events = POLLIN };
		if (poll(&p, 1, 200) <= 0)
			break;
		n = read(conn, buf + got, len - 1 - got);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	buf[got] = '\0';
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

static int answer(int nfd, int err)
{
	struct seccomp_notif req;
	struct seccomp_notif_resp resp;
	memset(&req, 0, sizeof(req));
	if (ioctl(nfd, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0)
		return errno == ENOENT || errno == EINTR ? 0 : -1; /* the caller went away */
	memset(&resp, 0, sizeof(resp));
	resp.id = req.id;
	bool is_mkdir = req.data.nr == SYS_mkdir || req.data.nr == SYS_mkdirat;
	if (is_mkdir && err)
		resp.error = -err;
	else
		resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
	fprintf(stderr, "sclistener: syscall %d -> %s\n", req.data.nr,
		resp.error ? strerror(-resp.error) : "continue");
	if (ioctl(nfd, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0 && errno != ENOENT)
		return -1;
	return 0;
}

/* The state of the n-th connection: STATE_FILE for the first, STATE_FILE.2 and on after it. */
static void save_state(const char *file, int n, const char *state)
{
	char path[4096];
	if (n == 1)
		snprintf(path, sizeof(path), "%s", file);
	else
		snprintf(path, sizeof(path), "%s.%d", file, n);
	FILE *f = fopen(path, "w");
	if (f) {
		fputs(state, f);
		fclose(f);
	}
}

int main(int argc, char **argv)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	static char state[65536];
	struct pollfd p[16];
	int n = 1, conns = 0;

	if (argc != 4) {
		fprintf(stderr, "usage: sclistener SOCKET STATE_FILE ERRNO\n");
		return 2;
	}
	int err = atoi(argv[3]);
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", argv[1]);
	int ls = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	unlink(argv[1]);
	if (ls < 0 || bind(ls, (struct sockaddr *)&addr, sizeof(addr)) < 0 || listen(ls, 4) < 0) {
		perror("sclistener: listen");
		return 1;
	}
	/* p[0] takes more connections (an init's, then each exec's); the rest are notify fds. */
	p[0] = (struct pollfd){ .fd = ls, .events = POLLIN };
	for (;;) {
		if (poll(p, (nfds_t)n, -1) < 0 && errno != EINTR)
			return 1;
		if (p[0].revents & POLLIN && n < (int)(sizeof(p) / sizeof(p[0]))) {
			int conn = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
			int nfd = conn < 0 ? -1 : recv_state(conn, state, sizeof(state));
			if (conn >= 0)
				close(conn);
			if (nfd < 0) {
				fprintf(stderr, "sclistener: no notify fd received\n");
				return 1;
			}
			save_state(argv[2], ++conns, state);
			p[n++] = (struct pollfd){ .fd = nfd, .events = POLLIN };
		}
		for (int i = 1; i < n; i++) {
			if (p[i].revents & POLLIN && answer(p[i].fd, err) < 0) {
				perror("sclistener: answer");
				return 1;
			}
			if (p[i].revents & (POLLHUP | POLLERR)) {
				close(p[i].fd);
				p[i--] = p[--n];
			}
		}
		if (conns && n == 1)
			return 0; /* every filtered process is gone */
	}
}
