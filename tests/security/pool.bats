#!/usr/bin/env bats
# The warm pool (docs/pool.md) as a boundary: `hutch pool serve` keeps sandboxes made ahead, and
# `hutch sandbox --pool` takes one per request. A request must see nothing of an earlier one
# (files in /tmp, /, /workspace, /dev/shm, processes, sockets, environment), the pool's socket
# gives nothing to a non-root caller, a pooled command is as locked down as a cold one, and
# nothing of the pool is left once it is stopped (processes, cgroups, mounts, state, socket).

load ../integration/helpers
load ../integration/sandbox-helpers
load ../integration/net-helpers
bats_require_minimum_version 1.5.0

setup() {
	sb_setup
	sb_private_image
	POOL=p$BATS_TEST_NUMBER-${TAG##*.}
	POOL_PID=
	POOL_IN=() # a prefix: nsenter into the test's "host" network namespace (bridge)
	HOSTNS=
	R=$TEST_DIR/r.json
}

teardown() {
	local rc=0
	pool_stop || rc=1
	sb_teardown || rc=1
	if [ -n "$HOSTNS" ]; then
		net_teardown || rc=1 # teardown_bundle's checks too
	else
		teardown_bundle || rc=1 # the leak checks, and the test's own dir removed
	fi
	return $rc
}

# pool_start [N] [JQ]: a pool of N (1) sandboxes of the test's image, 256m, 128 pids (JQ
# amends the profile), waited for until every one is ready.
pool_start() {
	jq -n --arg i "$IMAGE" "{version: 1, image: \$i, memory: \"256m\", pids: 128} ${2:+| $2}" \
		>"$TEST_DIR/pool.json"
	"${POOL_IN[@]}" "$HUTCH" --root "$HUTCH_ROOT" pool serve --name "$POOL" \
		--profile "$TEST_DIR/pool.json" -n "${1:-1}" >"$TEST_DIR/pool.out" \
		2>"$TEST_DIR/pool.err" &
	POOL_PID=$!
	pool_ready 1
}

pool_said() { grep -c ' ready at ' "$TEST_DIR/pool.out" 2>/dev/null || true; }

# pool_ready K: waits (10 s at most) until the pool said K times that it is full, noting its
# supervisors (each makes one sandbox: hutch-sb-PID) for pool_stop.
pool_ready() {
	local tries=500
	while [ "$(pool_said)" -lt "$1" ]; do
		if ! kill -0 "$POOL_PID" 2>/dev/null || [ $tries -eq 0 ]; then
			echo "pool not ready: $(cat "$TEST_DIR/pool.err")" >&2
			return 1
		fi
		sleep 0.02
		tries=$((tries - 1))
	done
	pool_sups
}

pool_sups() {
	cat /proc/"$POOL_PID"/task/*/children >>"$TEST_DIR/sups" 2>/dev/null || true
	echo >>"$TEST_DIR/sups"
}

# SIGTERM, then nothing of the pool may be left: the socket, a supervisor, a sandbox's cgroup,
# state or mount. The pool's lock (an empty file, its mutual exclusion) stays: removed here.
pool_stop() {
	local failures=() p st=0
	[ -n "$POOL_PID" ] || return 0
	pool_sups
	kill -TERM "$POOL_PID"
	wait "$POOL_PID" || st=$?
	POOL_PID=
	[ $st -eq 0 ] || failures+=("pool serve exited $st: $(cat "$TEST_DIR/pool.err")")
	[ ! -e "$SB_DIR/pools/$POOL.sock" ] || failures+=("its socket")
	for p in $(tr ' ' '\n' <"$TEST_DIR/sups" | sort -u); do
		! kill -0 "$p" 2>/dev/null || failures+=("supervisor $p")
		[ -z "$(find /sys/fs/cgroup -maxdepth 6 -type d -name "hutch-sb-$p" 2>/dev/null)" ] ||
			failures+=("cgroup hutch-sb-$p")
	done
	[ -z "$(ls -A "$SB_STATE" 2>/dev/null)" ] || failures+=("state: $(ls -A "$SB_STATE")")
	! grep -qF "$HUTCH_ROOT" /proc/self/mountinfo || failures+=("mounts under the root")
	rm -f "$SB_DIR/pools/$POOL.lock"
	if [ ${#failures[@]} -gt 0 ]; then
		printf 'LEAK (pool): %s\n' "${failures[@]}" >&2
		return 1
	fi
}

pooled() { jq -e --arg p "$POOL" '.pool == {name: $p, pooled: true, cold_because: null}' "$1"; }

@test "pool: a request gets its exit code, stdin, stdout, stderr and workspace (written as its owner), pooled" {
	pool_start 1
	run --separate-stderr sb --pool "$POOL" --workspace "$WS" --report "$R" -- sh -c \
		'cat; echo out; echo err >&2; pwd; echo hi >/workspace/f; mkdir /workspace/d; exit 7' \
		<<<'{"q": 1}'
	[ "$status" -eq 7 ]
	[ "${lines[0]}" = '{"q": 1}' ]
	[ "${lines[1]}" = out ]
	[ "${lines[2]}" = /workspace ]
	[ "$stderr" = err ]
	[ "$(cat "$WS/f")" = hi ]
	[ "$(stat -c %u:%g "$WS/f" "$WS/d" | sort -u)" = 1500:1500 ]
	pooled "$R"
	jq -e '.exit_code == 7 and .failure == null' "$R"
	jq -e '.setid_bits_cleared == 0' "$R" # its workspace was walked, as after a cold run
}

@test "pool: the request's limits are in its cgroup; seccomp, no_new_privs and no capability inside" {
	pool_start 1
	run -0 sb --pool "$POOL" --memory 64m --pids 50 --cpus 0.5 --report "$R" -- sh -c '
		if [ -e /sys/fs/cgroup/cgroup.controllers ]; then
			cat /sys/fs/cgroup/memory.max /sys/fs/cgroup/pids.max /sys/fs/cgroup/cpu.max
		else
			cat /sys/fs/cgroup/memory/memory.limit_in_bytes /sys/fs/cgroup/pids/pids.max \
				/sys/fs/cgroup/cpu/cpu.cfs_quota_us
		fi
		grep -E "^(Seccomp|NoNewPrivs|CapEff):" /proc/self/status'
	echo "$output"
	[ "${lines[0]}" = 67108864 ]
	[ "${lines[1]}" = 50 ]
	[[ ${lines[2]} == 50000* ]]
	[[ $output == *"CapEff:	0000000000000000"* ]]
	[[ $output == *"NoNewPrivs:	1"* ]]
	[[ $output == *"Seccomp:	2"* ]]
	pooled "$R"
	jq -e '.isolation.limits.memory_bytes == 67108864' "$R"
}

# Request 1 leaves what it can: files everywhere writable, a process that ignores SIGTERM and
# SIGHUP in a session of its own, a listening socket, an exported variable. Request 2, in the
# sandbox made after it (a pool of one), sees none of it.
@test "pool: a request sees no file, process, socket or environment of an earlier one" {
	pool_start 1
	local ws2=$TEST_DIR/ws2 k
	mkdir "$ws2"
	chown 1500:1500 "$ws2"
	k=$(pool_said)
	run -0 sb --pool "$POOL" --workspace "$WS" --report "$R" -- sh -c '
		for d in /tmp /dev/shm /workspace /var/tmp /; do echo secret >$d/trace 2>/dev/null; done
		mkdir /tmp/dir; ln -s /tmp/trace /tmp/link
		export LEAKED=secret
		(trap "" HUP TERM; setsid sleep 98761 </dev/null >/dev/null 2>&1 &)
		nc -l -p 4444 </dev/null >/dev/null 2>&1 &
		sleep 0.3; ls /tmp; echo left'
	[[ $output == *trace* && $output == *left ]]
	pooled "$R"
	pool_ready $((k + 1))
	! pgrep -f '^sleep 98761' # it died with its sandbox
	run -0 sb --pool "$POOL" --workspace "$ws2" --report "$TEST_DIR/r2.json" -- sh -c '
		echo "tmp=$(ls -A /tmp) shm=$(ls -A /dev/shm) ws=$(ls -A /workspace)"
		[ -e /trace ] && echo "root trace"
		ps -o pid,args | grep -v "ps -o" | tail -n +2
		grep -i " 00000000:115C" /proc/net/tcp || echo "no 4444"
		env | grep LEAKED || echo "no LEAKED"'
	echo "$output"
	[ "${lines[0]}" = "tmp= shm= ws=" ]
	[[ $output != *"root trace"* && $output != *98761* && $output != *nc* ]]
	[[ $output == *"no 4444"* && $output == *"no LEAKED"* ]]
	[ "$(ps_lines "$output")" -le 3 ] # init, sh and grep/tail at most
	pooled "$TEST_DIR/r2.json"
}

ps_lines() { grep -cE '^ *[0-9]+ ' <<<"$1"; }

@test "pool: a non-root caller gets nothing: the client refuses, the directory is root's, SO_PEERCRED refuses" {
	pool_start 1
	local sock=$SB_DIR/pools/$POOL.sock probe
	run setpriv --reuid 65534 --regid 65534 --clear-groups "$HUTCH" --root "$HUTCH_ROOT" \
		sandbox --pool "$POOL" --image "$IMAGE" -- true
	[ "$status" -eq 125 ]
	[[ $output == *"a pool serves root (uid 0) alone"* ]]
	[ "$(stat -c %a:%u "$SB_DIR/pools")" = 700:0 ]
	probe='import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
try:
    s.connect(sys.argv[1])
except OSError as e:
    print("connect:", e.errno); sys.exit(0)
m = s.recv(8192) # the protocol: the pool answers first
print("answer:", chr(m[0]) if m else "none")'
	run -0 setpriv --reuid 65534 --regid 65534 --clear-groups /usr/bin/python3 -c "$probe" "$sock"
	[ "$output" = "connect: 13" ]
	# uid 65534 allowed through the directory: the pool itself refuses it ('D'), and serves on.
	run -0 setpriv --reuid 65534 --regid 65534 --clear-groups --inh-caps +dac_override \
		--ambient-caps +dac_override /usr/bin/python3 -c "$probe" "$sock"
	[ "$output" = "answer: D" ]
	run -0 sb --pool "$POOL" --report "$R" -- true
	pooled "$R"
}

@test "pool: --timeout kills the whole tree; the report says timeout" {
	pool_start 1
	run sb --pool "$POOL" --timeout 1 --grace 1 --report "$R" -- sh -c \
		'trap "" TERM; sleep 98762 & sleep 98763'
	[ "$status" -eq 124 ]
	pooled "$R"
	jq -e '.timed_out == true and .failure == "timeout"' "$R"
	! pgrep -f '^sleep 9876[23]'
}

@test "pool: a client killed mid-request kills its sandbox" {
	pool_start 1
	SB_PIDFILE=$TEST_DIR/client.pid sb --pool "$POOL" -- sh -c 'echo started; exec sleep 98764' \
		>"$TEST_DIR/out" &
	local client=$! tries=250
	until grep -q started "$TEST_DIR/out" || [ $tries -eq 0 ]; do
		sleep 0.02
		tries=$((tries - 1))
	done
	pgrep -f '^sleep 98764'
	kill -9 "$(cat "$TEST_DIR/client.pid")"
	tries=250
	while pgrep -f '^sleep 98764' && [ $tries -gt 0 ]; do
		sleep 0.02
		tries=$((tries - 1))
	done
	! pgrep -f '^sleep 98764'
	wait "$client" || true
}

@test "pool: SIGTERM to pool serve with a request running: the command is killed, nothing is left" {
	pool_start 2
	sb --pool "$POOL" -- sh -c 'echo started; exec sleep 98765' >"$TEST_DIR/out" &
	local client=$! tries=250 st=0
	until grep -q started "$TEST_DIR/out" || [ $tries -eq 0 ]; do
		sleep 0.02
		tries=$((tries - 1))
	done
	pool_stop # checks that nothing of the pool is left
	wait "$client" || st=$?
	[ $st -eq 137 ] # its command was SIGKILLed
	! pgrep -f '^sleep 98765'
}

@test "pool: with no pool running --pool starts cold, and the report says why" {
	run -0 sb --pool "none-$POOL" --report "$R" -- echo cold
	[ "$output" = cold ]
	jq -e '.pool == {name: $p, pooled: false, cold_because: "no pool of that name is running"}' \
		--arg p "none-$POOL" "$R"
}

@test "pool: a request the profile does not allow runs cold, saying which option; the sandbox waits for the next" {
	pool_start 1
	run -0 sb --pool "$POOL" --hostname other --report "$R" -- hostname
	[ "$output" = other ]
	jq -e '.pool.pooled == false and .pool.cold_because == "--hostname differs from the pool'"'"'s profile"' "$R"
	run -0 sb --pool "$POOL" --network bridge --report "$R" -- true
	jq -e '.pool.pooled == false and (.pool.cold_because | startswith("--network"))' "$R"
	local k
	k=$(pool_said)
	run -0 sb --pool "$POOL" --report "$R" -- true
	pooled "$R"
	pool_ready $((k + 1))
	# A cwd that is not there is not made (a cold run makes it): 126, saying so.
	run sb --pool "$POOL" --cwd /nonexistent --report "$R" -- true
	[ "$status" -eq 126 ]
	pooled "$R"
	jq -e '.error == "--cwd /nonexistent: No such file or directory"' "$R"
}

@test "pool: --lock is held by the client for the whole request" {
	pool_start 1
	LOCK=$TAG
	sb --pool "$POOL" --lock "$LOCK" -- sh -c 'echo started; sleep 2' >"$TEST_DIR/out" &
	local client=$! tries=250
	until grep -q started "$TEST_DIR/out" || [ $tries -eq 0 ]; do
		sleep 0.02
		tries=$((tries - 1))
	done
	run sb --lock "$LOCK" --no-wait --report "$R" -- true
	[ "$status" -eq 125 ]
	jq -e '.failure == "lock_busy"' "$R"
	# A pooled one waits in line in its client, and its report says it waited.
	run -0 sb --pool "$POOL" --lock "$LOCK" --report "$TEST_DIR/r2.json" -- true
	pooled "$TEST_DIR/r2.json"
	jq -e '.lock_wait_ms > 0' "$TEST_DIR/r2.json"
	wait "$client"
}

@test "pool: serve refuses a second pool of the same name, bad flags and a profile with a workspace" {
	pool_start 1
	run "$HUTCH" --root "$HUTCH_ROOT" pool serve --name "$POOL" --profile "$TEST_DIR/pool.json" -n 1
	[ "$status" -eq 1 ]
	[[ $output == *"pool $POOL: already served on this root"* ]]
	run "$HUTCH" --root "$HUTCH_ROOT" pool serve --name "x$POOL" -n 1
	[ "$status" -eq 1 ]
	[[ $output == *"--profile: required"* ]]
	run "$HUTCH" --root "$HUTCH_ROOT" pool serve --name "x$POOL" --profile "$TEST_DIR/pool.json" -n 0
	[[ $status -eq 1 && $output == *"-n: 1 to 64"* ]]
	jq --arg w "$WS" '.workspace = $w' "$TEST_DIR/pool.json" >"$TEST_DIR/ws.json"
	run "$HUTCH" --root "$HUTCH_ROOT" pool serve --name "x$POOL" --profile "$TEST_DIR/ws.json"
	[[ $status -eq 1 && $output == *"workspace is the request's"* ]]
	[ ! -e "$SB_DIR/pools/x$POOL.sock" ]
	rm -f "$SB_DIR/pools/x$POOL.lock"
}

# The whole network is made ahead: the namespace, the veth on the bridge, the lease, the
# firewall, DNS. The pool runs in the test's "host" namespace; so does a cold run.
@test "pool: a bridge profile: the pooled sandbox has its eth0, address and route from the start" {
	net_setup
	POOL_IN=(nsenter --net="/run/netns/$HOSTNS")
	pool_start 1 '.network = "bridge"'
	run -0 sb --pool "$POOL" --report "$R" -- sh -c \
		'ip -4 -o addr show eth0 | awk "{ print \$4 }"; ip route | grep ^default'
	[[ ${lines[0]} == 10.89.0.*/24 ]]
	[[ ${lines[1]} == "default via 10.89.0.1 dev eth0"* ]]
	pooled "$R"
	jq -e '.isolation.network == "bridge"' "$R"
	run -0 "${POOL_IN[@]}" "$HUTCH" --root "$HUTCH_ROOT" sandbox --pool "$POOL" --image "$IMAGE" \
		--network none --report "$R" -- true
	jq -e '.pool.pooled == false and (.pool.cold_because | startswith("--network"))' "$R"
}

