#!/usr/bin/env bats
# hutch exec: a second process in a running container. Its options in both orders clients
# use (podman, containerd's shim), --process, exit codes, detaching with a pid file, the
# stopped and paused refusals, and that the process is exactly as confined as the init:
# the same namespaces, cgroup, capabilities, seccomp filter, and no fd of ours.

load ../helpers

setup() {
	setup_bundle
	set_args sleep 1000
}

teardown() {
	teardown_bundle
}

# The container's init, left running (as podman and the shim create one before exec).
start_ctr() {
	run_bg run -d "${1:-$ID}"
	check_status 0
}

# A foreground exec; sets status, output and lines like `run`. Not `run` itself: its
# warnings (e.g. for status 127) need bats' fd 3, and a test may give fd 3 to hutch.
run_exec() {
	status=0
	output=$(hutch exec "$@" 2>&1) || status=$?
	mapfile -t lines <<<"$output"
	echo "# hutch exec $* -> $status: $output" >&2
}

# The pid of a detached exec'd process from its pid file, after checking the file's form.
exec_pid() {
	local pid
	pid=$(cat "$1")
	[[ $pid =~ ^[0-9]+$ ]] || {
		echo "pid file $1 holds '$pid'" >&2
		return 1
	}
	echo "$pid"
}

# A process JSON from the bundle's own, with jq changes: `process_json FILTER [ARGS...]`.
process_json() {
	local filter=$1
	shift
	jq "$@" ".process | $filter" "$BUNDLE/config.json"
}

@test "exec: runs a command in the container and returns its output" {
	start_ctr
	run_exec "$ID" echo hello
	check_status 0
	[ "$output" = hello ]
}

@test "exec: exit codes are the process's, and 128+signal" {
	start_ctr
	run_exec "$ID" sh -c 'exit 3'
	check_status 3
	run_exec "$ID" sh -c 'kill -9 $$'
	check_status 137
	run_exec "$ID" sh -c 'kill -TERM $$'
	check_status 143
}

@test "exec: a missing command fails with 127 and says why" {
	start_ctr
	run_exec "$ID" /no/such/binary
	check_status 127
	[[ $output == *"no such file or directory"* ]]
	run_exec "$ID" /etc/passwd
	check_status 126
	[[ $output == *"permission denied"* ]]
	# detached too (runc exits 255 for both; docs/clients.md says why hutch does not)
	run_exec -d "$ID" /no/such/binary
	check_status 127
	run_exec -d "$ID" /etc/passwd
	check_status 126
}

@test "exec: stdin, stdout and stderr are the caller's" {
	start_ctr
	echo hello | hutch exec "$ID" sh -c 'read line; echo "out:$line"; echo "err:$line" >&2' \
		>"$TEST_DIR/out" 2>"$TEST_DIR/err" 3>&-
	[ "$(cat "$TEST_DIR/out")" = out:hello ]
	[ "$(cat "$TEST_DIR/err")" = err:hello ]
}

@test "exec: flags end at the container id; the command keeps its own flags" {
	start_ctr
	run_exec "$ID" sh -c 'echo "$0 $1"' -e -t
	check_status 0
	[ "$output" = "-e -t" ]
	run_exec -e A=1 -- "$ID" sh -c 'echo $A'
	check_status 0
	[ "$output" = 1 ]
}

@test "exec: in the container's pid namespace, cgroup and every namespace of the init" {
	start_ctr
	run_bg exec -d --pid-file "$TEST_DIR/exec.pid" "$ID" sleep 1000
	check_status 0
	local pid init ns
	pid=$(exec_pid "$TEST_DIR/exec.pid")
	init=$(state_field "$ID" .pid)
	for ns in pid mnt net ipc uts cgroup user time; do
		[ "$(readlink "/proc/$pid/ns/$ns")" = "$(readlink "/proc/$init/ns/$ns")" ] || {
			echo "namespace $ns differs" >&2
			return 1
		}
	done
	diff "/proc/$init/cgroup" "/proc/$pid/cgroup"
	[ "$(readlink "/proc/$pid/root")" = "$(readlink "/proc/$init/root")" ]
	# Seen from inside: a small pid, and the init is pid 1.
	run_exec "$ID" sh -c 'echo $$; cat /proc/1/cmdline | tr "\0" " "'
	check_status 0
	[ "${lines[0]}" -lt 100 ]
	[ "${lines[1]}" = "sleep 1000 " ]
}

