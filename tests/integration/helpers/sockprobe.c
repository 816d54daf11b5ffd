// SPDX-License-Identifier: Apache-2.0
/*
 * sockprobe FAMILY...: tries to make a stream socket of each address family number through
 * every entry point the kernel has for it on x86: socket(2) (x86_64), and through int $0x80
 * the i386 direct socket (359) and the multiplexer socketcall(SYS_SOCKET) (102), whose
 * arguments are in memory where seccomp can't read them. Prints "ABI FAMILY: OK" or the
 * errno's number, one line each: a filter on socket()'s family must hold at all three.
 * With SOCKPROBE_X86_64_ONLY set, socket(2) alone (a host where int $0x80 faults).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

/* The i386 ABI from a 64-bit process: its arguments must lie below 4 GiB (a static,
 * non-PIE binary's data does). */
static long call32(long nr, long a, long b, long c)
{
	long r;
	__asm__ volatile("int $0x80"
			 : "=a"(r)
			 : "a"(nr), "b"(a), "c"(b), "d"(c)
			 : "memory", "r8", "r9", "r10", "r11");
	return r;
}

static unsigned int args32[3]; /* socketcall's argument block, in low memory */

static void report(const char *abi, int family, long r)
{
	if (r >= 0) {
		printf("%s %d: OK\n", abi, family);
		close((int)r);
	} else {
		printf("%s %d: %ld\n", abi, family, -r);
	}
}

int main(int argc, char **argv)
{
	bool i386 = !getenv("SOCKPROBE_X86_64_ONLY");
	setvbuf(stdout, NULL, _IOLBF, 0); /* each line out before a call that may kill us */
	for (int i = 1; i < argc; i++) {
		int family = atoi(argv[i]);
		long r = socket(family, SOCK_STREAM, 0);
		report("x86_64", family, r < 0 ? -errno : r);
		if (!i386)
			continue;
		report("i386.socket", family, call32(359, family, SOCK_STREAM, 0));
		args32[0] = (unsigned)family, args32[1] = SOCK_STREAM, args32[2] = 0;
		report("i386.socketcall", family, call32(102, 1, (long)(uintptr_t)args32, 0));
	}
	return 0;
}
