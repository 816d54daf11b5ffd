#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
#
# hutch sandbox --runtime runc|crun|runsc|PATH: the same sandbox run by another OCI runtime.
# Each runtime runs the same probe from inside (ids, hardening, read-only root, workspace,
# network, exit codes, the timeout's tree kill, the report) and must leave nothing behind:
# no state, cgroup, scratch mount or runtime process. A runtime whose binary is absent is
# skipped. runsc can lose bytes of stdout through a pipe here, so output always goes to files.

load ../helpers
load ../sandbox-helpers


# An image with every mount point the sandbox uses, in a directory the sandbox's mapped ids
# can traverse.
setup_file() {
	sb_images_setup data
	sb_image_helpers memhog forkbomb
}

setup() {
	sb_setup
	WS=$TEST_DIR/ws
	mkdir -p "$WS"
	chown 4242:4242 "$WS"
	# The sandboxes' stdin: a null device of the test's own. Some runtimes chown their stdio
	# (see the stdio test), and the host's /dev/null must never be one of them.
	mknod -m 666 "$TEST_DIR/null" c 1 3
}

# requires_runtime NAME: skips the test when the runtime's binary is absent.
requires_runtime() {
	command -v "$1" >/dev/null || skip "$1 not installed"
}

# sb_run ARGS...: like `run sb ARGS...`, through files: stdout+stderr in output/lines,
# stderr alone in $TEST_DIR/err.
sb_run() {
	status=0
	sb "$@" <"$TEST_DIR/null" >"$TEST_DIR/out" 2>"$TEST_DIR/err" 3>&- || status=$?
	output=$(cat "$TEST_DIR/out" "$TEST_DIR/err")
	mapfile -t lines <"$TEST_DIR/out"
	echo "# sandbox $* -> $status:" >&2
	sed 's/^/#   /' <<<"$output" >&2
}

# Processes on the host whose command line names the sandbox of hutch PID (the delegate runs
# it as container sb-PID): the runtime itself, runsc's gofer and sandbox.
runtime_processes() {
	pgrep -f -- "(^|[ =/])sb-$1( |$)" || true
}

# Every hutch of the test must have left nothing: no state dir, cgroup, runtime process or
# scratch mount. A hutch still running is killed first, and the things it left are removed.
sb_teardown() {
	local - failures=() p procs
	set +e
	[ -n "${TEST_DIR:-}" ] && [ -e "${SB_PIDS:-}" ] || return 0
	for p in $(sort -u "$SB_PIDS"); do
		if is_hutch "$p"; then
			failures+=("hutch $p still running")
			kill -9 "$p"
			sleep 0.3
		fi
		procs=$(runtime_processes "$p")
		if [ -n "$procs" ]; then
			failures+=("runtime processes left: $(pgrep -af -- "sb-$p" | tr '\n' ' ')")
			kill -9 $procs 2>/dev/null
		fi
		sb_left_by "$p"
	done
	sb_scratch_left
	if [ ${#failures[@]} -gt 0 ]; then
		printf 'LEAK: %s\n' "${failures[@]}" >&2
		return 1
	fi
}

# The probe: one line per fact, checked by check_probe.
PROBE='echo "ids=$(id -u):$(id -g)"; grep -E "^(NoNewPrivs|Cap(Prm|Eff|Bnd)|Seccomp):" /proc/self/status
echo "root=$(awk "\$2 == \"/\" { print \$4 }" /proc/mounts | cut -d, -f1)"
touch /probe 2>/dev/null; echo "write-root=$?"
echo "tmp=$(awk "\$2 == \"/tmp\" { print \$3 }" /proc/mounts)"
echo ws >/workspace/from-$0 && echo "write-ws=0"
echo "home=$HOME cwd=$(pwd) host=$(hostname) links=$(ip -o link | wc -l)"
exit 7'

