#!/usr/bin/env bats
# Errors: bad configs (malformed, wrong types, missing fields, invalid values) fail create
# with exit 1 and one error line naming the field, leaving nothing; ids, missing and
# non-executable binaries, kill of a stopped container, --log in json, unsupported verbs.

load ../helpers

# config_error FIELD JQ_FILTER: create fails with one line naming FIELD, and leaves nothing.
config_error() {
	local field=$1 filter=$2
	cp "$BUNDLE/config.json.orig" "$BUNDLE/config.json"
	update_config "$filter"
	run_bg create "$ID"
	echo "[$field] $filter -> $status: $output"
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ $output == *"$field"* ]]
	assert_no_leftovers
}

setup() {
	setup_bundle
	cp "$BUNDLE/config.json" "$BUNDLE/config.json.orig"
}

@test "errors: malformed JSON" {
	echo '{"ociVersion": "1.0.2", "process": {' >"$BUNDLE/config.json"
	run_bg create "$ID"
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ $output == *config.json* ]]
	assert_no_leftovers
}

@test "errors: a bundle without config.json" {
	mkdir "$TEST_DIR/empty"
	run_bg create --bundle "$TEST_DIR/empty" "$ID"
	[ "$status" -eq 1 ]
	[[ $output == *config.json* ]]
	assert_no_leftovers
}

@test "errors: wrong types" {
	config_error process.args '.process.args = "true"'
	config_error process.args '.process.args = [1, 2]'
	config_error process.terminal '.process.terminal = "yes"'
	config_error process.user.uid '.process.user.uid = "0"'
	config_error process.env '.process.env = "A=B"'
	config_error process.rlimits '.process.rlimits[0].soft = "many"'
	config_error linux.namespaces '.linux.namespaces = {}'
	config_error hostname '.hostname = 5'
	config_error mounts '.mounts = "none"'
	config_error root.readonly '.root.readonly = 1'
	config_error linux.resources.pids '.linux.resources.pids = {limit: "many"}'
}

@test "errors: missing required fields" {
	config_error ociVersion 'del(.ociVersion)'
	config_error process.args 'del(.process.args)'
	config_error process.args '.process.args = []'
	config_error process.cwd 'del(.process.cwd)'
	config_error root 'del(.root)'
	config_error destination '.mounts += [{type: "tmpfs", source: "tmpfs"}]'
}

@test "errors: invalid values" {
	config_error process.cwd '.process.cwd = "relative/dir"'
	config_error linux.namespaces '.linux.namespaces += [{type: "bogus"}]'
	config_error bogus '.linux.namespaces += [{type: "bogus"}]'
	config_error linux.namespaces '.linux.namespaces += [{type: "pid"}]'
	config_error process.rlimits '.process.rlimits = [{type: "RLIMIT_BOGUS", soft: 1, hard: 1}]'
	config_error process.rlimits '.process.rlimits = [{type: "RLIMIT_NOFILE", soft: 2048, hard: 1024}]'
	config_error process.capabilities '.process.capabilities.bounding += ["CAP_BOGUS"]'
	config_error process.oomScoreAdj '.process.oomScoreAdj = 5000'
	config_error linux.devices '.linux.devices = [{path: "/dev/x", type: "z", major: 1, minor: 1}]'
	config_error linux.devices '.linux.devices = [{path: "dev/x", type: "c", major: 1, minor: 1}]'
	config_error root.path '.root.path = "no-such-rootfs"'
}

@test "errors: a duplicate id fails and leaves the first container alone" {
	set_args sleep 100
	run_bg create "$ID"
	check_status 0
	local pid
	pid=$(state_field "$ID" .pid)
	set_cgroup other
	run_bg create "$ID"
	[ "$status" -eq 1 ]
	[[ $output == *"already exists"* ]]
	[ "$(state_field "$ID" .status)" = created ]
	[ "$(state_field "$ID" .pid)" = "$pid" ]
	[ "$(state_field "$ID" .bundle)" = "$BUNDLE" ]
}

