#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What seccomp costs at start: `run` of /bin/true on one busybox bundle, without a profile and
# with the built-in default one (the same OCI JSON for every runtime), interleaved in one run:
# hutch with a warm compiled-filter cache (hit), hutch with the cache off (libseccomp every
# time), crun and runc. crun 1.8 refuses hybrid cgroup hosts, so there it runs in a private
# mount namespace with the cgroup2 mount hidden, as bench/startup.sh does.
# First hutch's two rows alone (4N rounds), then all seven rows together; then the kernel's
# part alone (bench/scload.c: the cached program loaded in forked children).
# Usage: bench/seccomp.sh [N] (default 200). Needs root; HUTCH=path (default build/runtime/hutch).
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-200}
hutch=$(readlink -f "${HUTCH:-build/runtime/hutch}")
work=$(mktemp -d /tmp/hutch-bench-sc.XXXXXX)
trap 'rm -rf "$work"' EXIT
tests/mkbundle.sh "$hutch" "$work/plain" /bin/true >/dev/null
jq '.linux.cgroupsPath = "hutch-bench" | .ociVersion = "1.0.2-dev"' "$work/plain/config.json" \
	>"$work/c" && mv "$work/c" "$work/plain/config.json"

# The default profile as OCI JSON: `hutch spec --seccomp` once it exists, else the jq resolver.
mkdir "$work/spec"
if (cd "$work/spec" && "$hutch" spec --seccomp) >/dev/null 2>&1 &&
	jq -e '.linux.seccomp.syscalls | length > 0' "$work/spec/config.json" >/dev/null; then
	jq '.linux.seccomp' "$work/spec/config.json" >"$work/profile.json"
else
	jq -f seccomp/default-oci.jq seccomp/default.json >"$work/profile.json"
fi
# One bundle per row, each with a cgroup of its own beneath ours (absolute: crun reads a
# relative path from the hierarchy root): rows sharing one cgroup name disturb each other on
# a v1 host, where a cgroup removed and made again stalls the next join.
own=$(awk -F: '{ if (length($3) > length(m)) m = $3 } END { print (m == "/" ? "" : m) }' \
	/proc/self/cgroup)
for row in hutch-none hutch-hit hutch-miss crun-none crun-sc runc-none runc-sc; do
	sc='.'
	[[ $row == *none ]] || sc='.linux.seccomp = $p[0]'
	mkdir "$work/$row"
	jq -c --slurpfile p "$work/profile.json" --arg r "$work/plain/rootfs" \
		--arg cg "$own/bench-sc-$row" ".root.path = \$r | .linux.cgroupsPath = \$cg | $sc" \
		"$work/plain/config.json" >"$work/$row/config.json"
done
echo "profile: $(jq '.syscalls | length' "$work/profile.json") rules"

cc -O2 -o "$work/interleave" bench/interleave.c
crun_wrap() { echo "$1"; }
if mount | grep -q ' /sys/fs/cgroup/unified type cgroup2'; then
	crun_wrap() { echo "unshare -m sh -c 'umount /sys/fs/cgroup/unified && $1'"; }
fi
# A warm cache for the hit case, and proof that it is one.
export HUTCH_SECCOMP_CACHE=$work/cache
"$hutch" --root "$work/h" run --bundle "$work/hutch-hit" warm >/dev/null
ls "$work/cache"/*.bpf >/dev/null

h="$hutch --root $work/h run --bundle"
# hutch's own cost first, its two rows alone and 4N rounds: crun and runc tear down v1
# cgroups between runs (p90s of 20-25 ms), and an effect of ~0.3 ms drowns among them.
echo "== hutch alone: a hit against no profile, $((4 * n)) rounds"
"$work/interleave" -d hutch-none,hutch-hit "$((4 * n))" \
	"hutch-none=$h $work/hutch-none h\$I >/dev/null" \
	"hutch-hit=$h $work/hutch-hit h\$I >/dev/null"
echo
echo "== with crun and runc, the same profile, $n rounds"
"$work/interleave" -d hutch-none,hutch-hit -d crun-none,crun-sc -d runc-none,runc-sc "$n" \
	"hutch-none=$h $work/hutch-none h\$I >/dev/null" \
	"hutch-hit=$h $work/hutch-hit h\$I >/dev/null" \
	"hutch-miss=HUTCH_SECCOMP_CACHE=off $h $work/hutch-miss h\$I >/dev/null" \
	"crun-none=$(crun_wrap "crun --root $work/crun run --bundle $work/crun-none c\$I >/dev/null")" \
	"crun-sc=$(crun_wrap "crun --root $work/crun run --bundle $work/crun-sc c\$I >/dev/null")" \
	"runc-none=runc --root $work/runc run --bundle $work/runc-none r\$I >/dev/null" \
	"runc-sc=runc --root $work/runc run --bundle $work/runc-sc r\$I >/dev/null"

# The kernel's part alone: the warm entry loaded in forked children (bench/scload.c).
echo
cc -O2 -o "$work/scload" bench/scload.c
"$work/scload" "$(ls "$work/cache"/*.bpf | head -1)" "$n"
