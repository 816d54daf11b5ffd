#!/usr/bin/env bats
# Network namespaces: a new one has lo up and nothing else; one made with `ip netns add` is
# joined by path; none at all means the host's.

load ../helpers

@test "netns: a new network namespace has lo, up, and nothing else" {
	set_args sh -c 'ls /sys/class/net; cat /sys/class/net/lo/flags; ip -o -4 addr show lo'
	run_ok
	[ "${lines[0]}" = lo ]
	[ $((${lines[1]} & 1)) -eq 1 ] # IFF_UP
	[[ ${lines[2]} == *"inet 127.0.0.1/8"* ]]
	[ "$(readlink /proc/self/ns/net)" != "" ]
}

@test "netns: joins a namespace made with ip netns add, by path" {
	command -v ip >/dev/null || skip "ip (iproute2) missing"
	local ns=$TAG
	ip netns add "$ns"
	track_netns "$ns"
	ip -n "$ns" link add hutchdummy0 type dummy 2>/dev/null || true
	update_config '.linux.namespaces |= map(if .type == "network" then .path = $p else . end)' \
		--arg p "/var/run/netns/$ns"
	set_args sh -c 'readlink /proc/self/ns/net; ls /sys/class/net'
	run_ok
	[ "${lines[0]}" = "net:[$(stat -L -c %i "/var/run/netns/$ns")]" ]
	if ip -n "$ns" link show hutchdummy0 >/dev/null 2>&1; then
		grep -qx hutchdummy0 <<<"$output"
	fi
	# the namespace outlives the container
	ip netns list | grep -q "^$ns\b"
}

@test "netns: without a network namespace the host's is used" {
	remove_ns network
	set_args readlink /proc/self/ns/net
	run_ok
	[ "$output" = "$(readlink /proc/self/ns/net)" ]
}

@test "netns: a path that is not a network namespace is refused" {
	touch "$TEST_DIR/not-a-ns"
	update_config '.linux.namespaces |= map(if .type == "network" then .path = $p else . end)' \
		--arg p "$TEST_DIR/not-a-ns"
	run_bg create "$ID"
	[ "$status" -eq 1 ]
	[[ $output == *not-a-ns* ]]
	assert_no_leftovers
	update_config '.linux.namespaces |= map(if .type == "network" then .path = "/proc/1/ns/pid" else . end)'
	run_bg create "$ID"
	[ "$status" -eq 1 ]
	assert_no_leftovers
}
