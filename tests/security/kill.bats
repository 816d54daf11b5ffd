#!/usr/bin/env bats
# hutch SIGKILLed at a random moment (0-40 ms in, within its run) of create, run and sandbox,
# 300 times each (killat keeps going until 300 runs were killed):
# afterwards `delete --force` (create, run) or the next sandbox run must leave no cgroup,
# mount, state or process of them. Before, a create killed between making its cgroups and
# saving its first state left 9 cgroup directories (one per v1 hierarchy) that nothing named.
# Another root runs sandboxes all along (other_root_start): what is counted is this root's,
# by the pids killat ran (KILLAT_PIDS), and its sweeps must leave the other's be.

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
	KILLAT=$(helper_bin killat)
	# Fewer rounds under ASan, whose runs take several times as long.
	ROUNDS=${HUTCH_KILL_ROUNDS:-300}
	if ldd "$HUTCH" 2>/dev/null | grep -q libasan; then ROUNDS=$((ROUNDS / 5)); fi
	# Each container its own default cgroup (beneath ours: hutch-<id>), ids with our tag.
	update_config 'del(.linux.cgroupsPath)'
}

teardown() {
	teardown_bundle
}

# kills KILLS MAX_MS SEED CMD...: killat, its tally shown in the test's output; the pids it
# ran in $TEST_DIR/pids.
kills() {
	local out
	out=$(KILLAT_PIDS=$TEST_DIR/pids "$KILLAT" "$@") || { echo "killat: $out" >&2; return 1; }
	echo "# $out" >&3
}

# Every cgroup directory of ours named after this test's ids or one of its sandboxes.
our_cgroups() {
	own_sb_cgroup_dirs | while read -r d; do
		find "$d" -mindepth 1 -maxdepth 2 -type d -name "*$TAG*"
	done
	own_sb_cgroups "$TEST_DIR/pids" 2
}

delete_all() {
	local d
	for d in "$HUTCH_ROOT"/*; do
		[ -e "$d" ] || continue
		hutch delete --force "${d##*/}" || echo "delete --force ${d##*/} failed" >&2
	done
}

check_nothing_left() {
	local left
	left=$(our_cgroups)
	[ -z "$left" ] || { echo "cgroups left: $left" >&2; return 1; }
	assert_no_leftovers
}

@test "kill: create SIGKILLed at random moments, then delete --force: nothing left" {
	set_args sleep 100
	kills "$ROUNDS" 40 1 "$HUTCH" --root "$HUTCH_ROOT" create "$TAG-k%d"
	delete_all
	check_nothing_left
}

@test "kill: run SIGKILLed at random moments, then delete --force: nothing left" {
	set_args true
	kills "$ROUNDS" 40 2 "$HUTCH" --root "$HUTCH_ROOT" run "$TAG-k%d"
	delete_all
	check_nothing_left
}

# Sandboxes keep state in the root's .sandbox; the next run sweeps what a killed one left.
sandbox_leftovers() {
	our_cgroups
	ls -A "$SB_STATE" 2>/dev/null
	own_sb_inits "$TEST_DIR/pids"
}

@test "kill: sandbox SIGKILLed at random moments, then the next sandbox run: nothing left" {
	local r=("$HUTCH" --root "$HUTCH_ROOT" sandbox)
	kills "$ROUNDS" 40 3 "${r[@]}" --image "$BUNDLE/rootfs" -- true
	kills "$((ROUNDS / 3))" 40 4 "${r[@]}" --runtime runc --image "$BUNDLE/rootfs" -- true
	kills "$((ROUNDS / 3))" 40 5 "${r[@]}" --isolation landlock -- true
	run hutch sandbox --image "$BUNDLE/rootfs" -- true
	check_status 0
	sleep 0.2 # an init that saw its hutch die is on its way out
	local left
	left=$(sandbox_leftovers)
	[ -z "$left" ] || { echo "left: $left" >&2; false; }
	check_nothing_left
}

# A runtime outlives its killed hutch (it holds the run's record) and makes the sandbox's
# cgroup again right after the next run's sweep removed it, as a runc still starting does;
# hutch's keeper, which would remove it too, is killed with hutch. Before, that sweep dropped
# the record once the runtime ended, and the cgroup made again stayed with nothing naming it
# (1 in 3 runs of the test above, where the keeper removed it before the sweep's listing).
@test "kill: a killed sandbox's runtime makes its cgroup again after the sweep: still removed" {
	local rt=$TEST_DIR/rt pid cg i kids left
	mkdir "$rt"
	cp "$(helper_bin scriptexec)" "$rt/runc"
	cat >"$TEST_DIR/runtime.sh" <<-'SH'
		case " $* " in *" run "*) ;; *) exit 0 ;; esac
		for ((i = 1; i < $#; i++)); do
			[ "${!i}" = --bundle ] && { j=$((i + 1)); bundle=${!j}; }
		done
		cg=$(jq -r .linux.cgroupsPath "$bundle/config.json")
		make() {
			local h
			for h in /sys/fs/cgroup/*; do
				[ -d "$h${cg%/hutch-sb-*}" ] && mkdir -p "$h$cg"
			done
		}
		make
		echo "${cg%/*}" >"$T/made"
		for ((i = 0; i < 3000; i++)); do [ -e "$T/killed" ] && break; sleep 0.01; done
		for ((i = 0; i < 1000; i++)); do
			[ -d "/sys/fs/cgroup/memory$cg" ] || [ -d "/sys/fs/cgroup/unified$cg" ] || break
			sleep 0.01
		done
		make
		touch "$T/remade"
		sleep 0.2
	SH
	T=$TEST_DIR SCRIPTEXEC_SCRIPT=$TEST_DIR/runtime.sh \
		"$HUTCH" --root "$HUTCH_ROOT" sandbox --runtime "$rt/runc" --image "$BUNDLE/rootfs" \
		-- true </dev/null >/dev/null 2>&1 &
	pid=$!
	for ((i = 0; i < 1000; i++)); do [ -s "$TEST_DIR/made" ] && break; sleep 0.01; done
	kids=$(pgrep -P "$pid") # its keeper (first: it acts on hutch's death), and the runtime
	for i in $kids; do
		grep -q runtime.sh "/proc/$i/cmdline" 2>/dev/null || kill -9 "$i" 2>/dev/null || true
	done
	kill -9 "$pid"
	wait "$pid" || true
	touch "$TEST_DIR/killed"
	run hutch sandbox --image "$BUNDLE/rootfs" -- true
	check_status 0
	[ -e "$TEST_DIR/remade" ]
	cg=$(cat "$TEST_DIR/made")
	[ "${cg##*/}" = "hutch-sb-$pid" ]
	left=$(find /sys/fs/cgroup -maxdepth 8 -type d -path "*$cg" 2>/dev/null)
	[ -z "$left" ] || { echo "left: $left" >&2; false; }
	[ ! -e "$HUTCH_ROOT/.sandbox/runs/$pid" ]
}
