#!/usr/bin/env bats
# Paths a caller hands hutch (--workspace, --bind and --ro-bind sources, --image, --root, and
# hutch's own state, lock and name files) are resolved once, following a symlink only where
# root or the caller alone could have put it, and used afterwards through the fd (docs/design.md,
# "Paths from callers"). The attacks: an agent that may write in a task directory turns the
# workspace it will be given into a symlink to a root-owned directory (hutch used to chown it
# away and mount it); a symlink planted in /tmp as a bind source; a path swapped between the
# check and the mount; a FIFO planted where hutch opens a lock or a record.

load ../integration/helpers
load ../integration/sandbox-helpers

setup() {
	sb_setup
	sb_private_image
	# A directory an agent (uid 1000) may write in; a root-owned 0700 one it must not reach.
	mkdir "$TEST_DIR/task" "$TEST_DIR/secret"
	chown 1000:1000 "$TEST_DIR/task"
	chmod 0700 "$TEST_DIR/secret"
	echo secret >"$TEST_DIR/secret/file"
}

# Delegated runs leave their runtime's processes named after the sandbox (sb-PID).
teardown() {
	local rc=0 p procs
	for p in $(sort -u "${SB_PIDS:-/dev/null}"); do
		procs=$(pgrep -f -- "(^|[ =/])sb-$p( |$)" || true)
		[ -z "$procs" ] || {
			echo "LEAK: runtime processes of sb-$p: $procs" >&2
			kill -9 $procs
			rc=1
		}
	done
	sb_teardown || rc=1
	teardown_bundle || rc=1
	return $rc
}

# The secret directory is as it was: root's, 0700, its one file.
secret_intact() {
	[ "$(stat -c '%u:%g %a' "$TEST_DIR/secret")" = "0:0 700" ] &&
		[ "$(ls -A "$TEST_DIR/secret")" = file ]
}

# Nothing of the test's is mounted on the host (a sandbox's mounts live in namespaces of its
# own, which are gone with it).
nothing_mounted() {
	! grep -F "$TEST_DIR" /proc/self/mountinfo
}

# sb_bg NAME ARGS...: sb ARGS in the background; its hutch's pid in $TEST_DIR/NAME.pid, its
# output in NAME.out, its status in NAME.rc (sandbox.bats has the same).
sb_bg() {
	local name=$1
	shift
	(
		st=0
		SB_PIDFILE=$TEST_DIR/$name.pid sb "$@" </dev/null >"$TEST_DIR/$name.out" 2>&1 3>&- ||
			st=$?
		echo "$st" >"$TEST_DIR/$name.rc.tmp" && mv "$TEST_DIR/$name.rc.tmp" "$TEST_DIR/$name.rc"
	) 3>&- &
	track_pid $!
}

sb_pid() {
	local tries=250
	while [ ! -s "$TEST_DIR/$1.pid" ] && [ $tries -gt 0 ]; do
		sleep 0.02
		tries=$((tries - 1))
	done
	cat "$TEST_DIR/$1.pid"
}

# wait_for TRIES CMD...: until CMD succeeds, every 20 ms.
wait_for() {
	local tries=$1
	shift
	until "$@"; do
		[ "$tries" -gt 0 ] || return 1
		sleep 0.02
		tries=$((tries - 1))
	done
}

sb_wait() {
	wait_for 1000 test -e "$TEST_DIR/$1.rc" || true
	status=$(cat "$TEST_DIR/$1.rc")
	output=$(cat "$TEST_DIR/$1.out")
}

stopped() {
	[ "$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)" = T ]
}

# private_run SETUP: from here $HUTCH runs hutch in a mount namespace of its own, over a fresh
# /run/hutch (a tmpfs) in which SETUP (shell) ran first. The FIFOs these tests plant must never
# be where another hutch on this host (an older build) would open them and hang.
private_run() {
	printf '%s\n' "$1" >"$TEST_DIR/private-setup.sh"
	cat >"$TEST_DIR/hutch-private" <<-EOF
		#!/bin/sh
		mkdir -p /run/hutch
		exec unshare -m --propagation slave -- sh -c 'mount -t tmpfs -o mode=0711,size=4m \
			hutch-test /run/hutch && . "\$0" && exec "\$@"' "$TEST_DIR/private-setup.sh" \
			"$ORIG_HUTCH" "\$@"
	EOF
	chmod 755 "$TEST_DIR/hutch-private"
	HUTCH=$TEST_DIR/hutch-private
}

