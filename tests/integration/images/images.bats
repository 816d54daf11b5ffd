#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
#
# hutch image: a store per test ($HUTCH_STORE), images made here with no network (a busybox
# rootfs tar; an OCI layout with whiteouts and an opaque dir from umoci; a docker-archive from
# skopeo), hostile tarballs that must leave the host untouched, digests and architecture,
# interrupted and concurrent imports, sandboxes on stored images, and builds with their
# cache. teardown_bundle checks that nothing leaked (mounts, state, processes).

load ../helpers
bats_require_minimum_version 1.5.0

setup() {
	[ -x "$BUSYBOX" ] || skip "$BUSYBOX missing (apt-get install busybox-static)"
	setup_tmp
	export HUTCH_STORE=$TEST_DIR/store
	ROOTFS=$(rootfs_template)
	tar -C "$ROOTFS" -czf "$TEST_DIR/bb.tar.gz" .
}

teardown() {
	teardown_bundle
}

img() {
	timeout -k 5 120 "$HUTCH" image "$@"
}

# An OCI layout at $TEST_DIR/oci, tag bb: the busybox rootfs, then a layer that deletes
# /bin/ls (a whiteout) and replaces /etc with only motd (an opaque dir).
make_oci() {
	command -v umoci >/dev/null || skip "umoci missing (apt-get install umoci)"
	local b=$TEST_DIR/ub
	umoci init --layout "$TEST_DIR/oci"
	umoci new --image "$TEST_DIR/oci:bb"
	umoci unpack --image "$TEST_DIR/oci:bb" "$b" >/dev/null
	cp -a "$ROOTFS/." "$b/rootfs/"
	umoci repack --image "$TEST_DIR/oci:bb" "$b"
	rm -rf "$b"
	umoci unpack --image "$TEST_DIR/oci:bb" "$b" >/dev/null
	rm -f "$b/rootfs/bin/ls"
	rm -rf "$b/rootfs/etc"
	mkdir "$b/rootfs/etc"
	echo new >"$b/rootfs/etc/motd"
	umoci repack --image "$TEST_DIR/oci:bb" "$b"
	rm -rf "$b"
}

# hostile NAME PYTHON: a tar at $TEST_DIR/NAME.tar built by the python tarfile statements.
hostile() {
	command -v python3 >/dev/null || skip "python3 missing"
	python3 - "$TEST_DIR/$1.tar" <<-EOF
		import io, sys, tarfile
		t = tarfile.open(sys.argv[1], "w")
		def f(name, data=b"evil"):
		    i = tarfile.TarInfo(name); i.size = len(data); t.addfile(i, io.BytesIO(data))
		def l(name, target, kind=tarfile.SYMTYPE):
		    i = tarfile.TarInfo(name); i.type = kind; i.linkname = target; t.addfile(i)
		f("ok")
		$2
		t.close()
	EOF
}

@test "image import: a rootfs tar, listed NAME:TAG first, runs in a sandbox" {
	run -0 img import "$TEST_DIR/bb.tar.gz" --name bb:1
	[[ "$output" == "bb:1 sha256:"*"(rootfs: 1 layers, 1 new"* ]]
	run -0 img ls
	[[ "${lines[0]}" == "bb:1 "*" sha256:"* ]]
	run -0 img inspect bb
	[ "$(echo "$output" | jq -r .name)" = bb:1 ]
	[ "$(echo "$output" | jq -r .architecture)" = "$(echo "$output" | jq -r .config.architecture)" ]
	run -1 timeout 30 "$HUTCH" sandbox --image bb -- /bin/sh -c 'cat /etc/passwd; touch /x'
	[[ "$output" == *"user:x:1000"* ]]
	[[ "$output" == *"Read-only file system"* ]]
}

@test "image import: an OCI layout (dir and tar) stacks whiteouts and opaque dirs" {
	make_oci
	run -0 img import "$TEST_DIR/oci" --name oci:dir
	[[ "$output" == *"(oci: 2 layers, 2 new"* ]]
	tar -C "$TEST_DIR/oci" -cf "$TEST_DIR/oci.tar" .
	run -0 img import "$TEST_DIR/oci.tar" --name oci:tar
	[[ "$output" == *"(oci: 2 layers, 0 new"* ]]
	[ "$(ls "$HUTCH_STORE/layers" | wc -l)" -eq 2 ]
	run -0 timeout 30 "$HUTCH" sandbox --image oci:tar -- /bin/sh -c \
		'ls /etc; test -e /bin/ls && echo ls-present; test -e /bin/cat && echo cat-present'
	[ "${lines[0]}" = motd ]
	[[ "$output" != *ls-present* ]]
	[[ "$output" == *cat-present* ]]
}

