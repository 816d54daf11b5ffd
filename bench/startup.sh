#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Start-up cost: `run` of /bin/true on one busybox bundle with hutch, crun and runc,
# interleaved in one run. crun 1.8 refuses hybrid cgroup hosts, so on one it runs in a
# private mount namespace with the cgroup2 mount hidden (it then sees plain v1).
# Usage: bench/startup.sh [N] (default 200). Needs root, a built hutch in build/.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-200}
work=$(mktemp -d /tmp/hutch-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
hutch=$PWD/build/runtime/hutch
tests/mkbundle.sh "$hutch" "$work/bundle" /bin/true >/dev/null
# The same config for all: no terminal, a cgroup under our own.
jq '.linux.cgroupsPath = "hutch-bench" | .ociVersion = "1.0.2-dev"' "$work/bundle/config.json" >"$work/c" &&
	mv "$work/c" "$work/bundle/config.json"
cc -O2 -o "$work/interleave" bench/interleave.c
b=$work/bundle
crun_cmd="crun --root $work/crun run --bundle $b c\$I >/dev/null"
if mount | grep -q ' /sys/fs/cgroup/unified type cgroup2'; then
	crun_cmd="unshare -m sh -c 'umount /sys/fs/cgroup/unified && $crun_cmd'"
	unshare_only="unshare -m sh -c 'umount /sys/fs/cgroup/unified && true'"
	echo "(crun runs under unshare -m; that wrapper alone costs:)"
	"$work/interleave" 50 "wrapper=$unshare_only"
fi
"$work/interleave" "$n" \
	"hutch=$hutch --root $work/hutch run --bundle $b h\$I >/dev/null" \
	"crun=$crun_cmd" \
	"runc=runc --root $work/runc run --bundle $b r\$I >/dev/null"
echo "hutch --version vs crun --version:"
"$work/interleave" 200 "hutch=$hutch --version >/dev/null" "crun=crun --version >/dev/null"
