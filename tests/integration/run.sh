#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# Runs the bats integration suite: `run.sh [BATS [DIR]]` with HUTCH=<path to the hutch binary>;
# DIR is the directory of .bats files (this one by default; tests/security for that suite).
# Compiles the C helpers into a temp dir and runs bats under helpers/reaper, a child
# subreaper, because PID 1 on the test hosts does not reap orphaned (detached) containers.
#   HUTCH_TESTS=<globs>    run only the .bats files whose name matches one of the globs
#                          (separated by commas or spaces, e.g. 'kill*', 'tty,hooks')
#   HUTCH_TESTS_FILTER=<r> run only the tests whose name matches the regex (bats --filter)
set -euo pipefail

bats=${1:-bats}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
suite=$(cd "${2:-$here}" && pwd)

if [ -z "${HUTCH:-}" ]; then
	echo "run.sh: set HUTCH to the hutch binary" >&2
	exit 2
fi
if [ ! -x "$HUTCH" ]; then
	echo "run.sh: $HUTCH is not an executable" >&2
	exit 2
fi
if [ "$(id -u)" -ne 0 ]; then
	echo "run.sh: the integration tests need root, skipping" >&2
	exit 77 # meson's "skipped"
fi

bin=$(mktemp -d "${TMPDIR:-/tmp}/hutch-it-bin.XXXXXX")
trap 'rm -rf "$bin"' EXIT
for h in reaper recvtty; do
	cc -O2 -Wall -Wextra -o "$bin/$h" "$here/helpers/$h.c"
done

# shellcheck source=../select-bats.bash
. "$here/../select-bats.bash"
if ! select_bats "$suite" "${HUTCH_TESTS:-*}"; then
	echo "run.sh: no test file matches HUTCH_TESTS=$HUTCH_TESTS" >&2
	exit 2
fi

args=(--tap --print-output-on-failure --timing)
[ -n "${HUTCH_TESTS_FILTER:-}" ] && args+=(--filter "$HUTCH_TESTS_FILTER")

HUTCH=$(readlink -f "$HUTCH")
export HUTCH
export HUTCH_HELPERS_BIN=$bin
export BATS_TEST_TIMEOUT=${BATS_TEST_TIMEOUT:-90}
cd "$suite"
status=0
"$bin/reaper" "$bats" "${args[@]}" "${files[@]}" </dev/null || status=$?
exit "$status"
