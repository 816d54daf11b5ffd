#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The warm pool (docs/pool.md): launch to the command's first instruction for
# `hutch sandbox --pool P`, the same sandbox cold (the same profile: 256m, 128 pids, network
# none, an image with every mount point) and `docker run --rm --network none` (the host's
# dockerd, or a private one from bench/docker.sh), interleaved in one run (bench/firstinsn.c: the launch
# time is taken in C just before the fork; the command, bench/stamp.c, prints its start).
# Then the whole pooled run (launch to exit, what a caller waits for) against the cold one.
# The floor row is bench/stamp itself, forked and exec'd with no sandbox.
# Usage: bench/pool.sh [N] (default 50). Needs root and a built hutch.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-50}
hutch=$(readlink -f "${HUTCH:-build/runtime/hutch}")
work=$(mktemp -d /tmp/hutch-bench-pool.XXXXXX)
pool_pid=
cleanup()
{
	if [ -n "$pool_pid" ]; then
		kill -TERM "$pool_pid" 2>/dev/null || true
		wait "$pool_pid" 2>/dev/null || true
	fi
	bench_docker_down
	rm -rf "$work"
}
# shellcheck source=bench/docker.sh
. bench/docker.sh
# Our cgroup (the longest of our paths), beneath which a private dockerd puts its containers.
own=$(awk -F: '{ if (length($3) > length(m)) m = $3 } END { print (m == "/" ? "" : m) }' \
	/proc/self/cgroup)
trap cleanup EXIT
chmod 755 "$work"
tests/mkbundle.sh "$hutch" "$work/b" /bin/true >/dev/null
img=$work/b/rootfs
mkdir -p "$img/sys/fs/cgroup" "$img/workspace" "$img/etc"
: >"$img/etc/resolv.conf"
cc -O2 -Wall -o "$work/firstinsn" bench/firstinsn.c
cc -O2 -Wall -o "$work/interleave" bench/interleave.c
cc -O2 -Wall -static -o "$img/stamp" bench/stamp.c
printf '{"version": 1, "image": "%s", "memory": "256m", "pids": 128, "network": "none"}\n' \
	"$img" >"$work/p.json"
root=$work/root
"$hutch" --root "$root" pool serve --name bench --profile "$work/p.json" -n 4 \
	>"$work/pool.out" 2>"$work/pool.err" &
pool_pid=$!
for _ in $(seq 500); do
	grep -q ' ready at ' "$work/pool.out" && break
	sleep 0.02
done
grep -q ' ready at ' "$work/pool.out" || {
	cat "$work/pool.err" >&2
	exit 1
}
pooled="$hutch --root $root sandbox --pool bench --profile $work/p.json -- /stamp"
cold="$hutch --root $root sandbox --profile $work/p.json -- /stamp"
# floor: a fork and exec of the same static command from C, no sandbox: what any start costs.
rows=("pool=$pooled" "cold=$cold" "floor=$img/stamp")
# docker: the host's daemon if one answers, else a private one (bench/docker.sh; BENCH_DOCKER=0
# leaves docker out).
if [ "${BENCH_DOCKER:-1}" != 0 ] && { docker info >/dev/null 2>&1 ||
	bench_docker_up "$work/docker" "$img"; }; then
	tar -C "$img" -c . | docker import - hutch-bench-pool >/dev/null
	rows+=("docker=docker run --rm --network none hutch-bench-pool /stamp")
else
	echo "docker: no docker daemon (BENCH_DOCKER=0, or it did not start); its row is left out"
fi
# Every pooled start must have been pooled: the report of one more says so.
"$hutch" --root "$root" sandbox --pool bench --profile "$work/p.json" --report "$work/r.json" \
	-- /stamp >/dev/null
jq -e '.pool.pooled' "$work/r.json" >/dev/null || {
	echo "pool: a request ran cold: $(jq -c .pool "$work/r.json")" >&2
	exit 1
}
echo "start: launch to the command's first instruction, N=$n, interleaved, 50 ms apart" \
	"($(date -u '+%F %H:%M UTC'), load $(cut -d' ' -f1-3 /proc/loadavg))"
"$work/firstinsn" -p 50 "$n" "${rows[@]}"
echo "whole run (launch to exit): hutch sandbox --pool vs cold, -- /stamp, N=$n"
"$work/interleave" -d cold,pool "$n" "cold=$cold" "pool=$pooled"
[ -z "$(docker images -q hutch-bench-pool 2>/dev/null)" ] || docker rmi hutch-bench-pool >/dev/null
