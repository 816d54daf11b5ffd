#!/usr/bin/env bats
# The process: user, groups, umask, signal dispositions, rlimits, env, cwd, args,
# oomScoreAdj, noNewPrivileges, pid 1.

load ../helpers

@test "process: user, group and additionalGids" {
	update_config '.process.user = {uid: 1000, gid: 1000, additionalGids: [10, 20]}'
	set_args sh -c 'id -u; id -g; grep ^Groups: /proc/self/status; ls /root 2>&1 || true'
	run_ok
	[ "${lines[0]}" = 1000 ]
	[ "${lines[1]}" = 1000 ]
	[ "$(echo ${lines[2]})" = "Groups: 10 20" ]
	[[ ${lines[3]} == *"Permission denied"* ]]
}

@test "process: root gets no supplementary groups by default" {
	set_args sh -c 'id -u; grep ^Groups: /proc/self/status'
	run_ok
	[ "${lines[0]}" = 0 ]
	[ "$(echo ${lines[1]})" = "Groups:" ]
}

@test "process: umask from the config, 0022 by default" {
	set_args sh -c umask
	run_ok
	[ "$output" = 0022 ]
	update_config '.process.user.umask = 63'
	run_ok
	[ "$output" = 0077 ]
}

# Dispositions set to "ignore" survive execve, so whatever ignored signals hutch inherited
# (nohup, a shell's trap '') would reach the container's process unless reset, and so would
# a blocked mask. Called without the helper's `timeout`, which installs handlers of its own.
@test "process: signals ignored by hutch's caller are not ignored in the container" {
	set_args grep -E '^Sig(Ign|Blk):' /proc/self/status
	run bash -c 'trap "" INT TERM HUP PIPE USR1 USR2 TSTP; exec "$0" --root "$1" run "$2"' \
		"$HUTCH" "$HUTCH_ROOT" "$ID"
	check_status 0
	echo "$output"
	[[ $output == *"SigIgn:	0000000000000000"* ]]
	[[ $output == *"SigBlk:	0000000000000000"* ]]
}

@test "process: rlimits" {
	update_config '.process.rlimits = [
		{type: "RLIMIT_NOFILE", soft: 512, hard: 1000},
		{type: "RLIMIT_NPROC", soft: 300, hard: 400},
		{type: "RLIMIT_CORE", soft: 0, hard: 0}]'
	set_args cat /proc/self/limits
	run_ok
	[[ $(grep "Max open files" <<<"$output") =~ Max\ open\ files\ +512\ +1000\ + ]]
	[[ $(grep "Max processes" <<<"$output") =~ Max\ processes\ +300\ +400\ + ]]
	[[ $(grep "Max core file size" <<<"$output") =~ Max\ core\ file\ size\ +0\ +0\ + ]]
}

@test "process: env is exactly the configured one, HOME aside" {
	update_config '.process.env = ["PATH=/bin:/usr/bin", "FOO=bar baz", "EMPTY=", "HUTCH_IT_TAG=" + $t]' \
		--arg t "$TAG"
	export HOST_ONLY_VARIABLE=1
	set_args env
	run_ok
	grep -qx "FOO=bar baz" <<<"$output"
	grep -qx "EMPTY=" <<<"$output"
	grep -qx "PATH=/bin:/usr/bin" <<<"$output"
	! grep -q HOST_ONLY_VARIABLE <<<"$output"
	! grep -q '^HUTCH=' <<<"$output"
}

@test "process: HOME from the container's /etc/passwd for process.user.uid when env has none, as runc" {
	set_args sh -c 'echo "$HOME"; env | grep -c ^HOME='
	run_ok
	[ "${lines[0]}" = /root ]
	[ "${lines[1]}" = 1 ]
	update_config '.process.user = {uid: 1000, gid: 1000}'
	run_ok
	[ "${lines[0]}" = /home/user ]
	# no entry for the uid: "/"; an empty HOME= counts as none, as runc
	update_config '.process.user = {uid: 4242, gid: 4242} | .process.env += ["HOME="]'
	run_ok
	[ "${lines[0]}" = / ]
	[ "${lines[1]}" = 1 ]
	# one that the config sets is kept
	update_config '.process.env += ["HOME=/mine"]'
	run_ok
	[ "${lines[0]}" = /mine ]
	# exec: the same rule, for its own user
	update_config '.process.env |= map(select(startswith("HOME=") | not)) | .process.user = {uid: 0, gid: 0}'
	set_args sleep 100
	run_bg run -d "$ID"
	check_status 0
	run hutch exec -u 1000 "$ID" sh -c 'echo "$HOME"'
	check_status 0
	[ "$output" = /home/user ]
	run hutch exec -e HOME=/x "$ID" sh -c 'echo "$HOME"'
	check_status 0
	[ "$output" = /x ]
}

