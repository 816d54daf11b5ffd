#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
#
# hutch sandbox: every default seen from inside the sandbox (hardening, mounts, ids, env,
# network, PID 1), the workspace's ownership, the untouched image, limits, the timeout's kill
# of the whole tree, the lock, the I/O contract, SIGKILL of hutch, the report, profiles and
# errors. After every test, teardown checks that no sandbox left state, cgroups, scratch
# mounts, lock files or processes.

load ../helpers
load ../sandbox-helpers
bats_require_minimum_version 1.5.0

DOCS=$INTEGRATION_ROOT/../../docs

# Two images per file, in a directory the sandbox's mapped ids can traverse: "full" has every
# mount point the tests use, "bare" (the suite's busybox rootfs) lacks /workspace and
# /sys/fs/cgroup, so that hutch must make them in a throw-away layer.
setup_file() {
	file_runs_here && [ -x "$BUSYBOX" ] || return 0
	SB_IMAGES=$(mktemp -d /tmp/hutch-it-sb.XXXXXX)
	chmod 755 "$SB_IMAGES"
	cp -a "$(rootfs_template)" "$SB_IMAGES/bare"
	cp -a "$SB_IMAGES/bare" "$SB_IMAGES/full"
	mkdir -p "$SB_IMAGES/full"/{workspace,scratch,sys/fs/cgroup,mnt/rw,mnt/ro}
	: >"$SB_IMAGES/full/etc/resolv.conf"
	export SB_IMAGES
}

setup() {
	sb_setup
	LOCK=it-$TAG
}

# sb_bg NAME ARGS...: sb in the background, stdio to $TEST_DIR/NAME.out; `sb_pid NAME` is
# then hutch's pid and $TEST_DIR/NAME.rc its exit status once it ended.
sb_bg() {
	local name=$1
	shift
	(
		st=0
		SB_PIDFILE=$TEST_DIR/$name.pid sb "$@" </dev/null >"$TEST_DIR/$name.out" 2>&1 3>&- ||
			st=$?
		# Renamed into place: the .rc file must never be seen empty (created, not yet written).
		echo "$st" >"$TEST_DIR/$name.rc.tmp" && mv "$TEST_DIR/$name.rc.tmp" "$TEST_DIR/$name.rc"
	) 3>&- &
	track_pid $!
}

sb_pid() {
	local tries=200
	while [ ! -s "$TEST_DIR/$1.pid" ] && [ $tries -gt 0 ]; do
		sleep 0.02
		tries=$((tries - 1))
	done
	cat "$TEST_DIR/$1.pid"
}

# sb_wait_output NAME TEXT: waits (10 s at most) until background sandbox NAME printed TEXT.
sb_wait_output() {
	local tries=500
	until grep -qF -- "$2" "$TEST_DIR/$1.out" 2>/dev/null; do
		if [ $tries -eq 0 ]; then
			echo "sandbox $1 never printed '$2'; it printed:" >&2
			cat "$TEST_DIR/$1.out" >&2
			return 1
		fi
		sleep 0.02
		tries=$((tries - 1))
	done
}

# sb_wait NAME: waits (10 s at most) for background sandbox NAME to end; sets status.
sb_wait() {
	local tries=500
	while [ ! -e "$TEST_DIR/$1.rc" ] && [ $tries -gt 0 ]; do
		sleep 0.02
		tries=$((tries - 1))
	done
	status=$(cat "$TEST_DIR/$1.rc")
}

# The hutch-sb-PID cgroups of this test's hutches that are gone (another root's, or another
# session's, are not the test's): a stale sandbox's.
stale_cgroups() {
	own_sb_cgroups "$SB_PIDS"
}

# What every hutch of this test left: it is a leak if the hutch is gone and its state dir or
# cgroups are still there. A hutch still running (a failed test) is killed first; its sandbox
# dies with it and one more sandbox cleans what it left.
# A profile in $TEST_DIR from JSON text: `profile NAME JSON`; prints its path.
profile() {
	printf '%s\n' "$2" >"$TEST_DIR/$1.json"
	echo "$TEST_DIR/$1.json"
}

# Prints "mem=BYTES pids=N cpu=QUOTA" from the sandbox's own cgroup (v1 or v2).
CG_PROBE='if [ -e /sys/fs/cgroup/cgroup.controllers ]; then
	m=$(cat /sys/fs/cgroup/memory.max); p=$(cat /sys/fs/cgroup/pids.max)
	c=$(cut -d" " -f1 /sys/fs/cgroup/cpu.max)
else
	m=$(cat /sys/fs/cgroup/memory/memory.limit_in_bytes)
	p=$(cat /sys/fs/cgroup/pids/pids.max); c=$(cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us)
fi
echo "mem=$m pids=$p cpu=$c"'

# A workspace owned on the host by 4242:4242 (no one the sandbox's ids map to otherwise).
make_workspace() {
	WS=$TEST_DIR/ws
	mkdir -p "$WS"
	chown 4242:4242 "$WS"
}