@test "paths: a workspace that is a symlink to a root-owned 0700 directory is refused; it keeps its owner" {
	# The reported bug: chown followed the link and gave the directory to uid 1000.
	ln -s "$TEST_DIR/secret" "$TEST_DIR/task/step2"
	cd "$TEST_DIR"
	sb_fails "--workspace $TEST_DIR/task/step2: a symlink (give the path it points to)" \
		--workspace task/step2 --workspace-owner 1000:1000 -- touch /workspace/planted
	secret_intact
	nothing_mounted
	# Its trailing slash changes nothing; nor does a link from another link.
	sb_fails "--workspace $TEST_DIR/task/step2: a symlink" \
		--workspace task/step2/ --workspace-owner 1000:1000 -- true
	ln -s step2 "$TEST_DIR/task/step3"
	sb_fails "--workspace $TEST_DIR/task/step3: a symlink" \
		--workspace task/step3 --workspace-owner 1000:1000 -- true
	secret_intact
}

@test "paths: a workspace beneath a symlink in a directory uid 1000 owns is refused" {
	mkdir -p "$TEST_DIR/target/ws"
	chown 1500:1500 "$TEST_DIR/target/ws"
	ln -s "$TEST_DIR/target" "$TEST_DIR/task/link"
	sb_fails "--workspace $TEST_DIR/task/link: a symlink in a directory that another user can write: not followed" \
		--workspace "$TEST_DIR/task/link/ws" -- touch /workspace/x
	[ ! -e "$TEST_DIR/target/ws/x" ]
	# The same link through the secret: nothing of it is touched
	ln -s "$TEST_DIR" "$TEST_DIR/task/up"
	sb_fails "not followed" --workspace "$TEST_DIR/task/up/secret" --workspace-owner 1000:1000 \
		-- true
	secret_intact
	nothing_mounted
}

@test "paths: a symlink root put in a root-owned 0755 directory is followed; messages name its target" {
	mkdir -p "$TEST_DIR/trusted" "$TEST_DIR/target/ws"
	chmod 0755 "$TEST_DIR/trusted"
	ln -s "$TEST_DIR/target" "$TEST_DIR/trusted/link"
	run sb --workspace "$TEST_DIR/trusted/link/ws" --workspace-owner 1600:1601 \
		--report "$TEST_DIR/r.json" -- sh -c 'echo hi >/workspace/out; cat /workspace/out'
	check_status 0
	[[ $output == *"--workspace-owner: $TEST_DIR/target/ws now belongs to 1600:1601"* ]]
	[[ $output != *"trusted/link"* ]]
	[ "$(stat -c %u:%g "$TEST_DIR/target/ws" "$TEST_DIR/target/ws/out" | sort -u)" = 1600:1601 ]
	jq -e '.isolation.user.writes_as | .uid == 1600 and .workspace_chowned' "$TEST_DIR/r.json"
	# A bind source may be such a link too, its last component included.
	mkdir "$TEST_DIR/ro"
	echo ro >"$TEST_DIR/ro/file"
	ln -s "$TEST_DIR/ro" "$TEST_DIR/trusted/ro"
	run sb --ro-bind "$TEST_DIR/trusted/ro:/data" -- cat /data/file
	check_status 0
	[ "$output" = ro ]
}

@test "paths: a bind source that is a symlink in a world-writable directory, a FIFO or a device is refused" {
	mkdir -m 1777 "$TEST_DIR/pub"
	mkdir "$TEST_DIR/ro"
	ln -s "$TEST_DIR/secret" "$TEST_DIR/pub/data"
	sb_fails "--ro-bind $TEST_DIR/pub/data: a symlink in a directory that another user can write: not followed" \
		--ro-bind "$TEST_DIR/pub/data:/data" -- ls /data
	sb_fails "--bind $TEST_DIR/pub/data: a symlink in a directory" \
		--bind "$TEST_DIR/pub/data:/data" -- touch /data/x
	# /tmp itself (sticky, 1777): a link there is anyone's
	local link
	link=$(mktemp -u /tmp/hutch-it-link.XXXXXX)
	ln -s "$TEST_DIR/ro" "$link"
	sb_fails "--ro-bind $link: a symlink in a directory that another user can write" \
		--ro-bind "$link:/data" -- true
	rm -f "$link"
	mkfifo "$TEST_DIR/fifo"
	sb_fails "--ro-bind $TEST_DIR/fifo: not a directory or a regular file" \
		--ro-bind "$TEST_DIR/fifo:/data" -- true
	sb_fails "--ro-bind /dev/null: not a directory or a regular file" \
		--ro-bind /dev/null:/data -- true
	secret_intact
	nothing_mounted
}