@test "pool: binds: an rw bind of another user's is written as its owner, a ro one is read-only, one with no mount point in the image runs cold" {
	pool_start 1
	mkdir "$TEST_DIR/rw" "$TEST_DIR/ro"
	chown 1600:1600 "$TEST_DIR/rw"
	echo x >"$TEST_DIR/ro/x"
	local k
	k=$(pool_said)
	run -0 sb --pool "$POOL" --bind "$TEST_DIR/rw:/data" --report "$R" -- sh -c 'echo w >/data/f'
	pooled "$R"
	[ "$(stat -c %u:%g "$TEST_DIR/rw/f")" = 1600:1600 ]
	jq -e '.isolation.user.binds == [{destination: "/data", uid: 1600, gid: 1600, idmapped: true}]' "$R"
	pool_ready $((k + 1))
	run -0 sb --pool "$POOL" --ro-bind "$TEST_DIR/ro:/data" --report "$R" -- sh -c \
		'cat /data/x; { echo y >/data/y; } 2>/dev/null || echo refused'
	[ "$output" = "$(printf 'x\nrefused')" ]
	[ ! -e "$TEST_DIR/ro/y" ]
	pooled "$R"
	run -0 sb --pool "$POOL" --bind "$TEST_DIR/rw:/nowhere" --report "$R" -- ls -d /nowhere
	jq -e '.pool.pooled == false and (.pool.cold_because | startswith("--bind /nowhere: the pool'"'"'s image has no mount point"))' "$R"
}

