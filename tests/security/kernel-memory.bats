#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
#
# Memory in the kernel that a sandbox can pin without a process's own pages, beside TCP
# buffers (socket-memory.bats): each kind a process can hold is charged to the sandbox's
# --memory, or its syscall is refused. A sandbox with --memory 32m holds less than 64 MiB
# of each (or is OOM-killed trying). On cgroup v1 UDP receive queues are charged only once
# memory.kmem.tcp.limit_in_bytes is set, as TCP's are: without it a 32m cgroup held 263 MiB
# of them (the hog's stop). AF_PACKET receivers fed by loopback, which no cgroup is charged
# for, held 512 MiB (the hog's stop) under --as-root, whose CAP_NET_RAW is gone; ICMP
# datagram sockets are not opened either. Netlink receive queues are charged to nothing and
# can't be refused (NETLINK_ROUTE's acks): a known limit (docs/design.md). Bounded: every hog
# stops at 256 MiB.

load ../integration/helpers
load ../integration/sandbox-helpers
bats_require_minimum_version 1.5.0

setup_file() {
	sb_images_setup
	sb_image_helpers kmemhog
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

# bounded KIND [ARGS...]: kmemhog KIND in a sandbox with --memory 32m (and ARGS) holds less
# than 64 MiB, or is OOM-killed (status 137, said by the report) for trying.
bounded() {
	local kind=$1
	shift
	rm -f "$TEST_DIR/r.json"
	run sb --memory 32m --network none --report "$TEST_DIR/r.json" "$@" -- kmemhog "$kind" 256
	echo "# $kind $*: status $status: $output" >&3
	if [ "$status" = 137 ]; then # the memory cgroup's OOM kill, not any SIGKILL
		jq -e '.oom_killed == true' "$TEST_DIR/r.json"
		return 0
	fi
	[ "$status" = 0 ]
	[[ $output == "queued "*" MiB" ]]
	output=${output#queued }
	[ "${output% MiB}" -lt 64 ]
}

@test "kernel memory: unix stream socket buffers are charged to --memory" {
	bounded unix-stream
}

@test "kernel memory: unix datagram socket buffers are charged to --memory" {
	bounded unix-dgram
}

@test "kernel memory: pipe buffers are charged to --memory" {
	bounded pipe
}

@test "kernel memory: UDP receive queues are charged to --memory (v1: with the TCP limit)" {
	bounded udp
}

@test "kernel memory: memfd pages are charged to --memory" {
	bounded memfd
}

@test "kernel memory: io_uring_setup is refused by the default seccomp profile" {
	run -0 sb -- kmemhog io_uring
	[ "$output" = "io_uring_setup: Operation not permitted" ]
	run -0 sb --as-root -- kmemhog io_uring
	[ "$output" = "io_uring_setup: Operation not permitted" ]
}

@test "kernel memory: the same under runc and crun" {
	local rt kind
	for rt in runc crun; do
		command -v "$rt" >/dev/null || continue
		for kind in udp unix-stream; do
			bounded "$kind" --runtime "$rt"
		done
		run -0 sb --runtime "$rt" -- kmemhog io_uring
		[ "$output" = "io_uring_setup: Operation not permitted" ]
	done
}

@test "kernel memory: no AF_PACKET nor ICMP socket, --as-root neither (no CAP_NET_RAW)" {
	local rt
	for rt in native runc crun; do
		[ "$rt" = native ] || command -v "$rt" >/dev/null || continue
		run -0 sb --runtime "$rt" --as-root -- sh -c 'grep CapBnd /proc/self/status
			kmemhog packet 256; kmemhog ping 256'
		echo "# $rt --as-root: $output" >&3
		[ "${lines[0]}" = $'CapBnd:\t00000000a80405fb' ] # Docker's set but CAP_NET_RAW (13)
		[ "${lines[1]}" = "socket: Operation not permitted" ]
		[ "${lines[2]}" = "socket: Permission denied" ] # net.ipv4.ping_group_range: none
	done
	run -0 sb -- kmemhog packet 256
	[ "$output" = "socket: Operation not permitted" ]
}
