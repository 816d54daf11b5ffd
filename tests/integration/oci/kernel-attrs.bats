#!/usr/bin/env bats
# The kernel attributes a container's processes inherit: linux.personality, process.ioPriority,
# process.scheduler, linux.memoryPolicy and linux.timeOffsets (with a time namespace). Read
# from inside by the process itself (procattr: the syscalls, as busybox has no chrt), for the
# init and for exec'd processes; kernel refusals fail create naming the field.

load ../helpers

setup() {
	setup_bundle
	install_static_helper procattr
}

teardown() {
	teardown_bundle
}

# The line of procattr's output that starts with KEY, without the key.
attr() {
	sed -n "s/^$1 //p" <<<"$output"
}

start_ctr() {
	set_args sleep 1000
	run_bg run -d "$ID"
	check_status 0
}

# exec --process with the bundle's process changed by a jq filter.
exec_with() {
	jq "$1 | .process | .args = [\"procattr\"]" "$BUNDLE/config.json" >"$TEST_DIR/p.json"
	run hutch exec --process "$TEST_DIR/p.json" "$ID"
	check_status 0
}

refused() {
	run_bg create "$ID"
	[ "$status" -eq 1 ]
	[[ $output == *"$1"* ]]
	assert_no_leftovers
}

@test "personality: LINUX32 shows a 32-bit machine to the init and to exec" {
	[ "$(uname -m)" = x86_64 ] || skip "LINUX32 is checked on x86_64"
	update_config '.linux.personality = {domain: "LINUX32"}'
	set_args uname -m
	run_ok
	[ "$output" = i686 ]
	update_config '.linux.personality = {domain: "LINUX"}'
	run_ok
	[ "$output" = x86_64 ]
	update_config '.linux.personality = {domain: "LINUX32"}'
	start_ctr
	run hutch exec "$ID" uname -m
	check_status 0
	[ "$output" = i686 ]
}

@test "personality: unknown domains and any flag are refused" {
	update_config '.linux.personality = {domain: "LINUX64"}'
	refused "linux.personality.domain: unknown domain LINUX64"
	update_config '.linux.personality = {domain: "LINUX", flags: ["ADDR_NO_RANDOMIZE"]}'
	refused "linux.personality.flags: ADDR_NO_RANDOMIZE: not supported"
}

@test "ioPriority: the init's and an exec'd process's own" {
	update_config '.process.ioPriority = {class: "IOPRIO_CLASS_BE", priority: 6}'
	set_args procattr
	run_ok
	[ "$(attr ioprio)" = "2 6" ]
	update_config '.process.ioPriority = {class: "IOPRIO_CLASS_RT", priority: 1}'
	run_ok
	[ "$(attr ioprio)" = "1 1" ]
	update_config '.process.ioPriority = {class: "IOPRIO_CLASS_IDLE", priority: 7}'
	start_ctr
	run hutch exec "$ID" procattr # an exec'd process has the container's process's
	check_status 0
	[ "$(attr ioprio)" = "3 7" ]
	exec_with '.process.ioPriority = {class: "IOPRIO_CLASS_BE", priority: 0}'
	[ "$(attr ioprio)" = "2 0" ]
}

@test "ioPriority: a bad class or priority names the field" {
	update_config '.process.ioPriority = {class: "IOPRIO_CLASS_NONE", priority: 0}'
	refused "process.ioPriority.class: unknown class IOPRIO_CLASS_NONE"
	update_config '.process.ioPriority = {class: "IOPRIO_CLASS_BE", priority: 8}'
	refused "process.ioPriority.priority: 8 out of range"
}

@test "scheduler: SCHED_BATCH and SCHED_IDLE with nice, for the init and exec" {
	update_config '.process.scheduler = {policy: "SCHED_BATCH", nice: 5}'
	set_args sh -c 'procattr; cut -d" " -f19 /proc/self/stat'
	run_ok
	[ "$(attr sched | cut -d' ' -f1-3)" = "3 0 5" ]
	[ "${lines[-1]}" = 5 ] # sh's own nice, from /proc
	update_config '.process.scheduler = {policy: "SCHED_IDLE"}'
	start_ctr
	run hutch exec "$ID" procattr
	check_status 0
	[ "$(attr sched | cut -d' ' -f1)" = 5 ]
	exec_with '.process.scheduler = {policy: "SCHED_OTHER", nice: -3}'
	[ "$(attr sched | cut -d' ' -f1-3)" = "0 0 -3" ]
}

# Real-time policies need real-time budget in the container's cpu cgroup (v1 with
# RT_GROUP_SCHED): a small one, for a process that exits at once.
@test "scheduler: SCHED_FIFO and SCHED_DEADLINE with a small budget; without it the kernel refuses" {
	[ -e /sys/fs/cgroup/cpu/cpu.rt_runtime_us ] || skip "no cgroup v1 cpu.rt_runtime_us"
	update_config '.process.scheduler = {policy: "SCHED_FIFO", priority: 10}'
	refused "process.scheduler: sched_setattr: Operation not permitted"
	update_config '.linux.resources.cpu = {realtimeRuntime: 10000, realtimePeriod: 1000000}
		| .process.scheduler = {policy: "SCHED_RR", priority: 10}'
	set_args procattr
	run_ok
	[ "$(attr sched | cut -d' ' -f1-2)" = "2 10" ]
	update_config 'del(.linux.resources.cpu)
		| .process.scheduler = {policy: "SCHED_DEADLINE", runtime: 1000000,
			deadline: 10000000, period: 100000000}'
	run_ok
	[ "$(attr sched | cut -d' ' -f1,5-7)" = "6 1000000 10000000 100000000" ]
}