@test "exec -d --pid-file: the pid file is written before hutch returns (podman's order)" {
	start_ctr
	process_json '.args = ["sleep", "1000"]' >"$TEST_DIR/process.json"
	run_bg exec --pid-file "$TEST_DIR/p.pid" --process "$TEST_DIR/process.json" --detach "$ID"
	check_status 0
	local pid
	pid=$(exec_pid "$TEST_DIR/p.pid")
	[ "$(wc -l <"$TEST_DIR/p.pid")" -eq 0 ]
	[ "$(tr '\0' ' ' <"/proc/$pid/cmdline")" = "sleep 1000 " ]
	kill -9 "$pid"
}

@test "exec --process --detach --pid-file: containerd's shim order" {
	start_ctr
	process_json '.args = ["sh", "-c", "echo \"shim:$FOO:$(pwd)\"; sleep 1000"]
		| .env += ["FOO=bar"] | .cwd = "/tmp"' >"$TEST_DIR/process.json"
	run_bg exec --process "$TEST_DIR/process.json" --detach --pid-file "$TEST_DIR/s.pid" "$ID"
	check_status 0
	wait_for_output "$ID" "shim:bar:/tmp"
	local pid
	pid=$(exec_pid "$TEST_DIR/s.pid")
	grep -q '^State:.*S' "/proc/$pid/status"
	kill -9 "$pid"
}

@test "exec --process: user, env, cwd and capabilities come from the file" {
	start_ctr
	process_json '.args = ["sh", "-c", "id; echo $X; pwd; grep CapEff /proc/self/status"]
		| .env = ["X=from-file", "PATH=/bin"] | .cwd = "/home"
		| .user = {uid: 1000, gid: 1000, additionalGids: [20]}
		| .capabilities = {bounding: ["CAP_KILL"], effective: ["CAP_KILL"],
			permitted: ["CAP_KILL"], inheritable: ["CAP_KILL"], ambient: ["CAP_KILL"]}' \
		>"$TEST_DIR/process.json"
	run_exec --process "$TEST_DIR/process.json" "$ID"
	check_status 0
	[[ ${lines[0]} == "uid=1000(user) gid=1000(user) groups=20"* ]]
	[ "${lines[1]}" = from-file ]
	[ "${lines[2]}" = /home ]
	[ "${lines[3]}" = "CapEff:	0000000000000020" ]
}

@test "exec --process: refused with a command or per-process flags; bad JSON is named" {
	start_ctr
	process_json '.args = ["true"]' >"$TEST_DIR/process.json"
	run_exec --process "$TEST_DIR/process.json" "$ID" echo hi
	[ "$status" -ne 0 ]
	[[ $output == *"--process cannot be combined with a command"* ]]
	run_exec --process "$TEST_DIR/process.json" --cwd /tmp "$ID"
	[ "$status" -ne 0 ]
	[[ $output == *"--cwd cannot be combined with --process"* ]]
	echo '{"args": "true", "cwd": "/"}' >"$TEST_DIR/bad.json"
	run_exec --process "$TEST_DIR/bad.json" "$ID"
	[ "$status" -ne 0 ]
	[[ $output == *"--process $TEST_DIR/bad.json: process.args"* ]]
	run_exec --process "$TEST_DIR/missing.json" "$ID"
	[ "$status" -ne 0 ]
	[[ $output == *missing.json* ]]
}

