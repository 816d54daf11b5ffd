#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
#
# hutch sandbox --network bridge|none|host. No traffic ever leaves this machine: hutch runs in
# a network namespace the test makes ("the host", $HOSTNS), which gets its own nft table, and
# a second namespace ("the internet", $OUTNS, on a documentation range: private ranges are
# refused by default) is wired to it by a veth pair, with a busybox httpd whose CGI prints the
# client's address (proving masquerade). After every test: no veth, lease or firewall element
# is left, and the real host's netns is untouched. egress.bats tests the egress policy.
# (busybox wget gets no -T: Debian's busybox-static 1.35 segfaults with it; --timeout instead.)

load ../helpers
load ../net-helpers
bats_require_minimum_version 1.5.0


setup_file() {
	file_runs_here && [ -x "$BUSYBOX" ] || return 0
	BR_IMAGE=$(mktemp -d /tmp/hutch-it-br.XXXXXX)
	chmod 755 "$BR_IMAGE"
	# As it comes: no /etc/resolv.conf, hosts or hostname (hutch makes the mount points in a
	# throw-away layer, never in the image).
	cp -a "$(rootfs_template)" "$BR_IMAGE/img"
	"$INTEGRATION_ROOT/../mkbundle.sh" "$HUTCH" "$BR_IMAGE/demo" >/dev/null
	mkdir -p "$BR_IMAGE/noetc"
	cp -a "$BR_IMAGE/img/bin" "$BR_IMAGE/noetc/bin" # /bin alone: not even /etc
	export BR_IMAGE
}

teardown_file() {
	[ -z "${BR_IMAGE:-}" ] || rm -rf --one-file-system "$BR_IMAGE"
}

setup() {
	[ -x "$BUSYBOX" ] || skip "$BUSYBOX missing (apt-get install busybox-static)"
	setup_tmp
	net_setup
	IMAGE=$BR_IMAGE/img
}

teardown() {
	net_teardown
}

# sbn ARGS...: hutch sandbox inside the test's "host" netns (nsenter keeps our /sys and
# cgroup mounts, which `ip netns exec` would replace). --as-root: the network does not depend
# on the user mode, and one test below covers the default (user-namespaced) sandbox.
sbn() {
	timeout -k 5 "$HUTCH_CMD_TIMEOUT" nsenter --net="/run/netns/$HOSTNS" \
		"$HUTCH" sandbox --as-root --image "$IMAGE" "$@"
}

# An HTTP server in $1 (netns) on $2 (address) whose /cgi-bin/ip answers the client's address.
serve() {
	local ns=$1 addr=$2 www=$TEST_DIR/www
	mkdir -p "$www/cgi-bin"
	printf '#!/bin/sh\nprintf "Content-Type: text/plain\\r\\n\\r\\n%%s\\n" "$REMOTE_ADDR"\n' \
		>"$www/cgi-bin/ip"
	chmod 755 "$www/cgi-bin/ip"
	ip netns exec "$ns" "$BUSYBOX" httpd -f -p "$addr:8080" -h "$www" &
	SRV_PIDS+=($!)
	for _ in $(seq 50); do
		ip netns exec "$ns" ss -Hltn "src $addr:8080" | grep -q 8080 && return 0
		sleep 0.1
	done
	return 1
}

@test "bridge: eth0 has an address from the subnet, a default route and the MTU" {
	run -0 sbn --network bridge --mtu 1400 --hostname agent -- sh -c \
		'ip -4 -o addr show eth0; ip route; cat /sys/class/net/eth0/mtu'
	[[ "$output" == *"inet 10.89.0."*"/24"* ]]
	[[ "$output" == *"default via 10.89.0.1 dev eth0"* ]]
	[[ "$output" == *$'\n1400'* ]]
	nothing_left
}

@test "bridge: resolv.conf, hosts and hostname are generated, the image untouched" {
	run -0 sbn --network bridge --hostname agent --dns 198.51.100.53 -- sh -c \
		'cat /etc/resolv.conf; echo ---; cat /etc/hosts; echo ---; cat /etc/hostname; hostname'
	[[ "$output" == *"nameserver 10.89.0.1"* ]] # hutch's forwarder, --dns its upstream
	[[ "$output" != *"198.51.100.53"* ]]
	[[ "$output" == *"127.0.0.1	localhost"* ]]
	[[ "$output" =~ 10\.89\.0\.[0-9]+$'\t'agent ]]
	[[ "$output" == *$'---\nagent\nagent'* ]]
	[ ! -e "$IMAGE/etc/hosts" ] && [ ! -e "$IMAGE/etc/resolv.conf" ]
	[ ! -e "$IMAGE/etc/hostname" ]
	nothing_left
}

