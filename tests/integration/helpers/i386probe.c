// SPDX-License-Identifier: Apache-2.0
/*
 * i386probe: exits 0 when this host runs an i386 syscall (int $0x80: getpid) from a 64-bit
 * process. Some hypervisors' guests fault on int $0x80 (SIGSEGV, "general protection fault")
 * before the kernel's syscall entry, and so before seccomp: there the i386 ABI is out of
 * every process's reach, and the tests' i386 halves have nothing to check.
 */
#include <unistd.h>

int main(void)
{
	long r;
	__asm__ volatile("int $0x80" : "=a"(r) : "a"(20L) : "memory", "r8", "r9", "r10", "r11");
	return r == (long)getpid() ? 0 : 1;
}
