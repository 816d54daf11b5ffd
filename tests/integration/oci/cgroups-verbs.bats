#!/usr/bin/env bats
# The verbs that act through a live container's cgroup: pause/resume (the freezer), update
# (limits changed on the fly, read back from the cgroup files), ps, events (stats, OOM) and
# kill --all / delete --force on running and paused containers.

load ../helpers

# True on a pure cgroup v2 host.
is_v2() {
	[ "$(stat -f -c %T /sys/fs/cgroup)" = cgroup2fs ]
}

# The container's cgroup directory for CONTROLLER (v2: the one directory).
ctr_cgroup() {
	local ctl=$1 dir
	if is_v2; then
		dir=/sys/fs/cgroup$(awk -F: '$1 == "0" { print $3 }' /proc/self/cgroup)
	else
		dir=$(own_cgroup_dir "$ctl")
	fi
	[ -n "$dir" ] || skip "no $ctl cgroup hierarchy here"
	echo "${dir%/}/$TAG"
}

# cg_read CONTROLLER V1_FILE V2_FILE: a file of the container's cgroup.
cg_read() {
	local dir
	dir=$(ctr_cgroup "$1")
	if is_v2; then cat "$dir/$3"; else cat "$dir/$2"; fi
}

# A container that writes an ever-growing counter to /shared/counter.
start_counter() {
	add_shared_mount
	# Written aside and renamed, so that a reader never sees it empty.
	set_args sh -c 'i=0; while :; do i=$((i + 1)); echo $i > /shared/c.new
		mv /shared/c.new /shared/counter; sleep 0.02; done'
	run_bg run -d "$ID"
	check_status 0
	local tries=100
	until [ -s "$TEST_DIR/shared/counter" ] || [ $tries -eq 0 ]; do
		sleep 0.05
		tries=$((tries - 1))
	done
}

counter() {
	cat "$TEST_DIR/shared/counter"
}

@test "pause/resume: the container stops and restarts, and its status says so" {
	start_counter
	run hutch pause "$ID"
	check_status 0
	[ "$(state_field "$ID" .status)" = paused ]
	hutch list | grep -E "^$ID +[0-9]+ +paused "
	local c1 c2 c3
	c1=$(counter)
	sleep 0.5
	c2=$(counter)
	[ "$c1" = "$c2" ]
	run hutch resume "$ID"
	check_status 0
	[ "$(state_field "$ID" .status)" = running ]
	sleep 0.5
	c3=$(counter)
	[ "$c3" -gt "$c2" ]
	hutch delete --force "$ID"
}

@test "pause/resume: runc's errors for a paused, a running and a stopped container" {
	set_args sleep 100
	run_bg run -d "$ID"
	run hutch resume "$ID"
	[ "$status" -eq 1 ]
	[[ $output == *"container not paused"* ]]
	hutch pause "$ID"
	run hutch pause "$ID"
	[ "$status" -eq 1 ]
	[[ $output == *"container not running"* ]]
	hutch resume "$ID"
	hutch kill "$ID" KILL
	wait_for_state "$ID" stopped
	run hutch pause "$ID"
	[ "$status" -eq 1 ]
	[[ $output == *"container not running"* ]]
	hutch delete "$ID"
}

@test "pause/resume: a created container pauses and goes back to created" {
	set_args true
	run_bg create "$ID"
	check_status 0
	hutch pause "$ID"
	[ "$(state_field "$ID" .status)" = paused ]
	hutch resume "$ID"
	[ "$(state_field "$ID" .status)" = created ]
	hutch delete --force "$ID"
}

@test "update --memory/--memory-swap: raising and lowering a live limit" {
	update_config '.linux.resources.memory = {limit: 67108864, swap: 67108864}'
	set_args sleep 100
	run_bg run -d "$ID"
	check_status 0
	[ "$(cg_read memory memory.limit_in_bytes memory.max)" = 67108864 ]
	run hutch update --memory 256m --memory-swap 512m "$ID"
	check_status 0
	[ "$(cg_read memory memory.limit_in_bytes memory.max)" = 268435456 ]
	if ! is_v2 && [ -e "$(ctr_cgroup memory)/memory.memsw.limit_in_bytes" ]; then
		[ "$(cg_read memory memory.memsw.limit_in_bytes x)" = 536870912 ]
	fi
	# Lower both: swap (memory+swap on v1) must go down after memory, or the kernel refuses.
	run hutch update --memory 32M --memory-swap 40m "$ID"
	check_status 0
	[ "$(cg_read memory memory.limit_in_bytes memory.max)" = 33554432 ]
	if ! is_v2 && [ -e "$(ctr_cgroup memory)/memory.memsw.limit_in_bytes" ]; then
		[ "$(cg_read memory memory.memsw.limit_in_bytes x)" = 41943040 ]
	fi
	run hutch update --memory 1.5g --memory-swap -1 "$ID"
	check_status 0
	[ "$(cg_read memory memory.limit_in_bytes memory.max)" = 1610612736 ]
	run hutch update --memory 12x "$ID"
	[ "$status" -eq 1 ]
	[[ $output == *"invalid value for --memory: 12x"* ]]
	hutch delete --force "$ID"
}

