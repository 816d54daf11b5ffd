#!/usr/bin/env bats
# Setuid and setgid bits and file capabilities left on the host by a sandbox. --as-root and
# --host-root may set them (dpkg must, in the image's throw-away layer); any sandbox may
# rewrite a setid file the host already has through a shared mapping or change its permission
# bits with a POSIX ACL, neither of which drops the bits. So hutch clears what was setid and
# changed in the workspace and rw binds when the sandbox ends, and after each `sandbox exec`
# of a named sandbox (docs/sandbox-ids.md). Each plant is checked from the host: its mode, and
# what it grants when run as nobody. What the walk must leave alone is checked too: the
# host's own older setuid files, a symlink's target outside, a setgid directory, a FIFO, a
# nosuid mount. Device nodes --host-root makes there go the same way (device_nodes_removed).

load ../integration/helpers
load ../integration/sandbox-helpers


setup() {
	sb_setup
	sb_private_image # $IMAGE, and $WS owned by 1500:1500
	BUNDLE=$TEST_DIR/image-bundle
	mkdir -p "$BUNDLE"
	ln -s "$IMAGE" "$BUNDLE/rootfs"
	install_static_helper euid    # /bin/euid: prints the ids it runs with
	install_static_helper filecap # /bin/filecap FILE: cap_net_raw+ep on FILE
	R=$TEST_DIR/r.json
	N=setid-$TAG
}

