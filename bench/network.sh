#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What --network bridge adds to a sandbox: `hutch sandbox` with --network none, with
# --network bridge (the default egress rules) and with a restricted policy and allow lists,
# interleaved in one run. Two figures: the start (from launching hutch to the command's first
# instruction, which prints the time), and the whole run of `-- true` (veth, firewall
# elements, DNS forwarder, and their removal). Everything happens in a network namespace made
# here (its own nft table and leases), never in the host's.
# Usage: bench/network.sh [N] (default 50). Needs root and a built hutch.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-50}
hutch=$(readlink -f "${HUTCH:-build/runtime/hutch}")
work=$(mktemp -d /tmp/hutch-bench-net.XXXXXX)
ns=hutch-bench-net-$$
cleanup()
{
	ip netns del "$ns" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
chmod 755 "$work"
tests/mkbundle.sh "$hutch" "$work/b" /bin/true >/dev/null
mkdir -p "$work/b/rootfs/sys/fs/cgroup" "$work/b/rootfs/etc"
: >"$work/b/rootfs/etc/resolv.conf"
: >"$work/b/rootfs/etc/hosts"
: >"$work/b/rootfs/etc/hostname"
ip netns add "$ns"
ip -n "$ns" link set lo up
cc -O2 -Wall -o "$work/interleave" bench/interleave.c
cc -O2 -Wall -static -o "$work/b/rootfs/stamp" bench/stamp.c
sb="nsenter --net=/run/netns/$ns $hutch sandbox --as-root --image $work/b/rootfs"
rules="--egress restricted --allow-host api.example.test:443 --allow-host '*.pkg.example.test' \
--allow-cidr 192.0.2.0/24:443 --deny-cidr 203.0.113.0/24"
# One bridge start outside the timing: the firewall's table persists, as docker0 does.
$sb --network bridge -- true
# A pause before each start: the kernel tears the last run's namespace and veth down in the
# background (RCU), which would otherwise be charged to whichever start comes next.
echo "start: launch to the command's first instruction, median of N=$n, interleaved, 0.1 s apart"
declare -A lat
for ((i = 0; i < n; i++)); do
	for mode in none bridge restricted; do
		case $mode in
		none) args="--network none" ;;
		bridge) args="--network bridge" ;;
		restricted) args="--network bridge $rules" ;;
		esac
		sleep 0.1
		t0=$(date +%s%N)
		t1=$(eval "$sb $args -- /stamp")
		lat[$mode]+="$(((t1 - t0) / 1000)) "
	done
done
for mode in none bridge restricted; do
	# shellcheck disable=SC2086
	printf '%-12s %8.2f ms\n' "$mode" "$(printf '%s\n' ${lat[$mode]} | sort -n |
		awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)] / 1000}')"
done
echo "whole run: hutch sandbox -- true, network none vs bridge (N=$n, $(date -u '+%F %H:%M UTC'))"
"$work/interleave" "$n" "none=$sb --network none -- true" "bridge=$sb --network bridge -- true" \
	"restricted=$sb --network bridge $rules -- true"