@test "sandbox: no privileges: NoNewPrivs, no capabilities, seccomp filter" {
	run sb -- cat /proc/self/status
	check_status 0
	grep -qx $'NoNewPrivs:\t1' <<<"$output"
	grep -qx $'Seccomp:\t2' <<<"$output"
	local c
	for c in CapInh CapPrm CapEff CapBnd CapAmb; do
		grep -qx "$c:"$'\t'0000000000000000 <<<"$output"
	done
}

@test "sandbox: uid and gid 1000 by default, -u 1234:1234, -u 1234 sets the gid too" {
	run sb -- sh -c 'echo $(id -u):$(id -g):$(id -G)'
	check_status 0
	[ "$output" = "1000:1000:1000" ]
	run sb -u 1234:1234 -- sh -c 'echo $(id -u):$(id -g)'
	check_status 0
	[ "$output" = "1234:1234" ]
	run sb --user 2345 -- sh -c 'echo $(id -u):$(id -g)'
	check_status 0
	[ "$output" = "2345:2345" ]
}

@test "sandbox: / is read-only, /tmp a private 256m tmpfs, nothing else of the host mounted" {
	run sb -- sh -c 'touch /probe; echo "rc=$?"; echo x >/tmp/f && cat /tmp/f
		grep " / " /proc/mounts; grep " /tmp " /proc/mounts
		awk "{ print \$2 }" /proc/mounts'
	check_status 0
	grep -q 'touch: /probe: Read-only file system' <<<"$output"
	grep -qx 'rc=1' <<<"$output"
	grep -qx x <<<"$output"
	grep -Eq '^[^ ]+ / [^ ]+ ro[ ,]' <<<"$output"
	grep -Eq '^[^ ]+ /tmp tmpfs [^ ]*size=262144k' <<<"$output"
	# Every mount point is one the sandbox itself provides.
	local mp bad=0
	for mp in $(sed -n '/^\//p' <<<"$output" | grep -v ' '); do
		case $mp in
		/ | /tmp | /proc | /proc/* | /dev | /dev/* | /sys | /sys/*) ;;
		*)
			echo "unexpected mount point: $mp" >&2
			bad=1
			;;
		esac
	done
	[ $bad = 0 ]
}

@test "sandbox: --tmpfs /tmp:64m resizes /tmp, --tmpfs /scratch:1m adds one that fills up" {
	run sb --tmpfs /tmp:64m --tmpfs /scratch:1m -- sh -c '
		grep -E " /(tmp|scratch) " /proc/mounts
		dd if=/dev/zero of=/scratch/big bs=64k count=32; echo "rc=$?"'
	check_status 0
	grep -Eq '^[^ ]+ /tmp tmpfs [^ ]*size=65536k' <<<"$output"
	grep -Eq '^[^ ]+ /scratch tmpfs [^ ]*size=1024k' <<<"$output"
	grep -q 'No space left on device' <<<"$output"
	grep -qx 'rc=1' <<<"$output"
}

@test "sandbox: masked /proc paths and a private cgroup namespace" {
	[ -r /proc/timer_list ] || skip "no /proc/timer_list to mask"
	run sb -- sh -c 'echo "timer_list=$(wc -c </proc/timer_list)"
		grep " /proc/sys " /proc/mounts; cat /proc/self/cgroup'
	check_status 0
	grep -qx 'timer_list=0' <<<"$output"
	grep -Eq '^proc /proc/sys proc ro[ ,]' <<<"$output"
	# Every hierarchy's path is the namespace's root.
	! grep -E '^[0-9]+:[^:]*:' <<<"$output" | grep -vE ':/$'
}

@test "sandbox: clean environment without a workspace: HOME=/tmp, cwd /" {
	FOO=bar run sb -- sh -c 'pwd; env | sort'
	check_status 0
	[ "${lines[0]}" = / ]
	local env
	env=$(sed 1d <<<"$output" | grep -v -e '^SHLVL=' -e '^PWD=' -e '^HUTCH_IT_TAG=')
	[ "$env" = "HOME=/tmp
LANG=C.UTF-8
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
TMPDIR=/tmp" ]
}

@test "sandbox: --env K=V, --env K (the host's value), --env-file, later ones win" {
	printf 'A=1\n# a comment\n\nB=two words\nC=from-file\n' >"$TEST_DIR/env"
	FOO=bar run sb -e FOO -e UNSET_HERE --env-file "$TEST_DIR/env" -e C=flag -e HOME=/h \
		-- sh -c 'echo "$FOO|$A|$B|$C|$HOME|${UNSET_HERE-unset}"'
	check_status 0
	[ "$output" = "bar|1|two words|flag|/h|unset" ]
}

@test "sandbox: --workspace: HOME and cwd /workspace, writable, files owned by its host owner" {
	make_workspace
	run sb --workspace "$WS" -- sh -c 'pwd; echo "$HOME"; stat -c %u:%g /workspace
		echo data >file && mkdir dir && touch dir/inner && echo ok'
	check_status 0
	[ "${lines[0]}" = /workspace ]
	[ "${lines[1]}" = /workspace ]
	[ "${lines[2]}" = 1000:1000 ]
	[ "${lines[3]}" = ok ]
	[ "$(stat -c %u:%g "$WS/file" "$WS/dir" "$WS/dir/inner" | sort -u)" = 4242:4242 ]
	[ "$(cat "$WS/file")" = data ]
	# The host directory itself is never chowned.
	[ "$(stat -c %u:%g "$WS")" = 4242:4242 ]
}

@test "sandbox: -u 1234:1234 with a workspace maps that user to the workspace's owner" {
	make_workspace
	run sb --workspace "$WS" -u 1234:1234 --report "$TEST_DIR/r.json" -- sh -c 'id -u; touch f'
	check_status 0
	[ "$output" = 1234 ]
	[ "$(stat -c %u:%g "$WS/f")" = 4242:4242 ]
	jq -e '.isolation.user | .uid == 1234 and .host_uid == 4242 and .host_gid == 4242' \
		"$TEST_DIR/r.json"
}

@test "sandbox: ids other than the sandbox user own nothing on the host" {
	make_workspace
	mkdir "$WS/other"
	chown 4343:4343 "$WS/other"
	chmod 700 "$WS/other"
	# Host root (0) shows as the overflow id, and ids not mapped cannot be reached.
	run sb --workspace "$WS" -- sh -c 'stat -c %u /workspace/other; stat -c %u /bin/busybox
		ls /workspace/other'
	[ "$status" -ne 0 ]
	[ "${lines[0]}" = 65534 ]
	[ "${lines[1]}" = 65534 ]
	grep -q 'Permission denied' <<<"$output"
}

@test "sandbox: --cwd, --hostname, --bind rw and --ro-bind" {
	mkdir -p "$TEST_DIR/rw" "$TEST_DIR/ro"
	chown 4242:4242 "$TEST_DIR/rw" # an rw bind is written as its (unprivileged) owner
	echo hostdata >"$TEST_DIR/ro/f"
	run sb --cwd /mnt --hostname box1 --bind "$TEST_DIR/rw:/mnt/rw" \
		--ro-bind "$TEST_DIR/ro:/mnt/ro" -- sh -c 'pwd; hostname; cat ro/f; echo w >rw/new
		echo w >ro/new'
	[ "$status" -ne 0 ]
	[ "${lines[0]}" = /mnt ]
	[ "${lines[1]}" = box1 ]
	[ "${lines[2]}" = hostdata ]
	grep -q "can't create ro/new: Read-only file system" <<<"$output"
	[ "$(cat "$TEST_DIR/rw/new")" = w ]
	[ "$(stat -c %u:%g "$TEST_DIR/rw/new")" = 4242:4242 ]
	[ ! -e "$TEST_DIR/ro/new" ]
	# --bind SRC:DST:ro is read-only too.
	run sb --bind "$TEST_DIR/rw:/mnt/rw:ro" -- sh -c 'echo w >/mnt/rw/new2'
	[ "$status" -ne 0 ]
	grep -q 'Read-only file system' <<<"$output"
}

@test "sandbox: hostname is sandbox, network none has only lo, up" {
	run sb -- sh -c 'hostname; ip -o link'
	check_status 0
	[ "${lines[0]}" = sandbox ]
	[ "${#lines[@]}" -eq 2 ]
	[[ ${lines[1]} == "1: lo: <LOOPBACK,UP,LOWER_UP>"* ]]
}

@test "sandbox: --network host sees the host's interfaces" {
	local host inside
	host=$(ip -o link | awk -F': ' '{ sub(/@.*/, "", $2); print $2 }' | sort)
	run sb --network host -- ip -o link
	check_status 0
	inside=$(awk -F': ' '{ sub(/@.*/, "", $2); print $2 }' <<<"$output" | sort)
	[ "$host" = "$inside" ]
	[ "$(wc -l <<<"$inside")" -gt 1 ]
}

