// SPDX-License-Identifier: Apache-2.0
/*
 * Prints the kernel attributes a container process inherited, read with the syscalls
 * themselves (busybox has no chrt, and no /proc file shows a task's memory policy):
 *   ioprio CLASS LEVEL
 *   sched POLICY PRIORITY NICE FLAGS RUNTIME DEADLINE PERIOD
 *   mempolicy MODE-AND-FLAGS NODEMASK-HEX
 *   personality HEX
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

struct sched_attr_v0 {
	uint32_t size, policy;
	uint64_t flags;
	int32_t nice;
	uint32_t priority;
	uint64_t runtime, deadline, period;
};

int main(void)
{
	long io = syscall(SYS_ioprio_get, 1 /* IOPRIO_WHO_PROCESS */, 0);
	struct sched_attr_v0 a = { 0 };
	int mode = -1;
	unsigned long mask[16] = { 0 };

	if (io < 0 || syscall(SYS_sched_getattr, 0, &a, sizeof(a), 0) < 0 ||
	    syscall(SYS_get_mempolicy, &mode, mask, 16 * 64 + 1UL, NULL, 0UL) < 0) {
		perror("procattr");
		return 1;
	}
	printf("ioprio %ld %ld\n", io >> 13, io & 0x1fff);
	printf("sched %u %u %d %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", a.policy,
	       a.priority, a.nice, a.flags, a.runtime, a.deadline, a.period);
	printf("mempolicy %d %lx\n", mode, mask[0]);
	printf("personality %lx\n", (unsigned long)syscall(SYS_personality, 0xffffffffUL));
	return 0;
}