@test "image import: a docker-archive takes its RepoTags name" {
	make_oci
	command -v skopeo >/dev/null || skip "skopeo missing (apt-get install skopeo)"
	skopeo copy --quiet "oci:$TEST_DIR/oci:bb" "docker-archive:$TEST_DIR/d.tar:local/bb:v1"
	run -0 img import "$TEST_DIR/d.tar"
	[[ "$output" == "docker.io/local/bb:v1 "*"(docker-archive: 2 layers"* ]]
	run -0 timeout 30 "$HUTCH" sandbox --image docker.io/local/bb:v1 -- cat /etc/motd
	[ "$output" = new ]
}

@test "image import: traversal, symlink and hardlink escapes leave the host untouched" {
	local out=$TEST_DIR/outside
	mkdir "$out"
	hostile trav 'f("../../../../../../..'"$out"'/trav")'
	run -1 img import "$TEST_DIR/trav.tar"
	[[ "$output" == *"'..' would leave the layer"* ]]
	hostile sym 'l("esc", "'"$out"'"); f("esc/through"); l("up", "../../../../.."); f("up/'"${out#/}"'/up")'
	run -0 img import "$TEST_DIR/sym.tar" --name sym
	hostile hard 'l("pw", "/etc/passwd", tarfile.LNKTYPE)'
	run -1 img import "$TEST_DIR/hard.tar"
	[[ "$output" == *"not in this layer"* ]]
	hostile abs 'f("/abs-'"$TAG"'")'
	run -0 img import "$TEST_DIR/abs.tar" --name abs
	[ ! -e "/abs-$TAG" ]
	[ -z "$(ls -A "$out")" ]
	run -0 img ls
	[ "${#lines[@]}" -eq 2 ]
}

@test "image import: a digest mismatch is refused, and so is another architecture" {
	make_oci
	cp -a "$TEST_DIR/oci" "$TEST_DIR/bad"
	local layer
	layer=$(jq -r '.manifests[0].digest' "$TEST_DIR/bad/index.json")
	layer=$(jq -r '.layers[1].digest' "$TEST_DIR/bad/blobs/sha256/${layer#sha256:}")
	tar -czf "$TEST_DIR/bad/blobs/sha256/${layer#sha256:}" -C "$ROOTFS" etc
	run -1 img import "$TEST_DIR/bad" --name bad
	[[ "$output" == *"digest mismatch"* || "$output" == *"diff_id mismatch"* ]]
	run -0 img ls
	[ -z "$output" ]
	umoci config --image "$TEST_DIR/oci:bb" --architecture arm64
	run -1 img import "$TEST_DIR/oci" --name arm
	[[ "$output" == *"image is for linux/arm64, this host is linux/"* ]]
}

@test "image import: an interrupted import leaves nothing visible; concurrent imports work" {
	make_oci
	(exec "$HUTCH" image import "$TEST_DIR/oci" --name killed) &
	local pid=$!
	sleep 0.02
	kill -9 "$pid" 2>/dev/null || true
	wait "$pid" || true
	run -0 img ls
	[[ "$output" != *killed* || "$output" == "killed:latest "* ]]
	# by pid: bats' own timeout sleeper is a background job too (%1 may be it)
	img import "$TEST_DIR/oci" --name c:1 >"$TEST_DIR/c1" &
	local p1=$!
	img import "$TEST_DIR/oci" --name c:2 >"$TEST_DIR/c2" &
	local p2=$!
	wait "$p1" && wait "$p2"
	run -0 img ls
	[[ "$output" == *"c:1 "* && "$output" == *"c:2 "* ]]
	[ "$(ls "$HUTCH_STORE/layers" | wc -l)" -eq 2 ]
	img rm killed 2>/dev/null || true
	img rm c:1 c:2
	run -0 img prune
	[ -z "$(ls -A "$HUTCH_STORE/layers")" ]
	[ -z "$(ls -A "$HUTCH_STORE/tmp")" ]
}