@test "sandbox: PID 1 is hutch-init, the command is pid 2, orphans are reaped" {
	run sb -- sh -c 'tr -d "\0" </proc/1/cmdline; echo; echo $$
		(sleep 0.1 &); sleep 0.4; ps -o stat= | grep -c "^Z"'
	[ "${lines[0]}" = hutch-init ]
	[ "${lines[1]}" = 2 ]
	[ "${lines[2]}" = 0 ]
}

@test "sandbox: hutch's command line (and the secrets on it) never shows as PID 1's" {
	# init renames itself; a command that reads /proc/1/cmdline at once must already see
	# the new name (10 tries: a race shows only now and then).
	local i
	for i in 1 2 3 4 5 6 7 8 9 10; do
		run sb -e "TOKEN=secret-$i" -- cat /proc/1/cmdline
		check_status 0
		[ "$(tr -d '\0' <<<"$output")" = hutch-init ]
	done
}

@test "sandbox: init forwards SIGTERM to the command" {
	sb_bg term -- sh -c 'trap "echo got-term; exit 7" TERM; echo ready
		while :; do sleep 0.1; done'
	sb_wait_output term ready
	kill -TERM "$(sb_pid term)"
	sb_wait term
	[ "$status" -eq 7 ]
	grep -qx got-term "$TEST_DIR/term.out"
}

