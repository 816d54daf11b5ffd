#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Where a start's time goes: N runs each of `hutch --debug --log-format json run` /bin/true
# (the latency section's std bundle) and of a hardened `hutch sandbox -- true` (limits, a
# workspace, --network none, an image with every mount point: as bench/sandbox.sh), with the
# same commands without --debug and the namespace floor, interleaved in one run. Prints, per
# phase of each, the median microseconds and its share of the median total (--debug's own
# clock: from hutch's options read to its exit), next to every row's end-to-end median.
# Usage: bench/breakdown.sh [N]   (default 30; needs root; bench/install-deps.sh once)
# Env: HUTCH (default build/runtime/hutch); BD_SHARES=1 prints shares only (a TCG guest,
#      whose times are not real: tests/vm/breakdown.sh); BD_WRAP=0 runs no row under the
#      v1 wrapper (a host without crun's needs).
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
n=${1:-30}
warmup=2

# bd_table NAME FILE...: the phases of NAME's logs (one JSON log per run): in, phase, median
# us, share of the median total, in the order of the first run.
bd_table()
{
	local name=$1
	shift
	jq -s -r --arg name "$name" --arg shares "${BD_SHARES:-0}" '
		def median: sort | .[(length - 1) / 2 | floor];
		[.[] | select(.msg == "phase")] | to_entries | map(.value + {i: .key}) as $all
		| ($all | map(select(.phase == "total") | .total_us) | median) as $tot
		| ($all | map(select(.phase == "total")) | length) as $runs
		| "\($name): \($runs) runs, median total \($tot) us (\($tot / 1000 * 100 | round / 100) ms)",
		  (if $shares == "1" then "  in     phase                share"
		   else "  in     phase               median us   share" end),
		  ($all | group_by(.in + " " + .phase) | map({in: .[0].in, phase: .[0].phase,
			first: (map(.i) | min), med: (map(.us) | median), n: length})
		   | sort_by(.first)[]
		   | "  \(.in | .[0:6] | . + " " * (6 - length)) \(.phase | . + " " * (20 - length))"
		     + (if $shares == "1" then "" else " \(.med | tostring | " " * (9 - length) + .)" end)
		     + "  \(.med * 1000 / $tot | round / 10 | tostring | " " * (5 - length) + .)%"
		     + (if .n != $runs then "  (in \(.n) of \($runs) runs)" else "" end))' "$@"
}

# The logs of the timed rounds: interleave's $I counts every command it starts, warm-up
# rounds' first.
bd_logs()
{
	local prefix=$1 f i
	for f in "$st/bd/$prefix".*.json; do
		i=${f%.json}
		i=${i##*.}
		[ "$i" -ge $((warmup * rows)) ] && echo "$f"
	done
}

bench_setup
bench_bundle std
[ "${BD_WRAP:-1}" = 0 ] && W=""
chmod 755 "$st" # the sandbox's mapped ids reach its scratch mount through its root
mkdir -p "$st/bd" "$work/ws" # the logs on tmpfs, as the state: ext4 makes each line a journaled write
chown 1000:1000 "$work/ws"
img=$work/sbimage
cp -a "$rootfs" "$img"
mkdir -p "$img/workspace" "$img/sys/fs/cgroup"
: >"$img/etc/resolv.conf"

run_cmd="$hutch --root $st/hutch.bd run --bundle $work/b/std"
dbg="--debug --log-format json --log $st/bd"
sandbox="sandbox --image $img --workspace $work/ws --tmpfs /tmp:64m --memory 256m --cpus 1"
sandbox+=" --pids 128 --network none --timeout 60"
cmds=("run=$W $hutch $dbg/run.\$I.json --root $st/hutch.bd run --bundle $work/b/std d\$I"
	"run-nodebug=$W $run_cmd n\$I"
	"sandbox=$hutch $dbg/sb.\$I.json --root $st/hutch.sb $sandbox -- true"
	"sandbox-nodebug=$hutch --root $st/hutch.sb $sandbox -- true"
	"unshare=$W unshare -mpuinf --mount-proc true"
	"floor=$W $bin/floor $rootfs /bin/true")
rows=${#cmds[@]}
echo "breakdown: N=$n, $(uname -r), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
[ -n "$W" ] && echo "(hybrid host: run, unshare and floor under bench/v1only, as in the latency section)"
"$bin/interleave" -w "$warmup" -b run-nodebug -t "$work/bd.tsv" "$n" "${cmds[@]}"
echo
mapfile -t run_logs < <(bd_logs run)
mapfile -t sb_logs < <(bd_logs sb)
bd_table "hutch run /bin/true" "${run_logs[@]}"
echo
bd_table "hutch sandbox -- true, hardened" "${sb_logs[@]}"
echo
echo "in=child: the container's init, before its execve; its phases run while hutch waits in"
echo "configure, converse and start, so only hutch's own shares add up to 100%."
awk -F'\t' -v shares="${BD_SHARES:-0}" '{ med[$1] = $3 } END {
	r = med["run-nodebug"]
	if (shares == 1) {
		printf "end to end (interleave medians, as ratios to run): sandbox %.2fx, floor %.2fx, unshare %.2fx\n",
			med["sandbox-nodebug"] / r, med["floor"] / r, med["unshare"] / r
		printf "with --debug: run %.2fx, sandbox %.2fx (of the same without)\n", med["run"] / r,
			med["sandbox"] / med["sandbox-nodebug"]
		exit
	}
	printf "end to end (interleave medians): run %.2f ms, sandbox %.2f ms, floor %.2f ms, unshare %.2f ms\n",
		r, med["sandbox-nodebug"], med["floor"], med["unshare"]
	printf "--debug adds: run %+.2f ms, sandbox %+.2f ms\n", med["run"] - r,
		med["sandbox"] - med["sandbox-nodebug"] }' "$work/bd.tsv"
echo "load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