@test "bridge: runs on the README's busybox image and on one with no /etc, as root or not" {
	local img opts
	for img in "$BR_IMAGE/demo/rootfs" "$BR_IMAGE/noetc"; do
		for opts in --as-root --user=1000; do
			run -0 timeout -k 5 "$HUTCH_CMD_TIMEOUT" nsenter --net="/run/netns/$HOSTNS" \
				"$HUTCH" sandbox $opts --image "$img" --network bridge --hostname agent \
				-- sh -c 'ip -4 -o addr show eth0; cat /etc/hostname; id -u'
			echo "$img $opts: $output"
			[[ "$output" == *"inet 10.89.0."* ]]
			[[ "$output" == *$'\nagent\n'* ]]
		done
	done
	[ ! -e "$BR_IMAGE/noetc/etc" ]
	[ ! -e "$BR_IMAGE/demo/rootfs/etc/resolv.conf" ]
	nothing_left
}

@test "bridge: a server on the gateway address is refused, unless allowed" {
	run -0 sbn --network bridge -- true # the first sandbox puts the gateway on the host
	serve "$HOSTNS" 0.0.0.0
	run sbn --network bridge --timeout 10 -- wget -q -O - http://10.89.0.1:8080/cgi-bin/ip
	[ "$status" -ne 0 ]
	run -0 sbn --network bridge --allow-cidr 10.89.0.1:8080 --timeout 10 -- \
		wget -q -O - http://10.89.0.1:8080/cgi-bin/ip
	[[ "$output" == 10.89.0.* ]] # local traffic is not masqueraded
	nothing_left
}

@test "bridge: outbound traffic is masqueraded behind the host's uplink address" {
	serve "$OUTNS" 198.51.100.2
	run -0 sbn --network bridge --timeout 10 -- wget -q -O - http://198.51.100.2:8080/cgi-bin/ip
	[ "$output" = 198.51.100.1 ]
	[ "$(ip netns exec "$HOSTNS" cat /proc/sys/net/ipv4/ip_forward)" = 1 ]
	nothing_left
}

@test "bridge: concurrent sandboxes get distinct addresses" {
	local i pids=()
	for i in 1 2 3; do
		sbn --network bridge -- sh -c \
			'ip -4 -o addr show eth0 | awk "{print \$4}"; sleep 1' >"$TEST_DIR/a$i" &
		pids+=($!)
	done
	# Only these: a bare `wait` would also wait for bats' own test-timeout sleeper.
	wait "${pids[@]}"
	sort -u "$TEST_DIR"/a? >"$TEST_DIR/all"
	cat "$TEST_DIR"/a?
	[ "$(wc -l <"$TEST_DIR/all")" -eq 3 ]
	! grep -qv '^10\.89\.0\.' "$TEST_DIR/all"
	nothing_left
}

@test "bridge: after SIGKILL of hutch the next sandbox reclaims veth, lease and elements" {
	nsenter --net="/run/netns/$HOSTNS" "$HUTCH" sandbox --as-root --image "$IMAGE" --network bridge \
		-- sleep 30 &
	local pid=$!
	for _ in $(seq 100); do
		ip netns exec "$HOSTNS" nft list table inet hutch 2>/dev/null |
			grep -Eq '"hv[0-9a-f]{8}"' && break
		sleep 0.1
	done
	[ -s "$LEASES" ]
	kill -9 "$pid"
	wait "$pid" || true
	sleep 0.5
	run -0 sbn --network bridge -- true
	nothing_left
}

@test "bridge: a network helper killed in the teardown it finishes after hutch returned: the next sandbox removes its elements and lease" {
	# The helper removes the elements and connections, then the lease, once hutch has
	# returned; killed first, it leaves them leased to a dead process.
	HUTCH_TEST_KILL_AT=sandbox:net-teardown run -0 sbn --network bridge -- true
	grep -q "^10.89.0.2 " "$LEASES"
	ip netns exec "$HOSTNS" nft list table inet hutch | grep -Eq '"hv[0-9a-f]{8}"'
	# The next bridge sandbox's sweep removes them, and gets the address again.
	run -0 sbn --network bridge -- ip -4 -o addr show eth0
	[[ "$output" == *"inet 10.89.0.2/24"* ]]
	nothing_left
}

