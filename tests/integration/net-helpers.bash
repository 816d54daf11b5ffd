# SPDX-License-Identifier: Apache-2.0
# What bridge.bats, egress.bats and the security suite's network.bats share: a test network namespace that plays "the host"
# ($HOSTNS: hutch runs there, with its own nft table and leases) wired by a veth pair
# (uplink 198.51.100.1 <-> wan 198.51.100.2) to one that plays "the internet" ($OUTNS), the
# checks that nothing of a sandbox is left there, and that the real host is untouched.
# Loaded after helpers.bash.
NET_ROOT=/run/hutch/net

net_host_snapshot() {
	ip -o link show | awk -F': ' '{print $2}' | sort
	nft list tables 2>/dev/null | sort
}

# net_setup: the two namespaces (named after the test), wired; NS_INO and LEASES set.
net_setup() { untraced _net_setup "$@"; }
_net_setup() {
	command -v nsenter >/dev/null || skip "nsenter missing (util-linux)"
	ldconfig -p | grep -q libnftables.so.1 ||
		skip "libnftables.so.1 missing (apt-get install libnftables1)"
	HOST_BEFORE=$(net_host_snapshot)
	HOSTNS=hutch-test-$$-$BATS_TEST_NUMBER-h
	OUTNS=hutch-test-$$-$BATS_TEST_NUMBER-o
	ip netns add "$HOSTNS"
	track_netns "$HOSTNS"
	ip netns add "$OUTNS"
	track_netns "$OUTNS"
	ip -n "$HOSTNS" link set lo up
	ip -n "$OUTNS" link set lo up
	ip -n "$HOSTNS" link add uplink type veth peer name wan netns "$OUTNS"
	ip -n "$HOSTNS" addr add 198.51.100.1/24 dev uplink
	ip -n "$OUTNS" addr add 198.51.100.2/24 dev wan
	ip -n "$HOSTNS" link set uplink up
	ip -n "$OUTNS" link set wan up
	NS_INO=$(ip netns exec "$HOSTNS" stat -L -c %i /proc/self/ns/net)
	LEASES=$NET_ROOT/$NS_INO/hutch0/leases
}

# net_teardown: the servers in SRV_PIDS, the test's lease space, the bundle; fails when the
# real host's links or nft tables changed. Deleting the test's "host" takes its table along.
net_teardown() { untraced _net_teardown "$@"; }
_net_teardown() {
	local rc=0 p
	for p in "${SRV_PIDS[@]}"; do
		kill -9 "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	[ -z "${NS_INO:-}" ] || rm -rf "${NET_ROOT:?}/$NS_INO"
	teardown_bundle || rc=1
	if [ -n "${HOST_BEFORE:-}" ] && [ "$(net_host_snapshot)" != "$HOST_BEFORE" ]; then
		echo "LEAK: the real host's links or nft tables changed" >&2
		rc=1
	fi
	return $rc
}

# Nothing of any sandbox is left in the test's "host": no veth (the kernel removes it with
# the sandbox's namespace, moments after the run: a kworker's cleanup_net, which waits for
# RTNL and grace periods, and took over 3 s once in a loaded CI run), no lease, no element or
# counter in hutch's tables (its network helper removes them, then the lease, just after
# hutch returns: docs/networking.md).
nothing_left() {
	for _ in $(seq 100); do
		run ip -n "$HOSTNS" -o link show
		[[ "$output" != *" hv"* ]] && [ ! -s "$LEASES" ] && break
		sleep 0.1
	done
	[[ "$output" != *" hv"* ]] || {
		echo "veth left: $output" >&2
		return 1
	}
	[ ! -s "$LEASES" ] || {
		echo "lease left: $(cat "$LEASES")" >&2
		return 1
	}
	run ip netns exec "$HOSTNS" nft list table inet hutch
	! grep -Eq '"hv[0-9a-f]{8}"|counter (ok|no)_hv' <<<"$output" || {
		echo "firewall element left: $output" >&2
		return 1
	}
	run ip netns exec "$HOSTNS" nft list table arp hutch
	! grep -Eq '"hv[0-9a-f]{8}"' <<<"$output" || {
		echo "ARP filter element left: $output" >&2
		return 1
	}
}

# net_settled: the network helpers of the sandboxes that have returned are done (their
# leases are gone): up to 3 s.
net_settled() {
	for _ in $(seq 30); do
		[ -s "$LEASES" ] || return 0
		sleep 0.1
	done
	echo "leases still held: $(cat "$LEASES")" >&2
	return 1
}

# in_out CMD...: CMD inside "the internet".
in_out() {
	ip netns exec "$OUTNS" "$@"
}

# serve ADDR:PORT: busybox httpd there (in $OUTNS, or $HOSTNS with NS=host) answering "ok ADDR".
serve() {
	local ns=$OUTNS where=$1 www=$TEST_DIR/www-${1//[.:]/-}
	[ "${NS:-}" = host ] && ns=$HOSTNS
	mkdir -p "$www"
	echo "ok ${where%:*}" >"$www/index.html"
	ip netns exec "$ns" "$BUSYBOX" httpd -f -p "$where" -h "$www" &
	SRV_PIDS+=($!)
}

wait_listen() {
	local ns=$1 where=$2
	for _ in $(seq 50); do
		ip netns exec "$ns" ss -Hltn "src $where" | grep -q . && return 0
		sleep 0.1
	done
	echo "nothing listens on $where in $ns" >&2
	return 1
}
