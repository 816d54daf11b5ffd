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
	run -0 img inspect bb:1
	[ "$(echo "$output" | jq -r .name)" = bb:1 ]
	[ "$(echo "$output" | jq -r .architecture)" = "$(echo "$output" | jq -r .config.architecture)" ]
	run -1 timeout 30 "$HUTCH" sandbox --image bb:1 -- /bin/sh -c 'cat /etc/passwd; touch /x'
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

# A plain root filesystem directory (a debootstrap, a busybox tree) is the layer GNU tar makes
# of it: the same digest as the pipeline the docs give, with owners, modes, hard links,
# xattrs (security.capability too), device nodes in the layer, no symlink followed, and its
# zero blocks holes again.
@test "image import: a directory is the layer tar makes of it, the same digest as the pipeline" {
	local d=$TEST_DIR/tree
	cp -a "$ROOTFS" "$d"
	cp "$BUSYBOX" "$d/bin/capped"
	setcap cap_net_raw+ep "$d/bin/capped"
	python3 -c 'import os, sys; os.setxattr(sys.argv[1], "user.note", b"kept")' "$d/bin/capped"
	ln "$d/bin/busybox" "$d/bin/linked"
	chown 1234:5678 "$d/bin/linked"
	chmod 4751 "$d/bin/linked"
	truncate -s 8M "$d/sparse"
	echo end >>"$d/sparse"
	mknod "$d/dev/null2" c 1 3
	ln -s /etc/shadow "$d/escape"
	# GNU tar records access times: one read first, so that both tars see the same ones
	# (relatime then leaves them for a day).
	tar -C "$d" --numeric-owner --xattrs -cf - . | cat >/dev/null # (-f /dev/null reads no data)
	run -0 img import "$d" --name dir:1
	[[ "$output" == *"dir:1 sha256:"*"(directory: 1 layers, 1 new"* ]]
	tar -C "$d" --numeric-owner --xattrs -cf - . | img import --name pipe:1 -
	local a b
	a=$(img inspect dir:1 | jq -r '.layers[0]')
	b=$(img inspect pipe:1 | jq -r '.layers[0]')
	[ "$a" = "$b" ]
	local l=$HUTCH_STORE/layers/${a#sha256:}/root
	[ "$(getcap "$l/bin/capped")" = "$l/bin/capped cap_net_raw=ep" ]
	[ "$(python3 -c 'import os, sys; print(os.getxattr(sys.argv[1], "user.note").decode())' "$l/bin/capped")" = kept ]
	[ "$(stat -c %i "$l/bin/linked")" = "$(stat -c %i "$l/bin/busybox")" ]
	[ "$(stat -c %u:%g:%a "$l/bin/linked")" = 1234:5678:4751 ]
	[ "$(readlink "$l/escape")" = /etc/shadow ]
	cmp "$l/sparse" "$d/sparse"
	[ "$(stat -c %b "$l/sparse")" -lt 1024 ] # 8 MiB of zeros are holes, not 16384 blocks
	# A symlink to the directory is followed only where root alone could have made it; a
	# FIFO is refused at once, not waited on; a missing path says so.
	mkdir -m 1777 "$TEST_DIR/shared"
	ln -s "$d" "$TEST_DIR/shared/link"
	chown -h 1000:1000 "$TEST_DIR/shared/link"
	run -1 img import "$TEST_DIR/shared/link" --name link:1
	[[ "$output" == *"import"*"link"* ]]
	mkfifo "$TEST_DIR/fifo"
	run -1 timeout 10 "$HUTCH" image import "$TEST_DIR/fifo" --name fifo:1
	[[ "$output" == *"not a file or a directory"* ]]
	run -1 img import "$TEST_DIR/nosuch"
	[[ "$output" == *"nosuch"*"No such file or directory"* ]]
	[ -z "$(ls -A "$HUTCH_STORE/tmp")" ]
	run -0 timeout 30 "$HUTCH" sandbox --image dir:1 -- /bin/sh -c 'wc -c </sparse'
	[ "$output" = $((8 * 1024 * 1024 + 4)) ]
}

@test "image import: a debootstrap tree: its directory's layer is the pipeline's, digest for digest" {
	load ../debootstrap
	local base a b
	base=$(debootstrap_image) || skip "no debootstrap tree (needs debootstrap and the Debian mirror)"
	tar -C "$base" --numeric-owner --xattrs -cf - . | cat >/dev/null # the same access times
	run -0 img import "$base" --name deb:dir
	[[ "$output" == *"deb:dir sha256:"*"(directory: 1 layers, 1 new"* ]]
	tar -C "$base" --numeric-owner --xattrs -cf - . | img import --name deb:pipe -
	a=$(img inspect deb:dir | jq -r '.layers[0]')
	b=$(img inspect deb:pipe | jq -r '.layers[0]')
	[ "$a" = "$b" ]
	run -0 timeout 60 "$HUTCH" sandbox --image deb:dir -- cat /etc/debian_version
	[[ "$output" == 12.* ]]
}

@test "image import: a docker-archive takes its RepoTags name" {
	make_oci
	command -v skopeo >/dev/null || skip "skopeo missing (apt-get install skopeo)"
	skopeo copy --quiet "oci:$TEST_DIR/oci:bb" "docker-archive:$TEST_DIR/d.tar:local/bb:v1"
	run -0 img import "$TEST_DIR/d.tar"
	[[ "$output" == "docker.io/local/bb:v1 "*"(docker-archive: 2 layers"* ]]
	run -0 timeout 30 "$HUTCH" sandbox --image docker.io/local/bb:v1 -- cat /etc/motd
	[ "$output" = new ]
	# Docker's names: the short name finds it, ls shows and matches it short and full.
	run -0 timeout 30 "$HUTCH" sandbox --image local/bb:v1 -- cat /etc/motd
	[ "$output" = new ]
	run -0 img ls local/bb
	[[ "$output" == "local/bb:v1 "* ]]
	run -0 img ls 'docker.io/local/*:v1'
	[[ "$output" == "local/bb:v1 "* ]]
	run -0 img ls --format json
	jq -e '.[0].name == "local/bb:v1" and .[0].full_name == "docker.io/local/bb"' <<<"$output"
	# No tag is :latest, as for docker, and the error says which tags there are.
	run -125 timeout 30 "$HUTCH" sandbox --image local/bb -- true
	[[ "$output" == *"image local/bb: not in the store"*"local/bb has v1 (no tag is :latest)"* ]]
	local digest
	digest=$(img inspect local/bb:v1 | jq -r .digest)
	run -0 timeout 30 "$HUTCH" sandbox --image "local/bb@$digest" -- cat /etc/motd
	[ "$output" = new ]
}

# A store written before names were stored full: an unqualified name keeps resolving.
@test "image names: a name stored unqualified resolves short and full; tagging it again stores it full" {
	run -0 img import --name bb:1 - <"$TEST_DIR/bb.tar.gz"
	mv "$HUTCH_STORE/names/docker.io%2Flibrary%2Fbb:1" "$HUTCH_STORE/names/bb:1"
	run -0 timeout 30 "$HUTCH" sandbox --image bb:1 -- true
	run -0 timeout 30 "$HUTCH" sandbox --image docker.io/library/bb:1 -- true
	run -0 img ls bb
	[[ "$output" == "bb:1 "* ]]
	img tag bb:1 bb:1
	[ ! -e "$HUTCH_STORE/names/bb:1" ]
	[ -e "$HUTCH_STORE/names/docker.io%2Flibrary%2Fbb:1" ]
	[ "$(img ls | wc -l)" = 1 ]
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
	[[ "$output" == *"the index has no image for linux/$(host_arch)"*"it offers linux/arm64 (--platform picks one)"* ]]
}

host_arch() {
	case $(uname -m) in
	x86_64) echo amd64 ;;
	aarch64) echo arm64 ;;
	*) uname -m ;;
	esac
}

