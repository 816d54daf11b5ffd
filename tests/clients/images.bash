# SPDX-License-Identifier: Apache-2.0
#
# The clients' busybox image, built from $BUSYBOX (busybox-static) with no registry: a rootfs
# tar, and the same as a one-layer OCI image archive. Their temp dirs go in $CL_DIR. Sourced
# by helpers.bash, and by tests/vm/cri-prep.sh for the VM lane's CRI checks.

# A busybox root filesystem as a tar, as `podman import` and `docker import` take it.
make_rootfs_tar() {
	local out=$1 tmp applet
	tmp=$(mktemp -d "$CL_DIR/rootfs.XXXXXX")
	mkdir -p "$tmp"/{bin,dev,etc,home/user,proc,root,run,sys,tmp,var}
	chmod 755 "$tmp"
	chmod 1777 "$tmp/tmp"
	chmod 0700 "$tmp/root"
	cp "$BUSYBOX" "$tmp/bin/busybox"
	for applet in $("$BUSYBOX" --list); do
		[ -e "$tmp/bin/$applet" ] || ln -s busybox "$tmp/bin/$applet"
	done
	printf '%s\n' 'root:x:0:0:root:/root:/bin/sh' 'user:x:1000:1000:user:/home/user:/bin/sh' \
		'nobody:x:65534:65534:nobody:/nonexistent:/bin/false' >"$tmp/etc/passwd"
	printf '%s\n' 'root:x:0:' 'user:x:1000:' 'nogroup:x:65534:' >"$tmp/etc/group"
	chown 1000:1000 "$tmp/home/user"
	tar -C "$tmp" --numeric-owner -cf "$out" .
	rm -rf "$tmp"
}

# The same rootfs as a one-layer OCI image archive named NAME, for `ctr images import`
# (which takes image archives only). CONFIG, a JSON object, is merged into the image config's
# config (e.g. '{"Entrypoint": ["sleep", "1000"]}' for cri.bats' pause image); by default the
# image runs sh.
make_oci_archive() {
	local rootfs_tar=$1 out=$2 name=$3 extra=${4:-"{}"} d layer config manifest
	d=$(mktemp -d "$CL_DIR/oci.XXXXXX")
	mkdir -p "$d/blobs/sha256"
	blob() { # FILE: moves FILE into the blobs as its digest; prints "digest size"
		local sum size
		sum=$(sha256sum "$1" | cut -d' ' -f1)
		size=$(stat -c %s "$1")
		mv "$1" "$d/blobs/sha256/$sum"
		echo "$sum $size"
	}
	cp "$rootfs_tar" "$d/layer"
	read -r layer layer_size < <(blob "$d/layer")
	jq -nc --arg l "sha256:$layer" --argjson extra "$extra" '{architecture: "amd64", os: "linux",
		config: ({Env: ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],
			Cmd: ["sh"]} + $extra),
		rootfs: {type: "layers", diff_ids: [$l]}}' >"$d/config"
	read -r config config_size < <(blob "$d/config")
	jq -nc --arg c "sha256:$config" --argjson cs "$config_size" --arg l "sha256:$layer" \
		--argjson ls "$layer_size" '{schemaVersion: 2,
		mediaType: "application/vnd.oci.image.manifest.v1+json",
		config: {mediaType: "application/vnd.oci.image.config.v1+json", digest: $c, size: $cs},
		layers: [{mediaType: "application/vnd.oci.image.layer.v1.tar", digest: $l,
			size: $ls}]}' >"$d/manifest"
	read -r manifest manifest_size < <(blob "$d/manifest")
	jq -nc --arg m "sha256:$manifest" --argjson ms "$manifest_size" --arg n "$name" \
		'{schemaVersion: 2, manifests: [{mediaType:
			"application/vnd.oci.image.manifest.v1+json", digest: $m, size: $ms,
			annotations: {"io.containerd.image.name": $n,
				"org.opencontainers.image.ref.name": "latest"}}]}' >"$d/index.json"
	echo '{"imageLayoutVersion":"1.0.0"}' >"$d/oci-layout"
	tar -C "$d" -cf "$out" oci-layout index.json blobs
	rm -rf "$d"
}
