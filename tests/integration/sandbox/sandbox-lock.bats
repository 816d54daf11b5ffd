#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
#
# --lock NAME is a queue: waiters run in the order they started (each appends its index to a
# file of the shared workspace while it holds the lock), a SIGKILLed waiter or holder never
# blocks the line, --no-wait fails with anyone ahead, --lock-timeout is honoured, and what a
# killed hutch left of the queue is gone after the next use (of the name, or of any sandbox).

load ../helpers
load ../sandbox-helpers
bats_require_minimum_version 1.5.0

setup_file() {
	sb_images_setup
}

setup() {
	sb_setup
	LOCK=it-$TAG
	WS=$TEST_DIR/ws
	mkdir -p "$WS"
	chown 4242:4242 "$WS"
	WAITERS=()
}

# waiter I SECONDS: in the background, a sandbox that appends I to the workspace's order file
# once it holds the lock, then holds it SECONDS more; $TEST_DIR/I.pid is its hutch's pid.
waiter() {
	SB_PIDFILE=$TEST_DIR/$1.pid sb --workspace "$WS" --lock "$LOCK" \
		-- sh -c "echo $1 >>/workspace/order; sleep $2" >"$TEST_DIR/$1.out" 2>&1 3>&- &
	track_pid $!
	WAITERS+=($!)
}

# Until every waiter ended.
wait_waiters() {
	local p
	for p in "${WAITERS[@]}"; do
		wait "$p" || true
	done
}

# pid_of I: waiter I's hutch, once it wrote its pid.
pid_of() {
	local tries=250
	while [ ! -s "$TEST_DIR/$1.pid" ] && [ $tries -gt 0 ]; do
		sleep 0.02
		tries=$((tries - 1))
	done
	cat "$TEST_DIR/$1.pid"
}

# exec_done I: waits (5 s at most) until waiter I's hutch runs (exec'd: the shell that
# wrote the pid execs hutch).
exec_done() {
	local pid tries=250
	pid=$(pid_of "$1")
	while ! is_hutch "$pid" && [ $tries -gt 0 ]; do
		sleep 0.02
		tries=$((tries - 1))
	done
}

# tickets_are N: waits (5 s at most) until the queue holds N live tickets.
tickets_are() {
	local tries=250
	while [ "$(lock_pids "$LOCK" | wc -l)" -ne "$1" ] && [ $tries -gt 0 ]; do
		sleep 0.02
		tries=$((tries - 1))
	done
	[ "$(lock_pids "$LOCK" | wc -l)" -eq "$1" ]
}

order() {
	tr '\n' ' ' <"$WS/order"
}

@test "lock: 20 waiters started 300 ms apart run in the order they started" {
	local i mon
	# Which ticket each hutch took, for the failure's message.
	while :; do
		grep -H . "$SB_LOCKS/$LOCK"/[0-9]* 2>/dev/null || true
		sleep 0.01
	done >"$TEST_DIR/tickets" &
	mon=$!
	track_pid $mon
	# Each one 300 ms after the previous one's hutch runs (its exec, not the harness's fork:
	# on a loaded machine the latter may lag by as much).
	for i in $(seq 0 19); do
		waiter "$i" 0.5
		exec_done "$i"
		sleep 0.3
	done
	wait_waiters
	kill "$mon" || true
	echo "order: $(order)" >&2
	for i in $(seq 0 19); do
		echo "waiter $i: hutch $(cat "$TEST_DIR/$i.pid"), ticket $(grep -m1 ":$(cat "$TEST_DIR/$i.pid")$" \
			"$TEST_DIR/tickets" | sed 's|.*/0*||; s|:.*||')"
	done >&2
	[ "$(order)" = "$(seq 0 19 | tr '\n' ' ')" ]
	# Each held the lock alone: no two commands' runs overlapped (hutch's own start is not
	# the command's, but 20 runs of 0.5 s take 10 s at least).
	[ "$(stat -c %U "$WS/order")" = 4242 ] || [ "$(stat -c %u "$WS/order")" = 4242 ]
	# The last one out removed the queue.
	[ ! -e "$SB_LOCKS/$LOCK" ]
}

@test "lock: a SIGKILLed waiter in the line and a SIGKILLed holder block no one" {
	local p0 p2
	waiter 0 60
	p0=$(pid_of 0)
	wait_lock_holder "$LOCK" "$p0"
	waiter 1 0.2
	tickets_are 2
	waiter 2 0.2
	tickets_are 3
	waiter 3 0.2
	tickets_are 4
	[ "$(lock_pids "$LOCK" | head -1)" = "$p0" ]
	p2=$(pid_of 2)
	kill -9 "$p2"
	tickets_are 3 # waiter 3 woke, removed its dead neighbour's ticket, and waits on 1's
	# --no-wait: the holder and waiters ahead; it leaves no ticket behind.
	run sb --lock "$LOCK" --no-wait -- true
	check_status 125
	[[ $output == *"--lock $LOCK: held by pid $p0, with others waiting ahead"* ]]
	[ "$(lock_pids "$LOCK" | wc -l)" -eq 3 ]
	kill -9 "$p0"
	wait_waiters
	[ "$(order)" = "0 1 3 " ]
	! grep -q . "$TEST_DIR/1.out" "$TEST_DIR/3.out"
	[ ! -e "$SB_LOCKS/$LOCK" ]
}

