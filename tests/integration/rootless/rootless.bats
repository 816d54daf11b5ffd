#!/usr/bin/env bats
# Rootless: hutch sandbox, host mode and the OCI verbs as an ordinary user (docs/rootless.md).
# As root, the tests act as two users made for them: hutch-it-sub, with /etc/subuid and
# subgid ranges, and hutch-it-one, without. In the rootless passes (run.sh as an ordinary
# user, or under `unshare -r`) they act as the caller ("self"), whatever it has.
# shellcheck disable=SC2016 # sh -c programs: expanded in the sandbox

ROOTLESS_OK=1
bats_require_minimum_version 1.5.0
load ../helpers

SUB_RANGE=300000-365535

ensure_user() {
	id "$1" >/dev/null 2>&1 || useradd -M -d /nonexistent -s /usr/sbin/nologin "$1"
}

setup_file() {
	file_runs_here || return 0
	RL_DIR=$(mktemp -d "${TMPDIR:-/tmp}/hutch-it-rl.XXXXXX")
	chmod 755 "$RL_DIR"
	cp "$HUTCH" "$RL_DIR/hutch" # where every user can run it
	chmod 755 "$RL_DIR/hutch"
	cp -a "$(rootfs_template)" "$RL_DIR/image" # the runner's (host root's, as root)
	chmod 755 "$RL_DIR/image"
	if rootless_pass; then
		RL_USERS=self
	else
		ensure_user hutch-it-sub
		ensure_user hutch-it-one
		grep -q '^hutch-it-sub:' /etc/subuid ||
			usermod --add-subuids $SUB_RANGE --add-subgids $SUB_RANGE hutch-it-sub
		sed -i '/^hutch-it-one:/d' /etc/subuid /etc/subgid
		RL_USERS="sub one"
	fi
	export RL_DIR RL_USERS
}

teardown_file() {
	[ -z "${RL_DIR:-}" ] || rm -rf --one-file-system "$RL_DIR"
}

setup() {
	setup_tmp
	local who
	for who in $RL_USERS; do
		mkdir -m 700 "$TEST_DIR/xdg-$who" "$TEST_DIR/ws-$who" "$TEST_DIR/home-$who"
		[ "$who" = self ] || chown "hutch-it-$who:" "$TEST_DIR/xdg-$who" "$TEST_DIR/ws-$who" \
			"$TEST_DIR/home-$who"
	done
}

