#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
#
# Long-lived sandboxes, as an agent platform uses them (one sandbox per shell session, several
# commands in it): `hutch sandbox --name N --detach`, then `sandbox exec N`, `ls`, `stop`,
# `rm`. Each exec runs as the sandbox's own processes do (user, capabilities, no_new_privs,
# seccomp, cgroup and its limits); the timeout, the lock and the report cover the sandbox's
# whole life; and nothing is left after stop, rm, the timeout, the command's own exit or
# SIGKILL of any hutch involved. The supervisor's pid goes into $SB_PIDS, so that teardown
# checks its state and cgroups as it does the foreground hutch's.

load ../helpers
load ../sandbox-helpers
load ../named-helpers
bats_require_minimum_version 1.5.0

setup_file() {
	sb_images_setup
}

setup() {
	sb_setup
	N=n-$TAG
	LOCK=it-$TAG
	R=$TEST_DIR/r.json
}

teardown() {
	local rc=0
	named_teardown || rc=1
	sb_teardown || rc=1
	teardown_bundle || rc=1
	return $rc
}

@test "named: a detached sandbox takes three execs: stdin, stdout, exit codes, a tty" {
	run sb_named "$N" -- sleep 1000
	check_status 0
	[ "$output" = "$N" ]
	run hs exec "$N" -- sh -c 'read l; echo "got $l"' <<<"hello"
	check_status 0
	[ "$output" = "got hello" ]
	run hs exec "$N" -- sh -c 'echo out; exit 3'
	check_status 3
	[ "$output" = out ]
	run hs exec -t "$N" -- sh -c '[ -t 0 ] && [ -t 1 ] && tty' </dev/null
	check_status 0
	[[ $output == /dev/pts/* ]]
	# 127 and 126 as `hutch sandbox` reports them
	run -127 hs exec "$N" -- /no/such
	[[ $output == *"/no/such"* ]]
	run -126 hs exec "$N" -- /etc/passwd
	local sup
	sup=$(sup_pid "$N")
	run hs stop "$N"
	check_status 0
	session_gone "$N" "$sup"
}

@test "named: an exec is the sandbox's user, caps, no_new_privs, seccomp, cgroup and limits" {
	local m init ep
	m=$(mark)
	sb_named "$N" --pids 16 -- sleep 1000
	run hs exec "$N" -- sh -c 'id -u; id -g; grep -E "^(CapEff|NoNewPrivs|Seccomp):" /proc/self/status'
	check_status 0
	[ "${lines[0]}" = 1000 ]
	[ "${lines[1]}" = 1000 ]
	[[ ${lines[2]} == CapEff:*0000000000000000 ]]
	[[ ${lines[3]} == NoNewPrivs:*1 ]]
	[[ ${lines[4]} == Seccomp:*2 ]]
	# the exec'd process is in the main command's cgroup, in every hierarchy
	init=$(hs ls --format json | jq -r --arg n "$N" '.[] | select(.name == $n) | .pid')
	hs exec "$N" -- sleep "$m" 3>&- &
	track_pid $!
	wait_process_like "^sleep $m\$"
	ep=$(pgrep -xf "sleep $m")
	diff "/proc/$init/cgroup" "/proc/$ep/cgroup"
	grep -q "hutch-sb-$(sup_pid "$N")" "/proc/$ep/cgroup"
	# and the pids limit holds for execs too: 16 processes, and no more
	run hs exec "$N" -- sh -c 'i=0; while [ $i -lt 30 ]; do sleep 30 >/dev/null 2>&1 & i=$((i+1)); done; echo spawned'
	[[ $output == *"can't fork"* ]]
	run hs stop "$N"
	check_status 0
	no_process_like "^sleep $m\$"
}

@test "named: a sandbox with a throw-away layer (--as-root) takes execs too" {
	# Its rootfs is mounted in the supervisor's scratch namespace, which exec cannot see:
	# the spec exec reads must not name it.
	sb_named "$N" --as-root -- sleep 1000
	run hs exec "$N" -- sh -c 'id -u; touch /in-layer && echo written'
	check_status 0
	[ "${lines[0]}" = 0 ]
	[ "${lines[1]}" = written ]
	run hs stop "$N"
	check_status 0
}

@test "named: ls lists it (table and json) with its id, pid, status, created and image" {
	sb_named "$N" -- sleep 1000
	local sup
	sup=$(sup_pid "$N")
	run hs ls
	check_status 0
	[[ ${lines[0]} == "NAME "*" ID "*" PID "*" STATUS "*" CREATED "*" IMAGE" ]]
	local row
	row=$(grep "^$N " <<<"$output")
	[[ $row == *" sb-$sup "*" running "*" $IMAGE" ]]
	run hs ls --format json
	check_status 0
	jq -e --arg n "$N" --arg id "sb-$sup" --arg img "$IMAGE" '
		[.[] | select(.name == $n)] | length == 1 and .[0].id == $id and .[0].pid > 0
		and .[0].status == "running" and .[0].image == $img
		and (.[0].created | test("^[0-9]{4}-"))' <<<"$output"
	run hs ls --format yaml
	check_status 125
	hs stop "$N"
}

@test "named: stop ends it (TERM, then KILL after --time), leaves nothing, report of its life" {
	local sup t0 t1
	sb_named "$N" --report "$R" -- sh -c 'trap "" TERM; sleep 1000'
	sup=$(sup_pid "$N")
	hs exec "$N" -- true
	sleep 1
	t0=$(now_ms)
	run hs stop --time 1 "$N"
	check_status 0
	t1=$(now_ms)
	[ $((t1 - t0)) -ge 900 ] # the command ignored SIGTERM: killed after the grace
	session_gone "$N" "$sup"
	check_report "$R"
	jq -e --arg id "sb-$sup" '.id == $id and .exit_code == 137 and .signal == 9
		and .failure == "stopped" and .wall_ms >= 1900' "$R"
	run hs stop "$N"
	check_status 125
	[[ $output == *"sandbox $N: no such sandbox"* ]]
}

@test "named: rm needs -f while it runs; rm -f kills at once and leaves nothing" {
	local sup t0
	sb_named "$N" --grace 20 -- sh -c 'trap "" TERM; sleep 1000'
	sup=$(sup_pid "$N")
	run hs rm "$N"
	check_status 125
	[[ $output == *"sandbox $N: is running"* ]]
	t0=$(now_ms)
	run hs rm -f "$N"
	check_status 0
	[ $(($(now_ms) - t0)) -lt 5000 ]
	session_gone "$N" "$sup"
	run hs rm -f "$N"
	check_status 125
	[[ $output == *"no such sandbox"* ]]
}

@test "named: the timeout ends it and what was exec'd into it; report failure timeout" {
	local m sup
	m=$(mark)
	sb_named "$N" --timeout 2 --grace 1 --report "$R" -- sleep 1000
	sup=$(sup_pid "$N")
	run hs exec "$N" -- sleep "$m"
	check_status 137 # killed with the sandbox
	wait_gone "$sup"
	no_process_like "^sleep $m\$"
	session_gone "$N" "$sup"
	check_report "$R"
	jq -e '.failure == "timeout" and .exit_code == 124 and .timed_out and .wall_ms >= 2000' "$R"
}

@test "named: the main command's own exit ends it" {
	local sup
	sb_named "$N" -- sleep 1
	sup=$(sup_pid "$N")
	wait_gone "$sup"
	session_gone "$N" "$sup"
	run hs exec "$N" -- true
	check_status 125
	[[ $output == *"sandbox $N: no such sandbox"* ]]
}

@test "named: the lock is held for its whole life" {
	local R2=$TEST_DIR/r2.json
	sb_named "$N" --lock "$LOCK" -- sleep 1000
	hs exec "$N" -- true
	run sb --lock "$LOCK" --no-wait --report "$R2" -- true
	check_status 125
	jq -e '.failure == "lock_busy"' "$R2"
	hs stop "$N"
	run sb --lock "$LOCK" --no-wait -- true
	check_status 0
}

@test "named: a foreground named sandbox takes execs; stop ends it with 143" {
	local sup tries=200
	(
		st=0
		SB_PIDFILE=$TEST_DIR/fg.pid sb --name "$N" -- sleep 1000 </dev/null >/dev/null 2>&1 3>&- ||
			st=$?
		echo "$st" >"$TEST_DIR/fg.rc.tmp" && mv "$TEST_DIR/fg.rc.tmp" "$TEST_DIR/fg.rc"
	) 3>&- &
	track_pid $!
	until hs exec "$N" -- true 2>/dev/null; do
		[ $tries -gt 0 ] || fail "the named sandbox never ran"
		sleep 0.05
		tries=$((tries - 1))
	done
	sup=$(sup_pid "$N")
	[ "$sup" = "$(cat "$TEST_DIR/fg.pid")" ]
	run hs exec "$N" -- sh -c 'exit 5'
	check_status 5
	hs stop "$N"
	wait_gone "$sup"
	tries=200
	while [ ! -e "$TEST_DIR/fg.rc" ] && [ $tries -gt 0 ]; do
		sleep 0.05
		tries=$((tries - 1))
	done
	[ "$(cat "$TEST_DIR/fg.rc")" = 143 ]
	session_gone "$N" "$sup"
}

@test "named: SIGKILL of the supervisor kills the sandbox; the next hutch cleans up" {
	local m sup
	m=$(mark)
	sb_named "$N" -- sleep "$m"
	sup=$(sup_pid "$N")
	wait_process_like "^sleep $m\$"
	kill -9 "$sup"
	wait_gone "$sup"
	no_process_like "^sleep $m\$"
	run sb -- true
	check_status 0
	session_gone "$N" "$sup"
}

@test "named: SIGKILL of the supervisor before the command starts: 125, report, cleaned up" {
	run env HUTCH_TEST_KILL_AT=sandbox:created "$HUTCH" sandbox --image "$IMAGE" --name "$N" \
		--detach --report "$R" -- sleep 1000
	check_status 125
	[[ $output == *"supervisor died"* ]]
	check_report "$R"
	jq -e '.failure == "setup"' "$R"
	local sup
	sup=$(jq -r '.id | ltrimstr("sb-")' "$R")
	echo "$sup" >>"$SB_PIDS"
	run sb -- true
	check_status 0
	session_gone "$N" "$sup"
}

@test "named: SIGKILL of the foreground --detach hutch before it returned: nothing stays" {
	local m
	m=$(mark)
	run env HUTCH_TEST_KILL_AT=sandbox:detached "$HUTCH" sandbox --image "$IMAGE" \
		--name "$N" --detach -- sleep "$m"
	check_status 137
	# Its supervisor (a hutch of the same command line) may not have taken the name yet:
	# wait for it to end, then nothing of it may be left.
	local tries=200
	while pgrep -f -- "--name $N --detach" >/dev/null && [ $tries -gt 0 ]; do
		sleep 0.05
		tries=$((tries - 1))
	done
	[ ! -e "$SB_NAMES/$N" ]
	no_process_like "^sleep $m\$"
	run hs exec "$N" -- true
	check_status 125
}

@test "named: SIGKILL of a sandbox exec hutch leaves no process of it" {
	local m ep
	m=$(mark)
	sb_named "$N" -- sleep 1000
	"$HUTCH" sandbox exec "$N" -- sleep "$m" 3>&- &
	ep=$!
	track_pid $ep
	wait_process_like "^sleep $m\$"
	kill -9 "$ep"
	no_process_like "^sleep $m\$"
	run hs exec "$N" -- echo still
	check_status 0
	[ "$output" = still ]
	hs stop "$N"
}

@test "named: a duplicate name and a bad name fail with one line and 125" {
	sb_named "$N" -- sleep 1000
	sb_fails "sandbox $N: already exists" --name "$N" --detach --report "$R" -- true
	jq -e '.failure == "lock_busy"' "$R"
	sb_fails "sandbox $N: already exists" --name "$N" -- true
	sb_fails "--name a/b: not a valid name" --name a/b --detach --report "$R" -- true
	jq -e '.failure == "bad_option"' "$R"
	sb_fails "--name ..: not a valid name" --name .. -- true
	sb_fails "--detach: requires --name" --detach -- true
	run sb_raw --name x --isolation landlock -- true
	check_status 125
	[ "$output" = "hutch: error: --name with --isolation landlock: not supported" ]
	run hs exec "no-such-$TAG" -- true
	check_status 125
	[ "$output" = "hutch: error: sandbox no-such-$TAG: no such sandbox" ]
	hs stop "$N"
}

@test "named: the supervisor keeps no fd of its caller's" {
	local sup fd l
	sb_named "$N" -- sleep 1000 7>"$TEST_DIR/inherited" 8<"$TEST_DIR/inherited"
	sup=$(sup_pid "$N")
	for fd in 0 1 2; do
		[ "$(readlink "/proc/$sup/fd/$fd")" = /dev/null ]
	done
	for fd in /proc/"$sup"/fd/*; do
		l=$(readlink "$fd")
		echo "# $fd -> $l" >&2
		[[ $l != "$TEST_DIR"* || $l == "$HUTCH_ROOT" || $l == "$HUTCH_ROOT"/* ]] ||
			fail "inherited $fd -> $l"
	done
	# what it holds is its own: the sandbox's cgroups, locks, state (and the root and state
	# dirs it holds open), init's pipe, pidfd, the image directory it was given, resolved once
	# and held (docs/design.md, "Paths from callers"), and its own mount table (read again
	# only when a poll of it says the mounts changed)
	run bash -c "for f in /proc/$sup/fd/*; do readlink \$f; done | grep -v -e '^/sys/fs/cgroup/' \
		-e '^/run/hutch$' -e '^/run/hutch/' -e '^/dev/null$' -e '^pipe:' -e '^anon_inode:' \
		-e '^/proc/$sup/mountinfo$' \
		| grep -vxF -e '$IMAGE' -e '$HUTCH_ROOT' | grep -vF '$HUTCH_ROOT/'"
	[ -z "$output" ] || fail "unexpected fds: $output"
	hs stop "$N"
}

@test "named: help lists the flags and subcommands; a command after -- is never one" {
	run "$HUTCH" sandbox --help
	check_status 0
	[[ $output == *"--name"* && $output == *"--detach"* ]]
	[[ $output == *"hutch sandbox exec "* && $output == *"hutch sandbox ls"* ]]
	[[ $output == *"hutch sandbox stop "* && $output == *"hutch sandbox rm "* ]]
	run sb -- ls /
	check_status 0
	[[ $output == *workspace* ]]
	run hs ls --format json
	check_status 0
	jq -e 'type == "array"' <<<"$output"
}
