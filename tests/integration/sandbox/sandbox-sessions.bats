#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
#
# A task platform's shell sessions (docs/sandbox-named.md) on every kind of root: a stored
# image (NAME:TAG, an overlay of its layers mounted in the supervisor's scratch namespace), a
# directory, --as-root's throw-away layer on a stored image, and --network bridge. exec, ls,
# stop and rm find the session by its name, state and init, never by its rootfs's path, which
# the host's mount namespace does not have. An exec'd process sees itself as the main command
# does (user, capabilities, no_new_privs, seccomp, cgroups, namespaces, rlimits, network); the
# layer lives as long as the session; and after stop, rm -f or the supervisor's SIGKILL no
# name record, state, cgroup, scratch mount or mount namespace of it is left (nor a veth,
# lease or firewall element, with bridge). sandbox-named.bats tests the verbs themselves.

load ../helpers
load ../sandbox-helpers
load ../named-helpers
load ../net-helpers
bats_require_minimum_version 1.5.0

# The suite's busybox rootfs, imported as bb:1 into a store of this file's own.
setup_file() {
	sb_images_setup
	[ -n "${SB_IMAGES:-}" ] || return 0
	export HUTCH_STORE=$SB_IMAGES/store
	tar -C "$SB_IMAGES/full" -cf "$SB_IMAGES/bb.tar" .
	timeout 60 "$HUTCH" image import "$SB_IMAGES/bb.tar" --name bb:1 >/dev/null
}

setup() {
	sb_setup
	N=s-$TAG
}

teardown() {
	local rc=0
	named_teardown || rc=1
	sb_teardown || rc=1
	if [ -n "${HOSTNS:-}" ]; then
		net_teardown || rc=1
	else
		teardown_bundle || rc=1
	fi
	return $rc
}

@test "sessions: on a stored image: ls, execs as the session, stop; nothing left" {
	local sup
	IMAGE=bb:1
	# --timeout 0: it lives until stopped (before, stop could not find it, and only killing
	# its supervisor ended it)
	sb_named "$N" --timeout 0 --pids 64 --memory 128m -- sh -c "$(session_cmd)"
	sup=$(sup_pid "$N")
	session_mnt_ns "$N"
	run hs ls --format json
	check_status 0
	jq -e --arg n "$N" --arg id "sb-$sup" '[.[] | select(.name == $n)] | length == 1
		and .[0].id == $id and .[0].status == "running" and .[0].image == "bb:1"' <<<"$output"
	exec_is_session "$N"
	[[ $output == *$'Uid:\t1000\t1000\t1000\t1000'* ]]
	[[ $output == *$'CapEff:\t0000000000000000'* ]]
	[[ $output == *$'NoNewPrivs:\t1'* && $output == *$'Seccomp:\t2'* ]]
	# the session's limits, as the exec sees them in its cgroups
	run hs exec "$N" -- sh -c 'cat /sys/fs/cgroup/pids/pids.max 2>/dev/null ||
		cat /sys/fs/cgroup/pids.max
		cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null ||
		cat /sys/fs/cgroup/memory.max'
	check_status 0
	[ "$output" = $'64\n134217728' ]
	run hs stop "$N"
	check_status 0
	session_gone "$N" "$sup"
	mnt_ns_gone "${SESSION_NS[@]}"
	run hs exec "$N" -- true
	check_status 125
	[[ $output == *"sandbox $N: no such sandbox"* ]]
}

@test "sessions: on a directory: execs as the session, rm -f; nothing left" {
	local sup
	sb_named "$N" -- sh -c "$(session_cmd)"
	sup=$(sup_pid "$N")
	session_mnt_ns "$N"
	exec_is_session "$N"
	run hs ls
	check_status 0
	[[ $(grep "^$N " <<<"$output") == *" running "*" $IMAGE" ]]
	run hs rm "$N"
	check_status 125
	run hs rm -f "$N"
	check_status 0
	session_gone "$N" "$sup"
	mnt_ns_gone "${SESSION_NS[@]}"
}

@test "sessions: --as-root on a stored image: the layer lives between execs, not after rm" {
	local sup
	IMAGE=bb:1
	sb_named "$N" --as-root -- sh -c "$(session_cmd)"
	sup=$(sup_pid "$N")
	session_mnt_ns "$N"
	exec_is_session "$N"
	[[ $output == *$'Uid:\t0\t0\t0\t0'* && $output == *$'NoNewPrivs:\t1'* ]]
	run hs exec "$N" -- sh -c 'echo kept >/etc/session-file && mkdir -p /opt/a && touch /opt/a/b'
	check_status 0
	run hs exec "$N" -- sh -c 'cat /etc/session-file; ls /opt/a'
	check_status 0
	[ "$output" = $'kept\nb' ]
	# the image itself is as it was
	run sb_raw --image bb:1 -- sh -c 'test ! -e /etc/session-file && test ! -e /opt/a'
	check_status 0
	run hs rm -f "$N"
	check_status 0
	session_gone "$N" "$sup"
	mnt_ns_gone "${SESSION_NS[@]}"
	# a new session of the same name starts from the image
	sb_named "$N" --as-root -- sleep 1000
	run hs exec "$N" -- sh -c 'test ! -e /etc/session-file && test ! -e /opt/a'
	check_status 0
	sup=$(sup_pid "$N")
	run hs stop "$N"
	check_status 0
	session_gone "$N" "$sup"
}

@test "sessions: --as-root on a stored image: SIGKILL of its supervisor takes the layer along" {
	local sup m
	m=$(mark)
	IMAGE=bb:1
	sb_named "$N" --as-root -- sleep "$m"
	sup=$(sup_pid "$N")
	session_mnt_ns "$N"
	run hs exec "$N" -- touch /layer-file
	check_status 0
	kill -9 "$sup"
	wait_gone "$sup"
	no_process_like "^sleep $m\$"
	mnt_ns_gone "${SESSION_NS[@]}"
	# Until a sweep (any hutch sandbox's start) removes what the supervisor left, the name
	# finds a session that is not running, which rm -f removes; after it, no such sandbox.
	run hs exec "$N" -- true
	check_status 125
	[[ $output == *"sandbox $N: not running"* || $output == *"sandbox $N: no such sandbox"* ]]
	run hs rm -f "$N"
	[ "$status" = 0 ] || [[ $output == *"sandbox $N: no such sandbox"* ]]
	session_gone "$N" "$sup"
}

@test "sessions: --network bridge: execs are in the session's network; stop leaves nothing" {
	local sup
	net_setup
	serve 198.51.100.2:8080
	wait_listen "$OUTNS" 198.51.100.2:8080
	# hutch runs in the test's "host" netns; the subcommands run from ours
	run timeout -k 5 "$HUTCH_CMD_TIMEOUT" nsenter --net="/run/netns/$HOSTNS" "$HUTCH" sandbox \
		--image bb:1 -e "HUTCH_IT_TAG=$TAG" --name "$N" --detach --network bridge \
		-- sh -c "$(session_cmd)"
	check_status 0
	sup=$(sup_pid "$N")
	echo "$sup" >>"$SB_PIDS"
	session_mnt_ns "$N"
	exec_is_session "$N"
	[[ $output == *$'\neth0\n'* && $output == *"eth0 inet 10.89.0."* ]]
	run hs exec "$N" -- wget -q -O- http://198.51.100.2:8080/
	check_status 0
	[ "$output" = "ok 198.51.100.2" ]
	run hs stop "$N"
	check_status 0
	session_gone "$N" "$sup"
	mnt_ns_gone "${SESSION_NS[@]}"
	nothing_left
}
