/* SPDX-License-Identifier: Apache-2.0 */
/* Shared between the files of net/ and nothing else. */
#ifndef HUTCH_NET_INTERNAL_H
#define HUTCH_NET_INTERNAL_H

#include "net.h"

/* Waits on a NETLINK_ROUTE socket for the ack of request seq: 0, or the kernel's -errno with
 * err naming what. Other messages are skipped. */
int net_nl_ack(int fd, uint32_t seq, const char *what, struct hutch_err *err);

#endif