@test "sandbox: the image is never modified: missing mount points go to a throw-away layer" {
	local bare=$SB_IMAGES/bare before after
	make_workspace
	mkdir "$TEST_DIR/src"
	chown 4242:4242 "$TEST_DIR/src" # an rw bind: an unprivileged owner's
	before=$(cd "$bare" && find . -printf '%p %m %u %g %s %T@\n' | sort)
	run sb --image "$bare" --workspace "$WS" --bind "$TEST_DIR/src:/opt/new" \
		--network host --report "$TEST_DIR/r.json" -- sh -c 'touch /workspace/w && ls -d /opt/new'
	check_status 0
	[ -e "$WS/w" ]
	jq -e '.isolation.throwaway_layer == true and .isolation.read_only_root == true' \
		"$TEST_DIR/r.json"
	after=$(cd "$bare" && find . -printf '%p %m %u %g %s %T@\n' | sort)
	[ "$before" = "$after" ]
	[ ! -e "$bare/workspace" ]
	[ ! -e "$bare/opt" ]
}

@test "sandbox: every option's mount point works on an image of only /bin and /etc/passwd" {
	local min=$TEST_DIR/min opt
	mkdir -p "$min/etc"
	cp -a "$SB_IMAGES/bare/bin" "$min/bin"
	cp "$SB_IMAGES/bare/etc/passwd" "$min/etc/passwd"
	chmod 755 "$TEST_DIR" "$min"
	make_workspace
	mkdir "$TEST_DIR/rw" "$TEST_DIR/ro"
	chown 4242:4242 "$TEST_DIR/rw"
	echo data >"$TEST_DIR/ro/file"
	local before
	before=$(cd "$min" && find . | sort)
	for opt in "--workspace $WS" "--bind $TEST_DIR/rw:/opt/deep/rw" \
		"--ro-bind $TEST_DIR/ro/file:/srv/one/file" "--tmpfs /var/cache/x:1m" \
		"--network host" "--as-root" "--cwd /nowhere/yet --tmpfs /nowhere/yet"; do
		# shellcheck disable=SC2086 # each option's words
		run sb_raw --image "$min" $opt -- sh -c 'echo ok; ls /workspace /opt/deep/rw \
			/srv/one/file /var/cache/x /etc/resolv.conf 2>/dev/null | wc -l'
		echo "$opt: $status: $output"
		check_status 0
		[ "${lines[0]}" = ok ]
	done
	[ "$before" = "$(cd "$min" && find . | sort)" ]
}

@test "sandbox: --as-root: uid 0, default capabilities, a writable throw-away layer" {
	local before after
	before=$(cd "$IMAGE" && find . -printf '%p %m %u %g %s %T@\n' | sort)
	run sb --as-root --report "$TEST_DIR/r.json" -- sh -c 'id -u; grep CapEff /proc/self/status
		echo x >/newfile && cat /newfile'
	check_status 0
	[ "${lines[0]}" = 0 ]
	[ "${lines[1]}" = $'CapEff:\t00000000a80405fb' ] # Docker's set but CAP_NET_RAW
	[ "${lines[2]}" = x ]
	after=$(cd "$IMAGE" && find . -printf '%p %m %u %g %s %T@\n' | sort)
	[ "$before" = "$after" ]
	jq -e '.isolation | .capabilities == "container-default, in the user namespace"
		and .read_only_root == false and .user.user_namespace' "$TEST_DIR/r.json"
}

@test "sandbox: the cgroup limits are the defaults (512m, 1024 pids) or the flags'" {
	run sb -- sh -c "$CG_PROBE"
	check_status 0
	[[ $output == "mem=536870912 pids=1024 "* ]]
	run sb --memory 64m --pids 77 --cpus 1.5 -- sh -c "$CG_PROBE"
	check_status 0
	[ "$output" = "mem=67108864 pids=77 cpu=150000" ]
}

@test "sandbox: a fork bomb is stopped by --pids" {
	local m t0
	m=$(mark)
	t0=$(now_ms)
	run sb --pids 20 -- sh -c "i=0; while [ \$i -lt 200 ]; do sleep $m & i=\$((i + 1)); done"
	[ "$status" -ne 0 ] && [ "$status" -lt 124 ]
	grep -q 'Resource temporarily unavailable' <<<"$output"
	[ $(($(now_ms) - t0)) -lt 5000 ]
	no_process_like "^sleep $m\$"
}

