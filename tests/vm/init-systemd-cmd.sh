#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The systemd guest's command (hutch-vm-cmd.service runs it with bash, as /.hutch/systemd-cmd):
# what init-stage2.sh does after its mounts. Shares the control dir and the host's working
# directory, runs the command run-in-vm.sh left in the control dir with its output on the two
# virtio ports and stores its exit status there. Exits non-zero only when it could not run the
# command; either way the unit ends the VM.
set -u
C=/.hutch/ctl
mkdir -p $C || exit 1
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,cache=none ctl $C ||
	{ echo "hutch-vm systemd: mount of the control dir failed"; exit 1; }
W=
[ -f $C/cwd ] && IFS= read -r W <$C/cwd
if [ -n "$W" ]; then
	mkdir -p "$W"
	mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,cache=mmap work "$W" ||
		{ echo "hutch-vm systemd: mount of the working dir $W failed"; exit 1; }
fi
cd "${W:-/}" || exit 1

# Ports 1 and 2 are "out" and "err" (run-in-vm.sh numbers them).
for out in /dev/vport*p1; do :; done
for err in /dev/vport*p2; do :; done
rc=0
/bin/bash $C/cmd </dev/null >"$out" 2>"$err" || rc=$?
echo $rc >$C/rc
# The unit reboots without unmounting anything.
sync
