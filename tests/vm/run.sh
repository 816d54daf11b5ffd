#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/vm/run.sh BUILD_DIR: the VM lane. Prepares the VM (setup.sh), then boots ONE guest that
# runs guest-v2.sh against BUILD_DIR: the guest is pure cgroup v2, the cgroups unit test runs
# there as root, and so do real containers when hutch is built. Prints PASS/FAIL/SKIP lines and
# exits non-zero when a check or the VM failed. Needs root (apt-get, 9p passthrough).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)

if [ $# != 1 ] || [ ! -d "$1" ]; then
	echo "usage: tests/vm/run.sh BUILD_DIR" >&2
	exit 2
fi
BUILD=$(cd "$1" && pwd)
start=$SECONDS

"$here/setup.sh"

# The guest mounts a fresh /tmp, so a host path below /tmp is visible there only through the
# shared working directory: share BUILD_DIR, and hand the guest script over as text.
cd "$BUILD"
rc=0
"$here/run-in-vm.sh" --timeout "${HUTCH_VM_TIMEOUT:-120}" --disk 16M -- \
	bash -c "$(<"$here/guest-v2.sh")" guest-v2.sh "$BUILD" || rc=$?

took=$((SECONDS - start))
case $rc in
0) echo "vm lane: PASS (${took}s)" ;;
125) echo "vm lane: FAIL: the VM itself failed, see above (${took}s)" ;;
*) echo "vm lane: FAIL: guest-v2.sh exited with $rc (${took}s)" ;;
esac
[ $rc = 0 ]