@test "lock: --lock-timeout fails in time and leaves the line; the next in line goes on" {
	local p0 t0 dt
	waiter 0 2
	p0=$(pid_of 0)
	wait_lock_holder "$LOCK" "$p0"
	waiter 1 0.2
	tickets_are 2
	t0=$(now_ms)
	run sb --lock "$LOCK" --lock-timeout 0.5 --report "$TEST_DIR/r.json" -- true
	dt=$(($(now_ms) - t0))
	echo "--lock-timeout 0.5 took ${dt}ms" >&2
	check_status 125
	[[ $output == *"--lock $LOCK: held by pid $p0, with others waiting ahead"* ]]
	[ "$dt" -ge 450 ] && [ "$dt" -lt 5000 ]
	jq -e '.failure == "lock_busy" and .lock_wait_ms >= 490 and .lock_wait_ms < 1500' \
		"$TEST_DIR/r.json"
	[ "$(lock_pids "$LOCK" | wc -l)" -eq 2 ]
	# Behind the holder and its waiter, a timeout long enough is served third.
	run sb --workspace "$WS" --lock "$LOCK" --lock-timeout 20 -- sh -c 'echo 2 >>/workspace/order'
	check_status 0
	wait_waiters
	[ "$(order)" = "0 1 2 " ]
	[ ! -e "$SB_LOCKS/$LOCK" ]
}

@test "lock: a SIGKILLed holder's ticket is removed by the next use of the name, or by any sandbox's sweep" {
	HUTCH_TEST_KILL_AT=sandbox:locked "$HUTCH" sandbox --lock "$LOCK" --image "$IMAGE" -- true ||
		true
	[ "$(ls "$SB_LOCKS/$LOCK" | grep -c '^[0-9]')" -eq 1 ]
	run sb --lock "$LOCK" --no-wait -- echo next
	check_status 0
	[ "$output" = next ]
	[ ! -e "$SB_LOCKS/$LOCK" ]
	# A name nobody uses again: the sweep every sandbox runs removes it.
	HUTCH_TEST_KILL_AT=sandbox:locked "$HUTCH" sandbox --lock "$LOCK" --image "$IMAGE" -- true ||
		true
	[ -d "$SB_LOCKS/$LOCK" ]
	run sb -- true
	check_status 0
	[ ! -e "$SB_LOCKS/$LOCK" ]
}

@test "lock: --detach's supervisor holds the ticket its caller took; host mode queues too" {
	local n=lk-$TAG
	run sb --name "$n" --detach --lock "$LOCK" -- sleep 60
	check_status 0
	[ "$output" = "$n" ]
	local sup
	sup=$(lock_pids "$LOCK" | head -1)
	[ -n "$sup" ] && [ "$sup" != "$(tail -1 "$SB_PIDS")" ] # the supervisor's, not the caller's
	run sb --lock "$LOCK" --no-wait -- true
	check_status 125
	[[ $output == *"held by pid $sup"* ]]
	run sb_raw --isolation landlock --lock "$LOCK" --no-wait -- true
	check_status 125
	[[ $output == *"held by pid $sup"* ]]
	run "$HUTCH" sandbox rm -f "$n"
	check_status 0
	run sb_raw --isolation landlock --lock "$LOCK" --no-wait -- true
	check_status 0
	[ ! -e "$SB_LOCKS/$LOCK" ]
}

@test "lock: a lock file of hutch before the queues is replaced when free, refused when held" {
	mkdir -p "$SB_LOCKS"
	echo 1 >"$SB_LOCKS/$LOCK"
	run sb --lock "$LOCK" -- echo queued
	check_status 0
	[ "$output" = queued ]
	[ ! -e "$SB_LOCKS/$LOCK" ]
	echo 1 >"$SB_LOCKS/$LOCK"
	(exec 3>&- 9<"$SB_LOCKS/$LOCK" && flock 9 && exec sleep 30) &
	local old=$!
	track_pid $old
	sleep 0.3
	sb_fails "--lock $LOCK: held by an older hutch" --lock "$LOCK" -- true
	kill "$old"
	wait "$old" || true
	rm -f "$SB_LOCKS/$LOCK"
}

@test "lock: a counter written over (at 2^64-1, lower than a live ticket, not a number) never lets a second waiter in" {
	waiter 1 3
	exec_done 1
	tickets_are 1
	local q=$SB_LOCKS/$LOCK
	# At its top: the next number would wrap to 0, below the holder's, and be served at once.
	printf 18446744073709551615 >"$q/counter"
	sb_fails "--lock $LOCK: the numbers are used up" --lock "$LOCK" --no-wait -- echo second
	# Lower than the live ticket: the next is above the highest ticket, so it waits.
	printf 0 >"$q/counter"
	sb_fails "--lock $LOCK: held by pid" --lock "$LOCK" --no-wait -- echo second
	printf 'x12' >"$q/counter"
	sb_fails "counter is not a number" --lock "$LOCK" --no-wait -- echo second
	wait_waiters
	[ "$(order)" = "1 " ]
}