@test "bridge: a helper whose hutch died before its takeover touches nothing of the next sandbox on the address" {
	local helper hp pid
	# A's helper (a report asked: it takes the lease over before it reads the counters)
	# stops before its takeover; A's hutch, waiting for its figures, is killed; B's sweep
	# reclaims the dead hutch's lease and B gets the address, and the veth's name.
	HUTCH_TEST_STOP_AT=sandbox:net-takeover sbn --network bridge \
		--report "$TEST_DIR/a.json" -- true &
	pid=$!
	for _ in $(seq 100); do
		helper=$(awk '$1 == "10.89.0.2" { print $2 }' "$LEASES" 2>/dev/null || true)
		[ -n "$helper" ] && helper=$(pgrep -P "$helper" | while read -r p; do
			grep -q '^State:.*T' "/proc/$p/status" && echo "$p"; done | head -n 1)
		[ -n "$helper" ] && break
		sleep 0.05
	done
	[ -n "$helper" ]
	track_pid "$helper"
	hp=$(awk '$1 == "10.89.0.2" { print $2 }' "$LEASES")
	kill -9 "$hp"
	wait "$pid" || true
	sbn --network bridge --egress restricted -- sleep 3 &
	pid=$!
	for _ in $(seq 100); do
		ip netns exec "$HOSTNS" nft list set inet hutch sandboxes | grep -q hv0a590002 &&
			[ "$(awk '$1 == "10.89.0.2" { print $2 }' "$LEASES" 2>/dev/null)" != "$hp" ] &&
			break
		sleep 0.05
	done
	# A's helper goes on: its takeover fails, and it leaves B's elements be.
	kill -CONT "$helper"
	for _ in $(seq 50); do
		[ -e "/proc/$helper" ] && ! grep -qs '^State:.*Z' "/proc/$helper/status" || break
		sleep 0.1
	done
	run -0 ip netns exec "$HOSTNS" nft list set inet hutch sandboxes
	[[ "$output" == *hv0a590002* ]]
	wait "$pid"
	net_settled
	nothing_left
}

@test "bridge: a network helper that never answers is killed, and hutch removes it all itself" {
	# Stopped before it sends hutch its figures (a report asked for them): hutch waits for
	# them a while (10 s), not for ever, then kills it and does its part.
	HUTCH_TEST_STOP_AT=sandbox:net-takeover run -0 sbn --network bridge \
		--report "$TEST_DIR/r.json" -- true
	[ "$(jq .exit_code "$TEST_DIR/r.json")" = 0 ]
	jq -e '.egress | type == "object"' "$TEST_DIR/r.json"
	net_settled
	nothing_left
}

@test "bridge: the veth has one queue each way" {
	# Asked for none, a veth gets one per CPU and is cut back to one once registered, which
	# waits for an RCU grace period under the RTNL lock: every start's, twice a pair.
	local pid out=""
	sbn --network bridge -- sleep 2 &
	pid=$!
	for _ in $(seq 50); do
		out=$(ip -n "$HOSTNS" -d link show hv0a590002 2>/dev/null) && break
		sleep 0.05
	done
	wait "$pid"
	echo "$out"
	[[ "$out" == *"numtxqueues 1 numrxqueues 1 "* ]]
	net_settled
	nothing_left
}

@test "bridge: the network helper finishes its teardown through a terminal's hang-up" {
	local holder
	# hutch, leading a terminal's session, exits while the helper tears down: the kernel's
	# SIGHUP to the foreground group reaches the helper too. Stopped, it gets one here.
	HUTCH_TEST_STOP_AT=sandbox:net-teardown run -0 sbn --network bridge -- true
	holder=$(awk '$1 == "10.89.0.2" { print $2 }' "$LEASES")
	[ -n "$holder" ] && grep -q '^State:.*T' "/proc/$holder/status"
	track_pid "$holder"
	kill -HUP "$holder"
	kill -CONT "$holder"
	net_settled
	nothing_left
}

