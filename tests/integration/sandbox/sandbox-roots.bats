#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
#
# Two hutch instances on one host, each with its own root (--root, or HUTCH_ROOT): a root
# owns its sandboxes' locks, names, state and scratch (ROOT/.sandbox), so two platforms share
# no lock or name, `sandbox ls` lists its own root's, and `rm` finds only its own. The test's
# own root is $HUTCH_ROOT (every helper runs in it); the second is $B.

load ../helpers
load ../sandbox-helpers
bats_require_minimum_version 1.5.0

setup_file() {
	sb_images_setup
}

setup() {
	sb_setup
	B=$TEST_DIR/root-b
	N=n-$TAG
	LOCK=lock-$TAG
}

teardown() {
	local rc=0
	"$HUTCH" --root "$B" sandbox rm -f "$N" >/dev/null 2>&1 && {
		echo "LEAK: $N ran on in root B" >&2
		rc=1
	}
	[ -z "$(find "$B/.sandbox" -mindepth 2 2>/dev/null)" ] || {
		echo "LEAK: in root B: $(find "$B/.sandbox" -mindepth 2)" >&2
		rc=1
	}
	sb_teardown || rc=1
	teardown_bundle || rc=1
	return $rc
}

# sb_b ARGS...: sb (the test's image, tag and pid list) in root B.
sb_b() {
	local HUTCH_ROOT=$B
	sb "$@"
}

# The names `sandbox ls --format json` lists in root ROOT.
names_in() {
	"$HUTCH" --root "$1" sandbox ls --format json | jq -r '.[].name' | sort | tr '\n' ' '
}

@test "roots: the same --lock name in two roots does not block" {
	sb --lock "$LOCK" -- sleep 3 >/dev/null 2>&1 3>&- &
	local a=$!
	track_pid $a
	local tries=500
	until [ -e "$SB_LOCKS/$LOCK" ] || [ $tries = 0 ]; do
		sleep 0.02
		tries=$((tries - 1))
	done
	# root B: free at once; root A: held
	run -0 sb_b --lock "$LOCK" --no-wait -- echo b-ran
	[ "$output" = b-ran ]
	[ ! -e "$B/.sandbox/locks/$LOCK" ]
	run -125 sb --lock "$LOCK" --no-wait -- true
	[[ $output == *"--lock $LOCK: held by pid"* ]]
	wait $a
}

@test "roots: the same --name starts in two roots; ls lists each root's own; rm finds its own" {
	local ida idb
	sb --name "$N" --detach -- sleep 60
	cat "$SB_NAMES/$N" | sed 's/^sb-//' >>"$SB_PIDS"
	sb_b --name "$N" --detach -- sleep 60
	cat "$B/.sandbox/names/$N" | sed 's/^sb-//' >>"$SB_PIDS"
	ida=$(cat "$SB_NAMES/$N")
	idb=$(cat "$B/.sandbox/names/$N")
	[ "$ida" != "$idb" ]
	[ -d "$SB_STATE/$ida" ] && [ -d "$B/.sandbox/state/$idb" ]
	[ ! -e "$SB_STATE/$idb" ] && [ ! -e "$B/.sandbox/state/$ida" ]
	# ls: each root's own, by id
	run -0 "$HUTCH" --root "$HUTCH_ROOT" sandbox ls --format json
	[ "$(jq -r '[.[].id] | join(" ")' <<<"$output")" = "$ida" ]
	run -0 "$HUTCH" --root "$B" sandbox ls --format json
	[ "$(jq -r '[.[].id] | join(" ")' <<<"$output")" = "$idb" ]
	# exec reaches the root's own sandbox
	run -0 "$HUTCH" --root "$B" sandbox exec "$N" -- sh -c 'echo $HUTCH_IT_TAG'
	[ "$output" = "$TAG" ]
	# rm in root A removes A's, and B's runs on
	run -0 "$HUTCH" --root "$HUTCH_ROOT" sandbox rm -f "$N"
	[ ! -e "$SB_NAMES/$N" ] && [ ! -e "$SB_STATE/$ida" ]
	[ "$(names_in "$HUTCH_ROOT")" = "" ]
	[ "$(names_in "$B")" = "$N " ]
	run -0 "$HUTCH" --root "$B" sandbox exec "$N" -- echo still
	[ "$output" = still ]
	run -125 "$HUTCH" --root "$HUTCH_ROOT" sandbox rm -f "$N"
	[ "$output" = "hutch: error: sandbox $N: no such sandbox" ]
	run -0 "$HUTCH" --root "$B" sandbox rm -f "$N"
	[ "$(names_in "$B")" = "" ]
	# `hutch list` never meets the sandbox state, and .sandbox is no container id
	run -0 "$HUTCH" --root "$B" list -q
	[ -z "$output" ]
	run -1 "$HUTCH" --root "$B" state .sandbox
	[ "$output" = 'hutch: error: invalid container id ".sandbox": reserved by hutch' ]
}

