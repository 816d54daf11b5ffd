#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
#
# --network bridge's egress policy: the default refusals, --allow-host/--allow-cidr/
# --deny-cidr/--egress, the DNS forwarder, the counters in the report, and the same under
# runc, crun and runsc. No packet leaves this machine: hutch runs in a network namespace the
# test makes ("the host", $HOSTNS, which gets its own nft table), wired by a veth pair
# (198.51.100.1 <-> .2) to a second one ("the internet", $OUTNS) that holds every address
# the sandboxes try: documentation ranges (192.0.2.0/24, 203.0.113.0/24), one private
# (10.250.0.5) and the metadata address (169.254.169.254), with busybox httpd on each and
# dnsmasq on 192.0.2.53 answering the test's names from a hosts file it rereads on SIGHUP.

load ../helpers
load ../net-helpers
bats_require_minimum_version 1.5.0


setup_file() {
	file_runs_here && [ -x "$BUSYBOX" ] || return 0
	EG_IMAGE=$(mktemp -d /tmp/hutch-it-eg.XXXXXX)
	chmod 755 "$EG_IMAGE"
	cp -a "$(rootfs_template)" "$EG_IMAGE/img"
	mkdir -p "$EG_IMAGE/img/workspace"
	export EG_IMAGE
}

teardown_file() {
	[ -z "${EG_IMAGE:-}" ] || rm -rf --one-file-system "$EG_IMAGE"
}

# dns NAME ADDR...: what dnsmasq answers for NAME (rewrites its hosts file, SIGHUP).
dns() {
	local name=$1 a
	shift
	grep -v " $name\$" "$TEST_DIR/hosts" >"$TEST_DIR/hosts.new" || true
	for a in "$@"; do echo "$a $name" >>"$TEST_DIR/hosts.new"; done
	mv "$TEST_DIR/hosts.new" "$TEST_DIR/hosts"
	[ -z "${DNSMASQ_PID:-}" ] || kill -HUP "$DNSMASQ_PID"
}

setup() {
	[ -x "$BUSYBOX" ] || skip "$BUSYBOX missing (apt-get install busybox-static)"
	command -v dnsmasq >/dev/null || skip "dnsmasq missing (apt-get install dnsmasq-base)"
	setup_tmp
	net_setup
	ip -n "$HOSTNS" route add default via 198.51.100.2
	local a
	for a in 192.0.2.10 192.0.2.20 192.0.2.30 192.0.2.40 192.0.2.53 203.0.113.7 10.250.0.5 \
		169.254.169.254; do
		ip -n "$OUTNS" addr add "$a/32" dev lo
	done
	: >"$TEST_DIR/hosts"
	dns allowed.test 192.0.2.10
	dns other.test 192.0.2.20
	dns api.svc.test 192.0.2.40
	dns moving.test 192.0.2.30
	dns private.test 10.250.0.5
	ip netns exec "$OUTNS" dnsmasq --keep-in-foreground --conf-file=/dev/null --no-resolv --no-hosts \
		--addn-hosts="$TEST_DIR/hosts" --listen-address=192.0.2.53 --bind-interfaces \
		--pid-file= --user=root --group=root --local-ttl=1 2>"$TEST_DIR/dnsmasq.log" &
	DNSMASQ_PID=$!
	SRV_PIDS+=($DNSMASQ_PID)
	for a in 192.0.2.10:80 192.0.2.20:80 192.0.2.30:80 192.0.2.40:80 203.0.113.7:80 \
		10.250.0.5:80 169.254.169.254:80; do
		serve "$a"
	done
	NS=host serve 198.51.100.1:8080
	NS=host serve 0.0.0.0:8081 # on every address of the host, the gateway's too
	for a in 192.0.2.10:80 10.250.0.5:80 169.254.169.254:80 203.0.113.7:80; do
		wait_listen "$OUTNS" "$a"
	done
	wait_listen "$HOSTNS" 198.51.100.1:8080
	wait_listen "$HOSTNS" 0.0.0.0:8081
	IMAGE=$EG_IMAGE/img
}