@test "bridge: while the last sandbox's network helper still tears down, the next with the same lock, name and workspace starts at once" {
	local ws=$TEST_DIR/ws holder
	mkdir "$ws"
	chown 1000:1000 "$ws"
	# The helper stops itself where its teardown begins: hutch has returned, the helper
	# lingers with the lease, the elements and the tracked connections.
	HUTCH_TEST_STOP_AT=sandbox:net-teardown run -0 sbn --network bridge --lock "l-$TAG" \
		--name "n-$TAG" --workspace "$ws" -- sh -c 'echo a >/workspace/a'
	holder=$(awk '$1 == "10.89.0.2" { print $2 }' "$LEASES")
	[ -n "$holder" ] && grep -q '^State:.*T' "/proc/$holder/status"
	track_pid "$holder"
	# No wait on the lock, the name is free, the workspace is the first's: the next runs,
	# on the next free address.
	run -0 sbn --network bridge --lock "l-$TAG" --no-wait --name "n-$TAG" --workspace "$ws" \
		-- sh -c 'cat /workspace/a; ip -4 -o addr show eth0'
	[[ "$output" == *"a"*"inet 10.89.0.3/24"* ]]
	# Killed there, the helper leaves its part to the next bridge sandbox's sweep.
	kill -9 "$holder"
	for _ in $(seq 50); do
		[ -e "/proc/$holder" ] && ! grep -qs '^State:.*Z' "/proc/$holder/status" || break
		sleep 0.1
	done
	run -0 sbn --network bridge -- true
	nothing_left
}

@test "bridge: an address whose last veth lingers is passed over while another is free" {
	# As the last sandbox's veth does while its kernel removes the network namespace: the
	# next takes another address, and neither fails on it nor deletes it (which waits).
	ip -n "$HOSTNS" link add hv0a590002 type veth peer name linger0
	run -0 sbn --network bridge -- ip -4 -o addr show eth0
	[[ "$output" == *"inet 10.89.0.3/24"* ]]
	ip -n "$HOSTNS" link show hv0a590002 >/dev/null
	ip -n "$HOSTNS" link del hv0a590002
	# Gone, it is the lowest free address again.
	run -0 sbn --network bridge -- ip -4 -o addr show eth0
	[[ "$output" == *"inet 10.89.0.2/24"* ]]
	nothing_left
}

@test "bridge: a default (user-namespaced) sandbox" {
	run nsenter --net="/run/netns/$HOSTNS" "$HUTCH" sandbox --image "$IMAGE" -- true
	[ "$status" -eq 0 ] || skip "a default sandbox does not run here: $output"
	run -0 nsenter --net="/run/netns/$HOSTNS" "$HUTCH" sandbox --image "$IMAGE" \
		--network bridge -- sh -c 'id -u; ip -4 -o addr show eth0'
	[[ "$output" == *"1000"*"inet 10.89.0."* ]]
	nothing_left
}

@test "bridge: --subnet, IPv6 and misuse" {
	run -0 sbn --network bridge --subnet 10.77.0.0/24 -- ip -4 -o addr show eth0
	[[ "$output" == *"inet 10.77.0.2/24"* ]]
	run -125 sbn --network bridge --subnet fd00::/64 -- true
	[[ "$output" == *"not supported"* ]]
	run -125 sbn --network none --dns 10.0.0.1 -- true
	[[ "$output" == *"need --network bridge"* ]]
	run -125 sbn --network bridge --mtu 10 -- true
	[[ "$output" == *"--mtu"* ]]
	nothing_left
}

@test "none: only loopback, and the servers are unreachable" {
	serve "$OUTNS" 198.51.100.2
	run -0 sbn --network none -- sh -c 'ls /sys/class/net; ip -4 route'
	[ "$(echo "$output" | head -1)" = lo ]
	[[ "$output" != *default* ]]
	run sbn --network none --timeout 10 -- wget -q -O - http://198.51.100.2:8080/cgi-bin/ip
	[ "$status" -ne 0 ]
}

@test "host: the same interfaces as the test's namespace" {
	# Through netlink: root in a user namespace cannot mount a sysfs for a network namespace
	# it does not own, so /sys is the host's bind, which shows the namespace that mounted it
	# (here not the test's, which nsenter entered without remounting /sys).
	run -0 sbn --network host -- sh -c 'ip -o link | cut -d: -f2 | cut -d@ -f1'
	[ "$(echo $(echo "$output" | sort))" = "lo uplink" ]
}
