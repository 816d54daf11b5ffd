# SPDX-License-Identifier: Apache-2.0
#
# Shared by podman.bats, containerd.bats and docker.bats: one temp dir per test file holding
# everything the client and its daemons write (storage, state, sockets, the runtime's --root),
# a busybox image built from a rootfs tar, and a cgroup parent ($TAG, relative, so that the
# runtime puts it beneath our own cgroup in every hierarchy). The last test of each file
# stops the daemons by pid and checks that nothing is left: no process, mount, cgroup or file.
#
# $HUTCH is the runtime under test. Any runc-compatible binary works (HUTCH=$(command -v runc)
# gives the baseline to compare a failure with).

bats_require_minimum_version 1.5.0

: "${HUTCH:?set HUTCH to the hutch binary (run the suite with run.sh)}"
BUSYBOX=${HUTCH_IT_BUSYBOX:-/bin/busybox}
# Every client command gets this long; a hang fails the command instead of the whole suite.
CLIENT_TIMEOUT=${CLIENT_TIMEOUT:-60}

# shellcheck source=../cgroup-dirs.bash
. "$(dirname "${BASH_SOURCE[0]}")/../cgroup-dirs.bash"

# The cgroup dirs (every hierarchy) of this file's parent cgroup $TAG.
tag_cgroup_dirs() {
	own_cgroup_dirs | while read -r d; do
		if [ -d "$d/$TAG" ]; then echo "$d/$TAG"; fi
	done
}

# The cgroup a container got in the memory (v1) or unified (v2) hierarchy, found by a name
# fragment (podman: libpod-ID, docker: ID, ctr: the path we gave).
container_cgroup() {
	tag_cgroup_dirs | while read -r d; do
		find "$d" -mindepth 1 -type d -name "*$1*" 2>/dev/null
	done | grep -E '^/sys/fs/cgroup/(memory|unified)/|^/sys/fs/cgroup/[^/]*$' | head -n1 || true
}

# make_rootfs_tar, make_oci_archive: the busybox image (the VM lane's CRI checks use them too).
# shellcheck source=images.bash
. "$(dirname "${BASH_SOURCE[0]}")/images.bash"

# The per-file temp dir and cgroup parent. Skips the whole file when CMD is missing.
clients_setup_file() {
	local cmd=$1
	[ "$(id -u)" -eq 0 ] || skip "needs root"
	command -v "$cmd" >/dev/null || skip "$cmd not installed (apt-get install $2)"
	[ -x "$BUSYBOX" ] || skip "$BUSYBOX missing (apt-get install busybox-static)"
	CL_DIR=$(mktemp -d "${TMPDIR:-/tmp}/hutch-clients.XXXXXX")
	chmod 755 "$CL_DIR"
	TAG=$(basename "$CL_DIR")
	export CL_DIR TAG
	# What exists before we start: only what we create is removed at the end.
	: >"$CL_DIR/preexisting"
	local p
	for p in "${HOST_PATHS[@]}"; do
		if [ -e "$p" ]; then echo "$p" >>"$CL_DIR/preexisting"; fi
	done
	make_rootfs_tar "$CL_DIR/busybox.tar"
}

# Paths outside $CL_DIR that a client creates however it is configured (a hard-coded default);
# removed at the end when they did not exist before. Each .bats file sets its own.
HOST_PATHS=()

# start_daemon NAME LOG CMD...: starts a daemon in the background (its pid in
# $CL_DIR/NAME.pid), stdio to LOG.
start_daemon() {
	local name=$1 log=$2
	shift 2
	"$@" </dev/null >>"$log" 2>&1 3>&- &
	echo $! >"$CL_DIR/$name.pid"
}

# wait_for CMD...: retries CMD for up to 20s.
wait_for() {
	local tries=200
	while [ "$tries" -gt 0 ]; do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.1
		tries=$((tries - 1))
	done
	return 1
}

