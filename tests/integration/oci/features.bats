#!/usr/bin/env bats
# hutch features: the OCI features document.

ROOTLESS_OK=1 # hutch needs no privilege for these
load ../helpers

setup() {
	setup_tmp
}

@test "features: a valid OCI features document" {
	run hutch features
	check_status 0
	local f=$output
	jq -e . <<<"$f" >/dev/null
	[[ $(jq -r .ociVersionMin <<<"$f") == 1.* ]]
	[[ $(jq -r .ociVersionMax <<<"$f") == 1.* ]]
	jq -e '.hooks | contains(["prestart", "createRuntime", "createContainer", "startContainer",
		"poststart", "poststop"])' <<<"$f"
	jq -e '.mountOptions | contains(["ro", "rw", "bind", "rbind", "nosuid", "nodev", "noexec",
		"rprivate", "rslave"])' <<<"$f"
	jq -e '.mountOptions | contains(["rro", "rrw", "rnosuid", "rsuid", "rnodev", "rdev",
		"rnoexec", "rexec", "rnodiratime", "rdiratime", "rrelatime", "rnorelatime", "rnoatime",
		"ratime", "rstrictatime", "rnostrictatime", "rnosymfollow", "rsymfollow"])' <<<"$f"
	jq -e '.linux.namespaces | contains(["cgroup", "ipc", "mount", "network", "pid", "user",
		"uts"])' <<<"$f"
	jq -e '.linux.capabilities | contains(["CAP_CHOWN", "CAP_SYS_ADMIN", "CAP_NET_BIND_SERVICE"])' <<<"$f"
	jq -e '.linux.cgroup | type == "object"' <<<"$f"
	jq -e '.linux.seccomp.enabled | type == "boolean"' <<<"$f"
}

@test "features: the seccomp section lists actions and operators" {
	run hutch features
	check_status 0
	jq -e '.linux.seccomp.enabled == true' <<<"$output" || skip "built without seccomp"
	jq -e '.linux.seccomp.actions | contains(["SCMP_ACT_ALLOW", "SCMP_ACT_ERRNO", "SCMP_ACT_KILL"])' <<<"$output"
	jq -e '.linux.seccomp.operators | contains(["SCMP_CMP_EQ", "SCMP_CMP_MASKED_EQ"])' <<<"$output"
}

@test "features: the kernel attributes hutch sets, with the names it takes" {
	run hutch features
	check_status 0
	jq -e '.linux.memoryPolicy.modes | contains(["MPOL_DEFAULT", "MPOL_BIND", "MPOL_INTERLEAVE",
		"MPOL_PREFERRED", "MPOL_LOCAL", "MPOL_PREFERRED_MANY", "MPOL_WEIGHTED_INTERLEAVE"])' <<<"$output"
	jq -e '.linux.memoryPolicy.flags | contains(["MPOL_F_STATIC_NODES", "MPOL_F_RELATIVE_NODES",
		"MPOL_F_NUMA_BALANCING"])' <<<"$output"
	jq -e '.linux.personality.domains == ["LINUX", "LINUX32"]' <<<"$output"
	jq -e '.linux.scheduler.policies | contains(["SCHED_OTHER", "SCHED_FIFO", "SCHED_RR",
		"SCHED_BATCH", "SCHED_IDLE", "SCHED_DEADLINE"])' <<<"$output"
	jq -e '.linux.scheduler.policies | index("SCHED_ISO") == null' <<<"$output" # no kernel has it
	jq -e '.linux.scheduler.flags | contains(["SCHED_FLAG_RESET_ON_FORK"])' <<<"$output"
	jq -e '.linux.scheduler.flags | index("SCHED_FLAG_UTIL_CLAMP_MIN") == null' <<<"$output"
	jq -e '.linux.ioPriority.classes == ["IOPRIO_CLASS_RT", "IOPRIO_CLASS_BE", "IOPRIO_CLASS_IDLE"]' <<<"$output"
	jq -e '.linux.timeOffsets.clocks == ["monotonic", "boottime"]' <<<"$output"
}
