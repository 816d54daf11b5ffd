#!/usr/bin/env bats
# hutch kill: default SIGTERM, signal names with and without SIG and numbers, --all, and
# kill of a created container.

load ../helpers

# Runs a detached shell that reports the signals it gets ("got TERM", "got USR1").
start_trapper() {
	set_args sh -c 'for s in TERM USR1 USR2 HUP; do trap "echo got $s" $s; done
		echo ready; while :; do sleep 0.05; done'
	run_bg run -d "$ID"
	check_status 0
	wait_for_output "$ID" ready
}

@test "kill: sends SIGTERM by default" {
	start_trapper
	run hutch kill "$ID"
	check_status 0
	wait_for_output "$ID" "got TERM"
	[ "$(state_field "$ID" .status)" = running ]
}

@test "kill: takes signal names with and without SIG, and numbers" {
	start_trapper
	hutch kill "$ID" USR1
	wait_for_output "$ID" "got USR1"
	hutch kill "$ID" SIGUSR2
	wait_for_output "$ID" "got USR2"
	hutch kill "$ID" 1
	wait_for_output "$ID" "got HUP"
	hutch kill "$ID" SIGKILL
	wait_for_state "$ID" stopped
}

@test "kill: KILL and 9 stop the container" {
	set_args sleep 100
	set_cgroup a
	run_bg run -d "$ID-a"
	set_cgroup b
	run_bg run -d "$ID-b"
	hutch kill "$ID-a" KILL
	hutch kill "$ID-b" 9
	wait_for_state "$ID-a" stopped
	wait_for_state "$ID-b" stopped
}

@test "kill: an unknown signal fails and the container keeps running" {
	set_args sleep 100
	run_bg run -d "$ID"
	for sig in BOGUS SIGBOGUS 0x9 -1 99999; do
		run hutch kill "$ID" "$sig"
		[ "$status" -eq 1 ]
		[[ $output == *"$sig"* ]]
	done
	[ "$(state_field "$ID" .status)" = running ]
}

@test "kill: a created container can be killed" {
	set_args sleep 100
	run_bg create "$ID"
	local pid
	pid=$(state_field "$ID" .pid)
	run hutch kill "$ID" KILL
	check_status 0
	wait_for_state "$ID" stopped
	pid_gone "$pid"
	hutch delete "$ID"
}

@test "kill --all: signals every process of a container without a pid namespace" {
	remove_ns pid
	set_args sh -c 'sleep 100 & sleep 100 & echo started; wait'
	run_bg run -d "$ID"
	check_status 0
	wait_for_output "$ID" started
	local me=$BASHPID
	[ "$(test_processes "$me" | wc -l)" -ge 3 ]
	run hutch kill --all "$ID" KILL
	check_status 0
	wait_for_state "$ID" stopped
	assert_no_test_processes
}

@test "kill -a: the short form" {
	set_args sleep 100
	run_bg run -d "$ID"
	run hutch kill -a "$ID" KILL
	check_status 0
	wait_for_state "$ID" stopped
}

@test "kill 0 and kill -a ID 0: check that the container runs, signalling nothing" {
	remove_ns pid
	set_args sh -c 'trap "echo got-term" TERM; sleep 100 & echo started; wait; wait'
	run_bg run -d "$ID"
	check_status 0
	wait_for_output "$ID" started
	run hutch kill -a "$ID" 0
	check_status 0
	run hutch kill --all "$ID" 0
	check_status 0
	run hutch kill "$ID" 0
	check_status 0
	[ "$(state_field "$ID" .status)" = running ]
	[[ $(ctr_output "$ID") != *got-term* ]]
	run hutch kill -a "$ID" KILL
	check_status 0
	wait_for_state "$ID" stopped
	# as runc: the init alone is "not running"; --all has no process left to check, and is fine
	run hutch kill "$ID" 0
	[ "$status" -eq 1 ]
	[[ $output == *"not running"* ]]
	run hutch kill -a "$ID" 0
	check_status 0
}

@test "kill --all: a stopped container whose cgroup is gone (a collected systemd scope) has nothing to signal" {
	set_args true
	set_cgroup gone
	run_bg run -d "$ID"
	check_status 0
	wait_for_state "$ID" stopped
	# what systemd does to an emptied scope, before containerd's shim runs kill --all
	local dirs d
	dirs=$(own_cgroup_dirs | while read -r d; do find "$d" -maxdepth 3 -type d -name "$TAG-gone"; done)
	[ -n "$dirs" ]
	while read -r d; do rmdir "$d"; done <<<"$dirs"
	run hutch kill --all "$ID" KILL
	check_status 0
	run hutch kill -a "$ID" 0
	check_status 0
	# the init alone is still "not running", as runc
	run hutch kill "$ID" KILL
	[ "$status" -eq 1 ]
	[[ $output == *"not running"* ]]
	hutch delete "$ID"
}

@test "kill: a missing container fails" {
	run hutch kill nonexistent KILL
	[ "$status" -eq 1 ]
	[[ $output == *nonexistent* ]]
}