# stop_daemon NAME: SIGTERM to the pid it was started with, SIGKILL after 20s, then reaped.
stop_daemon() {
	local f=$CL_DIR/$1.pid pid tries=200
	[ -f "$f" ] || return 0
	pid=$(cat "$f")
	kill "$pid" 2>/dev/null || true
	while [ -d "/proc/$pid" ] && ! grep -qs '^State:.*Z' "/proc/$pid/status" && [ "$tries" -gt 0 ]; do
		sleep 0.1
		tries=$((tries - 1))
	done
	if [ "$tries" -eq 0 ]; then
		echo "$1 ($pid) ignored SIGTERM, killing it" >&2
		kill -9 "$pid" 2>/dev/null || true
	fi
	wait "$pid" 2>/dev/null || true
	rm -f "$f"
}

# Processes that still belong to this file: a command line or cwd in $CL_DIR (conmon, shims,
# daemons), or a member of a cgroup beneath $TAG (container processes).
leftover_processes() {
	local me=$BASHPID
	{
		grep -l -s -a -F "$CL_DIR" /proc/[0-9]*/cmdline | cut -d/ -f3
		tag_cgroup_dirs | while read -r d; do
			find "$d" -name cgroup.procs -exec cat {} + 2>/dev/null
		done
	} | sort -u | while read -r p; do
		if [ "$p" != "$me" ] && [ -e "/proc/$p" ] && ! grep -qs '^State:.*Z' "/proc/$p/status"; then
			echo "$p"
		fi
	done
}

# Checks, after the daemons stopped, that nothing of this file is left, then removes the
# temp dir, the (empty) parent cgroups and the host paths we created. Prints what leaked.
check_and_clean() {
	local bad=0 p d procs m
	procs=$(leftover_processes)
	if [ -n "$procs" ]; then
		sleep 1 # one that is dying as we look is no leak
		procs=$(leftover_processes)
	fi
	for p in $procs; do
		echo "LEAK: process $p: $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)" >&2
		kill -9 "$p" 2>/dev/null || true
		bad=1
	done
	m=$(grep -F "$CL_DIR" /proc/self/mountinfo | awk '{ print $5 }' | sort -r || true)
	for d in $m; do
		echo "LEAK: mount $d" >&2
		umount -l "$d" 2>/dev/null || true
		bad=1
	done
	# A container's cgroup left beneath the parent is a leak; the parent itself is ours to rm.
	for d in $(tag_cgroup_dirs); do
		for p in $(find "$d" -mindepth 1 -depth -type d 2>/dev/null); do
			echo "LEAK: cgroup $p" >&2
			rmdir "$p" 2>/dev/null || true
			bad=1
		done
		rmdir "$d" || bad=1
	done
	for p in "${HOST_PATHS[@]}"; do
		if ! grep -qxF "$p" "$CL_DIR/preexisting"; then rm -rf "$p"; fi
	done
	if grep -qF "$CL_DIR" /proc/self/mountinfo; then
		echo "$CL_DIR kept: mounts remain below it" >&2
		return 1
	fi
	rm -rf --one-file-system "$CL_DIR"
	return $bad
}

# Keeps `run`'s caller honest: prints the output of a failed command in the test log.
check_status() {
	local want=$1
	if [ "$status" -ne "$want" ]; then
		echo "expected status $want, got $status; output:" >&2
		printf '%s\n' "$output" >&2
		return 1
	fi
}

# expect_output TEXT: `run`'s output contains TEXT.
expect_output() {
	if [[ $output != *"$1"* ]]; then
		echo "expected output to contain '$1'; it is:" >&2
		printf '%s\n' "$output" >&2
		return 1
	fi
}

# The memory limit and pids limit files as the container sees them (v1 or v2).
MEM_LIMIT_SH='cat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes'
PIDS_LIMIT_SH='cat /sys/fs/cgroup/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids/pids.max'
# A process that exits 0 on SIGTERM, as a service would (PID 1 ignores signals it has no
# handler for).
SERVICE_SH='trap "exit 0" TERM; while :; do sleep 0.1; done'

# cgroup_value CGROUP V1_FILE V2_FILE: a limit as the host sees it in the container's cgroup
# ($TAG/CGROUP, or any cgroup beneath $TAG whose name contains CGROUP), e.g.
# `cgroup_value libpod-ID memory.limit_in_bytes memory.max`.
cgroup_value() {
	local name=$1 d f
	for d in $(tag_cgroup_dirs); do
		for f in "$2" "$3"; do
			find "$d" -mindepth 1 -path "*$name*" -name "$f" -exec cat {} + 2>/dev/null
		done
	done | head -n1 || true
}