# skopeo's oci: layouts give their manifests no platform: the manifest's config says it. The
# host's is taken wherever it is in the index; --platform takes another (with a warning); a
# platform the index lacks is an error listing what it has.
@test "image import: the index's image for this host, --platform for another, an error listing what there is" {
	make_oci
	local other=arm64
	[ "$(host_arch)" = arm64 ] && other=amd64
	umoci config --image "$TEST_DIR/oci:bb" --architecture "$other" --tag foreign
	# the other platform's first, and no descriptor says its platform
	jq '.manifests |= (reverse | map(del(.platform)))' "$TEST_DIR/oci/index.json" >"$TEST_DIR/i"
	mv "$TEST_DIR/i" "$TEST_DIR/oci/index.json"
	[ "$(jq -r '.manifests[0].annotations["org.opencontainers.image.ref.name"]' "$TEST_DIR/oci/index.json")" = foreign ]
	run -0 img import "$TEST_DIR/oci" --name multi:x
	[ "$(img inspect multi:x | jq -r .architecture)" = "$(host_arch)" ]
	run -0 img import "$TEST_DIR/oci" --name multi:other --platform "linux/$other"
	[[ "$output" == *"warning: --platform linux/$other: this host is linux/$(host_arch)"*"will not run here"* ]]
	[ "$(img inspect multi:other | jq -r .architecture)" = "$other" ]
	run -1 img import "$TEST_DIR/oci" --name multi:s390x --platform linux/s390x
	[[ "$output" == *"the index has no image for linux/s390x; it offers linux/$other, linux/$(host_arch) (--platform picks one)"* ]]
	run -1 img import "$TEST_DIR/oci" --platform linux
	[[ "$output" == *"--platform linux: expected OS/ARCH[/VARIANT]"* ]]
	# a rootfs tar gets the platform asked for
	run -0 img import "$TEST_DIR/bb.tar.gz" --name rootfs:other --platform "linux/$other"
	[ "$(img inspect rootfs:other | jq -r .architecture)" = "$other" ]
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

# prune_until_gone DIR: prune until DIR is gone, for up to 10 s (the teardown helper a
# sandbox leaves behind holds its pin until the overlay on the layers is gone).
prune_until_gone() {
	for _ in $(seq 50); do
		img prune >/dev/null
		[ -e "$1" ] || return 0
		sleep 0.2
	done
	echo "$1: still there" >&2
	return 1
}

# Upkeep needs no window: a running sandbox holds a pin in the store (not the store's lock),
# so prune runs beside it, keeps what it runs on, and takes it once it is gone; a pin whose
# hutch was killed is a stale one, which prune removes.
@test "image prune: runs beside a sandbox, keeps what it runs on, takes it after; a killed one's pin goes" {
	img import "$TEST_DIR/bb.tar.gz" --name bb:1
	local layer
	layer=$(img inspect bb:1 | jq -r '.layers[0]')
	layer=$HUTCH_STORE/layers/${layer#sha256:}
	(timeout 60 "$HUTCH" --root "$HUTCH_ROOT" sandbox --image bb:1 --timeout 50 -- \
		sh -c 'mkfifo /tmp/go; cat /tmp/go >/dev/null; cat /etc/passwd >/dev/null &&
			echo still-reads' >"$TEST_DIR/out" 2>&1 <&-) &
	local pid=$!
	for _ in $(seq 100); do
		[ -n "$(ls -A "$HUTCH_STORE/pins" 2>/dev/null)" ] && break
		sleep 0.1
	done
	[ "$(ls "$HUTCH_STORE/pins" | wc -l)" = 1 ]
	img rm bb:1
	run -0 timeout 30 "$HUTCH" image prune
	[ -d "$layer" ]
	# the command still reads its image
	local init
	for _ in $(seq 100); do
		init=$(pgrep -f '^cat /tmp/go$' | head -1) # the sandbox's cat alone
		[ -n "$init" ] && break
		sleep 0.1
	done
	echo x >"/proc/$init/root/tmp/go"
	wait "$pid"
	grep -qx still-reads "$TEST_DIR/out"
	[ -z "$(ls -A "$HUTCH_STORE/pins")" ] # its hutch took its pin along
	prune_until_gone "$layer"
	# pins are named at random and unlinked by their holder: the same pid again and again
	# (a pid namespace each) leaves none behind and never runs out of names
	img import "$TEST_DIR/bb.tar.gz" --name bb:5
	local i
	for i in 1 2 3; do # a root each: sandbox ids (sb-PID) would clash in one
		unshare -p -f --mount-proc timeout 30 "$HUTCH" --root "$HUTCH_ROOT.$i" sandbox \
			--image bb:5 -- true
		[ -z "$(ls -A "$HUTCH_STORE/pins")" ]
	done
	img rm bb:5
	[ -z "$(ls -A "$HUTCH_STORE/pins")" ]
	# a named session's pin is its supervisor's: it outlives the hutch that started it
	img import "$TEST_DIR/bb.tar.gz" --name bb:3
	layer=$(img inspect bb:3 | jq -r '.layers[0]')
	layer=$HUTCH_STORE/layers/${layer#sha256:}
	timeout 60 "$HUTCH" --root "$HUTCH_ROOT" sandbox --image bb:3 --name pinned --detach -- sleep 50
	img rm bb:3
	run -0 img prune
	[ -d "$layer" ]
	run -0 timeout 30 "$HUTCH" --root "$HUTCH_ROOT" sandbox exec pinned -- cat /etc/passwd
	timeout 30 "$HUTCH" --root "$HUTCH_ROOT" sandbox rm -f pinned
	prune_until_gone "$layer"
	# SIGKILL of hutch: its pin is stale, and goes with what only it kept
	img import "$TEST_DIR/bb.tar.gz" --name bb:2
	(exec timeout 60 "$HUTCH" --root "$HUTCH_ROOT" sandbox --image bb:2 --timeout 50 -- sleep 40 \
		>/dev/null 2>&1 <&-) &
	pid=$!
	for _ in $(seq 100); do
		[ -n "$(ls -A "$HUTCH_STORE/pins" 2>/dev/null)" ] && break
		sleep 0.1
	done
	img rm bb:2
	pkill -KILL -f "^$HUTCH --root $HUTCH_ROOT sandbox --image bb:2"
	wait "$pid" || true
	run -0 img prune
	[ -z "$(ls -A "$HUTCH_STORE/pins")" ]
	[ -z "$(ls -A "$HUTCH_STORE/layers")" ]
	# the next sandbox's sweep takes what the killed one left in its root
	timeout 30 "$HUTCH" --root "$HUTCH_ROOT" sandbox --image "$ROOTFS" -- true
	# a store no pin can be written in (read-only): the sandbox holds its lock instead
	img import "$TEST_DIR/bb.tar.gz" --name bb:4
	mkdir "$TEST_DIR/ro"
	mount --bind "$HUTCH_STORE" "$TEST_DIR/ro"
	track_mount "$TEST_DIR/ro"
	mount -o remount,bind,ro "$TEST_DIR/ro"
	run -0 env HUTCH_STORE="$TEST_DIR/ro" timeout 30 "$HUTCH" --root "$HUTCH_ROOT" \
		sandbox --image bb:4 -- cat /etc/passwd
	[[ "$output" == *root:x:0* ]]
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

@test "image import and build --progress: a line a layer (plain), one redrawn (tty), none in a script" {
	run -0 --separate-stderr img import "$TEST_DIR/bb.tar.gz" --name p:1 --progress plain
	[[ "$stderr" == "import: layer 1/1 sha256:"*" "*"MB" ]]
	run -0 --separate-stderr img import "$TEST_DIR/bb.tar.gz" --name p:2 --progress tty
	[[ "$stderr" == $'\r\e[Kimport '*": layer 1/1, "*$'\r\e[K' ]]
	run -0 --separate-stderr img import "$TEST_DIR/bb.tar.gz" --name p:3 # auto: no terminal
	[ -z "$stderr" ]
	run -1 img import "$TEST_DIR/bb.tar.gz" --progress fancy
	[[ "$output" == *"--progress fancy: expected auto, tty, plain or none"* ]]
	run -0 --separate-stderr img build --from p:1 --run true --tag pg --network none \
		--progress plain
	[[ "$stderr" == *"build: running 1 step(s)"* ]]
	run -0 --separate-stderr img build --from p:1 --run 'true ' --tag pg --network none
	[[ "$stderr" != *"step(s)"* && "$stderr" == *"build: built"* ]]
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
