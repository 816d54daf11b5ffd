#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
#
# --debug's account of time: every verb logs each of its phases once, with integer
# microseconds since the previous phase and since the start, as text on stderr or as JSON
# objects (--log-format json) on stderr or in --log's file; the container's init (in=child)
# and an exec's process (in=exec-child) log theirs too, against the same start. Without
# --debug nothing is logged. The log's fd reaches no container command, and a seccomp
# profile that kills on write silences the init rather than killing it. No time is asserted.

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
}

teardown() {
	local rc=0
	named_teardown || rc=1
	sb_teardown || rc=1
	teardown_bundle || rc=1
	return $rc
}

RUN_PARENT="parse spec check seccomp_plan lock cgroup channels trees memcg_plan clone idmaps
	configure converse finish start_state start_answer start wait delete_state cgroup_remove
	unmount state_remove total"
CHILD="go namespaces mounts pivot_root paths user prepare_exec memcg_join caps seccomp exec"
SB_PARENT="parse own_dirs sandbox_lock sweep resolve rootfs plan sandbox_spec spec check
	seccomp_plan lock cgroup channels trees memcg_plan clone idmaps configure converse finish
	record start_state start_answer start wait setid_clear net_release report unlock total"
# (the delete, after the unlock, is a helper's: it logs nothing, hutch has returned)

# A bundle at $BUNDLE running ARGS, with hutch's default seccomp profile (so the filter's
# phase is there), in the test's own cgroup.
seccomp_bundle() {
	make_bundle "$BUNDLE"
	cd "$BUNDLE" || return
	mkdir -p "$TEST_DIR/spec"
	(cd "$TEST_DIR/spec" && hutch spec --seccomp)
	update_config '.linux.seccomp = $s[0].linux.seccomp | .process.args = $a' \
		--slurpfile s "$TEST_DIR/spec/config.json" --argjson a "$(json_array "$@")"
}

# text_phases FILE: the phase lines of a text log as "IN PID NAME US TOTAL", checked whole.
text_phases() {
	grep 'phase=' "$1" | sed -E 's/^hutch: debug: phase=([a-z_]+) us=([0-9]+) total=([0-9]+) in=([a-z-]+) pid=([0-9]+)$/\4 \5 \1 \2 \3/' |
		awk 'NF != 5 { print "bad line: " $0 > "/dev/stderr"; exit 1 } { print }'
}

# json_phases FILE: the same from a JSON log, every line parsed by jq, us and total_us integers.
json_phases() {
	jq -e -c . "$1" >/dev/null
	jq -r 'select(.msg == "phase")
		| if (.us | type) == "number" and .us == (.us | floor) and .us >= 0
			and (.total_us | type) == "number" and .total_us == (.total_us | floor)
			and .level == "debug" and (.time | test("Z$"))
		  then "\(.in) \(.pid) \(.phase) \(.us) \(.total_us)"
		  else error("bad phase object: \(.)") end' "$1"
}

# check_phases PHASES IN "NAMES": the process IN logged exactly NAMES, each once, in that
# order, and its totals never go down.
check_phases() {
	local got want
	got=$(awk -v w="$2" '$1 == w { print $3 }' "$1" | tr '\n' ' ')
	want=$(echo $3)
	echo "# $2: $got" >&2
	[ "$got" = "$want " ] || {
		echo "expected: $want" >&2
		return 1
	}
	awk -v w="$2" '$1 == w { if ($5 < last) { print "total went down: " $0; bad = 1 }
		last = $5 } END { exit bad }' "$1" >&2
}

@test "debug: run logs every phase once, as text on stderr, the init's with in=child" {
	seccomp_bundle true
	hutch --debug run "$ID" >"$TEST_DIR/out" 2>"$TEST_DIR/err"
	[ ! -s "$TEST_DIR/out" ]
	text_phases "$TEST_DIR/err" >"$TEST_DIR/ph"
	check_phases "$TEST_DIR/ph" hutch "$RUN_PARENT"
	check_phases "$TEST_DIR/ph" child "$CHILD"
	# the child is measured against the same start: its last phase is before hutch's total
	[ "$(awk '$1 == "child" && $3 == "exec" { print $5 }' "$TEST_DIR/ph")" -le \
		"$(awk '$3 == "total" { print $5 }' "$TEST_DIR/ph")" ]
	assert_no_leftovers
}

