// SPDX-License-Identifier: Apache-2.0
/* bpf(2) for the cgroup programs hutch builds by hand (cg-devbpf.c, cg-sockbpf.c). */
#include "cg-internal.h"

#include <string.h>
#include <sys/syscall.h>

int cg_sys_bpf(int cmd, union bpf_attr *attr)
{
	long r = syscall(SYS_bpf, cmd, attr, sizeof(*attr));
	return r < 0 ? -errno : (int)r;
}

int cg_bpf_load(uint32_t type, uint32_t attach_type, const struct bpf_insn *insns, size_t n,
		const char *what, struct hutch_err *err)
{
	static char log[8192];
	union bpf_attr a;
	memset(&a, 0, sizeof(a));
	a.prog_type = type;
	a.expected_attach_type = attach_type;
	a.insns = (uint64_t)(uintptr_t)insns;
	a.insn_cnt = (uint32_t)n;
	a.license = (uint64_t)(uintptr_t) "Apache-2.0";
	int fd = cg_sys_bpf(BPF_PROG_LOAD, &a);
	if (fd >= 0 || fd == -EPERM)
		return fd < 0 ? hutch_fail_errno(err, fd, "load %s", what) : fd;
	/* Load again with the verifier log, only to explain the failure. */
	a.log_buf = (uint64_t)(uintptr_t)log;
	a.log_size = sizeof(log);
	a.log_level = 1;
	log[0] = '\0';
	int r = cg_sys_bpf(BPF_PROG_LOAD, &a);
	if (r >= 0)
		return r;
	return hutch_fail_errno(err, fd, "load %s (%.200s)", what, log);
}

int cg_bpf_attach(int cgroup_fd, int prog, uint32_t attach_type, const char *what,
		  struct hutch_err *err)
{
	union bpf_attr a;
	memset(&a, 0, sizeof(a));
	a.target_fd = (uint32_t)cgroup_fd;
	a.attach_bpf_fd = (uint32_t)prog;
	a.attach_type = attach_type;
	a.attach_flags = BPF_F_ALLOW_MULTI;
	int r = cg_sys_bpf(BPF_PROG_ATTACH, &a);
	return r < 0 ? hutch_fail_errno(err, r, "attach %s", what) : 0;
}
