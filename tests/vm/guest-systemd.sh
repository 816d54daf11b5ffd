#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# guest-systemd.sh BUILD_DIR: the VM lane's checks in the systemd guest (run-in-vm.sh --systemd),
# run as root by run.sh inside hutch-vm-cmd.service. The guest must run systemd as PID 1 on pure
# cgroup v2 with the D-Bus system bus, and systemd must make transient scopes with limits and
# delegation over D-Bus and remove them when they end: what a systemd cgroup driver relies on.
# Booted with --hybrid, systemd mounts the v1 hierarchies with cgroup2 at /sys/fs/cgroup/unified
# (as on this project's CI host), and the driver's checks are the v1 ones.
# One PASS/FAIL/SKIP line per check; exit 1 on a FAIL. An exec costs ~30 ms under TCG, so bash
# builtins do the reading and matching.
set -u

BUILD=${1:?usage: guest-systemd.sh BUILD_DIR}
CG=/sys/fs/cgroup
WORK=/tmp/hutch-vm
PROBE=hutch-vm-probe

# wait_for TENTHS TEST...: polls TEST every 0.1 s until it succeeds or TENTHS polls failed.
wait_for() {
	local n=$1
	shift
	until "$@"; do
		n=$((n - 1))
		[ $n -gt 0 ] || return 1
		sleep 0.1
	done
}

# How long the boot took, from systemd's own timestamps (microseconds since the kernel started).
report_boot() {
	local up line us='' fin=''
	read_into up /proc/uptime
	while IFS='=' read -r k v; do
		case $k in
		UserspaceTimestampMonotonic) us=$v ;;
		FinishTimestampMonotonic) fin=$v ;;
		esac
	done < <(systemctl show -p UserspaceTimestampMonotonic -p FinishTimestampMonotonic)
	printf -v line '# boot: systemd started at %d ms, startup finished at %d ms; checks start at %s s' \
		$((${us:-0} / 1000)) $((${fin:-0} / 1000)) "${up%% *}"
	echo "$line"
}

check_pid1() {
	local comm exe
	read_into comm /proc/1/comm
	exe=$(readlink /proc/1/exe)
	check "PID 1 is systemd ($comm, $exe)" [ "$comm" = systemd ]
}

check_system_running() {
	local state
	# --wait: the command starts as the boot's last job ends; the manager may still be settling.
	state=$(timeout 30 systemctl is-system-running --wait 2>&1)
	check "systemctl is-system-running says running or degraded ($state)" \
		in_list "$state" running degraded
	if [ "$state" != running ]; then
		systemctl --failed --no-legend --plain 2>&1 | sed 's/^/    [failed] /'
	fi
}

is_machine_id() { [[ $1 =~ ^[0-9a-f]{32}$ ]]; }
# What init-systemd.sh and systemd set up for the guest.
check_basics() {
	local host id flags mnt type tmp=''
	read_into host /proc/sys/kernel/hostname
	read_into id /etc/machine-id
	read_into flags /sys/class/net/lo/flags
	while read -r _ mnt type _; do
		[ "$mnt" = /tmp ] && tmp=$type
	done </proc/mounts
	check "the hostname is hutch-vm ($host)" [ "$host" = hutch-vm ]
	check "the guest has a machine-id ($id)" is_machine_id "$id"
	# IFF_UP is 0x1.
	check "lo is up (flags $flags)" [ $((flags & 1)) = 1 ]
	check "/tmp is a tmpfs (${tmp:-not a mount point})" [ "$tmp" = tmpfs ]
}

