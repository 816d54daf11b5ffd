#!/usr/bin/env bats
# Host root through the workspace: the sandbox's files reach the host, so nothing it makes may
# belong to host uid 0 or gid 0, or to a host id but the one it was given, and no setuid or
# setgid file it leaves may grant anything. Each way of giving it a writable place (an
# unprivileged workspace, --workspace-owner, a group-root workspace, an rw --bind of someone
# else's, --as-root) gets the plant: `cp busybox sh; chmod 4755 sh`, then from the host
# `runuser -u nobody -- ./sh -c 'id -u'`.

load ../integration/helpers
load ../integration/sandbox-helpers

setup() {
	sb_setup
	sb_private_image
	BUNDLE=$TEST_DIR/image-bundle
	mkdir -p "$BUNDLE"
	ln -s "$IMAGE" "$BUNDLE/rootfs"
	install_static_helper euid # /bin/euid: prints the ids it runs with
	chown 0:0 "$WS" # as an agent platform running as root makes them; tests give it away
}

# The plant: a copy of euid (it prints its effective ids), made setuid and setgid.
PLANT='cp /bin/euid ./sh; chmod 4755 ./sh; echo "chmod=$?"; chmod 2755 ./sh; echo "chmod-g=$?"
	chmod 6755 ./sh; ls -ln ./sh'

# The planted file, run from the host as nobody, grants nothing: it runs as nobody. (With
# --as-root setuid bits are allowed inside; what it leaves is cleared when it ends, which
# setid-walk.bats tests in detail.)
grants_nothing() {
	local f=$1 got
	[ -e "$f" ] || { echo "no $f" >&2; return 1; }
	got=$(runuser -u nobody -- "$f")
	echo "$f: mode $(stat -c %a "$f") owner $(stat -c %u:%g "$f"), runs as $got" >&2
	[[ $(stat -c %u:%g "$f") != 0:* && $(stat -c %u:%g "$f") != *:0 ]]
	[ "$got" = "65534 65534" ]
}

@test "workspace: a root-owned workspace is refused with the fix named, and nothing is left" {
	run sb --workspace "$WS" -- sh -c "cd /workspace; $PLANT"
	[ "$status" -eq 125 ]
	[[ $output == *"--workspace $WS is owned by root"* ]]
	[[ $output == *"--workspace-owner UID:GID"* ]]
	[ -z "$(ls -A "$WS")" ]
}

@test "workspace: an unprivileged owner's workspace: files are the owner's, the plant grants nothing" {
	chown 1500:1500 "$WS"
	run sb --workspace "$WS" --report "$TEST_DIR/r.json" -- sh -c "cd /workspace; $PLANT"
	check_status 0
	[[ $output == *"chmod=1"* ]]
	[[ $output == *"chmod-g=1"* ]]
	[ "$(stat -c %u:%g "$WS/sh")" = 1500:1500 ]
	grants_nothing "$WS/sh"
	[ ! -u "$WS/sh" ] && [ ! -g "$WS/sh" ]
	jq -e '.isolation.user.writes_as | .uid == 1500 and .gid == 1500 and .setid_bits_blocked' \
		"$TEST_DIR/r.json"
}

@test "workspace: --workspace-owner gives a root-owned workspace to UID:GID, who the sandbox writes as" {
	run sb --workspace "$WS" --workspace-owner 1600:1601 --report "$TEST_DIR/r.json" \
		-- sh -c "cd /workspace; $PLANT"
	check_status 0
	[[ $output == *"now belongs to 1600:1601"* ]]
	[ "$(stat -c %u:%g "$WS" "$WS/sh" | sort -u)" = 1600:1601 ]
	grants_nothing "$WS/sh"
	jq -e '.isolation.user.writes_as | .uid == 1600 and .gid == 1601 and .workspace_chowned' \
		"$TEST_DIR/r.json"
	run sb --workspace "$WS" --workspace-owner 0:5 -- true
	[ "$status" -eq 125 ]
	[[ $output == *"uid and gid 0 are root's"* ]]
}