@test "sandbox: the report has pids_peak where the kernel counts it" {
	[ -n "$(find /sys/fs/cgroup -maxdepth 4 -name pids.peak -print -quit)" ] ||
		skip "no pids.peak in this kernel"
	run sb --pids 20 --report "$TEST_DIR/r.json" -- sh -c \
		'i=0; while [ $i -lt 30 ]; do sleep 1 & i=$((i + 1)); done'
	grep -q 'Resource temporarily unavailable' <<<"$output"
	# The peak is the limit: init, the shell and 18 sleeps.
	jq -e '.pids_peak == 20' "$TEST_DIR/r.json"
}

@test "sandbox: a memory hog is OOM-killed by --memory and reported" {
	run sb --memory 32m --report "$TEST_DIR/r.json" -- tail /dev/zero
	check_status 137
	jq -e '.oom_killed == true and .exit_code == 137 and .signal == 9' "$TEST_DIR/r.json"
	jq -e '.memory_peak_bytes == null or .memory_peak_bytes <= 33554432 + 1048576' \
		"$TEST_DIR/r.json"
}

@test "sandbox: --timeout kills a tree that ignores SIGTERM and double-forks with setsid" {
	local m t0 dt
	m=$(mark)
	t0=$(now_ms)
	run sb --timeout 1 --grace 1 --report "$TEST_DIR/r.json" -- sh -c "trap '' TERM
		(setsid sh -c \"trap '' TERM; sleep $m\" &); sleep $m"
	dt=$(($(now_ms) - t0))
	check_status 124
	echo "took ${dt}ms" >&2
	[ "$dt" -ge 1900 ] && [ "$dt" -lt 5000 ]
	jq -e '.timed_out == true and .exit_code == 124' "$TEST_DIR/r.json"
	no_process_like "sleep $m"
}

@test "sandbox: --timeout sends SIGTERM first; a command that exits on it ends at once" {
	local t0 dt
	t0=$(now_ms)
	run sb --timeout 1 --grace 20 --report "$TEST_DIR/r.json" -- sh -c \
		'trap "echo got-term; exit 0" TERM; while :; do sleep 0.1; done'
	dt=$(($(now_ms) - t0))
	check_status 124
	grep -qx got-term <<<"$output"
	[ "$dt" -lt 4000 ]
	jq -e '.timed_out == true' "$TEST_DIR/r.json"
}

@test "sandbox: --lock: a second sandbox waits, --no-wait and --lock-timeout fail naming the holder" {
	local p1 t0 dt
	sb_bg first --lock "$LOCK" -- sh -c 'sleep 2; echo first-done'
	p1=$(sb_pid first)
	wait_lock_holder "$LOCK" "$p1"
	t0=$(now_ms)
	sb_fails "held by pid $p1" --lock "$LOCK" --no-wait -- true
	[ $(($(now_ms) - t0)) -lt 800 ]
	t0=$(now_ms)
	sb_fails "held by pid $p1" --lock "$LOCK" --lock-timeout 1 -- true
	dt=$(($(now_ms) - t0))
	echo "lock-timeout 1 took ${dt}ms" >&2
	[ "$dt" -ge 950 ] && [ "$dt" -lt 2500 ]
	# Another name is not held.
	run sb --lock "$LOCK-2" --no-wait -- true
	check_status 0
	# Without a limit it waits for the holder to end.
	run sb --lock "$LOCK" -- echo second
	check_status 0
	[ "$output" = second ]
	grep -qx first-done "$TEST_DIR/first.out"
	sb_wait first
	[ "$status" -eq 0 ]
}

@test "sandbox: stdin to stdout byte for byte; hutch writes nothing to stdout itself" {
	local json='{"k":[1,2.5e3,{"s":"tab\there \"q\" \\ é ✓"}],"n":null}'
	printf '%s' "$json" | sb --report-fd 3 -- cat >"$TEST_DIR/out" 2>"$TEST_DIR/err" \
		3>"$TEST_DIR/r.json"
	cmp "$TEST_DIR/out" <(printf '%s' "$json")
	[ ! -s "$TEST_DIR/err" ]
	# Binary data, and nothing but it, both ways.
	head -c 300000 /dev/urandom >"$TEST_DIR/bin"
	sb -- cat <"$TEST_DIR/bin" >"$TEST_DIR/out"
	cmp "$TEST_DIR/bin" "$TEST_DIR/out"
	sb -- true >"$TEST_DIR/out" 2>"$TEST_DIR/err"
	[ ! -s "$TEST_DIR/out" ] && [ ! -s "$TEST_DIR/err" ]
}

@test "sandbox: the command gets only stdin, stdout and stderr from hutch" {
	echo secret >"$TEST_DIR/secret"
	run sb --report-fd 3 -- sh -c 'for f in /proc/self/fd/*; do readlink "$f"; done; true' \
		3>"$TEST_DIR/r.json" 7<"$TEST_DIR/secret"
	check_status 0
	! grep -F "$TEST_DIR" <<<"$output"
}

@test "sandbox: a secret passed with --env is not written to hutch's state on disk" {
	local secret=secret-$RANDOM$RANDOM
	sb_bg secret -e "TOKEN=$secret" -- sh -c 'echo "started ${#TOKEN}"; sleep 1'
	sb_wait_output secret started
	! grep -rqF "$secret" /run/hutch "$HUTCH_ROOT"
	sb_wait secret
	[ "$status" -eq 0 ]
}

# holder FILE: the pid of a process with FILE open.
holder() {
	local p
	for p in /proc/[0-9]*; do
		ls -l "$p/fd" 2>/dev/null | grep -qF -- "-> $1" && echo "${p#/proc/}" && return 0
	done
	return 1
}

@test "sandbox: while the last sandbox's teardown helper still deletes it, the next with the same lock, name and workspace starts at once; killed there, the next sweep removes what it left" {
	local hp helper
	make_workspace
	# The helper stops itself before the delete it finishes once hutch has returned: the
	# sandbox's state, cgroup and run record are still there.
	HUTCH_TEST_STOP_AT=sandbox:teardown run -0 sb --lock "$LOCK" --name "n-$TAG" \
		--workspace "$WS" -- sh -c 'echo a >/workspace/a'
	hp=$(ls "$SB_DIR/runs")
	[ -n "$hp" ] && [ -d "$SB_STATE/sb-$hp" ] && [ -n "$(sb_cgroups "$hp")" ]
	helper=$(holder "$SB_DIR/runs/$hp")
	track_pid "$helper"
	grep -q '^State:.*T' "/proc/$helper/status"
	# No wait on the lock, the name is free, the workspace is the first's; its sweep leaves
	# the helper's part be.
	run -0 sb --lock "$LOCK" --no-wait --name "n-$TAG" --workspace "$WS" -- cat /workspace/a
	[ "$output" = a ]
	[ -d "$SB_STATE/sb-$hp" ] && [ -e "$SB_DIR/runs/$hp" ]
	# Killed there, the helper leaves it to the next sandbox's sweep.
	kill -9 "$helper"
	for _ in $(seq 50); do
		[ -e "/proc/$helper" ] && ! grep -qs '^State:.*Z' "/proc/$helper/status" || break
		sleep 0.1
	done
	run -0 sb -- true
	sb_settled
	[ ! -e "$SB_STATE/sb-$hp" ] && [ -z "$(sb_cgroups "$hp")" ] && [ ! -e "$SB_DIR/runs/$hp" ]
}

@test "sandbox: the teardown helper finishes the delete through a terminal's hang-up" {
	local hp helper
	# hutch leads the session of a terminal (script, ssh -t) and exits: the kernel sends
	# SIGHUP to the foreground group, the helper among them until its setsid(). Here the
	# helper, stopped, gets its hang-up as it would in that window: it still deletes it all.
	HUTCH_TEST_STOP_AT=sandbox:teardown run -0 sb -- true
	hp=$(ls "$SB_DIR/runs")
	[ -n "$hp" ] && [ -d "$SB_STATE/sb-$hp" ]
	helper=$(holder "$SB_DIR/runs/$hp")
	track_pid "$helper"
	kill -HUP "$helper"
	kill -CONT "$helper"
	sb_settled
	[ ! -e "$SB_STATE/sb-$hp" ] && [ -z "$(sb_cgroups "$hp")" ] && [ ! -e "$SB_DIR/runs/$hp" ]
}

@test "sandbox: hutch as a pid namespace's init, or the init's child, deletes it before it returns" {
	local init
	# When the namespace's init exits, the kernel kills what is left in it: a teardown
	# helper there would die with its delete half done, and nothing would sweep it.
	for init in "timeout 30" ""; do
		# shellcheck disable=SC2086 # init: a command and its arguments, or none
		run -0 unshare -p -f --mount-proc $init "$HUTCH" --root "$HUTCH_ROOT" sandbox \
			--image "$IMAGE" -- true
		[ -z "$(ls -A "$SB_STATE")" ] && [ -z "$(ls -A "$SB_DIR/runs")" ]
		[ -z "$(sb_cgroups 1)" ] && [ -z "$(sb_cgroups 2)" ]
	done
}

@test "sandbox: SIGKILL of hutch kills the sandbox; the next hutch cleans up after it" {
	local m hp d
	m=$(mark)
	sb_bg victim --lock "$LOCK" -- sh -c "echo started; sleep $m"
	sb_wait_output victim started
	hp=$(sb_pid victim)
	wait_process_like "^sleep $m\$"
	kill -9 "$hp"
	# Its init sees the pipe to hutch break and kills the rest.
	no_process_like "^sleep $m\$"
	sb_wait victim
	[ "$status" -eq 137 ]
	# The lock died with its holder; the next sandbox removes what the dead one left.
	run sb --lock "$LOCK" --no-wait -- true
	check_status 0
	[ ! -e "$SB_STATE/sb-$hp" ]
	[ -z "$(sb_cgroups "$hp")" ]
	d=$(stale_cgroups)
	[ -z "$d" ] || {
		echo "stale cgroups: $d" >&2
		false
	}
	# no state of a dead hutch (another session's live sandboxes are theirs), once the last
	# one's teardown helper is done
	sb_settled
	[ -z "$(find "$SB_STATE" -mindepth 1 -maxdepth 1 -name 'sb-*' | while read -r d; do
		any_hutch "${d##*/sb-}" || echo "$d"
	done)" ]
}

@test "sandbox: the report has the schema's keys with the right types and values" {
	run sb --report "$TEST_DIR/r.json" -- sh -c 'exit 3'
	check_status 3
	local r=$TEST_DIR/r.json schema=$DOCS/sandbox-report.schema.json
	cat "$r" >&2
	[ "$(wc -l <"$r")" -eq 1 ]
	jq -e --slurpfile s "$schema" '. as $r | $s[0].required | all(. as $k | $r | has($k))' "$r"
	# Each top-level value has one of the schema's types.
	jq -e --slurpfile s "$schema" '. as $r | [$s[0].properties | to_entries[]
		| select(.value.type) | .key as $k | select($r | has($k))
		| (.value.type | if type == "array" then . else [.] end) as $ts
		| select([$ts[] | . as $t | $r[$k] | if $t == "integer" then
			type == "number" and . == floor elif $t == "null" then . == null
			else type == $t end] | any | not) | $k] == []' "$r"
	jq -e '.version == 3 and .exit_code == 3 and .signal == null and .timed_out == false
		and .oom_killed == false and .wall_ms >= 0 and .runtime == "native"
		and .error == null' "$r"
	jq -e '.isolation | (.namespaces | sort) == ["cgroup", "ipc", "mount", "network", "pid",
		"user", "uts"] and .capabilities == "none" and .no_new_privs == true
		and .seccomp == "default" and .read_only_root == true and .network == "none"
		and .pid1 == "hutch-init" and .user.uid == 1000 and .user.gid == 1000
		and .user.user_namespace == true and .limits.memory_bytes == 536870912
		and .limits.pids == 1024 and .limits.timeout_s == 300' "$r"
}

