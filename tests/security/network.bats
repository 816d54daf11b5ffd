#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
#
# --network bridge attacked (docs/networking.md). No packet leaves this machine: hutch runs
# in a network namespace the test makes ("the host", $HOSTNS), wired to a second one ("the
# internet" and a neighbour with a route to the sandboxes' subnet through the host,
# $OUTNS), where dnsmasq on 192.0.2.53 answers the test's names with whatever address an
# attacker who owns an allowed domain would give: the host's own, its gateway, the metadata
# service, private and loopback ones, behind CNAMEs too. Checked:
#  - an allowed name's answer is filtered before anything is opened (UDP, TCP, CNAME), and
#    the firewall refuses the host and the special ranges before any name's addresses;
#  - nothing outside reaches a sandbox's ports but --publish;
#  - the per-sandbox cap on tracked connections, and its entries gone when it ends;
#  - one sandbox's refused destinations cannot fill or empty another's.

load ../integration/helpers
load ../integration/net-helpers
bats_require_minimum_version 1.5.0

setup_file() {
	file_runs_here && [ -x "$BUSYBOX" ] || return 0
	NET_IMAGE=$(mktemp -d /tmp/hutch-it-net.XXXXXX)
	chmod 755 "$NET_IMAGE"
	cp -a "$(rootfs_template)" "$NET_IMAGE/img"
	mkdir -p "$NET_IMAGE/img/workspace" "$NET_IMAGE/b"
	ln -s ../img "$NET_IMAGE/b/rootfs"
	BUNDLE=$NET_IMAGE/b install_static_helper netprobe # /bin/netprobe
	BUNDLE=$NET_IMAGE/b install_static_helper netforge # /bin/netforge, and the host's
	NETFORGE=${HUTCH_HELPERS_BIN:-$BATS_RUN_TMPDIR/bin}/netforge.static
	export NET_IMAGE NETFORGE
}

teardown_file() {
	[ -z "${NET_IMAGE:-}" ] || rm -rf --one-file-system "$NET_IMAGE"
}

# The names of the attack: NAME ADDRESS lines for dnsmasq's hosts file.
HOSTS='198.51.100.1 lan.allowed.test
10.89.0.1 gw.allowed.test
169.254.169.254 meta.allowed.test
10.250.0.5 priv.allowed.test
127.0.0.1 loop.allowed.test
203.0.113.7 deny.allowed.test
192.0.2.10 mixed.allowed.test
10.250.0.5 mixed.allowed.test
192.0.2.10 ok.allowed.test
10.250.0.5 inner.other.test'
NAMES='lan gw meta priv loop deny mixed cname ok'

setup() {
	[ -x "$BUSYBOX" ] || skip "$BUSYBOX missing (apt-get install busybox-static)"
	command -v dnsmasq >/dev/null || skip "dnsmasq missing (apt-get install dnsmasq-base)"
	setup_tmp
	net_setup
	ip -n "$HOSTNS" route add default via 198.51.100.2
	local a
	for a in 192.0.2.10 192.0.2.53 192.0.2.60 203.0.113.7 10.250.0.5 169.254.169.254; do
		ip -n "$OUTNS" addr add "$a/32" dev lo
	done
	echo "$HOSTS" >"$TEST_DIR/hosts"
	ip netns exec "$OUTNS" dnsmasq --keep-in-foreground --conf-file=/dev/null --no-resolv \
		--no-hosts --addn-hosts="$TEST_DIR/hosts" --cname=cname.allowed.test,inner.other.test \
		--listen-address=192.0.2.53 --bind-interfaces --pid-file= --user=root --group=root \
		--local-ttl=1 2>"$TEST_DIR/dnsmasq.log" &
	SRV_PIDS+=($!)
	for a in 192.0.2.10:80 203.0.113.7:80 10.250.0.5:80 169.254.169.254:80; do
		serve "$a"
	done
	NS=host serve 198.51.100.1:8080 # the host's own address, not the gateway's
	NS=host serve 0.0.0.0:8081      # every address of the host, the gateway's too
	for a in 192.0.2.10:80 10.250.0.5:80 169.254.169.254:80 203.0.113.7:80; do
		wait_listen "$OUTNS" "$a"
	done
	wait_listen "$HOSTNS" 198.51.100.1:8080
	wait_listen "$HOSTNS" 0.0.0.0:8081
	IMAGE=$NET_IMAGE/img
}