@test "roots: HUTCH_ROOT is every verb's root; --root beats it" {
	local id
	# sandbox, through the environment alone
	HUTCH_ROOT=$B sb_raw --image "$IMAGE" --name "$N" --detach -- sleep 60
	id=$(cat "$B/.sandbox/names/$N")
	echo "${id#sb-}" >>"$SB_PIDS"
	[ ! -e "$SB_NAMES/$N" ]
	run -0 env HUTCH_ROOT="$B" "$HUTCH" sandbox ls --format json
	[ "$(jq -r '[.[].name] | join(" ")' <<<"$output")" = "$N" ]
	run -0 env HUTCH_ROOT="$B" "$HUTCH" --root "$HUTCH_ROOT" sandbox ls --format json
	[ "$output" = "[]" ]
	run -0 env HUTCH_ROOT="$B" "$HUTCH" sandbox rm -f "$N"
	# an OCI verb: its state dir is in HUTCH_ROOT's root, and --root beats it
	make_bundle "$BUNDLE"
	set_args true
	run -0 env HUTCH_ROOT="$B" "$HUTCH" run --bundle "$BUNDLE" "$ID"
	[ ! -e "$B/$ID" ]
	set_args sleep 60
	HUTCH_ROOT=$B timeout 30 "$HUTCH" create --bundle "$BUNDLE" "$ID" </dev/null \
		>"$TEST_DIR/create.out" 2>&1 3>&-
	[ -d "$B/$ID" ] && [ ! -e "$HUTCH_ROOT/$ID" ]
	run -0 env HUTCH_ROOT="$TEST_DIR/elsewhere" "$HUTCH" --root "$B" list -q
	[ "$output" = "$ID" ]
	run -0 env HUTCH_ROOT="$B" "$HUTCH" delete --force "$ID"
	[ ! -e "$B/$ID" ]
}

@test "roots: a bad HUTCH_ROOT is one clear error naming it, and nothing is made" {
	cd "$TEST_DIR"
	run -125 --separate-stderr env HUTCH_ROOT=relative/root "$HUTCH" sandbox --image "$IMAGE" -- true
	[ "$stderr" = "hutch: error: HUTCH_ROOT: expected an absolute path, got relative/root" ]
	[ -z "$output" ]
	run -1 --separate-stderr env HUTCH_ROOT=relative/root "$HUTCH" list
	[ "$stderr" = "hutch: error: HUTCH_ROOT: expected an absolute path, got relative/root" ]
	[ ! -e "$TEST_DIR/relative" ]
	# another user's directory, and a symlink, are no root of ours
	mkdir -m 755 "$TEST_DIR/theirs"
	chown 1500:1500 "$TEST_DIR/theirs"
	run -125 --separate-stderr env HUTCH_ROOT="$TEST_DIR/theirs" "$HUTCH" sandbox \
		--image "$IMAGE" -- true
	[ "$stderr" = "hutch: error: sandbox: HUTCH_ROOT $TEST_DIR/theirs: not a directory of uid 0's that only it may write" ]
	[ -z "$(ls -A "$TEST_DIR/theirs")" ]
	mkdir -m 711 "$TEST_DIR/real"
	ln -s real "$TEST_DIR/link"
	run -125 --separate-stderr env HUTCH_ROOT="$TEST_DIR/link" "$HUTCH" sandbox \
		--image "$IMAGE" -- true
	[[ $stderr == "hutch: error: "*"HUTCH_ROOT $TEST_DIR/link: a symlink"* ]]
	[ -z "$(ls -A "$TEST_DIR/real")" ]
	# the empty string is unset, as VAR= says: the default root
	run -0 env HUTCH_ROOT= "$HUTCH" sandbox --help
}

@test "roots: no sandbox may write its root, from a workspace or an --allow-rw tree" {
	mkdir -p -m 711 "$HUTCH_ROOT"
	run -0 sb -- true # makes .sandbox
	sb_fails "one of hutch's own directories" --workspace "$SB_DIR"
	sb_fails "one of hutch's own directories" --workspace "$SB_STATE"
	sb_fails "one of hutch's own directories" --bind "$HUTCH_ROOT:/data"
	# The root itself (an OCI container's state is ROOT/ID), not only its .sandbox: host
	# mode refuses it as --allow-rw, and denies it inside a tree that holds it.
	run -125 --separate-stderr sb_raw --isolation landlock --allow-rw "$HUTCH_ROOT" -- true
	[[ $stderr == *"--allow-rw $HUTCH_ROOT: inside "*"one of hutch's own directories"* ]]
	run sb_raw --isolation landlock --allow-rw "$TEST_DIR" -- \
		sh -c "touch '$TEST_DIR/mine' && ! touch '$HUTCH_ROOT/planted' && echo denied"
	echo "# $output" >&2
	[ "$status" -eq 0 ]
	[[ $output == *denied* ]]
	[ -e "$TEST_DIR/mine" ] && [ ! -e "$HUTCH_ROOT/planted" ]
	rm "$TEST_DIR/mine"
}

@test "roots: a root's sweep removes what its own killed hutches left, never another root's" {
	local p at st args
	for at in created delegate-cgroup; do
		args=()
		if [ $at = delegate-cgroup ]; then
			command -v runc >/dev/null || continue
			args=(--runtime runc)
		fi
		st=0
		SB_PIDFILE=$TEST_DIR/killed HUTCH_TEST_KILL_AT=sandbox:$at sb "${args[@]}" -- sleep 60 \
			>/dev/null 2>&1 3>&- || st=$?
		[ $st = 137 ]
		p=$(cat "$TEST_DIR/killed")
		sleep 0.2 # an init that saw its hutch die is on its way out
		[ -n "$(sb_cgroups "$p")" ]
		# root B's runs sweep: A's leftovers stay (its cgroups; its state, for a native one)
		run -0 sb_b -- true
		run -0 env HUTCH_ROOT="$B" "$HUTCH" sandbox --isolation landlock -- true
		[ -n "$(sb_cgroups "$p")" ]
		[ $at != created ] || [ -d "$SB_STATE/sb-$p" ]
		[ -e "$SB_DIR/runs/$p" ]
		# root A's next run removes them
		run -0 sb -- true
		[ -z "$(sb_cgroups "$p")" ]
		[ ! -e "$SB_STATE/sb-$p" ] && [ ! -e "$SB_DIR/runs/$p" ]
	done
}