@test "sandbox: a signal ends the command: 128+N, signal in the report (--report-fd 3)" {
	run sb --report-fd 3 -- sh -c 'kill -TERM $$' 3>"$TEST_DIR/r.json"
	check_status 143
	jq -e '.exit_code == 143 and .signal == 15 and .timed_out == false' "$TEST_DIR/r.json"
	run sb -- sh -c 'kill -KILL $$'
	check_status 137
	run sb -- sh -c 'exit 42'
	check_status 42
}

@test "sandbox: a sandbox that cannot start: 125, and the report says why" {
	run sb --image "$TEST_DIR/nonexistent" --report "$TEST_DIR/r.json" -- true
	check_status 125
	jq -e '.exit_code == 125 and (.error | contains("--image"))' "$TEST_DIR/r.json"
}

@test "sandbox: 126 for a command that cannot be run, 127 for one that is not found" {
	run sb -- /etc/passwd
	check_status 126
	grep -q '/etc/passwd' <<<"$output"
	run sb -- /tmp
	check_status 126
	run -127 sb -- no-such-command
	grep -q 'no-such-command' <<<"$output"
	run -127 sb -- /bin/no-such-command
}

@test "sandbox: -t gives the command a terminal and TERM" {
	command -v script >/dev/null || skip "script (util-linux) missing"
	local cmd
	printf -v cmd '%q ' "$HUTCH" sandbox --image "$IMAGE" -e "HUTCH_IT_TAG=$TAG" -t -- \
		sh -c 'tty; echo "term=$TERM"'
	(sleep 1) | TERM=xterm-it timeout 20 script -qec "echo \$\$ >>$SB_PIDS; exec $cmd" \
		"$TEST_DIR/typescript" >/dev/null
	grep -q '^/dev/pts/[0-9]' "$TEST_DIR/typescript"
	grep -q '^term=xterm-it' "$TEST_DIR/typescript"
	sb_fails "--tty" -t -- true </dev/null
}

