#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# run-in-vm.sh [--mem 1G] [--smp N] [--timeout S] [--disk SIZE] [--systemd [--hybrid]] [-e VAR=VAL]... -- CMD ARGS...
# Runs CMD as root in a throw-away qemu microvm: Debian's stock 6.1 kernel, pure cgroup v2 with
# every controller enabled, the host's / read-only under a tmpfs overlay, and $PWD shared
# read-write at the same path (init-stage1.sh, init-stage2.sh). --disk gives the guest an empty
# virtio-blk scratch disk of SIZE (a sparse raw file, /dev/vda there). --systemd boots systemd
# as PID 1 instead, with the D-Bus system bus, and runs CMD in a unit (init-systemd.sh,
# systemd/hutch-vm-cmd.service); the contract is the same. --hybrid has that systemd mount the
# cgroup v1 hierarchies, with cgroup2 beside them at /sys/fs/cgroup/unified. CMD's stdout and stderr come back
# on ours; its stdin is /dev/null. Exit status: CMD's, or 125 when the VM failed (its console log
# is printed then). Environment: HUTCH_VM_CACHE (setup.sh's cache, default /var/cache/hutch-vm),
# HUTCH_VM_APPEND (more kernel arguments), HUTCH_VM_KEEP=1 (keep the control dir and console log).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
CACHE=${HUTCH_VM_CACHE:-/var/cache/hutch-vm}
MEM=1G SMP=2 TIMEOUT=0 DISK='' SYSTEMD='' UNIFIED=1 ENVS=() CMD=() CTL='' QPID='' R1='' R2=''

die() {
	echo "run-in-vm: $*" >&2
	exit 125
}
usage() { die "usage: run-in-vm.sh [--mem 1G] [--smp N] [--timeout S] [--disk SIZE] [--systemd [--hybrid]] [-e VAR=VAL]... -- CMD ARGS..."; }

parse_args() {
	while [ $# -gt 0 ]; do
		case $1 in
		--mem | --smp | --timeout | --disk | -e) [ $# -ge 2 ] || usage ;;&
		--mem) MEM=$2 ;;
		--smp) SMP=$2 ;;
		--timeout) TIMEOUT=$2 ;;
		--disk) DISK=$2 ;;
		--systemd) SYSTEMD=1 && shift && continue ;;
		--hybrid) UNIFIED=0 && shift && continue ;;
		-e) [[ $2 == [A-Za-z_]*=* ]] || die "-e wants VAR=VALUE, not '$2'"
		    ENVS+=("$2") ;;
		--) shift; break ;;
		*) usage ;;
		esac
		shift 2
	done
	[ $# -gt 0 ] || usage
	CMD=("$@")
}

# The cache setup.sh made; it is (re)made when missing or when the stage scripts changed.
load_cache() {
	local sum
	sum=$("$here/setup.sh" --stages-sum)
	if ! grep -qsx "HUTCH_VM_STAGES_SUM=$sum" "$CACHE/vm.env"; then
		"$here/setup.sh" >&2 || die "setup.sh failed"
	fi
	# shellcheck source=/dev/null
	. "$CACHE/vm.env"
	if [ ! -s "$HUTCH_VM_KERNEL" ] || [ ! -s "$HUTCH_VM_INITRD" ]; then
		die "cache $CACHE is incomplete: remove it and run tests/vm/setup.sh"
	fi
}

# Under TCG the guest reads the host's TSC, but calibrating it against the emulated PIT is
# flaky (about one boot in ten hangs) and the TSC sync check fails: tell the kernel the rate.
# lpj (loops per jiffy at Debian's HZ=250) spares the second CPU its 150 ms delay calibration.
tsc_args() {
	local khz
	khz=$(dmesg 2>/dev/null | sed -n 's/.*tsc: Detected \([0-9]*\)\.\([0-9]*\) MHz.*/\1\2/p' |
		head -1)
	[ -n "$khz" ] || khz=$(awk -F: '/^cpu MHz/ { printf "%d", $2 * 1000; exit }' /proc/cpuinfo)
	[ -n "$khz" ] || die "cannot tell the host's TSC rate"
	echo "tsc_early_khz=$khz tsc=reliable lpj=$((khz * 1000 / 250))"
}

# The guest runs $CTL/cmd with bash: the environment, then exec of the command.
write_cmd() {
	local e
	{
		printf 'export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'
		printf ' HOME=/root LANG=C.UTF-8 TERM=dumb HUTCH_VM=1\n'
		for e in ${ENVS[@]+"${ENVS[@]}"}; do
			printf 'export %q\n' "$e"
		done
		printf 'exec'
		printf ' %q' "${CMD[@]}"
		printf '\n'
	} >"$CTL/cmd"
	# Read raw by the guest's busybox: no quoting.
	[ "$PWD" = / ] || printf '%s\n' "$PWD" >"$CTL/cwd"
}

# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
	local rc=$?
	set +e
	[ -n "$QPID" ] && kill "$QPID" 2>/dev/null
	[ -n "$R1" ] && kill "$R1" "$R2" 2>/dev/null
	[ -n "$CTL" ] && [ -z "${HUTCH_VM_KEEP:-}" ] && rm -rf "$CTL"
	exit "$rc"
}

run_qemu() {
	local sm=passthrough fs=() to=() blk=() append
	append="console=ttyS0 quiet loglevel=1 panic=-1 mitigations=off audit=0 nowatchdog"
	append+=" cryptomgr.notests no_timer_check $(tsc_args)"
	# Read by init-systemd.sh and systemd: a minimal target of our own, pure cgroup v2, only
	# failures on the console, and systemd's own complaints there too (not only in the kmsg
	# buffer, which loglevel=1 keeps off the console).
	if [ -n "$SYSTEMD" ]; then
		append+=" hutch.systemd=1 systemd.unit=hutch-vm.target"
		append+=" systemd.unified_cgroup_hierarchy=$UNIFIED systemd.show_status=error"
		append+=" systemd.log_target=console systemd.log_level=notice"
	fi
	append+=" ${HUTCH_VM_APPEND:-}"
	# passthrough keeps the host's owners and modes, but needs root on the host.
	[ "$(id -u)" = 0 ] || sm=none
	[ "$PWD" = / ] || fs=(-fsdev "local,id=wk,path=$PWD,security_model=$sm,multidevs=remap"
		-device "virtio-9p-device,fsdev=wk,mount_tag=work")
	[ "$TIMEOUT" = 0 ] || to=(timeout -k 5 "$TIMEOUT")
	if [ -n "$DISK" ]; then
		truncate -s "$DISK" "$CTL/disk.raw" || die "--disk $DISK: cannot make the disk"
		# shellcheck disable=SC2054 # qemu's option syntax
		blk=(-drive "file=$CTL/disk.raw,if=none,id=d0,format=raw"
			-device virtio-blk-device,drive=d0)
	fi
	${to[@]+"${to[@]}"} qemu-system-x86_64 -M microvm -accel tcg,thread=multi -cpu max \
		-m "$MEM" -smp "$SMP" -nodefaults -no-user-config -display none -no-reboot \
		-kernel "$HUTCH_VM_KERNEL" -initrd "$HUTCH_VM_INITRD" \
		-append "$append" -serial "file:$CTL/console.log" \
		-fsdev "local,id=ctl,path=$CTL,security_model=$sm" \
		-device virtio-9p-device,fsdev=ctl,mount_tag=ctl \
		-fsdev "local,id=hr,path=/,security_model=$sm,readonly=on,multidevs=remap" \
		-device virtio-9p-device,fsdev=hr,mount_tag=hostroot ${fs[@]+"${fs[@]}"} \
		${blk[@]+"${blk[@]}"} \
		-device virtio-serial-device \
		-chardev "file,id=out,path=$CTL/out" -device virtserialport,chardev=out,name=out,nr=1 \
		-chardev "file,id=err,path=$CTL/err" -device virtserialport,chardev=err,name=err,nr=2 \
		</dev/null &
	QPID=$!
	local q=0
	wait "$QPID" || q=$?
	QPID=
	return $q
}

main() {
	local q=0
	parse_args "$@"
	command -v qemu-system-x86_64 >/dev/null || die "no qemu: run tests/vm/setup.sh"
	load_cache
	trap cleanup EXIT
	trap 'exit 130' INT TERM
	CTL=$(mktemp -d "${TMPDIR:-/tmp}/hutch-vm.XXXXXX")
	write_cmd
	# FIFOs stream the guest's output as it comes; qemu opens them for writing.
	mkfifo "$CTL/out" "$CTL/err"
	cat "$CTL/out" &
	R1=$!
	cat "$CTL/err" >&2 &
	R2=$!
	run_qemu || q=$?
	# A qemu that died before opening the FIFOs leaves the readers blocked in open().
	exec 3<>"$CTL/out" 4<>"$CTL/err"
	exec 3>&- 4>&-
	wait "$R1" "$R2" 2>/dev/null || true
	R1=
	if [ -s "$CTL/rc" ]; then
		exit "$(<"$CTL/rc")"
	fi
	{
		printf 'run-in-vm: the guest left no exit status (qemu status %s' "$q"
		[ "$TIMEOUT" != 0 ] && [ "$q" = 124 ] && printf ', timed out after %ss' "$TIMEOUT"
		printf '); console log:\n'
		tail -n 30 "$CTL/console.log" 2>/dev/null
	} >&2
	exit 125
}

main "$@"
