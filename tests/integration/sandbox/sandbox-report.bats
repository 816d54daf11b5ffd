#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
#
# The sandbox report as an orchestrator reads it: written however the run ends (a bad flag
# wherever --report stands, a busy lock, a missing image, a command that cannot run, the
# timeout, an OOM kill, hutch itself SIGKILLed: its watcher's), never an earlier run's left in place, replaced whole, and every one
# valid against docs/sandbox-report.schema.json (python3-jsonschema) with the kind of failure
# in `failure`, so that nothing parses the error text. The limits it hit are named apart from
# the failure: a child's OOM kill that the command outlives, or a fork bomb held by --pids,
# is no failure of the command's.

load ../helpers
load ../sandbox-helpers
bats_require_minimum_version 1.5.0

setup_file() {
	sb_images_setup
	sb_image_helpers memhog forkbomb
}

setup() {
	sb_setup
	LOCK=it-$TAG
	R=$TEST_DIR/r.json
}

@test "report: a run's id, stamps, image and no failure, valid against the schema" {
	run sb --report "$R" -- sh -c 'exit 3'
	check_status 3
	check_report "$R"
	local pid
	pid=$(tail -1 "$SB_PIDS")
	jq -e --arg id "sb-$pid" --arg img "$IMAGE" '.version == 3 and .id == $id
		and .failure == null and .exit_code == 3 and .lock_wait_ms == 0
		and .image == {name: $img, digest: null} and .runtime == "native"' "$R"
	# RFC 3339 in UTC, the end not before the start
	jq -e '(.started_at | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z$"))
		and .started_at <= .ended_at' "$R"
}

@test "report: a bad flag before --report or after it: bad_option, and a runtime" {
	run sb --bogus --report "$R" -- true
	check_status 125
	check_report "$R"
	jq -e '.failure == "bad_option" and .exit_code == 125 and .runtime == "native"
		and (.error | contains("--bogus"))' "$R"
	run sb --report-fd 3 --memory lots -- true 3>"$TEST_DIR/fd.json"
	check_status 125
	check_report "$TEST_DIR/fd.json"
	jq -e '.failure == "bad_option" and (.error | contains("--memory"))' "$TEST_DIR/fd.json"
	run sb --runtime runc --timeout nope --report="$R" -- true
	check_status 125
	check_report "$R"
	jq -e '.failure == "bad_option" and .runtime == "runc"' "$R"
}

@test "report: --systemd-cgroup (an OCI runtime option) is a bad option, with its report" {
	run timeout 30 "$HUTCH" --systemd-cgroup sandbox --image "$IMAGE" --report "$R" -- true
	check_status 125
	[ "${#lines[@]}" -eq 1 ]
	[[ $output == *"--systemd-cgroup: not supported by hutch sandbox"* ]]
	check_report "$R"
	jq -e '.failure == "bad_option" and (.error | contains("--systemd-cgroup"))' "$R"
}

@test "report: a busy lock is lock_busy; the wait for a lock is counted" {
	SB_PIDFILE=$TEST_DIR/holder.pid sb --lock "$LOCK" -- sleep 3 >/dev/null 2>&1 3>&- &
	local holder=$!
	track_pid $holder
	local tries=250
	while [ ! -s "$TEST_DIR/holder.pid" ] && [ $tries -gt 0 ]; do
		sleep 0.02
		tries=$((tries - 1))
	done
	wait_lock_holder "$LOCK" "$(cat "$TEST_DIR/holder.pid")"
	run sb --lock "$LOCK" --no-wait --report "$R" -- true
	check_status 125
	check_report "$R"
	jq -e '.failure == "lock_busy" and .runtime == "native" and .lock_wait_ms < 1000' "$R"
	run sb --lock "$LOCK" --report "$R" -- true
	check_status 0
	check_report "$R"
	jq -e '.failure == null and .lock_wait_ms >= 300' "$R"
	wait "$holder"
}

@test "report: a missing image is image_missing, with the name as given" {
	run sb_raw --image "$TEST_DIR/no-such-image" --report "$R" -- true
	check_status 125
	check_report "$R"
	jq -e --arg i "$TEST_DIR/no-such-image" '.failure == "image_missing"
		and .image.name == $i and (.error | contains("no-such-image"))' "$R"
}

