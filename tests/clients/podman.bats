#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
#
# podman (through conmon) with $HUTCH as its OCI runtime. Storage, state, locks, events and
# the runtime's --root all live in $CL_DIR; containers.conf comes from there too
# (CONTAINERS_CONF), and names the runtime "hutch" in runtime_supports_json so that podman
# passes it --log-format=json --log FILE, as it does for runc and crun.

load helpers

# The blob-info cache of `podman import` is /var/lib/containers/cache whatever the storage root.
HOST_PATHS=(/var/lib/containers/cache /var/lib/containers)

podman() {
	timeout -k 5 "$CLIENT_TIMEOUT" /usr/bin/podman --root "$CL_DIR/graph" \
		--runroot "$CL_DIR/run" --storage-driver overlay "$@"
}

# Every container's cgroup goes beneath ours: $TAG/libpod-ID, relative.
prun() {
	podman run --cgroup-parent "$TAG" "$@"
}

setup_file() {
	clients_setup_file podman podman
	mkdir -p "$CL_DIR/bin"
	# podman passes no --root to a runtime as root: the wrapper keeps its state in $CL_DIR.
	printf '#!/bin/sh\nexec %q --root %q "$@"\n' "$HUTCH" "$CL_DIR/runtime" >"$CL_DIR/bin/hutch"
	chmod 755 "$CL_DIR/bin/hutch"
	# nproc: podman's default for root (1048576) may be above the hard limit, which no
	# runtime can raise without CAP_SYS_RESOURCE; nofile likewise.
	cat >"$CL_DIR/containers.conf" <<-EOF
		[containers]
		cgroups = "no-conmon"
		default_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]
		netns = "none"
		[network]
		network_config_dir = "$CL_DIR/net"
		[engine]
		cgroup_manager = "cgroupfs"
		events_logger = "file"
		events_logfile_path = "$CL_DIR/events.log"
		lock_type = "file"
		tmp_dir = "$CL_DIR/tmp"
		volume_path = "$CL_DIR/volumes"
		runtime = "hutch"
		runtime_supports_json = ["crun", "runc", "kata", "runsc", "krun", "hutch"]
		[engine.runtimes]
		hutch = ["$CL_DIR/bin/hutch"]
	EOF
	export CONTAINERS_CONF=$CL_DIR/containers.conf
	podman import -q "$CL_DIR/busybox.tar" localhost/bb:latest >/dev/null
}

teardown() {
	[ -d "$CL_DIR" ] || return 0 # removed by the last test
	podman rm -af -t 0 >/dev/null 2>&1 || true
}

teardown_file() {
	[ -d "${CL_DIR:-}" ] && check_and_clean 2>/dev/null || true
}

@test "podman: run echo" {
	run prun --rm bb echo hello from hutch
	check_status 0
	[ "$output" = "hello from hutch" ]
}

@test "podman: exit codes 0, 3, 126 (not executable), 127 (not found)" {
	run prun --rm bb true
	check_status 0
	run prun --rm bb sh -c 'exit 3'
	check_status 3
	run -126 prun --rm bb /etc/passwd
	run -127 prun --rm bb /nonexistent
}

