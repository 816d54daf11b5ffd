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
# Run as root for the whole suite; as an ordinary user (or under `unshare -r`) it is the
# rootless pass, in which only the files marked ROOTLESS_OK run (helpers.bash).
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
# Not host root (an ordinary user, or root only inside a user namespace, as under `unshare
# -r`): the rootless pass. Files that can run there do; every other test is skipped, each
# with the reason (helpers.bash: requires_root).
if [ "$(id -u)" -ne 0 ] || ! grep -qE '^ *0 +0 +4294967295$' /proc/self/uid_map; then
	export HUTCH_IT_ROOTLESS=1
	echo "run.sh: rootless pass (uid $(id -u), uid_map: $(tr -s ' ' </proc/self/uid_map | head -c 80))" >&2
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