@test "exec --env/-e: appended, and replacing the bundle's value" {
	update_config '.process.env += ["KEEP=1", "OVER=old"]'
	start_ctr
	run_exec --env OVER=new -e NEW=2 -e "SP=a b" "$ID" sh -c 'echo "$KEEP $OVER $NEW $SP"; env | grep -c ^OVER='
	check_status 0
	[ "${lines[0]}" = "1 new 2 a b" ]
	[ "${lines[1]}" = 1 ]
	run_exec --env NOEQUALS "$ID" true
	[ "$status" -ne 0 ]
	[[ $output == *"--env NOEQUALS"* ]]
}

@test "exec --cwd: the working directory; relative and missing ones fail" {
	start_ctr
	run_exec --cwd /tmp "$ID" pwd
	check_status 0
	[ "$output" = /tmp ]
	run_exec --cwd=/etc "$ID" pwd
	check_status 0
	[ "$output" = /etc ]
	run_exec --cwd tmp "$ID" pwd
	[ "$status" -ne 0 ]
	[[ $output == *"--cwd tmp"* ]]
	run_exec --cwd /nonexistent "$ID" pwd
	[ "$status" -ne 0 ]
	[[ $output == *"/nonexistent"* ]]
}

@test "exec --cwd through /proc/self/fd to a host directory is refused" {
	start_ctr
	run_exec --preserve-fds 1 --cwd /proc/self/fd/3 "$ID" pwd 3<"$TEST_DIR"
	[ "$status" -ne 0 ]
	[[ $output == *"outside the container"* ]]
	[[ $output != *"$TEST_DIR"* ]]
}

@test "exec --user/-u: uid and gid; -u 1 means uid 1" {
	start_ctr
	run_exec --user 1000:1000 "$ID" id
	check_status 0
	[[ $output == "uid=1000(user) gid=1000(user)"* ]]
	run_exec -u 1 "$ID" sh -c 'id -u; id -g'
	check_status 0
	[ "${lines[0]}" = 1 ]
	[ "${lines[1]}" = 0 ]
	run_exec -u 65534:65534 -g 10 --additional-gids 20 "$ID" id -G
	check_status 0
	[ "$output" = "65534 10 20" ]
}

@test "exec --user: malformed values are refused, naming --user" {
	start_ctr
	local bad
	for bad in abc 1:2:3 1: :1 -1 1:x 4294967295 user 1.5; do
		run_exec --user "$bad" "$ID" true
		[ "$status" -ne 0 ] || {
			echo "--user $bad was accepted" >&2
			return 1
		}
		[[ $output == *"--user $bad"* ]]
	done
	run_exec -g abc "$ID" true
	[ "$status" -ne 0 ]
	[[ $output == *"--additional-gids abc"* ]]
}

@test "exec: capabilities and no_new_privs equal the init's" {
	start_ctr
	run_exec "$ID" sh -c 'grep -E "^(Cap|NoNewPrivs)" /proc/1/status; echo --;
		grep -E "^(Cap|NoNewPrivs)" /proc/self/status'
	check_status 0
	local init self
	init=$(sed -n '1,/^--$/p' <<<"$output" | grep -v '^--$')
	self=$(sed -n '/^--$/,$p' <<<"$output" | grep -v '^--$')
	[ "$init" = "$self" ]
	[[ $self == *"NoNewPrivs:	1"* ]]
	[[ $self == *"CapEff:	0000000020000420"* ]] # AUDIT_WRITE, KILL, NET_BIND_SERVICE
}

@test "exec as a non-root user: no capability beyond the bundle's" {
	start_ctr
	# Without ambient capabilities, execve as non-root clears permitted and effective.
	run_exec -u 1000 "$ID" grep -E '^Cap(Inh|Prm|Eff|Bnd|Amb)' /proc/self/status
	check_status 0
	[ "${lines[0]}" = "CapInh:	0000000000000000" ]
	[ "${lines[1]}" = "CapPrm:	0000000000000000" ]
	[ "${lines[2]}" = "CapEff:	0000000000000000" ]
	[ "${lines[3]}" = "CapBnd:	0000000020000420" ]
	[ "${lines[4]}" = "CapAmb:	0000000000000000" ]
}

