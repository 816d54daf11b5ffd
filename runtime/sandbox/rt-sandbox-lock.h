/* SPDX-License-Identifier: Apache-2.0 */
/* --lock NAME's queue (rt-sandbox-lock.c). */
#ifndef HUTCH_RT_SANDBOX_LOCK_H
#define HUTCH_RT_SANDBOX_LOCK_H

#include "rt-sandbox.h"

/* rt-sandbox-lock.c: --lock NAME's queue. enter takes a ticket, whose number is the place in
 * line (first of all, so that the order is the order hutch was started in); wait returns once
 * every ticket ahead is gone (-EWOULDBLOCK: --no-wait, or --lock-timeout ran out); unlock
 * leaves the line (fd < 0: nothing), and forget only closes a copy (a --detach parent's).
 * Both do nothing without --lock. The sweep removes dead tickets and empty queues. */
struct rt_sb_ticket {
	int fd, dir; /* the ticket, flocked; its queue's directory */
	char name[24];
};
#define RT_SB_TICKET_INIT ((struct rt_sb_ticket){ .fd = -1, .dir = -1 })
int rt_sb_lock_enter(const struct rt_sb_opts *o, struct rt_sb_ticket *t, struct hutch_err *err);
int rt_sb_lock_wait(const struct rt_sb_opts *o, struct rt_sb_ticket *t, struct hutch_err *err);
void rt_sb_unlock(const struct rt_sb_opts *o, struct rt_sb_ticket *t);
void rt_sb_ticket_forget(struct rt_sb_ticket *t);
void rt_sb_locks_sweep(void);

#endif
