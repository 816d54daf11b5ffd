#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
#
# containerd 1.6 through its runc shim (io.containerd.runc.v2), driven by ctr, with $HUTCH as
# the shim's runc binary (--runc-binary, the same BinaryName a Kubernetes RuntimeClass sets).
# containerd runs by hand with every path in $CL_DIR and the CRI plugin disabled. The shim
# calls the runtime with --root R --log B/log.json --log-format json, a relative root.path
# and the bundle as cwd.

load helpers

# The shim's sockets are /run/containerd/s/<hash> whatever containerd's state dir is.
HOST_PATHS=(/run/containerd)
IMG=docker.io/library/bb:latest

ctr() {
	timeout -k 5 "$CLIENT_TIMEOUT" /usr/bin/ctr --address "$CL_DIR/containerd.sock" \
		--namespace hutch-test "$@"
}

# ctr_run ID [CTR RUN FLAGS...] -- [COMMAND...]: a container with its cgroup at $TAG/ID.
ctr_run() {
	local id=$1 flags=()
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		flags+=("$1")
		shift
	done
	shift
	ctr run --runc-binary "$HUTCH" --runc-root "$CL_DIR/runtime" --fifo-dir "$CL_DIR/fifo" \
		--cgroup "$TAG/$id" "${flags[@]}" "$IMG" "$id" "$@"
}

# A long-running container: `ctr run -d`.
ctr_service() {
	local id=$1
	shift
	ctr_run "$id" -d "$@" -- sh -c "$SERVICE_SH"
}

# ctr_remove ID: kill, delete the task (its output: the exit code warning), delete the container.
ctr_remove() {
	ctr task kill -a -s SIGKILL "$1" >/dev/null 2>&1 || true
	ctr task delete --force "$1" 2>&1 || true
	ctr containers delete "$1" >/dev/null 2>&1 || true
}

# wait_task ID STATUS: `ctr task ls` shows ID with STATUS (RUNNING, PAUSED, STOPPED).
wait_task() {
	local tries=100
	until ctr task ls | grep -qE "^$1 +[0-9]+ +$2\$"; do
		tries=$((tries - 1))
		[ "$tries" -gt 0 ] || return 1
		sleep 0.1
	done
}

setup_file() {
	clients_setup_file containerd containerd
	cat >"$CL_DIR/containerd.toml" <<-EOF
		version = 2
		root = "$CL_DIR/root"
		state = "$CL_DIR/state"
		disabled_plugins = ["io.containerd.grpc.v1.cri"]
		[grpc]
		  address = "$CL_DIR/containerd.sock"
		[ttrpc]
		  address = "$CL_DIR/containerd.sock.ttrpc"
		[debug]
		  address = "$CL_DIR/debug.sock"
		[plugins."io.containerd.internal.v1.opt"]
		  path = "$CL_DIR/opt"
	EOF
	start_daemon containerd "$CL_DIR/containerd.log" containerd --config "$CL_DIR/containerd.toml"
	if ! wait_for ctr version; then
		tail -n 20 "$CL_DIR/containerd.log" >&2
		skip "containerd did not start (log above)"
	fi
	make_oci_archive "$CL_DIR/busybox.tar" "$CL_DIR/bb-oci.tar" "$IMG"
	ctr images import "$CL_DIR/bb-oci.tar" >/dev/null
}

teardown() {
	local id
	[ -f "$CL_DIR/containerd.pid" ] || return 0 # stopped by the last test
	for id in $(ctr containers list -q 2>/dev/null); do
		ctr_remove "$id" >/dev/null
	done
}

teardown_file() {
	[ -d "${CL_DIR:-}" ] || return 0
	stop_daemon containerd
	check_and_clean 2>/dev/null || true
}

@test "containerd: run echo" {
	run ctr_run t1 --rm -- echo hello from hutch
	check_status 0
	[ "$output" = "hello from hutch" ]
}

@test "containerd: exit codes 0, 3, and 1 when the command cannot run" {
	run ctr_run t0 --rm -- true
	check_status 0
	run ctr_run t3 --rm -- sh -c 'exit 3'
	check_status 3
	# ctr maps a failed create to 1; the runtime's message comes through.
	run ctr_run t127 --rm -- /nonexistent
	check_status 1
	expect_output "no such file or directory"
	ctr_remove t127
	run ctr_run t126 --rm -- /etc/passwd
	check_status 1
	expect_output "permission denied"
	ctr_remove t126
}

@test "containerd: exec in a running container: plain, env and user, tty, exit code" {
	ctr_service svc --env FOO=bar
	run ctr task exec --exec-id e1 svc echo exec works
	check_status 0
	[ "$output" = "exec works" ]
	run ctr task exec --exec-id e2 --user 1000 svc sh -c 'echo $FOO $(id -u)'
	check_status 0
	[ "$output" = "bar 1000" ]
	# ctr -t wants a terminal on stdin: script(1) gives it one. script's own stdin must not
	# be at end of file (CI runs with </dev/null): a pipe that stays open a while.
	run script -qec "timeout $CLIENT_TIMEOUT /usr/bin/ctr --address $CL_DIR/containerd.sock \
		--namespace hutch-test task exec -t --exec-id e3 svc tty" /dev/null < <(sleep 20)
	check_status 0
	expect_output /dev/pts/
	run ctr task exec --exec-id e4 svc sh -c 'exit 5'
	check_status 5
	# the shim reports the runtime's message, not its exit status (runc's 255, hutch's 127)
	run ctr task exec --exec-id e5 svc /nonexistent
	[ "$status" -ne 0 ]
	expect_output "no such file or directory"
}

