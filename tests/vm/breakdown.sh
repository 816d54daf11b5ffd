#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/vm/breakdown.sh BUILD_DIR [N]: bench/breakdown.sh in the busybox guest (pure cgroup
# v2, every controller enabled), N rounds (default 10), printed as shares of the total only:
# TCG's times are not real, but where a start's time goes, relative to the rest, is what the
# hybrid host cannot show (the v2 paths: CLONE_INTO_CGROUP, the device BPF program). Not part
# of run.sh's lane: a benchmark, which never fails on a result. Needs root, as run.sh.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$(dirname "$here")")
if [ $# -lt 1 ] || [ ! -d "$1" ]; then
	echo "usage: tests/vm/breakdown.sh BUILD_DIR [N]" >&2
	exit 2
fi
BUILD=$(cd "$1" && pwd)
n=${2:-10}
"$here/setup.sh"
cd "$BUILD"
# BD_WRAP=0: the guest has no hybrid hierarchy for the v1 wrapper to hide.
"$here/run-in-vm.sh" --mem 1G --timeout "${HUTCH_VM_TIMEOUT:-900}" -- \
	env BD_SHARES=1 BD_WRAP=0 HUTCH="$BUILD/runtime/hutch" "$repo/bench/breakdown.sh" "$n"