@test "update --pids-limit and --resources -: the live limits change, 0 leaves them alone" {
	update_config '.linux.resources.pids = {limit: 100}
		| .linux.resources.memory = {limit: 67108864}'
	set_args sleep 100
	run_bg run -d "$ID"
	check_status 0
	run hutch update --pids-limit 42 "$ID"
	check_status 0
	[ "$(cg_read pids pids.max pids.max)" = 42 ]
	# containerd's shim: the whole linux.resources on stdin, with 0 for "unchanged".
	run hutch update --resources - "$ID" <<-'EOF'
		{"memory": {"limit": 0, "swap": 0, "reservation": 0},
		 "cpu": {"shares": 0, "quota": 0, "period": 0},
		 "pids": {"limit": 7}, "blockIO": {"weight": 0}}
	EOF
	check_status 0
	[ "$(cg_read pids pids.max pids.max)" = 7 ]
	[ "$(cg_read memory memory.limit_in_bytes memory.max)" = 67108864 ]
	echo '{"pids": {"limit": -1}}' >"$TEST_DIR/res.json"
	run hutch update -r "$TEST_DIR/res.json" "$ID"
	check_status 0
	[ "$(cg_read pids pids.max pids.max)" = max ]
	hutch delete --force "$ID"
}

@test "update, events, kill, delete: flags after the id, as runc's parser reorders them" {
	update_config '.linux.resources.pids = {limit: 100}'
	set_args sleep 100
	run_bg run -d "$ID"
	check_status 0
	run hutch update "$ID" --pids-limit 42
	check_status 0
	[ "$(cg_read pids pids.max pids.max)" = 42 ]
	run hutch update "$ID" --cpu-period 100000 --pids-limit=43
	check_status 0
	[ "$(cg_read pids pids.max pids.max)" = 43 ]
	[ "$(cg_read cpu cpu.cfs_period_us cpu.max | awk '{print $NF}')" = 100000 ]
	run hutch events "$ID" --stats
	check_status 0
	jq -e '.type == "stats"' <<<"$output"
	run hutch kill "$ID" KILL --all
	check_status 0
	wait_for_state "$ID" stopped
	run hutch delete "$ID" --force
	check_status 0
	run hutch state "$ID"
	[ "$status" -eq 1 ]
}

@test "exec --cgroup: the process joins an existing sub-cgroup of the container's, as runc" {
	set_args sleep 100
	run_bg run -d "$ID"
	check_status 0
	local pids cpu
	pids=$(ctr_cgroup pids)
	mkdir "$pids/sub"
	if is_v2; then
		run hutch exec --cgroup sub "$ID" cat /proc/self/cgroup
		check_status 0
		[[ $output == *"/sub" ]]
		run hutch exec --cgroup pids:sub "$ID" true
		[ "$status" -ne 0 ]
		[[ $output == *"--cgroup pids:sub"*"cgroup v1"* ]]
	else
		cpu=$(ctr_cgroup cpu)
		mkdir "$cpu/sub"
		# one controller, or several; a leading / is still inside the container's cgroup
		run hutch exec --cgroup pids:sub "$ID" cat /proc/self/cgroup
		check_status 0
		grep -E "^[0-9]+:pids:.*/sub\$" <<<"$output"
		! grep -E "^[0-9]+:cpu(,cpuacct)?:.*/sub\$" <<<"$output"
		run hutch exec --cgroup pids,cpu:/sub "$ID" cat /proc/self/cgroup
		check_status 0
		grep -E "^[0-9]+:pids:.*/sub\$" <<<"$output"
		grep -E "^[0-9]+:cpu(,cpuacct)?:.*/sub\$" <<<"$output"
		run hutch exec --cgroup pids:sub --cgroup cpu:sub/../sub "$ID" cat /proc/self/cgroup
		check_status 0
		grep -E "^[0-9]+:cpu(,cpuacct)?:.*/sub\$" <<<"$output"
		# without a controller: every hierarchy, where sub is missing here
		run hutch exec --cgroup sub "$ID" true
		[ "$status" -ne 0 ]
		[[ $output == *"--cgroup"*"/sub"* ]]
		run hutch exec --cgroup bogus:sub "$ID" true
		[ "$status" -ne 0 ]
		[[ $output == *"--cgroup bogus:sub"*bogus* ]]
		rmdir "$cpu/sub"
	fi
	# it must exist, and be inside
	run hutch exec --cgroup pids:nope "$ID" true
	[ "$status" -ne 0 ]
	[[ $output == *"--cgroup"*nope* ]]
	run hutch exec --cgroup ../.. "$ID" true
	[ "$status" -ne 0 ]
	[[ $output == *"--cgroup ../.."*"not a sub-cgroup"* ]]
	run hutch exec --cgroup pids:a/../../x "$ID" true
	[ "$status" -ne 0 ]
	[[ $output == *"not a sub-cgroup"* ]]
	[ "$(wc -l <"$pids/sub/cgroup.procs")" -eq 0 ] # nothing left of the failed ones
	rmdir "$pids/sub"
	hutch delete --force "$ID"
}

