#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
#
# hutch sandbox's option values as a user types them: sizes in every unit, --cpus against
# the CPUs hutch may use, --env-file's shell-like lines, and a suggestion for a mistyped
# flag. A bad value is exit 125 and one error line naming the flag and the value.

load ../helpers
load ../sandbox-helpers
bats_require_minimum_version 1.5.0

setup_file() {
	sb_images_setup scratch
}

setup() {
	sb_setup
}

teardown() {
	local rc=0
	sb_teardown || rc=1
	teardown_bundle || rc=1 # the leak checks, and the test's own dir removed
	return $rc
}

teardown_file() {
	[ -z "${SB_IMAGES:-}" ] || rm -rf --one-file-system "$SB_IMAGES"
}

MEM_PROBE='if [ -e /sys/fs/cgroup/cgroup.controllers ]; then cat /sys/fs/cgroup/memory.max
else cat /sys/fs/cgroup/memory/memory.limit_in_bytes; fi'

@test "sandbox: sizes take k/m/g/t in either case, with B or iB" {
	local s
	for s in 64m 64M 64MiB 64mb 65536k 65536KiB 0.0625g 0.0625GiB 67108864; do
		run sb --memory "$s" -- sh -c "$MEM_PROBE"
		check_status 0
		[ "$output" = 67108864 ] || { echo "--memory $s gave $output" >&2; return 1; }
	done
	run sb --tmpfs /scratch:1MiB -- sh -c 'df -k /scratch | tail -1'
	check_status 0
	[ "$(awk '{ print $2 }' <<<"$output")" = 1024 ]
}

@test "sandbox: a size that is not one: exit 125, naming the flag and the value" {
	sb_fails "--memory 1.5x: not a size" --memory 1.5x -- true
	sb_fails "--memory m: not a size" --memory m -- true
	sb_fails "--memory -1: not a size" --memory -1 -- true
	sb_fails "--memory 99999999t: size too large" --memory 99999999t -- true
	sb_fails "--tmpfs /scratch:1bb: invalid size 1bb" --tmpfs /scratch:1bb -- true
	sb_fails "--tmpfs /scratch:1e30: invalid size 1e30 (too large)" --tmpfs /scratch:1e30 -- true
}

@test "sandbox: --cpus up to the CPUs hutch may run on, not above" {
	local n
	n=$(nproc)
	run sb --cpus "$n" -- true
	check_status 0
	sb_fails "--cpus $((n + 1)): more than the $n CPU" --cpus $((n + 1)) -- true
	# the affinity mask, not the machine: taskset narrows it to one CPU
	run taskset -c 0 "$HUTCH" sandbox --image "$IMAGE" --cpus 1.5 -- true
	check_status 125
	[ "$output" = "hutch: error: --cpus 1.5: more than the 1 CPU hutch may run on" ]
	run taskset -c 0 "$HUTCH" sandbox --image "$IMAGE" --cpus 1 -- true
	check_status 0
}

@test "sandbox: --env-file reads lines as a shell does: export, quotes, comments, a bare KEY" {
	cat >"$TEST_DIR/env" <<-'ENV'
		# a comment, then a blank line

		export A=1
		  B="two \"quoted\" words\n \$HOME"  # and a comment
		C='single $quotes \n'
		D=as it always was, "quotes" and all
		FROM_CALLER
		NOT_SET_ANYWHERE
	ENV
	FROM_CALLER=caller run sb --env-file "$TEST_DIR/env" -- sh -c \
		'printf "%s|" "$A" "$B" "$C" "$D" "$FROM_CALLER" "${NOT_SET_ANYWHERE-unset}"'
	check_status 0
	[ "$output" = '1|two "quoted" words
 $HOME|single $quotes \n|as it always was, "quotes" and all|caller|unset|' ]
}

@test "sandbox: an --env-file line it cannot read: exit 125, naming the file and the line" {
	printf 'A=1\n\nB="open\n' >"$TEST_DIR/e1"
	sb_fails "--env-file $TEST_DIR/e1 line 3: unterminated double quote" \
		--env-file "$TEST_DIR/e1" -- true
	printf "A='x' y\n" >"$TEST_DIR/e2"
	sb_fails "--env-file $TEST_DIR/e2 line 1: \"y\" after the closing quote" \
		--env-file "$TEST_DIR/e2" -- true
	printf '# c\nMY VAR=1\n' >"$TEST_DIR/e3"
	sb_fails "--env-file $TEST_DIR/e3 line 2: \"MY VAR\" is not a variable name" \
		--env-file "$TEST_DIR/e3" -- true
}

@test "sandbox: a mistyped flag: exit 125, and the flag it most likely meant" {
	sb_fails "sandbox: unknown flag --worksapce (did you mean --workspace?)" \
		--worksapce "$TEST_DIR" -- true
	sb_fails "unknown flag --memroy=64m (did you mean --memory?)" --memroy=64m -- true
	sb_fails "unknown flag --env-fiel (did you mean --env-file?)" --env-fiel x -- true
	sb_fails "unknown flag --net (did you mean --network?)" --net none -- true
	# nothing close: the message as it always was
	run sb --xyzzy -- true
	check_status 125
	[ "$output" = "hutch: error: sandbox: unknown flag --xyzzy" ]
}

@test "every verb: a mistyped flag gets the flag it most likely meant" {
	run "$HUTCH" run --detahc x
	[ "$status" -ne 0 ]
	[ "$output" = "hutch: error: run: unknown flag --detahc (did you mean --detach?)" ]
	run "$HUTCH" kill --al x
	[ "$output" = "hutch: error: kill: unknown flag --al (did you mean --all?)" ]
}
