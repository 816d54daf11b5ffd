#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
#
# One root's sandbox against another root's state. A root's next sweep deletes what its dead
# sandboxes left, by their state: a sandbox that could write another root's .sandbox/state
# (a workspace, rw bind or --allow-rw holding it) planted sb-N with a host process's pid and
# a poststop hook, and that root's next `hutch sandbox` killed the process and ran the hook
# as root with every capability. Every root hutch used is one of its own directories now
# (the run dir's registry of roots), and the sweep trusts nothing a state names: no hook, no
# pid outside the sandbox's own cgroup, no cgroup but BASE/hutch-sb-N.

load ../integration/helpers
load ../integration/sandbox-helpers
bats_require_minimum_version 1.5.0

setup_file() {
	sb_images_setup
}

setup() {
	sb_setup
	OTHER=$TEST_DIR/other
	B=$OTHER/B
	mkdir -p "$OTHER"
	chmod 755 "$OTHER"
	# Root B exists: a sandbox of its own made it (and registered it).
	HUTCH_ROOT=$B sb -- true
	B=$(realpath "$B")
}

# teardown and teardown_file: sandbox-helpers'.

# victim: a host process (setsid sleep), $VICTIM its pid, $VICTIM_START its start time.
victim() {
	setsid sleep 1000 </dev/null >/dev/null 2>&1 &
	VICTIM=$!
	track_pid "$VICTIM"
	sleep 0.1
	VICTIM_START=$(awk '{print $22}' "/proc/$VICTIM/stat")
}

# plant DIR: in DIR (a root's .sandbox/state), sb-999999 as a sandbox would forge it: running,
# its pid the victim, a poststop hook that writes $TEST_DIR/PWNED.
plant() {
	local s=$1/sb-999999
	mkdir -p "$s"
	cat >"$s/state.json" <<-J
		{"ociVersion":"1.2.0","id":"sb-999999","status":"running","pid":$VICTIM,"bundle":"$s","rootfs":"/","created":"2026-12-07T06:00:13Z","owner":"","annotations":{},"hutch_start_time":$VICTIM_START,"hutch_rootfs_mnt_id":0,"hutch_poststart":false,"hutch_poststop":true,"hutch_creating":false,"hutch_own_config":true}
	J
	cat >"$s/config.json" <<-J
		{"ociVersion":"1.2.0","root":{"path":"/"},"process":{"args":["/bin/true"],"cwd":"/"},"hooks":{"poststop":[{"path":"/bin/sh","args":["sh","-c","id > $TEST_DIR/PWNED"]}]}}
	J
}

@test "roots: a host-mode (landlock) sandbox given --allow-rw over another root cannot write that root; the rest of the tree it can" {
	victim
	run sb_raw --isolation landlock --allow-rw "$OTHER" -- sh -c "
		echo ok >$OTHER/ok
		mkdir -p $B/.sandbox/state/sb-999999 || echo refused-mkdir
		echo x >$B/planted || echo refused-write"
	echo "$output"
	[ "$(cat "$OTHER/ok")" = ok ]
	[[ $output == *refused-mkdir* ]]
	[[ $output == *refused-write* ]]
	[ ! -e "$B/.sandbox/state/sb-999999" ]
	[ ! -e "$B/planted" ]
	HUTCH_ROOT=$B sb -- true
	[ ! -e "$TEST_DIR/PWNED" ]
	kill -0 "$VICTIM"
}

@test "roots: a workspace or rw bind that holds, is or lies in another root (or this one) is refused at the start, naming it" {
	sb_fails "--workspace $OTHER: holds $B, one of hutch's own directories" \
		--workspace "$OTHER" -- true
	sb_fails "--bind $B: holds $B" --bind "$B:/data" -- true
	mkdir -p "$B/ctr"
	sb_fails "--workspace $B/ctr: inside $B" --workspace "$B/ctr" -- true
	# This root itself, where an OCI container's state (ROOT/ID) lives, not only its .sandbox.
	mkdir -p "$HUTCH_ROOT/ctr"
	sb_fails "--workspace $HUTCH_ROOT/ctr: inside $(realpath "$HUTCH_ROOT")" \
		--workspace "$HUTCH_ROOT/ctr" -- true
	# A read-only bind of it is fine: nothing is written there.
	run sb --bind "$OTHER:/data:ro" -- ls /data
	check_status 0
}

