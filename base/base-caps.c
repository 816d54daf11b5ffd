// SPDX-License-Identifier: Apache-2.0
/*
 * Capability names, shared by namespaces/ (applying caps) and seccomp/ (the default
 * profile's capability conditions), so there is one table of them.
 */
#include "hutch-base.h"
#include "hutch-ids.h"

#include <strings.h>

static const char *const cap_names[HUTCH_CAP_LAST_KNOWN + 1] = {
	"CAP_CHOWN",
	"CAP_DAC_OVERRIDE",
	"CAP_DAC_READ_SEARCH",
	"CAP_FOWNER",
	"CAP_FSETID",
	"CAP_KILL",
	"CAP_SETGID",
	"CAP_SETUID",
	"CAP_SETPCAP",
	"CAP_LINUX_IMMUTABLE",
	"CAP_NET_BIND_SERVICE",
	"CAP_NET_BROADCAST",
	"CAP_NET_ADMIN",
	"CAP_NET_RAW",
	"CAP_IPC_LOCK",
	"CAP_IPC_OWNER",
	"CAP_SYS_MODULE",
	"CAP_SYS_RAWIO",
	"CAP_SYS_CHROOT",
	"CAP_SYS_PTRACE",
	"CAP_SYS_PACCT",
	"CAP_SYS_ADMIN",
	"CAP_SYS_BOOT",
	"CAP_SYS_NICE",
	"CAP_SYS_RESOURCE",
	"CAP_SYS_TIME",
	"CAP_SYS_TTY_CONFIG",
	"CAP_MKNOD",
	"CAP_LEASE",
	"CAP_AUDIT_WRITE",
	"CAP_AUDIT_CONTROL",
	"CAP_SETFCAP",
	"CAP_MAC_OVERRIDE",
	"CAP_MAC_ADMIN",
	"CAP_SYSLOG",
	"CAP_WAKE_ALARM",
	"CAP_BLOCK_SUSPEND",
	"CAP_AUDIT_READ",
	"CAP_PERFMON",
	"CAP_BPF",
	"CAP_CHECKPOINT_RESTORE",
};

int hutch_cap_from_name(const char *name)
{
	for (int i = 0; i <= HUTCH_CAP_LAST_KNOWN; i++)
		if (strcasecmp(cap_names[i], name) == 0)
			return i;
	return -EINVAL;
}

const char *hutch_cap_name(int cap)
{
	return cap >= 0 && cap <= HUTCH_CAP_LAST_KNOWN ? cap_names[cap] : NULL;
}
