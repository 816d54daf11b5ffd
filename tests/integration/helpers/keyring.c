// SPDX-License-Identifier: Apache-2.0
/*
 * keyring: prints the process's session keyring, "ID UID" (the keyring's serial number and
 * its owner, as KEYCTL_DESCRIBE gives it: "keyring;UID;GID;PERM;NAME"). `keyring --join CMD
 * ARGS...` first joins a new session keyring and then runs CMD in it, so that what CMD
 * starts can be compared with a keyring known to be the caller's. busybox has no keyctl.
 */
#include <linux/keyctl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc > 2 && !strcmp(argv[1], "--join")) {
		if (syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, NULL) < 0) {
			perror("keyctl join");
			return 1;
		}
		execvp(argv[2], argv + 2);
		perror(argv[2]);
		return 127;
	}
	long id = syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0);
	char desc[256] = "";
	if (id < 0 || syscall(SYS_keyctl, KEYCTL_DESCRIBE, id, desc, sizeof(desc) - 1) < 0) {
		perror("keyctl");
		return 1;
	}
	unsigned uid = 0;
	if (sscanf(desc, "keyring;%u;", &uid) != 1) {
		fprintf(stderr, "keyring: unexpected description %s\n", desc);
		return 1;
	}
	printf("%ld %u\n", id, uid);
	return 0;
}
