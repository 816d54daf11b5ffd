#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
#
# Image content as the attacker: layers that expand without bound (zeros, which gzip shrinks a
# thousandfold; too many entries), sparse files that must stay cheap, and device nodes that
# `hutch bundle` must not leave on the host. Every hostile layer is made here by python3's
# tarfile and gzip; limits are lowered with the flags so that each test writes little.

load ../integration/helpers
bats_require_minimum_version 1.5.0

setup() {
	command -v python3 >/dev/null || skip "python3 missing"
	setup_tmp
	export HUTCH_STORE=$TEST_DIR/store
}

teardown() {
	teardown_bundle
}

img() {
	timeout -k 5 120 "$HUTCH" image "$@"
}

# layer PATH PYTHON: a gzip'd tar at PATH from the tarfile statements (f NAME [DATA],
# zeros NAME SIZE [BYTE] (of BYTE: default 0), node NAME TYPE [MAJOR MINOR]); prints the sha256 of the uncompressed tar.
layer() {
	python3 - "$1" <<-EOF
		import gzip, hashlib, io, sys, tarfile
		class Out:
		    def __init__(s, path): s.h = hashlib.sha256(); s.g = gzip.open(path, "wb", 6)
		    def write(s, b): s.h.update(b); s.g.write(b); return len(b)
		class Zeros(io.RawIOBase):
		    def __init__(s, n, byte=0): s.n = n; s.byte = byte
		    def readable(s): return True
		    def readinto(s, b):
		        k = min(len(b), s.n); b[:k] = bytes([s.byte]) * k; s.n -= k; return k
		o = Out(sys.argv[1])
		t = tarfile.open(fileobj=o, mode="w|")
		def f(name, data=b"x", mode=0o644):
		    i = tarfile.TarInfo(name); i.size = len(data); i.mode = mode
		    t.addfile(i, io.BytesIO(data))
		def zeros(name, size, byte=0):
		    i = tarfile.TarInfo(name); i.size = size
		    t.addfile(i, io.BufferedReader(Zeros(size, byte), 1 << 20))
		def node(name, kind, major=0, minor=0):
		    i = tarfile.TarInfo(name); i.type = kind; i.mode = 0o666
		    i.devmajor = major; i.devminor = minor; t.addfile(i)
		$2
		t.close(); o.g.close()
		print("sha256:" + o.h.hexdigest())
	EOF
}

# docker_dir DIR DIFF_ID...: a docker-archive directory (manifest.json, config.json) around
# the layers DIR/l1.tar.gz, DIR/l2.tar.gz, ... already there.
docker_dir() {
	local dir=$1
	shift
	python3 - "$dir" "$@" <<-'EOF'
		import json, sys
		d, ids = sys.argv[1], sys.argv[2:]
		json.dump({"os": "linux", "rootfs": {"type": "layers", "diff_ids": ids}},
		          open(d + "/config.json", "w"))
		json.dump([{"Config": "config.json", "RepoTags": ["hostile/multi:1"],
		            "Layers": ["l%d.tar.gz" % (i + 1) for i in range(len(ids))]}],
		          open(d + "/manifest.json", "w"))
	EOF
}

# Every file and directory of the store, one a line: what a failed import must not change.
store_files() {
	find "$HUTCH_STORE" | sort
}

@test "images: a gzip'd layer of zeros past --max-size is refused, one line, nothing left" {
	layer "$TEST_DIR/ok.tar.gz" 'f("etc/motd", b"hello")' >/dev/null
	img import "$TEST_DIR/ok.tar.gz" --name ok:1
	local before
	before=$(store_files)
	layer "$TEST_DIR/zeros.tar.gz" 'zeros("big", 100 << 20)' >/dev/null
	[ "$(stat -c %s "$TEST_DIR/zeros.tar.gz")" -lt $((1 << 20)) ] # ~100 KB for 100 MB
	run -1 img import "$TEST_DIR/zeros.tar.gz" --name zeros:1 --max-size 64m
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == "hutch: error: "*"unpacked size passed 64MiB (--max-size raises the limit)" ]]
	[ "$(store_files)" = "$before" ]
	# The flag raises it, and the store then holds the layer.
	run -0 img import "$TEST_DIR/zeros.tar.gz" --name zeros:1 --max-size 128m
	[ "$(stat -c %s "$HUTCH_STORE"/layers/*/root/big)" -eq $((100 << 20)) ]
}