@test "scheduler: bad policies, flags and deadline parameters name the field" {
	update_config '.process.scheduler = {policy: "SCHED_ISO"}'
	refused "process.scheduler.policy: SCHED_ISO: not supported"
	update_config '.process.scheduler = {policy: "SCHED_OTHER", flags: ["SCHED_FLAG_FOO"]}'
	refused "process.scheduler.flags: unknown flag SCHED_FLAG_FOO"
	update_config '.process.scheduler = {policy: "SCHED_DEADLINE", runtime: 2000000,
		deadline: 1000000, period: 3000000}'
	refused "SCHED_DEADLINE needs runtime <= deadline <= period"
}

@test "memoryPolicy: bind, interleave and preferred on node 0, for the init and exec" {
	[ -d /sys/devices/system/node/node0 ] || skip "a kernel without NUMA"
	update_config '.linux.memoryPolicy = {mode: "MPOL_BIND", nodes: "0", flags: ["MPOL_F_STATIC_NODES"]}'
	set_args procattr
	run_ok
	[ "$(attr mempolicy)" = "$((2 | 1 << 15)) 1" ]
	update_config '.linux.memoryPolicy = {mode: "MPOL_INTERLEAVE", nodes: "0"}'
	run_ok
	[ "$(attr mempolicy)" = "3 1" ]
	update_config '.linux.memoryPolicy = {mode: "MPOL_PREFERRED", nodes: "0"}'
	start_ctr
	run hutch exec "$ID" procattr
	check_status 0
	[ "$(attr mempolicy)" = "1 1" ]
}

@test "memoryPolicy: a node the host lacks, a bad list or a mode without nodes names the field" {
	[ -d /sys/devices/system/node/node0 ] || skip "a kernel without NUMA"
	local last
	last=$(cat /sys/devices/system/node/possible)
	[ "$last" = 0 ] || skip "needs a host with NUMA node 0 only"
	update_config '.linux.memoryPolicy = {mode: "MPOL_BIND", nodes: "1"}'
	refused "linux.memoryPolicy: set_mempolicy: Invalid argument"
	update_config '.linux.memoryPolicy = {mode: "MPOL_BIND", nodes: "0-"}'
	refused "linux.memoryPolicy.nodes: 0-: expected a node"
	update_config '.linux.memoryPolicy = {mode: "MPOL_INTERLEAVE"}'
	refused "linux.memoryPolicy.nodes: required by MPOL_INTERLEAVE"
}

@test "timeOffsets: the container's clocks are offset, for the init and exec" {
	update_config '.linux.namespaces += [{type: "time"}]
		| .linux.timeOffsets = {boottime: {secs: 31536000}, monotonic: {secs: 1000, nanosecs: 5}}'
	set_args sh -c 'cat /proc/self/timens_offsets; cut -d. -f1 /proc/uptime'
	local host_up # read before the container's: its uptime is later, whole seconds apart
	host_up=$(cut -d. -f1 /proc/uptime)
	run_ok
	[ "$(echo ${lines[0]})" = "monotonic 1000 5" ]
	[ "$(echo ${lines[1]})" = "boottime 31536000 0" ]
	[ "${lines[2]}" -ge $((host_up + 31536000)) ]
	start_ctr
	run hutch exec "$ID" cat /proc/self/timens_offsets
	check_status 0
	[ "$(echo ${lines[1]})" = "boottime 31536000 0" ]
	[ "$(readlink /proc/self/ns/time)" != "$(readlink "/proc/$(state_field "$ID" .pid)/ns/time")" ]
}

# The init is not dumpable, so in a user namespace its /proc/self files are the host root's and
# closed to it: its timens_offsets comes from the parent.
@test "timeOffsets: in a user namespace too" {
	update_config '.linux.namespaces += [{type: "time"}, {type: "user"}]
		| .linux.uidMappings = [{containerID: 0, hostID: 100000, size: 65536}]
		| .linux.gidMappings = [{containerID: 0, hostID: 100000, size: 65536}]
		| .linux.timeOffsets = {boottime: {secs: 86400}}'
	set_args sh -c 'id -u; cat /proc/self/timens_offsets'
	run_ok
	[ "${lines[0]}" = 0 ]
	[ "$(echo ${lines[2]})" = "boottime 86400 0" ]
}

@test "timeOffsets: refused without a new time namespace, or for an unknown clock" {
	update_config '.linux.timeOffsets = {boottime: {secs: 10}}'
	refused "linux.timeOffsets: needs a time namespace"
	update_config '.linux.namespaces += [{type: "time"}] | .linux.timeOffsets = {realtime: {secs: 10}}'
	refused "linux.timeOffsets.realtime: unknown clock"
}
