#!/usr/bin/env bats
# The kernel attributes a container's processes inherit (linux.personality, process.ioPriority,
# ...), read from inside by the process itself (procattr: the syscalls, as busybox has no
# chrt), for the init and for exec'd processes; kernel refusals fail create naming the field.

load ../helpers

setup() {
	setup_bundle
}

teardown() {
	teardown_bundle
}

start_ctr() {
	set_args sleep 1000
	run_bg run -d "$ID"
	check_status 0
}

refused() {
	run_bg create "$ID"
	[ "$status" -eq 1 ]
	[[ $output == *"$1"* ]]
	assert_no_leftovers
}

@test "personality: LINUX32 shows a 32-bit machine to the init and to exec" {
	[ "$(uname -m)" = x86_64 ] || skip "LINUX32 is checked on x86_64"
	update_config '.linux.personality = {domain: "LINUX32"}'
	set_args uname -m
	run_ok
	[ "$output" = i686 ]
	update_config '.linux.personality = {domain: "LINUX"}'
	run_ok
	[ "$output" = x86_64 ]
	update_config '.linux.personality = {domain: "LINUX32"}'
	start_ctr
	run hutch exec "$ID" uname -m
	check_status 0
	[ "$output" = i686 ]
}

@test "personality: unknown domains and any flag are refused" {
	update_config '.linux.personality = {domain: "LINUX64"}'
	refused "linux.personality.domain: unknown domain LINUX64"
	update_config '.linux.personality = {domain: "LINUX", flags: ["ADDR_NO_RANDOMIZE"]}'
	refused "linux.personality.flags: ADDR_NO_RANDOMIZE: not supported"
}