teardown() {
	net_teardown
}

# sbn ARGS...: hutch sandbox --network bridge in the test's "host", upstream DNS in "the
# internet". --as-root unless EG_USER is set (the policy does not depend on the user).
sbn() {
	timeout -k 5 "$HUTCH_CMD_TIMEOUT" nsenter --net="/run/netns/$HOSTNS" \
		"$HUTCH" sandbox ${EG_USER:---as-root} ${EG_RT:+--runtime "$EG_RT"} \
		--image "$IMAGE" --network bridge \
		--dns 192.0.2.53 --timeout 20 "$@"
}

# fetch URL: what the sandbox prints for it ("REFUSED" when the connection failed).
FETCH='for u in "$@"; do wget -q -O - "$u" 2>/dev/null || echo "REFUSED $u"; done'

@test "egress: by default the internet is reachable, the host and private ranges are not" {
	run -0 sbn -- sh -c "$FETCH" _ http://192.0.2.10/ http://203.0.113.7/ \
		http://198.51.100.1:8080/ http://10.89.0.1:8081/ http://169.254.169.254/ \
		http://10.250.0.5/
	echo "$output"
	[[ "$output" == *"ok 192.0.2.10"* ]]
	[[ "$output" == *"ok 203.0.113.7"* ]]
	[[ "$output" == *"REFUSED http://198.51.100.1:8080/"* ]] # the host's own address
	[[ "$output" == *"REFUSED http://10.89.0.1:8081/"* ]]    # the gateway (but for DNS)
	[[ "$output" == *"REFUSED http://169.254.169.254/"* ]]
	[[ "$output" == *"REFUSED http://10.250.0.5/"* ]]
	nothing_left
}

t_allow_cidr() {
	run -0 sbn --allow-cidr 198.51.100.1/32:8080 --allow-cidr 169.254.169.254 \
		--allow-cidr 10.250.0.0/24:80-81 --allow-cidr 10.89.0.1:8081 -- sh -c "$FETCH" _ \
		http://198.51.100.1:8080/ http://169.254.169.254/ http://10.250.0.5/ \
		http://10.89.0.1:8081/
	echo "$output"
	[[ "$output" == *"ok 0.0.0.0"* ]] # the gateway's server
	[[ "$output" == *"ok 198.51.100.1"* ]]
	[[ "$output" == *"ok 169.254.169.254"* ]]
	[[ "$output" == *"ok 10.250.0.5"* ]]
	nothing_left
}

@test "egress: --allow-cidr opens the host, the metadata address and a private range" {
	t_allow_cidr
}

@test "egress: a start adds its elements in one netlink batch: no libnftables in hutch or its helper" {
	run -0 sbn -- true # the first sandbox here makes the table (through libnftables)
	sbn --hostname "raw-$$" --egress restricted --allow-cidr 203.0.113.0/24:80 -- sleep 3 &
	local pid=$! hpid= p maps=
	for _ in $(seq 50); do
		# hutch, not timeout or nsenter (hutch's helpers are its children, matched too)
		hpid=$(for p in $(pgrep -f "hostname raw-$$"); do
			[ "$(cat /proc/"$p"/comm 2>/dev/null)" = "$(basename "$HUTCH" | cut -c1-15)" ] &&
				echo "$p"
		done | sort -n | head -1)
		[ -n "$hpid" ] && [ -n "$(pgrep -P "$hpid")" ] && break
		sleep 0.1
	done
	sleep 1 # the command runs: the start is over
	for p in $hpid $(pgrep -P "$hpid"); do
		maps+=$(grep -l libnftables /proc/"$p"/maps 2>/dev/null || true)
	done
	wait "$pid"
	[ -n "$hpid" ]
	[ -z "$maps" ] || {
		echo "libnftables mapped at start: $maps" >&2
		return 1
	}
	nothing_left
}

