#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What --network bridge adds to a sandbox run: `hutch sandbox -- true` with --network none,
# with --network bridge (the default egress rules) and with a restricted policy and allow
# lists, interleaved in one run; each run's whole cost (veth, firewall elements, DNS
# forwarder, and their removal). Everything happens in a network namespace made here (its
# own nft table and leases), never in the host's.
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
sb="nsenter --net=/run/netns/$ns $hutch sandbox --as-root --image $work/b/rootfs"
rules="--egress restricted --allow-host api.example.test:443 --allow-host '*.pkg.example.test' \
--allow-cidr 192.0.2.0/24:443 --deny-cidr 203.0.113.0/24"
# One bridge start outside the timing: the firewall's table persists, as docker0 does.
$sb --network bridge -- true
echo "hutch sandbox -- true, network none vs bridge (N=$n, $(date -u '+%F %H:%M UTC'))"
"$work/interleave" "$n" "none=$sb --network none -- true" "bridge=$sb --network bridge -- true" \
	"restricted=$sb --network bridge $rules -- true"