@test "paths: a workspace and a bind source swapped for symlinks after hutch resolved them are not followed" {
	# uid 1000 owns the directory holding both; hutch stops once the rootfs is made (before
	# the container and its mounts), the agent swaps them for links to the secret, hutch goes on.
	mkdir "$TEST_DIR/task/ws" "$TEST_DIR/task/data"
	echo mine >"$TEST_DIR/task/data/mine"
	chown -R 1000:1000 "$TEST_DIR/task"
	HUTCH_TEST_STOP_AT=sandbox:rootfs sb_bg swap --workspace "$TEST_DIR/task/ws" \
		--ro-bind "$TEST_DIR/task/data:/data" -- \
		sh -c 'ls /data /workspace; echo written >/workspace/new'
	local hp
	hp=$(sb_pid swap)
	wait_for 500 stopped "$hp"
	setpriv --reuid 1000 --regid 1000 --clear-groups -- sh -c "cd '$TEST_DIR/task' &&
		mv ws ws.orig && mv data data.orig &&
		ln -s '$TEST_DIR/secret' ws && ln -s '$TEST_DIR/secret' data"
	kill -CONT "$hp"
	sb_wait swap
	echo "$output" >&2
	check_status 0
	[[ $output == *mine* && $output != *file* ]]
	[ "$(cat "$TEST_DIR/task/ws.orig/new")" = written ]
	secret_intact
}

@test "paths: --root that is a symlink, or beneath an untrusted one, is refused; nothing made there" {
	make_bundle "$BUNDLE"
	mkdir "$TEST_DIR/real"
	ln -s "$TEST_DIR/real" "$TEST_DIR/rootlink"
	run "$HUTCH" --root "$TEST_DIR/rootlink" list
	[ "$status" -eq 1 ]
	[ "$output" = "hutch: error: --root $TEST_DIR/rootlink: a symlink (give the path it points to)" ]
	run "$HUTCH" --root "$TEST_DIR/rootlink" create --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 1 ]
	[ "$output" = "hutch: error: --root $TEST_DIR/rootlink: a symlink (give the path it points to)" ]
	run "$HUTCH" --root "$TEST_DIR/rootlink" delete --force "$ID"
	[ "$status" -eq 1 ]
	[ -z "$(ls -A "$TEST_DIR/real")" ]
	ln -s "$TEST_DIR/real" "$TEST_DIR/task/link"
	run "$HUTCH" --root "$TEST_DIR/task/link/state" create --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 1 ]
	[[ $output == "hutch: error: --root $TEST_DIR/task/link: a symlink in a directory that another user can write: not followed" ]]
	[ -z "$(ls -A "$TEST_DIR/real")" ]
	# A root whose parents are missing is still made (mkdir -p, as runc; containerd's shim
	# relies on it), and used.
	run "$HUTCH" --root "$TEST_DIR/new/a/b" run --bundle "$BUNDLE" "$ID"
	check_status 0
	[ -d "$TEST_DIR/new/a/b" ] && [ -z "$(ls -A "$TEST_DIR/new/a/b")" ]
	assert_no_leftovers
}

@test "paths: a FIFO planted as a lock, a name record or an owner lock never blocks hutch" {
	LOCK=lock-$TAG
	# A FIFO as a lock's queue, as its counter, and as a ticket ahead of the next one.
	mkdir -p -m 711 "$HUTCH_ROOT" "$SB_DIR"
	mkdir -m 700 "$SB_LOCKS" "$SB_NAMES" "$SB_STATE" "$SB_STATE/sb-999999999" \
		"$SB_LOCKS/c-$TAG" "$SB_LOCKS/t-$TAG"
	mkfifo "$SB_LOCKS/$LOCK" "$SB_NAMES/fifo-$TAG" "$SB_STATE/sb-999999999/owner.lock" \
		"$SB_LOCKS/c-$TAG/counter" "$SB_LOCKS/t-$TAG/00000000000000000001"
	# shellcheck disable=SC2034 # sb_raw's timeout (sandbox-helpers.bash): a hang fails fast
	HUTCH_CMD_TIMEOUT=10
	sb_fails "--lock $LOCK: $SB_LOCKS/$LOCK is not a directory" --lock "$LOCK" -- true
	sb_fails "--lock c-$TAG: $SB_LOCKS/c-$TAG/counter is not a regular file" \
		--lock "c-$TAG" -- true
	sb_fails "--lock t-$TAG: $SB_LOCKS/t-$TAG/00000000000000000001 is not a regular file" \
		--lock "t-$TAG" -- true
	sb_fails "--name fifo-$TAG: $SB_NAMES/fifo-$TAG is not a regular file" \
		--name "fifo-$TAG" -- true
	# A sandbox's sweep reads every name record and every state dir's owner lock.
	run sb -- echo swept
	check_status 0
	[ "$output" = swept ]
	run sb_raw exec "fifo-$TAG" -- true
	check_status 125
	[ "$output" = "hutch: error: sandbox fifo-$TAG: no such sandbox" ]
	rm -rf "$SB_LOCKS/$LOCK" "$SB_LOCKS/c-$TAG" "$SB_LOCKS/t-$TAG" "$SB_NAMES/fifo-$TAG" \
		"$SB_STATE/sb-999999999" # (the sweep took the dir)
}

