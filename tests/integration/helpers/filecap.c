// SPDX-License-Identifier: Apache-2.0
/*
 * filecap FILE: gives FILE the capability cap_net_raw+ep, as `setcap cap_net_raw+ep FILE`
 * would (a version 2 security.capability; inside a user namespace the kernel stores it as
 * version 3, with that namespace's root). tests/security/setid-walk.bats plants one in the
 * workspace, which hutch must remove when the sandbox ends.
 */
#include <stdint.h>
#include <stdio.h>
#include <sys/xattr.h>

int main(int argc, char **argv)
{
	/* VFS_CAP_REVISION_2 | VFS_CAP_FLAGS_EFFECTIVE; permitted: CAP_NET_RAW (13) */
	uint32_t caps[5] = { 0x02000001, 1u << 13, 0, 0, 0 };
	if (argc != 2 || setxattr(argv[1], "security.capability", caps, sizeof(caps), 0) < 0) {
		perror("filecap");
		return 1;
	}
	return 0;
}
