#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/vm/run.sh BUILD_DIR: the VM lane. Prepares the VM (setup.sh), then boots three guests,
# one after the other, each always: the busybox guest runs guest-v2.sh against BUILD_DIR (pure
# cgroup v2, the cgroups unit test as root, real containers when hutch is built), the systemd
# guest (systemd as PID 1 with the D-Bus system bus) runs guest-systemd.sh, and
# again with systemd's hybrid hierarchies (--hybrid: v1 controllers, cgroup2 beside them), where
# the same script runs the v1 driver's checks. Prints PASS/FAIL/SKIP
# lines and each guest's time, and exits non-zero when a check or a VM failed. Needs root
# (apt-get, 9p passthrough).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)

if [ $# != 1 ] || [ ! -d "$1" ]; then
	echo "usage: tests/vm/run.sh BUILD_DIR" >&2
	exit 2
fi
BUILD=$(cd "$1" && pwd)
start=$SECONDS
failed=()

"$here/setup.sh"

# guest NAME "SCRIPT..." [run-in-vm.sh options]: boots one guest that runs the SCRIPTs (the
# last one's main) against BUILD_DIR.
guest() {
	local name=$1 scripts=($2) t0=$SECONDS rc=0 text f
	shift 2
	local script=${scripts[-1]}
	# The guest mounts a fresh /tmp, so a host path below /tmp is visible there only through
	# the shared working directory: share BUILD_DIR, and hand the guest script over as text.
	text=$(<"$here/guest-lib.sh")
	for f in "${scripts[@]}"; do
		text+=$'\n'$(<"$here/$f")
	done
	"$here/run-in-vm.sh" --timeout "${HUTCH_VM_TIMEOUT:-120}" "$@" -- \
		bash -c "$text" "$script" "$BUILD" || rc=$?
	case $rc in
	0) echo "vm lane: $name guest: PASS ($((SECONDS - t0))s)" ;;
	125) echo "vm lane: $name guest: FAIL: the VM itself failed, see above ($((SECONDS - t0))s)" ;;
	*) echo "vm lane: $name guest: FAIL: $script exited with $rc ($((SECONDS - t0))s)" ;;
	esac
	[ $rc = 0 ] || failed+=("$name")
}

cd "$BUILD"
guest busybox guest-v2.sh --disk 16M
# The systemd guests' CRI checks use what cri-prep.sh makes here (it exits 77 when containerd
# or python3-grpcio is missing, and they skip).
"$here/cri-prep.sh" "$BUILD/vm-cri" || [ $? = 77 ]
guest systemd "guest-cri.sh guest-systemd.sh" --systemd --timeout 420
guest systemd-hybrid "guest-cri.sh guest-systemd.sh" --systemd --hybrid --timeout 300
rm -rf "$BUILD/vm-cri"

took=$((SECONDS - start))
if [ ${#failed[@]} = 0 ]; then
	echo "vm lane: PASS (${took}s)"
else
	echo "vm lane: FAIL: the ${failed[*]} guest(s) failed (${took}s)"
	exit 1
fi
