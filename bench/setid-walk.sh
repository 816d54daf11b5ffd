#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The setid walk's cost (docs/sandbox-ids.md): what a --as-root run pays at its end to clear
# the setuid bits it may have left in its workspace. A workspace of N files (1000 a
# directory) is made once and read into the page cache, then:
#   walk     the walk alone, R times: the figure hutch --debug prints for it (an old tree:
#            one statx a file);
#   changed  once, after the command chmods every file: all of them are then newer than the
#            run's start, and each is also looked at for a file capability;
#   run      `hutch sandbox --as-root -- true` with that workspace and without one, and a
#            default sandbox (no root inside, walked all the same) with it, interleaved R
#            times (bench/interleave.c): what the whole run pays.
# Usage: bench/setid-walk.sh [N] [R] (default 100000 and 20). Root, a built hutch ($HUTCH).
# WORK=DIR keeps the tree there between runs (it is reused when it has N files).
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-100000}
rounds=${2:-20}
hutch=$(readlink -f "${HUTCH:-build/runtime/hutch}")
work=${WORK:-}
if [ -z "$work" ]; then
	work=$(mktemp -d /tmp/hutch-bench-setid.XXXXXX)
	trap 'rm -rf --one-file-system "$work"' EXIT
fi
mkdir -p "$work"
chmod 755 "$work" # the sandbox's mapped ids must reach the image

if [ ! -x "$work/bundle/rootfs/bin/sh" ]; then
	tests/mkbundle.sh "$hutch" "$work/bundle" /bin/true >/dev/null
	mkdir -p "$work/bundle/rootfs"/{workspace,sys/fs/cgroup}
	: >"$work/bundle/rootfs/etc/resolv.conf"
fi
img=$work/bundle/rootfs
ws=$work/ws-$n
if [ "$(cat "$ws.count" 2>/dev/null)" != "$n" ]; then
	rm -rf "$ws"
	mkdir -p "$ws"
	echo "making $n files in $ws ..." >&2
	for ((d = 0; d * 1000 < n; d++)); do
		mkdir "$ws/d$d"
		k=$((n - d * 1000 < 1000 ? n - d * 1000 : 1000))
		(cd "$ws/d$d" && seq -f "file-%g" 1 "$k" | xargs touch)
	done
	chown -R 1500:1500 "$ws" # the owner's, as the sandbox's root (idmapped) may chmod them
	echo "$n" >"$ws.count"
fi
find "$ws" >/dev/null # dentries and inodes into the cache

sb="$hutch --debug sandbox --image $img --as-root --network none"
walk_ms() { # files, the walk's milliseconds and its CPU ms, from hutch's debug line
	sed -n 's/.*--workspace .*: setid walk: \([0-9]*\) files in .*, \([0-9.]*\) ms (CPU \([0-9.]*\) ms)$/\1 \2 \3/p'
}
echo "setid walk, $n files, $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
for ((i = 0; i < rounds; i++)); do
	$sb --workspace "$ws" -- true 2>&1 >/dev/null | walk_ms
done | sort -k2 -n | awk '{ t[NR] = $2; c = c " " $3; f = $1 } END {
	printf "walk      files %d  min %.1f ms  median %.1f ms  max %.1f ms  (%d runs)\n",
		f, t[1], t[int((NR + 1) / 2)], t[NR], NR
	n = split(c, v, " "); for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
		if (v[j] + 0 < v[i] + 0) { x = v[i]; v[i] = v[j]; v[j] = x }
	printf "          CPU (all threads) min %.1f ms  median %.1f ms\n", v[1], v[int((n + 1) / 2)] }'
{ $sb --workspace "$ws" -- sh -c 'find /workspace -type f -exec chmod 644 {} +' 2>&1 >/dev/null ||
	true; } | walk_ms | awk '{ printf "changed   files %d  %.1f ms, CPU %.1f ms (each newer than the start)\n",
		$1, $2, $3 }'

cc -O2 -o "$work/interleave" bench/interleave.c
"$work/interleave" "$rounds" "no-workspace=$hutch sandbox --image $img --as-root --network none -- true" \
	"workspace=$hutch sandbox --image $img --as-root --network none --workspace $ws -- true" \
	"default-ws=$hutch sandbox --image $img --network none --workspace $ws -- true"