@test "errors: invalid ids are rejected" {
	local id
	for id in "a/b" ".." "." "" "../escape" "a b" "$(printf 'a\nb')"; do
		run_bg create "$id"
		echo "id '$id': $status: $output"
		[ "$status" -eq 1 ]
		assert_no_leftovers
	done
	[ ! -e "$TEST_DIR/escape" ]
	[ ! -e "$HUTCH_ROOT/a" ]
}

@test "errors: a missing binary fails at create: no such file or directory" {
	local a
	for a in /nonexistent no-such-command; do
		set_args "$a"
		run_bg create "$ID"
		echo "$a: $status: $output"
		[ "$status" -eq 1 ]
		[[ ${output,,} == *"no such file or directory"* ]]
		[[ $output == *"$a"* ]]
		assert_no_leftovers
	done
}

@test "errors: a non-executable fails at create: permission denied" {
	local a
	for a in /etc/passwd /bin; do
		set_args "$a"
		run_bg create "$ID"
		echo "$a: $status: $output"
		[ "$status" -eq 1 ]
		[[ ${output,,} == *"permission denied"* ]]
		assert_no_leftovers
	done
}

@test "errors: kill of a stopped container: container not running" {
	run hutch run --keep "$ID"
	check_status 0
	run hutch kill "$ID" KILL
	[ "$status" -eq 1 ]
	[[ $output == *"container not running"* ]]
}

@test "errors: delete --force of a missing container succeeds, the verbs without --force fail" {
	run hutch delete --force nonexistent
	check_status 0
	local v
	for v in start state kill delete; do
		run hutch "$v" nonexistent
		[ "$status" -eq 1 ]
		[[ $output == *nonexistent* ]]
	done
}

@test "errors: --log FILE --log-format json writes json lines" {
	run "$HUTCH" --root "$HUTCH_ROOT" --log "$TEST_DIR/log.json" --log-format json start nonexistent
	[ "$status" -eq 1 ]
	cat "$TEST_DIR/log.json"
	[ -s "$TEST_DIR/log.json" ]
	# every line is an object with level, msg and time; an error names the container
	jq -e -s 'all(.[]; (.level | type == "string") and (.msg | type == "string") and (.time | type == "string"))' \
		"$TEST_DIR/log.json"
	jq -e -s 'any(.[]; .level == "error" and (.msg | contains("nonexistent")))' "$TEST_DIR/log.json"
	run "$HUTCH" --root="$HUTCH_ROOT" --log="$TEST_DIR/log2.json" --log-format=json kill nonexistent
	[ "$status" -eq 1 ]
	jq -e -s 'any(.[]; .level == "error")' "$TEST_DIR/log2.json"
}

@test "errors: an unknown --log-format fails" {
	run hutch --log "$TEST_DIR/log" --log-format yaml list
	[ "$status" -eq 1 ]
	[[ $output == *yaml* ]]
}

set_cgroups_path() {
	jq --arg p "$1" '.linux.cgroupsPath = $p' "$BUNDLE/config.json" >"$TEST_DIR/c" &&
		mv "$TEST_DIR/c" "$BUNDLE/config.json"
}

# The systemd driver itself is tested in the VM lane's systemd guest (tests/vm/guest-systemd.sh).
@test "errors: --systemd-cgroup: a cgroupsPath not slice:prefix:name is refused naming it; a host without systemd is refused" {
	[ ! -d /run/systemd/system ] || skip "systemd is the init here: the VM lane's systemd guests test it"
	set_cgroups_path ":hutch-it:$ID"
	run_bg --systemd-cgroup create "$ID"
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ $output == *"--systemd-cgroup: systemd is not this host's init (no /run/systemd/system)"* ]]
	assert_no_leftovers
	set_cgroups_path /a/b
	run_bg --systemd-cgroup create "$ID"
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ $output == *"linux.cgroupsPath: with --systemd-cgroup it is slice:prefix:name, not /a/b"* ]]
	assert_no_leftovers
}