@test "sandbox: the example profiles load and run" {
	local r=$TEST_DIR/agent.report.json p
	make_workspace
	p=$TEST_DIR/agent.json
	jq --arg i "$IMAGE" --arg w "$WS" --arg r "$r" --arg l "$LOCK" \
		'.image = $i | .workspace = $w | .report = $r | .lock = $l' \
		"$DOCS/examples/agent.json" >"$p"
	run sb_raw --profile "$p" -e "HUTCH_IT_TAG=$TAG" -- sh -c "$CG_PROBE; pwd"
	check_status 0
	[ "${lines[0]}" = "mem=1073741824 pids=256 cpu=150000" ]
	[ "${lines[1]}" = /workspace ]
	jq -e '.isolation.limits | .memory_bytes == 1073741824 and .cpus == 1.5 and .pids == 256
		and .timeout_s == 120' "$r"
	# The CI profile's command, replaced by one the busybox image has.
	p=$TEST_DIR/ci.json
	jq --arg i "$IMAGE" --arg w "$WS" '.image = $i | .workspace = $w
		| .command = ["sh", "-c", "echo $SOURCE_DATE_EPOCH $TZ; grep \" /tmp \" /proc/mounts"]' \
		"$DOCS/examples/ci.json" >"$p"
	run sb_raw --profile "$p" -e "HUTCH_IT_TAG=$TAG"
	check_status 0
	[ "${lines[0]}" = "0 UTC" ]
	grep -q 'size=2097152k' <<<"${lines[1]}"
}

