#!/usr/bin/env bats
# cgroups: placement beneath our own cgroup in every v1 controller, what the container sees
# with and without a cgroup namespace, removal at delete, the default device rules, and the
# v1 resource files.

load ../helpers

V1_CONTROLLERS=(cpu cpuacct cpuset memory devices freezer blkio pids)

# "CONTROLLER PATH" per v1 controller hierarchy of the process PID ("self" for us).
cgroup_paths() {
	awk -F: '$2 != "" && $2 !~ /^name=/ { n = split($2, c, ","); for (i = 1; i <= n; i++) print c[i], $3 }' \
		"/proc/$1/cgroup" | sort
}

@test "cgroups: the container sits in its cgroup, beneath ours, in every v1 controller" {
	set_args sleep 100
	run_bg create "$ID"
	check_status 0
	# On v1 the memory cgroup is joined last, just before execve (hutch's own setup is not
	# charged to the container), so look once the process runs.
	run_bg start "$ID"
	check_status 0
	local pid ctl path mine n=0
	pid=$(state_field "$ID" .pid)
	while read -r ctl path; do
		mine=$(awk -v c="$ctl" '$1 == c { print $2 }' <<<"$(cgroup_paths self)")
		[ -n "$mine" ] || continue
		echo "$ctl: $path (ours: $mine)"
		[ "$path" = "${mine%/}/$TAG" ]
		n=$((n + 1))
	done <<<"$(cgroup_paths "$pid")"
	[ "$n" -gt 0 ] || skip "no cgroup v1 controllers here"
	for ctl in "${V1_CONTROLLERS[@]}"; do
		local dir
		dir=$(own_cgroup_dir "$ctl")
		[ -z "$dir" ] || grep -qx "$pid" "$dir/$TAG/cgroup.procs"
	done
}

@test "cgroups: with a cgroup namespace the container sees itself at /" {
	set_args cat /proc/self/cgroup
	run_ok
	local l
	for l in "${lines[@]}"; do
		[[ $l == *:/ ]]
	done
}

@test "cgroups: a container starts under a 192 KiB memory limit (setup not charged)" {
	! ldd "$HUTCH" 2>/dev/null | grep -q libasan ||
		skip "an ASan build's own setup does not fit in 192 KiB"
	set_args true
	update_config '.linux.resources.memory = {"limit": 196608}'
	# What is charged after the late join is the two execs (the trampoline's and /bin/true's:
	# page tables and stacks, ~36 KiB for the first) and varies by a page or so between runs:
	# 160 KiB starts it in 9 runs of 10 here, 176 KiB in all. hutch's setup (~160 KiB) must
	# not count; the exec's variation may: up to 3 tries.
	local try
	for try in 1 2 3; do
		run hutch run "$ID"
		[ "$status" -eq 0 ] && break
		echo "try $try: status $status"
		sleep 1 # once in CI all three failed back to back, right after the OOM test
	done
	check_status 0
}

@test "cgroups: the init joins its memory cgroup before it execs the trampoline" {
	command -v strace >/dev/null || skip "no strace (.ci/install-deps.sh installs it)"
	local mem
	mem=$(own_cgroup_dir memory)
	[ -n "$mem" ] || skip "no v1 memory controller here"
	# The exec of the trampoline makes the init dumpable again, and a process of the
	# container may then trace it: a join left to the trampoline was skipped that way (a
	# process exec'd before start seized PID 1 at the trampoline's first instruction and
	# turned its write into a getpid), and the program ran outside its memory limit.
	set_args true
	update_config '.linux.resources.memory = {"limit": 67108864}'
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
		strace -ff -qq -y -e trace=write,execveat -o "$TEST_DIR/trace" \
		"$HUTCH" --root "$HUTCH_ROOT" run "$ID"
	# One file per process (-ff): with -f a call that another process interrupts is split
	# over an "unfinished" and a "resumed" line, and the patterns below missed it.
	# (with a cgroup namespace a join only for the unshare, then a step back, was the init's)
	local init last
	init=$(grep -l '^execveat(' "$TEST_DIR"/trace.* | head -n 1)
	[ -n "$init" ]
	last=$(awk '/^execveat\(/ { exit } /tasks>, "0"/ { l = $0 } END { print l }' "$init")
	echo "the init's last join before its execveat: $last"
	[[ $last == *"<$mem/$TAG/tasks>, \"0\", 1) = 1" ]]
}

@test "cgroups: without a cgroup namespace the container sees its cgroup path" {
	remove_ns cgroup
	set_args cat /proc/self/cgroup
	run_ok
	grep -E "^[0-9]+:([^:]*,)?devices(,[^:]*)?:.*/$TAG\$" <<<"$output"
	grep -E "^[0-9]+:([^:]*,)?memory(,[^:]*)?:.*/$TAG\$" <<<"$output"
}

