#!/usr/bin/env bats
# Hostile or broken input is refused at once with one line naming the field, and leaves
# nothing: NUL bytes a C string would silently cut short, and seccomp profiles too large for
# the kernel that would otherwise keep libseccomp busy for minutes first.

load ../integration/helpers

@test "input: a NUL byte in an argument, an env entry or a path is refused, naming the field" {
	local field
	for field in '.process.args[1]' '.process.env[0]' '.mounts[1].destination' '.root.path' \
		'.hostname'; do
		cp "$BUNDLE/config.json" "$TEST_DIR/config.orig"
		update_config "$field"' = "ok"'
		# jq writes \u0000 for a NUL it is given; the file then holds that escape.
		update_config "$field"' |= . + "\u0000evil"'
		grep -q 'u0000evil' "$BUNDLE/config.json"
		run_bg create "$ID"
		echo "$field: $output"
		[ "$status" -eq 1 ]
		[[ $output == *"config.json: ${field#.}: a string holds a NUL byte"* ]]
		assert_no_leftovers
		cp "$TEST_DIR/config.orig" "$BUNDLE/config.json"
	done
	# An escaped backslash before u0000 is no NUL.
	set_args echo 'a\u0000b'
	run_ok
	[ "$output" = 'a\u0000b' ]
}

@test "input: a NUL byte in exec's --process file or a sandbox profile is refused" {
	set_args sleep 100
	run_bg run -d "$ID"
	check_status 0
	jq -n '{args: ["sh", "-c", "echo hi\u0000"], cwd: "/", user: {uid: 0, gid: 0}}' \
		>"$TEST_DIR/process.json"
	run hutch exec --process "$TEST_DIR/process.json" "$ID"
	[ "$status" -ne 0 ]
	[[ $output == *"args[2]: a string holds a NUL byte"* ]]
	jq -n '{image: "x\u0000y"}' >"$TEST_DIR/profile.json"
	run hutch sandbox --profile "$TEST_DIR/profile.json" -- true
	[ "$status" -eq 125 ]
	[[ $output == *"image: a string holds a NUL byte"* ]]
}

@test "input: a seccomp profile of 10^5 argument conditions is refused at once" {
	# Under ASan the mere parse of the 11 MB file takes ~30 s: a tenth of it is still far
	# beyond what fits, and quadratic in libseccomp (0.1.0 took seconds for it too).
	local n=100000
	if ldd "$HUTCH" 2>/dev/null | grep -q libasan; then n=10000; fi
	jq --argjson n $n '.linux.seccomp = {defaultAction: "SCMP_ACT_ALLOW", syscalls: [range($n) |
		{names: ["getpid"], action: "SCMP_ACT_ERRNO",
		 args: [{index: 0, value: ., op: "SCMP_CMP_EQ"}]}]}' "$BUNDLE/config.json" \
		>"$TEST_DIR/big.json"
	mv "$TEST_DIR/big.json" "$BUNDLE/config.json"
	local t0=$SECONDS
	HUTCH_CMD_TIMEOUT=20 run_bg create "$ID"
	echo "$output ($((SECONDS - t0)) s)"
	[ "$status" -eq 1 ]
	[[ $output == *"linux.seccomp.syscalls: $n argument conditions"* ]]
	[ $((SECONDS - t0)) -lt 10 ]
	assert_no_leftovers
}

# state.json was saved whatever its size and read back only up to 1 MiB: a create with a
# 1.1 MB annotation exited 0, then state, start and delete --force failed, and the init, its
# cgroup and its state dir were left. Annotations get what state.json may hold but for room
# for its paths (960 KiB), checked before anything is made.
@test "input: annotations larger than a container's state can hold are refused at create" {
	head -c 1100000 /dev/zero | tr '\0' a >"$TEST_DIR/big"
	update_config '.annotations.big = $big' --rawfile big "$TEST_DIR/big"
	set_args sleep 100
	run_bg create "$ID"
	echo "$output"
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ $output == *"annotations: 1100010 bytes as JSON, more than the 983040 a container's state can hold"* ]]
	assert_no_leftovers
	# Just within: created, and every later verb reads its state back.
	head -c 983000 /dev/zero | tr '\0' a >"$TEST_DIR/big"
	update_config '.annotations.big = $big' --rawfile big "$TEST_DIR/big"
	run_bg create "$ID"
	check_status 0
	[ "$(hutch state "$ID" | jq -r '.annotations.big | length')" = 983000 ]
	run hutch start "$ID"
	check_status 0
	run hutch delete --force "$ID"
	check_status 0
	assert_no_leftovers
}
