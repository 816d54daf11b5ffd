#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What a message costs on a long-lived session against a fresh sandbox per message: `hutch
# sandbox exec S -- true` on a named, detached sandbox against `hutch sandbox -- true` with the
# same options (a workspace, limits, network none), natively and with --as-root (its writable
# layer), interleaved in one run; BENCH_RUNTIMES="runc runsc" adds those runtimes' sessions.
# Usage: bench/session.sh [N] (default 100). Needs root and a built hutch ($HUTCH, by default
# build/runtime/hutch).
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-100}
hutch=$(readlink -f "${HUTCH:-build/runtime/hutch}")
work=$(mktemp -d /tmp/hutch-bench-session.XXXXXX)
root=$work/state
names=()
cleanup() {
	local s
	for s in "${names[@]}"; do
		"$hutch" --root "$root" sandbox rm -f "$s" >/dev/null 2>&1 || true
	done
	rm -rf --one-file-system "$work"
}
trap cleanup EXIT
chmod 755 "$work" # the sandbox's mapped ids must reach the image
tests/mkbundle.sh "$hutch" "$work/bundle" /bin/true >/dev/null
img=$work/bundle/rootfs
mkdir -p "$img/workspace" "$img/sys/fs/cgroup"
: >"$img/etc/resolv.conf"
mkdir "$work/ws"
chown 1000:1000 "$work/ws"
cc -O2 -o "$work/interleave" bench/interleave.c
mknod -m 666 "$work/null" c 1 3 # crun and runsc chown their stdio: never the host's
io="<$work/null >$work/null 2>&1"
sb="$hutch --root $root sandbox"
opts="--image $img --workspace $work/ws --memory 256m --pids 128 --network none --timeout 0"

# session NAME ARGS...: a detached session of those options, and its two rows.
rows=()
session() {
	local name=$1
	shift
	$sb $opts "$@" --name "$name" --detach -- sleep infinity <"$work/null" >/dev/null
	names+=("$name")
	rows+=("$name-exec=$sb exec $name -- true $io" "$name-fresh=$sb $opts $* -- true $io")
}
session native
session as-root --as-root
for rt in ${BENCH_RUNTIMES:-}; do
	session "$rt" --runtime "$rt"
done
pairs=()
for s in "${names[@]}"; do
	pairs+=(-d "$s-fresh,$s-exec")
done
"$work/interleave" "${pairs[@]}" "$n" "${rows[@]}"