# pool_capture OUT ARGS...: the request `hutch sandbox --pool ARGS -- true` sends (its bytes),
# caught at a socket of a root of the test's own, for pool-forge.py to amend.
pool_capture() {
	local fake=$TEST_DIR/fake out=$1 tries=250
	shift
	mkdir -p "$fake/.sandbox/pools"
	chmod 711 "$fake/.sandbox"
	chmod 700 "$fake/.sandbox/pools"
	python3 "$BATS_TEST_DIRNAME/pool-forge.py" capture "$fake/.sandbox/pools/$POOL.sock" "$out" &
	local py=$!
	until [ -S "$fake/.sandbox/pools/$POOL.sock" ] || [ $tries -eq 0 ]; do
		sleep 0.02
		tries=$((tries - 1))
	done
	"$HUTCH" --root "$fake" sandbox --pool "$POOL" --image "$IMAGE" "$@" -- true \
		>/dev/null 2>&1 </dev/null || true
	wait "$py"
	[ -s "$out" ]
}

forge() { python3 "$BATS_TEST_DIRNAME/pool-forge.py" send "$TEST_DIR/req" "$SB_DIR/pools/$POOL.sock" "$@"; }

# A root client's connection handed on to another process: the pool checked the peer at
# connect (root), the request is the other process's, which the kernel stamps (SO_PASSCRED).
@test "pool: a request sent on a root connection by another uid is refused: no chown, no report written or removed" {
	pool_start 1
	pool_capture "$TEST_DIR/req"
	echo secret >"$TEST_DIR/target"
	chmod 600 "$TEST_DIR/target"
	mkdir -m 700 "$TEST_DIR/priv"
	echo keep >"$TEST_DIR/priv/victim"
	run -0 forge 65534 chown "$TEST_DIR/target"
	echo "$output"
	[ "$(stat -c %u:%g "$TEST_DIR/target")" = 0:0 ]
	[[ $output == "reply X: "*"uid 65534"*"refused"* ]]
	run -0 forge 65534 report "$TEST_DIR/priv" victim
	echo "$output"
	[[ $output == "reply X: "*"refused"* ]]
	[ "$(cat "$TEST_DIR/priv/victim")" = keep ]
	[ "$(ls -A "$TEST_DIR/priv")" = victim ]
	run -0 sb --pool "$POOL" --report "$R" -- true # the sandbox waited for the next
	pooled "$R"
}