# v1_dirs: the container's directory in each v1 hierarchy there is here, one a line.
v1_dirs() {
	local ctl dir
	for ctl in "${V1_CONTROLLERS[@]}"; do
		dir=$(own_cgroup_dir "$ctl")
		[ -z "$dir" ] || echo "$dir/$TAG"
	done
}

@test "cgroups: the cgroup is removed at delete" {
	set_args sleep 100
	run_bg run -d "$ID"
	local dirs dir
	mapfile -t dirs < <(v1_dirs)
	[ ${#dirs[@]} -gt 0 ] || skip "no cgroup v1 controllers here"
	for dir in "${dirs[@]}"; do [ -d "$dir" ]; done
	hutch delete --force "$ID"
	for dir in "${dirs[@]}"; do [ ! -e "$dir" ]; done
}

@test "cgroups: on v1 the init and exec's process join their cgroups through tasks, no cgroup.procs write" {
	command -v strace >/dev/null || skip "no strace (.ci/install-deps.sh installs it)"
	local dirs dir
	mapfile -t dirs < <(v1_dirs)
	[ ${#dirs[@]} -gt 0 ] || skip "no cgroup v1 controllers here"
	# A write to cgroup.procs takes the kernel's cgroup-wide threadgroup lock, whose first
	# taking after a quiet spell waits for an RCU grace period (8-16 ms here, most of a
	# start): a single thread moving itself through "tasks" does not take it.
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
		strace -ff -qq -y -e trace=openat,write -o "$TEST_DIR/trace" \
		"$HUTCH" --root "$HUTCH_ROOT" run "$ID"
	# One file per process (-ff): with -f a call that another process interrupts is split
	# over an "unfinished" and a "resumed" line, and the patterns missed it.
	run grep -hE 'cgroup\.procs.*O_(WRONLY|RDWR)' "$TEST_DIR"/trace.*
	[ "$status" -eq 1 ]
	for dir in "${dirs[@]}"; do
		grep -qhE "^write\([0-9]+<${dir//./\\.}/tasks>, \"0\", 1\) = 1" "$TEST_DIR"/trace.*
	done
	set_args sleep 100
	run_bg run -d "$ID"
	check_status 0
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
		strace -ff -qq -y -e trace=openat,write -o "$TEST_DIR/exec" \
		"$HUTCH" --root "$HUTCH_ROOT" exec "$ID" true
	run grep -hE 'cgroup\.procs.*O_(WRONLY|RDWR)' "$TEST_DIR"/exec.*
	[ "$status" -eq 1 ]
	for dir in "${dirs[@]}"; do
		grep -qhE "^write\([0-9]+<${dir//./\\.}/tasks>, \"0\", 1\) = 1" "$TEST_DIR"/exec.*
	done
	hutch delete --force "$ID"
}

@test "cgroups: devices are denied by default, the standard ones allowed" {
	add_tmpfs /scratch nosuid # not nodev: the nodes made there must work but for the cgroup
	update_config '.process.capabilities |= with_entries(.value += ["CAP_MKNOD"])'
	# /dev/kmsg (1:11) is harmless to open for writing and not in the default allow list.
	set_args sh -c 'mknod /scratch/null c 1 3 && echo x > /scratch/null && echo null-ok
		mknod /scratch/kmsg c 1 11
		if [ -c /scratch/kmsg ] && (exec 5> /scratch/kmsg); then echo KMSG-OPENED; fi'
	run hutch run "$ID"
	[[ $output == *null-ok* ]]
	[[ $output != *KMSG-OPENED* ]]
	[[ $output == *"Operation not permitted"* ]]
}

@test "cgroups: pids, memory and cpu limits are written to the v1 files" {
	local pids mem cpu
	pids=$(own_cgroup_dir pids)
	mem=$(own_cgroup_dir memory)
	cpu=$(own_cgroup_dir cpu)
	[ -n "$pids" ] && [ -n "$mem" ] && [ -n "$cpu" ] || skip "needs the v1 pids, memory and cpu controllers"
	update_config '.linux.resources.pids = {limit: 42}
		| .linux.resources.memory = {limit: 67108864}
		| .linux.resources.cpu = {shares: 512}'
	set_args sleep 100
	run_bg create "$ID"
	check_status 0
	[ "$(cat "$pids/$TAG/pids.max")" = 42 ]
	[ "$(cat "$mem/$TAG/memory.limit_in_bytes")" = 67108864 ]
	[ "$(cat "$cpu/$TAG/cpu.shares")" = 512 ]
}

@test "cgroups: memory.kernelTCP is the v1 TCP buffers' limit" {
	local mem
	mem=$(own_cgroup_dir memory)
	[ -n "$mem" ] && [ -e "$mem/memory.kmem.tcp.limit_in_bytes" ] || skip "needs the v1 memory controller with kmem.tcp"
	update_config '.linux.resources.memory = {limit: 67108864, kernelTCP: 16777216}'
	set_args sleep 100
	run_bg create "$ID"
	check_status 0
	[[ $output != *warning* ]]
	[ "$(cat "$mem/$TAG/memory.limit_in_bytes")" = 67108864 ]
	[ "$(cat "$mem/$TAG/memory.kmem.tcp.limit_in_bytes")" = 16777216 ]
	run hutch events --stats "$ID"
	check_status 0
	jq -e '.data.memory.kernelTCP.limit == 16777216' <<<"$output"
}

@test "cgroups: the pids limit holds inside" {
	[ -n "$(own_cgroup_dir pids)" ] || skip "needs the v1 pids controller"
	update_config '.linux.resources.pids = {limit: 5}'
	set_args sh -c 'for i in 1 2 3 4 5 6 7 8; do sleep 5 <&0 & done; wait'
	run hutch run "$ID"
	[[ $output == *"fork"* || $output == *"Resource temporarily unavailable"* || $output == *"can't"* ]]
}

@test "cgroups: v2 resources (memory.max, pids.max)" {
	local ctl
	ctl=$(cat /sys/fs/cgroup/cgroup.controllers 2>/dev/null || true)
	[[ $ctl == *memory* && $ctl == *pids* ]] || skip "no cgroup v2 memory and pids controllers on this host (hybrid): the VM lane covers v2"
	update_config '.linux.resources.pids = {limit: 42} | .linux.resources.memory = {limit: 67108864}'
	set_args sh -c 'cat /sys/fs/cgroup/pids.max /sys/fs/cgroup/memory.max'
	run_ok
	[ "${lines[0]}" = 42 ]
	[ "${lines[1]}" = 67108864 ]
}

@test "cgroups: new parent levels get the cpuset's cpus and mems first, and go at delete" {
	local cs d
	cs=$(own_cgroup_dir cpuset)
	[ -n "$cs" ] || skip "needs the v1 cpuset controller"
	update_config '.linux.cgroupsPath = $p' --arg p "$TAG/a/b"
	set_args sleep 100
	run_bg run -d "$ID"
	check_status 0
	grep -qx "$(state_field "$ID" .pid)" "$cs/$TAG/a/b/cgroup.procs"
	for d in "$cs/$TAG" "$cs/$TAG/a" "$cs/$TAG/a/b"; do
		[ -n "$(cat "$d/cpuset.cpus")" ]
		[ "$(cat "$d/cpuset.cpus")" = "$(cat "${d%/*}/cpuset.cpus")" ]
		[ "$(cat "$d/cpuset.mems")" = "$(cat "${d%/*}/cpuset.mems")" ]
	done
	# delete removes the parents that create made (teardown finds any left), in every
	# hierarchy, and none that was there before: here $TAG in the cpuset one.
	hutch delete --force "$ID"
	[ ! -e "$cs/$TAG" ]
	mkdir "$cs/$TAG"
	cat "$cs/cpuset.cpus" >"$cs/$TAG/cpuset.cpus"
	cat "$cs/cpuset.mems" >"$cs/$TAG/cpuset.mems"
	run_bg run -d "$ID"
	check_status 0
	[ -n "$(cat "$cs/$TAG/a/cpuset.cpus")" ]
	hutch delete --force "$ID"
	[ -d "$cs/$TAG" ] && [ ! -e "$cs/$TAG/a" ]
	rmdir "$cs/$TAG"
}

@test "cgroups: on a hybrid host the init and exec'd processes share the container's cgroup2 cgroup" {
	[ "$(stat -fc %T /sys/fs/cgroup/unified 2>/dev/null)" = cgroup2fs ] ||
		skip "no hybrid cgroup2 at /sys/fs/cgroup/unified"
	remove_ns cgroup # the paths as the host sees them
	set_args sleep 100
	run_bg run -d "$ID"
	check_status 0
	local init mine
	init=$(grep '^0::' "/proc/$(state_field "$ID" .pid)/cgroup")
	mine=$(grep '^0::' /proc/self/cgroup)
	[ "$init" = "${mine%/}/$TAG" ]
	run hutch exec "$ID" cat /proc/self/cgroup
	check_status 0
	[ "$(grep '^0::' <<<"$output")" = "$init" ]
	hutch delete --force "$ID"
	[ ! -e "$(own_cgroup_dir unified)/$TAG" ]
}
