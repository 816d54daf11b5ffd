#!/.hutch/busybox sh
# SPDX-License-Identifier: Apache-2.0
# Stage 2 of the VM lane's guest: PID 1 after switch_root, run by /.hutch/busybox sh. Mounts
# the API filesystems and a pure cgroup v2 hierarchy with every controller enabled at the root,
# shares the host's working directory, runs the command run-in-vm.sh left in the control dir with
# its output on two virtio ports, stores its exit status there and powers off.
# shellcheck shell=dash
B=/.hutch/busybox
C=/.hutch/ctl
$B mount -t proc proc /proc
# From here bare names run busybox's applets, not the host's binaries (some of them without
# an exec, which costs ~30 ms under TCG); builtins do the rest.
fail() {
	echo "hutch-vm stage 2: $*"
	reboot -f
}

mount -t sysfs sys /sys
mkdir -p $C /dev/pts /dev/shm
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,cache=none ctl $C ||
	fail "mount of the control dir failed"
mount -t devpts -o newinstance,ptmxmode=0666,mode=620 devpts /dev/pts
ln -sf pts/ptmx /dev/ptmx
# What udev would add: bash's process substitution needs /dev/fd.
ln -s /proc/self/fd /dev/fd
ln -s fd/0 /dev/stdin
ln -s fd/1 /dev/stdout
ln -s fd/2 /dev/stderr
mount -t tmpfs -o mode=1777 shm /dev/shm
mount -t tmpfs -o mode=1777 tmp /tmp
mount -t tmpfs -o mode=755 run /run
mount -t securityfs securityfs /sys/kernel/security

# nsdelegate and memory_recursiveprot as systemd mounts it on a pure v2 host.
mount -t cgroup2 -o nsdelegate,memory_recursiveprot cgroup2 /sys/fs/cgroup ||
	fail "cgroup2 mount failed"
read -r ctrls </sys/fs/cgroup/cgroup.controllers
# One write per controller: a single write fails as a whole if any one is refused.
for c in $ctrls; do
	echo "+$c" >/sys/fs/cgroup/cgroup.subtree_control || fail "cannot enable $c"
done

echo hutch-vm >/proc/sys/kernel/hostname
ip link set lo up

W=
[ -f $C/cwd ] && IFS= read -r W <$C/cwd
if [ -n "$W" ]; then
	mkdir -p "$W"
	mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,cache=mmap work "$W" ||
		fail "mount of the working dir $W failed"
fi
cd "${W:-/}" || fail "cd $W failed"

# Ports 1 and 2 are "out" and "err" (run-in-vm.sh numbers them); the glob saves an ls.
for out in /dev/vport*p1; do :; done
for err in /dev/vport*p2; do :; done
/bin/bash $C/cmd </dev/null >"$out" 2>"$err"
echo $? >$C/rc
# reboot syncs first; qemu runs with -no-reboot, so this ends the VM.
reboot -f
