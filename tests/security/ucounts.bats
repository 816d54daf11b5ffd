#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
#
# Per-user kernel objects a sandbox takes from host root. The kernel charges what a process
# makes in a user namespace to the namespace's owner in its parent too (kernel/ucount.c), and
# a sandbox's namespace is host root's: one default sandbox (uid 1000, no capabilities) took
# all 128 of root's inotify instances, and while it held them root's services and every
# other sandbox got EMFILE. Each sandbox's namespace now has limits of its own (--ucount).
# Bounded: the hog stops at 200 instances and lets go as soon as the host has been checked.

load ../integration/helpers
load ../integration/sandbox-helpers
bats_require_minimum_version 1.5.0

setup_file() {
	sb_images_setup
	sb_image_helpers inotifyhog
}


setup() {
	sb_setup
}

teardown() {
	exec 7>&- 2>/dev/null || true
	sb_teardown
}

# hog ARGS...: runs `inotifyhog ARGS` in a sandbox (more hutch sandbox flags before a --),
# in the background, holding what it made until hog_release; waits for its "made N" line.
hog() {
	local flags=() tries=200
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		flags+=("$1")
		shift
	done
	shift
	mkfifo "$TEST_DIR/hold"
	sb --timeout 30 "${flags[@]}" -- inotifyhog "$@" <"$TEST_DIR/hold" \
		>"$TEST_DIR/hog.out" 2>"$TEST_DIR/hog.err" &
	HOG=$!
	exec 7>"$TEST_DIR/hold" # the hog holds until this closes
	until grep -q '^made' "$TEST_DIR/hog.out" || [ $tries -eq 0 ]; do
		sleep 0.05
		tries=$((tries - 1))
	done
	HOG_OUT=$(cat "$TEST_DIR/hog.out")
	echo "# sandbox ${flags[*]}: inotifyhog $*: $HOG_OUT $(cat "$TEST_DIR/hog.err")" >&3
}

hog_release() {
	exec 7>&-
	wait "$HOG"
}

@test "ucounts: a default sandbox gets 16 inotify instances, and host root still has its own" {
	hog -- instances 200
	# while the sandbox holds all it can: an instance of host root's
	run "$SB_IMAGES/full/bin/inotifyhog" instances 1 </dev/null
	hog_release
	echo "# host root meanwhile: $output" >&3
	[ "$HOG_OUT" = "made 16 EMFILE" ]
	[ "$output" = "made 1" ]
}

@test "ucounts: the sandbox reads its limits in /proc/sys/user, and cannot raise them" {
	run -0 sb -- sh -c 'cat /proc/sys/user/max_inotify_instances \
		/proc/sys/user/max_inotify_watches /proc/sys/user/max_user_namespaces;
		echo 1000 2>/dev/null >/proc/sys/user/max_inotify_instances || echo refused'
	[ "${lines[0]}" = 16 ]
	[ "${lines[1]}" = 8192 ]
	[ "${lines[2]}" = 256 ]
	[ "${lines[3]}" = refused ]
	# root inside (--as-root): /proc/sys is read-only, and it has no CAP_SYS_RESOURCE there
	run -0 sb --as-root -- sh -c 'echo 1000 2>/dev/null >/proc/sys/user/max_inotify_instances ||
		echo refused; cat /proc/sys/user/max_inotify_instances'
	[ "${lines[0]}" = refused ]
	[ "${lines[1]}" = 16 ]
	# the host's own are untouched
	[ "$(cat /proc/sys/user/max_inotify_instances)" -ge 128 ]
}

@test "ucounts: --ucount raises or lowers one, a profile's ucount too" {
	hog --ucount inotify_instances=40 -- instances 200
	hog_release
	[ "$HOG_OUT" = "made 40 EMFILE" ]
	rm -f "$TEST_DIR/hold"
	hog --ucount max_inotify_watches=20 -- watches 50 /tmp
	hog_release
	[ "$HOG_OUT" = "made 20 ENOSPC" ]
	echo '{"version": 1, "ucount": ["inotify_instances=3"]}' >"$TEST_DIR/p.json"
	run -0 sb --profile "$TEST_DIR/p.json" -- cat /proc/sys/user/max_inotify_instances
	[ "$output" = 3 ]
}

@test "ucounts: --ucount errors name the flag" {
	sb_fails "--ucount nope=1: expected NAME=N" --ucount nope=1 -- true
	sb_fails "--ucount inotify_instances=-1: N must be 0 to 2147483647, or max" \
		--ucount inotify_instances=-1 -- true
	sb_fails "--ucount inotify_instances: expected NAME=N" --ucount inotify_instances -- true
	sb_fails "--ucount: needs the sandbox's own user namespace (not --host-root)" \
		--host-root --ucount inotify_instances=8 -- true
}

@test "ucounts: the same limits under runc and crun (a createRuntime hook); runsc's own" {
	local rt
	for rt in runc crun; do
		command -v "$rt" >/dev/null || continue
		rm -f "$TEST_DIR/hold"
		hog --runtime "$rt" -- instances 200
		run "$SB_IMAGES/full/bin/inotifyhog" instances 1 </dev/null
		hog_release
		[ "$HOG_OUT" = "made 16 EMFILE" ]
		[ "$output" = "made 1" ]
		run -0 sb --runtime "$rt" --ucount fanotify_groups=2 -- \
			cat /proc/sys/user/max_fanotify_groups
		[ "$output" = 2 ]
	done
	# runsc: the sentry implements inotify itself; host root keeps its own meanwhile
	if command -v runsc >/dev/null; then
		rm -f "$TEST_DIR/hold"
		hog --runtime runsc -- instances 200
		run "$SB_IMAGES/full/bin/inotifyhog" instances 1 </dev/null
		hog_release
		[[ $HOG_OUT == "made "* ]]
		[ "$output" = "made 1" ]
	fi
}
