#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs what bench/run.sh needs, from Debian: the timing and JSON tools, the peer runtimes
# (crun, runc, bubblewrap), umoci for the image case, and the build tools for hutch itself.
# Benchmarks never run in CI, so this is separate from .ci/install-deps.sh.
# docker/podman are optional: set BENCH_ENGINES=1 to install podman too (large).
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
pkgs=(hyperfine bubblewrap jq crun runc umoci busybox-static util-linux strace
	build-essential meson ninja-build pkg-config libseccomp-dev libcap-dev libyajl-dev)
if [ "${BENCH_ENGINES:-0}" = 1 ]; then
	pkgs+=(podman)
fi
apt-get -o DPkg::Lock::Timeout=600 update -qq
# umoci is not in every release: install what exists, say what does not.
avail=()
for p in "${pkgs[@]}"; do
	if apt-cache show "$p" >/dev/null 2>&1; then
		avail+=("$p")
	else
		echo "bench/install-deps.sh: package $p not available, skipped" >&2
	fi
done
# Other sessions may hold the dpkg lock: wait for it rather than fail.
apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${avail[@]}"
