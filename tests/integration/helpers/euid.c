// SPDX-License-Identifier: Apache-2.0
/*
 * euid: prints the effective uid and gid it runs with, "UID GID". Planted as a setuid copy
 * by tests/security/workspace.bats and run from the host as nobody: what it prints is what
 * the plant grants (a shell would drop a setuid identity by itself and hide it).
 */
#include <stdio.h>
#include <unistd.h>

int main(void)
{
	printf("%u %u\n", (unsigned)geteuid(), (unsigned)getegid());
	return 0;
}
