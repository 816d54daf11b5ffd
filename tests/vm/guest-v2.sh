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
s=; while read -r v; do s="$s$v|"; done </proc/self/cgroup; echo "CGSELF=$s"
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
	for a in sh cat dd mknod rm sleep true; do
		ln -s busybox "$WORK/rootfs/bin/$a" || return 1
	done
}

# `hutch run` in the foreground: limits and devices as the container sees them.
check_run() {
	local out rc=0 line mem='' pids='' null='' dev='' cgself=''
	out=$(cd "$WORK/run" && timeout -k 5 30 "$HUTCH" --root $STATE run --bundle "$WORK/run" \
		hutch-vm-run 2>&1) || rc=$?
	while IFS= read -r line; do
		echo "    [run] $line"
		case $line in
		MEM=*) mem=${line#MEM=} ;;
		PIDS=*) pids=${line#PIDS=} ;;
		NULL=*) null=${line#NULL=} ;;
		CGSELF=*) cgself=${line#CGSELF=} ;;
		MKNOD=* | OPEN=*) dev=$line ;;
		esac
	done <<<"$out"
	check "hutch run of a busybox bundle exits 0 (status $rc)" [ $rc = 0 ]
	check "inside: memory.max reads $MEM_LIMIT (${mem:-nothing})" [ "$mem" = $MEM_LIMIT ]
	check "inside: pids.max reads $PIDS_LIMIT (${pids:-nothing})" [ "$pids" = $PIDS_LIMIT ]
	check "inside: /proc/self/cgroup is exactly 0::/ (${cgself:-nothing})" [ "$cgself" = "0::/|" ]
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