@test "egress: --deny-cidr wins over the internet and over an allow" {
	run -0 sbn --deny-cidr 203.0.113.0/24 --allow-cidr 192.0.2.10 --deny-cidr 192.0.2.0/24 \
		-- sh -c "$FETCH" _ http://203.0.113.7/ http://192.0.2.10/
	echo "$output"
	[[ "$output" == *"REFUSED http://203.0.113.7/"* ]]
	[[ "$output" == *"REFUSED http://192.0.2.10/"* ]]
	nothing_left
}

@test "egress: restricted, an allowed name is reachable; an unlisted one is refused by DNS and by address" {
	run -0 sbn --egress restricted --allow-host allowed.test -- sh -c \
		"nslookup allowed.test; nslookup other.test; $FETCH" _ http://allowed.test/ \
		http://192.0.2.20/ http://203.0.113.7/
	echo "$output"
	[[ "$output" == *"Address: 192.0.2.10"* ]]
	[[ "$output" != *"192.0.2.20"*"192.0.2.20"* ]] # other.test: no answer, only the URL
	[[ "$output" == *"REFUSED"*"other.test"* || "$output" == *"other.test"*"REFUSED"* ]]
	[[ "$output" == *"ok 192.0.2.10"* ]]
	[[ "$output" == *"REFUSED http://192.0.2.20/"* ]]
	[[ "$output" == *"REFUSED http://203.0.113.7/"* ]]
	nothing_left
}

@test "egress: a wildcard name and a port: *.svc.test:80 opens port 80 of its answers only" {
	run -0 sbn --egress restricted --allow-host '*.svc.test:80' -- sh -c \
		"$FETCH" _ http://api.svc.test/ http://allowed.test/
	echo "$output"
	[[ "$output" == *"ok 192.0.2.40"* ]]
	[[ "$output" == *"REFUSED http://allowed.test/"* ]]
	run -125 sbn --allow-host 'a.*.test' -- true
	[[ "$output" == *"--allow-host"* ]]
	nothing_left
}

t_moving() {
	# The sandbox waits until its resolver answers the new address, and the host changes it
	# once the first fetch is out: no file is shared.
	sbn --egress restricted --allow-host moving.test -- sh -c '
		wget -q -O - http://moving.test/ || echo FAIL1
		for i in $(seq 150); do
			nslookup moving.test 2>/dev/null | grep -q 203.0.113.7 && break
			sleep 0.1
		done
		wget -q -O - http://moving.test/ || echo FAIL2' >"$TEST_DIR/out" 2>&1 &
	local pid=$!
	for _ in $(seq 150); do grep -q "192.0.2.30\|FAIL1" "$TEST_DIR/out" && break; sleep 0.1; done
	dns moving.test 203.0.113.7
	wait "$pid" || { cat "$TEST_DIR/out"; false; }
	cat "$TEST_DIR/out"
	grep -q "ok 192.0.2.30" "$TEST_DIR/out"
	grep -q "ok 203.0.113.7" "$TEST_DIR/out"
	! grep -q FAIL "$TEST_DIR/out"
	nothing_left
}

@test "egress: an allowed name whose address changes mid-run keeps working" {
	t_moving
}

t_udp() {
	run -0 sbn --egress restricted --allow-host allowed.test -- sh -c \
		'nslookup other.test 192.0.2.53 || echo NOANSWER; echo x | nc -u -w 1 192.0.2.53 53; echo done'
	echo "$output"
	[[ "$output" == *NOANSWER* ]]
	[[ "$output" != *"192.0.2.20"* ]]
	nothing_left
}

@test "egress: restricted, DNS and UDP straight to the internet get no answer" {
	t_udp
}

