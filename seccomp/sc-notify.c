// SPDX-License-Identifier: Apache-2.0
/*
 * The seccomp listener protocol of the OCI runtime spec: the notify fd of a filter with
 * SCMP_ACT_NOTIFY rules goes to the unix socket at linux.seccomp.listenerPath with SCM_RIGHTS,
 * in one message with the "container process state" JSON, which names the fd ("seccompFd"),
 * the process, listenerMetadata and the container's state.
 */
#include "sc.h"
#include "hutch-json.h"

#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#define OCI_VERSION "1.2.0"

/* {ociVersion, fds: ["seccompFd"], pid, metadata, state} as the runtime spec defines it. */
static int process_state(pid_t process, const char *state_json, const char *metadata, char **out,
			 struct hutch_err *err)
{
	const char *pid_path[] = { "pid", NULL };
	char buf[128] = "";
	const unsigned char *text = NULL;
	size_t len = 0;

	int d = hutch_json_check_depth(state_json, "seccomp listener: container state", err);
	if (d < 0)
		return d;
	yajl_val state = yajl_tree_parse(state_json, buf, sizeof(buf));
	if (!YAJL_IS_OBJECT(state)) {
		yajl_tree_free(state);
		return hutch_fail(err, EINVAL,
				  "seccomp listener: container state is not a JSON "
				  "object");
	}
	yajl_val pid = yajl_tree_get(state, pid_path, yajl_t_number);
	yajl_gen g = yajl_gen_alloc(NULL);
	yajl_gen_map_open(g);
	hutch_json_gen_str(g, "ociVersion");
	hutch_json_gen_str(g, OCI_VERSION);
	hutch_json_gen_str(g, "fds");
	yajl_gen_array_open(g);
	hutch_json_gen_str(g, "seccompFd");
	yajl_gen_array_close(g);
	hutch_json_gen_str(g, "pid");
	yajl_gen_integer(g, process > 0 ? process : YAJL_IS_INTEGER(pid) ? pid->u.number.i : 0);
	hutch_json_gen_str(g, "metadata");
	hutch_json_gen_str(g, metadata ? metadata : "");
	hutch_json_gen_str(g, "state");
	hutch_json_gen_value(g, state);
	yajl_gen_map_close(g);
	yajl_gen_get_buf(g, &text, &len);
	*out = hutch_xmalloc(len + 1);
	memcpy(*out, text, len);
	(*out)[len] = '\0';
	yajl_gen_free(g);
	yajl_tree_free(state);
	return 0;
}

int sc_listener_connect(const char *listener_path, struct hutch_err *err)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	if (strlen(listener_path) >= sizeof(addr.sun_path))
		return hutch_fail(err, ENAMETOOLONG, "seccomp listener %s: path too long",
				  listener_path);
	strcpy(addr.sun_path, listener_path);
	_cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return hutch_fail_errno(err, errno, "seccomp listener: socket");
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0)
		return hutch_fail_errno(err, errno, "connect to seccomp listener %s",
					listener_path);
	return steal_fd(fd);
}

/* The fd rides on the first byte; a stream socket may take the rest in more writes. */
static int send_with_fd(int sock, int fd, const char *msg, size_t len, struct hutch_err *err)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = (void *)msg, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = u.buf,
			     .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);

	memset(u.buf, 0, sizeof(u.buf));
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	ssize_t n;
	do
		n = sendmsg(sock, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return hutch_fail_errno(err, errno, "send to seccomp listener");
	if ((size_t)n < len && hutch_write_all(sock, msg + n, len - (size_t)n) < 0)
		return hutch_fail_errno(err, errno, "send to seccomp listener");
	return 0;
}

int sc_listener_send(int sock, int notify_fd, pid_t process, const char *state_json,
		     const char *metadata, struct hutch_err *err)
{
	_cleanup_free_ char *msg = NULL;
	int r = process_state(process, state_json, metadata, &msg, err);
	if (r < 0)
		return r;
	return send_with_fd(sock, notify_fd, msg, strlen(msg), err);
}

int sc_send_to_listener(const char *listener_path, int notify_fd, pid_t process,
			const char *state_json, const char *metadata, struct hutch_err *err)
{
	_cleanup_close_ int sock = sc_listener_connect(listener_path, err);
	if (sock < 0)
		return sock;
	int r = sc_listener_send(sock, notify_fd, process, state_json, metadata, err);
	if (r < 0)
		return hutch_err_prefix(err, "%s: ", listener_path);
	return 0;
}
