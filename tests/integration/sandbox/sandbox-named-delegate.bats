#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
#
# Named sessions under --runtime runc|crun|runsc: `hutch sandbox --name N --detach --runtime RT`
# and then `sandbox exec|ls|stop|rm`, which go through the runtime's own exec and kill in the
# supervisor's mount namespace (rt-sandbox-delegate-named.c). Each exec gets the session's
# user, capabilities, no_new_privs, seccomp and cgroup; files persist between execs; the exit
# status passes through; and nothing is left afterwards (state, name record, cgroups, runtime
# processes, scratch mounts). A runtime whose binary is absent is skipped. runsc can lose
# stdout through a pipe here, so output goes through files.

load ../helpers
load ../sandbox-helpers
load ../net-helpers
load ../named-helpers
bats_require_minimum_version 1.5.0


setup_file() {
	sb_images_setup
	sb_image_helpers localprobe
}

setup() {
	sb_setup
	N=nd-$TAG
	mknod -m 666 "$TEST_DIR/null" c 1 3
}

requires_runtime() {
	command -v "$1" >/dev/null || skip "$1 not installed"
}

# sb_named NAME ARGS...: named-helpers' own, its stdio through files (runsc can lose output
# through a pipe here), NAME checked on its stdout.
sb_named() {
	local name=$1
	shift
	sb --name "$name" --detach "$@" <"$TEST_DIR/null" >"$TEST_DIR/named.out" 3>&- || return
	[ "$(cat "$TEST_DIR/named.out")" = "$name" ]
	sup_pid "$name" >>"$SB_PIDS"
}

# ex ARGS...: `hutch sandbox ARGS...` (exec, ls, stop, rm) through files, bounded in time:
# status, output (stdout and stderr), lines (stdout).
ex() {
	status=0
	timeout -k 5 "$HUTCH_CMD_TIMEOUT" "$HUTCH" sandbox "$@" <"${EX_IN:-$TEST_DIR/null}" \
		>"$TEST_DIR/ex.out" 2>"$TEST_DIR/ex.err" 3>&- || status=$?
	output=$(cat "$TEST_DIR/ex.out" "$TEST_DIR/ex.err")
	mapfile -t lines <"$TEST_DIR/ex.out"
	echo "# sandbox $* -> $status:" >&2
	sed 's/^/#   /' <<<"$output" >&2
}

# Processes whose command line names container sb-PID (the runtime, runsc's gofer and sandbox).
runtime_processes() {
	pgrep -f -- "(^|[ =/])sb-$1( |$)" || true
}

# Nothing of session NAME, whose supervisor was PID, is left: name record, state dir,
# cgroups, runtime processes (and with them the runtime's state, in the supervisor's scratch
# tmpfs), and ls does not list it.
nothing_left() {
	local name=$1 pid=$2 d
	wait_gone "$pid" || fail "supervisor $pid still running"
	[ ! -e "$SB_NAMES/$name" ] || fail "name record $name left"
	[ ! -e "$SB_STATE/sb-$pid" ] || fail "state sb-$pid left"
	d=$(find /sys/fs/cgroup -name "hutch-sb-$pid" 2>/dev/null)
	[ -z "$d" ] || fail "cgroups left: $d"
	[ -z "$(runtime_processes "$pid")" ] || fail "runtime processes left"
	! grep -qF " $SB_SCRATCH" /proc/self/mountinfo || fail "scratch mounts"
	ex ls --format json
	check_status 0
	jq -e --arg n "$name" 'all(.[]; .name != $n)' <<<"$output" >/dev/null ||
		fail "ls still lists $name"
}

