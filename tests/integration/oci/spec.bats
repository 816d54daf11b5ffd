#!/usr/bin/env bats
# hutch spec: runc's default config.json, and its rootless variant.

ROOTLESS_OK=1 # hutch needs no privilege for these
load ../helpers

@test "spec: writes runc's default config.json in the current directory" {
	mkdir "$TEST_DIR/s" && cd "$TEST_DIR/s"
	run hutch spec
	check_status 0
	[ -z "$output" ]
	jq -e . config.json >/dev/null
	[[ $(jq -r .ociVersion config.json) == 1.* ]]
	[ "$(jq -r .process.terminal config.json)" = true ]
	[ "$(jq -c .process.args config.json)" = '["sh"]' ]
	[ "$(jq -c .process.user config.json)" = '{"uid":0,"gid":0}' ]
	[ "$(jq -r .process.cwd config.json)" = / ]
	[ "$(jq -r .process.noNewPrivileges config.json)" = true ]
	[ "$(jq -r .root.path config.json)" = rootfs ]
	[ "$(jq -r .root.readonly config.json)" = true ]
	jq -e '.process.env | index("PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")' config.json
	jq -e '.process.capabilities.bounding | sort == ["CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"]' config.json
	# pid, network, ipc, uts and mount, as runc (newer runc adds cgroup)
	jq -e '[.linux.namespaces[].type] - ["cgroup"] | sort == ["ipc", "mount", "network", "pid", "uts"]' config.json
	jq -e '[.mounts[].destination] | contains(["/proc", "/dev", "/dev/pts", "/dev/shm", "/dev/mqueue", "/sys"])' config.json
	jq -e '.mounts[] | select(.destination == "/proc") | .type == "proc"' config.json
	jq -e '.linux.maskedPaths | index("/proc/kcore")' config.json
	jq -e '.linux.readonlyPaths | index("/proc/sys")' config.json
	jq -e '.linux.resources.devices == [{"allow": false, "access": "rwm"}]' config.json
}

@test "spec: --bundle, -b and --bundle=DIR write into DIR" {
	local d
	for d in long short eq; do mkdir "$TEST_DIR/$d"; done
	run hutch spec --bundle "$TEST_DIR/long"
	check_status 0
	run hutch spec -b "$TEST_DIR/short"
	check_status 0
	run hutch spec --bundle="$TEST_DIR/eq"
	check_status 0
	for d in long short eq; do jq -e .ociVersion "$TEST_DIR/$d/config.json"; done
}

@test "spec: refuses to overwrite an existing config.json" {
	echo '{"keep": "me"}' >config.json
	run hutch spec
	[ "$status" -eq 1 ]
	[[ $output == *config.json* ]]
	[ "$(jq -r .keep config.json)" = me ]
}

@test "spec: --rootless adds a user namespace mapping the caller, without network or resources" {
	mkdir "$TEST_DIR/r" && cd "$TEST_DIR/r"
	run hutch spec --rootless
	check_status 0
	jq -e '[.linux.namespaces[].type] | index("user")' config.json
	jq -e '[.linux.namespaces[].type] | index("network") == null' config.json
	[ "$(jq -c '.linux.uidMappings' config.json)" = "[{\"containerID\":0,\"hostID\":$(id -u),\"size\":1}]" ]
	[ "$(jq -c '.linux.gidMappings' config.json)" = "[{\"containerID\":0,\"hostID\":$(id -g),\"size\":1}]" ]
	jq -e '.linux.resources == null' config.json
}

@test "spec: the default config runs as it is (with terminal false)" {
	# setup_bundle changed only terminal, args, cgroupsPath and env
	set_args sh -c 'echo hello from $(hostname)'
	if rootless_pass; then # runc's rootless rule: it has no user namespace
		run hutch run "$ID"
		[ "$status" -eq 1 ]
		[[ $output == *"rootless"*"linux.namespaces needs a user namespace"* ]]
		return
	fi
	run_ok
	[ "$output" = "hello from $(jq -r .hostname config.json)" ]
}

# A drop-in runtime runs the configs the other runtimes write, untouched but for the rootfs,
# the terminal and the command.
@test "spec: runc's and crun's own default configs run as they are" {
	requires_host_root "runc's and crun's default configs have no user namespace"
	local rt d
	for rt in runc crun; do
		command -v $rt >/dev/null || skip "$rt is not installed"
		d=$TEST_DIR/spec-$rt
		mkdir "$d"
		(cd "$d" && $rt spec)
		jq --arg r "$BUNDLE/rootfs" --arg cg "$TAG-$rt" '.root.path = $r
			| .process.terminal = false | .process.args = ["true"]
			| .linux.cgroupsPath = $cg' "$d/config.json" >"$d/c" && mv "$d/c" "$d/config.json"
		run hutch run --bundle "$d" "$ID-$rt"
		echo "$rt: $output"
		check_status 0
	done
}