@test "image build: --run steps, a cache hit for the same inputs, a new tag for new ones" {
	img import "$TEST_DIR/bb.tar.gz" --name base:1
	# stdout: the result alone (TAG=$(hutch image build ...)); the steps' output on stderr
	run -0 --separate-stderr img build --from base:1 --run 'echo one >/built; echo said' \
		--run 'rm /bin/vi' --tag app
	local tag=$output
	[[ "$tag" == app:* ]] && [[ "$tag" != *" "* ]]
	[[ "$stderr" == *said* ]] && [[ "$stderr" == *"build: built $tag sha256:"* ]]
	run -0 --separate-stderr img build --from base:1 --run 'echo one >/built; echo said' \
		--run 'rm /bin/vi' --tag app
	[ "$output" = "$tag" ]
	[[ "$stderr" == *"build: $tag (cached)"* ]]
	run -0 img status --from base:1 --run 'echo one >/built; echo said' --run 'rm /bin/vi' \
		--tag app
	[ "$output" = "$tag built" ]
	run -1 img status --from base:1 --run 'echo two >/built' --tag app
	[[ "$output" == *" not built" ]]
	run -1 timeout 30 "$HUTCH" sandbox --image "$tag" -- /bin/sh -c 'cat /built; ls /bin/vi'
	[[ "${lines[0]}" == one ]]
	[[ "$output" == *"No such file"* ]]
	[ ! -e "$HUTCH_STORE/layers/$(img inspect "$tag" | jq -r '.layers[1]' | cut -d: -f2)/root/.hutch-out" ]
	run -0 img inspect "$tag"
	[ "$(echo "$output" | jq -r '.config.config.Labels["org.hutch.build.inputs"]')" = "${tag#app:}" ]
	run -0 --separate-stderr img build --from base:1 --run 'echo two >/built' --tag app
	[[ "$output" != "$tag" ]]
	run -0 --separate-stderr img build --from base:1 --run 'echo one >/built; echo said' \
		--run 'rm /bin/vi' --tag app --no-cache
	[ "$output" = "$tag" ]
	[[ "$stderr" == *"build: built $tag sha256:"* ]]
}

# ca-certificates' links have accented names: the layer's tar (its diff_id) carries names as
# bytes, UTF-8 or not, whatever the locale.
@test "image build: a layer's names that are not ASCII, or not UTF-8, are committed as they are" {
	img import "$TEST_DIR/bb.tar.gz" --name base:1
	run -0 --separate-stderr img build --from base:1 --tag names \
		--run 'touch /Főtanúsítvány.pem; ln -s Főtanúsítvány.pem /988a38cb.0' \
		--run 'touch "/bad-$(printf "\377")"'
	local tag=$output
	run -0 timeout 30 "$HUTCH" sandbox --image "$tag" -- /bin/sh -c \
		'readlink /988a38cb.0; ls / | grep -c "^bad-"'
	[ "${lines[0]}" = Főtanúsítvány.pem ]
	[ "${lines[1]}" = 1 ]
}

@test "image build: a real Debian package into a debootstrap'd base (optional)" {
	[ -n "${HUTCH_IT_DEBOOTSTRAP:-}" ] ||
		skip "set HUTCH_IT_DEBOOTSTRAP=1: debootstrap + apt take minutes and need the mirror"
	command -v debootstrap >/dev/null || skip "debootstrap missing"
	debootstrap --variant=minbase bookworm "$TEST_DIR/deb" http://deb.debian.org/debian >/dev/null ||
		skip "the Debian mirror is not reachable"
	tar -C "$TEST_DIR/deb" -cf "$TEST_DIR/deb.tar" .
	img import "$TEST_DIR/deb.tar" --name deb:12
	run -0 timeout 600 "$HUTCH" image build --from deb:12 --package hello --tag debhello
	run -0 timeout 30 "$HUTCH" sandbox --image "${lines[-1]%% *}" -- hello
	[ "$output" = "Hello, world!" ]
}

@test "bundle --image: config.json from the image config, rootfs with whiteouts applied" {
	make_oci
	umoci config --image "$TEST_DIR/oci:bb" --config.env FOO=bar --config.workingdir /etc \
		--config.cmd /bin/sh --config.cmd -c \
		--config.cmd 'echo "$FOO $(pwd) $(id -u)"; ls /etc; test -e /bin/ls || echo no-ls'
	img import "$TEST_DIR/oci" --name app:1
	local b=$TEST_DIR/app-bundle
	run -0 "$HUTCH" bundle --image app:1 "$b"
	[ "$(jq -r .process.terminal "$b/config.json")" = false ]
	[ "$(jq -r .process.cwd "$b/config.json")" = /etc ]
	[ -e "$b/rootfs/bin/cat" ] && [ ! -e "$b/rootfs/bin/ls" ] && [ ! -e "$b/rootfs/etc/passwd" ]
	update_config_in "$b" '.linux.cgroupsPath = $cg | .process.env += ["HUTCH_IT_TAG=" + $tag]' \
		--arg cg "$TAG-app" --arg tag "$TAG"
	run -0 hutch run --bundle "$b" "$ID"
	[ "${lines[0]}" = "bar /etc 0" ]
	[ "${lines[1]}" = motd ]
	[ "${lines[2]}" = no-ls ]
}