# check_probe RUNTIME: what every runtime must show (runsc has no NoNewPrivs line).
check_probe() {
	local rt=$1
	check_status 7
	grep -qx 'ids=1000:1000' <<<"$output"
	grep -Eqx $'CapPrm:\t0+' <<<"$output"
	grep -Eqx $'CapEff:\t0+' <<<"$output"
	grep -Eqx $'CapBnd:\t0+' <<<"$output"
	grep -qx $'Seccomp:\t2' <<<"$output"
	if [ "$rt" = runsc ]; then
		! grep -q '^NoNewPrivs:' <<<"$output" || grep -qx $'NoNewPrivs:\t1' <<<"$output"
	else
		grep -qx $'NoNewPrivs:\t1' <<<"$output"
	fi
	grep -qx 'root=ro' <<<"$output"
	grep -qx 'write-root=1' <<<"$output"
	grep -qx 'tmp=tmpfs' <<<"$output"
	grep -qx 'write-ws=0' <<<"$output"
	grep -qx 'home=/workspace cwd=/workspace host=sandbox links=1' <<<"$output"
	[ "$(cat "$WS/from-$rt")" = ws ]
	[ "$(stat -c %u:%g "$WS/from-$rt")" = 4242:4242 ]
	jq -e --arg rt "$rt" '.runtime == $rt and .exit_code == 7 and .timed_out == false
		and .error == null and .isolation.pid1 == "command"' "$TEST_DIR/r.json"
}

probe() {
	local rt=$1
	requires_runtime "$rt"
	sb_run --runtime "$rt" --workspace "$WS" --report "$TEST_DIR/r.json" -- sh -c "$PROBE" "$rt"
	check_probe "$rt"
	# The bundle and the runtime's state were in hutch's scratch tmpfs: nothing on the disk.
	[ -z "$(runtime_processes "$(tail -n1 "$SB_PIDS")")" ]
}

# The command's exit code, 127 for a missing one, 126 for one that is not executable.
exit_codes() {
	local rt=$1
	requires_runtime "$rt"
	sb_run --runtime "$rt" -- sh -c 'exit 42'
	check_status 42
	sb_run --runtime "$rt" -- no-such-command
	check_status 127
	sb_run --runtime "$rt" -- /etc/passwd
	check_status 126
}

# A sandbox that the runtime cannot start (a working directory that does not exist in the
# read-only image) is hutch's failure, 125, as with the native runtime.
start_failure() {
	local rt=$1
	requires_runtime "$rt"
	sb_run --runtime "$rt" --cwd /no-such-dir --report "$TEST_DIR/r.json" -- true
	check_status 125
	grep -q '^hutch: error: ' "$TEST_DIR/err"
	jq -e '.exit_code == 125 and (.error | type) == "string"' "$TEST_DIR/r.json"
}