# A bundle in $1 running $2 (sh -c) with $3 (jq) merged into linux.resources.
write_bundle() {
	mkdir -p "$1" &&
		jq --arg cmd "$2" --arg root "$WORK/rootfs" --arg cg "/${1##*/}" --argjson res "$3" '
		.process.terminal = false | .process.args = ["/bin/sh", "-c", $cmd]
		| .root.path = $root | .linux.cgroupsPath = $cg
		| .linux.resources = (.linux.resources // {}) + $res
		| .linux.namespaces |= if any(.[]?; .type == "cgroup") then .
			else (. // []) + [{type: "cgroup"}] end' "$WORK/spec.json" >"$1/config.json"
}

# hutch run of bundle $1 in the foreground: sets out and rc.
run_bundle() {
	rc=0
	out=$(cd "$1" && timeout -k 5 30 "$HUTCH" --root $STATE run --bundle "$1" "${1##*/}" \
		</dev/null 2>&1) || rc=$?
}

# True when the last run_bundle failed with a message naming $1.
failed_naming() { [ "$rc" != 0 ] && [[ $out == *"$1"* ]]; }

# blockIO throttles on the scratch disk become one io.max line, seen from inside; per-device
# weights need BFQ or iocost, which the guest has not enabled: a clear error, not silence.
check_blkio() {
	local dev='' d out rc want
	for d in /sys/block/vd*/dev; do
		[ -e "$d" ] && read_into dev "$d" && break
	done
	if [ -z "$dev" ]; then
		fail "blockIO: no virtio-blk scratch disk in the guest (run.sh passes --disk)"
		return
	fi
	want="$dev rbps=1048576 wbps=max riops=max wiops=100"
	# shellcheck disable=SC2016 # expanded in the container
	write_bundle "$WORK/hutch-vm-io" 'v=; read -r v </sys/fs/cgroup/io.max; echo "IO=$v"
		v=; read -r v </sys/fs/cgroup/hugetlb.2MB.max; echo "HUGE=$v"' \
		"{\"blockIO\": {\"throttleReadBpsDevice\": [{\"major\": ${dev%:*}, \"minor\": ${dev#*:},
		\"rate\": 1048576}], \"throttleWriteIOPSDevice\": [{\"major\": ${dev%:*},
		\"minor\": ${dev#*:}, \"rate\": 100}]},
		\"hugepageLimits\": [{\"pageSize\": \"2MB\", \"limit\": 4194304}]}" || return
	run_bundle "$WORK/hutch-vm-io"
	check "blockIO throttles on the scratch disk ($dev): inside io.max reads '$want' (${out%%$'\n'*}, status $rc)" \
		[ "${out%%$'\n'*}" = "IO=$want" ]
	check "hugepageLimits: inside hugetlb.2MB.max reads 4194304 (${out#*$'\n'})" \
		[ "${out#*$'\n'}" = HUGE=4194304 ]
	write_bundle "$WORK/hutch-vm-iow" true "{\"blockIO\": {\"weightDevice\": [{
		\"major\": ${dev%:*}, \"minor\": ${dev#*:}, \"weight\": 500}]}}" || return
	run_bundle "$WORK/hutch-vm-iow"
	check "blockIO.weightDevice without BFQ/iocost: a clear error (status $rc: $out)" \
		failed_naming blockIO.weightDevice
	write_bundle "$WORK/hutch-vm-net" true '{"network": {"classID": 1048577}}' || return
	run_bundle "$WORK/hutch-vm-net"
	check "network.classID on v2: a clear error (status $rc: $out)" \
		failed_naming network.classID
}

# delete --force of a running container with a sleeping child: cgroup.kill takes both, and
# nothing is left, neither processes nor the cgroup.
check_force_delete() {
	local b=$WORK/hutch-vm-kill pids=() p st alive=() rc=0
	write_bundle "$b" 'sleep 1000 & exec sleep 1000' '{}' || return
	timeout -k 5 30 "$HUTCH" --root $STATE create --bundle "$b" hutch-vm-kill </dev/null \
		>"$WORK/kill.log" 2>&1 && timeout -k 5 30 "$HUTCH" --root $STATE start hutch-vm-kill ||
		rc=$?
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		mapfile -t pids <$CG/hutch-vm-kill/cgroup.procs 2>/dev/null
		[ ${#pids[@]} -ge 2 ] && break
		sleep 0.1
	done
	[ ${#pids[@]} -ge 2 ] || rc="$rc, no child"
	check "a container with a sleeping child runs (status $rc, pids ${pids[*]:-none})" \
		[ "$rc" = 0 ]
	rc=0
	timeout -k 5 30 "$HUTCH" --root $STATE delete --force hutch-vm-kill || rc=$?
	for p in ${pids[@]+"${pids[@]}"}; do
		st=
		[ -r "/proc/$p/stat" ] && read -r _ _ st _ <"/proc/$p/stat"
		[ -n "$st" ] && [ "$st" != Z ] && alive+=("$p:$st")
	done
	[ ! -e $CG/hutch-vm-kill ] || alive+=("cgroup")
	[ $rc = 0 ] || alive+=("status $rc")
	check "delete --force (cgroup.kill) leaves nothing (${alive[*]:-no process, no cgroup})" \
		[ ${#alive[@]} = 0 ]
}

# /bin/true under a 192 KiB memory limit: hutch's setup must not be charged to the container
# (under 1 MiB the init joins its cgroup just before execve instead of being born into it;
# the exec trampoline's own exec is charged, ~36 KiB).
# Where that fails, the smallest limit that works is found (doubling, then halving the gap to
# one 4 KiB page) and reported instead of failing the lane.
mem_try() {
	write_bundle "$WORK/hutch-vm-mem" 'exec true' "{\"memory\": {\"limit\": $1}}" &&
		run_bundle "$WORK/hutch-vm-mem" && [ "$rc" = 0 ]
}
check_tiny_memory() {
	local lo=196608 hi out rc
	if mem_try $lo; then
		hi=$lo lo=0 # the smallest that works, for the record
		while [ $((hi - lo)) -gt 4096 ]; do
			local mid=$(((lo + hi) / 2 / 4096 * 4096))
			if mem_try $mid; then hi=$mid; else lo=$mid; fi
		done
		pass "hutch run of /bin/true under a 192 KiB memory limit (the smallest: $((hi / 1024)) KiB)"
		return
	fi
	echo "    [192k] status $rc: $out"
	hi=$((lo * 2))
	while ! mem_try $hi; do
		lo=$hi hi=$((hi * 2))
		[ $hi -gt $((64 << 20)) ] && { fail "no memory limit up to 64 MiB starts /bin/true"; return; }
	done
	while [ $((hi - lo)) -gt 4096 ]; do
		local mid=$(((lo + hi) / 2 / 4096 * 4096))
		if mem_try $mid; then hi=$mid; else lo=$mid; fi
	done
	skip "192 KiB memory limit fails on v2; the smallest that starts /bin/true: $((hi / 1024)) KiB"
}

# hutch VERB ARGS... against the lane's state dir, with a timeout; sets out and rc. Output
# goes through a file: a container started here inherits it and would hold a pipe open.
h() {
	rc=0
	timeout -k 5 30 "$HUTCH" --root $STATE "$@" </dev/null >"$WORK/h.out" 2>&1 || rc=$?
	out=$(cat "$WORK/h.out")
}

# cgroup file $2 of container cgroup $1 (the first line matching key $3 when given).
cgval() {
	if [ -n "${3:-}" ]; then
		awk -v k="$3" '$1 == k { print $2; exit }' "$CG/$1/$2" 2>/dev/null
	else
		cat "$CG/$1/$2" 2>/dev/null
	fi
}

# The pid of container $1's init (0 when there is none).
init_pid() { timeout -k 5 30 "$HUTCH" --root $STATE state "$1" 2>/dev/null | jq -r '.pid // 0'; }

# The v1 lane's verb tests, on v2: cpu.max throttles, pause freezes (a counter stops), ps,
# update changes live limits, pids.max stops forks, kill --all and delete --force of a
# paused container leave nothing. The root is read-only: the counter (a file that grows by a
# byte a round, so a freeze mid-write still reads alike twice) lives in the container's
# /dev/shm, read from outside through /proc/PID/root.
check_verbs() {
	local b=$WORK/hutch-vm-verbs id=hutch-vm-verbs n1 n2 n3 pids pid good left=
	write_bundle "$b" 'while :; do echo >>/dev/shm/count; done' \
		'{"cpu": {"quota": 10000, "period": 100000}, "pids": {"limit": 32}}' || return
	h create --bundle "$b" $id && h start $id
	check "a busy container starts (status $rc: $out)" [ $rc = 0 ]
	[ $rc = 0 ] || return
	pid=$(init_pid $id)
	sleep 1.5
	n1=$(cgval $id cpu.stat nr_throttled)
	check "cpu.max 10000 100000 throttles a busy loop (nr_throttled ${n1:-none})" \
		[ "${n1:-0}" -gt 0 ]

	h pause $id
	n1=$(wc -c </proc/$pid/root/dev/shm/count 2>/dev/null)
	sleep 0.5
	n2=$(wc -c </proc/$pid/root/dev/shm/count 2>/dev/null)
	good=no
	[ $rc = 0 ] && [ "$(cgval $id cgroup.events frozen)" = 1 ] && [ -n "$n1" ] &&
		[ "$n1" = "$n2" ] && good=yes
	check "pause freezes it: frozen $(cgval $id cgroup.events frozen), the count stays ($n1, $n2)" \
		[ $good = yes ]
	h ps --format json $id
	pids=$out
	check "ps of the paused container lists its init ($pids)" \
		jq -e --argjson p "$pid" '. == [$p]' <<<"$pids" >/dev/null
	h resume $id
	sleep 0.5
	n3=$(wc -c </proc/$pid/root/dev/shm/count 2>/dev/null)
	check "resume thaws it: the count goes on ($n2 -> $n3)" [ "${n3:-0}" -gt "${n2:-0}" ]

	h update --memory 67108864 --pids-limit 3 $id
	good=no
	[ $rc = 0 ] && [ "$(cgval $id memory.max)" = 67108864 ] && [ "$(cgval $id pids.max)" = 3 ] &&
		good=yes
	check "update sets memory.max $(cgval $id memory.max), pids.max $(cgval $id pids.max) ($out)" \
		[ $good = yes ]
	h exec $id sh -c 'for i in 1 2 3 4 5 6; do sleep 30 >/dev/null 2>&1 & done 2>/dev/null; :'
	n1=$(cgval $id pids.events max)
	check "pids.max 3 stops forks: pids.events max ${n1:-none}, pids.current \
$(cgval $id pids.current)" [ "${n1:-0}" -gt 0 ]

	pids=$(cat $CG/$id/cgroup.procs 2>/dev/null)
	h pause $id
	h kill --all $id KILL
	check "kill --all of the paused container (status $rc: $out)" [ $rc = 0 ]
	h delete --force $id
	for p in $pids; do
		[ -d /proc/$p ] && left="$left $p"
	done
	[ ! -e $CG/$id ] || left="$left cgroup"
	[ $rc = 0 ] || left="$left status $rc"
	check "delete --force of the paused container: nothing left (${left:-no process, no cgroup})" \
		[ -z "$left" ]
}

# An OOM kill under memory.max: a child fills the container's /dev/shm past the limit and is
# killed, and `events` reports it as runc does.
check_oom() {
	local b=$WORK/hutch-vm-oom id=hutch-vm-oom ev pid st
	write_bundle "$b" 'while [ ! -e /dev/shm/go ]; do sleep 0.1; done
		dd if=/dev/zero of=/dev/shm/x bs=1M count=48 2>/dev/null; s=$?
		rm -f /dev/shm/x; echo "hog $s" >/dev/shm/status; sleep 100' \
		'{"memory": {"limit": 16777216}}' || return
	h run -d --bundle "$b" $id
	check "a container under a 16 MiB limit starts (status $rc: $out)" [ $rc = 0 ]
	[ $rc = 0 ] || return
	pid=$(init_pid $id)
	timeout -k 5 60 "$HUTCH" --root $STATE events --interval 200ms $id >"$WORK/oom.events" 2>&1 &
	ev=$!
	sleep 0.5
	touch /proc/$pid/root/dev/shm/go
	for _ in $(seq 100); do
		grep -q '"type":"oom"' "$WORK/oom.events" && [ -e /proc/$pid/root/dev/shm/status ] &&
			break
		sleep 0.2
	done
	st=$(cat /proc/$pid/root/dev/shm/status 2>/dev/null)
	check "the hog is OOM-killed (${st:-no status}, oom_kill $(cgval $id memory.events oom_kill))" \
		[ "$st" = "hog 137" ]
	check "events reports {\"type\":\"oom\",\"id\":\"$id\"}" \
		grep -qx "{\"type\":\"oom\",\"id\":\"$id\"}" "$WORK/oom.events"
	h delete --force $id
	wait $ev 2>/dev/null
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
	check_blkio
	check_force_delete
	check_verbs
	check_oom
	check_tiny_memory
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

# --deny-host-loopback on pure v2: the connect filter on the sandbox's own cgroup (the only
# hierarchy) refuses the guest's 127.0.0.1 and ::1 (EPERM); without it they answer.
check_deny_loopback() {
	local out pid a
	if [ ! -x "$HUTCH" ] || [ ! -x /bin/busybox ] || [ ! -d "$WORK/rootfs/bin" ]; then
		skip "deny-host-loopback: needs $HUTCH, /bin/busybox and the rootfs"
		return
	fi
	for a in wget nc grep; do
		[ -e "$WORK/rootfs/bin/$a" ] || ln -s busybox "$WORK/rootfs/bin/$a"
	done
	/bin/busybox ip link set lo up
	mkdir -p "$WORK/www" && echo ok >"$WORK/www/index.html"
	/bin/busybox httpd -f -p '[::]:8099' -h "$WORK/www" &
	pid=$!
	sleep 0.3
	# shellcheck disable=SC2016 # expanded in the sandbox
	local cmd='for u in http://127.0.0.1:8099/ "http://[::1]:8099/"; do
		wget -q -O - "$u" 2>/dev/null || echo REFUSED; done; nc -w 1 127.0.0.1 8099 </dev/null; true'
	out=$(timeout -k 5 30 "$HUTCH" sandbox --image "$WORK/rootfs" --network host -- sh -c "$cmd" 2>&1)
	check "deny-host-loopback: without it the loopback answers ($out)" \
		[ "$(grep -c '^ok' <<<"$out")" = 2 ]
	out=$(timeout -k 5 30 "$HUTCH" sandbox --image "$WORK/rootfs" --network host \
		--deny-host-loopback -- sh -c "$cmd" 2>&1)
	check "deny-host-loopback: 127.0.0.1 and ::1 are refused ($out)" \
		[ "$(grep -c '^REFUSED' <<<"$out")" = 2 ]
	check "deny-host-loopback: by EPERM" grep -q "Operation not permitted" <<<"$out"
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
}

# Rootless on pure v2 (docs/rootless.md): uid 4242, to whom root delegates a cgroup as an admin
# would (chowns it and its cgroup.procs, cgroup.subtree_control and cgroup.threads), gets the
# sandbox's limits enforced: memory (an OOM kill), pids and the cpu quota, read from inside
# and felt. hutch doctor agrees; uid 4243, delegated nothing, is refused, as doctor says.
RL_CG=$CG/hutch-vm-rl
as_uid() { # as_uid UID CGROUP CMD...: CMD as UID, moved into CGROUP first (as root)
	local uid=$1 cg=$2
	shift 2
	(
		[ -z "$cg" ] || echo $BASHPID >"$cg/cgroup.procs" || exit 99
		exec setpriv --reuid "$uid" --regid "$uid" --clear-groups env -i PATH=/usr/bin:/bin \
			HOME=/ XDG_RUNTIME_DIR="$WORK/xdg-$uid" timeout -k 5 60 "$@"
	) </dev/null
}
check_rootless() {
	local f out rc probe
	if [ ! -x "$HUTCH" ] || ! command -v setpriv >/dev/null || [ ! -d "$WORK/rootfs" ]; then
		skip "rootless: needs $HUTCH, setpriv and the busybox rootfs"
		return
	fi
	mkdir -p "$RL_CG/shell" "$WORK/xdg-4242" "$WORK/xdg-4243" && chmod 755 "$WORK" &&
		chown 4242:4242 "$WORK/xdg-4242" && chown 4243:4243 "$WORK/xdg-4243" || return
	echo "+memory +pids +cpu" >"$RL_CG/cgroup.subtree_control"
	for f in "" /cgroup.procs /cgroup.subtree_control /cgroup.threads /shell \
		/shell/cgroup.procs /shell/cgroup.subtree_control /shell/cgroup.threads; do
		chown 4242:4242 "$RL_CG$f"
	done
	rc=0
	out=$(as_uid 4242 "$RL_CG/shell" "$HUTCH" doctor 2>&1) || rc=$?
	check "rootless: doctor says a delegated uid's sandbox runs (status $rc)" [ $rc = 0 ]
	[[ $out == *"ok    cgroups: cgroup v2; /hutch-vm-rl is delegated"* ]] ||
		echo "$out" | sed 's/^/    [doctor] /'
	# shellcheck disable=SC2016 # expanded in the sandbox
	probe='read -r m </sys/fs/cgroup/memory.max; read -r p </sys/fs/cgroup/pids.max
		read -r c </sys/fs/cgroup/cpu.max; echo "limits $m $p $c"
		i=0; while [ $i -lt 30000 ]; do i=$((i + 1)); done
		while read -r k v; do [ "$k" = nr_throttled ] && echo "throttled $v"; done \
			</sys/fs/cgroup/cpu.stat
		sh -c '"'"'i=0; while [ $i -lt 12 ]; do sleep 3 & i=$((i + 1)); done'"'"' 2>/dev/null
		read -r e </sys/fs/cgroup/pids.events; echo "pids.events $e"'
	rc=0
	out=$(as_uid 4242 "$RL_CG/shell" "$HUTCH" sandbox --image "$WORK/rootfs" --memory 32m \
		--pids 8 --cpus 0.5 -- sh -c "$probe" 2>&1) || rc=$?
	echo "$out" | sed 's/^/    [rootless] /'
	check "rootless: the sandbox runs in the delegated cgroup (status $rc)" [ $rc = 0 ]
	check "rootless: memory.max, pids.max and cpu.max inside are the flags'" \
		grep -qx "limits 33554432 8 50000 100000" <<<"$out"
	[[ $out =~ throttled\ ([0-9]+) ]] && [ "${BASH_REMATCH[1]}" -gt 0 ]
	check "rootless: --cpus 0.5 throttles a busy loop (nr_throttled ${BASH_REMATCH[1]:-?})" \
		[ $? = 0 ]
	# Builtins only after the storm: the sleeps hold every pid a fork would take.
	[[ $out =~ pids.events\ max\ ([0-9]+) ]] && [ "${BASH_REMATCH[1]}" -gt 0 ]
	check "rootless: --pids 8 stops the forks (pids.events max ${BASH_REMATCH[1]:-?})" [ $? = 0 ]
	rc=0
	out=$(as_uid 4242 "$RL_CG/shell" "$HUTCH" sandbox --image "$WORK/rootfs" --memory 16m \
		--report "$WORK/xdg-4242/oom.json" -- dd if=/dev/zero of=/tmp/x bs=1M count=48 2>&1) ||
		rc=$?
	check "rootless: a 48 MiB write to /tmp under --memory 16m is OOM-killed (status $rc)" \
		[ "$(jq -r .oom_killed "$WORK/xdg-4242/oom.json" 2>/dev/null)" = true ]
	shopt -s nullglob
	local left=("$RL_CG"/hutch-*)
	shopt -u nullglob
	check "rootless: no sandbox cgroup is left (${left[*]:-none})" [ ${#left[@]} = 0 ]
	rc=0
	out=$(as_uid 4243 "" "$HUTCH" doctor 2>&1) || rc=$?
	check "rootless: doctor says an undelegated uid's sandbox is refused (status $rc)" \
		[ $rc = 1 ]
	rc=0
	out=$(as_uid 4243 "" "$HUTCH" sandbox --image "$WORK/rootfs" -- true 2>&1) || rc=$?
	check_all "rootless: and it is: 125, naming the fix ($out)" \
		'[ $rc = 125 ]' '[[ $out == *"systemd-run --user --scope"* ]]'
	echo $$ >"$CG/cgroup.procs" # the lane back in the root cgroup, then the delegation goes
	rmdir "$RL_CG/shell" "$RL_CG" 2>/dev/null
}

# The sandbox report on pure v2, where memory.events counts OOM kills up the tree: a child's OOM
# kill that the command outlives is counted (oom_kills) natively and under runc (whose own
# cgroup, where the kill happened, is gone by then), and is no failure; the command's own OOM
# kill is one. A fork held by --pids is named (native: pids.events of the sandbox's cgroup).
check_report_limits() {
	local rt out r=$WORK/r.json
	if [ ! -x "$HUTCH" ] || [ ! -d "$WORK/rootfs/bin" ]; then
		skip "report limits: needs $HUTCH and the busybox rootfs"
		return
	fi
	ln -sf busybox "$WORK/rootfs/bin/tail"
	for rt in native runc; do
		if [ $rt = runc ] && ! command -v runc >/dev/null; then
			skip "report limits: runc not installed"
			continue
		fi
		out=$(timeout -k 5 60 "$HUTCH" sandbox --runtime $rt --image "$WORK/rootfs" \
			--memory 32m --report "$r" -- sh -c 'tail /dev/zero; echo "child $?"' 2>&1)
		check "report ($rt): the command outlives its child's OOM kill (${out##*$'\n'})" \
			[ "${out##*child 137*}" = "" ]
		check "report ($rt): failure null, exit 0, the kill counted, memory hit" jq -e \
			'.failure == null and .exit_code == 0 and .oom_kills >= 1 and .limits_hit == ["memory"]' \
			"$r"
		timeout -k 5 60 "$HUTCH" sandbox --runtime $rt --image "$WORK/rootfs" --memory 32m \
			--report "$r" -- tail /dev/zero >/dev/null 2>&1
		check "report ($rt): the command's own OOM kill is failure oom" \
			jq -e '.failure == "oom" and .exit_code == 137 and .oom_kills >= 1' "$r"
	done
	timeout -k 5 60 "$HUTCH" sandbox --image "$WORK/rootfs" --pids $PIDS_LIMIT --timeout 1 \
		--grace 1 --report "$r" -- sh -c 'while :; do sleep 30 & done' >/dev/null 2>&1
	check "report: a fork refused by --pids names pids" \
		jq -e '(.limits_hit | index("pids")) and .oom_kills == 0' "$r"
}

main() {
	mkdir -p "$WORK" || exit 1
	check_pure_v2
	run_unit_test
	check_containers
	check_landlock
	check_deny_loopback
	check_rootless
	check_report_limits
	echo "# guest-v2: $npass passed, $nfail failed, $nskip skipped"
	[ $nfail = 0 ]
}

main