t_as_root() {
	run -0 sbn --egress restricted -- sh -c '
		ip addr flush dev eth0; ip addr add 10.89.0.200/24 dev eth0
		ip route add default via 10.89.0.1 2>/dev/null
		wget -q -O - http://192.0.2.10/ || echo REFUSED1
		ip addr add 192.0.2.99/24 dev eth0
		wget -q -O - http://192.0.2.10/ || echo REFUSED2'
	echo "$output"
	[[ "$output" == *REFUSED1* && "$output" == *REFUSED2* ]]
	[[ "$output" != *"ok 192.0.2.10"* ]]
	nothing_left
}

@test "egress: --as-root cannot lift the rules (new address, routes, spoofed source)" {
	t_as_root
}

@test "egress: the report's counters match what the sandbox did" {
	run -0 sbn --egress restricted --allow-host allowed.test --allow-cidr 203.0.113.7:80 \
		--report "$TEST_DIR/r.json" -- sh -c "$FETCH" _ http://allowed.test/ \
		http://203.0.113.7/ http://192.0.2.20/ http://192.0.2.20/ http://10.250.0.5/
	echo "$output"
	run -0 jq -c .egress "$TEST_DIR/r.json"
	echo "$output"
	local e=$output
	[ "$(jq -r .policy <<<"$e")" = restricted ]
	[ "$(jq -c .allow_hosts <<<"$e")" = '["allowed.test"]' ]
	[ "$(jq -c .allow_cidrs <<<"$e")" = '["203.0.113.7/32:80"]' ]
	[ "$(jq .connections_allowed <<<"$e")" = 2 ]
	[ "$(jq .connections_refused <<<"$e")" = 3 ]
	[ "$(jq -c '.refused_destinations[0]' <<<"$e")" = \
		'{"address":"192.0.2.20","protocol":"tcp","port":80,"attempts":2}' ]
	[ "$(jq -c '.refused_destinations[1]' <<<"$e")" = \
		'{"address":"10.250.0.5","protocol":"tcp","port":80,"attempts":1}' ]
	[ "$(jq .dns.answered <<<"$e")" -ge 1 ]
	nothing_left
}

@test "egress: a default (user-namespaced) sandbox has the same rules" {
	EG_USER=--user=1000 run -0 sbn --egress restricted --allow-host allowed.test -- sh -c \
		"id -u; $FETCH" _ http://allowed.test/ http://192.0.2.20/
	echo "$output"
	[[ "$output" == *1000*"ok 192.0.2.10"*"REFUSED http://192.0.2.20/"* ]]
	nothing_left
}

@test "egress: after SIGKILL of hutch the next sandbox removes its elements" {
	nsenter --net="/run/netns/$HOSTNS" "$HUTCH" sandbox --as-root --image "$IMAGE" \
		--network bridge --dns 192.0.2.53 --egress restricted --allow-host allowed.test \
		--allow-cidr 203.0.113.0/24 -- sleep 30 &
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
	run -0 sbn -- true
	nothing_left
}