@test "podman: exec in a running container: plain, env and user, tty, exit code" {
	run prun -d --name svc bb sh -c "$SERVICE_SH"
	check_status 0
	run podman exec svc echo exec works
	check_status 0
	[ "$output" = "exec works" ]
	run podman exec -e FOO=bar -u 1000:1000 svc sh -c 'echo $FOO $(id -u) $(id -g)'
	check_status 0
	[ "$output" = "bar 1000 1000" ]
	run podman exec -t svc tty
	check_status 0
	[[ $output == /dev/pts/* ]]
	run podman exec svc sh -c 'exit 5'
	check_status 5
	# podman maps the runtime's error text, not its exit status (runc's is 255, hutch's 127
	# and 126): the same codes with either
	run -127 podman exec svc /nonexistent
	run -126 podman exec svc /etc/passwd
}

@test "podman: stop (SIGTERM) and kill (SIGKILL)" {
	prun -d --name svc bb sh -c "$SERVICE_SH"
	prun -d --name victim bb sleep 1000
	run podman stop -t 10 svc
	check_status 0
	[ "$(podman inspect --format '{{.State.ExitCode}}' svc)" = 0 ]
	run podman kill victim
	check_status 0
	podman wait victim
	[ "$(podman inspect --format '{{.State.ExitCode}}' victim)" = 137 ]
}

@test "podman: pause and unpause" {
	prun -d --name svc bb sh -c "$SERVICE_SH"
	run podman pause svc
	check_status 0
	[ "$(podman inspect --format '{{.State.Status}}' svc)" = paused ]
	run podman unpause svc
	check_status 0
	[ "$(podman inspect --format '{{.State.Status}}' svc)" = running ]
	run podman exec svc echo thawed
	check_status 0
	[ "$output" = thawed ]
}

@test "podman: memory and pids limits" {
	run prun --rm --memory 64m --pids-limit 32 bb sh -c "$MEM_LIMIT_SH; $PIDS_LIMIT_SH"
	check_status 0
	[ "${lines[0]}" = 67108864 ]
	[ "${lines[1]}" = 32 ]
}

@test "podman: read-only rootfs" {
	run prun --rm --read-only bb sh -c 'touch /x'
	[ "$status" -ne 0 ]
	expect_output "Read-only file system"
	# podman's --read-only keeps /tmp writable (a tmpfs)
	run prun --rm --read-only bb sh -c 'touch /tmp/x && echo ok'
	check_status 0
	[ "$output" = ok ]
}

@test "podman: tmpfs" {
	run prun --rm --tmpfs /scratch:rw,size=1m,mode=1777 bb \
		sh -c 'grep " /scratch " /proc/mounts; echo data >/scratch/f && cat /scratch/f'
	check_status 0
	[[ ${lines[0]} == "tmpfs /scratch tmpfs "* ]]
	[ "${lines[1]}" = data ]
}

@test "podman: cap-drop" {
	run prun --rm --cap-drop CHOWN bb chown 1000 /tmp
	[ "$status" -ne 0 ]
	expect_output "Operation not permitted"
	run prun --rm --cap-drop all bb sh -c 'grep CapEff /proc/self/status'
	check_status 0
	[[ $output == *0000000000000000 ]]
}

@test "podman: no-new-privileges" {
	run prun --rm --security-opt no-new-privileges bb grep NoNewPrivs /proc/self/status
	check_status 0
	[[ $output == *1 ]]
}

@test "podman: top" {
	prun -d --name svc bb sh -c "$SERVICE_SH"
	run podman top svc pid args
	check_status 0
	expect_output "$SERVICE_SH"
}

@test "podman: update memory" {
	prun -d --name svc --memory 64m bb sh -c "$SERVICE_SH"
	run podman update --memory 128m svc
	check_status 0
	run podman exec svc sh -c "$MEM_LIMIT_SH"
	check_status 0
	[ "$output" = 134217728 ]
}

@test "podman: rm -f a running container removes its state and cgroup" {
	prun -d --name svc bb sh -c "$SERVICE_SH"
	local id
	id=$(podman inspect --format '{{.Id}}' svc)
	[ -n "$(container_cgroup "libpod-$id")" ]
	run podman rm -f -t 0 svc
	check_status 0
	run podman ps -aq
	[ -z "$output" ]
	[ -z "$(ls -A "$CL_DIR/runtime" 2>/dev/null)" ]
	[ -z "$(container_cgroup "libpod-$id")" ]
}

@test "podman: leaves nothing behind" {
	run podman rm -af -t 0
	check_status 0
	[ -z "$(ls -A "$CL_DIR/runtime" 2>/dev/null)" ]
	check_and_clean
}
