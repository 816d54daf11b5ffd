#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# guest-systemd.sh BUILD_DIR: the VM lane's checks in the systemd guest (run-in-vm.sh --systemd),
# run as root by run.sh inside hutch-vm-cmd.service. The guest must run systemd as PID 1 on pure
# cgroup v2 with the D-Bus system bus, and systemd must make transient scopes with limits and
# delegation over D-Bus and remove them when they end: what a systemd cgroup driver relies on.
# One PASS/FAIL/SKIP line per check; exit 1 on a FAIL. An exec costs ~30 ms under TCG, so bash
# builtins do the reading and matching.
set -u

BUILD=${1:?usage: guest-systemd.sh BUILD_DIR}
CG=/sys/fs/cgroup
WORK=/tmp/hutch-vm
PROBE=hutch-vm-probe
npass=0 nfail=0 nskip=0

pass() {
	echo "PASS: $*"
	npass=$((npass + 1))
}
fail() {
	echo "FAIL: $*"
	nfail=$((nfail + 1))
}
skip() {
	echo "SKIP: $*"
	nskip=$((nskip + 1))
}
# check DESCRIPTION TEST...: PASS when the TEST command succeeds.
check() {
	local what=$1
	shift
	if "$@"; then pass "$what"; else fail "$what"; fi
}
# read_into VAR FILE: the file's first line, or "" when it cannot be read.
read_into() {
	local line_=''
	IFS= read -r line_ 2>/dev/null <"$2"
	printf -v "$1" '%s' "$line_"
}
in_list() {
	local w=$1
	shift
	[[ " $* " == *" $w "* ]]
}
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
	check "the delegated scope's cgroup.subtree_control is writable ($sub${err:+; $err})" \
		[ $rc = 0 ] && [ "$sub" = "memory pids" ] && [ -e "$cg/payload/memory.max" ]
	# A property change re-applies the scope's cgroup settings: systemd must leave the
	# delegated subtree alone meanwhile.
	rc=0
	err=$(timeout 30 systemctl set-property --runtime $PROBE.scope TasksMax=21 2>&1) || rc=$?
	read_into pids "$cg/pids.max"
	read_into sub "$cg/cgroup.subtree_control"
	check "set-property TasksMax=21 reaches pids.max ($pids, status $rc${err:+: $err})" \
		[ $rc = 0 ] && [ "$pids" = 21 ]
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
	)
	local c
	for c in "${checks[@]}"; do
		"$c"
	done
	echo "# guest-systemd: $npass passed, $nfail failed, $nskip skipped"
	[ $nfail = 0 ]
}

main
