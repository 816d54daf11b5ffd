// SPDX-License-Identifier: Apache-2.0
/*
 * A time namespace with offsets for CLOCK_MONOTONIC and CLOCK_BOOTTIME (time_namespaces(7)).
 * Offsets can be written only while no process is in the namespace, and clone(CLONE_NEWTIME)
 * puts the child in it at once: so the process unshares one (which is for its children
 * only), writes the offsets, and then enters it through /proc/self/ns/time_for_children.
 * The offsets file is opened by the parent: /proc/self files of a process that is not
 * dumpable belong to the host's root, which a user namespace's root cannot open.
 */
#include "ns-internal.h"

#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

int ns_enter_new_time(int offsets_fd, const struct ns_time_offsets *t, struct hutch_err *err)
{
	char buf[128];
	int n = snprintf(buf, sizeof(buf),
			 "monotonic %" PRId64 " %" PRIu32 "\nboottime %" PRId64 " %" PRIu32 "\n",
			 t->monotonic_secs, t->monotonic_nsecs, t->boottime_secs,
			 t->boottime_nsecs);
	if (unshare(CLONE_NEWTIME) < 0)
		return hutch_fail_errno(err, errno,
					"linux.timeOffsets: unshare the time namespace");
	if (write(offsets_fd, buf, (size_t)n) != n)
		return hutch_fail_errno(err, errno, "linux.timeOffsets: write the offsets");
	_cleanup_close_ int ns = open("/proc/self/ns/time_for_children", O_RDONLY | O_CLOEXEC);
	if (ns < 0 || setns(ns, CLONE_NEWTIME) < 0)
		return hutch_fail_errno(err, errno, "linux.timeOffsets: enter the time namespace");
	return 0;
}
