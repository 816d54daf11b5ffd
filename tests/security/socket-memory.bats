#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
#
# Memory a sandbox pins in the kernel, charged to its --memory limit. On cgroup v1 TCP
# buffers are charged to nothing unless memory.kmem.tcp.limit_in_bytes is set: a default
# sandbox (--network none, --memory 64m) held 2.2 GB of them on loopback connections to
# itself, its report said 2.8 MB, and the host's tcp_mem ran out for everyone. Bounded: the
# hog stops at 256 MiB queued, which the unlimited case reaches and the limited one can't.

load ../integration/helpers
load ../integration/sandbox-helpers
bats_require_minimum_version 1.5.0

setup_file() {
	sb_images_setup
	sb_image_helpers tcphog
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

# queued_mib MEMORY [ARGS...]: how much tcphog queued in a sandbox with --memory MEMORY.
queued_mib() {
	local mem=$1
	shift
	run -0 sb --memory "$mem" --network none "$@" -- tcphog 200 256
	echo "# $mem $*: $output" >&3
	[[ $output == "queued "*" MiB" ]]
	output=${output#queued }
	output=${output% MiB}
}

@test "socket memory: TCP buffers on loopback are bounded by --memory" {
	queued_mib 32m
	[ "$output" -lt 64 ]
}

@test "socket memory: the same under runc, crun and runsc" {
	local rt
	for rt in crun runc; do # runc (1.1) ignores kernelTCP: a hook of hutch's sets it
		command -v "$rt" >/dev/null || continue
		queued_mib 32m --runtime "$rt"
		[ "$output" -lt 64 ]
	done
	# runsc: its netstack's buffers are the sentry's own memory, under the limit like any
	# other: the hog is OOM-killed, or stops short
	if command -v runsc >/dev/null; then
		run sb --memory 32m --network none --runtime runsc -- tcphog 200 256
		echo "# runsc: $status $output" >&3
		[ "$status" = 137 ] || [ "${output//[!0-9]/}" -lt 64 ]
	fi
}

@test "socket memory: the limit scales with --memory (not a fixed cap)" {
	queued_mib 128m
	[ "$output" -ge 64 ]
	[ "$output" -lt 192 ]
}