t_publish() {
	mkdir -p "$TEST_DIR/ws"
	chown 1000:1000 "$TEST_DIR/ws"
	echo served >"$TEST_DIR/ws/index.html"
	sbn --publish 18080:8000 --publish 198.51.100.1:18081:8000 --workspace "$TEST_DIR/ws" \
		-- sh -c 'httpd -f -p 8000 -h /workspace & sleep 3' >"$TEST_DIR/out" 2>&1 &
	local pid=$! got=
	for _ in $(seq 50); do
		got=$(ip netns exec "$HOSTNS" "$BUSYBOX" wget -q -O - http://127.0.0.1:18080/ 2>/dev/null) &&
			break
		sleep 0.1
	done
	[ "$got" = served ]
	ip netns exec "$HOSTNS" ss -Hltn | grep -q '127.0.0.1:18080'
	# From "the internet": the port given an address is reachable, the loopback one is not bound there.
	run -0 in_out "$BUSYBOX" wget -q -O - http://198.51.100.1:18081/
	[ "$output" = served ]
	run in_out "$BUSYBOX" wget -q -O - http://198.51.100.1:18080/
	[ "$status" -ne 0 ]
	wait "$pid" # the command ends: the relay and its ports go
	run -0 ip netns exec "$HOSTNS" ss -Hltn
	[[ "$output" != *18080* && "$output" != *18081* ]]
	run -125 sbn --publish 198.51.100.1:8080:80 -- true # httpd holds it
	[[ "$output" == *"--publish 198.51.100.1:8080"* ]]
	run -125 sbn --publish 80 -- true
	[[ "$output" == *"--publish 80: expected"* ]]
	nothing_left
}

@test "egress: --publish reaches the sandbox's server, on 127.0.0.1 unless an address is given" {
	t_publish
}

@test "egress: host mode (--isolation landlock) has bridge: the rules apply, the host's loopback is not its own" {
	ip netns exec "$HOSTNS" "$BUSYBOX" httpd -f -p 127.0.0.1:18082 -h "$TEST_DIR" &
	SRV_PIDS+=($!)
	wait_listen "$HOSTNS" 127.0.0.1:18082
	local hm=(timeout -k 5 "$HUTCH_CMD_TIMEOUT" nsenter --net="/run/netns/$HOSTNS" "$HUTCH" sandbox
		--isolation landlock --timeout 20)
	# The host's network: its loopback service answers (what bridge is for).
	run "${hm[@]}" --network host -- "$BUSYBOX" wget -q -O /dev/null http://127.0.0.1:18082/
	[ "$status" -eq 0 ] || [[ "$output" == *"404"* ]]
	run -0 "${hm[@]}" --network bridge --dns 192.0.2.53 --egress restricted \
		--allow-host allowed.test --report "$TEST_DIR/h.json" -- "$BUSYBOX" sh -c \
		"cat /etc/resolv.conf; $FETCH" _ http://allowed.test/ http://192.0.2.20/ \
		http://127.0.0.1:18082/ http://198.51.100.1:8080/
	echo "$output"
	[[ "$output" == *"nameserver 10.89.0.1"* ]]
	[[ "$output" == *"ok 192.0.2.10"* ]]
	[[ "$output" == *"REFUSED http://192.0.2.20/"* ]]
	[[ "$output" == *"REFUSED http://127.0.0.1:18082/"* ]]
	[[ "$output" == *"REFUSED http://198.51.100.1:8080/"* ]]
	[ "$(jq -r .isolation.network "$TEST_DIR/h.json")" = bridge ]
	[ "$(jq .egress.connections_allowed "$TEST_DIR/h.json")" = 1 ]
	[ "$(jq .egress.connections_refused "$TEST_DIR/h.json")" = 2 ]
	[ ! -e "/run/hutch/host-net-$$" ] && ! ls -d /run/hutch/host-net-* 2>/dev/null
	run -125 "${hm[@]}" --isolation none --network bridge -- true
	[[ "$output" == *"--isolation none: not supported"* ]]
	nothing_left
}

@test "egress: a profile's egress keys are the flags'" {
	cat >"$TEST_DIR/p.json" <<-'EOF'
		{ "version": 1, "network": "bridge", "egress": "restricted", "allow_host": ["allowed.test"],
		  "allow_cidr": ["203.0.113.7:80"], "deny_cidr": ["192.0.2.0/24"] }
	EOF
	run -0 sbn --profile "$TEST_DIR/p.json" --report "$TEST_DIR/r.json" -- sh -c "$FETCH" _ \
		http://203.0.113.7/ http://allowed.test/
	echo "$output"
	[[ "$output" == *"ok 203.0.113.7"* ]]
	[[ "$output" == *"REFUSED http://allowed.test/"* ]] # 192.0.2.10: the deny wins
	[ "$(jq -c '.egress | [.policy, .allow_hosts, .allow_cidrs, .deny_cidrs]' "$TEST_DIR/r.json")" = \
		'["restricted",["allowed.test"],["203.0.113.7/32:80"],["192.0.2.0/24"]]' ]
	nothing_left
}

@test "egress: misuse is one clear line and 125" {
	run -125 nsenter --net="/run/netns/$HOSTNS" "$HUTCH" sandbox --image "$IMAGE" \
		--allow-host allowed.test -- true
	[[ "$output" == *"need --network bridge"* ]]
	run -125 sbn --allow-cidr 10.0.0.1/8 -- true
	[[ "$output" == *"host bits"* ]]
	run -125 sbn --allow-cidr 10.0.0.0/8:0 -- true
	[[ "$output" == *"--allow-cidr"* ]]
	run -125 sbn --deny-cidr 10.0.0.0/8:80 -- true
	[[ "$output" == *"--deny-cidr"* ]]
	run -125 sbn --egress closed -- true
	[[ "$output" == *"--egress closed"* ]]
	run -125 sbn --allow-host 'bad_name!' -- true
	[[ "$output" == *"--allow-host"* ]]
	run -125 sbn --allow-cidr fd00::/64 -- true
	[[ "$output" == *"not supported"* ]]
	run -125 sbn --deny-host-loopback -- true
	[[ "$output" == *"--deny-host-loopback needs --network host"* ]]
	nothing_left
}

# --network host with --deny-host-loopback: the host's loopback (127/8, 0.0.0.0, ::1, v4-mapped)
# refused by the kernel (EPERM), the host's other addresses and the internet reachable.
LOOP_URLS=(http://127.0.0.1:8081/ http://127.0.0.2:8081/ http://0.0.0.0:8081/
	'http://[::1]:8082/' 'http://[::ffff:127.0.0.1]:8082/')
LOOP_NC='nc -w 1 127.0.0.1 8081 </dev/null; true' # busybox's nc has no UDP: host mode sends it

# loopback_run WGET ARGS...: hutch sandbox ARGS in the test's "host", fetching every URL
# with WGET; LOOPBACK_NC=1 also connects with nc, to see the errno.
loopback_run() {
	local wget=$1
	shift
	run -0 timeout -k 5 "$HUTCH_CMD_TIMEOUT" nsenter --net="/run/netns/$HOSTNS" "$HUTCH" \
		sandbox "$@" -- sh -c "${FETCH//wget/$wget}; ${LOOPBACK_NC:+$LOOP_NC}" _ \
		"${LOOP_URLS[@]}" http://198.51.100.1:8080/ http://192.0.2.10/
	echo "$output"
}

loopback_setup() {
	NS=host serve "[::]:8082" # both families: ::1 and 127.0.0.1
	wait_listen "$HOSTNS" "[::]:8082"
}

# loopback_refused: what loopback_run printed with the filter.
loopback_refused() {
	local u
	for u in "${LOOP_URLS[@]}"; do
		[[ "$output" == *"REFUSED $u"* ]]
	done
	[[ "$output" == *"ok 198.51.100.1"* ]] # the host's own address, not its loopback
	[[ "$output" == *"ok 192.0.2.10"* ]]   # the internet
	if [ -n "${LOOPBACK_NC:-}" ]; then
		[ "$(grep -c "Operation not permitted" <<<"$output")" -eq 1 ] # EPERM
	fi
}

@test "egress: --network host --deny-host-loopback: the host's loopback is refused (EPERM), its other addresses and the internet are not" {
	loopback_setup
	LOOPBACK_NC=1 loopback_run wget --image "$IMAGE" --network host
	[[ "$output" == *"ok 0.0.0.0"* ]] # without it, the loopback listeners answer
	[[ "$output" == *"ok [::]"* ]]
	[ "$(grep -c "Operation not permitted" <<<"$output")" -eq 0 ]
	LOOPBACK_NC=1 loopback_run wget --image "$IMAGE" --network host --deny-host-loopback
	loopback_refused
	# Root in the sandbox's user namespace cannot detach it.
	LOOPBACK_NC=1 loopback_run wget --image "$IMAGE" --as-root --network host \
		--deny-host-loopback
	loopback_refused
}

@test "egress: host mode's --deny-host-loopback refuses the host's loopback, TCP and UDP sends too" {
	loopback_setup
	loopback_run "$BUSYBOX wget" --isolation landlock --deny-host-loopback
	loopback_refused
	loopback_run "$BUSYBOX wget" --isolation none --deny-host-loopback
	loopback_refused
	# An unconnected UDP send (sendto with an address) is refused too; a peer's is not.
	local py='import socket
for a, f in (("127.0.0.1", socket.AF_INET), ("::1", socket.AF_INET6), ("198.51.100.2", socket.AF_INET)):
    try:
        socket.socket(f, socket.SOCK_DGRAM).sendto(b"x", (a, 8083)); print("SENT", a)
    except OSError as e:
        print("REFUSED", a, e.strerror)'
	run -0 timeout -k 5 "$HUTCH_CMD_TIMEOUT" nsenter --net="/run/netns/$HOSTNS" "$HUTCH" \
		sandbox --isolation landlock --deny-host-loopback -- python3 -c "$py"
	echo "$output"
	[[ "$output" == *"REFUSED 127.0.0.1 Operation not permitted"* ]]
	[[ "$output" == *"REFUSED ::1 Operation not permitted"* ]]
	[[ "$output" == *"SENT 198.51.100.2"* ]]
}

# Under another runtime: the namespace is wired before the bundle is handed over.
delegated() {
	local rt=$1
	command -v "$rt" >/dev/null || skip "$rt missing"
	run -0 sbn --runtime "$rt" --egress restricted --allow-host allowed.test -- sh -c \
		"nslookup other.test; $FETCH" _ http://allowed.test/ http://192.0.2.20/ \
		http://198.51.100.1:8080/
	echo "$output"
	[[ "$output" == *"ok 192.0.2.10"* ]]
	[[ "$output" == *"REFUSED http://192.0.2.20/"* ]]
	[[ "$output" == *"REFUSED http://198.51.100.1:8080/"* ]]
	run -0 sbn --runtime "$rt" --report "$TEST_DIR/$rt.json" -- sh -c "$FETCH" _ \
		http://203.0.113.7/ http://10.250.0.5/ http://169.254.169.254/ http://10.89.0.1:8081/
	echo "$output"
	[[ "$output" == *"ok 203.0.113.7"* ]]
	[[ "$output" == *"REFUSED http://10.250.0.5/"* ]]
	[[ "$output" == *"REFUSED http://169.254.169.254/"* ]]
	[[ "$output" == *"REFUSED http://10.89.0.1:8081/"* ]]
	# The same counters whichever runtime runs the sandbox.
	[ "$(jq .egress.connections_allowed "$TEST_DIR/$rt.json")" = 1 ]
	[ "$(jq .egress.connections_refused "$TEST_DIR/$rt.json")" = 3 ]
	nothing_left
}

# The scenarios above, under another runtime: the firewall, the forwarder and the relay are
# the host's, whichever runtime runs the sandbox.
under() {
	delegated "$1"
	loopback_setup
	echo "== --network host --deny-host-loopback under $1"
	loopback_run wget --image "$IMAGE" --runtime "$1" --network host --deny-host-loopback
	loopback_refused
	local t
	for t in t_allow_cidr t_moving t_udp t_as_root t_publish; do
		echo "== $t under $1"
		EG_RT=$1 "$t"
	done
}

@test "egress: under runc (every scenario)" {
	under runc
}

@test "egress: under crun (every scenario)" {
	under crun
}

@test "egress: under runsc (every scenario)" {
	under runsc
}
