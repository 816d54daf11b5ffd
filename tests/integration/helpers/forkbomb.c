// SPDX-License-Identifier: Apache-2.0
/*
 * forkbomb: forks children that only wait to be killed, and goes on trying when a fork is
 * refused, until it is killed itself: a pids limit holds it, and only the timeout ends it
 * (a shell's loop would stop at the first refused fork, and end the run before the timeout).
 */
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

int main(void)
{
	unsigned long refused = 0;
	for (;;) {
		pid_t pid = fork();
		if (pid == 0) {
			pause();
			_exit(0);
		}
		if (pid < 0 && errno == EAGAIN && refused++ == 0)
			fprintf(stderr, "forkbomb: a fork refused\n");
		if (pid < 0)
			usleep(1000);
	}
}
