#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
#
# No setuid or setgid bit from a sandbox without root inside, by any syscall that sets or
# creates a mode: chmod, fchmod, fchmodat, fchmodat2 (Linux 6.6, 452, which hutch's profile
# once let through unfiltered), open, openat, creat, mknod, mknodat, through both x86 ABIs
# (x86_64, and i386 by int $0x80), in a workspace of an unprivileged owner, through an rw
# --bind of another user's directory, under runc and crun (handed hutch's profile as OCI
# JSON), and in host mode run by root. The probe (helpers/setidprobe.c) calls the raw
# numbers; the host then stats what it left.

load ../integration/helpers
load ../integration/sandbox-helpers

setup() {
	sb_setup
	sb_private_image
	BUNDLE=$TEST_DIR/image-bundle
	mkdir -p "$BUNDLE"
	ln -s "$IMAGE" "$BUNDLE/rootfs"
	install_static_helper setidprobe
	ABIS=("")
	if host_i386; then
		ABIS+=(i386.)
	else
		echo "# i386: not checked, this host faults on int \$0x80 (the ABI is unreachable)" >&3
	fi
}

teardown() {
	local rc=0 p
	for p in $(sort -u "${SB_PIDS:-/dev/null}"); do
		# a delegate's runtime names the container sb-PID; host mode keeps a registry
		if pgrep -f -- "(^|[ =/])sb-$p( |$)" >/dev/null; then
			echo "LEAK: runtime processes of sb-$p: $(pgrep -af -- "sb-$p")" >&2
			pkill -9 -f -- "(^|[ =/])sb-$p( |$)"
			rc=1
		fi
		if [ -e "$SB_RUNS/$p" ]; then
			echo "LEAK: $SB_RUNS/$p" >&2
			rc=1
		fi
	done
	sb_teardown || rc=1
	teardown_bundle || rc=1
	return $rc
}

# The checks in directory $1, for ABI prefix $2 ("" or "i386."): every setid mode refused,
# openat2 ENOSYS (its mode is out of seccomp's reach), no file capability (the kernel's
# CAP_SETFCAP check: seccomp cannot read an xattr's name), and plain modes still working.
checks() {
	local d=$1 a=$2
	echo "${a}chmod:$d/e$a:04755=EPERM ${a}chmod:$d/e$a:02755=EPERM
		${a}fchmod:$d/e$a:06755=EPERM ${a}fchmodat:$d/e$a:06755=EPERM
		${a}fchmodat2:$d/e$a:04000=EPERM ${a}fchmodat2:$d/e$a:02711=EPERM
		${a}fchmodat2:$d/e$a:06755=EPERM ${a}setcap:$d/e$a:0=EPERM
		${a}open:$d/o$a:06755=EPERM ${a}openat:$d/oa$a:04755=EPERM
		${a}creat:$d/c$a:02755=EPERM ${a}mknod:$d/m$a:06755=EPERM
		${a}mknodat:$d/ma$a:04755=EPERM ${a}openat2:$d/o2$a:0644=ENOSYS
		${a}fchmodat2:$d/f$a:0750=OK ${a}chmod:$d/g$a:0711=OK ${a}mknod:$d/pm$a:0640=OK
		${a}openat:$d/po$a:0600=OK ${a}mkdir:$d/dir$a:06755=OK"
}

# ABIS, the ABIs probed ("" is x86_64; i386. where the host reaches it: setup): runc and
# crun get the profile without i386, whose calls are then killed (SIGSYS): the delegates'
# tests probe x86_64 and check that kill apart.

# probe DIR [SB ARGS...]: the sandbox makes DIR/{e,f,g}{,i386.} (as its user: the files any
# host user could run) and runs every check in DIR for each of ABIS; $output and $status.
probe() {
	local d=$1 a checks=()
	shift
	for a in "${ABIS[@]}"; do
		# shellcheck disable=SC2207 # one word per check
		checks+=($(checks "$d" "$a"))
	done
	# shellcheck disable=SC2016 # $0 is expanded inside
	run sb "$@" -- sh -c 'touch $0 && exec setidprobe "$@"' "$(files "$d")" "${checks[@]}"
	echo "$output" >&2
}

