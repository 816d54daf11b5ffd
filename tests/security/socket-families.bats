#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
#
# The default profile refuses AF_VSOCK (40: it reaches the host around every network
# namespace) and AF_ALG (38: kernel crypto) by socket()'s family argument. A filter on an
# argument must cover every syscall that does the same job: on x86 that is also i386's
# direct socket (359) and its multiplexer socketcall, whose arguments are in memory where
# seccomp can't read them. socketcall was allowed, and int $0x80 made an AF_VSOCK socket in
# a --network none sandbox (native, runc, crun and host mode); it is now refused.

load ../integration/helpers
load ../integration/sandbox-helpers
bats_require_minimum_version 1.5.0

setup_file() {
	sb_images_setup
	sb_image_helpers sockprobe
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

# ABIS: the ABIs this host reaches, and SB_ENV what tells sockprobe (host_i386).
abis() {
	ABIS=(x86_64 i386.socket i386.socketcall) SB_ENV=()
	host_i386 && return 0
	ABIS=(x86_64) SB_ENV=(-e SOCKPROBE_X86_64_ONLY=1)
	echo "# i386: not checked, this host faults on int \$0x80 (the ABI is unreachable)" >&3
}

# probe ARGS...: sockprobe 40 38 1 in a sandbox with ARGS; checks every line.
probe() {
	abis
	run -0 sb --network none "${SB_ENV[@]}" "$@" -- sockprobe 40 38 1
	echo "$output" >&3
	local abi
	for abi in "${ABIS[@]}"; do
		[[ $output == *"$abi 40: 1"* ]] # EPERM: the family refused
		[[ $output == *"$abi 38: 1"* ]]
	done
	# AF_UNIX through the direct calls still works; socketcall is refused whole
	[[ $output == *"x86_64 1: OK"* ]]
	[ ${#ABIS[@]} = 1 ] && return 0
	[[ $output == *"i386.socket 1: OK"* ]]
	[[ $output == *"i386.socketcall 1: 1"* ]]
}

@test "socket families: AF_VSOCK and AF_ALG refused at socket, i386 socket and socketcall" {
	probe
}

@test "socket families: under runc and crun the i386 ABI is not in the profile they get" {
	# Their libseccomp would write socket's rule on socketcall without its family (hutch's
	# own filters guard it, sc-mux.c): the profile they are given has no i386, whose calls
	# then take the bad-arch action, SIGSYS. x86_64's filter holds as natively.
	local rt status_i386=159
	abis
	[ ${#ABIS[@]} = 3 ] || status_i386=0 # only x86_64 probed: nothing to kill
	for rt in runc crun; do
		command -v "$rt" >/dev/null || continue
		run -"$status_i386" sb --network none "${SB_ENV[@]}" --runtime "$rt" -- sockprobe 40 38
		echo "# $rt: $output" >&3
		[[ $output == *"x86_64 40: 1"* ]]
		[[ $output != *"i386.socket 40"* ]] # killed at its first int $0x80
		run -0 sb --network none --runtime "$rt" -- sh -c 'sockprobe 2>&1; echo ok'
	done
}

@test "socket families: the same in host mode" {
	abis
	run -0 "$HUTCH" sandbox --isolation landlock --network none "${SB_ENV[@]}" \
		--allow-read "$SB_IMAGES/full/bin" -- "$SB_IMAGES/full/bin/sockprobe" 40 38
	echo "$output" >&3
	[[ $output != *OK* ]]
}