@test "images: a later layer past the limit leaves none of the image's layers in the store" {
	local d=$TEST_DIR/multi id1 id2 before
	mkdir "$d"
	id1=$(layer "$d/l1.tar.gz" 'f("bin/tool", b"#!/bin/sh\n", 0o755)')
	id2=$(layer "$d/l2.tar.gz" 'zeros("var/cache/blob", 100 << 20)')
	docker_dir "$d" "$id1" "$id2"
	img ls >/dev/null # makes the store
	before=$(store_files)
	run -1 img import "$d" --max-size 64m
	[[ "$output" == *"l2.tar.gz: unpacked size passed 64MiB (--max-size raises the limit)" ]]
	[ "$(store_files)" = "$before" ] # l1 was unpacked, and is gone too
	run -0 img import "$d" --max-size 0
	[[ "$output" == *"hostile/multi:1 "*"(docker-archive: 2 layers, 2 new"* ]]
}

@test "images: more entries than --max-entries are refused, nothing left" {
	layer "$TEST_DIR/many.tar.gz" 'for n in range(200): f("d/f%d" % n)' >/dev/null
	img ls >/dev/null
	local before
	before=$(store_files)
	run -1 img import "$TEST_DIR/many.tar.gz" --name many:1 --max-entries 100
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == *"more than 100 entries (--max-entries raises the limit)" ]]
	[ "$(store_files)" = "$before" ]
	run -0 img import "$TEST_DIR/many.tar.gz" --name many:1 --max-entries 300
	# One deep name makes a directory per component: they count, or a few KB of names would
	# make thousands of directories.
	layer "$TEST_DIR/deep.tar.gz" 'f("a/" * 400 + "leaf")' >/dev/null
	run -1 img import "$TEST_DIR/deep.tar.gz" --name deep:1 --max-entries 100
	[[ "$output" == *"more than 100 entries (--max-entries raises the limit)" ]]
	run -1 img import "$TEST_DIR/many.tar.gz" --name x --max-entries lots
	[[ "$output" == *"--max-entries lots: expected a whole number (0: no limit)" ]]
	run -1 img import "$TEST_DIR/many.tar.gz" --name x --max-size 12q
	[[ "$output" == *"--max-size 12q: not a size"* ]]
}

@test "images: the issue's bomb, 1 MB of gzip for 1.1 GB, is refused by default (--max-ratio)" {
	layer "$TEST_DIR/bomb.tar.gz" 'zeros("big", 1100 * 1000 * 1000)' >/dev/null
	[ "$(stat -c %s "$TEST_DIR/bomb.tar.gz")" -lt $((2 << 20)) ]
	run -1 img import "$TEST_DIR/bomb.tar.gz" --name bomb:1
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == *"expands more than 100 times ("*"--max-ratio raises the limit)" ]]
	[ -z "$(find "$HUTCH_STORE/layers" "$HUTCH_STORE/tmp" -mindepth 1)" ]
}

@test "images: the default size is half the store's free space, and its reserve is kept" {
	requires_host_root
	mkdir "$HUTCH_STORE"
	mount -t tmpfs -o size=64m,mode=0700 tmpfs "$HUTCH_STORE"
	track_mount "$HUTCH_STORE"
	# Ones, not zeros: blocks of zeros are unpacked as holes, which take no space.
	layer "$TEST_DIR/zeros.tar.gz" 'zeros("big", 100 << 20, 1)' >/dev/null
	run -1 img import "$TEST_DIR/zeros.tar.gz" --name zeros:1
	[[ "$output" == *"unpacked size passed 32MiB, half the free space of the store's filesystem at the start (--max-size raises the limit)" ]]
	# No size limit: the reserve (5% of 64 MiB here, 1 GiB on a large disk) still holds.
	run -1 img import "$TEST_DIR/zeros.tar.gz" --name zeros:1 --max-size 0
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == *"the store's filesystem is down to "*" free, below the 3.2MiB hutch keeps free (free some space, or use a --store on another filesystem)" ]]
	[ -z "$(find "$HUTCH_STORE/layers" "$HUTCH_STORE/tmp" -mindepth 1)" ]
	[ "$(df -k --output=used "$HUTCH_STORE" | tail -1)" -lt 1024 ]
}

