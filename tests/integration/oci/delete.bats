#!/usr/bin/env bats
# hutch delete: of stopped, running (--force), created and missing containers; state dir,
# cgroup and processes go with it.

load ../helpers

@test "delete: removes a stopped container, its state and its cgroup" {
	run hutch run --keep "$ID"
	check_status 0
	local cg
	cg=$(own_cgroup_dir pids)
	[ -z "$cg" ] || [ -d "$cg/$TAG" ]
	run hutch delete "$ID"
	check_status 0
	[ -z "$(ls -A "$HUTCH_ROOT")" ]
	[ -z "$cg" ] || [ ! -d "$cg/$TAG" ]
	run hutch state "$ID"
	[ "$status" -eq 1 ]
}

@test "delete: refuses a running container without --force" {
	set_args sleep 100
	run_bg run -d "$ID"
	run hutch delete "$ID"
	[ "$status" -eq 1 ]
	[[ $output == *"$ID"* ]]
	[ "$(state_field "$ID" .status)" = running ]
}

@test "delete --force: kills a running container and waits for it" {
	set_args sleep 100
	run_bg run -d "$ID"
	local pid
	pid=$(state_field "$ID" .pid)
	run hutch delete --force "$ID"
	check_status 0
	pid_gone "$pid"
	run hutch state "$ID"
	[ "$status" -eq 1 ]
}

@test "delete -f: a created container" {
	set_args sleep 100
	run_bg create "$ID"
	local pid
	pid=$(state_field "$ID" .pid)
	run hutch delete -f "$ID"
	check_status 0
	pid_gone "$pid"
}

@test "delete: a missing container fails, with --force it succeeds" {
	run hutch delete nonexistent
	[ "$status" -eq 1 ]
	[[ $output == *nonexistent* ]]
	run hutch delete --force nonexistent
	check_status 0
}

# A create killed before its first state save leaves a locked-then-released state dir and
# no state.json: the id must not stay taken, and delete must really free it.
@test "delete: the state dir of a create killed before its first save is removed" {
	mkdir -p "$HUTCH_ROOT/$ID"
	run hutch create "$ID"
	[ "$status" -eq 1 ]
	[[ $output == *"already exists"* ]]
	run hutch delete "$ID"
	check_status 0
	[ ! -e "$HUTCH_ROOT/$ID" ]
	mkdir "$HUTCH_ROOT/$ID"
	run hutch delete --force "$ID"
	check_status 0
	[ ! -e "$HUTCH_ROOT/$ID" ]
	set_args true
	run hutch run "$ID"
	check_status 0
}

@test "delete: after the init was killed from outside" {
	set_args sleep 100
	run_bg run -d "$ID"
	kill -9 "$(state_field "$ID" .pid)"
	wait_for_state "$ID" stopped
	run hutch delete "$ID"
	check_status 0
}

@test "delete --force: kills every process of a container without a pid namespace" {
	remove_ns pid
	set_args sh -c 'sleep 100 & sleep 100 & echo started; wait'
	run_bg run -d "$ID"
	wait_for_output "$ID" started
	run hutch delete --force "$ID"
	check_status 0
	assert_no_test_processes
}

@test "delete --force: of a container whose init exited, leaving children behind" {
	remove_ns pid
	set_args sh -c 'sleep 100 & echo started'
	run_bg run -d "$ID"
	wait_for_output "$ID" started
	wait_for_state "$ID" stopped
	run hutch delete --force "$ID"
	check_status 0
	assert_no_test_processes
}
