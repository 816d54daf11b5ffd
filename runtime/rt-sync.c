// SPDX-License-Identifier: Apache-2.0
/*
 * Parent/child synchronisation over a SOCK_SEQPACKET pair: one fixed-size message per step,
 * so a failing child sends its struct hutch_err and the parent reports exactly why.
 */
#include "rt.h"

#include <string.h>
#include <sys/socket.h>

int rt_sync_send(int fd, enum rt_sync_type type, const struct hutch_err *e, struct hutch_err *err)
{
	struct rt_sync_msg m = { .type = type };
	if (e)
		m.err = *e;
	ssize_t n;
	do
		n = send(fd, &m, sizeof(m), MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(m))
		return hutch_fail_errno(err, n < 0 ? errno : EPIPE, "sync: send");
	return 0;
}

int rt_sync_recv(int fd, struct rt_sync_msg *msg, struct hutch_err *err)
{
	ssize_t n;
	do
		n = recv(fd, msg, sizeof(*msg), 0);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return hutch_fail_errno(err, errno, "sync: receive");
	if (n == 0)
		return hutch_fail(err, EPIPE, "container init exited during setup");
	if (n != (ssize_t)sizeof(*msg))
		return hutch_fail(err, EPROTO, "sync: short message");
	return 0;
}

int rt_sync_expect(int fd, enum rt_sync_type type, struct hutch_err *err)
{
	struct rt_sync_msg m;
	int r = rt_sync_recv(fd, &m, err);
	if (r < 0)
		return r;
	if (m.type == RT_SYNC_ERROR) {
		*err = m.err;
		return -(m.err.code ? m.err.code : EINVAL);
	}
	if (m.type != type)
		return hutch_fail(err, EPROTO, "sync: expected message %d, got %u", type, m.type);
	return 0;
}
