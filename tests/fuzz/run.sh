#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs every libFuzzer target (docs/fuzzing.md) for SECONDS each, one after another, on a
# scratch copy of its seed corpus: tests/fuzz/corpus is never rewritten. Configures and
# builds the fuzz build (clang, ASan + UBSan) when BUILD_DIR has none. Fails on any crash,
# leak, timeout or sanitizer report, naming the input that reproduces it; prints one line
# of figures per target. No prompts, and bounded: about 5 x SECONDS plus the build.
#
#   tests/fuzz/run.sh [SECONDS_PER_TARGET (30)] [BUILD_DIR (build-fuzz)] [TARGET...]
#
# TARGET: config, seccomp, image, sandbox or dns (default: all five).
# What a run leaves in BUILD_DIR/fuzz: corpus/TARGET (the grown corpus, for -merge=1),
# artifacts/TARGET (crash-*, leak-*, timeout-*, oom-*) and logs/TARGET.log.
set -euo pipefail
cd "$(dirname "$0")/../.."
secs=${1:-30}
build=${2:-build-fuzz}
targets=(config seccomp image sandbox dns)
[ $# -gt 2 ] && targets=("${@:3}")
# Inputs beyond these teach nothing new and cost: config.json with Docker's profile is 27 KB;
# libseccomp compiles a 4 KB profile in tens of milliseconds, a 16 KB one in hundreds. A DNS
# message over UDP is 512 bytes without EDNS; 1024 leaves room for pointers to go wrong in.
declare -A max_len=([config]=32768 [seccomp]=4096 [image]=8192 [sandbox]=4096 [dns]=1024)

usage() {
	echo "usage: $0 [SECONDS_PER_TARGET] [BUILD_DIR] [config|seccomp|image|sandbox|dns...]" >&2
	exit 2
}
case $secs in '' | *[!0-9]*) usage ;; esac
for t in "${targets[@]}"; do
	[ -n "${max_len[$t]:-}" ] || usage
done
if [ ! -f "$build/build.ninja" ]; then
	echo "== configuring $build (clang, libFuzzer, ASan + UBSan)"
	CC=clang meson setup "$build" -Dfuzz=true -Dstatic=false -Dintegration=false \
		-Db_sanitize=address,undefined -Dbuildtype=debugoptimized \
		-Dc_args=-fsanitize=fuzzer-no-link >/dev/null
fi
if ! grep -q 'tests/fuzz/fuzz-config:' "$build/build.ninja"; then
	echo "$0: $build is not a fuzz build (-Dfuzz=true): remove it, or name another" >&2
	exit 2
fi
# Quiet when it builds; everything it said when it does not.
if ! ninja -C "$build" "${targets[@]/#/tests/fuzz/fuzz-}" >"$build/fuzz-build.log" 2>&1; then
	cat "$build/fuzz-build.log" >&2
	echo "fuzz: the build failed" >&2
	exit 1
fi

# fuzz-image's stores and layouts: a tmpfs when there is one, removed at the end.
tmpbase=${TMPDIR:-/tmp}
[ -d /dev/shm ] && [ -w /dev/shm ] && tmpbase=/dev/shm
tmp=$(mktemp -d "$tmpbase/hutch-fuzz.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
out=$build/fuzz
mkdir -p "$out/logs"

# UBSan reports and goes on unless told to stop; libFuzzer then saves the input. LSan skips
# one leak inside libseccomp (tests/fuzz/lsan.supp says which).
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/tests/fuzz/lsan.supp:print_suppressions=0}
failed=0
for t in "${targets[@]}"; do
	bin=$build/tests/fuzz/fuzz-$t
	corpus=$out/corpus/$t
	art=$out/artifacts/$t
	log=$out/logs/$t.log
	rm -rf "$corpus" "$art"
	mkdir -p "$corpus" "$art"
	cp tests/fuzz/corpus/fuzz-"$t"/* "$corpus"/
	dict=()
	[ -f tests/fuzz/fuzz-"$t".dict ] && dict=(-dict=tests/fuzz/fuzz-"$t".dict)
	status=0
	# timeout: a last resort should libFuzzer itself stop answering (-timeout is per input)
	TMPDIR=$tmp timeout -k 10 $((secs + 300)) "$bin" -max_total_time="$secs" -timeout=10 \
		-rss_limit_mb=2048 -max_len="${max_len[$t]}" "${dict[@]}" -print_final_stats=1 \
		-artifact_prefix="$art/" "$corpus" </dev/null >"$log" 2>&1 || status=$?

	final_stat() { sed -n "s/^stat::$1: *//p" "$log" | tail -n 1; }
	last=$(grep -E '^#[0-9]+.*cov: ' "$log" | tail -n 1 || true)
	cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
	ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
	files=$(find "$corpus" -type f | wc -l)
	kb=$(du -sk "$corpus" | cut -f1)
	figures="$(final_stat number_of_executed_units) execs, $(final_stat average_exec_per_sec) exec/s, cov: ${cov:-?} ft: ${ft:-?}, corpus $files files ($kb KB)"

	reports=$(grep -cE '^==[0-9]+==ERROR|runtime error:|^SUMMARY: |^fuzz: .*invariant failed|ALARM: working on the last Unit|out-of-memory' "$log" || true)
	if [ "$status" = 0 ] && [ "$reports" = 0 ]; then
		echo "fuzz-$t: ok, $secs s, $figures"
		continue
	fi
	failed=1
	echo "fuzz-$t: FAILED (exit $status), $figures"
	echo "---- $log (last 40 lines)"
	tail -n 40 "$log"
	echo "----"
	for a in "$art"/*; do
		[ -e "$a" ] || continue
		echo "fuzz-$t: reproducer $a"
		echo "  rerun: $bin $a"
	done
	[ -n "$(ls -A "$art")" ] || echo "fuzz-$t: no reproducer was saved; see $log"
done
exit "$failed"
