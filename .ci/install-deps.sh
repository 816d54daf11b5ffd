#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs everything hutch needs to build and test on Debian 12. Idempotent.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
pkgs=(
	build-essential meson ninja-build pkg-config clang-format
	libseccomp-dev libcap-dev libyajl-dev libmnl-dev
	bats busybox-static jq util-linux iproute2 procps psmisc
	crun runc
)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