@test "process: HOME: /etc/passwd is read inside the root, a symlink to a host file is not followed out" {
	echo "root:x:0:0:root:/host-home:/bin/sh" >"$TEST_DIR/host-passwd"
	rm "$BUNDLE/rootfs/etc/passwd"
	ln -s "$TEST_DIR/host-passwd" "$BUNDLE/rootfs/etc/passwd"
	set_args sh -c 'echo "$HOME"'
	run_ok
	[ "$output" = / ]
	# a symlink inside the root is followed there
	mkdir -p "$BUNDLE/rootfs$TEST_DIR"
	echo "root:x:0:0:root:/in-root:/bin/sh" >"$BUNDLE/rootfs$TEST_DIR/host-passwd"
	run_ok
	[ "$output" = /in-root ]
}

@test "process: cwd" {
	update_config '.process.cwd = "/home/user"'
	set_args pwd
	run_ok
	[ "$output" = /home/user ]
}

@test "process: a missing cwd is made, root's and 0755, even on a read-only root, as runc" {
	update_config '.process.cwd = "/new/deeper/dir" | .process.user = {uid: 1000, gid: 1000}'
	set_args sh -c 'pwd; stat -c "%u %a" /new /new/deeper /new/deeper/dir'
	run_ok
	[ "${lines[0]}" = /new/deeper/dir ]
	[ "${lines[1]}" = "0 755" ] && [ "${lines[2]}" = "0 755" ] && [ "${lines[3]}" = "0 755" ]
	rm -r "$BUNDLE/rootfs/new"
	update_config '.root.readonly = true'
	set_args pwd
	run_ok
	[ "$output" = /new/deeper/dir ]
	[ -d "$BUNDLE/rootfs/new/deeper/dir" ]
}

@test "process: a missing cwd is made inside the root: a symlink to a host path stays in it" {
	ln -s "$TEST_DIR/host-dir" "$BUNDLE/rootfs/lnk"
	update_config '.process.cwd = "/lnk/sub"'
	set_args pwd
	run_ok
	[ ! -e "$TEST_DIR/host-dir" ]
	[ -d "$BUNDLE/rootfs$TEST_DIR/host-dir/sub" ]
	# a missing one with .. in it is refused, naming process.cwd
	update_config '.process.cwd = "/a/../b"'
	run_bg create "$ID"
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ $output == *process.cwd* ]]
	[ ! -e "$BUNDLE/rootfs/b" ] && [ ! -e "$BUNDLE/rootfs/a" ]
	assert_no_leftovers
}

@test "process: args are passed as they are, the command found in the container's PATH" {
	set_args echo 'a  b' '' '$HOME' '*'
	run_ok
	[ "$output" = 'a  b  $HOME *' ]
}

@test "process: oomScoreAdj" {
	update_config '.process.oomScoreAdj = 123'
	set_args cat /proc/self/oom_score_adj
	run_ok
	[ "$output" = 123 ]
}

@test "process: noNewPrivileges true and false" {
	set_args sh -c 'grep ^NoNewPrivs: /proc/self/status'
	run_ok
	[ "$(echo $output)" = "NoNewPrivs: 1" ]
	update_config '.process.noNewPrivileges = false'
	run_ok
	[ "$(echo $output)" = "NoNewPrivs: 0" ]
}

@test "process: is pid 1 of a new pid namespace, and its session leader" {
	set_args sh -c 'echo $$; cut -d" " -f6 /proc/self/stat'
	run_ok
	[ "${lines[0]}" = 1 ]
}

@test "process: joins a pid namespace given by path, and is not its pid 1" {
	unshare --pid --fork sleep 100 &
	local holder=$!
	track_pid "$holder"
	local inner tries=100
	until inner=$(pgrep -P "$holder" -x sleep) || [ $tries -eq 0 ]; do
		sleep 0.02
		tries=$((tries - 1))
	done
	[ -n "$inner" ]
	update_config '.linux.namespaces |= map(if .type == "pid" then .path = $p else . end)' \
		--arg p "/proc/$inner/ns/pid"
	set_args sh -c 'readlink /proc/self/ns/pid; echo $$'
	run_ok
	[ "${lines[0]}" = "pid:[$(stat -L -c %i "/proc/$inner/ns/pid")]" ]
	[ "${lines[1]}" != 1 ]
	kill -9 "$holder" "$inner"
	wait "$holder" 2>/dev/null || true
}
