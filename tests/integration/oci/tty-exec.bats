#!/usr/bin/env bats
# hutch exec and terminals: --tty with --console-socket (received by helpers/recvtty), the
# size from consoleSize, a foreground session relayed through hutch's own terminal (given
# by util-linux `script`), signals passed on to a foreground exec, and TIOCSTI: a process
# without a terminal of its own cannot type into ours.

load ../helpers

setup() {
	setup_bundle
	set_args sleep 1000
	RECVTTY=$(helper_bin recvtty)
	SOCK=$TEST_DIR/console.sock
	# The hutch command line for run_script's shell, which has no `hutch` function.
	H=$(printf '%q --root %q' "$HUTCH" "$HUTCH_ROOT")
}

teardown() {
	teardown_bundle
}

start_ctr() {
	run_bg run -d "$ID"
	check_status 0
}

# Runs a shell command line under `script`, which gives it a pty as stdin/stdout/stderr;
# sets status/output (without \r) like `run`.
run_script() {
	status=0
	output=$(timeout -k 5 "$HUTCH_CMD_TIMEOUT" script -qec "$1" /dev/null 2>&1 3>&-) || status=$?
	output=$(tr -d '\r' <<<"$output")
	mapfile -t lines <<<"$output"
	echo "script -> $status: $output" >&2
}


# wait_for_text FILE TEXT: polls FILE for up to 10s.
wait_for_text() {
	local i
	for i in $(seq 200); do
		grep -qF -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.05
	done
	echo "$1 never showed '$2': $(cat "$1")" >&2
	return 1
}

@test "exec -t -d --console-socket: the process gets the pty as stdio and ctty" {
	start_ctr
	start_recvtty
	run_bg exec -t -d --console-socket "$SOCK" "$ID" sh -c 'tty; test -t 0 && echo in-tty;
		test -t 1 && echo out-tty; test -t 2 && echo err-tty; echo ctty-ok > /dev/tty'
	check_status 0
	finish_recvtty
	[[ ${lines[0]} =~ ^/dev/pts/[0-9]+$ ]]
	[ "${lines[1]}" = in-tty ]
	[ "${lines[2]}" = out-tty ]
	[ "${lines[3]}" = err-tty ]
	[ "${lines[4]}" = ctty-ok ]
}

@test "exec -t: the container's /dev/console is left alone" {
	start_ctr
	local before after
	before=$(grep -c ' /dev/console ' "/proc/$(state_field "$ID" .pid)/mountinfo" || true)
	start_recvtty
	run_bg exec -t -d --console-socket "$SOCK" "$ID" true
	check_status 0
	finish_recvtty
	after=$(grep -c ' /dev/console ' "/proc/$(state_field "$ID" .pid)/mountinfo" || true)
	[ "$before" = "$after" ]
}

@test "exec -t: the bundle's consoleSize sets the terminal's size" {
	update_config '.process.consoleSize = {height: 33, width: 77}'
	start_ctr
	start_recvtty
	run_bg exec --tty --detach --console-socket "$SOCK" "$ID" stty size
	check_status 0
	finish_recvtty
	[ "$output" = "33 77" ]
}

@test "exec --process with a terminal, in conmon's order" {
	start_ctr
	jq '.process | .terminal = true | .consoleSize = {height: 21, width: 61}
		| .args = ["sh", "-c", "stty size; read l; echo got:$l"]' \
		"$BUNDLE/config.json" >"$TEST_DIR/process.json"
	start_recvtty "typed
"
	run_bg exec --pid-file "$TEST_DIR/p.pid" --process "$TEST_DIR/process.json" --detach \
		--tty --console-socket "$SOCK" "$ID"
	check_status 0
	[[ $(cat "$TEST_DIR/p.pid") =~ ^[0-9]+$ ]]
	finish_recvtty
	# recvtty types at once: the terminal may echo the input before stty's answer.
	[[ $output == *$'\n'"21 61"$'\n'* || $output == "21 61"$'\n'* ]]
	[[ $output == *got:typed* ]]
}

@test "exec -t --console-socket in the foreground: hutch waits and returns the exit code" {
	start_ctr
	start_recvtty
	run hutch exec -t --console-socket "$SOCK" "$ID" sh -c 'echo on-tty; exit 5' 3>&-
	check_status 5
	[ -z "$output" ]
	finish_recvtty
	[ "$output" = on-tty ]
}

@test "exec -t in the foreground relays hutch's terminal: type a command, read its output" {
	start_ctr
	status=0
	output=$(printf 'echo hi-$((40+2))\nexit 3\n' |
		timeout -k 5 "$HUTCH_CMD_TIMEOUT" script -qec "$H exec -t $ID sh" /dev/null 3>&-) ||
		status=$?
	echo "$output"
	check_status 3
	[[ $output == *hi-42* ]]
}

@test "exec -t in the foreground: the terminal size follows hutch's, and resizes" {
	start_ctr
	run_script "stty rows 40 cols 100; $H exec -t $ID sh -c 'stty size; sleep 1.5; stty size' \
		</dev/tty & sleep 0.7; stty rows 50 cols 120; wait"
	check_status 0
	[[ $output == *"40 100"*"50 120"* ]]
}

@test "exec -t in the foreground restores hutch's terminal settings" {
	start_ctr
	run_script "stty -g > $TEST_DIR/before; $H exec -t $ID true; stty -g > $TEST_DIR/after"
	check_status 0
	diff "$TEST_DIR/before" "$TEST_DIR/after"
}

@test "exec: SIGINT, SIGTERM, SIGUSR1 to a foreground exec reach the process" {
	start_ctr
	# A background job of a script has SIGINT ignored; give hutch the default back.
	env --default-signal=INT,QUIT "$HUTCH" --root "$HUTCH_ROOT" exec "$ID" sh -c '
		trap "echo got-INT" INT; trap "echo got-USR1" USR1
		trap "echo got-TERM; exit 7" TERM
		echo ready; while :; do sleep 0.1; done' >"$TEST_DIR/sig.out" 2>&1 </dev/null 3>&- &
	local bg=$! rc=0
	track_pid "$bg"
	wait_for_text "$TEST_DIR/sig.out" ready
	kill -INT "$bg"
	wait_for_text "$TEST_DIR/sig.out" got-INT
	kill -USR1 "$bg"
	wait_for_text "$TEST_DIR/sig.out" got-USR1
	kill -TERM "$bg"
	wait "$bg" || rc=$?
	cat "$TEST_DIR/sig.out"
	[ "$rc" -eq 7 ]
	grep -q got-TERM "$TEST_DIR/sig.out"
}

@test "exec without -t: the process cannot push input into hutch's terminal (TIOCSTI)" {
	install_static_helper tiocsti
	start_ctr
	# Control: in the same session as the terminal, TIOCSTI works on this host (the
	# terminal echoes the pushed '#').
	run_script "$BUNDLE/rootfs/bin/tiocsti"
	[[ $output == *"TIOCSTI: ok" ]] ||
		skip "TIOCSTI is refused here even for the terminal's own session: $output"
	run_script "$H exec $ID /bin/tiocsti"
	check_status 0
	[ "$output" = "TIOCSTI: EPERM" ]
}

@test "exec -t: the terminal belongs to the exec's user" {
	start_ctr
	start_recvtty
	run_bg exec -t -d --user 1000:1000 --console-socket "$SOCK" "$ID" sh -c 'stat -c "%u %g" $(tty)'
	check_status 0
	finish_recvtty
	[ "${lines[0]}" = "1000 5" ]
}