@test "workspace: a group-root workspace: files get a subordinate gid; setgid there is refused" {
	chown 1500:0 "$WS"
	chmod 775 "$WS"
	run sb --workspace "$WS" --report "$TEST_DIR/r.json" -- sh -c "cd /workspace; $PLANT"
	check_status 0
	[[ $output == *"its group is root's"* ]]
	local gid
	gid=$(jq -r .isolation.user.writes_as.gid "$TEST_DIR/r.json")
	[ "$gid" -ge 65536 ]
	[ "$(stat -c %u:%g "$WS/sh")" = "1500:$gid" ]
	grants_nothing "$WS/sh"
	rm -f "$WS"/*
	chmod g+s "$WS"
	run sb --workspace "$WS" -- touch /workspace/x
	[ "$status" -eq 125 ]
	[[ $output == *"is a setgid directory of group root"* ]]
	[ ! -e "$WS/x" ]
}

@test "workspace: an rw --bind of another user's is idmapped: files are its owner's; root's is refused" {
	chown 1500:1500 "$WS"
	mkdir "$TEST_DIR/other"
	chown 1700:1701 "$TEST_DIR/other"
	run sb --workspace "$WS" --bind "$TEST_DIR/other:/data" --report "$TEST_DIR/r.json" \
		-- sh -c "cd /data; $PLANT
		stat -c %u:%g /data"
	check_status 0
	jq -e '.isolation.user.binds == [{destination: "/data", uid: 1700, gid: 1701,
		idmapped: true}]' "$TEST_DIR/r.json"
	[ "${lines[-1]}" = 1000:1000 ] # seen as the sandbox user's own inside
	[ "$(stat -c %u:%g "$TEST_DIR/other/sh")" = 1700:1701 ]
	grants_nothing "$TEST_DIR/other/sh"
	mkdir "$TEST_DIR/roots"
	run sb --bind "$TEST_DIR/roots:/data" -- touch /data/x
	[ "$status" -eq 125 ]
	[[ $output == *"--bind $TEST_DIR/roots:/data:rw: $TEST_DIR/roots is owned by root"* ]]
	[ ! -e "$TEST_DIR/roots/x" ]
	run sb --bind "$TEST_DIR/roots:/data:ro" -- ls /data
	check_status 0
}

@test "workspace: --as-root is root in a user namespace: subordinate ids on the host, the owner's files" {
	chown 1500:1500 "$WS"
	local sub_u sub_g m
	sub_u=$(awk -F: '$1 == "root" || $1 == "0" { print $2; exit }' /etc/subuid 2>/dev/null)
	sub_u=${sub_u:-1879048192}
	sub_g=$(awk -F: '$1 == "root" || $1 == "0" { print $2; exit }' /etc/subgid 2>/dev/null)
	sub_g=${sub_g:-1879048192}
	m=$(mark)
	sb --as-root --workspace "$WS" --report "$TEST_DIR/r.json" -- sh -c "cat /proc/self/uid_map
		cat /proc/self/gid_map; id -u; stat -c %u:%g /bin/busybox /; echo x >/newfile
		cd /workspace; $PLANT; sleep $m" >"$TEST_DIR/out" 2>&1 &
	local bg=$!
	track_pid $bg
	wait_process_like "^sleep $m\$"
	# From the host, the sandbox's root is the subordinate range's start, never 0.
	local pid
	pid=$(pgrep -f "^sleep $m\$")
	[ "$(awk '/^Uid:/ { print $3 }' "/proc/$pid/status")" = "$sub_u" ]
	pkill -f "^sleep $m\$"
	wait $bg || true
	cat "$TEST_DIR/out"
	grep -Eq "^ +0 +$sub_u +65536\$" "$TEST_DIR/out"
	grep -Eq "^ +0 +$sub_g +65536\$" "$TEST_DIR/out"
	grep -qx 0 "$TEST_DIR/out"
	# The image is root's inside (the idmapped view), so a package manager can work.
	grep -qx 0:0 "$TEST_DIR/out"
	[ "$(stat -c %u:%g "$WS/sh")" = 1500:1500 ]
	grants_nothing "$WS/sh"
	jq -e '.isolation.user | .uid == 0 and .host_uid == '"$sub_u"' and .writes_as.uid == 1500
		and .writes_as.idmapped' "$TEST_DIR/r.json"
}

@test "workspace: --host-root warns on stderr every time, and the report says so" {
	local i
	for i in 1 2; do
		run sb --host-root --report "$TEST_DIR/r.json" -- id -u
		check_status 0
		[[ $output == *"hutch: warning: --host-root: the sandbox runs as host root"* ]]
	done
	jq -e '.isolation.user | .user_namespace == false and (.warning | test("host-root"))' \
		"$TEST_DIR/r.json"
	run sb --host-root --as-root -- true
	[ "$status" -eq 125 ]
	[[ $output == *"--host-root cannot be combined with --as-root"* ]]
}
