#!/usr/bin/env bats
# terminal: true: the pty master goes over --console-socket (received by helpers/recvtty),
# the process gets the slave as stdio and controlling terminal, with the configured size.

load ../helpers

setup() {
	setup_bundle
	RECVTTY=$(helper_bin recvtty)
	SOCK=$TEST_DIR/console.sock
	update_config '.process.terminal = true'
}

@test "tty: create --console-socket gives the process a terminal as stdio and ctty" {
	set_args sh -c 'tty; test -t 0 && echo in-tty; test -t 1 && echo out-tty;
		test -t 2 && echo err-tty; echo ctty-ok > /dev/tty'
	start_recvtty
	run_bg create --console-socket "$SOCK" "$ID"
	check_status 0
	hutch start "$ID"
	wait_for_state "$ID" stopped
	finish_recvtty
	[[ ${lines[0]} =~ ^/dev/pts/[0-9]+$ ]]
	[ "${lines[1]}" = in-tty ]
	[ "${lines[2]}" = out-tty ]
	[ "${lines[3]}" = err-tty ]
	[ "${lines[4]}" = ctty-ok ]
}

@test "tty: run -d --console-socket" {
	set_args sh -c 'test -t 0 && echo in-tty'
	start_recvtty
	run_bg run -d --console-socket "$SOCK" "$ID"
	check_status 0
	wait_for_state "$ID" stopped
	finish_recvtty
	[ "$output" = in-tty ]
}

@test "tty: consoleSize sets the terminal's size" {
	update_config '.process.consoleSize = {height: 25, width: 93}'
	set_args stty size
	start_recvtty
	run_bg run -d --console-socket "$SOCK" "$ID"
	check_status 0
	wait_for_state "$ID" stopped
	finish_recvtty
	[ "$output" = "25 93" ]
}

@test "tty: input typed into the terminal reaches the process" {
	set_args sh -c 'read line; echo "got:$line"'
	start_recvtty "hello
"
	run_bg run -d --console-socket "$SOCK" "$ID"
	check_status 0
	wait_for_state "$ID" stopped
	finish_recvtty
	[[ $output == *got:hello* ]]
}

@test "tty: /dev/console is the container's terminal" {
	set_args sh -c 'stat -c "%t" /dev/console; stat -c "%t" $(tty)'
	start_recvtty
	run_bg run -d --console-socket "$SOCK" "$ID"
	check_status 0
	wait_for_state "$ID" stopped
	finish_recvtty
	[ "${lines[0]}" = 88 ] # major 136: a /dev/pts slave
	[ "${lines[0]}" = "${lines[1]}" ]
}

@test "tty: terminal without --console-socket fails for create and run -d, leaving nothing" {
	run_bg create "$ID"
	[ "$status" -eq 1 ]
	[[ $output == *console-socket* ]]
	assert_no_leftovers
	run_bg run -d "$ID"
	[ "$status" -eq 1 ]
	[[ $output == *console-socket* ]]
	assert_no_leftovers
}

@test "tty: a console socket nobody listens on fails create, leaving nothing" {
	run_bg create --console-socket "$TEST_DIR/nobody.sock" "$ID"
	[ "$status" -eq 1 ]
	[[ $output == *nobody.sock* ]]
	assert_no_leftovers
}

@test "tty: the terminal belongs to the process's user (group: devpts's tty group), in a user namespace too" {
	update_config '.process.user = {uid: 1000, gid: 1000}'
	set_args sh -c 'stat -c "%u %g" $(tty); echo reopened > $(tty)'
	start_recvtty
	run_bg run -d --console-socket "$SOCK" "$ID"
	check_status 0
	wait_for_state "$ID" stopped
	finish_recvtty
	[ "${lines[0]}" = "1000 5" ]
	[ "${lines[1]}" = reopened ]
	hutch delete "$ID"
	update_config '.linux.namespaces += [{type: "user"}]
		| .linux.uidMappings = [{containerID: 0, hostID: 100000, size: 65536}]
		| .linux.gidMappings = [{containerID: 0, hostID: 100000, size: 65536}]'
	rm "$SOCK" # the first recvtty's
	start_recvtty
	run_bg run -d --console-socket "$SOCK" "$ID"
	check_status 0
	wait_for_state "$ID" stopped
	finish_recvtty
	[ "${lines[0]}" = "1000 5" ]
}
