#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
#
# Per-user kernel objects a sandbox takes from host root. The kernel charges what a process
# makes in a user namespace to the namespace's owner in its parent too (kernel/ucount.c), and
# a sandbox's namespace is host root's: one default sandbox (uid 1000, no capabilities) took
# all 128 of root's inotify instances, and while it held them root's services and every
# other sandbox got EMFILE; another queued 96365 real-time signals and 9 message queues, and
# root got EAGAIN from sigqueue and timer_create and EMFILE from mq_open. Each sandbox's
# namespace now has limits of its own (--ucount). Bounded: the hogs stop at 200 instances,
# 4096 signals or timers and 6 queues (root's are 128, 96367 and 819200 bytes: 9 queues),
# and let go as soon as the host has been checked.

load ../integration/helpers
load ../integration/sandbox-helpers
bats_require_minimum_version 1.5.0

setup_file() {
	sb_images_setup
	sb_image_helpers inotifyhog sighog
}


setup() {
	sb_setup
}

teardown() {
	local rc=0
	exec 7>&- 2>/dev/null || true
	sb_teardown || rc=1
	teardown_bundle || rc=1 # the leak checks, and the test's own dir removed
	return $rc
}

# hog [FLAGS...] -- PROG ARGS...: runs PROG (inotifyhog or sighog) in a sandbox with hutch
# sandbox FLAGS, in the background, holding what it made until hog_release; waits for its
# "made N" line.
hog() {
	local flags=() tries=200
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		flags+=("$1")
		shift
	done
	shift
	mkfifo "$TEST_DIR/hold"
	sb --timeout 30 "${flags[@]}" -- "$@" <"$TEST_DIR/hold" \
		>"$TEST_DIR/hog.out" 2>"$TEST_DIR/hog.err" &
	HOG=$!
	exec 7>"$TEST_DIR/hold" # the hog holds until this closes
	until grep -q '^made' "$TEST_DIR/hog.out" || [ $tries -eq 0 ]; do
		sleep 0.05
		tries=$((tries - 1))
	done
	HOG_OUT=$(cat "$TEST_DIR/hog.out")
	echo "# sandbox ${flags[*]}: $*: $HOG_OUT $(cat "$TEST_DIR/hog.err")" >&3
}

hog_release() {
	exec 7>&-
	wait "$HOG"
}

@test "ucounts: a default sandbox gets 16 inotify instances, and host root still has its own" {
	hog -- inotifyhog instances 200
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
	hog --ucount inotify_instances=40 -- inotifyhog instances 200
	hog_release
	[ "$HOG_OUT" = "made 40 EMFILE" ]
	rm -f "$TEST_DIR/hold"
	hog --ucount max_inotify_watches=20 -- inotifyhog watches 50 /tmp
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
		hog --runtime "$rt" -- inotifyhog instances 200
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
		hog --runtime runsc -- inotifyhog instances 200
		run "$SB_IMAGES/full/bin/inotifyhog" instances 1 </dev/null
		hog_release
		[[ $HOG_OUT == "made "* ]]
		[ "$output" = "made 1" ]
	fi
}

# stopped_at OUT LOW HIGH ERRNO: OUT is "made N ERRNO" with LOW <= N <= HIGH. Root's own
# count (the signals its services hold, another sandbox's) takes from a sandbox's limit.
stopped_at() {
	local n
	[[ $1 == "made "*" $4" ]] || return 1
	n=${1#made }
	n=${n%% *}
	[ "$n" -ge "$2" ] && [ "$n" -le "$3" ]
}

# root_sigq: host root's pending signals, all its user namespaces' together (SigQ: N/LIMIT).
root_sigq() {
	local q
	q=$("$SB_IMAGES/full/bin/sighog" sigq)
	q=${q#SigQ:}
	echo $((${q%/*}))
}

# signals_bounded [FLAGS...]: a sandbox's sigqueue loop and its timers stop at the 1024
# RLIMIT_SIGPENDING of its user namespace, counted in root's, while root still queues and
# makes timers of its own.
signals_bounded() {
	rm -f "$TEST_DIR/hold"
	hog "$@" -- sighog sigqueue 4096
	local held=$HOG_OUT sigq
	sigq=$(root_sigq)
	run "$SB_IMAGES/full/bin/sighog" sigqueue 1 </dev/null
	local host_signal=$output
	run "$SB_IMAGES/full/bin/sighog" timers 1 </dev/null
	hog_release
	echo "# host root meanwhile: SigQ $sigq; $host_signal; timers: $output" >&3
	stopped_at "$held" 512 1024 EAGAIN
	[ "$sigq" -ge 512 ] && [ "$sigq" -lt 2048 ] # the sandbox's are root's, up to 1024
	[ "$host_signal" = "made 1" ]
	[ "$output" = "made 1" ]
	rm -f "$TEST_DIR/hold"
	hog "$@" -- sighog timers 4096
	hog_release
	stopped_at "$HOG_OUT" 512 1024 EAGAIN
	# root inside queues as three uids, each held to 1024 of its own: the namespace's limit,
	# which its maker's limit set at clone, holds them to 1024 in all (3072 without it)
	rm -f "$TEST_DIR/hold"
	hog --as-root "$@" -- sighog sigqueue 4096 3
	hog_release
	stopped_at "$HOG_OUT" 512 1024 EAGAIN
}

# queues_bounded [FLAGS...]: a sandbox's message queues stop at its 204800 bytes (two of
# 82,800), while root still opens one.
queues_bounded() {
	rm -f "$TEST_DIR/hold"
	hog "$@" -- sighog mqueue 6
	run "$SB_IMAGES/full/bin/sighog" mqueue 1 </dev/null
	hog_release
	echo "# host root meanwhile: mqueue: $output" >&3
	stopped_at "$HOG_OUT" 1 2 EMFILE
	[ "$output" = "made 1" ]
}

@test "ucounts: a sandbox's pending signals and timers stop at 1024, and host root keeps its own" {
	signals_bounded
}

@test "ucounts: a sandbox's message queues stop at 204800 bytes, and host root keeps its own" {
	queues_bounded
}

@test "ucounts: --ucount sigpending and msgqueue, read inside as the sandbox's rlimits" {
	run -0 sb -- sh -c 'ulimit -i; ulimit -q; ulimit -H -i; ulimit -H -q'
	[ "${lines[*]}" = "1024 204800 1024 204800" ]
	run -0 sb --ucount sigpending=2000 --ucount msgqueue=300000 -- sh -c 'ulimit -i; ulimit -q'
	[ "${lines[*]}" = "2000 300000" ]
	rm -f "$TEST_DIR/hold"
	hog --ucount sigpending=2000 -- sighog sigqueue 4096
	hog_release
	stopped_at "$HOG_OUT" 1025 2000 EAGAIN
	rm -f "$TEST_DIR/hold"
	hog --ucount msgqueue=300000 -- sighog mqueue 6
	hog_release
	stopped_at "$HOG_OUT" 3 3 EMFILE
	# root inside can't raise its hard limit (no CAP_SYS_RESOURCE), nor the namespace's
	run -0 sb --as-root -- sh -c 'ulimit -H -i 4096 2>/dev/null || echo refused; ulimit -H -i'
	[ "${lines[*]}" = "refused 1024" ]
	sb_fails "--ucount sigpending=-1: N must be 0 to 2147483647, or max" \
		--ucount sigpending=-1 -- true
}

@test "ucounts: pending signals and message queues under runc and crun" {
	local rt
	for rt in runc crun; do
		command -v "$rt" >/dev/null || continue
		signals_bounded --runtime "$rt"
		queues_bounded --runtime "$rt"
	done
}