# Even root's requests: the supervisor acts only on fds that are what they must be.
@test "pool: a forged root request: a file as the workspace, a report name with a slash, a directory as stdin, all refused" {
	pool_start 1
	pool_capture "$TEST_DIR/req"
	echo secret >"$TEST_DIR/target"
	mkdir -m 700 "$TEST_DIR/priv" "$TEST_DIR/priv/sub"
	echo keep >"$TEST_DIR/priv/victim"
	run -0 forge 0 chown "$TEST_DIR/target"
	echo "$output"
	[ "$(stat -c %u:%g "$TEST_DIR/target")" = 0:0 ]
	[[ $output == "reply X: "*"--workspace is not a directory"* ]]
	run -0 forge 0 report "$TEST_DIR/priv/sub" ../victim
	echo "$output"
	[[ $output == "reply X: "*"--report is not a name in a directory"* ]]
	[ "$(cat "$TEST_DIR/priv/victim")" = keep ]
	run -0 forge 0 stdio "$TEST_DIR/priv"
	echo "$output"
	[[ $output == "reply X: "*"fd 0 is a directory"* ]]
	run -0 sb --pool "$POOL" --report "$R" -- true
	pooled "$R"
}

# A request no sandbox is ready for runs cold: the pool's answer ('C') must reach the client,
# whose request, sent at once and never read, must not reset the connection first.
@test "pool: more requests than ready sandboxes run cold, at once or in quick succession; a refusal is readable after a request" {
	pool_start 1
	local i pids=() st=0 fails=0
	for i in 1 2 3 4; do
		sb --pool "$POOL" --report "$TEST_DIR/c$i.json" -- sh -c 'sleep 0.3; echo ok' \
			>"$TEST_DIR/c$i.out" 2>"$TEST_DIR/c$i.err" &
		pids+=($!)
	done
	for i in 0 1 2 3; do
		wait "${pids[$i]}" || { st=$?; cat "$TEST_DIR/c$((i + 1)).err"; }
	done
	[ $st -eq 0 ]
	for i in 1 2 3 4; do
		[ "$(cat "$TEST_DIR/c$i.out")" = ok ]
	done
	jq -s -e 'map(.pool.pooled) | any(. == false)' "$TEST_DIR"/c[1-4].json # some ran cold
	for i in $(seq 20); do
		sb --pool "$POOL" -- true 2>>"$TEST_DIR/seq.err" || fails=$((fails + 1))
	done
	cat "$TEST_DIR/seq.err"
	[ $fails -eq 0 ]
	# uid 65534 let through the directory, its request sent at once: it reads the refusal.
	run -0 setpriv --reuid 65534 --regid 65534 --clear-groups --inh-caps +dac_override \
		--ambient-caps +dac_override /usr/bin/python3 -c 'import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(sys.argv[1])
s.send(b"x" * 100)
time.sleep(0.2)
m = s.recv(8192)
print("answer:", chr(m[0]) if m else "none")' "$SB_DIR/pools/$POOL.sock"
	[ "$output" = "answer: D" ]
}