teardown() {
	local rc=0 f
	# (none before setup made the test's root and tag: a test skipped in setup; an empty
	# SB_NAMES or TAG would make this glob the host's /)
	for f in ${SB_NAMES:+${TAG:+"$SB_NAMES"/*"$TAG"*}}; do
		[ -e "$f" ] || continue
		echo "LEAK: name record $f left" >&2
		rc=1
		"$HUTCH" sandbox rm -f "${f##*/}" >/dev/null 2>&1
		rm -f "$f"
	done
	sb_teardown || rc=1
	teardown_bundle || rc=1
	return $rc
}

# requires_runtime NAME: skips the test when the runtime's binary is absent.
requires_runtime() {
	command -v "$1" >/dev/null || skip "$1 not installed"
}

# mode_of FILE: its permission bits in octal, as stat prints them (4755, 755...).
mode_of() {
	stat -c %a "$1"
}

# Run as nobody from the host, FILE grants nothing: it runs as nobody.
grants_nothing() {
	local got
	got=$(runuser -u nobody -- "$1")
	echo "$1: mode $(mode_of "$1") owner $(stat -c %u:%g "$1"), runs as $got" >&2
	[ "$got" = "65534 65534" ]
}

# A host file's capabilities, as getcap prints them (empty: none).
caps_of() {
	getcap "$1" | sed 's/^[^ ]* //'
}

# What the sandbox plants in the workspace (and in /data, an rw bind), then the handshake
# that lets the host change a file outside while it runs: ready, then wait for go.
PLANT='cd /workspace
	cp /bin/euid x; chmod 6755 x
	mkdir sub; cp /bin/euid sub/y; chmod 4755 sub/y
	echo z >z; chmod g+s z
	mkdir sgid-dir; chmod g+s sgid-dir
	mkfifo fifo; chmod 4644 fifo
	cp /bin/euid /data/b; chmod 4755 /data/b
	ln -s "$OUTSIDE" link
	stat -c "%n %a" x sub/y z /data/b
	touch ready; i=0; while [ ! -e go ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done'

# Starts `sandbox ARGS -- sh -c "$PLANT"` in the background, waits for its plants, changes
# the setuid file outside the workspace (so that its ctime is the run's) and lets it end.
plant() {
	sb "$@" -e "OUTSIDE=$TEST_DIR/outside/target" -- sh -c "$PLANT" \
		>"$TEST_DIR/out" 2>"$TEST_DIR/err" &
	local bg=$! i=0
	track_pid $bg
	while [ ! -e "$WS/ready" ] && [ $i -lt 200 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	chmod 4755 "$TEST_DIR/outside/target"
	touch "$WS/go"
	wait $bg
}

# The host's own files: a setuid file in the workspace older than the run, a setuid file
# outside that a symlink the sandbox makes will name, and the rw bind's directory.
host_files() {
	cp "$BUNDLE/rootfs/bin/euid" "$WS/old"
	chown 1500:1500 "$WS/old"
	chmod 4755 "$WS/old"
	mkdir "$TEST_DIR/outside" "$TEST_DIR/bind"
	cp "$BUNDLE/rootfs/bin/euid" "$TEST_DIR/outside/target"
	chown 1500:1500 "$TEST_DIR/outside/target"
	chown 1700:1701 "$TEST_DIR/bind"
	sleep 0.1 # older than the run by more than a clock tick
}

@test "setid-walk: --as-root: the bits it sets in the workspace and an rw bind are cleared when it ends" {
	host_files
	plant --as-root --workspace "$WS" --bind "$TEST_DIR/bind:/data" --report "$R"
	cat "$TEST_DIR/out" "$TEST_DIR/err"
	# Inside, every chmod took (root inside may set the bits: dpkg needs them).
	grep -qx "x 6755" "$TEST_DIR/out"
	grep -qx "sub/y 4755" "$TEST_DIR/out"
	grep -qx "z 2644" "$TEST_DIR/out"
	grep -qx "/data/b 4755" "$TEST_DIR/out"
	# On the host, none is left, and nothing it left grants anything.
	[ "$(mode_of "$WS/x")" = 755 ]
	[ "$(mode_of "$WS/sub/y")" = 755 ]
	[ "$(mode_of "$WS/z")" = 644 ]
	[ "$(mode_of "$TEST_DIR/bind/b")" = 755 ]
	grants_nothing "$WS/x"
	grants_nothing "$WS/sub/y"
	grants_nothing "$TEST_DIR/bind/b"
	grep -q "hutch: warning: --workspace $WS: cleared setuid/setgid bits or file capabilities on 3 files the sandbox left there" "$TEST_DIR/err"
	grep -q "hutch: warning: --bind $TEST_DIR/bind: cleared setuid/setgid bits or file capabilities on 1 files the sandbox left there" "$TEST_DIR/err"
	jq -e '.setid_bits_cleared == 4' "$R"
	# What is not the walk's stays: the host's older file, a symlink's target outside (whose
	# ctime is the run's), a setgid directory, a FIFO (never opened).
	[ "$(mode_of "$WS/old")" = 4755 ]
	[ "$(mode_of "$TEST_DIR/outside/target")" = 4755 ]
	[ -L "$WS/link" ]
	[ "$(mode_of "$WS/sgid-dir")" = 2755 ]
	[ "$(mode_of "$WS/fifo")" = 4644 ]
}

@test "setid-walk: --as-root: a file capability it sets in the workspace is removed" {
	run sb --as-root --workspace "$WS" --report "$R" -- sh -c 'cp /bin/euid /workspace/c
		filecap /workspace/c && echo set'
	check_status 0
	[[ $output == *set* ]]
	[ -z "$(caps_of "$WS/c")" ]
	[[ $output == *"--workspace $WS: cleared setuid/setgid bits or file capabilities on 1 files"* ]]
	jq -e '.setid_bits_cleared == 1' "$R"
}

@test "setid-walk: --host-root: setuid-root and a file capability in the workspace are cleared" {
	host_files
	plant --host-root --workspace "$WS" --bind "$TEST_DIR/bind:/data" --report "$R"
	cat "$TEST_DIR/out" "$TEST_DIR/err"
	grep -qx "x 6755" "$TEST_DIR/out"
	# host root writes as root: the plant was setuid root until the walk
	[ "$(stat -c %u:%g "$WS/x")" = 0:0 ]
	[ "$(mode_of "$WS/x")" = 755 ]
	[ "$(mode_of "$WS/sub/y")" = 755 ]
	[ "$(mode_of "$TEST_DIR/bind/b")" = 755 ]
	grants_nothing "$WS/x"
	jq -e '.setid_bits_cleared == 4' "$R"
	[ "$(mode_of "$WS/old")" = 4755 ]
	[ "$(mode_of "$TEST_DIR/outside/target")" = 4755 ]
	run sb --host-root --workspace "$WS" -- sh -c 'cp /bin/euid /workspace/c; filecap /workspace/c'
	check_status 0
	[ -z "$(caps_of "$WS/c")" ]
}

@test "setid-walk: a named --as-root sandbox: what an exec sets is cleared when the exec returns" {
	run sb --name "$N" --detach --as-root --workspace "$WS" --report "$R" -- sleep 1000
	check_status 0
	sup_pid=$(cat "$SB_NAMES/$N")
	echo "${sup_pid#sb-}" >>"$SB_PIDS"
	run "$HUTCH" sandbox exec "$N" -- sh -c 'cp /bin/euid /workspace/y; chmod 4755 /workspace/y
		stat -c %a /workspace/y'
	check_status 0
	[[ $output == *4755* ]]
	[[ $output == *"hutch: warning: --workspace $WS: cleared setuid/setgid bits or file capabilities on 1 files"* ]]
	[ "$(mode_of "$WS/y")" = 755 ]
	grants_nothing "$WS/y"
	# The sandbox runs on: a second exec's plant goes the same way.
	run "$HUTCH" sandbox exec "$N" -- sh -c 'chmod 6755 /workspace/y'
	check_status 0
	[ "$(mode_of "$WS/y")" = 755 ]
	run "$HUTCH" sandbox stop "$N"
	check_status 0
	jq -e '.setid_bits_cleared == 2' "$R"
}

@test "setid-walk: a workspace on a nosuid mount is not walked for setid bits (no bit there grants anything)" {
	local ns=$TEST_DIR/nosuid
	mkdir "$ns"
	mount -t tmpfs -o nosuid,mode=0755 tmpfs "$ns"
	track_mount "$ns"
	chown 1500:1500 "$ns"
	run sh -c 'echo $$ >>"$0"; exec "$@"' "$SB_PIDS" "$HUTCH" --debug sandbox \
		--image "$IMAGE" --as-root --workspace "$ns" --report "$R" \
		-- sh -c 'cp /bin/euid /workspace/x; chmod 4755 /workspace/x'
	check_status 0
	[[ $output == *"--workspace $ns: mounted nosuid on the host, where no setuid bit grants anything: only device nodes looked for"* ]]
	[ "$(mode_of "$ns/x")" = 4755 ]
	grants_nothing "$ns/x"
	jq -e '.setid_bits_cleared == 0' "$R"
	# A device node there is no less the device: --host-root's goes.
	run sb --host-root --workspace "$ns" --report "$R" -- mknod /workspace/disk b 254 0
	check_status 0
	[ ! -e "$ns/disk" ]
	jq -e '.device_nodes_removed == 1' "$R"
}

# The host owner's own setid files in the workspace, older than the run: a setuid file anyone
# may run (as 1500), and ones only the owner may run yet (4700), or its group (2710); one
# with a file capability; and one the run leaves alone.
owners_setid_files() {
	local f
	for f in mapped acl-u acl-g capped untouched; do
		cp "$BUNDLE/rootfs/bin/euid" "$1/$f"
	done
	chown 1500:1500 "$1"/*
	chmod 4755 "$1/mapped" "$1/untouched"
	chmod 4700 "$1/acl-u"
	chmod 2710 "$1/acl-g"
	"$BUNDLE/rootfs/bin/filecap" "$1/capped"
	sleep 0.1 # older than the run by more than a clock tick
}

# What a sandbox without root inside may do to them, which its filter can't see: a write
# through a shared mapping keeps every bit and the capability (only write, truncate and
# fallocate drop them), a POSIX ACL rewrites the permission bits and keeps S_ISUID (and
# S_ISGID for a member of the file's group).
REWRITE='d=$1
	setidmod mmap $d/mapped /bin/euid && setidmod acl $d/acl-u && setidmod acl $d/acl-g &&
	setidmod mmap $d/capped /bin/euid'

# The files owners_setid_files made in DIR, after a run that rewrote them: no bit, no
# capability, nothing granted; the untouched one as it was.
rewritten_cleared() {
	local d=$1
	[ "$(mode_of "$d/mapped")" = 755 ]
	[ "$(mode_of "$d/acl-u")" = 755 ]
	[ "$(mode_of "$d/acl-g")" = 755 ]
	[ -z "$(caps_of "$d/capped")" ]
	grants_nothing "$d/mapped"
	grants_nothing "$d/acl-u"
	grants_nothing "$d/acl-g"
	[ "$(mode_of "$d/untouched")" = 4755 ]
}

@test "setid-walk: a default sandbox that rewrites a setid file through a shared mapping or a POSIX ACL leaves it no bit" {
	install_static_helper setidmod
	owners_setid_files "$WS"
	[ -n "$(caps_of "$WS/capped")" ]
	run sb --workspace "$WS" --report "$R" -- sh -c "$REWRITE" sh /workspace
	check_status 0
	# Inside, each kept its bits: the filter refused nothing (nothing set a bit).
	[[ $output == *"/workspace/mapped 4755"* ]]
	[[ $output == *"/workspace/acl-u 4755"* ]]
	[[ $output == *"/workspace/acl-g 2750"* || $output == *"/workspace/acl-g 2755"* ]]
	rewritten_cleared "$WS"
	[[ $output == *"hutch: warning: --workspace $WS: cleared setuid/setgid bits or file capabilities on 4 files the sandbox left there"* ]]
	jq -e '.setid_bits_cleared == 4 and .isolation.user.writes_as.setid_bits_blocked == true' "$R"
}

@test "setid-walk: --runtime runc: an rw bind's setid files rewritten the same way are cleared too" {
	requires_runtime runc
	install_static_helper setidmod
	mkdir "$TEST_DIR/bind"
	chown 1500:1500 "$TEST_DIR/bind"
	owners_setid_files "$TEST_DIR/bind"
	run sb --runtime runc --workspace "$WS" --bind "$TEST_DIR/bind:/data" --report "$R" \
		-- sh -c "$REWRITE" sh /data
	check_status 0
	[[ $output == *"/data/mapped 4755"* ]]
	rewritten_cleared "$TEST_DIR/bind"
	jq -e '.setid_bits_cleared == 4' "$R"
}

@test "setid-walk: a default sandbox's workspace is walked; without a workspace or rw bind the count is null" {
	run sb --workspace "$WS" --report "$R" -- true
	check_status 0
	jq -e '.setid_bits_cleared == 0' "$R"
	run sb --report "$R" -- true
	check_status 0
	jq -e 'has("setid_bits_cleared") and .setid_bits_cleared == null' "$R"
	run sb --as-root --report "$R" -- true
	check_status 0
	jq -e '.setid_bits_cleared == null' "$R"
	run sb --as-root --bind "$TEST_DIR:/data:ro" --report "$R" -- true
	check_status 0
	jq -e '.setid_bits_cleared == null' "$R"
}

# A named sandbox given a relative --workspace, and a --bind through a symlink that the host
# points elsewhere once it runs, each exec run from another cwd: the walk after it looks at
# the directories the sandbox was given, resolved at its start (not at the typed paths
# again, from the exec's cwd or the supervisor's /).
relative_exec() {
	mkdir "$TEST_DIR/bind" "$TEST_DIR/other"
	chown 1500:1500 "$TEST_DIR/bind"
	ln -s bind "$TEST_DIR/link"
	local ws bind
	ws=$(readlink -f "$WS")
	bind=$(readlink -f "$TEST_DIR/bind")
	cd "$(dirname "$WS")"
	run sb --name "$N" --detach --as-root "$@" --workspace "$(basename "$WS")" \
		--bind "$TEST_DIR/link:/data" --report "$R" -- sleep 1000
	check_status 0
	ln -sfn other "$TEST_DIR/link"
	sup_pid=$(cat "$SB_NAMES/$N")
	echo "${sup_pid#sb-}" >>"$SB_PIDS"
	cd /
	run "$HUTCH" sandbox exec "$N" -- sh -c 'cp /bin/euid /workspace/y; chmod 4755 /workspace/y
		cp /bin/euid /data/b; chmod 6755 /data/b; stat -c %a /workspace/y /data/b'
	check_status 0
	[[ $output == *4755*6755* ]]
	[[ $output == *"hutch: warning: --workspace $ws: cleared setuid/setgid bits or file capabilities on 1 files"* ]]
	[[ $output == *"hutch: warning: --bind $bind: cleared setuid/setgid bits or file capabilities on 1 files"* ]]
	[[ $output != *"were not looked for"* ]]
	[ "$(mode_of "$WS/y")" = 755 ]
	[ "$(mode_of "$TEST_DIR/bind/b")" = 755 ]
	run "$HUTCH" sandbox stop "$N"
	check_status 0
	jq -e '.setid_bits_cleared == 2' "$R"
}

@test "setid-walk: a relative --workspace and --bind: an exec from another cwd clears what it sets" {
	relative_exec
}

@test "setid-walk: --runtime runc: a relative --workspace and --bind: an exec from another cwd clears what it sets" {
	requires_runtime runc
	relative_exec --runtime runc
}

@test "setid-walk: --runtime runsc: a relative --workspace and --bind: an exec from another cwd clears what it sets" {
	requires_runtime runsc
	relative_exec --runtime runsc
}

# --host-root may mknod: a block and a character device node it makes in the workspace (one
# a directory down) and in an rw bind would give whoever on the host can open them the
# device. The walk removes them, counts them and says so; it leaves a node older than the
# run, and a 0:0 character node (an overlayfs whiteout: no open can use it).
devices_removed() {
	mkdir "$TEST_DIR/bind"
	mknod "$WS/old" b 254 0
	sleep 0.1 # older than the run by more than a clock tick
	run sb --host-root "$@" --workspace "$WS" --bind "$TEST_DIR/bind:/data" --report "$R" \
		-- sh -c 'mknod /workspace/disk b 254 0; chmod 666 /workspace/disk
		mkdir /workspace/d; mknod /workspace/d/null c 1 3
		mknod /data/tty c 5 0; mknod /workspace/wh c 0 0
		ls -l /workspace/disk /workspace/d/null /data/tty'
	check_status 0
	[[ $output == *"brw-rw-rw-"*"/workspace/disk"* ]]
	[[ $output == *"/data/tty"* ]]
	[ ! -e "$WS/disk" ] && [ ! -e "$WS/d/null" ] && [ ! -e "$TEST_DIR/bind/tty" ]
	[[ $output == *"hutch: warning: --workspace $WS: removed 2 device nodes the sandbox left there"* ]]
	[[ $output == *"hutch: warning: --bind $TEST_DIR/bind: removed 1 device nodes the sandbox left there"* ]]
	jq -e '.device_nodes_removed == 3 and .setid_bits_cleared == 0' "$R"
	[ -b "$WS/old" ] && [ "$(stat -c %t:%T "$WS/old")" = fe:0 ]
	[ -c "$WS/wh" ] && [ "$(stat -c %t:%T "$WS/wh")" = 0:0 ]
}

@test "setid-walk: --host-root: device nodes it makes in the workspace and an rw bind are removed" {
	devices_removed
}

@test "setid-walk: --host-root --runtime runc: device nodes it makes are removed" {
	requires_runtime runc
	devices_removed --runtime runc
}

@test "setid-walk: --host-root --runtime crun: device nodes it makes are removed" {
	requires_runtime crun
	devices_removed --runtime crun
}

@test "setid-walk: a named --host-root sandbox: a device node an exec makes is removed when the exec returns" {
	run sb --name "$N" --detach --host-root --workspace "$WS" --report "$R" -- sleep 1000
	check_status 0
	sup_pid=$(cat "$SB_NAMES/$N")
	echo "${sup_pid#sb-}" >>"$SB_PIDS"
	run "$HUTCH" sandbox exec "$N" -- sh -c 'mknod /workspace/disk b 254 0; ls -l /workspace/disk'
	check_status 0
	[[ $output == *"hutch: warning: --workspace $WS: removed 1 device nodes"* ]]
	[ ! -e "$WS/disk" ]
	run "$HUTCH" sandbox stop "$N"
	check_status 0
	jq -e '.device_nodes_removed == 1' "$R"
}

@test "setid-walk: a workspace swapped on the host after the start: an exec does not walk the new one and says so; the end walks the one given" {
	run sb --name "$N" --detach --as-root --workspace "$WS" --report "$R" -- sleep 1000
	check_status 0
	sup_pid=$(cat "$SB_NAMES/$N")
	echo "${sup_pid#sb-}" >>"$SB_PIDS"
	mv "$WS" "$WS.given"
	mkdir "$WS"
	cp "$BUNDLE/rootfs/bin/euid" "$WS/host"
	chmod 4755 "$WS/host" # the host's own, in a directory the sandbox was never given
	cd /
	run "$HUTCH" sandbox exec "$N" -- sh -c 'cp /bin/euid /workspace/y; chmod 4755 /workspace/y'
	check_status 0
	[[ $output == *"hutch: warning: --workspace $(readlink -f "$WS"): not the directory or file the sandbox was given (replaced since it started); setuid and setgid bits the sandbox left there were not looked for"* ]]
	[ "$(mode_of "$WS/host")" = 4755 ]
	# The sandbox's own hutch walks, when it ends, the directory it was given (through the fd
	# it has held since the start), wherever it was moved, and never the one swapped in.
	run "$HUTCH" sandbox stop "$N"
	check_status 0
	[ "$(mode_of "$WS.given/y")" = 755 ]
	[ "$(mode_of "$WS/host")" = 4755 ]
	jq -e '.setid_bits_cleared == 1' "$R"
	rm -rf "$WS"
	mv "$WS.given" "$WS"
}
