#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# guest-v2.sh BUILD_DIR: the VM lane's checks, run as root inside the guest by run.sh. The guest
# must be pure cgroup v2 with every controller enabled; the cgroups unit test must pass there;
# and, when hutch is built, real containers must get their limits and device filter (seen from
# inside) and lose their cgroup on delete. One PASS/FAIL/SKIP line per check; exit 1 on a FAIL.
# An exec costs ~30 ms under TCG, so bash builtins do the reading and matching.
set -u

BUILD=${1:?usage: guest-v2.sh BUILD_DIR}
CG=/sys/fs/cgroup
HUTCH=$BUILD/runtime/hutch
WORK=/tmp/hutch-vm
STATE=/run/hutch-vm
MEM_LIMIT=33554432 # 32M
PIDS_LIMIT=16
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

check_pure_v2() {
	local mnt type v2='' v1=() ctrls sub own c kernel
	read_into kernel /proc/sys/kernel/osrelease
	while read -r _ mnt type _; do
		case $type in
		cgroup) v1+=("$mnt") ;;
		cgroup2) [ "$mnt" = $CG ] && v2=y ;;
		esac
	done </proc/mounts
	read_into ctrls $CG/cgroup.controllers
	read_into sub $CG/cgroup.subtree_control
	read_into own /proc/self/cgroup
	echo "# kernel $kernel; controllers: $ctrls"
	check "cgroup2 is mounted at $CG" [ -n "$v2" ]
	check "no cgroup v1 hierarchy is mounted (${v1[*]:-none})" [ ${#v1[@]} = 0 ]
	for c in cpuset cpu io memory pids; do
		check "controller $c is available" in_list "$c" "$ctrls"
	done
	check "the root's subtree_control enables every controller ($sub)" [ "$sub" = "$ctrls" ]
	check "the lane runs in the root cgroup ($own)" [ "$own" = 0::/ ]
}

# The cgroups unit test as root on pure v2: its TAP goes through indented, as it comes.
run_unit_test() {
	local t=$BUILD/tests/unit/test-cg line rc=none plan='' nok=0 nnot=0 nskipped=0
	if [ ! -x "$t" ]; then
		fail "test-cg: $t is not built (ninja -C $BUILD tests/unit/test-cg)"
		return
	fi
	while IFS= read -r line; do
		case $line in
		"#rc "*) rc=${line#\#rc } && continue ;;
		"not ok"*) nnot=$((nnot + 1)) ;;
		"ok "*"# SKIP"* | "ok "*"# skip"*) nskipped=$((nskipped + 1)) ;;
		"ok "*) nok=$((nok + 1)) ;;
		1..*) plan=${line#1..} ;;
		esac
		echo "    $line"
	done < <(cd "$WORK" && timeout -k 5 60 "$t" 2>&1; echo "#rc $?")
	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		fail "test-cg as root: timed out after 60 s"
	elif [ "$rc" != 0 ] || [ "$nnot" != 0 ]; then
		fail "test-cg as root: exit status $rc, $nnot of $((nok + nnot + nskipped)) failed"
	elif [ -z "$plan" ]; then
		fail "test-cg as root: no TAP plan line (did it crash?)"
	elif [ "$nok" = 0 ]; then
		fail "test-cg as root: no test ran ($nskipped skipped)"
	else
		pass "test-cg as root: $nok passed, $nskipped skipped"
	fi
}

# What runs in the containers (busybox sh): KEY=VALUE lines for the checks below. 4:64 is
# ttyS0, present in the guest and not in the default device list: the device filter must refuse
# the mknod or the open (the spec grants CAP_MKNOD, so a refusal is the filter's).
# shellcheck disable=SC2016 # expanded in the container
PROBE='v=; read -r v </sys/fs/cgroup/memory.max; echo "MEM=$v"
v=; read -r v </sys/fs/cgroup/pids.max; echo "PIDS=$v"
if echo x >/dev/null && cat /dev/null; then echo NULL=ok; else echo NULL=failed; fi
if e=$(mknod /dev/hutch-probe c 4 64 2>&1); then
	e=$( (: </dev/hutch-probe) 2>&1) && e=allowed
	echo "OPEN=$e"
