#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Images: import/unpack throughput of `hutch image import` against `umoci unpack` on the
# same OCI layout (busybox plus SIZE of files from the host's /usr, gzip layers), and the
# start time of `hutch sandbox --image` on a small and on that large image: an overlay of
# the layers, so it must not grow with the image.
# Usage: bench/images.sh [SOURCE_DIR] [N] (default /usr/lib, 20). Needs root, umoci, a built
# hutch in build/ (HUTCH=... to use another).
set -euo pipefail
cd "$(dirname "$0")/.."
src=${1:-/usr/lib}
n=${2:-20}
hutch=${HUTCH:-$PWD/build/runtime/hutch}
work=$(mktemp -d /tmp/hutch-bench-img.XXXXXX)
trap 'rm -rf --one-file-system "$work"' EXIT
export HUTCH_STORE=$work/store

now() { date +%s.%N; }
secs() { echo "$2 - $1" | bc; }

# mk_layout DIR [PAYLOAD]: an OCI layout with tag "img": busybox, then PAYLOAD in /payload as
# a second layer.
mk_layout() {
	local dir=$1 payload=${2:-}
	umoci init --layout "$dir" >/dev/null
	umoci new --image "$dir:img" >/dev/null
	umoci unpack --image "$dir:img" "$work/b" >/dev/null
	cp -a "$work/rootfs/." "$work/b/rootfs/"
	umoci repack --image "$dir:img" "$work/b" >/dev/null
	rm -rf "$work/b"
	[ -n "$payload" ] || return 0
	umoci unpack --image "$dir:img" "$work/b" >/dev/null
	mkdir -p "$work/b/rootfs/payload"
	cp -a "$payload/." "$work/b/rootfs/payload/"
	umoci repack --image "$dir:img" "$work/b" >/dev/null
	rm -rf "$work/b"
}
mkdir -p "$work/rootfs"/{bin,etc,proc,sys,dev,tmp}
cp /bin/busybox "$work/rootfs/bin/"
ln -s busybox "$work/rootfs/bin/sh"
ln -s busybox "$work/rootfs/bin/true"
mk_layout "$work/oci" "$src"
mk_layout "$work/oci-small"
bytes=$(du -sb --apparent-size "$src" | cut -f1)
files=$(find "$src" | wc -l)
echo "image: busybox + $src ($((bytes / 1000000)) MB, $files entries), gzip layers"

sync
t0=$(now)
umoci unpack --image "$work/oci:img" "$work/umoci" >/dev/null
t1=$(now)
"$hutch" image import "$work/oci" --name large:1 >/dev/null
t2=$(now)
u=$(secs "$t0" "$t1")
h=$(secs "$t1" "$t2")
printf "umoci unpack:        %6.2f s  %6.1f MB/s\n" "$u" "$(echo "$bytes / $u / 1000000" | bc -l)"
printf "hutch image import:  %6.2f s  %6.1f MB/s  (verifies blob and diff_id digests)\n" "$h" \
	"$(echo "$bytes / $h / 1000000" | bc -l)"

"$hutch" image import "$work/oci-small" --name small:1 >/dev/null
for img in small:1 large:1; do
	"$hutch" sandbox --image "$img" -- /bin/true # warm
	t0=$(now)
	for _ in $(seq "$n"); do "$hutch" sandbox --image "$img" -- /bin/true; done
	t1=$(now)
	printf "sandbox --image %-8s %6.1f ms per start (%s runs, %s MB of layers)\n" "$img" \
		"$(echo "($t1 - $t0) * 1000 / $n" | bc -l)" "$n" \
		"$(("$("$hutch" image inspect "$img" | jq .size)" / 1000000))"
done