teardown() {
	net_teardown
}

# sbn ARGS...: hutch sandbox --network bridge in the test's "host", upstream DNS in "the
# internet". --as-root: its capabilities are the most a sandbox has.
sbn() {
	timeout -k 5 "$HUTCH_CMD_TIMEOUT" nsenter --net="/run/netns/$HOSTNS" \
		"$HUTCH" sandbox --as-root --image "$IMAGE" --network bridge \
		--dns 192.0.2.53 --timeout 25 "$@"
}

# forge_in ARGS... -- SCRIPT: a sandbox (sbn ARGS) that idles while SCRIPT runs from the host
# in its network namespace, with raw sockets: no sandbox has CAP_NET_RAW any more (the first
# layer), so this is a process that got them some other way, against the firewall's checks
# (the second). FORGE_AFTER, if set, runs while the sandbox still lives. SCRIPT's output and
# status are forge_in's; the sandbox's report is where ARGS put it.
forge_in() {
	local args=() m pid sbpid st=0
	while [ "$1" != -- ]; do
		args+=("$1")
		shift
	done
	shift
	mkdir -p "$TEST_DIR/forgebin"
	ln -sf "$NETFORGE" "$TEST_DIR/forgebin/netforge"
	m=$((600000 + RANDOM * 7 + BATS_TEST_NUMBER)) # a command line no other test's
	sbn "${args[@]}" -- sleep "$m" >"$TEST_DIR/forge.sb" 2>&1 &
	sbpid=$!
	for _ in $(seq 200); do
		pid=$(pgrep -x -f "sleep $m") && break
		sleep 0.05
	done
	[ -n "$pid" ] || {
		cat "$TEST_DIR/forge.sb" >&2
		return 1
	}
	PATH=$TEST_DIR/forgebin:$PATH nsenter --net="/proc/$pid/ns/net" sh -c "$1" 2>&1 || st=$?
	[ -z "${FORGE_AFTER:-}" ] || eval "$FORGE_AFTER"
	kill "$pid"
	wait "$sbpid" || true
	return $st
}

# What the sandbox prints for each URL ("REFUSED URL" when the connection failed).
FETCH='for u in "$@"; do wget -q -O - "$u" 2>/dev/null || echo "REFUSED $u"; done'
# Each attack name over UDP and TCP from the sandbox, through hutch's forwarder.
LOOKUPS='for n in '$NAMES'; do for p in udp tcp; do echo "== $n $p"
	netprobe dns $p 10.89.0.1 $n.allowed.test; done; done'