@test "containerd: kill (SIGTERM), kill --all (SIGKILL)" {
	ctr_service svc
	ctr_run victim -d -- sleep 1000
	run ctr task kill svc
	check_status 0
	wait_task svc STOPPED
	run ctr task delete svc
	check_status 0
	[[ $output != *"exit code"* ]] # 0: no warning
	run ctr task kill --all -s SIGKILL victim
	check_status 0
	wait_task victim STOPPED
	run ctr task delete victim
	check_status 0
	expect_output "exit code 137"
}

@test "containerd: pause and resume" {
	ctr_service svc
	run ctr task pause svc
	check_status 0
	wait_task svc PAUSED
	run ctr task resume svc
	check_status 0
	wait_task svc RUNNING
	run ctr task exec --exec-id e1 svc echo thawed
	check_status 0
	[ "$output" = thawed ]
}

@test "containerd: memory and pids limits" {
	# ctr has --memory-limit but no pids flag: a spec from `ctr oci spec` carries both.
	mkdir -p "$CL_DIR/limits-rootfs"
	tar -C "$CL_DIR/limits-rootfs" -xf "$CL_DIR/busybox.tar"
	ctr oci spec | jq --arg root "$CL_DIR/limits-rootfs" --arg cg "$TAG/limits" '
		.root = {path: $root, readonly: true}
		| .process.args = ["sleep", "1000"]
		| .process.env = ["PATH=/bin"]
		| .linux.cgroupsPath = $cg
		| .linux.resources.memory = {limit: 67108864}
		| .linux.resources.pids = {limit: 32}' >"$CL_DIR/limits.json"
	run ctr run -d --runc-binary "$HUTCH" --runc-root "$CL_DIR/runtime" \
		--fifo-dir "$CL_DIR/fifo" --config "$CL_DIR/limits.json" limits
	check_status 0
	[ "$(cgroup_value "$TAG/limits" memory.limit_in_bytes memory.max)" = 67108864 ]
	[ "$(cgroup_value "$TAG/limits" pids.max pids.max)" = 32 ]
	ctr_remove limits
	ctr_service mem --memory-limit 33554432
	[ "$(cgroup_value "$TAG/mem" memory.limit_in_bytes memory.max)" = 33554432 ]
}

@test "containerd: read-only rootfs" {
	run ctr_run ro --rm --read-only -- touch /x
	[ "$status" -ne 0 ]
	expect_output "Read-only file system"
}

@test "containerd: tmpfs" {
	run ctr_run tmp --rm --read-only \
		--mount type=tmpfs,src=tmpfs,dst=/scratch,options=rw:size=1m:mode=1777 -- \
		sh -c 'grep " /scratch " /proc/mounts; echo data >/scratch/f && cat /scratch/f'
	check_status 0
	[[ ${lines[0]} == "tmpfs /scratch tmpfs "* ]]
	[ "${lines[1]}" = data ]
}

@test "containerd: cap-drop" {
	run ctr_run cap --rm --cap-drop CAP_CHOWN -- chown 1000 /tmp
	[ "$status" -ne 0 ]
	expect_output "Operation not permitted"
}

@test "containerd: no-new-privileges (ctr's default) and --allow-new-privs" {
	run ctr_run nnp --rm -- grep NoNewPrivs /proc/self/status
	check_status 0
	[[ $output == *1 ]]
	run ctr_run nnp2 --rm --allow-new-privs -- grep NoNewPrivs /proc/self/status
	check_status 0
	[[ $output == *0 ]]
}

@test "containerd: task ps" {
	ctr_service svc
	local pid
	pid=$(ctr task ls | awk '$1 == "svc" { print $2 }')
	run ctr task ps svc
	check_status 0
	[[ $output == *"$pid"* ]]
}

@test "containerd: update" {
	skip "ctr 1.6 has no update command (docker.bats drives the shim's update)"
}

@test "containerd: rm a running container removes its state and cgroup" {
	ctr_service svc
	[ -n "$(find $(tag_cgroup_dirs) -mindepth 1 -type d -name svc)" ]
	run ctr task delete --force svc
	check_status 0
	run ctr containers delete svc
	check_status 0
	[ -z "$(ctr containers list -q)" ]
	[ -z "$(ls -A "$CL_DIR/runtime/hutch-test" 2>/dev/null)" ]
	[ -z "$(find $(tag_cgroup_dirs) -mindepth 1 -type d -name svc)" ]
}

@test "containerd: leaves nothing behind" {
	[ -z "$(ctr containers list -q)" ]
	[ -z "$(ls -A "$CL_DIR/runtime/hutch-test" 2>/dev/null)" ]
	ctr images remove "$IMG" >/dev/null
	stop_daemon containerd
	check_and_clean
}
