#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Prepares the VM lane (see run-in-vm.sh): qemu, Debian's stock 6.1 kernel as an uncompressed
# vmlinux (qemu boots it through PVH, skipping the slow bzImage decompressor under TCG) and a
# busybox initramfs holding the 11 modules 9p, overlayfs and virtio-blk need, and the stage
# scripts and units of both guests (busybox's stage 2; systemd's init-systemd*.sh, systemd/).
# The kernel package is fetched with `apt-get download` and unpacked into the cache, never
# installed. Everything lives in $HUTCH_VM_CACHE (default /var/cache/hutch-vm); a warm run only
# checks it. Idempotent.
# `setup.sh --stages-sum` only prints the checksum that names the initramfs.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
CACHE=${HUTCH_VM_CACHE:-/var/cache/hutch-vm}
PKGS=(qemu-system-x86 busybox-static xz-utils jq)
# What 9p and overlayfs need (the -cloud kernel flavour lacks 9p), and virtio_blk for the
# scratch disk that io.max is tested on.
MODULES=(drivers/virtio/virtio_ring drivers/virtio/virtio drivers/virtio/virtio_mmio
	 drivers/char/virtio_console fs/netfs/netfs fs/fscache/fscache net/9p/9pnet
	 net/9p/9pnet_virtio fs/9p/9p fs/overlayfs/overlay drivers/block/virtio_blk)

say() { echo "vm-setup: $*" >&2; }
die() {
	say "error: $*"
	exit 1
}

install_packages() {
	local missing=() p status
	status=" $(dpkg-query -W -f='${Package}=${db:Status-Status} ' "${PKGS[@]}" 2>/dev/null || true)"
	for p in "${PKGS[@]}"; do
		[[ $status == *" $p=installed "* ]] || missing+=("$p")
	done
	[ ${#missing[@]} = 0 ] && return 0
	[ "$(id -u)" = 0 ] || die "missing packages, run as root: ${missing[*]}"
	say "installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	if ! apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; then
		apt-get update -qq
		apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
	fi
}

# The versioned package (linux-image-6.1.0-N-amd64) that linux-image-amd64 points to.
kernel_package() {
	local pkg
	pkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
		awk '/Depends: linux-image-[0-9]/ { print $2; exit }')
	if [ -z "$pkg" ]; then
		apt-get update -qq >&2
		pkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
			awk '/Depends: linux-image-[0-9]/ { print $2; exit }')
	fi
	[ -n "$pkg" ] || die "apt knows no linux-image-amd64 (is a Debian 12 mirror configured?)"
	echo "$pkg"
}

# An installed stock kernel with 9p (so not -cloud) under $1, newest first; prints its version.
installed_kernel() {
	local f v
	for f in $(printf '%s\n' "$1"/boot/vmlinuz-*-amd64 | sort -rV); do
		v=${f##*/vmlinuz-}
		[ -e "$1/lib/modules/$v/kernel/fs/9p/9p.ko" ] && { echo "$v"; return 0; }
	done
	return 1
}

# Unpacks only vmlinuz and the modules we need from the package, into $2.
fetch_kernel() {
	local pkg=$1 root=$2 tmp m want=('./boot/vmlinuz-*')
	say "fetching $pkg with apt-get download (once)"
	tmp=$(mktemp -d "$CACHE/.fetch.XXXXXX")
	# The _apt sandbox user cannot write into a 0700 temp dir.
	if ! (cd "$tmp" && apt-get download -qq -o APT::Sandbox::User=root "$pkg" >&2); then
		rm -rf "$tmp"
		die "apt-get download $pkg failed"
	fi
	for m in "${MODULES[@]}"; do
		want+=("./lib/modules/*/kernel/$m.ko*")
	done
	mkdir -p "$root"
	dpkg-deb --fsys-tarfile "$tmp"/*.deb | tar -x -C "$root" --wildcards "${want[@]}"
	rm -rf "$tmp"
}

# The ELF vmlinux inside a bzImage: the xz payload that starts at one of the xz magics.
extract_vmlinux() {
	local bz=$1 out=$2 off
	# shellcheck disable=SC2013 # one offset per line
	for off in $(LC_ALL=C grep -abo $'\xfd7zXZ' "$bz" | cut -d: -f1); do
		# xz stops after its stream, so tail may die of SIGPIPE: only the result counts.
		tail -c +$((off + 1)) "$bz" | xz -dc --single-stream >"$out.tmp" 2>/dev/null || true
		if [ "$(head -c 4 "$out.tmp")" = $'\x7fELF' ]; then
			mv "$out.tmp" "$out"
			return 0
		fi
	done
	rm -f "$out.tmp"
	return 1
}

# vmlinux and the flat module dir for kernel $kver from root $1, into $CACHE/$kver.
prepare_kernel() {
	local root=$1 kver=$2 dir=$CACHE/$2 m src
	mkdir -p "$dir/modules"
	for m in "${MODULES[@]}"; do
		src=$root/lib/modules/$kver/kernel/$m.ko
		if [ -e "$src" ]; then
			cp "$src" "$dir/modules/"
		elif [ -e "$src.xz" ]; then
			xz -dc "$src.xz" >"$dir/modules/${m##*/}.ko"
		else
			die "kernel $kver has no $m module"
		fi
	done
	extract_vmlinux "$root/boot/vmlinuz-$kver" "$dir/vmlinux" ||
		die "no xz-compressed vmlinux found in $root/boot/vmlinuz-$kver"
}

