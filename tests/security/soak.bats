#!/usr/bin/env bats
# A soak: many sandbox runs back to back (HUTCH_SOAK_RUNS, 2000 by default, 10000 for the
# figures in docs), with what a slow leak would grow counted before and after every 1000:
# the caller's fds, the host's mounts, cgroup directories beneath ours, sandbox state, lock
# files, seccomp cache entries and processes. Every run must succeed, and nothing may grow.

load ../integration/helpers
load ../integration/sandbox-helpers

# The runs are counted, not timed: the suite's 90 s per test (a guard against a hang) is
# about 2000 runs on a loaded 2-core CI machine, so this test gets 100 ms a run plus a minute.
# A hung run still ends in HUTCH_CMD_TIMEOUT.
BATS_TEST_TIMEOUT=$((${HUTCH_SOAK_RUNS:-2000} / 10 + 60))

setup() {
	sb_setup
	sb_private_image
	RUNS=${HUTCH_SOAK_RUNS:-2000}
	if ldd "$HUTCH" 2>/dev/null | grep -q libasan; then RUNS=$((RUNS / 4)); fi
}

# The names in stdin (PREFIX + a pid, and anything after it) whose hutch is gone: another
# session's live sandboxes on this host are theirs, not a leak of ours.
dead_only() {
	local prefix=$1 name pid
	while read -r name; do
		pid=${name##*/"$prefix"}
		pid=${pid%%[!0-9]*}
		[ -n "$pid" ] && any_hutch "$pid" || echo "$name"
	done
}

# One line of everything that must not grow: what a dead hutch left (what live ones hold is
# theirs), our lock's files, and the cache entries.
counts() {
	local fds cg inits=0 p
	fds=$(ls /proc/$$/fd | wc -l)
	# The sandboxes' own cgroups (hutch-sb-PID, and a delegate's beneath): on a hybrid host
	# our cgroup2 cgroup is the root, where everything else on the machine has its cgroups.
	cg=$(own_sb_cgroup_dirs | while read -r d; do find "$d" -mindepth 1 -type d -name 'hutch-sb-*'; done |
		dead_only hutch-sb- | wc -l)
	for p in $(pgrep -x hutch-init); do
		any_hutch "$(ps -o ppid= -p "$p" | tr -d ' ')" || inits=$((inits + 1))
	done
	echo "fds=$fds mounts=$(wc -l </proc/self/mountinfo) cgroups=$cg" \
		"state=$(ls -A /run/hutch/sandbox 2>/dev/null | dead_only sb- | wc -l)" \
		"locks=$(ls -A /run/hutch/locks 2>/dev/null | grep -c "^$TAG-soak" || true)" \
		"seccomp=$(ls -A /var/cache/hutch/seccomp 2>/dev/null | wc -l)" \
		"inits=$inits"
}

@test "soak: sandbox runs back to back leave fds, mounts, cgroups and state as they were" {
	local i rc before now t0=$SECONDS lock=$TAG-soak
	# Warm: the first runs fill the seccomp cache and make the lock directory.
	sb_raw --image "$IMAGE" --workspace "$WS" --lock "$lock" -- true
	sb_raw --image "$IMAGE" --as-root -- true
	before=$(counts)
	echo "# before: $before" >&3
	for i in $(seq 1 "$RUNS"); do
		case $((i % 10)) in
		0) sb_raw --image "$IMAGE" --as-root -- true ;;
		3) sb_raw --image "$IMAGE" --workspace "$WS" --lock "$lock" --report "$TEST_DIR/r.json" \
			-- sh -c 'echo x >/workspace/f; cat /workspace/f >/dev/null' ;;
		7) sb_raw --image "$IMAGE" --memory 64m --pids 64 --timeout 10 -- sh -c 'exit 3' ;;
		*) sb_raw --image "$IMAGE" --workspace "$WS" -- true ;;
		esac >/dev/null 2>"$TEST_DIR/err" && rc=0 || rc=$?
		if [ "$rc" != 0 ] && ! { [ $((i % 10)) = 7 ] && [ "$rc" = 3 ]; }; then
			echo "run $i: status $rc: $(cat "$TEST_DIR/err")" >&2
			return 1
		fi
		if [ $((i % 1000)) = 0 ] || [ "$i" = "$RUNS" ]; then
			now=$(counts)
			echo "# after $i runs ($((SECONDS - t0)) s): $now" >&3
			[ "$now" = "$before" ] || { echo "grew: $before -> $now" >&2; return 1; }
		fi
	done
	: >"$SB_PIDS" # thousands of pids: teardown's per-pid checks are the counts above
}
