#!/usr/bin/env bats
# fds of hutch's own reaching the container through --preserve-fds: only the caller's fds
# 3..3+N-1 may pass. Before, hutch's own fds (the state dir holding the flock, cgroup dirs,
# exec.fifo) took the free numbers in that range, so `start` and `delete --force` blocked on
# the lock the init held, and `run --preserve-fds 100` from a caller with 0..99 open hung.

load ../integration/helpers

# The init's fds, one "N -> target" per line.
init_fds() {
	local pid=$1 fd
	for fd in /proc/"$pid"/fd/*; do
		echo "${fd##*/} -> $(readlink "$fd")"
	done
}

# with_fds_to N ARGS...: `hutch ARGS...` with fds 3..N open on /dev/null and none above, from
# a fresh shell (bats' own shell keeps fds of its own there).
with_fds_to() {
	local last=$1
	shift
	bash -c 'last=$1; shift
		for fd in /proc/$$/fd/*; do fd=${fd##*/}; [ "$fd" -gt 2 ] && eval "exec $fd<&-"; done
		for fd in $(seq 3 "$last"); do eval "exec $fd</dev/null"; done
		exec timeout -k 5 10 "$@"' with_fds_to "$last" "$HUTCH" --root "$HUTCH_ROOT" "$@"
}

@test "fds: create --preserve-fds 2 passes the caller's 3 and 4, and nothing of hutch's" {
	set_args sleep 100
	# In a subshell: bats keeps its own output on fd 3.
	(hutch create --preserve-fds 2 "$ID" 3>"$TEST_DIR/three" 4>"$TEST_DIR/four" \
		</dev/null >"$TEST_DIR/out" 2>&1)
	local pid
	pid=$(state_field "$ID" .pid)
	init_fds "$pid" >&2
	# Before start: 3 and 4 are the caller's; no fd is the state dir or a cgroup.
	[ "$(readlink "/proc/$pid/fd/3")" = "$TEST_DIR/three" ]
	[ "$(readlink "/proc/$pid/fd/4")" = "$TEST_DIR/four" ]
	! init_fds "$pid" | grep -E -- "-> ($HUTCH_ROOT/$ID|/sys/fs/cgroup/.*)\$"
	# start must not block on the state dir's lock.
	HUTCH_CMD_TIMEOUT=10 hutch start "$ID"
	wait_for_state "$ID" running
	init_fds "$pid" >&2
	[ "$(ls "/proc/$pid/fd" | sort -n | tr '\n' ' ')" = "0 1 2 3 4 " ]
	HUTCH_CMD_TIMEOUT=10 hutch delete --force "$ID"
}

@test "fds: run --preserve-fds beyond what the caller opened fails at once, leaving nothing" {
	set_args true
	# The caller has 0..99 open: fds 100..102 are not the caller's.
	run with_fds_to 99 run --preserve-fds 100 "$ID"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ $output == *"--preserve-fds 100: fd 100 is not open"* ]]
	assert_no_leftovers
	# 97 of them are fine, and the container sees exactly those.
	set_args sh -c 'ls /proc/self/fd | wc -l'
	run with_fds_to 99 run --preserve-fds 97 "$ID"
	check_status 0
	# 0..99 and ls's own directory fd
	[ "$output" = 101 ]
}

@test "fds: exec --preserve-fds passes only the caller's fds" {
	set_args sleep 100
	run_bg run -d "$ID"
	check_status 0
	run with_fds_to 3 exec --preserve-fds 1 "$ID" \
		sh -c 'ls /proc/self/fd | tr "\n" " "; readlink /proc/self/fd/3'
	check_status 0
	[[ $output == "0 1 2 3 4 /"* ]] # ls's own directory is 4; 3 is the caller's file
	run with_fds_to 3 exec --preserve-fds 2 "$ID" true
	[ "$status" -eq 255 ] # exec's failure status, as runc's
	[[ $output == *"--preserve-fds 2: fd 4 is not open"* ]]
}

@test "fds: no fd of hutch or of the caller reaches the container" {
	exec 7</dev/null
	exec 8>"$TEST_DIR/fd8"
	set_args ls /proc/self/fd
	run hutch run "$ID"
	exec 7<&- 8>&-
	check_status 0
	# ls's own directory is 3
	[ "$(echo $output)" = "0 1 2 3" ]
}

@test "fds: the running process holds nothing but 0, 1 and 2" {
	set_args sleep 100
	exec 7</dev/null
	run_bg create "$ID"
	exec 7<&-
	hutch start "$ID"
	local pid
	pid=$(state_field "$ID" .pid)
	ls -l "/proc/$pid/fd"
	[ "$(ls "/proc/$pid/fd" | sort -n | tr '\n' ' ')" = "0 1 2 " ]
}

@test "fds: a cwd through /proc/self/fd/N is refused (CVE-2024-21626)" {
	local fd
	exec 7<"$TEST_DIR"
	for fd in 3 4 5 6 7 8 9 10; do
		update_config '.process.cwd = $c' --arg c "/proc/self/fd/$fd"
		set_args sh -c 'echo "escaped to $(pwd)"; ls ..'
		run hutch run "$ID"
		echo "cwd fd $fd: $status: $output"
		if [ "$status" -eq 0 ] || [[ $output == *escaped* ]]; then
			exec 7<&-
			false
		fi
	done
	exec 7<&-
	assert_no_leftovers
}
