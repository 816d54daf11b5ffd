#!/usr/bin/env bats
# hutch killed at each named phase of create, start, exec, delete and sandbox (the fault
# points in the code, HUTCH_TEST_KILL_AT=NAME; see base/base-fault.c): the kill must
# happen there (status 137), and afterwards `delete --force` or the next sandbox run must
# leave no state, cgroup, mount or process. Another root runs sandboxes all along
# (other_root_start): the counts are of this root's alone, and its sweeps leave them be.

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
	set_args sleep 100
}

teardown() {
	teardown_bundle
}

# killed_at PHASE ARGS...: `hutch ARGS...` killed at PHASE; fails unless it was.
killed_at() {
	local phase=$1 rc=0
	shift
	HUTCH_TEST_KILL_AT=$phase timeout -k 5 30 sh -c 'echo $$ >>"$0"; exec "$@"' \
		"$TEST_DIR/pids" "$HUTCH" --root "$HUTCH_ROOT" "$@" \
		</dev/null >>"$TEST_DIR/out" 2>&1 3>&- || rc=$?
	echo "$phase: hutch $* -> $rc" >&2
	[ "$rc" = 137 ]
}

# The cgroups of this test's sandboxes (hutch-sb-PID, of the pids killed_at ran).
sandbox_cgroups() {
	own_sb_cgroups "$TEST_DIR/pids" 1
}

@test "faults: create killed at each phase, then delete --force: nothing left" {
	local p
	for p in state-dir cgroup-recorded cgroup-made cloned go ready; do
		killed_at "create:$p" create "$ID"
		hutch delete --force "$ID"
		assert_no_leftovers
	done
}

@test "faults: start killed at each phase, then delete --force: nothing left" {
	local p
	for p in fifo-opened answered; do
		run_bg create "$ID"
		check_status 0
		killed_at "start:$p" start "$ID"
		hutch delete --force "$ID"
		assert_no_leftovers
	done
}

@test "faults: run killed between its create and its start, then delete --force: nothing left" {
	killed_at run:created run "$ID"
	hutch delete --force "$ID"
	assert_no_leftovers
}

@test "faults: exec killed at each phase, then delete --force: nothing left" {
	local p
	for p in cloned ready; do
		run_bg run -d "$ID"
		check_status 0
		killed_at "exec:$p" exec "$ID" sleep 100
		hutch delete --force "$ID"
		assert_no_leftovers
	done
}

@test "faults: delete killed at each phase, then delete --force again: nothing left" {
	local p
	for p in killed cgroup-removed; do
		run_bg run -d "$ID"
		check_status 0
		killed_at "delete:$p" delete --force "$ID"
		hutch delete --force "$ID"
		assert_no_leftovers
	done
}

@test "faults: sandbox killed at each phase, then the next sandbox run: nothing left" {
	local p args cmd
	for p in locked scratch rootfs created started waited delegate-cgroup host-cgroup; do
		case $p in
		delegate-cgroup) args=(--runtime runc --image "$BUNDLE/rootfs") ;;
		host-cgroup) args=(--isolation landlock --memory 64m) ;;
		*) args=(--lock "$TAG" --image "$BUNDLE/rootfs") ;;
		esac
		cmd=(sleep 100)
		[ "$p" = waited ] && cmd=(true) # reached once the command has ended
		killed_at "sandbox:$p" sandbox "${args[@]}" -- "${cmd[@]}"
		# (with the lock: a killed holder's lock file is removed by the next holder)
		run hutch sandbox --lock "$TAG" --image "$BUNDLE/rootfs" -- true
		check_status 0
		sleep 0.2 # an init that saw its hutch die is on its way out
		[ -z "$(sandbox_cgroups)" ] || { echo "after $p: $(sandbox_cgroups)" >&2; false; }
		[ -z "$(ls -A "$SB_STATE" 2>/dev/null)" ] || { echo "after $p: state left" >&2; false; }
		[ -z "$(own_sb_inits "$TEST_DIR/pids")" ] || { echo "after $p: an init is left" >&2; false; }
		assert_no_leftovers
	done
}
