#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# Runs podman, containerd (ctr and its CRI plugin) and Docker with $HUTCH as their OCI runtime:
# `run.sh [BATS]` with HUTCH=<path to the runtime binary>. TAP goes to stdout. bats runs under the integration
# suite's reaper, a child subreaper, because PID 1 on the test hosts does not reap orphans
# (conmon, shims and daemons double-fork).
#   HUTCH_CLIENTS=<globs>  run only the .bats files matching (e.g. 'podman', 'docker,containerd')
#   HUTCH_CLIENTS_FILTER=<r> run only the tests whose name matches the regex (bats --filter)
#   HUTCH=$(command -v runc) run.sh   the same tests against runc, to tell client quirks from
#                                     runtime bugs
set -euo pipefail

# The clients and daemons run as from a login shell: CI may start us with a bare
# environment, and `ctr task exec -t` then hangs.
export TERM=${TERM:-xterm} SHELL=${SHELL:-/bin/bash} LANG=${LANG:-C.UTF-8}

bats=${1:-bats}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

if [ -z "${HUTCH:-}" ] || [ ! -x "$HUTCH" ]; then
	echo "run.sh: set HUTCH to the runtime binary (got '${HUTCH:-}')" >&2
	exit 2
fi
if [ "$(id -u)" -ne 0 ]; then
	echo "run.sh: the client tests need root, skipping" >&2
	exit 77
fi

bin=$(mktemp -d "${TMPDIR:-/tmp}/hutch-clients-bin.XXXXXX")
trap 'rm -rf "$bin"' EXIT
cc -O2 -Wall -Wextra -o "$bin/reaper" "$here/../integration/helpers/reaper.c"

# shellcheck source=../select-bats.bash
. "$here/../select-bats.bash"
if ! select_bats "$here" "${HUTCH_CLIENTS:-*}"; then
	echo "run.sh: no test file matches HUTCH_CLIENTS=$HUTCH_CLIENTS" >&2
	exit 2
fi

export HUTCH=$(readlink -f "$HUTCH")
export BATS_TEST_TIMEOUT=${BATS_TEST_TIMEOUT:-120}
cd "$here"
status=0
args=(--tap --print-output-on-failure --timing)
[ -n "${HUTCH_CLIENTS_FILTER:-}" ] && args+=(--filter "$HUTCH_CLIENTS_FILTER")
"$bin/reaper" "$bats" "${args[@]}" "${files[@]}" </dev/null || status=$?
exit "$status"