@test "roots: a sandbox's state planted in a root (a host pid, a poststop hook) is swept without running the hook or killing the pid" {
	victim
	plant "$SB_STATE"
	sb -- true
	[ ! -e "$SB_STATE/sb-999999" ]
	[ ! -e "$TEST_DIR/PWNED" ] || {
		echo "the hook ran: $(cat "$TEST_DIR/PWNED")" >&2
		return 1
	}
	kill -0 "$VICTIM"
	[ "$(awk '{print $22}' "/proc/$VICTIM/stat")" = "$VICTIM_START" ]
}

@test "roots: a host run's record planted in a root, naming a cgroup not its own or a host directory, destroys nothing" {
	local cg=hutch-victim-$TAG h keep=$TEST_DIR/keep
	victim
	mkdir -m 755 "$keep" # empty, as a daemon's /run/NAME may be: no placeholder of hutch's
	for h in /sys/fs/cgroup/*/; do
		[ "$h" = /sys/fs/cgroup/unified/ ] || mkdir "$h$cg"
	done
	echo "$VICTIM" >"/sys/fs/cgroup/pids/$cg/cgroup.procs"
	mkdir -p "$SB_RUNS"
	printf 'cgroup /%s\n%s %s %s\n' "$cg" "$(stat -c %d "$keep")" "$(stat -c %i "$keep")" \
		"$keep" >"$SB_RUNS/999999"
	local st=0
	sb -- true || st=$?
	kill -0 "$VICTIM" && [ -d "/sys/fs/cgroup/pids/$cg" ] || st=1
	kill -9 "$VICTIM" 2>/dev/null || true
	wait "$VICTIM" 2>/dev/null || true
	for h in /sys/fs/cgroup/*/; do
		[ ! -d "$h$cg" ] || rmdir "$h$cg"
	done
	[ "$st" -eq 0 ]
	[ -d "$keep" ]
	[ ! -e "$SB_RUNS/999999" ]
}

@test "roots: one of hutch's own directories reached through a bind mount in the workspace of the workspace's parent is found" {
	# The check goes up from each of hutch's directories, and stops where an earlier walk
	# (or the workspace's own) went up from. A directory is such a place only in its own
	# mount: here $TEST_DIR, the workspace's parent, is mounted again inside the workspace,
	# and the store, named through a link to that mount, lies in the workspace.
	local w=$TEST_DIR/w
	mkdir -p "$w/q/ra" "$TEST_DIR/store"
	chown 1000:1000 "$w"
	ln -s "$w/q/ra" "$TEST_DIR/s"
	mount --bind "$TEST_DIR" "$w/q/ra"
	HUTCH_STORE=$TEST_DIR/s/store run sb_fails "--workspace $w: holds $TEST_DIR/s/store" \
		--workspace "$w" -- true
	umount "$w/q/ra"
	check_status 0
}

@test "roots: a root or state dir that is not the caller's own is refused, not believed (a state forged there kills nothing)" {
	# A root made inside a sandbox's workspace can be replaced from inside by a directory of
	# the sandbox's user, holding a forged state (a host pid): host root's `hutch kill` then
	# signalled that pid. A state dir is trusted only when it is ours and no one else's to write.
	victim
	local forged=$TEST_DIR/forged state
	state=$(printf '{"ociVersion":"1.2.0","id":"victim","status":"running","pid":%s,"bundle":"/","hutch_start_time":%s}' \
		"$VICTIM" "$VICTIM_START")
	mkdir -p "$forged/victim"
	echo "$state" >"$forged/victim/state.json"
	chown -R 1000:1000 "$forged"
	run hutch --root "$forged" kill victim KILL
	[ "$status" -ne 0 ]
	[[ $output == *"--root $forged: owned by uid 1000, not by us (uid 0): refused"* ]]
	# ours, but another's to write
	chown -R 0:0 "$forged"
	chmod 0775 "$forged"
	run hutch --root "$forged" kill victim KILL
	[ "$status" -ne 0 ]
	[[ $output == *"writable by others (mode 0775)"* ]]
	# the root ours, the container's dir another's
	chmod 0711 "$forged"
	chown 1000:1000 "$forged/victim"
	run hutch --root "$forged" kill victim KILL
	[ "$status" -ne 0 ]
	[[ $output == *"state dir $forged/victim: owned by uid 1000"* ]]
	kill -0 "$VICTIM"
}