# delegate_sources RUNTIME: the runtime's config.json (read from hutch's own mount namespace
# while the sandbox runs) names the workspace and the bind by mounts in hutch's scratch, which
# are the very directories given; the workspace works.
delegate_sources() {
	command -v "$1" >/dev/null || skip "$1 not installed"
	local hp cfg src
	mkdir "$TEST_DIR/ro"
	echo ro >"$TEST_DIR/ro/file"
	# It lives 3 s after it wrote: the config is read meanwhile. (A signal could not end it:
	# its sleep may be the container's PID 1, or inside gVisor.)
	sb_bg d --runtime "$1" --workspace "$WS" --ro-bind "$TEST_DIR/ro:/data" -- \
		sh -c "cat /data/file; echo from-$1 >/workspace/out; sleep 3"
	hp=$(sb_pid d)
	wait_for 1000 test -e "$WS/out"
	cfg=/proc/$hp/root$SB_SCRATCH/bundle/config.json
	jq -c '[.root.path, (.mounts[] | select(.type == "bind") | [.destination, .source])]' \
		"$cfg" >&2
	! grep -qF -e "$WS" -e "$TEST_DIR/ro" "$cfg" # the scratch mounts are in $HUTCH_ROOT
	for dst in /workspace /data; do
		src=$(jq -r --arg d "$dst" '.mounts[] | select(.destination == $d) | .source' "$cfg")
		[[ $src == "$SB_SCRATCH"/src/* ]]
	done
	src=$(jq -r '.mounts[] | select(.destination == "/workspace") | .source' "$cfg")
	[ "$(stat -c %d:%i "/proc/$hp/root$src")" = "$(stat -c %d:%i "$WS")" ]
	src=$(jq -r '.mounts[] | select(.destination == "/data") | .source' "$cfg")
	[ "$(stat -c %d:%i "/proc/$hp/root$src")" = "$(stat -c %d:%i "$TEST_DIR/ro")" ]
	sb_wait d
	check_status 0
	[[ $output == ro* ]]
	[ "$(cat "$WS/out")" = "from-$1" ]
	[ "$(stat -c %u "$WS/out")" = 1500 ]
}

@test "paths: runc gets the workspace and binds as hutch's mounts of them, never their paths" {
	delegate_sources runc
}

@test "paths: crun gets the workspace and binds as hutch's mounts of them, never their paths" {
	delegate_sources crun
}

@test "paths: runsc gets the workspace and binds as hutch's mounts of them, never their paths" {
	delegate_sources runsc
}

@test "paths: the fds hutch resolved never reach the sandbox: its command has 0, 1, 2" {
	local m cmd init f l
	mkdir "$TEST_DIR/ro"
	m=$(mark)
	sb_bg fds --workspace "$WS" --ro-bind "$TEST_DIR/ro:/data" -- sh -c \
		"for f in /proc/self/fd/*; do [ \${f##*/} -lt 3 ] || readlink \$f; done; exec sleep $m"
	wait_for 500 pgrep -f "^sleep $m\$"
	cmd=$(pgrep -f "^sleep $m\$")
	init=$(awk '{ print $4 }' "/proc/$cmd/stat")
	[ "$(ls "/proc/$cmd/fd" | sort -n | tr '\n' ' ')" = "0 1 2 " ]
	for f in "/proc/$init"/fd/*; do # beside its stdio, the sandbox's own (a file here)
		l=$(readlink "$f")
		echo "# init $f -> $l" >&2
		[ "${f##*/}" -lt 3 ] || [[ $l != "$TEST_DIR"* && $l != */.sandbox/* ]]
	done
	pkill -f "^sleep $m\$"
	sb_wait fds
	! grep -e "$TEST_DIR" -e /.sandbox/ <<<"$output"
}
