#!/usr/bin/env bats
# hutch features: the OCI features document.

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
