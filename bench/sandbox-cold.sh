#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Issue 35's three `hutch sandbox` targets, end to end (launch until hutch exits, what a
# caller waits for), all in one interleaved run:
#   sb-none     a fully hardened sandbox: --memory 256m --cpus 1 --pids 128, a workspace, a
#               /tmp tmpfs, --network none, a busybox image (a directory) with every mount
#               point, so no throw-away layer
#   sb-bridge   the same with --network bridge          (target: sb-none + 2 ms per round)
#   sb-store    the same image from hutch's store (--image NAME:TAG, network none)
#                                                       (target: sb-none + 1 ms per round)
#   run-runc    `hutch run` of runc's default config (`runc spec` as root), made
#               non-interactive, with the same limits on the same image (target: sb-none
#               <= 1.2x this row)
#   docker      `docker run --rm --network none busybox true`, when a docker daemon answers
#               (busybox imported from busybox-static; the daemon is never started here)
# Everything runs in a network namespace made here (the bridge, its firewall table and
# leases are its own) with a state root and an image store on tmpfs, all removed at exit.
# Usage: bench/sandbox-cold.sh [N] (default 50). Needs root and a built hutch ($HUTCH).
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-50}
hutch=$(readlink -f "${HUTCH:-build/runtime/hutch}")
work=$(mktemp -d /tmp/hutch-bench-sbc.XXXXXX)
state=$(mktemp -d /dev/shm/hutch-bench-sbc.XXXXXX) # the state root and the store: tmpfs
ns=hutch-bench-sbc-$$
docker_img=
cleanup()
{
	# The namespace's leases (hutch keeps them by the namespace's inode) go with it.
	local ino
	ino=$(stat -L -c %i "/run/netns/$ns" 2>/dev/null) && rm -rf "/run/hutch/net/$ino"
	ip netns del "$ns" 2>/dev/null || true
	[ -z "$docker_img" ] || docker rmi -f "$docker_img" >/dev/null 2>&1 || true
	# The run dir's registry entries of our two roots (a later reader would prune them).
	grep -lsxF -e "$state/root" -e "$state/run" /run/hutch/.roots/* | xargs -r rm -f
	rm -rf --one-file-system "$work" "$state"
}
trap cleanup EXIT
chmod 755 "$work" "$state" # the sandbox's mapped ids must reach the image

# The image has every mount point the sandbox uses, so no throw-away layer is needed.
tests/mkbundle.sh "$hutch" "$work/bundle" /bin/true >/dev/null
img=$work/bundle/rootfs
mkdir -p "$img/workspace" "$img/sys/fs/cgroup"
: >"$img/etc/resolv.conf"
: >"$img/etc/hosts"
: >"$img/etc/hostname"
mkdir "$work/ws"
chown 1000:1000 "$work/ws"
export HUTCH_STORE=$state/store
tar -C "$img" -c . | "$hutch" image import --name hutch-bench-sbc:1 - >/dev/null

# runc's own default config, as root (so not --rootless): a read-only root, its mounts,
# masked paths and capabilities; only made non-interactive, pointed at the image, and given
# the sandbox's limits in a cgroup beneath ours named for this run. Its ambient set goes: the
# kernel cannot raise it (the caps are not inheritable), and hutch warns on every run.
mkdir "$work/runc"
(cd "$work/runc" && runc spec)
jq --arg root "$img" --arg cg "hutch-bench-sbc-$$" '.process.terminal = false
	| del(.process.capabilities.ambient)
	| .process.args = ["true"] | .root.path = $root | .linux.cgroupsPath = $cg
	| .linux.resources.memory.limit = 268435456 | .linux.resources.pids.limit = 128
	| .linux.resources.cpu = {quota: 100000, period: 100000}' \
	"$work/runc/config.json" >"$work/c" && mv "$work/c" "$work/runc/config.json"
cc -O2 -o "$work/interleave" bench/interleave.c

ip netns add "$ns"
ip -n "$ns" link set lo up
sb="$hutch --root $state/root sandbox --workspace $work/ws --tmpfs /tmp:64m --memory 256m"
sb+=" --cpus 1 --pids 128 --timeout 60"
cmds=("run-runc=$hutch --root $state/run run --bundle $work/runc r\$I"
	"sb-none=$sb --image $img --network none -- true"
	"sb-bridge=$sb --image $img --network bridge -- true"
	"sb-store=$sb --image hutch-bench-sbc:1 --network none -- true")
# One bridge start outside the timing: the firewall's table persists, as docker0 does.
nsenter --net="/run/netns/$ns" $sb --image "$img" --network bridge -- true
if docker info >/dev/null 2>&1; then
	docker_img=hutch-bench-sbc-busybox:$$
	tar -C "$img" -c . | docker import - "$docker_img" >/dev/null
	cmds+=("docker=docker run --rm --network none $docker_img true")
else
	echo "(no docker daemon answers: docker left out; this script never starts one)"
fi

echo "hutch sandbox end to end, N=$n, interleaved, $(date -u '+%F %H:%M UTC'), load$(uptime |
	sed 's/.*average://')"
nsenter --net="/run/netns/$ns" "$work/interleave" -b run-runc -d sb-none,sb-bridge \
	-d sb-none,sb-store -d run-runc,sb-none "$n" "${cmds[@]}"
echo "targets: sb-none <= 1.20x run-runc; sb-bridge - sb-none <= 2 ms; sb-store - sb-none <= 1 ms"
# A sandbox with a workspace checks it against every root the host's hutch has registered.
echo "registered roots: $(find /run/hutch/.roots -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)" \
	"(/run/hutch/.roots; each costs a sandbox with a workspace a few stats)"
# Nothing of ours may be left: no state, no cgroup, no netns but the one removed at exit.
left=$(find "$state/root" "$state/run" -mindepth 1 -maxdepth 3 \
	! -path "*/.sandbox" ! -path "*/.sandbox/*" 2>/dev/null || true)
[ -z "$left" ] || echo "left behind: $left" >&2
