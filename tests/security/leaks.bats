#!/usr/bin/env bats
# Things that piled up or hung: --lock files left in hutch's state dir by every run, and a
# container created in a frozen cgroup, whose create then waited forever. Another root runs
# sandboxes all along (other_root_start): the lock files counted are this root's.

load ../integration/helpers
load ../integration/sandbox-helpers

setup_file() {
	other_root_start
}

teardown_file() {
	other_root_stop
}

setup() {
	setup_bundle
}

teardown() {
	teardown_bundle
}

@test "leaks: --lock leaves no lock file behind, and a waiter gets the lock after its holder" {
	local name=$TAG-lock
	run hutch sandbox --lock "$name" --image "$BUNDLE/rootfs" -- true
	check_status 0
	[ ! -e "$SB_LOCKS/$name" ]
	# A holder and a waiter: the waiter runs after the holder, and the file goes after both.
	hutch sandbox --lock "$name" --image "$BUNDLE/rootfs" -- sleep 1 >"$TEST_DIR/a" 2>&1 3>&- &
	local a=$!
	track_pid $a
	for _ in $(seq 100); do [ -e "$SB_LOCKS/$name" ] && break; sleep 0.02; done
	run hutch sandbox --lock "$name" --lock-timeout 20 --image "$BUNDLE/rootfs" -- sh -c 'echo second'
	wait $a
	check_status 0
	[ "$output" = second ]
	[ ! -e "$SB_LOCKS/$name" ]
	# A killed holder leaves its file; the next holder takes the lock and removes it.
	HUTCH_TEST_KILL_AT=sandbox:locked "$HUTCH" sandbox --lock "$name" --image "$BUNDLE/rootfs" \
		-- true || true
	[ -e "$SB_LOCKS/$name" ]
	run hutch sandbox --lock "$name" --image "$BUNDLE/rootfs" -- true
	check_status 0
	[ ! -e "$SB_LOCKS/$name" ]
}

@test "leaks: a container in a frozen cgroup is refused at create instead of hanging" {
	local d
	d=$(own_cgroup_dir freezer)
	[ -n "$d" ] || skip "no v1 freezer hierarchy here (the VM lane covers v2)"
	mkdir "$d/$TAG-frozen"
	echo FROZEN >"$d/$TAG-frozen/freezer.state"
	update_config '.linux.cgroupsPath = $c' --arg c "$TAG-frozen"
	HUTCH_CMD_TIMEOUT=15 run_bg run -d "$ID"
	echo THAWED >"$d/$TAG-frozen/freezer.state"
	[ "$status" -eq 1 ]
	[[ $output == *"is frozen: thaw it first"* ]]
	# Nothing of the container's: the frozen cgroup was the caller's, and stays.
	[ -z "$(ls -A "$HUTCH_ROOT")" ]
	rmdir "$d/$TAG-frozen"
}

# runc, crun and runsc make the sandbox's cgroup (hutch-sb-PID/c) in every hierarchy they know,
# and runsc also in the plain directories of /sys/fs/cgroup where a controller is not mounted:
# nothing of it is left, mounted or plain. (sandbox-delegate.bats has the plain case forced.)
@test "leaks: a delegated runtime leaves no cgroup directory, mounted or plain" {
	local rt p left ran=0
	for rt in runc crun runsc; do
		command -v "$rt" >/dev/null || continue
		ran=1
		sh -c 'echo $$ >"$0"; exec "$@"' "$TEST_DIR/pid" "$HUTCH" sandbox --runtime "$rt" \
			--image "$BUNDLE/rootfs" -- true </dev/null
		p=$(cat "$TEST_DIR/pid")
		left=$(own_sb_cgroup_dirs | while read -r d; do
			find "$d" -mindepth 1 -maxdepth 1 -name "hutch-sb-$p"
		done)
		left+=$(find /sys/fs/cgroup -name "hutch-sb-$p" 2>/dev/null)
		echo "# $rt ($p) left: $left" >&3
		[ -z "$left" ]
	done
	[ $ran = 1 ] || skip "no runc, crun or runsc"
}