@test "exec --cap: adds to bounding, effective and permitted, as runc" {
	start_ctr
	run_exec --cap CAP_SYS_ADMIN -c net_raw "$ID" grep -E '^Cap(Eff|Prm|Bnd|Amb)' /proc/self/status
	check_status 0
	# 0x20000420 + SYS_ADMIN (21) + NET_RAW (13)
	[ "${lines[0]}" = "CapPrm:	0000000020202420" ]
	[ "${lines[1]}" = "CapEff:	0000000020202420" ]
	[ "${lines[2]}" = "CapBnd:	0000000020202420" ]
	[ "${lines[3]}" = "CapAmb:	0000000000000000" ]
	run_exec --cap CAP_NOPE "$ID" true
	[ "$status" -ne 0 ]
	[[ $output == *"--cap CAP_NOPE"* ]]
}

@test "exec --no-new-privs: sets it where the bundle does not" {
	update_config '.process.noNewPrivileges = false'
	start_ctr
	run_exec "$ID" grep NoNewPrivs /proc/self/status
	check_status 0
	[ "$output" = "NoNewPrivs:	0" ]
	run_exec --no-new-privs "$ID" grep NoNewPrivs /proc/self/status
	check_status 0
	[ "$output" = "NoNewPrivs:	1" ]
}

@test "exec: the container's seccomp filter applies" {
	update_config '.linux.seccomp = {defaultAction: "SCMP_ACT_ALLOW",
		syscalls: [{names: ["mkdir", "mkdirat"], action: "SCMP_ACT_ERRNO", errnoRet: 13}]}'
	start_ctr
	run_exec "$ID" sh -c 'mkdir /tmp/x; grep Seccomp: /proc/self/status'
	[[ $output == *"Permission denied"* ]]
	[[ $output == *"Seccomp:	2"* ]]
	run_exec "$ID" test -d /tmp/x
	check_status 1
}

@test "exec: only fds 0, 1 and 2 reach the process, whatever the caller has open" {
	start_ctr
	run_exec "$ID" ls /proc/self/fd 3<"$TEST_DIR" 5</dev/null 9<"$BUNDLE/config.json"
	check_status 0
	# ls's own directory fd is 3
	[ "$(echo $output)" = "0 1 2 3" ]
}

@test "exec --preserve-fds: passes fds 3.. and sets LISTEN_FDS, closes the others" {
	start_ctr
	echo three >"$TEST_DIR/f3"
	echo four >"$TEST_DIR/f4"
	run_exec --preserve-fds 2 "$ID" sh -c 'cat <&3; cat <&4; echo "LISTEN_FDS=$LISTEN_FDS";
		for fd in 5 6 7 8 9 10 11 12 13 200 251 255; do
			[ -e /proc/self/fd/$fd ] && echo "leaked fd $fd"
		done; true' 3<"$TEST_DIR/f3" 4<"$TEST_DIR/f4" 7<"$TEST_DIR/f4"
	check_status 0
	[ "${lines[0]}" = three ]
	[ "${lines[1]}" = four ]
	[ "${lines[2]}" = LISTEN_FDS=2 ]
	[ "${#lines[@]}" -eq 3 ]
}

@test "exec: the process leads its own session (no controlling terminal of ours)" {
	start_ctr
	run_exec "$ID" sh -c 'cut -d" " -f6 /proc/self/stat; echo $$'
	check_status 0
	[ "${lines[0]}" = "${lines[1]}" ]
}

@test "exec into a stopped container fails: container not running" {
	set_args true
	start_ctr
	wait_for_state "$ID" stopped
	run_exec "$ID" true
	[ "$status" -ne 0 ]
	[[ $output == *"container not running"* ]]
	hutch delete "$ID"
}