# The whole tree, double-forked and setsid'd and deaf to SIGTERM, is gone after the timeout.
timeout_kills_tree() {
	local rt=$1 m t0 dt
	requires_runtime "$rt"
	m=$(mark)
	t0=$(now_ms)
	sb_run --runtime "$rt" --timeout 1 --grace 1 --report "$TEST_DIR/r.json" -- sh -c "
		trap '' TERM; (setsid sh -c \"trap '' TERM; sleep $m\" &); sleep $m"
	dt=$(($(now_ms) - t0))
	echo "took ${dt}ms" >&2
	check_status 124
	[ "$dt" -lt 8000 ]
	jq -e --arg rt "$rt" '.timed_out == true and .exit_code == 124 and .runtime == $rt' \
		"$TEST_DIR/r.json"
	no_process_like "sleep $m"
}

# Processes still in the cgroups of hutch PID's sandbox.
cgroup_processes() {
	local d
	for d in $(sb_cgroups "$1"); do
		find "$d" -name cgroup.procs -exec cat {} + 2>/dev/null
	done | sort -u
}

# SIGKILL of hutch: the delegated sandbox dies too (it is tied to hutch's life), and what is
# left is cleaned by the next hutch. (runsc's processes live in its own kernel: they are
# found through the cgroup, as the runtime's are.)
sigkill_hutch() {
	local rt=$1 hp bg tries=500
	requires_runtime "$rt"
	(SB_PIDFILE=$TEST_DIR/victim.pid sb --runtime "$rt" -- sh -c 'echo started; exec sleep 1000' \
		<"$TEST_DIR/null" >"$TEST_DIR/victim.out" 2>&1 3>&-) 3>&- &
	bg=$!
	track_pid "$bg"
	until grep -q started "$TEST_DIR/victim.out" 2>/dev/null; do
		[ $tries -gt 0 ] || false
		sleep 0.02
		tries=$((tries - 1))
	done
	hp=$(cat "$TEST_DIR/victim.pid")
	[ -n "$(cgroup_processes "$hp")" ]
	kill -9 "$hp"
	wait "$bg" || true
	local until=$(($(now_ms) + 5000))
	while [ -n "$(cgroup_processes "$hp")$(runtime_processes "$hp")" ] &&
		[ "$(now_ms)" -lt $until ]; do
		sleep 0.1
	done
	echo "left in the cgroups: $(cgroup_processes "$hp" | tr '\n' ' ')" >&2
	echo "runtime processes: $(runtime_processes "$hp" | tr '\n' ' ')" >&2
	[ -z "$(cgroup_processes "$hp")" ]
	[ -z "$(runtime_processes "$hp")" ]
	# the keeper removes the cgroups, the cgroup2 one too (crun's is busy while the tree it
	# has just killed is exiting, and that tree's zombies are reaped by whoever inherits
	# them: here the suite's reaper, so not always within the keeper's second); whatever
	# is left then, the next sandbox's sweep removes
	until=$(($(now_ms) + 5000))
	while [ -n "$(sb_cgroups "$hp")" ] && [ "$(now_ms)" -lt $until ]; do
		sleep 0.1
	done
	echo "cgroups left by the keeper: $(sb_cgroups "$hp" | tr '\n' ' ')" >&2
	sb_run -- true
	check_status 0
	[ -z "$(sb_cgroups "$hp")" ]
	[ ! -e "$SB_STATE/sb-$hp" ]
}

# SIGKILL of the keeper during a run: hutch carries on (its "done" byte to the dead keeper
# raised SIGPIPE, status 141) and cleans up itself: status, report, cgroups, state.
keeper_killed() {
	local rt=$1 hp k bg tries=500
	requires_runtime "$rt"
	(
		st=0
		SB_PIDFILE=$TEST_DIR/victim.pid sb --runtime "$rt" --report "$TEST_DIR/r.json" \
			-- sh -c 'echo started; sleep 2; exit 7' <"$TEST_DIR/null" \
			>"$TEST_DIR/victim.out" 2>&1 3>&- || st=$?
		echo "$st" >"$TEST_DIR/victim.status"
	) 3>&- &
	bg=$!
	track_pid "$bg"
	until grep -q started "$TEST_DIR/victim.out" 2>/dev/null; do
		[ $tries -gt 0 ] || false
		sleep 0.02
		tries=$((tries - 1))
	done
	hp=$(cat "$TEST_DIR/victim.pid")
	k=$(ps -o pid=,sid= --ppid "$hp" | awk '$1 == $2 { print $1 }') # setsid: its own session
	[ -n "$k" ]
	kill -9 $k
	wait "$bg"
	cat "$TEST_DIR/victim.out" >&2
	[ "$(cat "$TEST_DIR/victim.status")" = 7 ]
	jq -e '.exit_code == 7' "$TEST_DIR/r.json"
	[ -z "$(sb_cgroups "$hp")" ]
	[ ! -e "$SB_STATE/sb-$hp" ]
}

@test "sandbox delegate runc: SIGKILL of the keeper: hutch cleans up and reports" {
	keeper_killed runc
}

@test "sandbox delegate runsc: SIGKILL of the keeper: hutch cleans up and reports" {
	keeper_killed runsc
}

# The caller's stdio files (and a null device) keep their owners: the sandbox writes to them
# through the fds it inherits, with no chown of the caller's files.
stdio_owners() {
	local rt=$1 f
	requires_runtime "$rt"
	echo input >"$TEST_DIR/in"
	: >"$TEST_DIR/out"
	: >"$TEST_DIR/err"
	chown 4242:4242 "$TEST_DIR/in" "$TEST_DIR/out" "$TEST_DIR/err" "$TEST_DIR/null"
	sb --runtime "$rt" -- sh -c 'cat; echo to-err >&2' <"$TEST_DIR/in" >"$TEST_DIR/out" \
		2>"$TEST_DIR/err" || {
		echo "status $?: $(cat "$TEST_DIR/err")" >&2 # hutch's error went there too
		return 1
	}
	[ "$(cat "$TEST_DIR/out")" = input ]
	[ "$(cat "$TEST_DIR/err")" = to-err ]
	sb --runtime "$rt" -- true <"$TEST_DIR/null" >"$TEST_DIR/null" 2>&1
	for f in in out err null; do
		echo "$f: $(stat -c %u:%g "$TEST_DIR/$f")" >&2
		[ "$(stat -c %u:%g "$TEST_DIR/$f")" = 4242:4242 ]
	done
}

@test "sandbox delegate runc: the probe" {
	probe runc
}

@test "sandbox delegate crun: the probe" {
	probe crun
}

@test "sandbox delegate runsc: the probe" {
	probe runsc
}

@test "sandbox delegate runc: the caller's stdio files keep their owners" {
	stdio_owners runc
}

@test "sandbox delegate crun: the caller's stdio files keep their owners" {
	stdio_owners crun
}

@test "sandbox delegate runsc: the caller's stdio files keep their owners" {
	stdio_owners runsc
}

@test "sandbox delegate runc: exit codes 42, 127, 126" {
	exit_codes runc
}

@test "sandbox delegate crun: exit codes 42, 127, 126" {
	exit_codes crun
}

@test "sandbox delegate runsc: exit codes 42, 127, 126" {
	exit_codes runsc
}

@test "sandbox delegate runc: a sandbox that cannot start is 125" {
	start_failure runc
}

@test "sandbox delegate crun: a sandbox that cannot start is 125" {
	start_failure crun
}

@test "sandbox delegate runsc: a sandbox that cannot start is 125" {
	start_failure runsc
}

# The timeout's SIGTERM reaches the command, whose handler runs within --grace (runsc: it went
# to `runsc run`, which ended the sandbox about 1.5 s later, handler never run).
timeout_term_handler() {
	local rt=$1 t0 dt
	requires_runtime "$rt"
	t0=$(now_ms)
	sb_run --runtime "$rt" --timeout 1 --grace 10 --report "$TEST_DIR/r.json" -- sh -c \
		'trap "echo got-term; exit 3" TERM; while :; do sleep 0.1; done'
	dt=$(($(now_ms) - t0))
	echo "took ${dt}ms" >&2
	check_status 124
	grep -qx got-term "$TEST_DIR/out"
	[ "$dt" -lt 6000 ] # the handler ended it, not the grace
	jq -e '.timed_out == true and .exit_code == 124' "$TEST_DIR/r.json"
}

@test "sandbox delegate runc: --timeout's SIGTERM runs the command's handler" {
	timeout_term_handler runc
}

@test "sandbox delegate runsc: --timeout's SIGTERM runs the command's handler" {
	timeout_term_handler runsc
}

@test "sandbox delegate runc: --timeout kills the whole tree" {
	timeout_kills_tree runc
}

@test "sandbox delegate crun: --timeout kills the whole tree" {
	timeout_kills_tree crun
}

@test "sandbox delegate runsc: --timeout kills the whole tree" {
	timeout_kills_tree runsc
}

@test "sandbox delegate runc: SIGKILL of hutch leaves nothing behind" {
	sigkill_hutch runc
}

@test "sandbox delegate crun: SIGKILL of hutch leaves nothing behind" {
	sigkill_hutch crun
}

@test "sandbox delegate runsc: SIGKILL of hutch leaves nothing behind" {
	sigkill_hutch runsc
}

# weakened RUNTIME: the report's isolation.weakened, one entry a line.
weakened() {
	jq -r '.isolation.weakened[]' "$TEST_DIR/r.json"
}

# What a runtime cannot give is in the report's weakened, and each claim holds: under runsc a
# memory hog ends the whole sandbox (natively and under runc only the hog is killed); under a
# delegate the command is PID 1, which outlives a SIGTERM until --grace ends. A native run
# lists nothing.
@test "sandbox delegate: weakened lists what the runtime cannot give, and it is so" {
	local t0 dt
	sb_run --memory 64m --report "$TEST_DIR/r.json" -- sh -c 'tail /dev/zero; echo after=$?'
	check_status 0
	grep -qx 'after=137' "$TEST_DIR/out"
	[ -z "$(weakened)" ]
	t0=$(now_ms)
	sb_run --timeout 1 --grace 3 --report "$TEST_DIR/r.json" -- sleep 30
	dt=$(($(now_ms) - t0))
	check_status 124
	[ "$dt" -lt 3000 ] # SIGTERM ends it at once
	if command -v runc >/dev/null; then
		sb_run --runtime runc --memory 64m --report "$TEST_DIR/r.json" -- sh -c 'tail /dev/zero; echo after=$?'
		grep -qx 'after=137' "$TEST_DIR/out"
		! weakened | grep -q -- '^--memory'
		t0=$(now_ms)
		sb_run --runtime runc --timeout 1 --grace 2 --report "$TEST_DIR/r.json" -- sleep 30
		dt=$(($(now_ms) - t0))
		check_status 124
		[ "$dt" -ge 3000 ] # PID 1 ignored SIGTERM: killed when the grace ran out
		weakened | grep -q -- '^--timeout: the command is PID 1'
	fi
	requires_runtime runsc
	sb_run --runtime runsc --memory 64m --report "$TEST_DIR/r.json" -- sh -c 'tail /dev/zero; echo after=$?'
	check_status 137
	! grep -q after "$TEST_DIR/out"
	jq -e '.oom_killed == true' "$TEST_DIR/r.json"
	weakened | grep -q -- '^--memory: under runsc running out ends the whole sandbox'
	weakened | grep -q -- '^--pids: under runsc it bounds runsc.s host threads'
	# gVisor's PID 1 dies of the timeout's SIGTERM (runsc kill): not weakened there
	t0=$(now_ms)
	sb_run --runtime runsc --timeout 1 --grace 3 --report "$TEST_DIR/r.json" -- sleep 30
	dt=$(($(now_ms) - t0))
	check_status 124
	[ "$dt" -lt 3000 ]
	! weakened | grep -q -- '^--timeout'
	sb_run --runtime runsc --timeout 0 --memory 0 --pids 0 --report "$TEST_DIR/r.json" -- true
	check_status 0
	[ -z "$(weakened)" ]
}

# Debian's runsc (release 20240729) cannot start its netstack on this kernel: hutch runs its
# host stack in the wired namespace, says so on stderr, and the report lists it.
@test "sandbox delegate runsc: the host stack fallback is in weakened" {
	local v
	requires_runtime runsc
	v=$(runsc --version | sed -n 's/.*\(release-\|0\.0~\)\([0-9]\{8\}\).*/\2/p' | head -n1)
	sb_run --runtime runsc --network bridge --report "$TEST_DIR/r.json" -- true
	check_status 0
	if [ -n "$v" ] && [ "$v" -lt 20240801 ]; then
		grep -q 'host stack' "$TEST_DIR/err"
		weakened | grep -q '^network: .*predates release-20240801'
	else
		! weakened | grep -q '^network:'
	fi
}

# roundtrip RUNTIME FLAGS...: what the sandbox writes to its workspace and to an rw --bind of
# another user's directory reaches the host, and what the host writes there the sandbox reads,
# in a second sandbox too. (runsc once kept an --as-root workspace's writes in its overlay.)
roundtrip() {
	local rt=$1 d b=$TEST_DIR/other
	shift
	requires_runtime "$rt"
	mkdir "$b"
	chown 4343:4343 "$b"
	for d in "$WS" "$b"; do echo host1 >"$d/host1"; done
	sb_run --runtime "$rt" "$@" --workspace "$WS" --bind "$b:/data" -- sh -c '
		for d in /workspace /data; do cat $d/host1 && echo sb1 >$d/sb1 || exit 9; done'
	check_status 0
	[ "$(cat "$TEST_DIR/out")" = "$(printf 'host1\nhost1')" ]
	for d in "$WS" "$b"; do
		[ "$(cat "$d/sb1")" = sb1 ]
		echo host2 >"$d/host2"
	done
	if [[ " $* " != *" --host-root "* ]]; then # else root's, and said so
		[ "$(stat -c %u:%g "$WS/sb1")" = 4242:4242 ]
		[ "$(stat -c %u:%g "$b/sb1")" = 4343:4343 ]
	fi
	sb_run --runtime "$rt" "$@" --workspace "$WS" --bind "$b:/data" -- sh -c '
		for d in /workspace /data; do cat $d/sb1 $d/host2 || exit 9; done'
	check_status 0
	[ "$(cat "$TEST_DIR/out")" = "$(printf 'sb1\nhost2\nsb1\nhost2')" ]
}

@test "sandbox delegate runsc: workspace and rw bind round trip, --as-root" {
	roundtrip runsc --as-root
}

@test "sandbox delegate runsc: workspace and rw bind round trip, --host-root and plain" {
	roundtrip runsc --host-root
	rm -rf "$TEST_DIR/other" "$WS"/*
	roundtrip runsc
}

@test "sandbox delegate runc, crun: workspace and rw bind round trip, every user flag" {
	local rt flags ran=0
	for rt in runc crun; do
		command -v "$rt" >/dev/null || continue
		ran=1
		for flags in --as-root --host-root --; do
			rm -rf "$TEST_DIR/other" "$WS"/*
			[ "$flags" = -- ] && flags=
			roundtrip "$rt" $flags
		done
	done
	[ $ran = 1 ] || skip "neither runc nor crun installed"
}

# PLAIN_CG: run in a private mount namespace whose /sys/fs/cgroup is a copy of the host's with
# a plain directory for each of hugetlb, net_cls, net_prio and perf_event that is not mounted,
# as some hosts have them. runsc makes its cgroup path there too and removes only the leaf.
# Nothing with the sandbox's name may be left there: after a run, after SIGKILL of hutch (its
# keeper cleans), after SIGKILL of hutch and its keeper (the next sandbox's sweep cleans the
# leaf). The parent path runsc made there goes too, but after SIGKILL of both.
PLAIN_CG='set -e
T=$(mktemp -d "$TEST_DIR/cg.XXXXXX")
mount -t tmpfs -o mode=755 tmpfs "$T"
for h in /sys/fs/cgroup/*; do mkdir "$T/${h##*/}"; mount --bind "$h" "$T/${h##*/}"; done
for c in hugetlb net_cls net_prio perf_event; do [ -e "$T/$c" ] || mkdir "$T/$c"; done
mount --move "$T" /sys/fs/cgroup
left() { find /sys/fs/cgroup/hugetlb /sys/fs/cgroup/net_cls /sys/fs/cgroup/net_prio \
	/sys/fs/cgroup/perf_event -name "hutch-sb-$1" 2>/dev/null; }
run_hutch='\''echo $$ >>"$SB_PIDS"; exec "$HUTCH" sandbox --image "$IMAGE" "$@"'\''
hutch() { sh -c "$run_hutch" sh "$@"; }
until_gone() {
	local tries=50
	while [ -n "$(left "$1")" ] && [ $tries -gt 0 ]; do sleep 0.1; tries=$((tries - 1)); done
	echo "left by $1: $(left "$1" | tr "\n" " ")"
	[ -z "$(left "$1")" ]
}
started() {
	local tries=200
	until grep -q started "$TEST_DIR/bg.out"; do
		[ $tries -gt 0 ] || return 1; sleep 0.05; tries=$((tries - 1))
	done
	echo "made by $1: $(left "$1" | tr "\n" " ")"
	[ -n "$(left "$1")" ] # runsc did make its path there: the check below means something
}
# the path above the leaf, which runsc makes there too, goes with the run (the dirs were
# empty before): the sweep after both were killed knows nothing of it, and leaves it
no_parents() {
	local d
	d=$(find /sys/fs/cgroup/hugetlb /sys/fs/cgroup/net_cls /sys/fs/cgroup/net_prio \
		/sys/fs/cgroup/perf_event -mindepth 1 -type d 2>/dev/null)
	echo "parents left: $d"
	[ -z "$d" ]
}
hutch --runtime runsc -- true </dev/null
until_gone "$(tail -n1 "$SB_PIDS")"
no_parents
for victims in hutch hutch+keeper; do
	: >"$TEST_DIR/bg.out"
	sh -c "$run_hutch" sh --runtime runsc -- sh -c "echo started; exec sleep 1000" \
		</dev/null >"$TEST_DIR/bg.out" 2>&1 &
	bg=$!
	started "$bg"
	keeper=$(pgrep -P "$bg" -x hutch | tr "\n" " ")
	if [ $victims = hutch ]; then kill -9 "$bg"; else kill -9 "$bg" $keeper; fi
	wait "$bg" || true
	[ $victims = hutch ] || hutch -- true </dev/null
	until_gone "$bg"
	[ $victims != hutch ] || no_parents
done'

@test "sandbox delegate runsc: nothing left in an unmounted controller's plain directory" {
	requires_runtime runsc
	[ -d /sys/fs/cgroup/memory ] && [ "$(stat -f -c %T /sys/fs/cgroup)" = tmpfs ] ||
		skip "not a v1 host"
	TEST_DIR=$TEST_DIR SB_PIDS=$SB_PIDS HUTCH=$HUTCH IMAGE=$IMAGE \
		unshare -m --propagation private bash -c "$PLAIN_CG"
}

@test "sandbox delegate runc, crun: the cgroup limits apply" {
	local rt ran=0
	for rt in runc crun; do
		command -v "$rt" >/dev/null || continue
		ran=1
		sb_run --runtime "$rt" --memory 64m --pids 77 -- sh -c '
			if [ -e /sys/fs/cgroup/cgroup.controllers ]; then
				cat /sys/fs/cgroup/memory.max /sys/fs/cgroup/pids.max
			else
				cat /sys/fs/cgroup/memory/memory.limit_in_bytes /sys/fs/cgroup/pids/pids.max
			fi'
		check_status 0
		[ "${lines[0]}" = 67108864 ]
		[ "${lines[1]}" = 77 ]
	done
	[ $ran = 1 ] || skip "neither runc nor crun installed"
}

@test "sandbox delegate runc: a memory hog is OOM-killed and reported" {
	requires_runtime runc
	sb_run --runtime runc --memory 32m --report "$TEST_DIR/r.json" -- sh -c 'tail /dev/zero'
	check_status 137
	jq -e '.oom_killed == true and .runtime == "runc"' "$TEST_DIR/r.json"
}

# What each runtime's report can tell of the limits: a child's OOM kill the command outlives is
# no failure; the OOM kills are counted where the cgroup keeps them (v2, not runsc), else null.
@test "sandbox delegate runc, crun, runsc: the report names the limits hit, and says unknown for what it cannot count" {
	local rt ran=0 v1=1
	[ ! -e /sys/fs/cgroup/cgroup.controllers ] || v1=0
	for rt in runc crun runsc; do
		command -v $rt >/dev/null || continue
		ran=1
		# runsc: gVisor's malloc fails before a kill; either way the command goes on.
		sb_run --runtime $rt --memory 64m --report "$TEST_DIR/r.json" -- \
			sh -c 'memhog 128 >/dev/null; echo "child $?"'
		check_status 0
		[[ ${lines[0]} == "child "* ]]
		jq -e --arg rt $rt --argjson v1 $v1 '.runtime == $rt and .failure == null
			and .exit_code == 0 and .error == null and .limits_hit == ["memory"]
			and (if $v1 == 1 or $rt == "runsc" then .oom_kills == null
			     else .oom_kills >= 1 end)' "$TEST_DIR/r.json"
		[ $rt != runsc ] || continue # its sandbox needs more than --pids 24 of host threads
		sb_run --runtime $rt --memory 32m --report "$TEST_DIR/r.json" -- memhog 64
		check_status 137
		jq -e '.failure == "oom" and .oom_killed == true and .signal == 9
			and .limits_hit == ["memory"]' "$TEST_DIR/r.json"
		sb_run --runtime $rt --pids 24 --timeout 1 --grace 1 --report "$TEST_DIR/r.json" -- \
			forkbomb
		check_status 124
		[[ $output == *"forkbomb: a fork refused"* ]]
		# v1 counts refused forks in the runtime's cgroup, gone when it returns
		jq -e --argjson v1 $v1 '.failure == "timeout" and (.limits_hit | index("timeout"))
			and (if $v1 == 1 then .limits_unknown == ["pids"]
			     else (.limits_hit | index("pids")) or .limits_unknown == ["pids"] end)' \
			"$TEST_DIR/r.json"
	done
	[ $ran = 1 ] || skip "no runc, crun or runsc installed"
}

@test "sandbox delegate: stdin to stdout byte for byte through runc" {
	requires_runtime runc
	head -c 100000 /dev/urandom >"$TEST_DIR/bin"
	sb --runtime runc -- cat <"$TEST_DIR/bin" >"$TEST_DIR/out" 2>"$TEST_DIR/err"
	cmp "$TEST_DIR/bin" "$TEST_DIR/out"
	[ ! -s "$TEST_DIR/err" ]
}

@test "sandbox delegate: a runtime that does not exist is a clear error, never native" {
	sb_run --runtime /nonexistent -- sh -c 'echo ran'
	check_status 125
	[ "$(wc -l <"$TEST_DIR/err")" -eq 1 ]
	grep -q '^hutch: error: --runtime /nonexistent: not found' "$TEST_DIR/err"
	[ ! -s "$TEST_DIR/out" ]
	sb_run --runtime no-such-runtime -- sh -c 'echo ran'
	check_status 125
	grep -q -- '--runtime no-such-runtime' "$TEST_DIR/err"
	[ ! -s "$TEST_DIR/out" ]
}

@test "sandbox delegate: --runtime PATH runs that binary and reports it" {
	local runc
	runc=$(command -v runc) || skip "runc not installed"
	sb_run --runtime "$runc" --report "$TEST_DIR/r.json" -- sh -c 'echo ran'
	check_status 0
	[ "$output" = ran ]
	jq -e --arg rt "$runc" '.runtime == $rt' "$TEST_DIR/r.json"
}