else
	echo "MKNOD=$e"
fi
exit 0'

# A bundle over the busybox rootfs; $1 = bundle dir, $2 = linux.cgroupsPath.
write_config() {
	mkdir -p "$1" &&
		jq --arg probe "$PROBE" --arg root "$WORK/rootfs" --arg cg "$2" \
			--argjson mem $MEM_LIMIT --argjson pids $PIDS_LIMIT '
		.process.terminal = false
		| .process.args = ["/bin/sh", "-c", $probe]
		| if .process.capabilities then .process.capabilities |= with_entries(
			if .key == "bounding" or .key == "effective" or .key == "permitted"
			then .value += ["CAP_MKNOD"] else . end) else . end
		| .root.path = $root
		| .linux.cgroupsPath = $cg
		| .linux.resources = (.linux.resources // {}) + {memory: {limit: $mem},
			pids: {limit: $pids}, devices: [{allow: false, access: "rwm"}]}
		| .linux.namespaces |= if any(.[]?; .type == "cgroup") then .
			else (. // []) + [{type: "cgroup"}] end' \
			"$WORK/spec.json" >"$1/config.json"
}

# The rootfs (busybox and a few applet links) and hutch's default spec, in $WORK.
make_rootfs() {
	local a
	mkdir -p "$WORK/rootfs/bin" "$WORK/rootfs/dev" "$WORK/rootfs/proc" "$WORK/rootfs/sys" &&
		cp /bin/busybox "$WORK/rootfs/bin/" || return 1
	for a in sh cat mknod; do
		ln -s busybox "$WORK/rootfs/bin/$a" || return 1
	done
}

# `hutch run` in the foreground: limits and devices as the container sees them.
check_run() {
	local out rc=0 line mem='' pids='' null='' dev=''
	out=$(cd "$WORK/run" && timeout -k 5 30 "$HUTCH" --root $STATE run --bundle "$WORK/run" \
		hutch-vm-run 2>&1) || rc=$?
	while IFS= read -r line; do
		echo "    [run] $line"
		case $line in
		MEM=*) mem=${line#MEM=} ;;
		PIDS=*) pids=${line#PIDS=} ;;
		NULL=*) null=${line#NULL=} ;;
		MKNOD=* | OPEN=*) dev=$line ;;
		esac
	done <<<"$out"
	check "hutch run of a busybox bundle exits 0 (status $rc)" [ $rc = 0 ]
	check "inside: memory.max reads $MEM_LIMIT (${mem:-nothing})" [ "$mem" = $MEM_LIMIT ]
	check "inside: pids.max reads $PIDS_LIMIT (${pids:-nothing})" [ "$pids" = $PIDS_LIMIT ]
	check "inside: /dev/null reads and writes under a deny-all rule (${null:-nothing})" \
		[ "$null" = ok ]
	case $dev in
	*"not permitted"*) pass "inside: a mknod'd unlisted device (4:64) is refused: $dev" ;;
	*) fail "inside: a mknod'd unlisted device (4:64) is refused: ${dev:-no probe output}" ;;
	esac
	check "no cgroup is left once run returns" [ ! -e $CG/hutch-vm-run ]
}