@test "bundle --image: a name resolved in the image's /etc/passwd; a non-empty DIR refused" {
	img import "$TEST_DIR/bb.tar.gz" --name bb:1
	mkdir -p "$TEST_DIR/full" "$TEST_DIR/empty"
	touch "$TEST_DIR/full/x"
	run -1 "$HUTCH" bundle --image bb:1 "$TEST_DIR/full"
	[[ "$output" == *"exists and is not empty"* ]]
	[ "$(ls -A "$TEST_DIR/full")" = x ]
	run -1 "$HUTCH" bundle "$TEST_DIR/empty"
	[[ "$output" == *"--image NAME is required"* ]]
	run -1 "$HUTCH" bundle --image missing "$TEST_DIR/empty"
	[[ "$output" == *"--image missing"* ]]
	[ -z "$(ls -A "$TEST_DIR/empty")" ]
	command -v umoci >/dev/null || skip "umoci missing (apt-get install umoci)"
	umoci init --layout "$TEST_DIR/u"
	umoci new --image "$TEST_DIR/u:x"
	umoci unpack --image "$TEST_DIR/u:x" "$TEST_DIR/ub" >/dev/null
	cp -a "$ROOTFS/." "$TEST_DIR/ub/rootfs/"
	umoci repack --image "$TEST_DIR/u:x" "$TEST_DIR/ub"
	umoci config --image "$TEST_DIR/u:x" --config.user user:nogroup
	img import "$TEST_DIR/u" --name u:x
	run -0 "$HUTCH" bundle --image u:x "$TEST_DIR/empty"
	[ "$(jq -c .process.user "$TEST_DIR/empty/config.json")" = '{"uid":1000,"gid":65534}' ]
	[ "$(jq -c .process.args "$TEST_DIR/empty/config.json")" = '["sh"]' ]
}

@test "sandbox --image: a copy where overlayfs is unavailable (HUTCH_NO_OVERLAY=1), and said so" {
	img import "$TEST_DIR/bb.tar.gz" --name bb:1
	run -1 --separate-stderr env HUTCH_NO_OVERLAY=1 timeout 30 "$HUTCH" sandbox --image bb:1 \
		--report "$TEST_DIR/r.json" -- /bin/sh -c 'grep ^user: /etc/passwd; touch /x'
	[[ "$output" == "user:x:1000"* ]]
	[[ "$stderr" == *"overlayfs unavailable, the image was copied"* ]]
	[[ "$stderr" == *"Read-only file system"* ]]
	[ "$(jq -r .isolation.rootfs "$TEST_DIR/r.json")" = "copy (overlayfs unavailable)" ]
	run -0 timeout 30 "$HUTCH" sandbox --image bb:1 --report "$TEST_DIR/r2.json" -- true
	[ "$(jq -r .isolation.rootfs "$TEST_DIR/r2.json")" = overlay ]
	# The report names the image and the digest the name stood for.
	check_report "$TEST_DIR/r2.json"
	local digest
	digest=$(img inspect bb:1 | jq -r .digest)
	jq -e --arg d "$digest" '.image.name == "bb:1" and .image.digest == $d
		and (.image.digest | startswith("sha256:"))' "$TEST_DIR/r2.json"
}

@test "image import - (stdin, with --name), tag, ls NAME / -q / --format json, rm NAME:*" {
	run -1 img import - <"$TEST_DIR/bb.tar.gz"
	[[ "$output" == *"import -: needs --name"* ]]
	run -0 img import --name bb:1 - <"$TEST_DIR/bb.tar.gz"
	[[ "$output" == "bb:1 sha256:"* ]]
	[ -z "$(ls -A "$HUTCH_STORE/tmp")" ] # the copy of stdin went with the import
	local digest
	digest=$(img inspect bb:1 | jq -r .digest)
	img tag bb:1 bb:2
	img tag bb:1 other:x
	run -1 img tag nosuch:1 a:b
	[[ "$output" == *"nosuch"*"not in the store"* ]]
	run -0 img ls bb
	[ "$(awk '{ print $1 }' <<<"$output" | sort | tr '\n' ' ')" = "bb:1 bb:2 " ]
	run -0 img ls -q
	[ "$output" = "$digest" ] # three names, one image
	run -0 img ls --format json other:x
	jq -e --arg d "$digest" 'length == 1 and .[0].name == "other:x" and .[0].digest == $d
		and (.[0].size > 0)' <<<"$output"
	run -1 img ls --format yaml
	[[ "$output" == *"--format yaml: expected table or json"* ]]
	img rm 'bb:*'
	run -0 img ls --format json
	jq -e '[.[].name] == ["other:x"]' <<<"$output"
	run -1 img rm 'bb:*'
	[[ "$output" == *"rm bb:*: no image name matches"* ]]
	run -0 timeout 30 "$HUTCH" sandbox --image other:x -- true
}