@test "debug: run with --log-format json --log F: JSON objects in F, nothing on stderr" {
	seccomp_bundle true
	hutch --debug --log-format json --log "$TEST_DIR/log.json" run "$ID" \
		>"$TEST_DIR/out" 2>"$TEST_DIR/err"
	[ ! -s "$TEST_DIR/out" ] && [ ! -s "$TEST_DIR/err" ]
	json_phases "$TEST_DIR/log.json" >"$TEST_DIR/ph"
	check_phases "$TEST_DIR/ph" hutch "$RUN_PARENT"
	check_phases "$TEST_DIR/ph" child "$CHILD"
	# and as JSON on stderr without --log
	hutch --debug --log-format json run "$ID" 2>"$TEST_DIR/err2"
	json_phases "$TEST_DIR/err2" >"$TEST_DIR/ph2"
	check_phases "$TEST_DIR/ph2" hutch "$RUN_PARENT"
}

@test "debug: without --debug nothing is logged (run, sandbox)" {
	seccomp_bundle true
	hutch run "$ID" >"$TEST_DIR/out" 2>"$TEST_DIR/err"
	[ ! -s "$TEST_DIR/out" ] && [ ! -s "$TEST_DIR/err" ]
	hutch --log-format json --log "$TEST_DIR/log.json" run "$ID" 2>"$TEST_DIR/err"
	[ ! -s "$TEST_DIR/err" ] && [ ! -s "$TEST_DIR/log.json" ]
	sb --memory 64m -- true >"$TEST_DIR/out" 2>"$TEST_DIR/err"
	[ ! -s "$TEST_DIR/out" ] && [ ! -s "$TEST_DIR/err" ]
}

@test "debug: no fd of the log reaches the container's command (stderr's dup, --log's file)" {
	seccomp_bundle ls /proc/self/fd
	hutch --debug run "$ID" >"$TEST_DIR/out" 2>/dev/null
	[ "$(echo $(cat "$TEST_DIR/out"))" = "0 1 2 3" ] # ls's own directory fd is 3
	hutch --debug --log "$TEST_DIR/log" run "$ID" >"$TEST_DIR/out" 2>/dev/null
	[ "$(echo $(cat "$TEST_DIR/out"))" = "0 1 2 3" ]
	grep -q 'phase=exec .* in=child' "$TEST_DIR/log"
	# a terminal replaces the init's stdio: the lines still go to hutch's stderr, not to it
	update_config '.process.terminal = true | .process.args = ["true"]'
	hutch --debug run "$ID" >"$TEST_DIR/out" 2>"$TEST_DIR/err" </dev/null
	! grep phase= "$TEST_DIR/out"
	grep -q 'phase=exec .* in=child' "$TEST_DIR/err"
}

@test "debug: a profile that kills on write silences the init's lines after the filter" {
	seccomp_bundle true
	update_config '.linux.seccomp = {defaultAction: "SCMP_ACT_ALLOW",
		syscalls: [{names: ["write"], action: "SCMP_ACT_KILL_PROCESS"}]}'
	hutch --debug run "$ID" 2>"$TEST_DIR/err"
	text_phases "$TEST_DIR/err" >"$TEST_DIR/ph"
	check_phases "$TEST_DIR/ph" child "go namespaces mounts pivot_root paths user prepare_exec
		memcg_join caps"
	assert_no_leftovers
}