@test "images: a sparse file larger than --max-size imports when its blocks fit" {
	mkdir "$TEST_DIR/sp"
	truncate -s 200M "$TEST_DIR/sp/sparse"
	dd if=/dev/urandom of="$TEST_DIR/sp/sparse" bs=1M count=1 seek=100 conv=notrunc status=none
	tar -C "$TEST_DIR/sp" --sparse -czf "$TEST_DIR/sparse.tar.gz" .
	run -0 img import "$TEST_DIR/sparse.tar.gz" --name sparse:1 --max-size 64m
	local f
	f=$(echo "$HUTCH_STORE"/layers/*/root/sparse)
	[ "$(stat -c %s "$f")" -eq $((200 << 20)) ]
	[ "$(($(stat -c %b "$f") * 512))" -le $((2 << 20)) ] # the holes stayed holes
	cmp "$f" "$TEST_DIR/sp/sparse"
}

@test "images: bundle never makes the image's device nodes; DIR is the caller's alone" {
	requires_host_root
	layer "$TEST_DIR/dev.tar.gz" '
f("bin/suid", b"x", 0o4755)
node("disk", tarfile.BLKTYPE, 254, 0)
node("dev/mem", tarfile.CHRTYPE, 1, 1)
node("run/fifo", tarfile.FIFOTYPE)' >/dev/null
	run -0 --separate-stderr img import "$TEST_DIR/dev.tar.gz" --name dev:1
	# The store keeps none; a layer an older hutch unpacked as root may hold them: planted.
	[[ "$stderr" == *"warning: 2 device node(s) of the image not created"* ]]
	local l
	l=$(echo "$HUTCH_STORE"/layers/*/root)
	[ -z "$(find "$l" -type b -o -type c)" ]
	mknod -m 666 "$l/disk" b 254 0
	mknod -m 666 "$l/dev/mem" c 1 1
	[ "$(stat -c %a "$HUTCH_STORE" "$HUTCH_STORE/layers" | sort -u)" = 700 ]
	local b=$TEST_DIR/b
	run -0 --separate-stderr "$HUTCH" bundle --image dev:1 "$b"
	[[ "$stderr" == *"warning: bundle: 2 device node(s) of the image not created"* ]]
	[ -z "$(find "$b" -type b -o -type c)" ]
	[ "$(stat -c %a "$b")" = 700 ]
	[ "$(stat -c %a "$b/rootfs/bin/suid")" = 4755 ] # for the runtime, behind DIR's 0700
	[ -p "$b/rootfs/run/fifo" ]
	# An empty DIR others may enter loses their access first; one another user owns is
	# refused, with nothing written.
	mkdir -m 0755 "$TEST_DIR/open" "$TEST_DIR/theirs"
	run -0 --separate-stderr "$HUTCH" bundle --image dev:1 "$TEST_DIR/open"
	[[ "$stderr" == *"DIR $TEST_DIR/open was 0755, now 0700"* ]]
	[ "$(stat -c %a "$TEST_DIR/open")" = 700 ]
	[ -z "$(find "$TEST_DIR/open" -type b -o -type c)" ]
	chown 65534 "$TEST_DIR/theirs"
	run -1 "$HUTCH" bundle --image dev:1 "$TEST_DIR/theirs"
	[[ "$output" == *"DIR $TEST_DIR/theirs: owned by uid 65534, not by the caller"* ]]
	[ -z "$(ls -A "$TEST_DIR/theirs")" ]
}