@test "report: a command that cannot be run or found is exec, and the error names it" {
	run -127 sb --report "$R" -- no-such-command
	check_report "$R"
	jq -e '.failure == "exec" and .exit_code == 127 and (.error | contains("no-such-command"))' \
		"$R"
	run -126 sb --report "$R" -- /etc/passwd
	check_report "$R"
	jq -e '.failure == "exec" and .exit_code == 126 and (.error | contains("/etc/passwd"))' "$R"
	# Found and executable, but no format the kernel runs: only execve can tell.
	printf 'not a program\n' >"$IMAGE/bad" && chmod 755 "$IMAGE/bad"
	run -126 sb --report "$R" -- /bad
	rm -f "$IMAGE/bad"
	check_report "$R"
	jq -e '.failure == "exec" and .error == "exec /bad: Exec format error"' "$R"
	# A command's own 126 is its own: no failure, no error.
	run -126 sb --report "$R" -- sh -c 'exit 126'
	check_report "$R"
	jq -e '.failure == null and .error == null' "$R"
}

@test "report: the timeout is timeout, the command's own OOM kill oom" {
	run -124 sb --timeout 1 --grace 1 --report "$R" -- sleep 20
	check_report "$R"
	jq -e '.failure == "timeout" and .timed_out == true and .limits_hit == ["timeout"]' "$R"
	run -137 sb --memory 32m --report "$R" -- memhog 64
	check_report "$R"
	jq -e '.failure == "oom" and .oom_killed == true and .exit_code == 137 and .signal == 9
		and .oom_kills >= 1 and .limits_hit == ["memory"] and .limits_unknown == []' "$R"
}

@test "report: a child OOM-killed, the command goes on and exits 0: no failure, the kill counted" {
	run -0 sb --memory 32m --report "$R" -- sh -c 'memhog 64; echo "child $?"'
	[[ $output == *"child 137"* ]]
	check_report "$R"
	jq -e '.failure == null and .exit_code == 0 and .signal == null and .error == null
		and .oom_killed == true and .oom_kills >= 1 and .limits_hit == ["memory"]' "$R"
}

@test "report: a fork bomb held by --pids until the timeout names both limits" {
	run -124 sb --pids 24 --timeout 1 --grace 1 --report "$R" -- forkbomb
	[[ $output == *"forkbomb: a fork refused"* ]] # from inside: the limit refused it
	check_report "$R"
	jq -e '.failure == "timeout" and .timed_out == true and .exit_code == 124
		and .limits_hit == ["pids", "timeout"] and .pids_peak == 24
		and .oom_kills == 0 and .oom_killed == false' "$R"
	# Without the timeout's end: the command stops once refused, and it is no failure.
	run -2 sb --pids 24 --report "$R" -- sh -c 'while :; do sleep 30 & done'
	check_report "$R"
	jq -e '.failure == null and .exit_code == 2 and .limits_hit == ["pids"]' "$R"
}

@test "report: a clean run within its limits hits none and counts no OOM kill" {
	run -0 sb --memory 64m --pids 64 --timeout 30 --report "$R" -- sh -c 'echo hi'
	check_report "$R"
	jq -e '.failure == null and .oom_kills == 0 and .oom_killed == false
		and .limits_hit == [] and .limits_unknown == []' "$R"
	# Nothing ran: no figures, no limit named.
	run -125 sb --memory 64m --pids bogus --report "$R" -- true
	check_report "$R"
	jq -e '.failure == "bad_option" and .oom_kills == null and .limits_hit == []
		and .limits_unknown == []' "$R"
}

@test "report: a command asked to end (SIGTERM to hutch) is stopped; one that ends itself by a signal is not" {
	local pid
	SB_PIDFILE=$TEST_DIR/pid sb --report "$R" -- sh -c 'trap "echo bye; exit 0" TERM; echo up; while :; do sleep 0.1; done' >"$TEST_DIR/out" &
	local tries=200
	until grep -qx up "$TEST_DIR/out" 2>/dev/null || [ $tries -eq 0 ]; do
		sleep 0.05
		tries=$((tries - 1))
	done
	pid=$(cat "$TEST_DIR/pid")
	kill -TERM "$pid"
	wait $! || true
	check_report "$R"
	# the command chose its exit code, but not to end
	jq -e '.failure == "stopped" and .exit_code == 0 and .signal == null' "$R"
	run -143 sb --report "$R" -- sh -c 'kill -TERM $$'
	check_report "$R"
	jq -e '.failure == null and .signal == 15' "$R"
}

# wait_report FILE: waits (5 s at most) for FILE, then checks it against the schema.
wait_report() {
	local tries=250
	while [ ! -s "$1" ] && [ $tries -gt 0 ]; do
		sleep 0.02
		tries=$((tries - 1))
	done
	check_report "$1"
}

# watcher_gone FILE: no process (hutch's report watcher has hutch's command line) names FILE.
watcher_gone() {
	local tries=250
	while pgrep -f -- "--report[ -=].*$1" >/dev/null && [ $tries -gt 0 ]; do
		sleep 0.02
		tries=$((tries - 1))
	done
	! pgrep -af -- "--report[ -=].*$1" >&2
}

