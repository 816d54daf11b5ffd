// SPDX-License-Identifier: Apache-2.0
/*
 * tiocsti: tries to push one byte into the input of the terminal on stdin (TIOCSTI), as a
 * sandbox escape would, and prints what the kernel said: "TIOCSTI: ok" or
 * "TIOCSTI: <errno name>". Built static, to run inside a busybox container (exec.bats,
 * tty-exec.bats). Exit status 0 when refused, 1 when the byte went in, 2 on usage errors.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

int main(void)
{
	char c = '#';

	if (!isatty(0)) {
		printf("TIOCSTI: stdin is not a terminal\n");
		return 2;
	}
	if (ioctl(0, TIOCSTI, &c) == 0) {
		printf("TIOCSTI: ok\n");
		return 1;
	}
	printf("TIOCSTI: %s\n", errno == EPERM ? "EPERM" : strerror(errno));
	return 0;
}
