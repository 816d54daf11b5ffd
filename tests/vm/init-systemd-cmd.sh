#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The systemd guest's command (hutch-vm-cmd.service runs it with bash, as /.hutch/systemd-cmd):
# what init-stage2.sh does last. Runs the command run-in-vm.sh left in the control dir (which
# init-systemd.sh mounted, and the working dir named in it) with its output on the two virtio
# ports, and stores its exit status there. Exits non-zero only when it could not run the
# command; either way the unit ends the VM.
C=/.hutch/ctl
W=
[ -f $C/cwd ] && IFS= read -r W <$C/cwd
cd "${W:-/}" || exit 1
# Ports 1 and 2 are "out" and "err" (run-in-vm.sh numbers them); the glob saves an ls.
for out in /dev/vport*p1; do :; done
for err in /dev/vport*p2; do :; done
rc=0
# A subshell rather than a second bash: $C/cmd exports the environment and execs the command.
# shellcheck source=/dev/null
(. $C/cmd) </dev/null >"$out" 2>"$err" || rc=$?
echo $rc >$C/rc
# The unit reboots without unmounting anything.
sync
