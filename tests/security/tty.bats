#!/usr/bin/env bats
# exec's terminal: the pty comes from the container's /dev/pts/ptmx, in a /dev that the
# container's root may have rearranged. hutch verifies /dev/pts is a devpts reached without
# symlinks and ptmx its own 5:2 node before it opens anything (0.1.0 opened it first).

load ../integration/helpers

setup() {
	setup_bundle
	RECVTTY=$(helper_bin recvtty)
	SOCK=$TEST_DIR/console.sock
	# Root with CAP_SYS_ADMIN and CAP_MKNOD: enough to replace /dev/pts.
	update_config '.process.capabilities.bounding += ["CAP_SYS_ADMIN", "CAP_MKNOD"]
		| .process.capabilities.effective += ["CAP_SYS_ADMIN", "CAP_MKNOD"]
		| .process.capabilities.permitted += ["CAP_SYS_ADMIN", "CAP_MKNOD"]'
	add_shared_mount
}

teardown() {
	teardown_bundle
}

# The container rearranges /dev/pts (SETUP), leaving a FIFO where ptmx was, then a reader
# waits on it: the reader ends only if something opened the FIFO for writing.
replace_ptmx() {
	set_args sh -c "umount -l /dev/pts && $1 &&
		echo replaced >/shared/ready; cat /dev/pts/ptmx; echo opened >/shared/opened;
		sleep 100"
	run_bg run -d "$ID"
	check_status 0
	for _ in $(seq 100); do [ -e "$TEST_DIR/shared/ready" ] && break; sleep 0.05; done
	[ -e "$TEST_DIR/shared/ready" ]
}

exec_tty() {
	start_recvtty
	run hutch exec -t -d --console-socket "$SOCK" "$ID" true
	echo "exec -t: $status: $output"
}

@test "tty: exec -t refuses a /dev/pts that is not a devpts, without opening its ptmx" {
	replace_ptmx 'mount -t tmpfs tmpfs /dev/pts && mkfifo /dev/pts/ptmx'
	exec_tty
	[ "$status" -ne 0 ]
	[[ $output == *"/dev/pts is not a devpts"* ]]
	sleep 0.2
	[ ! -e "$TEST_DIR/shared/opened" ]
}

@test "tty: exec -t refuses a devpts whose ptmx has something bound over it" {
	replace_ptmx 'mount -t devpts -o newinstance,ptmxmode=0666 devpts /dev/pts &&
		mkfifo /dev/fifo && mount --bind /dev/fifo /dev/pts/ptmx'
	exec_tty
	[ "$status" -ne 0 ]
	[[ $output == *"open /dev/pts/ptmx"* ]]
	sleep 0.2
	[ ! -e "$TEST_DIR/shared/opened" ]
}

@test "tty: exec -t still works on the container's own devpts" {
	set_args sleep 100
	run_bg run -d "$ID"
	check_status 0
	exec_tty
	check_status 0
}