@test "exec into a created (not yet started) container works" {
	run_bg create "$ID"
	check_status 0
	run_exec "$ID" echo inside
	check_status 0
	[ "$output" = inside ]
	[ "$(state_field "$ID" .status)" = created ]
}

@test "exec into a missing container fails, naming it" {
	run_exec nosuch true
	[ "$status" -ne 0 ]
	[[ $output == *"nosuch does not exist"* ]]
}

@test "exec into a paused container: refused unless --ignore-paused" {
	start_ctr
	run hutch pause "$ID"
	if [[ $output == *"not supported"* ]]; then
		skip "pause is not implemented in this binary"
	fi
	check_status 0
	run_exec "$ID" true
	[ "$status" -ne 0 ]
	[[ $output == *paused* ]]
	[[ $output == *--ignore-paused* ]]
	# Allowed, but the process is frozen with the rest until resume.
	"$HUTCH" --root "$HUTCH_ROOT" exec --ignore-paused "$ID" echo thawed \
		>"$TEST_DIR/paused.out" 2>&1 </dev/null 3>&- &
	local bg=$!
	track_pid "$bg"
	sleep 0.5
	[ ! -s "$TEST_DIR/paused.out" ]
	hutch resume "$ID"
	wait "$bg"
	[ "$(cat "$TEST_DIR/paused.out")" = thawed ]
}

@test "exec --apparmor and --process-label fail clearly where the LSM is absent" {
	[ -e /sys/kernel/security/apparmor ] && skip "AppArmor is enabled here"
	start_ctr
	run_exec --apparmor some-profile "$ID" true
	[ "$status" -ne 0 ]
	[[ $output == *"AppArmor"* ]]
	run_exec --process-label system_u:system_r:container_t:s0 "$ID" true
	[ "$status" -ne 0 ]
	[[ $output == *"SELinux"* ]]
	run_exec --apparmor "" "$ID" true
	check_status 0
}

@test "exec: --tty with --detach needs --console-socket; --console-socket needs --tty" {
	start_ctr
	run_exec -t -d "$ID" true
	[ "$status" -ne 0 ]
	[[ $output == *console-socket* ]]
	run_exec --console-socket "$TEST_DIR/sock" "$ID" true
	[ "$status" -ne 0 ]
	[[ $output == *"--console-socket"* ]]
}

@test "exec into a container with a user namespace" {
	update_config '.linux.namespaces += [{type: "user"}]
		| .linux.uidMappings = [{containerID: 0, hostID: 100000, size: 65536}]
		| .linux.gidMappings = [{containerID: 0, hostID: 100000, size: 65536}]'
	run_bg run -d "$ID"
	# Not exec's to test: userns.bats covers a container that fails to start.
	[ "$status" -eq 0 ] || skip "a user-namespaced container does not start: $output"
	run_exec "$ID" sh -c 'id -u; cat /proc/self/uid_map'
	check_status 0
	[ "${lines[0]}" = 0 ]
	[ "$(echo ${lines[1]})" = "0 100000 65536" ]
	run_bg exec -d -u 1000 --pid-file "$TEST_DIR/u.pid" "$ID" sleep 1000
	check_status 0
	local pid
	pid=$(exec_pid "$TEST_DIR/u.pid")
	[ "$(awk '/^Uid:/ { print $2 }' "/proc/$pid/status")" = 101000 ]
	[ "$(readlink "/proc/$pid/ns/user")" = "$(readlink "/proc/$(state_field "$ID" .pid)/ns/user")" ]
}

@test "exec: a failed exec leaves no process in the container" {
	start_ctr
	run_exec --cwd /nonexistent "$ID" true
	[ "$status" -ne 0 ]
	# The init and this sh: nothing else runs in the container's pid namespace.
	run_exec "$ID" sh -c 'echo /proc/[0-9]*'
	check_status 0
	[ "$(wc -w <<<"$output")" -eq 2 ]
}