teardown() {
	local who failures=()
	for who in $RL_USERS; do
		if [ "$who" != self ] && pgrep -u "hutch-it-$who" >/dev/null; then
			failures+=("processes of hutch-it-$who are left: $(pgrep -u "hutch-it-$who" -a)")
			pkill -9 -u "hutch-it-$who"
		fi
		# a returned sandbox's delete may still run in its helper: up to 3 s
		local i sbd=$TEST_DIR/xdg-$who/hutch/.sandbox
		for i in $(seq 30); do
			[ -z "$(ls -A "$sbd/runs" "$sbd/state" 2>/dev/null | grep -v ':$' | grep .)" ] && break
			sleep 0.1
		done
		for d in state names locks runs host-runs; do
			[ -z "$(ls -A "$TEST_DIR/xdg-$who/hutch/.sandbox/$d" 2>/dev/null)" ] ||
				failures+=("$who left state in hutch/.sandbox/$d: $(ls -A "$TEST_DIR/xdg-$who/hutch/.sandbox/$d")")
		done
	done
	teardown_bundle || failures+=("teardown_bundle failed")
	[ ${#failures[@]} -eq 0 ] || {
		printf 'leak: %s\n' "${failures[@]}" >&2
		return 1
	}
}

# as WHO CMD...: CMD as the test user WHO (sub, one) with a clean environment, or as the caller.
as() {
	local who=$1
	shift
	if [ "$who" = self ]; then
		# (not the test's HUTCH_ROOT: these are the caller's own default places)
		env -u HUTCH_ROOT HOME="$TEST_DIR/home-self" XDG_RUNTIME_DIR="$TEST_DIR/xdg-self" \
			timeout -k 5 "$HUTCH_CMD_TIMEOUT" "$@"
		return
	fi
	timeout -k 5 "$HUTCH_CMD_TIMEOUT" setpriv --reuid "hutch-it-$who" --regid "hutch-it-$who" \
		--init-groups env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="$TEST_DIR/home-$who" \
		XDG_RUNTIME_DIR="$TEST_DIR/xdg-$who" "$@"
}

rl() {
	local who=$1
	shift
	as "$who" "$RL_DIR/hutch" "$@"
}

# rlsb WHO ARGS...: hutch sandbox on the (host root's) busybox image.
rlsb() {
	local who=$1
	shift
	rl "$who" sandbox --image "$RL_DIR/image" "$@"
}

# doctor's verdict on a check for WHO: ok, fail or info.
doctor_says() {
	rl "$1" doctor --format json | jq -r --arg n "$2" '.checks[] | select(.name == $n) | .status'
}

delegated() {
	[ "$(doctor_says "$1" cgroups)" = ok ]
}

@test "rootless: the default limits need a delegated cgroup: refused naming the fix, nothing left" {
	local who
	for who in $RL_USERS; do
		delegated "$who" && skip "a cgroup is delegated here (the VM lane checks the limits)"
		run --separate-stderr rlsb "$who" --report "$TEST_DIR/ws-$who/r.json" -- true
		[ "$status" -eq 125 ]
		[ "$(wc -l <<<"$stderr")" -eq 1 ]
		[[ $stderr == *"need a cgroup delegated to uid"*"--best-effort"* ]]
		[ "$(jq -r .failure "$TEST_DIR/ws-$who/r.json")" = setup ]
		# And the same for host mode: never dropped silently.
		run --separate-stderr rl "$who" sandbox --isolation landlock -- true
		[ "$status" -eq 125 ]
		[[ $stderr == *"no memory, pids or cpu limits"*"--best-effort runs anyway"* ]]
	done
}

@test "rootless: --best-effort runs with the sandbox's isolation, and says on stderr and in the report what it dropped" {
	local who probe out
	probe='grep -E "^(CapEff|NoNewPrivs|Seccomp):" /proc/self/status | tr -s "\t" " "
		touch /etc/x 2>/dev/null && echo image-writable
		touch /tmp/t && grep -q " /tmp tmpfs " /proc/mounts && echo tmp-ok
		echo made >/workspace/out && echo ws-ok
		id -u'
	for who in $RL_USERS; do
		run --separate-stderr rlsb "$who" --best-effort --workspace "$TEST_DIR/ws-$who" \
			--report "$TEST_DIR/xdg-$who/r.json" -- sh -c "$probe"
		check_status 0
		out=$output
		[[ $out == *"CapEff: 0000000000000000"* ]]
		[[ $out == *"NoNewPrivs: 1"* ]]
		[[ $out == *"Seccomp: 2"* ]]
		[[ $out != *image-writable* ]]
		[[ $out == *tmp-ok* ]] && [[ $out == *ws-ok* ]]
		[ "$(tail -n1 <<<"$out")" != 0 ] # not root inside
		# The workspace's file is the caller's on the host.
		[ "$(stat -c %u "$TEST_DIR/ws-$who/out")" = "$(as "$who" id -u)" ]
		[[ $stderr == *"warning: no memory, pids or cpu limits"* ]]
		jq -e '.isolation.rootless.cgroup == false and (.isolation.weakened | length) == 1
			and .isolation.limits.memory_bytes == null and .exit_code == 0' \
			"$TEST_DIR/xdg-$who/r.json"
		python3 -m jsonschema -i "$TEST_DIR/xdg-$who/r.json" \
			"$INTEGRATION_ROOT/../../docs/sandbox-report.schema.json"
	done
}

@test "rootless: with subordinate ids the sandbox maps a range; without, one id, and doctor says which" {
	local who ids lines
	for who in $RL_USERS; do
		ids=$(doctor_says "$who" "subordinate ids")
		# How many ids the sandbox maps (the third column's sum).
		run --separate-stderr rlsb "$who" --best-effort -- \
			awk '{ n += $3 } END { print n }' /proc/self/uid_map
		check_status 0
		lines=$output
		if [ "$ids" = ok ]; then
			[ "$lines" -eq 65536 ] # the user, and the subordinate ids around it
			[[ $stderr != *"one id only"* ]]
			jq -e '.isolation.rootless.ids == "subordinate"' < <(rlsb "$who" --best-effort \
				--report-fd 3 -- true 3>&1 >/dev/null 2>/dev/null)
		else
			[ "$lines" -eq 1 ]
			[[ $stderr == *"warning: one id only"*"cannot change files' owners"* ]]
		fi
	done
	if [ "$RL_USERS" = "sub one" ]; then # both kinds seen, as root
		[ "$(doctor_says sub "subordinate ids")" = ok ]
		[ "$(doctor_says one "subordinate ids")" = fail ]
		rl one doctor | grep -F 'fix: usermod --add-subuids'
	fi
}

@test "rootless: the timeout kills the whole tree without a cgroup" {
	local who
	for who in $RL_USERS; do
		run rlsb "$who" --best-effort --timeout 1 --grace 0.2 -- \
			sh -c 'trap "" TERM; (setsid sh -c "trap \"\" TERM; sleep 60" &); sleep 60'
		[ "$status" -eq 124 ]
		[ "$who" = self ] || ! pgrep -u "hutch-it-$who" sleep
	done
}

@test "rootless: state is under XDG_RUNTIME_DIR/hutch/.sandbox, and --lock and --name work there" {
	local who
	for who in $RL_USERS; do
		rlsb "$who" --best-effort --lock l1 --name n1 --detach -- sleep 30 2>/dev/null
		[ -n "$(ls "$TEST_DIR/xdg-$who/hutch/.sandbox/state")" ]
		run rl "$who" sandbox ls
		[[ $output == *n1*running* ]]
		run rlsb "$who" --best-effort --lock l1 --no-wait -- true
		[ "$status" -eq 125 ]
		run rl "$who" sandbox exec n1 -- true
		[ "$status" -eq 125 ]
		[[ $output == *"not supported rootless"* ]]
		rl "$who" sandbox stop n1
	done
}

@test "rootless: the image store and the seccomp cache are the caller's own" {
	local who
	for who in $RL_USERS; do
		run rl "$who" image ls
		check_status 0
		[ -d "$TEST_DIR/home-$who/.local/share/hutch" ]
		rlsb "$who" --best-effort -- true 2>/dev/null
		[ -n "$(ls "$TEST_DIR/home-$who/.cache/hutch/seccomp")" ]
		# XDG's variables win over HOME's defaults.
		as "$who" env XDG_DATA_HOME="$TEST_DIR/home-$who/data" "$RL_DIR/hutch" image ls
		[ -d "$TEST_DIR/home-$who/data/hutch" ]
	done
}

@test "rootless: what only host root can do is refused with the reason" {
	local who flag
	for who in $RL_USERS; do
		for flag in "--network bridge" "--runtime runc" "--as-root" "--host-root" \
			"--workspace $TEST_DIR/ws-$who --workspace-owner 1:1" \
			"--deny-host-loopback --network host"; do
			# shellcheck disable=SC2086 # the flag and its value
			run --separate-stderr rlsb "$who" --best-effort $flag -- true
			[ "$status" -eq 125 ]
			[ "$(wc -l <<<"$stderr")" -eq 1 ]
			[[ $stderr == *"${flag%% *}"*"not supported rootless"* ]]
		done
		# Someone else's workspace: the sandbox would write there as the caller.
		run --separate-stderr rlsb "$who" --best-effort --workspace /usr -- true
		[ "$status" -eq 125 ]
		[[ $stderr == *"--workspace /usr is not yours"* ]]
		# Host mode's --best-effort runs without the filter, and says so.
		run -0 rl "$who" sandbox --isolation landlock --best-effort --deny-host-loopback \
			--report "$TEST_DIR/ws-$who/r.json" -- true
		[[ "$(jq -c .isolation.weakened "$TEST_DIR/ws-$who/r.json")" == *"--deny-host-loopback: the host's loopback stays reachable"* ]]
	done
}

@test "rootless: hutch run, create, start, exec, list, kill and delete of a spec --rootless bundle" {
	local who b
	for who in $RL_USERS; do
		b=$TEST_DIR/ws-$who/bundle
		as "$who" mkdir "$b"
		(cd "$b" && rl "$who" spec --rootless)
		# The image as the bundle's root: host root's, read-only, as a shared rootfs is.
		as "$who" sh -c "jq --arg r '$RL_DIR/image' '.root.path = \$r | .process.terminal = false | .process.args = [\"sh\", \"-c\", \"cat /proc/self/uid_map; id -u\"]' $b/config.json >$b/c && mv $b/c $b/config.json"
		run rl "$who" run --bundle "$b" rl-run
		check_status 0
		[[ $(tr -s ' ' <<<"$output") == *" 0 $(as "$who" id -u) 1"* ]]
		[ "$(tail -n1 <<<"$output")" = 0 ]
		as "$who" sh -c "jq '.process.args = [\"sleep\", \"60\"]' $b/config.json >$b/c && mv $b/c $b/config.json"
		rl "$who" create --bundle "$b" rl-c
		rl "$who" start rl-c
		[ -d "$TEST_DIR/xdg-$who/hutch/rl-c" ]
		run rl "$who" list -q
		[ "$output" = rl-c ]
		run rl "$who" exec rl-c sh -c 'echo in-$(id -u)'
		check_status 0
		[ "$output" = in-0 ]
		rl "$who" kill rl-c KILL
		wait_until_stopped "$who" rl-c
		rl "$who" delete rl-c
		[ ! -e "$TEST_DIR/xdg-$who/hutch/rl-c" ]
		# Limits need a cgroup: runc's rootless rule refuses them where none is delegated.
		delegated "$who" && continue
		as "$who" sh -c "jq '.linux.resources.pids = {limit: 10}' $b/config.json >$b/c && mv $b/c $b/config.json"
		run --separate-stderr rl "$who" run --bundle "$b" rl-lim
		[ "$status" -eq 1 ]
		[[ $stderr == *"linux.resources sets limits, which need a cgroup delegated"* ]]
		[ ! -e "$TEST_DIR/xdg-$who/hutch/rl-lim" ]
	done
}

wait_until_stopped() {
	local tries=100
	until [ "$(rl "$1" state "$2" | jq -r .status)" = stopped ]; do
		[ $tries -gt 0 ] || return 1
		sleep 0.05
		tries=$((tries - 1))
	done
}

@test "rootless: under unshare -r (one mapped id) the sandbox runs, as crun's CI runs it" {
	local who
	for who in $RL_USERS; do
		run --separate-stderr as "$who" unshare -r "$RL_DIR/hutch" sandbox --best-effort \
			--image "$RL_DIR/image" -- sh -c 'wc -l </proc/self/uid_map; grep ^CapEff /proc/self/status'
		check_status 0
		[ "$(head -n1 <<<"$output")" -eq 1 ]
		[[ $output == *"CapEff:	0000000000000000"* ]]
	done
}

@test "doctor: as host root it says the sandbox runs; its facts match this host" {
	rootless_pass && skip "needs host root"
	run --separate-stderr "$HUTCH" doctor
	check_status 0
	[[ $output == *"hutch sandbox with its defaults: runs"* ]]
	run "$HUTCH" doctor --format json
	check_status 0
	jq -e '.rootless == false and .sandbox_defaults == true' <<<"$output"
	# Ordinary users can make user namespaces here (the tests above do): doctor agrees.
	jq -e '.checks[] | select(.name == "unprivileged user namespaces") | .status == "ok"' <<<"$output"
	if [ -d /sys/fs/cgroup/unified ]; then
		jq -e '.checks[] | select(.name == "cgroups") | .detail | startswith("hybrid")' <<<"$output"
		run rl sub doctor
		[ "$status" -eq 1 ]
		[[ $output == *"FAIL  cgroups"* ]] && [[ $output == *"refused"* ]]
	fi
	run "$HUTCH" doctor --format yaml
	[ "$status" -eq 1 ]
	[[ $output == *"--format: expected text or json"* ]]
}

@test "rootless: a \$TMPDIR/hutch-UID made first by another user is not used, nor in the way" {
	rootless_pass && skip "needs a second user to squat (runs as root)"
	local uid tmp=$TEST_DIR/tmp home=$TEST_DIR/home-sub
	uid=$(id -u hutch-it-sub)
	mkdir -m 1777 "$tmp"
	mkdir -m 777 "$tmp/hutch-$uid" # the squat: another user's, open to all
	chown hutch-it-one: "$tmp/hutch-$uid"
	# no XDG_RUNTIME_DIR, no /run/user/UID: cron, su, CI
	squatted() {
		timeout -k 5 "$HUTCH_CMD_TIMEOUT" setpriv --reuid hutch-it-sub --regid hutch-it-sub \
			--init-groups env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="$home" \
			TMPDIR="$tmp" "$RL_DIR/hutch" "$@"
	}
	[ ! -e "/run/user/$uid" ] || skip "/run/user/$uid exists"
	run -0 --separate-stderr squatted sandbox --best-effort --image "$RL_DIR/image" -- echo one
	[ "$output" = one ]
	local dir
	dir=$(cat "$home/.cache/hutch/run-dir")
	[[ $dir == "$tmp/hutch-$uid."* ]]
	[ "$(stat -c '%U %a' "$dir")" = "hutch-it-sub 700" ]
	# the next invocation finds the same state: a named sandbox, then its ls
	run -0 squatted sandbox --best-effort --image "$RL_DIR/image" --name sq --detach -- sleep 30
	run -0 squatted sandbox ls
	[[ $output == *sq* ]]
	run -0 squatted sandbox rm -f sq
	[ "$(cat "$home/.cache/hutch/run-dir")" = "$dir" ]
	# the squatted directory was never used
	[ -z "$(ls -A "$tmp/hutch-$uid")" ]
	[ "$(stat -c %U "$tmp/hutch-$uid")" = hutch-it-one ]
	rm -rf "$dir"
}

@test "rootless: a named sandbox with a throw-away layer is stopped and removed by its name" {
	# The image has no /workspace: the rootfs is an overlay in the supervisor's scratch
	# namespace, which the caller's has not; stop and rm find the sandbox without its path.
	local who
	for who in $RL_USERS; do
		rlsb "$who" --best-effort --workspace "$TEST_DIR/ws-$who" --name n1 --detach \
			-- sleep 30 2>/dev/null
		run rl "$who" sandbox stop n1
		check_status 0
		rlsb "$who" --best-effort --workspace "$TEST_DIR/ws-$who" --name n2 --detach \
			-- sleep 30 2>/dev/null
		run rl "$who" sandbox rm -f n2
		check_status 0
		run rl "$who" sandbox ls --format json
		check_status 0
		[ "$output" = "[]" ]
	done
}

@test "rootless: stop of a named sandbox whose supervisor was killed and its pid taken cleans up at once" {
	# The record's supervisor is its pid and start time: a process that took the pid since is
	# not it, so stop does not wait for it to end, and removes what the supervisor left.
	rootless_pass && skip "sets ns_last_pid: host root only"
	local who=sub sup t0
	rlsb "$who" --best-effort --name n1 --detach -- sleep 30 2>/dev/null
	sup=$(cat "$TEST_DIR/xdg-$who/hutch/.sandbox/names/n1")
	sup=${sup#sb-}
	kill -9 "$sup"
	take_pid "$sup" || skip "pid $sup was not ours to take (a busy host)"
	t0=$(date +%s)
	run rl "$who" sandbox stop n1
	kill "$TAKEN"
	check_status 0
	[ $(($(date +%s) - t0)) -lt 10 ]
	[ -z "$(ls -A "$TEST_DIR/xdg-$who/hutch/.sandbox/state")" ]
	[ -z "$(ls -A "$TEST_DIR/xdg-$who/hutch/.sandbox/names")" ]
}
