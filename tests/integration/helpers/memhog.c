// SPDX-License-Identifier: Apache-2.0
/*
 * memhog MIB: touches MIB MiB of anonymous memory, one MiB at a time, then says so and exits
 * 0. Under a smaller memory limit the page faults charge the cgroup until its OOM killer
 * takes this process (status 137 to its parent): the plain way to make an OOM kill, where a
 * shell collecting a pipe's output would charge pipe buffers from inside a syscall, which a
 * v1 memory cgroup can leave retrying for a long time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	long mib = argc > 1 ? atol(argv[1]) : 64;
	for (long i = 0; i < mib; i++) {
		char *p = malloc(1 << 20);
		if (!p) {
			perror("memhog: malloc");
			return 1;
		}
		memset(p, 0xa5, 1 << 20);
	}
	printf("memhog: %ld MiB touched\n", mib);
	return 0;
}
