#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Two hutch binaries against each other, interleaved in one run: `run` of /bin/true on the
# busybox bundle, and `hutch sandbox -- true` on its rootfs, with the per-round difference
# (NEW - OLD, drift between rounds taken out). For "this change costs X at start".
# Usage: bench/compare.sh OLD NEW [N] (default 500). Needs root.
set -euo pipefail
cd "$(dirname "$0")/.."
old=$(realpath "$1") new=$(realpath "$2") n=${3:-500}
work=$(mktemp -d /tmp/hutch-compare.XXXXXX)
chmod 755 "$work" # the sandbox's ids must reach the image
trap 'rm -rf "$work"' EXIT
tests/mkbundle.sh "$new" "$work/bundle" /bin/true >/dev/null
jq '.linux.cgroupsPath = "hutch-compare"' "$work/bundle/config.json" >"$work/c" &&
	mv "$work/c" "$work/bundle/config.json"
mkdir -p "$work/bundle/rootfs/sys/fs/cgroup" "$work/bundle/rootfs/workspace"
cc -O2 -o "$work/interleave" bench/interleave.c
b=$work/bundle
# crun 1.8's refusal of hybrid hosts does not matter here: only hutch runs.
echo "== run of /bin/true ($n rounds)"
"$work/interleave" -d old,new "$n" \
	"old=$old --root $work/old run --bundle $b o\$I >/dev/null" \
	"new=$new --root $work/new run --bundle $b n\$I >/dev/null"
echo "== sandbox -- true ($n rounds)"
"$work/interleave" -d old,new "$n" \
	"old=$old sandbox --image $b/rootfs -- true" \
	"new=$new sandbox --image $b/rootfs -- true"