@test "images: an image's device node never opens in a sandbox: none imported, the root nodev" {
	requires_host_root
	[ -x "$BUSYBOX" ] || skip "$BUSYBOX missing"
	local rootfs l mode probe
	rootfs=$(rootfs_template)
	layer "$TEST_DIR/con.tar.gz" "
t.add('$rootfs', arcname='.')
node('console', tarfile.CHRTYPE, 5, 1)
node('sda', tarfile.BLKTYPE, 8, 0)" >/dev/null
	run -0 --separate-stderr img import "$TEST_DIR/con.tar.gz" --name con:1
	[[ "$stderr" == *"warning: 2 device node(s) of the image not created"* ]]
	l=$(echo "$HUTCH_STORE"/layers/*/root)
	[ -z "$(find "$l" -type b -o -type c)" ]
	# A layer an older hutch unpacked as real root holds them: the host's console, 0666.
	mknod -m 666 "$l/console" c 5 1
	# As uid 1000, as root inside, and in the copy without overlayfs (as 1000: --as-root's
	# view of the store needs overlayfs; the copy makes no device node): never opened, and /
	# is nodev.
	probe='grep " / " /proc/self/mountinfo | grep -q nodev && echo nodev;
		echo pwn >/console && echo OPENED; stty -F /console && echo IOCTL'
	for mode in uid --as-root copy; do
		local env=() opt=()
		[ "$mode" = --as-root ] && opt=(--as-root)
		[ "$mode" = copy ] && env=(HUTCH_NO_OVERLAY=1)
		run env "${env[@]}" timeout -k 5 60 "$HUTCH" --root "$HUTCH_ROOT" sandbox "${opt[@]}" --image con:1 \
			-- sh -c "$probe"
		echo "$mode: $output"
		[[ "$output" == *nodev* ]]
		[ "$mode" = copy ] || [[ "$output" == *"can't create /console: Permission denied"* ]]
		[[ "$output" != *OPENED* && "$output" != *IOCTL* ]]
	done
	# From the host: the console was not written through the sandbox (still the node).
	[ -c "$l/console" ]
}

@test "images: a directory --image's device node never opens either (its tree is bound nodev)" {
	requires_host_root
	[ -x "$BUSYBOX" ] || skip "$BUSYBOX missing"
	local d=$TEST_DIR/dirimg
	cp -a "$(rootfs_template)" "$d"
	chmod 755 "$TEST_DIR" "$d"
	mkdir -p "$d/workspace"
	mknod -m 666 "$d/console" c 5 1 # the host's console, in a tree the caller handed over
	local opt
	for opt in --network=none --as-root; do
		run timeout -k 5 60 "$HUTCH" --root "$HUTCH_ROOT" sandbox "$opt" --image "$d" \
			-- sh -c 'echo pwn >/console && echo OPENED; stty -F /console && echo IOCTL'
		echo "$opt: $output"
		[[ "$output" != *OPENED* && "$output" != *IOCTL* ]]
	done
	[ -c "$d/console" ]
}

# evil_archive PATH NODE...: a gzip'd docker-archive whose manifest names one layer,
# blobs/sha256/0…0, and whose tar then holds the python statements NODE (the layer as a
# device node or a FIFO, or manifest.json itself as one).
evil_archive() {
	local out=$1
	shift
	layer "$out" "
import hashlib, json
cfg = json.dumps({'os': 'linux', 'rootfs': {'type': 'layers', 'diff_ids': ['sha256:' + '0' * 64]}}).encode()
cname = 'blobs/sha256/' + hashlib.sha256(cfg).hexdigest()
man = json.dumps([{'Config': cname, 'RepoTags': ['evil:1'], 'Layers': ['blobs/sha256/' + '0' * 64]}]).encode()
f(cname, cfg)
$*
if 'manifest.json' not in t.getnames(): f('manifest.json', man)" >/dev/null
}

@test "images: an image archive's device nodes and FIFOs are refused, not read: one line, nothing left" {
	requires_host_root
	local z='blobs/sha256/0000000000000000000000000000000000000000000000000000000000000000'
	img ls >/dev/null
	local before kind
	before=$(store_files)
	# 1:5 (/dev/zero) as the layer spun forever, a FIFO hung in open(), 1:11 opened the
	# host's /dev/kmsg; each held the store's lock and left tmp/ behind.
	for kind in "node('$z', tarfile.CHRTYPE, 1, 5)" "node('$z', tarfile.CHRTYPE, 1, 11)" \
		"node('$z', tarfile.FIFOTYPE)" "node('manifest.json', tarfile.FIFOTYPE)" \
		"node('$z', tarfile.BLKTYPE, 7, 0)"; do
		evil_archive "$TEST_DIR/evil.tar.gz" "$kind"
		run timeout -k 5 20 "$HUTCH" image import "$TEST_DIR/evil.tar.gz"
		echo "$kind: $status $output"
		[ "$status" -eq 1 ]
		[ "${#lines[@]}" -eq 1 ]
		[[ "$output" == "hutch: error: import $TEST_DIR/evil.tar.gz: entry "*" in an image archive (only files, directories and links)" ]]
		[ "$(store_files)" = "$before" ]
	done
	[[ "$output" == *"entry $z: a block device in an image archive"* ]]
	# The lock was let go: prune (exclusive) runs.
	run -0 img prune
}

@test "images: a layout directory's FIFO or device node as a blob is refused without blocking" {
	requires_host_root
	local d=$TEST_DIR/dir
	mkdir "$d"
	docker_dir "$d" "sha256:$(printf '0%.0s' {1..64})"
	img ls >/dev/null
	local before
	before=$(store_files)
	mkfifo "$d/l1.tar.gz"
	run timeout -k 5 20 "$HUTCH" image import "$d"
	[ "$status" -eq 1 ]
	[[ "$output" == "hutch: error: import $d: $d: l1.tar.gz: not a regular file" ]]
	rm "$d/l1.tar.gz"
	mknod "$d/l1.tar.gz" c 1 5
	run timeout -k 5 20 "$HUTCH" image import "$d"
	[ "$status" -eq 1 ]
	[[ "$output" == "hutch: error: import $d: $d: l1.tar.gz: not a regular file" ]]
	rm "$d/l1.tar.gz" "$d/config.json"
	mkfifo "$d/config.json"
	run timeout -k 5 20 "$HUTCH" image import "$d"
	[ "$status" -eq 1 ]
	[[ "$output" == *"config.json: not a regular file" ]]
	[ "$(store_files)" = "$before" ]
}

# oci_dir DIR TAG DIFF_IDS LAYER...: an OCI layout at DIR (tag TAG) of the gzip'd LAYER files
# in order, its config's rootfs.diff_ids the comma-separated DIFF_IDS, as given.
oci_dir() {
	python3 - "$@" <<-'EOF'
		import hashlib, json, os, sys
		d, tag, diffs, files = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
		os.makedirs(d + "/blobs/sha256", exist_ok=True)
		def put(b):
		    h = hashlib.sha256(b).hexdigest()
		    open(d + "/blobs/sha256/" + h, "wb").write(b)
		    return {"digest": "sha256:" + h, "size": len(b)}
		layers = [dict(put(open(f, "rb").read()),
		               mediaType="application/vnd.oci.image.layer.v1.tar+gzip") for f in files]
		cfg = put(json.dumps({"os": "linux", "rootfs": {"type": "layers",
		                      "diff_ids": diffs.split(",")}}).encode())
		man = put(json.dumps({"schemaVersion": 2, "layers": layers, "config": dict(cfg,
		          mediaType="application/vnd.oci.image.config.v1+json")}).encode())
		json.dump({"schemaVersion": 2, "manifests": [dict(man,
		           mediaType="application/vnd.oci.image.manifest.v1+json",
		           annotations={"org.opencontainers.image.ref.name": tag})]},
		          open(d + "/index.json", "w"))
		open(d + "/oci-layout", "w").write('{"imageLayoutVersion": "1.0.0"}')
	EOF
}

@test "images: a stored layer is reused only for a blob proven to make its diff_id" {
	requires_host_root
	[ -x "$BUSYBOX" ] || skip "$BUSYBOX missing"
	local rootfs bb secret harmless
	rootfs=$(rootfs_template)
	bb=$(layer "$TEST_DIR/bb.tar.gz" "t.add('$rootfs', arcname='.')")
	secret=$(layer "$TEST_DIR/secret.tar.gz" 'f("secret/key", b"TOPSECRET\n", 0o644)')
	harmless=$(layer "$TEST_DIR/harmless.tar.gz" 'f("x")')
	oci_dir "$TEST_DIR/victim" 1 "$bb,$secret" "$TEST_DIR/bb.tar.gz" "$TEST_DIR/secret.tar.gz"
	run -0 img import "$TEST_DIR/victim" --name victim:1
	[[ "$output" == *"(oci: 2 layers, 2 new"* ]]
	# Each layer records the blob it was unpacked from, and the tar's size.
	local rec=$HUTCH_STORE/layers/${secret#sha256:}/blobs
	[ "$(cat "$rec/$(sha256sum <"$TEST_DIR/secret.tar.gz" | cut -d' ' -f1)")" = \
		"$(gzip -dc "$TEST_DIR/secret.tar.gz" | wc -c)" ]
	# The attacker's own blob is harmless and its digest right, but its config names the
	# victim's layer: "0 new" took the victim's tree for it, and the secret with it.
	oci_dir "$TEST_DIR/attacker" 1 "$bb,$secret" "$TEST_DIR/bb.tar.gz" "$TEST_DIR/harmless.tar.gz"
	local before
	before=$(store_files)
	run -1 img import "$TEST_DIR/attacker" --name attacker:1
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == *"layer $secret: diff_id mismatch (content is $harmless)" ]]
	[ "$(store_files)" = "$before" ]
	run -125 timeout -k 5 60 "$HUTCH" --root "$HUTCH_ROOT" sandbox --image attacker:1 -- cat /secret/key
	[[ "$output" != *TOPSECRET* ]]
	# The victim's own blob again: reused, from the pair recorded when it was unpacked.
	run -0 img import "$TEST_DIR/victim" --name victim:2
	[[ "$output" == *"(oci: 2 layers, 0 new"* ]]
	# The same tar compressed otherwise (another blob): proven by hashing it, then reused.
	gzip -dc "$TEST_DIR/secret.tar.gz" | gzip -1 >"$TEST_DIR/secret1.tar.gz"
	oci_dir "$TEST_DIR/again" 1 "$bb,$secret" "$TEST_DIR/bb.tar.gz" "$TEST_DIR/secret1.tar.gz"
	run -0 img import "$TEST_DIR/again" --name again:1
	[[ "$output" == *"(oci: 2 layers, 0 new"* ]]
	[ -f "$rec/$(sha256sum <"$TEST_DIR/secret1.tar.gz" | cut -d' ' -f1)" ]
	run -0 timeout -k 5 60 "$HUTCH" --root "$HUTCH_ROOT" sandbox --image again:1 -- cat /secret/key
	[ "$output" = TOPSECRET ]
	# A docker-archive of gzip'd layers whose trees are stored: proven the same way.
	local dd=$TEST_DIR/docker
	mkdir "$dd"
	cp "$TEST_DIR/bb.tar.gz" "$dd/l1.tar.gz"
	cp "$TEST_DIR/harmless.tar.gz" "$dd/l2.tar.gz"
	docker_dir "$dd" "$bb" "$secret"
	run -1 img import "$dd"
	[[ "$output" == *"layer $secret: diff_id mismatch (content is $harmless)" ]]
	cp "$TEST_DIR/secret1.tar.gz" "$dd/l2.tar.gz"
	run -0 img import "$dd"
	[[ "$output" == *"(docker-archive: 2 layers, 0 new"* ]]
}

@test "images: JSON nested 400,000 deep (index.json, a manifest, a config) is refused, no crash" {
	local d=$TEST_DIR/deep what
	img ls >/dev/null
	local before
	before=$(store_files)
	# yajl builds and frees its tree by recursion: 800 KB of '[' (under the 4 MiB blob cap)
	# overflowed the stack and hutch died of SIGSEGV.
	for what in index.json manifest config; do
		rm -rf "$d"
		python3 - "$d" "$what" <<-'PY'
			import hashlib, json, os, sys
			d, what = sys.argv[1], sys.argv[2]
			deep = b"[" * 400000 + b"]" * 400000
			os.makedirs(d + "/blobs/sha256")
			def put(b):
			    h = hashlib.sha256(b).hexdigest()
			    open(d + "/blobs/sha256/" + h, "wb").write(b)
			    return {"digest": "sha256:" + h, "size": len(b),
			            "mediaType": "application/vnd.oci.image.manifest.v1+json"}
			cfg = put(deep if what == "config" else b'{"os": "linux"}')
			man = put(deep if what == "manifest" else json.dumps({"config": cfg, "layers": []}).encode())
			index = deep if what == "index.json" else json.dumps({"manifests": [man]}).encode()
			open(d + "/index.json", "wb").write(index)
			open(d + "/oci-layout", "w").write('{"imageLayoutVersion": "1.0.0"}')
		PY
		run timeout -k 5 60 "$HUTCH" image import "$d" --name deep:1
		echo "$what: $status $output"
		[ "$status" -eq 1 ]
		[ "${#lines[@]}" -eq 1 ]
		[[ "$output" == "hutch: error: import $d: "*": invalid JSON: nested deeper than 512" ]]
	done
	[ "$(store_files)" = "$before" ]
}

@test "images: a layer deeper than PATH_MAX through its symlinks is refused; prune removes any depth" {
	command -v prlimit >/dev/null || skip "prlimit missing"
	# Names fit in PATH_MAX, but l1 -> l0/d/.../d reaches below l0's end, and so on.
	layer "$TEST_DIR/deep.tar.gz" '
prev = ""
for k in range(3):
    d = (prev + "/" if prev else "") + "/".join(["d"] * 1000)
    f(d + "/x")
    i = tarfile.TarInfo("l%d" % k); i.type = tarfile.SYMTYPE; i.linkname = d; t.addfile(i)
    prev = "l%d" % k' >/dev/null
	img ls >/dev/null
	local before
	before=$(store_files)
	# Few fds: the failed import's cleanup walks ~2,000 levels with them.
	run prlimit --nofile=64 "$HUTCH" image import "$TEST_DIR/deep.tar.gz" --name deep:1
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == *": entry l1/d/d/"*"...: deeper than PATH_MAX through the layer's symlinks" ]]
	[ "$(store_files)" = "$before" ]
	# A layer that deep in the store (an older hutch's import; a build's layer, made by its
	# steps) made prune fail with EMFILE on every run: one fd per level.
	python3 - "$HUTCH_STORE/layers/$(printf 'ab%.0s' {1..32})/root" <<-'PY'
		import os, sys
		os.makedirs(sys.argv[1])
		fd = os.open(sys.argv[1], os.O_RDONLY)
		for i in range(3000):
		    os.mkdir("d", 0o555 if i % 7 == 0 else 0o755, dir_fd=fd)
		    os.close(os.open("f", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd))
		    n = os.open("d", os.O_RDONLY, dir_fd=fd)
		    os.close(fd)
		    fd = n
	PY
	run -0 prlimit --nofile=64 "$HUTCH" image prune
	[[ "$output" == "removed 0 blobs, 1 layers, 0 download caches, 0 leftovers"* ]]
	[ "$(store_files)" = "$before" ]
}

@test "images: bundle keeps holes and hard links, and is held to --max-size and --max-entries" {
	# 164 bytes of tar.gz: a sparse file that imports under --max-size as its blocks, and a
	# bundle wrote all of its size as blocks.
	mkdir "$TEST_DIR/sp"
	truncate -s 256M "$TEST_DIR/sp/sparse"
	dd if=/dev/urandom of="$TEST_DIR/sp/sparse" bs=64k count=1 seek=2000 conv=notrunc status=none
	tar -C "$TEST_DIR/sp" --sparse -czf "$TEST_DIR/sparse.tar.gz" .
	img import "$TEST_DIR/sparse.tar.gz" --name sparse:1 --max-size 1m
	run -0 "$HUTCH" bundle --image sparse:1 "$TEST_DIR/b1"
	local f=$TEST_DIR/b1/rootfs/sparse
	[ "$(stat -c %s "$f")" -eq $((256 << 20)) ]
	[ "$(($(stat -c %b "$f") * 512))" -le $((1 << 20)) ] # the holes stayed holes
	cmp "$f" "$TEST_DIR/sp/sparse"
	# 200 names of one 1 MiB file: one file with 200 links, not 200 MiB.
	layer "$TEST_DIR/links.tar.gz" '
import os
f("f0", os.urandom(1 << 20))
for k in range(1, 200):
    i = tarfile.TarInfo("d/f%d" % k); i.type = tarfile.LNKTYPE; i.linkname = "f0"; t.addfile(i)' >/dev/null
	img import "$TEST_DIR/links.tar.gz" --name links:1
	run -0 "$HUTCH" bundle --image links:1 "$TEST_DIR/b2"
	[ "$(stat -c %h "$TEST_DIR/b2/rootfs/d/f199")" -eq 200 ]
	[ "$(stat -c %i "$TEST_DIR/b2/rootfs/d/f199")" = "$(stat -c %i "$TEST_DIR/b2/rootfs/f0")" ]
	[ "$(du -sk "$TEST_DIR/b2" | cut -f1)" -lt 2048 ]
	# The bundle's writes are charged, as an import's are: one line, DIR gone.
	run -1 "$HUTCH" bundle --image links:1 --max-size 512k "$TEST_DIR/b3"
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == *"copy /f0: the copied rootfs passed 512KiB (--max-size raises the limit)" ]]
	[ ! -e "$TEST_DIR/b3" ]
	run -1 "$HUTCH" bundle --image links:1 --max-entries 100 "$TEST_DIR/b3"
	[[ "$output" == *"more than 100 entries (--max-entries raises the limit)" ]]
	[ ! -e "$TEST_DIR/b3" ]
}

@test "images: bundle's default is half the free space of DIR's filesystem, and its reserve is kept" {
	requires_host_root
	layer "$TEST_DIR/data.tar.gz" 'import os
f("blob", os.urandom(16 << 20))' >/dev/null
	img import "$TEST_DIR/data.tar.gz" --name data:1
	local m=$TEST_DIR/mnt
	mkdir "$m"
	mount -t tmpfs -o size=64m tmpfs "$m"
	track_mount "$m"
	dd if=/dev/zero of="$m/fill" bs=1M count=40 status=none
	run -1 "$HUTCH" bundle --image data:1 "$m/b"
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == *"the copied rootfs passed 12MiB, half the free space of DIR's filesystem at the start (--max-size raises the limit)" ]]
	[ "$(ls -A "$m")" = fill ]
	# No size limit: the reserve (5% of 64 MiB here, 1 GiB on a large disk) still holds.
	dd if=/dev/zero of="$m/fill2" bs=1M count=8 status=none
	run -1 "$HUTCH" bundle --image data:1 --max-size 0 "$m/b"
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == *"DIR's filesystem is down to "*" free, below the 3.2MiB hutch keeps free (free some space, or write DIR on another filesystem)" ]]
	[ "$(ls -A "$m" | tr '\n' ' ')" = "fill fill2 " ]
}

# sparse_tar OUT REALSIZE OFF:LEN[:BYTE]...: a tar of one PAX GNU.sparse 1.0 file, "s", whose
# map lists the regions in that order (overlapping ones included), each LEN bytes of BYTE
# (default 0x51, "Q").
sparse_tar() {
	python3 - "$@" <<-'EOF2'
		import sys, tarfile
		out, real = sys.argv[1], int(sys.argv[2])
		regs = []
		for a in sys.argv[3:]:
		    p = a.split(":"); b = int(p[2]) if len(p) > 2 else 0x51
		    regs.append((int(p[0]), bytes([b]) * int(p[1])))
		def rec(k, v):
		    s = f" {k}={v}\n"; n = len(s)
		    while len(f"{n}{s}") != n: n = len(f"{n}{s}")
		    return f"{n}{s}".encode()
		mp = (f"{len(regs)}\n" + "".join(f"{o}\n{len(b)}\n" for o, b in regs)).encode()
		mp += b"\0" * (-len(mp) % 512)
		body = mp + b"".join(b for _, b in regs)
		pax = b"".join(rec(k, v) for k, v in [("GNU.sparse.major", "1"), ("GNU.sparse.minor", "0"),
		    ("GNU.sparse.name", "s"), ("GNU.sparse.realsize", str(real))])
		ph = tarfile.TarInfo("./PaxHeaders/s"); ph.type = tarfile.XHDTYPE; ph.size = len(pax)
		h = tarfile.TarInfo("./GNUSparseFile.0/s"); h.size = len(body)
		with open(out, "wb") as f:
		    f.write(ph.tobuf(tarfile.USTAR_FORMAT) + pax + b"\0" * (-len(pax) % 512))
		    f.write(h.tobuf(tarfile.USTAR_FORMAT) + body + b"\0" * (-len(body) % 512) + b"\0" * 1024)
	EOF2
}

# A sparse map's regions may overlap: the zeros a later region gives win, as under tar; the
# holes left for blocks of zeros must not keep an earlier region's data (a scanner of the
# layer and the sandbox would see different files).
@test "images: an overlapping sparse map leaves what tar leaves: the later zeros" {
	sparse_tar "$TEST_DIR/ovl.tar" 16384 8192:4096 0:16384:0
	run -0 img import "$TEST_DIR/ovl.tar" --name ovl:1
	local l
	l=$(img inspect ovl:1 | jq -r '.layers[0]')
	mkdir "$TEST_DIR/x"
	tar -C "$TEST_DIR/x" -xf "$TEST_DIR/ovl.tar"
	cmp "$HUTCH_STORE/layers/${l#sha256:}/root/s" "$TEST_DIR/x/s"
	[ "$(tr -d '\0' <"$HUTCH_STORE/layers/${l#sha256:}/root/s" | wc -c)" = 0 ]
}

# One byte every 4 KiB allocates a block each: --max-size counts the blocks, not the bytes.
@test "images: a sparse map of one-byte regions a block apart is held to --max-size by its blocks" {
	local regs=() i
	for ((i = 0; i < 8192; i++)); do regs+=("$((i * 4096)):1"); done
	sparse_tar "$TEST_DIR/amp.tar" $((8192 * 4096)) "${regs[@]}"
	gzip "$TEST_DIR/amp.tar"
	run -1 img import "$TEST_DIR/amp.tar.gz" --name amp:1 --max-size 16m
	[[ "$output" == *"unpacked size passed 16MiB (--max-size raises the limit)" ]]
	[ -z "$(find "$HUTCH_STORE/layers" "$HUTCH_STORE/tmp" -mindepth 1)" ]
}

# A directory's sparse file is free to its maker, and tar sends its holes as zeros: the copy
# in the store's tmp is held to the import's limits, and keeps its zeros as holes.
@test "images: import DIR: a huge sparse file is held to --max-size before it fills the store" {
	mkdir "$TEST_DIR/d"
	truncate -s 1G "$TEST_DIR/d/hole"
	run -1 img import "$TEST_DIR/d" --name hole:1 --max-size 16m
	[[ "$output" == *"the copy in the store's tmp passed 16MiB (--max-size raises the limit)" ]]
	[ -z "$(ls -A "$HUTCH_STORE/tmp")" ]
}

# Names that do not survive Docker's normalization are kept whole, never shortened into
# another's: docker.io/quay.io/org/app is not quay.io/org/app.
@test "images: a name that only looks like another's short form leaves the other alone" {
	layer "$TEST_DIR/a.tar.gz" 'f("a", b"legit")' >/dev/null
	layer "$TEST_DIR/b.tar.gz" 'f("a", b"evil")' >/dev/null
	img import "$TEST_DIR/a.tar.gz" --name quay.io/org/app:1
	img import "$TEST_DIR/b.tar.gz" --name docker.io/quay.io/org/app:1
	local a b
	a=$(img inspect quay.io/org/app:1 | jq -r .digest)
	b=$(img inspect docker.io/quay.io/org/app:1 | jq -r .digest)
	[ "$a" != "$b" ]
	run -0 img ls
	[[ "$output" == *"quay.io/org/app:1 "*"$(cut -c1-19 <<<"$a")"* ]]
	[[ "$output" == *"docker.io/quay.io/org/app:1 "* ]]
	img rm docker.io/quay.io/org/app:1
	[ "$(img inspect quay.io/org/app:1 | jq -r .digest)" = "$a" ]
	run -1 img import "$TEST_DIR/a.tar.gz" --name docker.io/
	[[ "$output" == *"invalid image name 'docker.io/'"* ]]
	run -1 img import "$TEST_DIR/a.tar.gz" --name "a/$(printf 'b%.0s' {1..120})/$(printf 'c%.0s' {1..120})"
	[[ "$output" == *"too long"* ]]
	[ -z "$(ls -A "$HUTCH_STORE/tmp")" ]
}

# Each descriptor without a platform costs a manifest's and a config's read: an index is
# held to 256 of them.
@test "images: an index of thousands of manifests is refused at once" {
	mkdir -p "$TEST_DIR/ix/blobs/sha256"
	echo '{"imageLayoutVersion": "1.0.0"}' >"$TEST_DIR/ix/oci-layout"
	python3 -c 'import json
d = {"mediaType": "application/vnd.oci.image.manifest.v1+json", "size": 2,
     "digest": "sha256:" + "0" * 64}
print(json.dumps({"schemaVersion": 2, "manifests": [d] * 5000}))' >"$TEST_DIR/ix/index.json"
	run -1 timeout 20 "$HUTCH" image import "$TEST_DIR/ix" --name ix:1
	[[ "$output" == *"image index: more than 256 manifests"* ]]
}