@test "report: a SIGKILLed hutch's report is written by its watcher: hutch_killed, 137, this run's id" {
	SB_PIDFILE=$TEST_DIR/victim.pid sb --report "$R" --report-fd 3 -- sh -c 'echo up; sleep 30' \
		>"$TEST_DIR/out" 2>&1 3>"$TEST_DIR/fd.json" &
	local victim=$! pid tries=250
	track_pid $victim
	while ! grep -q up "$TEST_DIR/out" && [ $tries -gt 0 ]; do
		sleep 0.02
		tries=$((tries - 1))
	done
	pid=$(cat "$TEST_DIR/victim.pid")
	kill -9 "$pid"
	wait "$victim" || true
	wait_report "$R"
	check_report "$TEST_DIR/fd.json" # the same, once, through the fd
	jq -e --arg id "sb-$pid" '.failure == "hutch_killed" and .exit_code == 137 and .id == $id
		and .runtime == "native" and (.error | contains("killed"))
		and .started_at <= .ended_at' "$R"
	cmp "$R" "$TEST_DIR/fd.json"
	watcher_gone "$R"
	# A run that ends as it chose has one report, its own: the watcher adds nothing.
	run sb --report "$R" --report-fd 3 -- true 3>"$TEST_DIR/fd.json"
	check_status 0
	watcher_gone "$R"
	check_report "$TEST_DIR/fd.json"
	jq -e '.failure == null and .exit_code == 0' "$R" "$TEST_DIR/fd.json"
}

@test "report: SIGKILL of hutch's whole process group spares the watcher, which writes the report" {
	setsid "$HUTCH" sandbox --image "$IMAGE" -e "HUTCH_IT_TAG=$TAG" --report "$R" \
		-- sh -c 'echo up; sleep 30' >"$TEST_DIR/out" 2>&1 &
	local victim=$! tries=250
	track_pid $victim
	while ! grep -q up "$TEST_DIR/out" && [ $tries -gt 0 ]; do
		sleep 0.02
		tries=$((tries - 1))
	done
	kill -9 -- "-$victim"
	wait "$victim" || true
	wait_report "$R"
	jq -e '.failure == "hutch_killed" and .exit_code == 137' "$R"
	watcher_gone "$R"
	run -0 sb -- true # its sweep takes what the killed hutch left
}

@test "report: a hutch SIGKILLed while it waits for --lock has the watcher's report too" {
	SB_PIDFILE=$TEST_DIR/holder.pid sb --lock "$LOCK" -- sleep 2 >/dev/null 2>&1 3>&- &
	local holder=$! victim tries=250
	track_pid $holder
	while [ ! -s "$TEST_DIR/holder.pid" ] && [ $tries -gt 0 ]; do
		sleep 0.02
		tries=$((tries - 1))
	done
	wait_lock_holder "$LOCK" "$(cat "$TEST_DIR/holder.pid")"
	SB_PIDFILE=$TEST_DIR/victim.pid sb --lock "$LOCK" --report "$R" -- true >/dev/null 2>&1 3>&- &
	victim=$!
	track_pid $victim
	tries=250
	while [ "$(lock_pids "$LOCK" | wc -l)" -lt 2 ] && [ $tries -gt 0 ]; do
		sleep 0.02
		tries=$((tries - 1))
	done
	kill -9 "$(cat "$TEST_DIR/victim.pid")"
	wait "$victim" || true
	wait_report "$R"
	jq -e '.failure == "hutch_killed"' "$R"
	wait "$holder"
}

@test "report: an earlier run's is removed at the start and replaced whole at the end" {
	echo stale >"$R"
	SB_PIDFILE=$TEST_DIR/victim.pid sb --report "$R" -- sleep 30 >/dev/null 2>&1 3>&- &
	local victim=$!
	track_pid $victim
	local tries=500
	while [ -e "$R" ] && [ $tries -gt 0 ]; do
		sleep 0.02
		tries=$((tries - 1))
	done
	[ ! -e "$R" ] # gone while the run goes on: a reader never takes it for this run's
	kill -9 "$(cat "$TEST_DIR/victim.pid")"
	wait "$victim" || true
	wait_report "$R" # after a SIGKILL, the watcher's: this run's, never the stale one
	jq -e '.failure == "hutch_killed"' "$R"
	echo stale >"$R"
	run sb --report "$R" -- true
	check_status 0
	check_report "$R"
	[ "$(stat -c %a "$R")" = 600 ]
	# written beside it and renamed over it: no temp file is left
	[ -z "$(find "$TEST_DIR" -maxdepth 1 -name '.r.json.*')" ]
}

@test "report: host mode has no image and its own runtime" {
	run sb_raw --isolation landlock --report "$R" -- true
	check_status 0
	check_report "$R"
	jq -e '.image == null and .runtime == "host" and .failure == null' "$R"
}