teardown() {
	local rc=0 f p
	# (none before setup made the test's root and tag: a test skipped in setup; an empty
	# SB_NAMES or TAG would make this glob the host's /)
	for f in ${SB_NAMES:+${TAG:+"$SB_NAMES"/*"$TAG"*}}; do
		[ -e "$f" ] || continue
		echo "LEAK: name record $f left" >&2
		rc=1
		"$HUTCH" sandbox rm -f "${f##*/}" >/dev/null 2>&1
		rm -f "$f"
	done
	if [ -e "${SB_PIDS:-}" ]; then
		for p in $(sort -u "$SB_PIDS"); do
			if [ -n "$(runtime_processes "$p")" ]; then
				echo "LEAK: runtime processes of sb-$p" >&2
				kill -9 $(runtime_processes "$p") 2>/dev/null
				rc=1
			fi
		done
	fi
	sb_teardown || rc=1
	if [ -n "${HOSTNS:-}" ]; then
		net_teardown || rc=1
	else
		teardown_bundle || rc=1
	fi
	return $rc
}

# One session's life under runtime RT.
session() {
	local rt=$1 sup init ep m row pids=(--pids 16)
	requires_runtime "$rt"
	m=$(mark)
	# (runsc: the limit counts the sentry's host threads, which 16 cannot start)
	[ "$rt" != runsc ] || pids=()
	sb_named "$N" --runtime "$rt" "${pids[@]}" --report "$TEST_DIR/r.json" -- sleep 1000
	sup=$(sup_pid "$N")
	# the session's user, capabilities, no_new_privs and seccomp
	ex exec "$N" -- sh -c 'id -u; id -g; grep -E "^(CapEff|NoNewPrivs|Seccomp):" /proc/self/status'
	check_status 0
	[ "${lines[0]}" = 1000 ]
	[ "${lines[1]}" = 1000 ]
	grep -Eqx $'CapEff:\t0+' "$TEST_DIR/ex.out"
	if [ "$rt" = runsc ]; then
		# gVisor shows no NoNewPrivs line, and applies the OCI profile (--oci-seccomp) to
		# the container's first process only: an exec'd one shows 0 (docs/sandbox-named.md)
		grep -qx $'Seccomp:\t0' "$TEST_DIR/ex.out"
		ex exec "$N" -- grep -x $'Seccomp:\t2' /proc/1/status
		check_status 0
	else
		grep -qx $'NoNewPrivs:\t1' "$TEST_DIR/ex.out"
		grep -qx $'Seccomp:\t2' "$TEST_DIR/ex.out"
	fi
	# a file written by one exec is read by the next
	ex exec "$N" -- sh -c 'echo "kept $0" >/tmp/kept' "$rt"
	check_status 0
	ex exec "$N" -- cat /tmp/kept
	check_status 0
	[ "$output" = "kept $rt" ]
	# a setid bit: refused by the seccomp profile, which runsc gives no exec'd command (and
	# the report says so: setid_bits_blocked false)
	ex exec "$N" -- sh -c 'touch /tmp/s; chmod 4755 /tmp/s; stat -c %a /tmp/s'
	if [ "$rt" = runsc ]; then
		[ "${lines[0]}" = 4755 ]
	else
		[ "${lines[0]}" = 644 ]
	fi
	# stdin, and the exit status passes through; 127 and 126 as the native exec's
	echo hello >"$TEST_DIR/in"
	EX_IN=$TEST_DIR/in ex exec "$N" -- sh -c 'read l; echo "got $l"; exit 3'
	check_status 3
	[ "${lines[0]}" = "got hello" ]
	ex exec "$N" -- /no/such
	check_status 127
	ex exec "$N" -- /etc/passwd
	check_status 126
	ex exec -e HUTCH_IT_TAG=over --cwd /tmp "$N" -- sh -c 'echo "$HUTCH_IT_TAG $(pwd)"'
	check_status 0
	[ "$output" = "over /tmp" ]
	# ls
	ex ls
	check_status 0
	row=$(grep "^$N " "$TEST_DIR/ex.out")
	[[ $row == *" sb-$sup "*" running "*" $IMAGE" ]]
	ex ls --format json
	init=$(jq -r --arg n "$N" '.[] | select(.name == $n and .status == "running") | .pid' \
		"$TEST_DIR/ex.out")
	[ "$init" -gt 0 ]
	# the same cgroup as the session's command (runsc: its sandbox's, which runs them all)
	"$HUTCH" sandbox exec "$N" -- sleep "$m" <"$TEST_DIR/null" >/dev/null 2>&1 3>&- &
	track_pid $!
	if [ "$rt" = runsc ]; then
		grep -q "hutch-sb-$sup/c\$" "/proc/$init/cgroup"
	else
		wait_process_like "^sleep $m\$"
		ep=$(pgrep -xf "sleep $m")
		diff "/proc/$init/cgroup" "/proc/$ep/cgroup"
		grep -q "hutch-sb-$sup/c\$" "/proc/$ep/cgroup"
		# the pids limit holds for execs too
		ex exec "$N" -- sh -c 'i=0; while [ $i -lt 30 ]; do sleep 30 >/dev/null 2>&1 & i=$((i+1)); done; echo spawned'
		grep -q "can't fork" "$TEST_DIR/ex.err"
	fi
	# stop: SIGTERM to the command (runc, crun: PID 1 of the container, deaf to it, so KILL
	# after --time; gVisor's PID 1 takes it), and the report of the session's life
	ex stop --time 1 "$N"
	check_status 0
	no_process_like "^sleep $m\$"
	nothing_left "$N" "$sup"
	check_report "$TEST_DIR/r.json"
	local code=137
	[ "$rt" != runsc ] || code=143
	jq -e --arg rt "$rt" --argjson c "$code" '.runtime == $rt and .exit_code == $c
		and .failure == "stopped" and .error == null' "$TEST_DIR/r.json"
	jq -e --arg rt "$rt" '.isolation.user.writes_as.setid_bits_blocked == ($rt != "runsc")' \
		"$TEST_DIR/r.json"
	# what runsc does not give an exec'd process is in weakened
	if [ "$rt" = runsc ]; then
		jq -e '.isolation.weakened | any(startswith("sandbox exec: runsc applies the seccomp"))' "$TEST_DIR/r.json"
	else
		jq -e '.isolation.weakened | all(startswith("sandbox exec") | not)' "$TEST_DIR/r.json"
	fi
	ex exec "$N" -- true
	check_status 125
	[[ $output == *"sandbox $N: no such sandbox"* ]]
}

# rm needs -f while it runs; rm -f kills it at once; a tty for exec -t (runsc: refused).
session_rm() {
	local rt=$1 sup t0
	requires_runtime "$rt"
	sb_named "$N" --runtime "$rt" --grace 20 -- sh -c 'trap "" TERM; sleep 1000'
	sup=$(sup_pid "$N")
	if [ "$rt" = runsc ]; then
		ex exec -t "$N" -- true
		check_status 125
		[[ $output == *"sandbox exec -t: not supported under runsc"* ]]
	else
		ex exec -t "$N" -- sh -c '[ -t 0 ] && [ -t 1 ] && tty; exit 4'
		check_status 4
		[[ $output == /dev/pts/* ]]
	fi
	ex rm "$N"
	check_status 125
	[[ $output == *"sandbox $N: is running"* ]]
	t0=$(now_ms)
	ex rm -f "$N"
	check_status 0
	[ $(($(now_ms) - t0)) -lt 5000 ]
	nothing_left "$N" "$sup"
}

# SIGKILL of a `sandbox exec`'s whole process group leaves no process of its command (its
# watcher, in a session of its own, kills it);
# SIGKILL of the supervisor ends the container (its keeper); the next hutch removes the rest.
session_sigkill() {
	local rt=$1 sup m ep tries=100
	requires_runtime "$rt"
	m=$(mark)
	sb_named "$N" --runtime "$rt" -- sleep 1000
	sup=$(sup_pid "$N")
	setsid "$HUTCH" sandbox exec "$N" -- sleep "$m" <"$TEST_DIR/null" >/dev/null 2>&1 3>&- &
	ep=$!
	track_pid $ep
	until ex exec "$N" -- ps && grep -q "sleep $m" "$TEST_DIR/ex.out"; do
		[ $tries -gt 0 ] || fail "the exec'd sleep never ran"
		sleep 0.05
		tries=$((tries - 1))
	done
	kill -9 -- "-$ep" # the group: hutch and whatever stayed in it
	tries=100
	while ex exec "$N" -- ps && grep -q "sleep $m" "$TEST_DIR/ex.out"; do
		[ $tries -gt 0 ] || fail "the exec'd sleep outlived its sandbox exec"
		sleep 0.05
		tries=$((tries - 1))
	done
	check_status 0
	kill -9 "$sup"
	wait_gone "$sup"
	local until=$(($(now_ms) + 5000))
	while [ -n "$(runtime_processes "$sup")" ] && [ "$(now_ms)" -lt $until ]; do
		sleep 0.1
	done
	ex exec "$N" -- true
	check_status 125
	sb -- true </dev/null
	nothing_left "$N" "$sup"
}

# The timeout ends the session and what was exec'd into it (137: runsc's too, now that the
# timeout's SIGTERM goes through its kill to the command, which ends before its sandbox); the
# report says timeout.
session_timeout() {
	local rt=$1 sup m R=$TEST_DIR/r.json
	requires_runtime "$rt"
	m=$(mark)
	sb_named "$N" --runtime "$rt" --timeout 2 --grace 1 --report "$R" -- sleep 1000
	sup=$(sup_pid "$N")
	ex exec "$N" -- sleep "$m"
	check_status 137
	no_process_like "^sleep $m\$"
	nothing_left "$N" "$sup"
	check_report "$R"
	jq -e '.failure == "timeout" and .exit_code == 124 and .timed_out and .wall_ms >= 2000' "$R"
}

@test "named delegate runc: a session's execs, ls, stop; nothing left" {
	session runc
}

@test "named delegate crun: a session's execs, ls, stop; nothing left" {
	session crun
}

@test "named delegate runsc: a session's execs, ls, stop; nothing left" {
	session runsc
}

@test "named delegate runc: exec -t, rm and rm -f" {
	session_rm runc
}

@test "named delegate crun: exec -t, rm and rm -f" {
	session_rm crun
}

@test "named delegate runsc: exec -t refused, rm and rm -f" {
	session_rm runsc
}

@test "named delegate runc: SIGKILL of an exec or of the supervisor leaves nothing" {
	session_sigkill runc
}

@test "named delegate crun: SIGKILL of an exec or of the supervisor leaves nothing" {
	session_sigkill crun
}

@test "named delegate runsc: SIGKILL of an exec or of the supervisor leaves nothing" {
	session_sigkill runsc
}

@test "named delegate runc: the timeout ends the session and its execs" {
	session_timeout runc
}

@test "named delegate crun: the timeout ends the session and its execs" {
	session_timeout crun
}

@test "named delegate runsc: the timeout ends the session and its execs" {
	session_timeout runsc
}

# --network bridge (in a test netns, as bridge.bats runs it): an exec has the session's eth0,
# address and route (crun, runsc); runc is refused at the start, with the reason.
@test "named delegate crun, runsc: --network bridge, an exec has the session's network" {
	local rt sup
	net_setup
	for rt in crun runsc; do
		command -v "$rt" >/dev/null || continue
		nsenter --net="/run/netns/$HOSTNS" "$HUTCH" sandbox --image "$IMAGE" --name "$N" \
			--detach --runtime "$rt" --network bridge -- sleep 1000 \
			<"$TEST_DIR/null" >"$TEST_DIR/named.out" 3>&-
		sup=$(sup_pid "$N")
		echo "$sup" >>"$SB_PIDS"
		ex exec "$N" -- sh -c 'ip -o -4 addr show eth0; ip route'
		check_status 0
		[[ $output == *"inet 10.89.0."*"/24"* ]]
		[[ $output == *"default via 10.89.0.1 dev eth0"* ]]
		ex rm -f "$N"
		check_status 0
		nothing_left "$N" "$sup"
	done
	requires_runtime runc
	sb_fails "--name with --runtime runc --network bridge: not supported" --name "$N" \
		--detach --runtime runc --network bridge -- true
}

# A killed supervisor's pid taken by another process while its owner lock is held (as a sweep
# holds it for a moment): exec, stop and rm never enter that process's mount namespace (whose
# ld.so the runtime's exec would load as host root); they see the start time differ.
@test "named delegate: a killed supervisor's pid, taken by another, is never entered" {
	requires_runtime crun
	local sup fd
	sb_named "$N" --runtime crun -- sleep 1000
	sup=$(sup_pid "$N")
	kill -9 "$sup"
	wait_gone "$sup"
	exec {fd}<"$SB_STATE/sb-$sup/owner.lock" # held by this shell: flock's fd is ours
	flock -x -w 10 "$fd"
	# the taker has a mount namespace of its own, as anyone's could
	take_pid "$sup" unshare -m --propagation private sleep 60 || {
		exec {fd}<&-
		skip "pid $sup was not ours to take (a busy host)"
	}
	ex exec "$N" -- true
	kill "$TAKEN"
	wait "$TAKEN" 2>/dev/null || true
	exec {fd}<&-
	check_status 125
	[[ $output == *"sandbox $N: not running"* ]]
	[[ $output != *crun* ]] # the runtime never ran
	run -0 sb -- true       # the sweep takes the rest
	nothing_left "$N" "$sup"
}

# --network host --deny-host-loopback: the connect filters are attached to the session's
# cgroup2 cgroup, which an exec's command must be in too (crun's exec left it in the
# hierarchy's root, where it reached the host's loopback).
session_loopback() {
	local rt=$1 sup
	requires_runtime "$rt"
	net_setup
	NS=host serve 127.0.0.1:8081
	wait_listen "$HOSTNS" 127.0.0.1:8081
	nsenter --net="/run/netns/$HOSTNS" "$HUTCH" sandbox --image "$IMAGE" --runtime "$rt" \
		--name "$N" --detach --network host --deny-host-loopback \
		-- sh -c 'localprobe tcp 8081 >/tmp/first 2>&1; sleep 1000' \
		<"$TEST_DIR/null" >"$TEST_DIR/named.out" 3>&-
	sup=$(sup_pid "$N")
	echo "$sup" >>"$SB_PIDS"
	ex exec "$N" -- sh -c 'while [ ! -s /tmp/first ]; do sleep 0.1; done; cat /tmp/first'
	check_status 0
	[ "$output" = "tcp: Operation not permitted" ]
	# (in the test's host, as the session: with --network host, runc's and crun's exec runs
	# the command in the caller's network namespace)
	run -0 timeout -k 5 "$HUTCH_CMD_TIMEOUT" nsenter --net="/run/netns/$HOSTNS" "$HUTCH" \
		sandbox exec "$N" -- localprobe tcp 8081 <"$TEST_DIR/null" 3>&-
	[ "$output" = "tcp: Operation not permitted" ]
	ex rm -f "$N"
	check_status 0
	nothing_left "$N" "$sup"
}

@test "named delegate runc: --deny-host-loopback holds for an exec's command" {
	session_loopback runc
}

@test "named delegate crun: --deny-host-loopback holds for an exec's command" {
	session_loopback crun
}

@test "named delegate runsc: --deny-host-loopback holds for an exec's command" {
	session_loopback runsc
}

# SIGKILL of an exec's watcher: the exec carries on, its status passes through (its "done"
# byte to the dead watcher raised SIGPIPE: 141).
@test "named delegate runc: SIGKILL of an exec's watcher: the exec's status passes through" {
	local sup bg hp w tries=500
	requires_runtime runc
	sb_named "$N" --runtime runc -- sleep 1000
	sup=$(sup_pid "$N")
	(
		st=0
		"$HUTCH" sandbox exec "$N" -- sh -c 'echo started; sleep 2; exit 7' \
			<"$TEST_DIR/null" >"$TEST_DIR/x.out" 2>&1 3>&- &
		echo $! >"$TEST_DIR/x.pid"
		wait $! || st=$?
		echo "$st" >"$TEST_DIR/x.status"
	) 3>&- &
	bg=$!
	track_pid "$bg"
	until grep -q started "$TEST_DIR/x.out" 2>/dev/null; do
		[ $tries -gt 0 ] || false
		sleep 0.02
		tries=$((tries - 1))
	done
	hp=$(cat "$TEST_DIR/x.pid")
	w=$(ps -o pid=,sid= --ppid "$hp" | awk '$1 == $2 { print $1 }') # setsid: its own session
	[ -n "$w" ]
	kill -9 $w
	wait "$bg"
	cat "$TEST_DIR/x.out" >&2
	[ "$(cat "$TEST_DIR/x.status")" = 7 ]
	ex rm -f "$N"
	check_status 0
	nothing_left "$N" "$sup"
}