@test "update: refuses a stopped container, Intel RDT, and bad JSON" {
	set_args sleep 100
	run_bg run -d "$ID"
	run hutch update --l3-cache-schema "L3:0=f" "$ID"
	[ "$status" -eq 1 ]
	[[ $output == *"not supported"* ]]
	run hutch update -r - "$ID" <<<'{"memory": '
	[ "$status" -eq 1 ]
	[[ $output == *"invalid JSON"* ]]
	hutch kill "$ID" KILL
	wait_for_state "$ID" stopped
	run hutch update --memory 64m "$ID"
	[ "$status" -eq 1 ]
	[[ $output == *"container not running"* ]]
	hutch delete "$ID"
}

@test "update --cpu-quota: a busy loop is throttled" {
	set_args sh -c 'while :; do :; done'
	run_bg run -d "$ID"
	check_status 0
	run hutch update --cpu-quota 10000 --cpu-period 100000 "$ID"
	check_status 0
	if is_v2; then
		[ "$(cg_read cpu x cpu.max)" = "10000 100000" ]
	else
		[ "$(cg_read cpu cpu.cfs_quota_us x)" = 10000 ]
		[ "$(cg_read cpu cpu.cfs_period_us x)" = 100000 ]
	fi
	sleep 1
	local throttled
	throttled=$(cg_read cpu cpu.stat cpu.stat | awk '$1 == "nr_throttled" { print $2 }')
	echo "nr_throttled: $throttled"
	[ "$throttled" -gt 0 ]
	run hutch events --stats "$ID"
	check_status 0
	jq -e '.data.cpu.throttling.throttledPeriods > 0' <<<"$output"
	hutch delete --force "$ID"
}

@test "ps: json lists the host pids, the table is ps's own output filtered to them" {
	set_args sh -c 'sleep 100 & sleep 100; true' # "; true": sh must not exec the last sleep
	run_bg run -d "$ID"
	check_status 0
	local pid
	pid=$(state_field "$ID" .pid)
	run hutch ps --format json "$ID"
	check_status 0
	jq -e --argjson p "$pid" 'type == "array" and length == 3 and index($p) != null' <<<"$output"
	run hutch ps "$ID"
	check_status 0
	[[ ${lines[0]} == *PID* ]]
	[ "${#lines[@]}" -eq 4 ]
	grep -E "^\S+ +$pid " <<<"$output"
	run hutch ps "$ID" -o pid,comm
	check_status 0
	[ "$(echo ${lines[0]})" = "PID COMMAND" ]
	grep -E "^ *$pid sh$" <<<"$output"
	run hutch ps --format yaml "$ID"
	[ "$status" -eq 1 ]
	hutch delete --force "$ID"
}

@test "kill --all: kills every process, running or paused" {
	set_args sh -c 'sleep 100 & sleep 100'
	set_cgroup a
	run_bg run -d "$ID-a"
	set_cgroup b
	run_bg run -d "$ID-b"
	hutch pause "$ID-b"
	hutch kill --all "$ID-a" KILL
	hutch kill --all "$ID-b" KILL
	wait_for_state "$ID-a" stopped
	wait_for_state "$ID-b" stopped
	[ "$(hutch ps --format json "$ID-b")" = "[]" ]
	hutch delete "$ID-a"
	hutch delete "$ID-b"
	cd / # the check's own subshells must not count as processes in $TEST_DIR
	assert_no_leftovers
}

