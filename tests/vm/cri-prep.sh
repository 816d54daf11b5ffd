#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# cri-prep.sh DIR: what the systemd guests' CRI checks (guest-cri.sh) need from the host, in DIR
# (shared with the guest): the CRI client's python stubs, generated from the vendored api.proto,
# and the busybox and pause images as OCI archives for `ctr images import`. Made once per lane
# run: under TCG, protoc alone would take the guest half a minute. Exits 77 (and the guests
# skip their CRI checks) when containerd or the python gRPC packages are missing.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: cri-prep.sh DIR}
command -v containerd >/dev/null && command -v ctr >/dev/null || exit 77
/usr/bin/python3 -c 'import grpc, grpc_tools' 2>/dev/null || exit 77

rm -rf "$out"
mkdir -p "$out"
/usr/bin/python3 "$here/../clients/cri/cri.py" gen "$out/stubs" >/dev/null
export CL_DIR=$out BUSYBOX=${HUTCH_IT_BUSYBOX:-/bin/busybox}
# shellcheck source=../clients/images.bash
. "$here/../clients/images.bash"
make_rootfs_tar "$out/busybox.tar"
make_oci_archive "$out/busybox.tar" "$out/bb-oci.tar" hutch.test/busybox:latest
make_oci_archive "$out/busybox.tar" "$out/pause-oci.tar" hutch.test/pause:latest \
	'{"Entrypoint": ["sleep", "2147483647"], "Cmd": null}'
rm "$out/busybox.tar"
cp "$here/../clients/cri/cri.py" "$out/"
