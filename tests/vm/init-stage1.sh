#!/bin/busybox sh
# SPDX-License-Identifier: Apache-2.0
# Stage 1 of the VM lane's guest: /init of the initramfs that setup.sh builds (busybox only).
# Loads the virtio, 9p, overlayfs and virtio-blk modules, makes the root (the host's / read-only over 9p
# under a tmpfs upper layer) and switch_roots into it, running stage 2 or, with hutch.systemd=1,
# systemd (init-systemd.sh): containers need a real root, because pivot_root refuses the
# initramfs. Any failure powers off; the runner prints the console log.
# shellcheck shell=dash
B=/bin/busybox
$B mount -t devtmpfs dev /dev
exec </dev/console >/dev/console 2>&1
# Bare applet names re-exec busybox through /proc/self/exe, so they work from here on.
$B mount -t proc proc /proc
export PATH=/bin
fail() {
	echo "hutch-vm stage 1: $*"
	reboot -f
}

# One modprobe loads them all with their dependencies (modules.dep from setup.sh): an exec
# per insmod would cost ~30 ms each under TCG.
modprobe -a virtio_mmio virtio_console 9pnet_virtio 9p overlay virtio_blk ||
	fail "modprobe failed"

O=trans=virtio,version=9p2000.L,msize=512000
mount -t 9p -o $O,ro,cache=loose hostroot /lower || fail "mount of the host's / failed"
mount -t tmpfs -o mode=755 upper /upper || fail "tmpfs failed"
mkdir -p /upper/u /upper/w
mount -t overlay -o lowerdir=/lower,upperdir=/upper/u,workdir=/upper/w root /newroot ||
	fail "overlay root failed"

mkdir -p /newroot/.hutch
# hutch.systemd=1 (run-in-vm.sh --systemd): systemd is PID 1 instead of stage 2.
read -r cmdline </proc/cmdline
case " $cmdline " in
*" hutch.systemd=1 "*)
	# shellcheck source-path=SCRIPTDIR source=init-systemd.sh
	. /init-systemd # does not return
	;;
esac
# Stage 2 and its busybox must survive switch_root, which frees the initramfs.
cp /bin/busybox /stage2 /newroot/.hutch/ || fail "cannot populate /.hutch"
# Bare applet names need /proc/self/exe: full paths from here.
$B umount /proc
$B mount --move /dev /newroot/dev
exec $B switch_root /newroot /.hutch/busybox sh /.hutch/stage2