@test "kill KILL: the init of a paused container dies" {
	set_args sleep 100
	run_bg run -d "$ID"
	hutch pause "$ID"
	hutch kill "$ID" KILL
	wait_for_state "$ID" stopped
	hutch delete "$ID"
}

@test "delete --force: removes a running and a paused container, and everything in them" {
	set_args sh -c 'sleep 100 & sleep 100'
	set_cgroup a
	run_bg run -d "$ID-a"
	set_cgroup b
	run_bg run -d "$ID-b"
	hutch pause "$ID-b"
	run hutch delete "$ID-b"
	[ "$status" -eq 1 ]
	[[ $output == *paused* ]]
	hutch delete --force "$ID-a"
	hutch delete --force "$ID-b"
	cd / # the check's own subshells must not count as processes in $TEST_DIR
	assert_no_leftovers
}

@test "events --stats: one JSON stats event in runc's shape" {
	update_config '.linux.resources.pids = {limit: 50}'
	set_args sleep 100
	run_bg run -d "$ID"
	run hutch events --stats "$ID"
	check_status 0
	[ "${#lines[@]}" -eq 1 ]
	jq -e --arg id "$ID" '.type == "stats" and .id == $id' <<<"$output"
	jq -e '.data.memory.usage.usage > 0 and .data.pids.current >= 1' <<<"$output"
	jq -e '.data.pids.limit == 50 and .data.cpu.usage.total > 0' <<<"$output"
	jq -e '(.data.memory.raw | length) > 0 and (.data.hugetlb | type) == "object"' <<<"$output"
	hutch delete --force "$ID"
	run hutch events --stats "$ID"
	[ "$status" -eq 1 ]
}

@test "events: streams stats every --interval and ends when the container stops" {
	set_args sleep 100
	run_bg run -d "$ID"
	hutch events --interval 100ms "$ID" >"$TEST_DIR/events" 2>&1 3>&- &
	local ev=$!
	track_pid "$ev"
	sleep 0.6
	hutch kill "$ID" KILL
	wait "$ev"
	cat "$TEST_DIR/events"
	[ "$(grep -c '"type":"stats"' "$TEST_DIR/events")" -ge 3 ]
	jq -e -s 'all(.type == "stats")' "$TEST_DIR/events"
	hutch delete "$ID"
}

@test "events: an OOM kill under a 16M limit is reported" {
	update_config '.linux.resources.memory = {limit: 16777216, swap: 16777216}'
	add_shared_mount
	install_static_helper memhog
	# The hog is a child of the init: the OOM killer takes it, and the container goes on.
	set_args sh -c 'while [ ! -e /shared/go ]; do sleep 0.02; done
		memhog 64; echo "hog status $?"; sleep 100'
	run_bg run -d "$ID"
	check_status 0
	hutch events --interval 100ms "$ID" >"$TEST_DIR/events" 2>&1 3>&- &
	local ev=$!
	track_pid "$ev"
	local tries=100
	until grep -q stats "$TEST_DIR/events" || [ $tries -eq 0 ]; do
		sleep 0.05
		tries=$((tries - 1))
	done
	touch "$TEST_DIR/shared/go"
	wait_for_output "$ID" "hog status 137" 40 # the hog is slow on a loaded host
	tries=40
	until grep -q '"type":"oom"' "$TEST_DIR/events" || [ $tries -eq 0 ]; do
		sleep 0.05
		tries=$((tries - 1))
	done
	hutch kill "$ID" KILL
	wait "$ev"
	grep -v '"stats"' "$TEST_DIR/events" || true
	grep -qx "{\"type\":\"oom\",\"id\":\"$ID\"}" "$TEST_DIR/events"
	hutch delete "$ID"
}

# runc resolves a relative cgroupsPath against the creator's own cgroup in each hierarchy and
# keeps the result: a later verb run from another cgroup must find the same one.
@test "cgroups: a relative cgroupsPath is fixed at create; verbs from another cgroup find it" {
	local own other
	update_config '.linux.resources.memory = {limit: 67108864}'
	set_args sleep 100
	run_bg run -d "$ID"
	check_status 0
	own=$(ctr_cgroup memory)
	other=${own%/*}/$TAG-other # a child of our own memory cgroup: still our subtree
	mkdir "$other"
	# The shell moves itself there, then becomes hutch.
	in_other() { sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$other" \
		"$HUTCH" --root "$HUTCH_ROOT" "$@"; }
	run in_other update --memory 48m "$ID"
	check_status 0
	[ "$(cg_read memory memory.limit_in_bytes memory.max)" = 50331648 ]
	run in_other delete --force "$ID"
	check_status 0
	[ ! -e "$own" ]
	rmdir "$other"
}
