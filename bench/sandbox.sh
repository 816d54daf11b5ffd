#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `hutch sandbox` cost: from invocation to the exit of `true` in a fully hardened sandbox
# (read-only busybox image, a workspace, a /tmp tmpfs, the default seccomp profile, memory,
# cpu and pids limits, network none), natively and delegated to runc, crun and runsc, with
# `hutch run` of the same image as a reference, all interleaved in one run.
# Usage: bench/sandbox.sh [N] (default 50). Needs root and a built hutch ($HUTCH, by default
# build/runtime/hutch). BENCH_RUNSC=0 leaves runsc out (it takes ~0.5 s per run).
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-50}
hutch=$(readlink -f "${HUTCH:-build/runtime/hutch}")
work=$(mktemp -d /tmp/hutch-bench-sb.XXXXXX)
trap 'rm -rf --one-file-system "$work"' EXIT
chmod 755 "$work" # the sandbox's mapped ids must reach the image

# The image has every mount point the sandbox uses, so no throw-away layer is needed.
tests/mkbundle.sh "$hutch" "$work/bundle" /bin/true >/dev/null
img=$work/bundle/rootfs
mkdir -p "$img/workspace" "$img/sys/fs/cgroup"
: >"$img/etc/resolv.conf"
mkdir "$work/ws"
chown 1000:1000 "$work/ws"
# `hutch run` of the same image, as hardened as the spec's defaults allow: read-only root,
# a cgroup beneath ours (named for this run: a concurrent run must not share it), the same
# limits.
jq --arg cg "hutch-bench-sb-$$" '.root.readonly = true | .linux.cgroupsPath = $cg
	| .ociVersion = "1.0.2-dev" | .linux.resources.memory.limit = 268435456
	| .linux.resources.pids.limit = 128 | .linux.resources.cpu = {quota: 100000, period: 100000}' \
	"$work/bundle/config.json" >"$work/c" && mv "$work/c" "$work/bundle/config.json"
cc -O2 -o "$work/interleave" bench/interleave.c

# Every row's stdio is a null device of our own: crun and runsc chown the stdio they are
# given to the sandbox's user, and the host's /dev/null must not be one of them. (The
# redirections make interleave use a shell for every row alike.)
mknod -m 666 "$work/null" c 1 3
io="<$work/null >$work/null 2>&1"
sandbox="$hutch sandbox --image $img --workspace $work/ws --tmpfs /tmp:64m --memory 256m"
sandbox+=" --cpus 1 --pids 128 --network none --timeout 60"
cmds=("native=$sandbox -- true $io")
for rt in runc crun runsc; do
	[ "$rt" = runsc ] && [ "${BENCH_RUNSC:-1}" = 0 ] && continue
	command -v "$rt" >/dev/null || {
		echo "($rt not installed: left out)"
		continue
	}
	cmds+=("$rt=$sandbox --runtime $rt -- true $io")
done
cmds+=("hutch-run=$hutch --root $work/state run --bundle $work/bundle r\$I $io")

echo "hutch sandbox -- true, N=$n, interleaved (ratios to native):"
"$work/interleave" "$n" "${cmds[@]}"
