#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The whole test suite, as CI runs it (README's second command). Run as root on Debian 12:
# installs what is missing, checks formatting, builds, runs the unit tests, the integration
# tests (bats, real containers), a sanitizer build's unit and integration tests, the fuzz
# targets (clang's libFuzzer), the VM lane (pure cgroup v2, and systemd guests on v2 and on
# hybrid hierarchies with containerd's CRI plugin), the integration suite again without host
# root (tests/rootless-passes.sh), and the podman/containerd (ctr, CRI)/Docker client tests.
set -euo pipefail
cd "$(dirname "$0")/.."
top=$PWD
build=${HUTCH_BUILD:-build}
# Each stage's header says when it began, in seconds since the start: where CI's time goes.
stage() { echo "== $* (at ${SECONDS}s)"; }

.ci/install-deps.sh

stage "format"
git ls-files '*.c' '*.h' | xargs clang-format --dry-run -Werror

stage "build"
[ -f "$build/build.ninja" ] || meson setup "$build" >/dev/null
ninja -C "$build"

failed=0
# The apt-get --as-root tests need a debootstrap'd Debian: here they must not skip.
export HUTCH_IT_REQUIRE_DEBOOTSTRAP=${HUTCH_IT_REQUIRE_DEBOOTSTRAP:-1}
# The soak's runs in CI's budget (a leak of anything per run shows in 1000 as in 10000, which
# the figures in docs use).
export HUTCH_SOAK_RUNS=${HUTCH_SOAK_RUNS:-1000}
stage "unit + integration"
meson test -C "$build" --print-errorlogs --suite unit --suite integration --suite security || failed=1

# The rootless passes run as another user, in directories of their own, beside the fuzzing
# and the VM lane, which need no more than one core each: started here, waited for below.
rootless_tap=$build/meson-logs/rootless-tap.txt
rootless_pid=

# The integration tests again, against the sanitized binary: memory errors and undefined
# behaviour in the runtime itself (UBSan stops at the first report; ASan checks leaks too).
stage "sanitizers (ASan + UBSan: unit tests, and integration tests against that binary)"
[ -f build-asan/build.ninja ] ||
	meson setup build-asan -Dstatic=false -Db_sanitize=address,undefined \
		-Dbuildtype=debug >/dev/null
meson configure build-asan -Dintegration=true >/dev/null
ninja -C build-asan >/dev/null
# Its soak is shorter: memory errors and leaks show in 300 runs as in 1000, and the plain
# pass above has the long one.
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 HUTCH_SOAK_RUNS=300 \
	meson test -C build-asan --print-errorlogs --suite unit --suite integration --suite security || failed=1

# The integration suite without host root: as an unprivileged user, then under unshare -r.
stage "rootless passes (in the background, beside the VM lane)"
tests/rootless-passes.sh "$build" >"$rootless_tap" 2>&1 &
rootless_pid=$!

# The VM lane has the CPU (TCG): with the fuzzers beside it a guest took twice as long.
if [ -x tests/vm/run.sh ]; then
	stage "VM lane (cgroup v2; systemd on v2 and on hybrid)"
	tests/vm/run.sh "$top/$build" || failed=1
fi

stage "rootless passes (their output)"
wait "$rootless_pid" || failed=1
cat "$rootless_tap"

# The parsers of what callers and images hand hutch, under libFuzzer (docs/fuzzing.md): a
# crash, leak, hang, sanitizer report or broken invariant fails, naming the input. Beside
# the clients, which mostly wait on their daemons: each target runs 30 s of wall time,
# whatever the CPU it gets.
stage "fuzz (libFuzzer, 30 s per target; in the background, beside the clients)"
fuzz_log=$build/meson-logs/fuzz.txt
tests/fuzz/run.sh 30 >"$fuzz_log" 2>&1 &
fuzz_pid=$!

stage "clients (podman, containerd, Docker with hutch as their runtime)"
clients_tap=$build/meson-logs/clients-tap.txt
status=0
HUTCH=$top/$build/runtime/hutch tests/clients/run.sh | tee "$clients_tap" || status=$?
[ "$status" = 0 ] || [ "$status" = 77 ] || failed=1 # 77: not root, skipped

stage "fuzz (its output)"
wait "$fuzz_pid" || failed=1
cat "$fuzz_log"

# One closing line for CI: the TAP results of every test program and bats test.
log=$build/meson-logs/testlog.txt
logs=("$log" build-asan/meson-logs/testlog.txt "$rootless_tap" "$clients_tap")
# grep exits 1 when nothing matches (no failures): not an error under pipefail.
count() { { grep -chE "$1" "${logs[@]}" 2>/dev/null || true; } | awk '{s+=$1} END {print s+0}'; }
pass=$(count '^ok ')
fail=$(count '^not ok ')
skipped=$(count '^ok .* # skip')
echo "took ${SECONDS}s"
echo "tests: $pass passed ($skipped of them skipped), $fail failed"
[ "$failed" = 0 ] && [ "$fail" = 0 ]
