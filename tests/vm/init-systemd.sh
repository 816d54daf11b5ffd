# SPDX-License-Identifier: Apache-2.0
# Stage 1's systemd half (run-in-vm.sh --systemd puts hutch.systemd=1 on the kernel command
# line): sourced by init-stage1.sh once /newroot is the overlay root, it makes that root boot
# systemd quickly, then hands over to /lib/systemd/systemd as PID 1. Busybox only, and builtins
# where it can: an exec costs ~30 ms under TCG.
# shellcheck shell=dash
R=/newroot
# systemd sees only the units in /run (tmpfs), not the host's: with /usr/lib/systemd/system and
# /etc/systemd/system in its path, the automatic dependencies of the mount units reach
# local-fs.target, emergency and rescue, sysinit.target and its .wants, multi-user.target and
# the host's docker, postgresql and timers. It then loads ~155 units, each file and drop-in
# lookup a round trip over 9p: seconds under TCG. Mounting /run here keeps it, since systemd
# mounts no tmpfs on a mount point; its runtime unit dir gets hutch-vm.target and the units it
# pulls in (tests/vm/systemd/) and Debian's own dbus.socket and dbus.service. The path keeps
# every directory systemd has under /run: transient units (systemd-run, StartTransientUnit)
# and runtime drop-ins (SetUnitProperties) live there.
mount -t tmpfs -o mode=755,nosuid,nodev run $R/run || fail "cannot mount /run"
mkdir -p $R/run/systemd/system || fail "cannot make /run/systemd/system"
cp -r /systemd/. $R/usr/lib/systemd/system/dbus.socket $R/usr/lib/systemd/system/dbus.service \
	$R/run/systemd/system/ || fail "cannot install the systemd units"
S=/run/systemd
export SYSTEMD_UNIT_PATH=$S/system.control:$S/transient:$S/generator.early:$S/system:\
$S/system.attached:$S/generator:$S/generator.late
cp /systemd-cmd $R/.hutch/ || fail "cannot install the command script"
# The control dir and the working dir, as init-stage2.sh shares them, but here: busybox's
# mount is an exec of a static binary, the host's in the command's unit costs ~10 times more
# under TCG, and these mounts would wait for the bus. The mounts move with the root.
C=/.hutch/ctl
mkdir -p $R$C
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,cache=none ctl $R$C ||
	fail "mount of the control dir failed"
W=
[ -f $R$C/cwd ] && IFS= read -r W <$R$C/cwd
if [ -n "$W" ]; then
	mkdir -p "$R$W"
	mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,cache=mmap work "$R$W" ||
		fail "mount of the working dir $W failed"
fi
# Generators would read the host's fstab, crypttab and SysV scripts, one exec each; an empty
# file in /etc masks the generator of that name.
mkdir -p $R/etc/systemd/system-generators
for g in "$R"/lib/systemd/system-generators/*; do
	: >"$R/etc/systemd/system-generators/${g##*/}"
done
# systemd takes a root with /.dockerenv for a container (the host may be one) and would then
# ignore the kernel command line, hutch-vm.target with it. (Podman's /run/.containerenv is
# hidden by the fresh /run.)
[ ! -e $R/.dockerenv ] || rm -f $R/.dockerenv || fail "cannot remove /.dockerenv"
# systemd wants a machine id, and a fresh one per guest like a real boot; the host's would be
# shared with it.
IFS=- read -r a b c d e </proc/sys/kernel/random/uuid
echo "$a$b$c$d$e" >$R/etc/machine-id
echo hutch-vm >$R/etc/hostname
# The guest has no journald (Debian's sysinit.target is left out): what services print goes to
# the console log, which run-in-vm.sh shows when the VM fails. A unit stopped in the guest
# whose processes ignore SIGTERM gets SIGKILL after 5 s, not the default 90 s.
mkdir -p $R/etc/systemd/system.conf.d
printf '%s\n' '[Manager]' DefaultStandardOutput=tty DefaultStandardError=inherit \
	DefaultTimeoutStopSec=5s >$R/etc/systemd/system.conf.d/hutch-vm.conf
# Nothing of the host's to mount: the guest has no disks of its own.
echo "# hutch-vm: no mounts" >$R/etc/fstab
$B umount /proc
$B mount --move /dev /newroot/dev
exec $B switch_root /newroot /lib/systemd/systemd