# A cold run makes /workspace in its throw-away layer; a pooled sandbox, made before its
# request, makes it too, whatever the request.
@test "pool: an image without /workspace: a pooled --workspace is attached there (the layer has it)" {
	rmdir "$IMAGE/workspace"
	pool_start 1
	run -0 sb --pool "$POOL" --workspace "$WS" --report "$R" -- sh -c 'echo hi >/workspace/f; pwd'
	[ "$output" = /workspace ]
	[ "$(cat "$WS/f")" = hi ]
	pooled "$R"
	[ ! -e "$IMAGE/workspace" ] # made in the layer, not in the image
}

# A cold run with the pool's profile and the request's flags has the profile's limits where
# no flag was given: a pooled request too (not hutch's defaults, 512m and 300 s).
@test "pool: a request without limit flags has the profile's (memory, timeout); one with --memory has its own" {
	pool_start 1 '.timeout = 60'
	local mem='if [ -e /sys/fs/cgroup/cgroup.controllers ]; then cat /sys/fs/cgroup/memory.max
		else cat /sys/fs/cgroup/memory/memory.limit_in_bytes; fi' k
	k=$(pool_said)
	run -0 sb --pool "$POOL" --report "$R" -- sh -c "$mem"
	[ "$output" = 268435456 ]
	pooled "$R"
	jq -e '.isolation.limits.memory_bytes == 268435456 and .isolation.limits.timeout_s == 60' "$R"
	pool_ready $((k + 1))
	run -0 sb --pool "$POOL" --memory 128m --report "$R" -- sh -c "$mem"
	[ "$output" = 134217728 ]
	pooled "$R"
}

