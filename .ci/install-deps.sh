#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs everything hutch needs to build and test on Debian 12. Idempotent.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
pkgs=(
	build-essential meson ninja-build pkg-config clang-format
	libseccomp-dev libcap-dev libyajl-dev libnftables-dev nftables
	libsystemd-dev # --systemd-cgroup: sd-bus's header (the library is dlopen()ed)
	bats busybox-static jq util-linux iproute2 procps psmisc
	crun runc libssl-dev util-linux
	libarchive-dev libzstd-dev liblz4-dev libacl1-dev nettle-dev liblzma-dev libbz2-dev
	umoci skopeo python3 bc # tests/integration/images/images.bats, bench/images.sh
	debootstrap # tests/integration/sandbox/sandbox-packages.bats: a Debian 12 for apt-get --as-root
	clang libclang-rt-14-dev # tests/fuzz: libFuzzer and the sanitizers' runtimes for clang
	podman containerd docker.io containernetworking-plugins # tests/clients: hutch under the real clients
	python3-jsonschema # tests/integration/sandbox: every report against its schema
	dnsmasq-base # tests/integration/sandbox/egress.bats: "the internet's" DNS server
	conntrack    # tests/security/network.bats: a sandbox's entries gone from the host's table
	strace # tests/integration/oci/cgroups.bats: which cgroup files the create writes
	uidmap # rootless: newuidmap/newgidmap map a test user's /etc/subuid range
	python3-grpcio python3-grpc-tools python3-websocket # tests/clients/cri.bats: cri/cri.py, the CRI client
)
# gVisor: bookworm's runsc is from 2022; the 2024 build is in bookworm-backports.
backports=/etc/apt/sources.list.d/hutch-backports.list
if ! grep -rqs bookworm-backports /etc/apt/sources.list /etc/apt/sources.list.d/; then
	echo "deb http://deb.debian.org/debian bookworm-backports main" >"$backports"
	apt-get update -qq
fi
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
if ! dpkg-query -W -f='${Version}' runsc 2>/dev/null | grep -q bpo; then
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends -t bookworm-backports runsc
fi