@test "sandbox: flags override the profile; a command after -- replaces its command" {
	local p
	p=$(profile p "{\"version\": 1, \"image\": \"$IMAGE\", \"memory\": \"1g\", \"pids\": 99,
		\"env\": [\"A=profile\"], \"command\": [\"echo\", \"from-profile\"]}")
	run sb_raw --memory 64m -e A=flag --profile "$p" -e "HUTCH_IT_TAG=$TAG" -- \
		sh -c "$CG_PROBE; echo \$A"
	check_status 0
	[[ ${lines[0]} == "mem=67108864 pids=99 "* ]]
	[ "${lines[1]}" = flag ]
	run sb_raw --profile "$p" -e "HUTCH_IT_TAG=$TAG"
	check_status 0
	[ "$output" = from-profile ]
}

@test "sandbox: bad flags: exit 125 and one error line naming the flag" {
	sb_fails "--bogus" --bogus -- true
	sb_fails "--memory abc" --memory abc -- true
	sb_fails "--memory" --memory 1k -- true
	sb_fails "--pids 1" --pids 1 -- true
	sb_fails "--cpus" --cpus lots -- true
	sb_fails "--cwd" --cwd relative/dir -- true
	sb_fails "--bind" --bind relative:/mnt/rw -- true
	sb_fails "--bind" --bind /tmp:/mnt/rw:rx -- true
	sb_fails "--ro-bind" --ro-bind /tmp:/proc/x -- true
	sb_fails "--tmpfs" --tmpfs /tmp:lots -- true
	# Until the network issue lands, bridge is a clear "not supported".
	if ! "$HUTCH" sandbox --help | grep -q bridge; then
		sb_fails "--network bridge: not supported" --network bridge -- true
	fi
	sb_fails "--network" --network wifi -- true
	sb_fails "--user" -u alice -- true
	sb_fails "--timeout" --timeout soon -- true
	sb_fails "--grace" --grace -1 -- true
	sb_fails "--lock" --lock a/b -- true
	sb_fails "--no-wait" --no-wait -- true
	sb_fails "--report-fd" --report-fd 1 -- true
	sb_fails "--hostname" --hostname "" -- true
	sb_fails "--env" -e =x -- true
	sb_fails "--env-file" --env-file "$TEST_DIR/none" -- true
	sb_fails "--as-root" --as-root -u 5 -- true
	sb_fails "--memory: requires a value" --memory
	sb_fails "no command" --memory 64m
	sb_fails "--image" --image "$TEST_DIR/nonexistent" -- true
	run sb_raw -- true
	check_status 125
	grep -q -- '--image' <<<"$output"
}

@test "sandbox: bad profiles: exit 125 and one error line naming the key" {
	sb_fails "bogus" --profile "$(profile a '{"version": 1, "bogus": 1}')" -- true
	sb_fails "version" --profile "$(profile b '{"memory": "1g"}')" -- true
	sb_fails "version" --profile "$(profile c '{"version": 2}')" -- true
	sb_fails "memory" --profile "$(profile d '{"version": 1, "memory": [1]}')" -- true
	sb_fails "env" --profile "$(profile e '{"version": 1, "env": "A=1"}')" -- true
	sb_fails "as_root" --profile "$(profile f '{"version": 1, "as_root": "yes"}')" -- true
	sb_fails "pids" --profile "$(profile g '{"version": 1, "pids": 1}')" -- true
	sb_fails "network" --profile "$(profile h '{"version": 1, "network": "wifi"}')" -- true
	sb_fails "$TEST_DIR/i.json" --profile "$(profile i '{"version": 1,')" -- true
	sb_fails "expected a JSON object" --profile "$(profile j '[1]')" -- true
	sb_fails "--profile" --profile "$TEST_DIR/none.json" -- true
}