check_pure_v2() {
	local mnt type v2=() v1=() ctrls sub own
	while read -r _ mnt type _; do
		case $type in
		cgroup) v1+=("$mnt") ;;
		cgroup2) v2+=("$mnt") ;;
		esac
	done </proc/mounts
	read_into ctrls $CG/cgroup.controllers
	read_into sub $CG/cgroup.subtree_control
	read_into own /proc/self/cgroup
	echo "# controllers: $ctrls; the root enables: $sub; we are in $own"
	check "cgroup2 is mounted once, at $CG (${v2[*]:-none})" [ "${v2[*]:-}" = $CG ]
	check "no cgroup v1 hierarchy is mounted (${v1[*]:-none})" [ ${#v1[@]} = 0 ]
	check "the checks run in hutch-vm-cmd.service's cgroup" \
		[ "$own" = 0::/system.slice/hutch-vm-cmd.service ]
}

check_bus() {
	local out rc=0
	check "dbus-daemon listens on /run/dbus/system_bus_socket" [ -S /run/dbus/system_bus_socket ]
	out=$(timeout 30 busctl call org.freedesktop.systemd1 /org/freedesktop/systemd1 \
		org.freedesktop.systemd1.Manager GetUnit s hutch-vm-cmd.service 2>&1) || rc=$?
	check "systemd answers GetUnit over the system bus (status $rc: $out)" \
		[ "$out" = 'o "/org/freedesktop/systemd1/unit/hutch_2dvm_2dcmd_2eservice"' ]
}

# A transient scope with limits and delegation, made by systemd-run over D-Bus, as a systemd
# cgroup driver makes them. Its shell waits on a FIFO, so the checks decide when it ends.
probe_cgroup_line() {
	local l
	read_into l "$WORK/probe.out"
	[[ $l == 0::/* ]]
}
probe_cgroup_gone() { [ ! -d "$1" ]; }
check_scope() {
	local line path cg mem pids sub err prop rc=0 p
	mkdir -p "$WORK" && rm -f "$WORK/probe.fifo" && mkfifo "$WORK/probe.fifo" || return
	systemd-run --scope --unit $PROBE -p MemoryMax=64M -p TasksMax=20 -p Delegate=yes -- \
		sh -c 'cat /proc/self/cgroup; read -r _ || :' <"$WORK/probe.fifo" >"$WORK/probe.out" \
		2>"$WORK/probe.err" &
	local run=$!
	# Ours stays open until the scope shall end; opening it lets the shell's open go through.
	exec {fifo}>"$WORK/probe.fifo"
	if ! wait_for 300 probe_cgroup_line; then
		fail "systemd-run --scope: the scope's shell printed no cgroup in 30 s"
		sed 's/^/    [systemd-run] /' "$WORK/probe.err"
		exec {fifo}>&-
		wait $run
		return
	fi
	read_into line "$WORK/probe.out"
	path=${line#0::}
	cg=$CG$path
	check "systemd-run --scope made $PROBE.scope in system.slice ($path)" \
		[ "$path" = /system.slice/$PROBE.scope ]
	read_into mem "$cg/memory.max"
	read_into pids "$cg/pids.max"
	check "MemoryMax=64M is the scope's memory.max ($mem)" [ "$mem" = 67108864 ]
	check "TasksMax=20 is the scope's pids.max ($pids)" [ "$pids" = 20 ]
	prop=$(systemctl show -p Delegate --value $PROBE.scope 2>&1)
	check "systemd reports the scope delegated (Delegate=$prop)" [ "$prop" = yes ]
	# Delegation: the scope's subtree is ours. Its processes move to a leaf (no process may sit
	# in a cgroup that enables controllers for its children), then it enables memory and pids.
	err=$(mkdir "$cg/payload" 2>&1 && {
		while read -r p; do echo "$p" >"$cg/payload/cgroup.procs" || exit; done <"$cg/cgroup.procs"
		echo "+memory +pids" >"$cg/cgroup.subtree_control"
	} 2>&1) || rc=$?
	read_into sub "$cg/cgroup.subtree_control"
	check_all "the delegated scope's cgroup.subtree_control is writable ($sub${err:+; $err})" \
		'[ $rc = 0 ]' '[ "$sub" = "memory pids" ]' '[ -e "$cg/payload/memory.max" ]'
	# A property change re-applies the scope's cgroup settings: systemd must leave the
	# delegated subtree alone meanwhile.
	rc=0
	err=$(timeout 30 systemctl set-property --runtime $PROBE.scope TasksMax=21 2>&1) || rc=$?
	read_into pids "$cg/pids.max"
	read_into sub "$cg/cgroup.subtree_control"
	check_all "set-property TasksMax=21 reaches pids.max ($pids, status $rc${err:+: $err})" \
		'[ $rc = 0 ]' '[ "$pids" = 21 ]'
	check "and systemd leaves the delegated subtree_control alone ($sub)" [ "$sub" = "memory pids" ]
	# The scope's shell reads EOF and ends; systemd must then drop the unit and its cgroup,
	# the payload child we made included.
	exec {fifo}>&-
	rc=0
	wait $run || rc=$?
	check "the scope's command ended well (status $rc)" [ $rc = 0 ]
	wait_for 100 probe_cgroup_gone "$cg"
	check "the scope's cgroup is gone after it ended ($cg)" [ ! -e "$cg" ]
	rc=0
	systemctl status $PROBE.scope >/dev/null 2>&1 || rc=$?
	# 4: no such unit.
	check "and so is the unit (systemctl status: $rc)" [ $rc = 4 ]
}

# ---- hutch's systemd cgroup driver (--systemd-cgroup): scopes made over D-Bus ----
HUTCH=$BUILD/runtime/hutch
SD_STATE=/run/hutch-vm-sd

# sd_bundle NAME CGROUPSPATH CMD RESOURCES: a busybox bundle in $WORK/NAME running CMD (sh -c),
# with RESOURCES (JSON) as linux.resources.
sd_bundle() {
	local b=$WORK/$1 a
	mkdir -p "$b/rootfs/bin" "$b/rootfs/proc" "$b/rootfs/dev" "$b/rootfs/sys" || return 1
	cp /bin/busybox "$b/rootfs/bin/" || return 1
	for a in sh sleep cat dd seq true; do ln -sf busybox "$b/rootfs/bin/$a"; done
	(cd "$b" && "$HUTCH" spec) || return 1
	jq --arg cmd "$3" --arg cg "$2" --argjson res "$4" '.process.terminal = false
		| .process.args = ["/bin/sh", "-c", $cmd] | .linux.cgroupsPath = $cg
		| .linux.resources = $res' "$b/config.json" >"$b/c.json" && mv "$b/c.json" "$b/config.json"
}

# sdh ARGS...: hutch --systemd-cgroup, its state in $SD_STATE; out and rc are set. Through a
# file, not a pipe: a created container's init keeps hutch's stdout open.
sdh() {
	rc=0
	timeout -k 5 60 "$HUTCH" --systemd-cgroup --root $SD_STATE "$@" >"$WORK/sdh.out" 2>&1 \
		</dev/null || rc=$?
	out=$(<"$WORK/sdh.out")
}

# prop UNIT PROPERTY: systemd's value.
prop() { systemctl show "$1" -p "$2" --value 2>/dev/null; }
unit_gone() { [ "$(prop "$1" LoadState)" = not-found ]; }

# create, start, the scope as systemd and the kernel see it, the limits enforced, update in
# both views, a second container on the same unit refused with systemd's D-Bus error name,
# and delete: no unit and no cgroup left.
check_driver() {
	local scope=hutch-vm-c1.scope dir=$CG/system.slice/hutch-vm-c1.scope pid v ev
	if [ ! -x "$HUTCH" ]; then
		skip "driver: $HUTCH is not built"
		return
	fi
	sd_bundle c1 system.slice:hutch-vm:c1 'sleep 300' \
		'{"memory": {"limit": 33554432}, "pids": {"limit": 32},
		  "cpu": {"quota": 50000, "period": 100000, "shares": 2048}}' ||
		{ fail "driver: cannot make the bundle"; return; }
	sdh create --bundle "$WORK/c1" c1
	check "driver: create in system.slice:hutch-vm:c1 (status $rc${out:+: $out})" [ $rc = 0 ]
	sdh start c1
	check "driver: start (status $rc${out:+: $out})" [ $rc = 0 ]
	check "driver: the scope is active" [ "$(prop $scope ActiveState)" = active ]
	check "driver: the scope is delegated ($(prop $scope Delegate))" [ "$(prop $scope Delegate)" = yes ]
	check "driver: systemd's MemoryMax ($(prop $scope MemoryMax))" [ "$(prop $scope MemoryMax)" = 33554432 ]
	check "driver: systemd's TasksMax ($(prop $scope TasksMax))" [ "$(prop $scope TasksMax)" = 32 ]
	check "driver: systemd's CPUQuotaPerSecUSec ($(prop $scope CPUQuotaPerSecUSec))" \
		[ "$(prop $scope CPUQuotaPerSecUSec)" = 500ms ]
	check "driver: systemd's CPUWeight from shares 2048 ($(prop $scope CPUWeight))" \
		[ "$(prop $scope CPUWeight)" = 79 ]
	pid=$(jq -r .pid <<<"$(timeout 10 "$HUTCH" --root $SD_STATE state c1)")
	read_into v "/proc/$pid/cgroup"
	check "driver: the init is in the scope ($v)" [ "$v" = "0::/system.slice/$scope" ]
	read_into v $dir/memory.max
	check "driver: the kernel's memory.max ($v)" [ "$v" = 33554432 ]
	read_into v $dir/pids.max
	check "driver: the kernel's pids.max ($v)" [ "$v" = 32 ]
	read_into v $dir/cpu.max
	check "driver: the kernel's cpu.max, exact ($v)" [ "$v" = "50000 100000" ]
	# The limits hold: forks past pids.max fail, and 48 MiB on a tmpfs under 32 MiB is killed.
	sdh exec c1 sh -c 'for i in $(seq 40); do sleep 1 & done 2>/dev/null; wait'
	ev=$(<$dir/pids.events)
	check "driver: pids.max stops forks (pids.events: ${ev//$'\n'/ })" [ "${ev#max }" != 0 ]
	sdh exec c1 dd if=/dev/zero of=/dev/shm/fill bs=1M count=48
	ev=$(<$dir/memory.events)
	check "driver: memory.max OOM-kills the writer (status $rc; ${ev//$'\n'/ })" \
		[ $rc = 137 ]
	# update: systemd's view and the kernel's.
	sdh update --memory 50331648 --pids-limit 40 c1
	check "driver: update (status $rc${out:+: $out})" [ $rc = 0 ]
	check_all "driver: update reaches systemd: MemoryMax $(prop $scope MemoryMax), TasksMax $(prop $scope TasksMax)" \
		'[ "$(prop $scope MemoryMax)" = 50331648 ]' '[ "$(prop $scope TasksMax)" = 40 ]'
	read_into v $dir/memory.max
	check "driver: update reaches the kernel: memory.max $v" [ "$v" = 50331648 ]
	# The same unit twice: systemd refuses, and its D-Bus error name is shown.
	sdh create --bundle "$WORK/c1" c2
	check_all "driver: a second container on the unit is refused naming UnitExists (status $rc: $out)" \
		'[ $rc = 1 ]' '[[ $out == *org.freedesktop.systemd1.UnitExists* ]]'
	check "driver: the refused create left no state" [ ! -e $SD_STATE/c2 ]
	check "driver: and the first scope is still active" [ "$(prop $scope ActiveState)" = active ]
	sdh delete --force c1
	check "driver: delete --force (status $rc${out:+: $out})" [ $rc = 0 ]
	check "driver: no unit is left after delete ($(prop $scope LoadState))" unit_gone $scope
	check "driver: no cgroup is left after delete" [ ! -e $dir ]
}

# A nested slice (kubelet's pod slices), a foreground run, and a container whose init exits
# before delete (systemd collects the scope; delete is still clean).
check_driver_slices() {
	local scope=cri-containerd-c3.scope v pid
	local dir=$CG/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod123.slice/$scope
	[ -x "$HUTCH" ] || { skip "driver slices: $HUTCH is not built"; return; }
	sd_bundle c3 kubepods-besteffort-pod123.slice:cri-containerd:c3 'sleep 300' '{}' ||
		{ fail "driver slices: cannot make the bundle"; return; }
	sdh create --bundle "$WORK/c3" c3
	check "driver: create in a nested pod slice (status $rc${out:+: $out})" [ $rc = 0 ]
	pid=$(jq -r .pid <<<"$(timeout 10 "$HUTCH" --root $SD_STATE state c3)")
	read_into v "/proc/$pid/cgroup"
	check "driver: the slice nests at its dashes ($v)" [ "$v" = "0::${dir#$CG}" ]
	sdh delete --force c3
	check_all "driver: delete of the nested one (status $rc)" '[ $rc = 0 ]' 'unit_gone $scope'
	sd_bundle c4 :hutch-vm:c4 'cat /proc/self/cgroup; exit 3' '{"pids": {"limit": 10}}'
	sdh run --bundle "$WORK/c4" c4
	check "driver: a foreground run gives the command's status (status $rc: $out)" [ $rc = 3 ]
	check "driver: nothing of the run is left" unit_gone hutch-vm-c4.scope
	sd_bundle c5 system.slice:hutch-vm:c5 'true' '{}'
	sdh create --bundle "$WORK/c5" c5 && sdh start c5
	wait_for 50 unit_gone hutch-vm-c5.scope
	check "driver: systemd collects the scope when its init has exited" unit_gone hutch-vm-c5.scope
	sdh delete c5
	check "driver: delete afterwards is clean (status $rc${out:+: $out})" [ $rc = 0 ]
	check "driver: no state is left" [ -z "$(ls -A $SD_STATE 2>/dev/null)" ]
}

# ---- the same driver on a hybrid host: v1 controllers, cgroup2 at $CG/unified ----

check_hybrid() {
	local mnt type v1=() v2=() own
	while read -r _ mnt type _; do
		case $type in
		cgroup) v1+=("${mnt#$CG/}") ;;
		cgroup2) v2+=("$mnt") ;;
		esac
	done </proc/mounts
	own=$(grep -E '^[0-9]+:(memory|pids):' /proc/self/cgroup | tr '\n' ' ')
	echo "# v1 hierarchies: ${v1[*]}; we are in $own"
	check "cgroup2 is mounted once, at $CG/unified (${v2[*]:-none})" [ "${v2[*]:-}" = $CG/unified ]
	check_all "the v1 memory, pids and cpuset hierarchies are mounted (${v1[*]})" \
		'in_list memory "${v1[@]}"' 'in_list pids "${v1[@]}"' 'in_list cpuset "${v1[@]}"'
	check_all "the checks run in hutch-vm-cmd.service's memory cgroup ($own)" \
		'[[ $own == *:memory:/system.slice/hutch-vm-cmd.service* ]]'
}

# Every cgroup hierarchy's mount point (the v1 ones and the cgroup2 beside them).
hierarchies() { awk '$3 == "cgroup" || $3 == "cgroup2" { print $2 }' /proc/mounts; }

# Where PATH exists, in any hierarchy.
cgroup_left() {
	local m
	for m in $(hierarchies); do
		[ ! -e "$m$1" ] || echo "$m$1"
	done
}

# The v1 driver: systemd makes the scope in the hierarchies it manages (memory, cpu, pids,
# blkio, devices, name=systemd, unified) and hutch in the others (cpuset, freezer...), with
# the init in every one; the limits in systemd's view and the kernel's v1 files, enforced;
# update; and delete: no unit and no directory in any hierarchy, the parents hutch made too.
check_driver_v1() {
	local scope=hutch-vm-h1.scope path=/system.slice/hutch-vm-h1.scope pid v ev lines
	[ -x "$HUTCH" ] || { skip "v1 driver: $HUTCH is not built"; return; }
	local cpuset_slice=0
	[ -d $CG/cpuset/system.slice ] && cpuset_slice=1
	sd_bundle h1 system.slice:hutch-vm:h1 'sleep 300' \
		'{"memory": {"limit": 33554432}, "pids": {"limit": 32}, "cpu": {"quota": 50000,
		  "period": 100000, "shares": 2048, "cpus": "0"}}' ||
		{ fail "v1 driver: cannot make the bundle"; return; }
	sdh create --bundle "$WORK/h1" h1
	check "v1 driver: create in system.slice:hutch-vm:h1 (status $rc${out:+: $out})" [ $rc = 0 ]
	sdh start h1
	check "v1 driver: start (status $rc${out:+: $out})" [ $rc = 0 ]
	check "v1 driver: the scope is active" [ "$(prop $scope ActiveState)" = active ]
	# runc's legacy properties: MemoryLimit and CPUShares, exact on v1.
	check_all "v1 driver: systemd's MemoryLimit ($(prop $scope MemoryLimit)), CPUShares ($(prop $scope CPUShares))" \
		'[ "$(prop $scope MemoryLimit)" = 33554432 ]' '[ "$(prop $scope CPUShares)" = 2048 ]'
	check "v1 driver: systemd's TasksMax ($(prop $scope TasksMax))" [ "$(prop $scope TasksMax)" = 32 ]
	pid=$(jq -r .pid <<<"$(timeout 10 "$HUTCH" --root $SD_STATE state h1)")
	lines=$(grep -vc ":$path\$" "/proc/$pid/cgroup")
	check "v1 driver: the init is in the scope in every hierarchy ($lines elsewhere: $(grep -v ":$path\$" "/proc/$pid/cgroup" | tr '\n' ' '))" \
		[ "$lines" = 0 ]
	read_into v $CG/memory$path/memory.limit_in_bytes
	check "v1 driver: the kernel's memory.limit_in_bytes ($v)" [ "$v" = 33554432 ]
	read_into v $CG/pids$path/pids.max
	check "v1 driver: the kernel's pids.max ($v)" [ "$v" = 32 ]
	read_into v $CG/cpu$path/cpu.cfs_quota_us
	check "v1 driver: the kernel's cpu.cfs_quota_us ($v)" [ "$v" = 50000 ]
	read_into v $CG/cpu$path/cpu.shares
	check "v1 driver: the kernel's cpu.shares ($v)" [ "$v" = 2048 ]
	read_into v $CG/cpuset$path/cpuset.cpus
	check "v1 driver: cpuset, which systemd does not manage: hutch made it ($v)" [ "$v" = 0 ]
	sdh exec h1 sh -c 'for i in $(seq 40); do sleep 1 & done 2>/dev/null; wait'
	ev=$(<$CG/pids$path/pids.events)
	check "v1 driver: pids.max stops forks (pids.events: $ev)" [ "${ev#max }" != 0 ]
	sdh exec h1 dd if=/dev/zero of=/dev/shm/fill bs=1M count=48
	check "v1 driver: memory.limit_in_bytes OOM-kills the writer (status $rc)" [ $rc = 137 ]
	sdh update --memory 50331648 --pids-limit 40 h1
	check "v1 driver: update (status $rc${out:+: $out})" [ $rc = 0 ]
	check_all "v1 driver: update reaches systemd: MemoryLimit $(prop $scope MemoryLimit), TasksMax $(prop $scope TasksMax)" \
		'[ "$(prop $scope MemoryLimit)" = 50331648 ]' '[ "$(prop $scope TasksMax)" = 40 ]'
	read_into v $CG/memory$path/memory.limit_in_bytes
	check "v1 driver: update reaches the kernel: memory.limit_in_bytes $v" [ "$v" = 50331648 ]
	# systemd writes every limit it has again when a property changes: its own view must be
	# the container's (MemoryMax applied as the v1 memory.limit_in_bytes), or it undoes them.
	timeout 30 systemctl set-property --runtime $scope CPUAccounting=yes
	read_into v $CG/memory$path/memory.limit_in_bytes
	local shares
	read_into shares $CG/cpu$path/cpu.shares
	check_all "v1 driver: systemd re-applying its properties keeps the limits (memory.limit_in_bytes $v, cpu.shares $shares)" \
		'[ "$v" = 50331648 ]' '[ "$shares" = 2048 ]'
	sdh create --bundle "$WORK/h1" h2
	check_all "v1 driver: a second container on the unit is refused naming UnitExists (status $rc: $out)" \
		'[ $rc = 1 ]' '[[ $out == *org.freedesktop.systemd1.UnitExists* ]]'
	check "v1 driver: and the first one still runs" [ -d "/proc/$pid" ]
	sdh delete --force h1
	check "v1 driver: delete --force (status $rc${out:+: $out})" [ $rc = 0 ]
	check "v1 driver: no unit is left after delete ($(prop $scope LoadState))" unit_gone $scope
	v=$(cgroup_left $path)
	check "v1 driver: no cgroup is left in any hierarchy (${v:-none})" [ -z "$v" ]
	[ $cpuset_slice = 1 ] ||
		check "v1 driver: nor the cpuset slice hutch made" [ ! -e $CG/cpuset/system.slice ]
	local pod=/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod123.slice
	sd_bundle h3 kubepods-besteffort-pod123.slice:cri-containerd:h3 'sleep 300' '{}'
	sdh create --bundle "$WORK/h3" h3
	pid=$(jq -r .pid <<<"$(timeout 10 "$HUTCH" --root $SD_STATE state h3)")
	v=$(grep -E '^[0-9]+:(memory|cpuset):' "/proc/$pid/cgroup" | tr '\n' ' ')
	check_all "v1 driver: a nested pod slice, in memory and cpuset (status $rc: $v)" '[ $rc = 0 ]' \
		'grep -q ":memory:$pod/cri-containerd-h3.scope\$" "/proc/$pid/cgroup"' \
		'grep -q ":cpuset:$pod/cri-containerd-h3.scope\$" "/proc/$pid/cgroup"'
	sdh delete --force h3
	v=$(cgroup_left $pod/cri-containerd-h3.scope)
	check_all "v1 driver: delete (status $rc${out:+: $out}) leaves nothing (${v:-none})" \
		'[ $rc = 0 ]' 'unit_gone cri-containerd-h3.scope' '[ -z "$v" ]'
	check "v1 driver: no state is left" [ -z "$(ls -A $SD_STATE 2>/dev/null)" ]
}

# A create killed (HUTCH_TEST_KILL_AT) once systemd has made the scope, before the state names
# it, and once the state does (on v1 with the directories hutch made): delete --force, and
# systemd collecting the scope of an init that exits with its create, leave nothing.
check_driver_killed() {
	local at n=0 v
	[ -x "$HUTCH" ] || { skip "driver kills: $HUTCH is not built"; return; }
	for at in create:scope-started create:scope-saved; do
		n=$((n + 1))
		sd_bundle k$n system.slice:hutch-vm:k$n 'sleep 300' '{"pids": {"limit": 16}}' ||
			{ fail "driver kills: cannot make the bundle"; return; }
		HUTCH_TEST_KILL_AT=$at sdh create --bundle "$WORK/k$n" k$n
		check "driver: a create killed at $at (status $rc)" [ $rc = 137 ]
		sdh delete --force k$n
		wait_for 100 unit_gone hutch-vm-k$n.scope
		v=$(cgroup_left /system.slice/hutch-vm-k$n.scope)
		check_all "driver: then delete --force (status $rc) leaves no unit, cgroup (${v:-none}) or state" \
			'[ $rc = 0 ]' 'unit_gone hutch-vm-k$n.scope' '[ -z "$v" ]' '[ ! -e $SD_STATE/k$n ]'
	done
}

main() {
	echo "# guest-systemd: $(systemctl --version | head -1); build $BUILD"
	report_boot
	# The checks, in order. The systemd cgroup driver's checks (hutch with its transient
	# scopes over D-Bus, in $BUILD) go at the end of this list.
	local checks=(
		check_pid1
		check_system_running
		check_basics
		check_pure_v2
		check_bus
		check_scope
		check_driver
		check_driver_slices
		check_driver_killed
		check_cri
	)
	[ -d $CG/unified ] && checks=(check_pid1 check_system_running check_basics check_hybrid
		check_bus check_driver_v1 check_driver_killed check_cri)
	local c
	for c in "${checks[@]}"; do
		"$c"
	done
	echo "# guest-systemd: $npass passed, $nfail failed, $nskip skipped"
	[ $nfail = 0 ]
}

main