# Refused before the pool was asked: the error line is the real reason, and the report says
# the request was not pooled, and why.
@test "pool: a request the client refuses (a bad bind, a symlinked workspace) says why, and not pooled" {
	pool_start 1
	run sb --pool "$POOL" --bind "$WS:/proc" --report "$R" -- true
	[ "$status" -eq 125 ]
	[ "$output" = "hutch: error: --bind /proc: /proc is provided by the sandbox" ]
	jq -e --arg p "$POOL" '.pool == {name: $p, pooled: false, cold_because: "--bind /proc: /proc is provided by the sandbox"}' "$R"
	ln -s "$WS" "$TEST_DIR/wslink"
	run sb_raw --pool "$POOL" --workspace "$TEST_DIR/wslink" --report "$R" -- true
	[ "$status" -eq 125 ]
	[[ $output == "hutch: error: --workspace $TEST_DIR/wslink: a symlink"* ]]
	jq -e '.pool.pooled == false and (.pool.cold_because | contains("a symlink")) and .failure == "setup"' "$R"
	run -0 sb --pool "$POOL" --report "$R" -- true # the sandbox is still there
	pooled "$R"
}

@test "pool: a pools directory that is not root's alone is refused, naming it" {
	mkdir -p "$SB_DIR/pools"
	chmod 755 "$SB_DIR/pools"
	jq -n --arg i "$IMAGE" '{version: 1, image: $i}' >"$TEST_DIR/pool.json"
	run timeout -k 1 10 "$HUTCH" --root "$HUTCH_ROOT" pool serve --name "$POOL" --profile "$TEST_DIR/pool.json" -n 1
	[ "$status" -eq 1 ]
	[[ $output == *"$SB_DIR/pools: not a directory of root's alone"* ]]
	run sb --pool "$POOL" -- true
	[ "$status" -eq 125 ]
	[[ $output == *"$SB_DIR/pools: not a directory of root's alone"* ]]
	chmod 700 "$SB_DIR/pools"
	chown 1500 "$SB_DIR/pools"
	run sb --pool "$POOL" -- true
	[[ $status -eq 125 && $output == *"$SB_DIR/pools: not a directory of root's alone"* ]]
	chown 0 "$SB_DIR/pools"
	run -0 sb --pool "$POOL" -- echo cold
	[ "$output" = cold ]
}
