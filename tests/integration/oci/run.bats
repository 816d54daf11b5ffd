#!/usr/bin/env bats
# hutch run: create + start + wait, exit codes, stdio, --detach, --keep, --pid-file,
# --preserve-fds, and where the container's process sits in the caller's process tree.

load ../helpers

@test "run: returns the container's exit code and deletes the container" {
	set_args sh -c 'exit 42'
	run hutch run "$ID"
	check_status 42
	run hutch state "$ID"
	[ "$status" -eq 1 ]
	[ -z "$(ls -A "$HUTCH_ROOT")" ]
}

@test "run: returns 0 for a process that succeeds" {
	run_ok
	[ -z "$output" ]
}

@test "run: the process inherits hutch's stdout, stderr and stdin" {
	set_args sh -c 'read line; echo "out:$line"; echo "err:$line" >&2'
	echo hello | hutch run "$ID" >"$TEST_DIR/out" 2>"$TEST_DIR/err"
	[ "$(cat "$TEST_DIR/out")" = out:hello ]
	[ "$(cat "$TEST_DIR/err")" = err:hello ]
}

@test "run: a process killed by a signal gives 128+signal" {
	set_args sleep 100
	(
		status=0
		hutch run "$ID" </dev/null >"$TEST_DIR/fg.out" 2>&1 3>&- || status=$?
		echo "$status" >"$TEST_DIR/fg.rc"
	) &
	local bg=$!
	track_pid "$bg"
	wait_for_state "$ID" running
	hutch kill "$ID" KILL
	wait "$bg"
	cat "$TEST_DIR/fg.out"
	[ "$(cat "$TEST_DIR/fg.rc")" -eq 137 ]
}

@test "run: the container's process is a descendant of the caller" {
	set_args sleep 100
	hutch run "$ID" </dev/null >/dev/null 2>&1 3>&- &
	track_pid $!
	wait_for_state "$ID" running
	local pid me=$BASHPID
	pid=$(state_field "$ID" .pid)
	while [ "$pid" -gt 1 ] && [ "$pid" != "$me" ]; do
		pid=$(awk '/^PPid:/ { print $2 }' "/proc/$pid/status")
	done
	[ "$pid" = "$me" ]
	hutch kill "$ID" KILL
}

@test "run --detach: returns at once and leaves the container running" {
	set_args sleep 100
	run_bg run --detach "$ID"
	check_status 0
	[ "$(state_field "$ID" .status)" = running ]
	hutch kill "$ID" KILL
	wait_for_state "$ID" stopped
	hutch delete "$ID"
}

@test "run -d --pid-file: the pid file holds the init's pid, without a newline" {
	set_args sleep 100
	run_bg run -d --pid-file "$TEST_DIR/pid" "$ID"
	check_status 0
	local pid
	pid=$(cat "$TEST_DIR/pid")
	[[ $pid =~ ^[0-9]+$ ]]
	[ "$(wc -l <"$TEST_DIR/pid")" -eq 0 ]
	[ "$pid" = "$(state_field "$ID" .pid)" ]
	grep -q '^State:.*S' "/proc/$pid/status"
	hutch delete --force "$ID"
	pid_gone "$pid"
}

@test "run --pid-file: a relative path is relative to the current directory" {
	set_args sleep 100
	cd "$TEST_DIR"
	run_bg run -d --bundle "$BUNDLE" --pid-file rel.pid "$ID"
	check_status 0
	[ "$(cat "$TEST_DIR/rel.pid")" = "$(state_field "$ID" .pid)" ]
}

@test "run --keep: the stopped container stays until deleted" {
	set_args sh -c 'exit 3'
	run hutch run --keep "$ID"
	check_status 3
	[ "$(state_field "$ID" .status)" = stopped ]
	hutch list -q | grep -qx "$ID"
	hutch delete "$ID"
	run hutch state "$ID"
	[ "$status" -eq 1 ]
}

@test "run --bundle, -b, --bundle=DIR: from another directory" {
	set_args echo ok
	cd /
	run hutch run --bundle "$BUNDLE" "$ID-a" # one after the other: the cgroup is free again
	check_status 0
	[ "$output" = ok ]
	run hutch run -b "$BUNDLE" "$ID-b"
	check_status 0
	[ "$output" = ok ]
	run hutch run --bundle="$BUNDLE" "$ID-c"
	check_status 0
	[ "$output" = ok ]
}

@test "run: global options take --opt=value too; --debug is accepted" {
	set_args echo ok
	run "$HUTCH" --root="$HUTCH_ROOT" run "$ID"
	check_status 0
	[ "$output" = ok ]
	run "$HUTCH" --debug --root "$HUTCH_ROOT" --log="$TEST_DIR/log" run "$ID"
	check_status 0
	[[ $output == *ok* ]]
}

@test "run --preserve-fds: passes fds 3.. and sets LISTEN_FDS, closes the others" {
	echo three >"$TEST_DIR/f3"
	echo four >"$TEST_DIR/f4"
	set_args sh -c 'cat <&3; cat <&4; echo "LISTEN_FDS=$LISTEN_FDS";
		for fd in 5 6 7 8 9 10 11 12 13 200 251 255; do
			[ -e /proc/self/fd/$fd ] && echo "leaked fd $fd"
		done; true'
	run hutch run --preserve-fds 2 "$ID" 3<"$TEST_DIR/f3" 4<"$TEST_DIR/f4" 7<"$TEST_DIR/f4"
	check_status 0
	[ "${lines[0]}" = three ]
	[ "${lines[1]}" = four ]
	[ "${lines[2]}" = LISTEN_FDS=2 ]
	[ "${#lines[@]}" -eq 3 ]
}

@test "run: without --preserve-fds only 0, 1 and 2 reach the process" {
	set_args ls /proc/self/fd
	run hutch run "$ID" 3<"$TEST_DIR" 9</dev/null
	check_status 0
	# ls's own directory fd is 3
	[ "$(echo $output)" = "0 1 2 3" ]
}

@test "run: its start follows its create with the id's lock held: a delete waits for it" {
	HUTCH_TEST_STOP_AT=run:created "$HUTCH" --root "$HUTCH_ROOT" run "$ID" </dev/null \
		>"$TEST_DIR/fg.out" 2>&1 3>&- &
	local hp=$! tries=100
	track_pid "$hp"
	until [ "$(awk '{ print $3 }' "/proc/$hp/stat" 2>/dev/null)" = T ]; do
		[ $tries -gt 0 ] || false
		sleep 0.05
		tries=$((tries - 1))
	done
	# Stopped between create and start: the lock was let go there, and this delete killed
	# the init and freed the id under run's feet.
	run timeout 1 "$HUTCH" --root "$HUTCH_ROOT" delete --force "$ID"
	[ "$status" -eq 124 ]
	kill -CONT "$hp"
	local rc=0
	wait "$hp" || rc=$?
	cat "$TEST_DIR/fg.out"
	[ "$rc" -eq 0 ]
	run hutch state "$ID"
	[ "$status" -eq 1 ]
	[ -z "$(ls -A "$HUTCH_ROOT")" ]
}