# The files the checks change: DIR/{e,f,g}{,i386.}, as one word.
files() {
	echo "$1"/{e,f,g}{,i386.}
}

# on_host HOSTDIR OWNER: what the probe left, seen from the host: no file with a setuid or
# setgid bit or a file capability, none of the refused creations, the allowed modes exactly,
# OWNER's files.
on_host() {
	local h=$1 owner=$2 a f
	for a in "${ABIS[@]}"; do
		for f in e f g dir pm po; do
			[ -e "$h/$f$a" ] || { echo "missing $h/$f$a" >&2; return 1; }
			echo "$h/$f$a: $(stat -c '%A %a %u:%g' "$h/$f$a")" >&2
			[ ! -u "$h/$f$a" ] && [ ! -g "$h/$f$a" ] || return 1
			[ "$(stat -c %u:%g "$h/$f$a")" = "$owner" ] || return 1
		done
		for f in o oa c m ma o2; do
			[ ! -e "$h/$f$a" ] || { echo "made: $h/$f$a" >&2; return 1; }
		done
		# (one test a line: set -e ignores a failure before the last of an && list)
		[ "$(stat -c %a "$h/e$a")" = 644 ]
		[ "$(stat -c %a "$h/f$a")" = 750 ]
		[ "$(stat -c %a "$h/g$a")" = 711 ]
		[ "$(stat -c %a "$h/pm$a")" = 640 ]
		! command -v getcap >/dev/null || [ -z "$(getcap "$h/e$a")" ]
	done
	[ -z "$(find "$h" -perm /6000)" ]
}

# delegated RUNTIME: the probe under RUNTIME for x86_64, and an i386 call killed there.
delegated() {
	local i386=${#ABIS[@]}
	ABIS=("")
	probe /workspace --runtime "$1" --workspace "$WS"
	on_host "$WS" 1500:1500
	check_status 0
	[[ $output != *FAIL* ]]
	[ "$i386" = 2 ] || return 0
	run sb --runtime "$1" --workspace "$WS" -- setidprobe "i386.chmod:/workspace/e:04755=EPERM"
	check_status 159
}

# requires_runtime NAME: skips the test when the runtime's binary is absent.
requires_runtime() {
	command -v "$1" >/dev/null || skip "$1 not installed"
}

@test "setid: a workspace of an unprivileged owner: no syscall sets a setid bit, x86_64 or i386" {
	probe /workspace --workspace "$WS"
	on_host "$WS" 1500:1500
	check_status 0
	[[ $output != *FAIL* ]]
}

@test "setid: an rw --bind of another user's directory: no setid bit there either" {
	mkdir "$TEST_DIR/other"
	chown 1700:1701 "$TEST_DIR/other"
	probe /data --workspace "$WS" --bind "$TEST_DIR/other:/data"
	on_host "$TEST_DIR/other" 1700:1701
	check_status 0
	[[ $output != *FAIL* ]]
}

@test "setid: --runtime runc, given hutch's profile as OCI JSON: no setid bit; i386 killed" {
	requires_runtime runc
	delegated runc
}

@test "setid: --runtime crun, given hutch's profile as OCI JSON: no setid bit; i386 killed" {
	requires_runtime crun
	delegated crun
}

@test "setid: host mode run by root: no setuid-root file on the host" {
	local h=$TEST_DIR/hostw
	mkdir "$h"
	# shellcheck disable=SC2016,SC2046 # $0 is expanded inside; one word per check
	run sb_raw --isolation landlock --allow-read "$IMAGE/bin" --allow-rw "$h" \
		-e "HUTCH_IT_TAG=$TAG" -- sh -c 'touch $0 && exec "$@"' "$(files "$h")" \
		"$IMAGE/bin/setidprobe" $(for a in "${ABIS[@]}"; do checks "$h" "$a"; done)
	echo "$output" >&2
	on_host "$h" 0:0
	check_status 0
	[[ $output != *FAIL* ]]
}