# hutch create, then delete: the cgroup is there with its limits, then gone. (check_no_leaks
# catches what a failed create leaves.)
check_delete() {
	local rc=0 mem='' pids='' line
	timeout -k 5 30 "$HUTCH" --root $STATE create --bundle "$WORK/create" hutch-vm-create \
		</dev/null >"$WORK/create.log" 2>&1 || rc=$?
	while IFS= read -r line; do
		echo "    [create] $line"
	done <"$WORK/create.log"
	if [ $rc != 0 ]; then
		fail "hutch create exits 0 (status $rc)"
		return
	fi
	pass "hutch create exits 0"
	check "create makes the cgroup $CG/hutch-vm-create" [ -d $CG/hutch-vm-create ]
	read_into mem $CG/hutch-vm-create/memory.max
	read_into pids $CG/hutch-vm-create/pids.max
	check "outside: memory.max is $MEM_LIMIT (${mem:-unreadable})" [ "$mem" = $MEM_LIMIT ]
	check "outside: pids.max is $PIDS_LIMIT (${pids:-unreadable})" [ "$pids" = $PIDS_LIMIT ]
	rc=0
	timeout -k 5 30 "$HUTCH" --root $STATE delete hutch-vm-create || rc=$?
	check "hutch delete exits 0 (status $rc)" [ $rc = 0 ]
	check "delete removes the cgroup" [ ! -e $CG/hutch-vm-create ]
	[ ! -e $CG/hutch-vm-create ] ||
		timeout -k 5 30 "$HUTCH" --root $STATE delete --force hutch-vm-create
}

check_no_leaks() {
	local left=()
	shopt -s nullglob
	left=("$CG"/hutch-vm-* "$STATE"/*)
	shopt -u nullglob
	check "nothing left behind (${left[*]:-no cgroup, no state})" [ ${#left[@]} = 0 ]
}

check_containers() {
	if [ ! -x "$HUTCH" ]; then
		skip "containers: $HUTCH is not built yet"
		return
	fi
	if [ ! -x /bin/busybox ] || ! command -v jq >/dev/null; then
		fail "containers: need /bin/busybox and jq (tests/vm/setup.sh installs them)"
		return
	fi
	make_rootfs || {
		fail "containers: cannot make the busybox rootfs"
		return
	}
	mkdir -p "$WORK/spec"
	if ! (cd "$WORK/spec" && "$HUTCH" spec) || ! mv "$WORK/spec/config.json" "$WORK/spec.json"; then
		fail "containers: hutch spec wrote no config.json"
		return
	fi
	if ! write_config "$WORK/run" /hutch-vm-run || ! write_config "$WORK/create" /hutch-vm-create
	then
		fail "containers: cannot adapt hutch's default spec (jq)"
		return
	fi
	check_run
	check_delete
	check_no_leaks
}

# Host mode on this kernel's older Landlock ABI (6.1: ABI 2): the ruleset falls back to what the
# kernel has, the report says which, and the mount view still blocks writes.
check_landlock() {
	local out abi kabi
	if [ ! -x "$HUTCH" ] || ! command -v jq >/dev/null; then
		skip "landlock: needs $HUTCH and jq"
		return
	fi
	out=$(timeout -k 5 30 "$HUTCH" sandbox --isolation landlock --report "$WORK/ll.json" -- \
		sh -c 'touch /etc/hutch-vm-ll 2>/dev/null || echo held' 2>&1)
	check "landlock: host mode blocks a write to /etc ($out)" [ "$out" = held ]
	abi=$(jq -r '.isolation.landlock_rights.abi // "none"' "$WORK/ll.json" 2>/dev/null)
	kabi=$(jq -r '.isolation.landlock_rights.kernel_abi // "none"' "$WORK/ll.json" 2>/dev/null)
	check "landlock: the ruleset uses the kernel's ABI ($abi, kernel $kabi)" [ "$abi" = "$kabi" ]
	check "landlock: no right newer than the ABI is handled" jq -e '.isolation.landlock_rights |
		.abi >= 3 or (.handled_fs | index("truncate") | not)' "$WORK/ll.json"
	rm -f /etc/hutch-vm-ll
}

main() {
	mkdir -p "$WORK" || exit 1
	check_pure_v2
	run_unit_test
	check_containers
	check_landlock
	echo "# guest-v2: $npass passed, $nfail failed, $nskip skipped"
	[ $nfail = 0 ]
}

main
