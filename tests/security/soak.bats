#!/usr/bin/env bats
# A soak: many sandbox runs back to back (HUTCH_SOAK_RUNS, 2000 by default, 10000 for the
# figures in docs), with what a slow leak would grow counted before and after every 1000:
# the caller's fds, the host's mounts, cgroup directories beneath ours, sandbox state, lock
# files, seccomp cache entries and processes. Every run must succeed, and nothing may grow.
# Another root runs sandboxes all along (other_root_start): the counts are of this root's
# sandboxes (the hutches sb_raw ran), and its sweeps must leave the other's be.

load ../integration/helpers
load ../integration/sandbox-helpers

setup_file() {
	other_root_start
}

teardown_file() {
	other_root_stop
}

# The runs are counted, not timed: the suite's 90 s per test (a guard against a hang) is
# about 2000 runs on a loaded 2-core CI machine, so this test gets 166 ms a run plus a minute.
# A hung run still ends in HUTCH_CMD_TIMEOUT.
BATS_TEST_TIMEOUT=$((${HUTCH_SOAK_RUNS:-2000} / 6 + 60)) # the other root's loop takes its share

setup() {
	sb_setup
	sb_private_image
	RUNS=${HUTCH_SOAK_RUNS:-2000}
	if ldd "$HUTCH" 2>/dev/null | grep -q libasan; then RUNS=$((RUNS / 4)); fi
}

# One line of everything that must not grow: what this test's hutches left (found by their
# pids: another root's sandboxes are not ours), our lock's files, and the cache entries.
counts() {
	local fds cg inits
	sb_helpers_done # the last run's delete finishes in a helper after it returned
	fds=$(ls /proc/$$/fd | wc -l)
	# The sandboxes' own cgroups (hutch-sb-PID, and a delegate's beneath): on a hybrid host
	# our cgroup2 cgroup is the root, where everything else on the machine has its cgroups.
	cg=$(own_sb_cgroups "$SB_PIDS" | wc -l)
	inits=$(own_sb_inits "$SB_PIDS" | wc -l)
	echo "fds=$fds mounts=$(wc -l </proc/self/mountinfo) cgroups=$cg" \
		"state=$(ls -A "$SB_STATE" 2>/dev/null | wc -l)" \
		"locks=$(ls -A "$SB_LOCKS" 2>/dev/null | grep -c "^$TAG-soak" || true)" \
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
			[ "$now" = "$before" ] || {
				echo "grew: $before -> $now" >&2
				own_sb_cgroups "$SB_PIDS" >&2
				own_sb_inits "$SB_PIDS" >&2
				return 1
			}
		fi
	done
	: >"$SB_PIDS" # thousands of pids: teardown's per-pid checks are the counts above
}