# True when dir holds every module of MODULES (a cache from before a module was added lacks it).
has_modules() {
	local m
	for m in "${MODULES[@]}"; do
		[ -e "$1/${m##*/}.ko" ] || return 1
	done
}

# The kernel version to use, made ready in the cache: one already there, else the host's
# installed one, else the package linux-image-amd64 points to.
ensure_kernel() {
	local kver pkg
	for kver in $(cd "$CACHE" && printf '%s\n' */vmlinux | sort -rV); do
		kver=${kver%/vmlinux}
		[ -s "$CACHE/$kver/vmlinux" ] && has_modules "$CACHE/$kver/modules" &&
			{ echo "$kver"; return; }
	done
	if kver=$(installed_kernel ""); then
		say "using the installed kernel $kver"
		prepare_kernel "" "$kver"
	else
		pkg=$(kernel_package)
		kver=${pkg#linux-image-}
		fetch_kernel "$pkg" "$CACHE/.kroot"
		prepare_kernel "$CACHE/.kroot" "$kver"
		rm -rf "$CACHE/.kroot"
	fi
	echo "$kver"
}

# The checksum of everything that goes into the initramfs from here (names and contents) names
# it, so editing any of it rebuilds it. run-in-vm.sh asks for it with --stages-sum.
stages_sum() {
	local f
	f=$(cd "$here" && find init-stage1.sh init-stage2.sh init-systemd.sh init-systemd-cmd.sh \
		systemd -type f | LC_ALL=C sort)
	# shellcheck disable=SC2086 # one name a line, none with blanks
	(cd "$here" && echo "$f" && cat $f) | md5sum | cut -c1-12
}

build_initramfs() {
	local kver=$1 out=$2 t
	say "building $out"
	t=$(mktemp -d)
	mkdir -p "$t"/{bin,dev,proc,sys,lower,upper,newroot,lib/modules}
	cp /bin/busybox "$t/bin/"
	ln -s busybox "$t/bin/sh"
	cp -r "$CACHE/$kver/modules" "$t/lib/modules/$kver"
	/bin/busybox depmod -b "$t" "$kver" # for the guest's single modprobe
	install -m 755 "$here/init-stage1.sh" "$t/init"
	install -m 644 "$here/init-stage2.sh" "$t/stage2"
	# The systemd guest's (run-in-vm.sh --systemd): stage 1's other half, the units, the
	# command service's script.
	install -m 644 "$here/init-systemd.sh" "$t/init-systemd"
	install -m 644 "$here/init-systemd-cmd.sh" "$t/systemd-cmd"
	cp -r "$here/systemd" "$t/systemd"
	# Uncompressed (3 MB): nothing to inflate at boot.
	(cd "$t" && find . | /bin/busybox cpio -o -H newc 2>/dev/null) >"$out.tmp"
	rm -rf "$t"
	mv "$out.tmp" "$out"
}

# True when vm.env names a kernel and an initramfs built from the current stage scripts.
cache_ready() {
	grep -qsx "HUTCH_VM_STAGES_SUM=$1" "$CACHE/vm.env" || return 1
	# shellcheck source=/dev/null
	. "$CACHE/vm.env"
	[ -s "$HUTCH_VM_KERNEL" ] && [ -s "$HUTCH_VM_INITRD" ]
}

main() {
	local kver sum initrd
	if [ "${1:-}" = --stages-sum ]; then
		stages_sum
		return
	fi
	install_packages
	[[ $(ldd /bin/busybox 2>&1) == *"not a dynamic"* ]] ||
		die "/bin/busybox is not static: apt-get install busybox-static"
	sum=$(stages_sum)
	if cache_ready "$sum"; then
		say "ready: kernel $HUTCH_VM_KVER, cache $CACHE"
		return 0
	fi
	if ! mkdir -p "$CACHE" 2>/dev/null || ! : 2>/dev/null >>"$CACHE/.lock"; then
		die "cannot write to $CACHE: run as root, or set HUTCH_VM_CACHE"
	fi
	exec 9>>"$CACHE/.lock"
	flock 9 # two lanes at once share one cache
	kver=$(ensure_kernel)
	initrd=$CACHE/initramfs-$kver-$sum.cpio
	if [ ! -s "$initrd" ]; then
		rm -f "$CACHE"/initramfs-*.cpio
		build_initramfs "$kver" "$initrd"
	fi
	cat >"$CACHE/vm.env.tmp" <<-EOF
		HUTCH_VM_KVER=$kver
		HUTCH_VM_KERNEL=$CACHE/$kver/vmlinux
		HUTCH_VM_INITRD=$initrd
		HUTCH_VM_STAGES_SUM=$sum
	EOF
	mv "$CACHE/vm.env.tmp" "$CACHE/vm.env"
	say "ready: kernel $kver, cache $CACHE"
}

main "$@"