@test "errors: --cgroup-manager: cgroupfs is accepted, systemd is --systemd-cgroup, others fail" {
	run_bg --cgroup-manager cgroupfs create "$ID"
	check_status 0
	run hutch --cgroup-manager=cgroupfs delete "$ID"
	[ "$status" -eq 0 ]
	[ ! -d /run/systemd/system ] || return 0 # systemd's own lane
	set_cgroups_path ":hutch-it:$ID"
	run_bg --cgroup-manager systemd create "$ID"
	[ "$status" -eq 1 ]
	[[ $output == *"systemd is not this host's init"* ]]
	run_bg --cgroup-manager=systemd create "$ID"
	[ "$status" -eq 1 ]
	[[ $output == *"systemd is not this host's init"* ]]
	run_bg --cgroup-manager bogus create "$ID"
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ $output == *--cgroup-manager*bogus* ]]
	run hutch --cgroup-manager
	[ "$status" -eq 1 ]
	[[ $output == *--cgroup-manager* ]]
	assert_no_leftovers
}

@test "errors: checkpoint and restore are not supported" {
	local v
	for v in checkpoint restore; do
		run hutch "$v" "$ID"
		[ "$status" -eq 1 ]
		[[ $output == *"not supported"* ]]
	done
}

@test "errors: ps, exec, pause, resume, update, events work or say not supported" {
	set_args sleep 100
	run_bg run -d "$ID"
	check_status 0
	local HUTCH_CMD_TIMEOUT=10 cmd
	for cmd in "ps $ID" "exec $ID true" "pause $ID" "resume $ID" "update --pids-limit 50 $ID" \
		"events --stats $ID"; do
		# shellcheck disable=SC2086 # split on purpose
		run hutch $cmd
		echo "$cmd: $status: $output"
		[ "$status" -eq 0 ] || [[ $output == *"not supported"* ]]
	done
}

@test "errors: exec bits: root runs a file with any x bit; CAP_DAC_OVERRIDE for another user is not supported" {
	printf '#!/bin/sh\necho ran\n' >"$BUNDLE/rootfs/bin/ownerx"
	chmod 704 "$BUNDLE/rootfs/bin/ownerx" # root's x bit only
	cp "$BUNDLE/rootfs/bin/ownerx" "$BUNDLE/rootfs/bin/nox"
	chmod 644 "$BUNDLE/rootfs/bin/nox"
	chown 1000:1000 "$BUNDLE/rootfs/bin/ownerx" "$BUNDLE/rootfs/bin/nox"
	# Root, with CAP_DAC_OVERRIDE: the owner's x bit is enough, as for runc.
	update_config '.process.capabilities |= with_entries(.value += ["CAP_DAC_OVERRIDE"])'
	local a
	for a in /bin/ownerx ownerx; do
		set_args "$a"
		run hutch run "$ID"
		check_status 0
		[ "${lines[-1]}" = ran ]
	done
	# No x bit at all: the kernel refuses even then; a PATH lookup skips such a file.
	set_args /bin/nox
	run_bg create "$ID"
	[ "$status" -eq 1 ]
	[[ ${output,,} == *"permission denied"* ]]
	set_args nox
	run_bg create "$ID"
	[ "$status" -eq 1 ]
	[[ ${output,,} == *"no such file or directory"* ]]
	# Another user: permission denied, or with CAP_DAC_OVERRIDE a clear "not supported".
	update_config '.process.user = {uid: 2000, gid: 2000}'
	set_args /bin/ownerx
	run_bg create "$ID"
	[ "$status" -eq 1 ]
	[[ $output == *"process.args[0] /bin/ownerx: "*"CAP_DAC_OVERRIDE"*"not supported"* ]]
	update_config '.process.capabilities |= with_entries(.value -= ["CAP_DAC_OVERRIDE"])'
	run_bg create "$ID"
	[ "$status" -eq 1 ]
	[[ ${output,,} == *"permission denied"* ]]
	assert_no_leftovers
}