@test "debug: create, start, state, exec, kill and delete each log their phases" {
	seccomp_bundle sleep 100
	hutch --debug create "$ID" 2>"$TEST_DIR/create"
	text_phases "$TEST_DIR/create" >"$TEST_DIR/ph"
	check_phases "$TEST_DIR/ph" hutch "parse spec check seccomp_plan lock cgroup channels
		trees memcg_plan clone idmaps configure converse finish total"
	hutch --debug start "$ID" 2>"$TEST_DIR/start"
	text_phases "$TEST_DIR/start" >"$TEST_DIR/ph"
	check_phases "$TEST_DIR/ph" hutch "parse start_state start_answer start total"
	hutch --debug state "$ID" 2>"$TEST_DIR/state.err" >/dev/null
	text_phases "$TEST_DIR/state.err" >"$TEST_DIR/ph"
	check_phases "$TEST_DIR/ph" hutch "parse state total"
	hutch --debug --log-format json --log "$TEST_DIR/exec.json" exec "$ID" true
	json_phases "$TEST_DIR/exec.json" >"$TEST_DIR/ph"
	check_phases "$TEST_DIR/ph" hutch "parse prepare clone converse pid_file wait total"
	check_phases "$TEST_DIR/ph" exec-child "setup caps seccomp exec"
	hutch --debug kill "$ID" KILL 2>"$TEST_DIR/kill"
	text_phases "$TEST_DIR/kill" >"$TEST_DIR/ph"
	check_phases "$TEST_DIR/ph" hutch "parse state total"
	wait_for_state "$ID" stopped
	hutch --debug delete "$ID" 2>"$TEST_DIR/delete"
	text_phases "$TEST_DIR/delete" >"$TEST_DIR/ph"
	check_phases "$TEST_DIR/ph" hutch "parse delete_state cgroup_remove unmount state_remove
		total"
	assert_no_leftovers
}

@test "debug: sandbox logs its own phases and create's, start's, delete's and the init's" {
	mkdir "$TEST_DIR/ws"
	chown 1000:1000 "$TEST_DIR/ws"
	sb_debug --log-format json --log "$TEST_DIR/sb.json" -- --workspace \
		"$TEST_DIR/ws" --tmpfs /tmp:64m --memory 256m --cpus 1 --pids 128 --network none \
		-- true >"$TEST_DIR/out" 2>"$TEST_DIR/err"
	[ ! -s "$TEST_DIR/out" ] && [ ! -s "$TEST_DIR/err" ]
	json_phases "$TEST_DIR/sb.json" >"$TEST_DIR/ph"
	check_phases "$TEST_DIR/ph" hutch "$SB_PARENT"
	check_phases "$TEST_DIR/ph" child "$CHILD"
	# as text on stderr
	sb_debug -- -- true 2>"$TEST_DIR/err"
	text_phases "$TEST_DIR/err" >"$TEST_DIR/ph"
	check_phases "$TEST_DIR/ph" hutch "$SB_PARENT"
}

@test "debug: sandbox exec on a session logs the exec's phases" {
	run sb_named "$N" -- sleep 1000
	check_status 0
	timeout -k 5 "$HUTCH_CMD_TIMEOUT" "$HUTCH" --debug sandbox exec "$N" -- true 2>"$TEST_DIR/err"
	text_phases "$TEST_DIR/err" >"$TEST_DIR/ph"
	check_phases "$TEST_DIR/ph" hutch "lookup prepare clone converse pid_file wait setid_clear
		total"
	check_phases "$TEST_DIR/ph" exec-child "setup caps seccomp exec"
	hs stop "$N"
}

# sb_debug GLOBAL... -- SANDBOX-ARGS...: `hutch --debug GLOBAL... sandbox` on the full image,
# its pid recorded for teardown as sb_raw's are.
sb_debug() {
	local globals=()
	while [ "$1" != -- ]; do
		globals+=("$1")
		shift
	done
	shift
	timeout -k 5 "$HUTCH_CMD_TIMEOUT" sh -c 'echo $$ >>"$0"; exec "$@"' "$SB_PIDS" \
		"$HUTCH" --debug "${globals[@]}" sandbox --image "$IMAGE" -e "HUTCH_IT_TAG=$TAG" "$@"
}