# The host's own address and its gateway, the metadata service, a private and a denied one.
TARGETS=(http://198.51.100.1:8080/ http://10.89.0.1:8081/ http://169.254.169.254/
	http://10.250.0.5/ http://203.0.113.7/)

# answer NAME PROTO: what netprobe printed for that lookup.
answer() {
	awk -v h="== $1 $2" '$0 == h {on = 1; next} !/^(rcode|A |CNAME)/ {on = 0} on' <<<"$output"
}

@test "network: an allowed name's answer opens neither the host, its gateway, the metadata service nor a private range (UDP, TCP, CNAME)" {
	run -0 sbn --egress restricted --allow-host '*.allowed.test' --deny-cidr 203.0.113.0/24 \
		--report "$TEST_DIR/r.json" -- sh -c "$LOOKUPS; $FETCH" _ "${TARGETS[@]}" \
		http://ok.allowed.test/
	echo "$output"
	local a p n
	for a in 198.51.100.1 10.89.0.1 169.254.169.254 10.250.0.5 127.0.0.1 203.0.113.7; do
		! grep -qx "A $a" <<<"$output" || {
			echo "an answer carried $a" >&2
			return 1
		}
	done
	for p in udp tcp; do
		for n in lan gw meta priv loop deny; do
			[ "$(answer $n $p | head -1)" = "rcode 0 answers 0" ]
		done
		[ "$(answer cname $p)" = $'rcode 0 answers 1\nCNAME' ] # the chain, not its end
		[ "$(answer mixed $p)" = $'rcode 0 answers 1\nA 192.0.2.10' ]
		[ "$(answer ok $p)" = $'rcode 0 answers 1\nA 192.0.2.10' ]
	done
	# Nothing was opened: each address is refused after the lookups, as before them.
	for a in "${TARGETS[@]}"; do
		[[ "$output" == *"REFUSED $a"* ]]
	done
	[[ "$output" == *"ok 192.0.2.10"* ]]
	# 8 addresses removed per protocol (mixed and cname one each).
	[ "$(jq .egress.dns.addresses_dropped "$TEST_DIR/r.json")" = 16 ]
	check_report "$TEST_DIR/r.json"
	nothing_left
}

@test "network: only an --allow-cidr keeps a special range in answers, and it alone opens it" {
	# The metadata service allowed on port 80, a private address on port 81 only: their
	# answers are relayed; the name (no port) does not widen the allow to port 80.
	run -0 sbn --egress restricted --allow-host '*.allowed.test' \
		--allow-cidr 169.254.169.254:80 --allow-cidr 10.250.0.5:81 -- sh -c \
		'netprobe dns udp 10.89.0.1 meta.allowed.test
		netprobe dns tcp 10.89.0.1 priv.allowed.test
		netprobe dns udp 10.89.0.1 lan.allowed.test; '"$FETCH" _ http://meta.allowed.test/ \
		http://priv.allowed.test/ http://198.51.100.1:8080/
	echo "$output"
	[[ "$output" == *"A 169.254.169.254"* ]]
	[[ "$output" == *"A 10.250.0.5"* ]]
	[[ "$output" != *"A 198.51.100.1"* ]]
	[[ "$output" == *"ok 169.254.169.254"* ]]
	[[ "$output" == *"REFUSED http://priv.allowed.test/"* ]]
	[[ "$output" == *"REFUSED http://198.51.100.1:8080/"* ]]
	nothing_left
}

# The sandbox's veth, once its elements are in the firewall.
sandbox_veth() {
	local v
	for _ in $(seq 100); do
		v=$(ip netns exec "$HOSTNS" nft list set inet hutch sandboxes 2>/dev/null |
			grep -Eo '"hv[0-9a-f]{8}"' | head -1)
		[ -n "$v" ] && echo "$v" && return 0
		sleep 0.1
	done
	return 1
}

@test "network: the firewall refuses the host and the special ranges before any name's addresses" {
	# What an allowed name's answer opened before: put in the set by hand, as if it had.
	mkdir "$TEST_DIR/ws"
	chown 1000:1000 "$TEST_DIR/ws"
	sbn --egress restricted --workspace "$TEST_DIR/ws" -- sh -c \
		'while [ ! -e /workspace/go ]; do sleep 0.1; done; '"$FETCH" _ \
		"${TARGETS[@]:0:4}" >"$TEST_DIR/out" 2>&1 &
	local pid=$! veth a
	veth=$(sandbox_veth)
	for a in 198.51.100.1 10.89.0.1 169.254.169.254 10.250.0.5; do
		ip netns exec "$HOSTNS" nft add element inet hutch dns_net \
			"{ $veth . $a timeout 60s }"
	done
	touch "$TEST_DIR/ws/go"
	wait "$pid"
	cat "$TEST_DIR/out"
	for a in "${TARGETS[@]:0:4}"; do
		grep -qF "REFUSED $a" "$TEST_DIR/out"
	done
	# In the rules: no name's set before the special ranges, none at all towards the host.
	run -0 ip netns exec "$HOSTNS" nft list chain inet hutch egress
	local special dnsnet
	special=$(grep -n '@special' <<<"$output" | cut -d: -f1)
	dnsnet=$(grep -n '@dns_net' <<<"$output" | cut -d: -f1)
	[ "$special" -lt "$dnsnet" ]
	run -0 ip netns exec "$HOSTNS" nft list chain inet hutch host_in
	[[ "$output" != *dns_net* && "$output" != *dns_port* ]]
	nothing_left
}

@test "network: a neighbour routing to the subnet reaches no sandbox port; replies and --publish work" {
	ip -n "$OUTNS" route add 10.89.0.0/24 via 198.51.100.1
	mkdir "$TEST_DIR/ws"
	echo served >"$TEST_DIR/ws/index.html"
	chown -R 1000:1000 "$TEST_DIR/ws"
	sbn --publish 198.51.100.1:18080:8000 --workspace "$TEST_DIR/ws" -- sh -c \
		'httpd -f -p 8000 -h /workspace & wget -q -O - http://192.0.2.10/; sleep 6' \
		>"$TEST_DIR/out" 2>&1 &
	local pid=$! got=
	# From the host itself (not forwarded): the server is up.
	for _ in $(seq 50); do
		got=$(ip netns exec "$HOSTNS" "$BUSYBOX" wget -q -O - http://10.89.0.2:8000/ 2>/dev/null) &&
			break
		sleep 0.1
	done
	[ "$got" = served ]
	# The neighbour: neither TCP nor ping gets through.
	run timeout 3 ip netns exec "$OUTNS" "$BUSYBOX" wget -q -O - http://10.89.0.2:8000/
	[ "$status" -ne 0 ]
	[[ "$output" != *served* ]]
	run ip netns exec "$OUTNS" "$BUSYBOX" ping -c 1 -W 1 10.89.0.2
	[ "$status" -ne 0 ]
	# --publish on the host's address: the neighbour's way in.
	run -0 in_out "$BUSYBOX" wget -q -O - http://198.51.100.1:18080/
	[ "$output" = served ]
	wait "$pid"
	cat "$TEST_DIR/out"
	grep -q "ok 192.0.2.10" "$TEST_DIR/out" # its own connection's replies came back
	nothing_left
}

# listen_hold: a TCP listener on 192.0.2.60:9000 in "the internet" whose connections stay
# established (its backlog holds them) until the test ends.
listen_hold() {
	ip netns exec "$OUTNS" python3 -c 'import socket, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("192.0.2.60", 9000)); s.listen(4096); time.sleep(80)' &
	SRV_PIDS+=($!)
	wait_listen "$OUTNS" 192.0.2.60:9000
}

# ct_of ADDR: the host's tracked connections from or to ADDR.
ct_of() {
	ip netns exec "$HOSTNS" conntrack -L 2>/dev/null | grep -E "(src|dst)=$1 " || true
}

@test "network: --max-connections caps a sandbox's tracked connections; its entries go when it ends" {
	command -v conntrack >/dev/null || skip "conntrack missing (apt-get install conntrack)"
	listen_hold
	# The default cap (1024) lets 300 through; once it has ended, none of its entries is left.
	run -0 sbn --report "$TEST_DIR/r1.json" -- netprobe conns 192.0.2.60 9000 9000 300 1
	echo "$output"
	[[ "$output" == *"ok 300 refused 0 other 0"* ]]
	net_settled # its network helper removes them just after hutch returns
	[ -z "$(ct_of 10.89.0.2)" ] || {
		echo "left in the host's table: $(ct_of 10.89.0.2 | wc -l) entries, such as" >&2
		ct_of 10.89.0.2 | head -2 >&2
		return 1
	}
	[ "$(jq .egress.max_connections "$TEST_DIR/r1.json")" = 1024 ]
	[ "$(jq .egress.connections_over_limit "$TEST_DIR/r1.json")" = 0 ]
	# A cap of 200 and 400 connections: 200 refused at once (a reset), counted in the report.
	run -0 sbn --max-connections 200 --report "$TEST_DIR/r2.json" -- \
		netprobe conns 192.0.2.60 9000 9000 400 1
	echo "$output"
	[[ "$output" == *"ok 200 refused 200 other 0"* ]]
	[ "$(jq .egress.max_connections "$TEST_DIR/r2.json")" = 200 ]
	[ "$(jq .egress.connections_over_limit "$TEST_DIR/r2.json")" = 200 ]
	check_report "$TEST_DIR/r2.json"
	net_settled
	[ -z "$(ct_of 10.89.0.2)" ]
	# The profile's key is the flag's.
	echo '{ "version": 1, "network": "bridge", "max_connections": 100 }' >"$TEST_DIR/p.json"
	run -0 sbn --profile "$TEST_DIR/p.json" -- netprobe conns 192.0.2.60 9000 9000 150 0
	[[ "$output" == *"ok 100 refused 50 other 0"* ]]
	run -125 sbn --max-connections 5 -- true
	[[ "$output" == *"--max-connections 5: expected 16 to 1048576"* ]]
	run -125 nsenter --net="/run/netns/$HOSTNS" "$HUTCH" sandbox --image "$IMAGE" \
		--max-connections 100 -- true
	[[ "$output" == *"need --network bridge"* ]]
	nothing_left
}

@test "network: refused destinations are per sandbox: one filling its own leaves another's intact" {
	# A is refused on every port of a private address (65535 destinations: an older hutch's
	# shared set of refused destinations held that many) and stays on; B then is refused twice.
	sbn --report "$TEST_DIR/a.json" -- sh -c \
		'netprobe conns 10.250.0.5 1 65535 65535 0; echo filled; sleep 3' \
		>"$TEST_DIR/a.out" 2>&1 &
	local pid=$!
	for _ in $(seq 600); do
		grep -q filled "$TEST_DIR/a.out" && break
		sleep 0.1
	done
	cat "$TEST_DIR/a.out"
	grep -q "other 0" "$TEST_DIR/a.out"
	run -0 sbn --report "$TEST_DIR/b.json" -- sh -c "$FETCH" _ http://10.250.0.5/ \
		http://10.250.0.5/
	jq -c .egress "$TEST_DIR/b.json"
	[ "$(jq .egress.connections_refused "$TEST_DIR/b.json")" = 2 ]
	[ "$(jq -c .egress.refused_destinations "$TEST_DIR/b.json")" = \
		'[{"address":"10.250.0.5","protocol":"tcp","port":80,"attempts":2}]' ]
	wait "$pid"
	jq -c .egress "$TEST_DIR/a.json"
	# A's own: every attempt counted (by the refusal or by its cap), its list bounded.
	[ "$(jq '.egress.connections_refused + .egress.connections_over_limit' "$TEST_DIR/a.json")" = 65535 ]
	[ "$(jq '.egress.refused_destinations | length' "$TEST_DIR/a.json")" = 8 ]
	nothing_left
}

# wait_lines FILE REGEX N: until FILE has N lines matching REGEX (5 s).
wait_lines() {
	for _ in $(seq 50); do
		[ "$(grep -cE "$2" "$1" 2>/dev/null)" -ge "$3" ] && return 0
		sleep 0.1
	done
	echo "$1: fewer than $3 lines matching $2:" >&2
	cat "$1" >&2
	return 1
}

# flows: UDP "flows" for a forging sandbox to aim at, all to 192.0.2.10:7000 in "the
# internet" (a sink that answers nothing and records what reaches it, $TEST_DIR/sink):
# sandbox A's from 10.89.0.2:6000, masqueraded to the host's 198.51.100.1:6000 ($TEST_DIR/a,
# its hutch's pid in A_PID; at its end it sends the sink an ICMP error about its own flow),
# and the host's from 198.51.100.1:5353 ($TEST_DIR/host; after A's:
# the host tracks connections once hutch's table is there). Each victim prints "got TEXT" for
# what its socket received and "refused" for an ICMP error.
flows() {
	# (not through in_out: a function in the background is a subshell, whose kill -9 would
	# leave the sink running)
	ip netns exec "$OUTNS" "$NETFORGE" sink 192.0.2.10 7000 25 >"$TEST_DIR/sink" &
	SRV_PIDS+=($!)
	for _ in $(seq 50); do
		in_out ss -Hlun "src 192.0.2.10:7000" | grep -q . && break
		sleep 0.1
	done
	sbn -- sh -c 'ip -4 -o addr show eth0; netforge flow 0.0.0.0 6000 192.0.2.10 7000 8' \
		>"$TEST_DIR/a" 2>&1 &
	A_PID=$!
	wait_lines "$TEST_DIR/sink" "^from 198.51.100.1:6000 hello" 1
	grep -q "inet 10.89.0.2/" "$TEST_DIR/a"
	# A's own ICMP error about its own flow (raw, from its namespace: no sandbox has raw
	# sockets), which the other end must still get.
	local apid
	apid=$(pgrep -x -f "netforge flow 0.0.0.0 6000 192.0.2.10 7000 8")
	nsenter --net="/proc/$apid/ns/net" "$NETFORGE" unreach 10.89.0.2 192.0.2.10 192.0.2.10 \
		7000 10.89.0.2 6000 >/dev/null
	ip netns exec "$HOSTNS" "$NETFORGE" flow 198.51.100.1 5353 192.0.2.10 7000 10 \
		>"$TEST_DIR/host" &
	SRV_PIDS+=($!)
	wait_lines "$TEST_DIR/sink" "^from 198.51.100.1:5353 hello" 1
}

# unreachs: the ICMP destination unreachable messages "the internet" has received.
unreachs() {
	in_out awk '/^Icmp:/ && !h {for (i = 1; i <= NF; i++) if ($i == "InDestUnreachs") c = i; h = 1; next}
		/^Icmp:/ {print $c}' /proc/net/snmp
}

# lacks FILE REGEX: no line of FILE matches (a bare "! grep" never fails a bats test).
lacks() {
	if grep -qE "$2" "$1"; then
		echo "$1 has $2:" >&2
		cat "$1" >&2
		return 1
	fi
}

@test "network: a forged source is dropped before conntrack: neither a reply of the host's or another sandbox's flow nor another's original direction" {
	flows
	# Beside the firewall, the kernel's reverse path filter on the sandbox's veth (and no
	# source route accepted there, below).
	[ "$(ip netns exec "$HOSTNS" cat /proc/sys/net/ipv4/conf/hv0a590002/rp_filter)" = 1 ]
	[ "$(ip netns exec "$HOSTNS" cat /proc/sys/net/ipv4/conf/hv0a590002/accept_source_route)" = 0 ]
	# B may reach nothing; it forges a reply to the host's flow, one to A's (after its NAT)
	# and A's original direction, each from the flow's own addresses and ports.
	# No raw socket in the sandbox now (the first layer): hutch's own --as-root has none.
	run sbn -- netforge udp 192.0.2.10 7000 198.51.100.1 5353 probe
	[[ "$output" != *sent* ]]
	run -0 forge_in --egress restricted --report "$TEST_DIR/b.json" -- '
		netforge udp 192.0.2.10 7000 198.51.100.1 5353 to-host
		netforge udp 192.0.2.10 7000 198.51.100.1 6000 to-a
		netforge udp 10.89.0.2 6000 192.0.2.10 7000 exfil'
	echo "$output"
	[ "$(grep -c sent <<<"$output")" = 3 ]
	wait "$A_PID"
	sleep 1
	cat "$TEST_DIR/host" "$TEST_DIR/a" "$TEST_DIR/sink"
	lacks "$TEST_DIR/host" got
	lacks "$TEST_DIR/a" got
	lacks "$TEST_DIR/sink" exfil
	# Each was counted as refused, as the sandbox's own.
	jq -c .egress "$TEST_DIR/b.json"
	[ "$(jq .egress.connections_refused "$TEST_DIR/b.json")" = 3 ]
	nothing_left
}

@test "network: an ICMP error about another party's flow is refused and counted, whatever its source" {
	local unreach
	unreach=$(unreachs)
	flows
	# From B's own address: port unreachable about the host's flow and about A's (after its
	# NAT: the host's address and port 6000), as a router on their path would send.
	run -0 forge_in --egress restricted --report "$TEST_DIR/b.json" -- '
		b=$(ip -4 -o addr show eth0 | awk "{print \$4}" | cut -d/ -f1)
		netforge unreach $b 198.51.100.1 198.51.100.1 5353 192.0.2.10 7000
		netforge unreach $b 198.51.100.1 198.51.100.1 6000 192.0.2.10 7000'
	echo "$output"
	[ "$(grep -c sent <<<"$output")" = 2 ]
	wait "$A_PID"
	sleep 1
	cat "$TEST_DIR/host" "$TEST_DIR/a"
	lacks "$TEST_DIR/host" refused
	lacks "$TEST_DIR/a" refused
	jq -c .egress "$TEST_DIR/b.json"
	[ "$(jq .egress.connections_refused "$TEST_DIR/b.json")" = 2 ]
	# A's own error about its own flow still reaches the other end.
	[ "$(unreachs)" -gt "$unreach" ]
	nothing_left
}

# upstream_ct PROTO: the host's tracked connections to the upstream DNS server.
upstream_ct() {
	ip netns exec "$HOSTNS" conntrack -L -p "$1" -d 192.0.2.53 2>/dev/null || true
}

@test "network: lookups through the DNS forwarder leave few entries of the host's in its connection table" {
	command -v conntrack >/dev/null || skip "conntrack missing (apt-get install conntrack)"
	# Each lookup was forwarded from a socket of its own: the host's entries, which no cap
	# sees (one sandbox made 16,100 TCP TIME_WAIT and 2,805 UDP ones under a cap of 16).
	run -0 sbn --max-connections 16 -- sh -c '
		netprobe dnsmany udp 10.89.0.1 ok.allowed.test 300
		netprobe dnsmany tcp 10.89.0.1 ok.allowed.test 30'
	echo "$output"
	[[ "$output" == *"answered 300 of 300"* ]]
	[[ "$output" == *"answered 30 of 30"* ]]
	upstream_ct udp
	upstream_ct tcp | sort | uniq -c | sort -rn | head -3
	# UDP: one socket per upstream, reused (IDs tell the answers apart).
	[ "$(upstream_ct udp | wc -l)" -le 2 ]
	# TCP: each connection ends with a reset, which leaves no TIME_WAIT (120 s).
	[ "$(upstream_ct tcp | grep -c TIME_WAIT)" = 0 ]
	nothing_left
}

@test "network: forged ARP from a sandbox adds nothing to the host's neighbour table" {
	# The table is the whole host's (gc_thresh3: 1024 entries): 100 requests for the gateway,
	# each from another sender address, made 100 STALE entries on the sandbox's veth. The
	# host's reverse path filter loose, as systemd's sysctl.d sets it: it then stops none.
	ip netns exec "$HOSTNS" sysctl -qw net.ipv4.conf.all.rp_filter=2
	local n
	FORGE_AFTER='sleep 0.2; veth=$(sandbox_veth | tr -d "\""); ip -n "$HOSTNS" -4 neigh show dev "$veth" >"$TEST_DIR/neigh"'
	run -0 forge_in -- 'netforge arp eth0 100 10.89.0.1'
	unset FORGE_AFTER
	[[ "$output" == *"sent 100"* ]]
	head -3 "$TEST_DIR/neigh"
	n=$(wc -l <"$TEST_DIR/neigh")
	[ "$n" -le 1 ]
	# The sandbox still reaches its gateway (ARP from its own address), and is reached.
	run -0 sbn -- netprobe dns udp 10.89.0.1 ok.allowed.test
	[[ "$output" == *"A 192.0.2.10"* ]]
	nothing_left
}

@test "network: a source-routed packet cannot ride a connection to the host out to another destination" {
	# Only where the host accepts source routes (conf/all here, in the test's "host"):
	# a DNS flow to the gateway, then a datagram on it with a loose source route naming
	# 192.0.2.10, which the host forwarded there as part of that established flow.
	# (The receiving end too: Linux drops a packet that carries a source route otherwise,
	# where an attacker's server would just read it.)
	ip netns exec "$HOSTNS" sysctl -qw net.ipv4.conf.all.accept_source_route=1
	in_out sysctl -qw net.ipv4.conf.all.accept_source_route=1
	ip netns exec "$OUTNS" "$NETFORGE" sink 192.0.2.10 53 10 >"$TEST_DIR/sink" &
	SRV_PIDS+=($!)
	for _ in $(seq 50); do
		in_out ss -Hlun "src 192.0.2.10:53" | grep -q . && break
		sleep 0.1
	done
	run -0 forge_in --egress restricted --allow-host ok.allowed.test --report "$TEST_DIR/r.json" \
		-- 'b=$(ip -4 -o addr show eth0 | awk "{print \$4}" | cut -d/ -f1)
		netforge query 40000 10.89.0.1 ok.allowed.test
		netforge lsrr $b 40000 10.89.0.1 53 192.0.2.10 exfil'
	echo "$output"
	[[ "$output" == *"answered"*"sent"* ]]
	sleep 1
	cat "$TEST_DIR/sink"
	lacks "$TEST_DIR/sink" exfil
	[ "$(jq .egress.connections_refused "$TEST_DIR/r.json")" = 1 ]
	nothing_left
}

@test "network: --subnet may not overlap the host's addresses or the networks on its links" {
	# The uplink's network: the gateway would be the host's own address, a sandbox the
	# address of the host's gateway ("the internet").
	run -125 sbn --subnet 198.51.100.0/24 -- ip -4 -o addr show eth0
	echo "$output"
	[ "$(wc -l <<<"$output")" = 1 ]
	[[ "$output" == *"--subnet 198.51.100.0/24: overlaps the host's route 198.51.100.0/24 dev uplink"* ]]
	run -125 sbn --subnet 198.51.0.0/16 -- true
	[[ "$output" == *"--subnet 198.51.0.0/16: overlaps"*"dev uplink"* ]]
	# An address of the host's alone (on lo: no network of its own), and the loopback range.
	ip -n "$HOSTNS" addr add 10.99.0.7/32 dev lo
	run -125 sbn --subnet 10.99.0.0/24 -- true
	[[ "$output" == *"--subnet 10.99.0.0/24: overlaps the host's address 10.99.0.7 (lo)"* ]]
	run -125 sbn --subnet 127.0.0.0/8 -- true
	[[ "$output" == *"--subnet 127.0.0.0/8: overlaps the host's address 127."* ]]
	[ ! -s "$LEASES" ]
	# The sandboxes' own veths and routes are not the host's: the default subnet works with
	# another sandbox on it, and so does a free range beside the host's.
	sbn -- sleep 2 &
	local pid=$!
	sandbox_veth >/dev/null
	run -0 sbn -- ip -4 -o addr show eth0
	[[ "$output" == *"inet 10.89.0.3/24"* ]]
	wait "$pid"
	run -0 sbn --subnet 198.51.101.0/24 -- ip -4 -o addr show eth0
	[[ "$output" == *"inet 198.51.101.2/24"* ]]
	nothing_left
}
