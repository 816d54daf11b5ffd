#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
#
# Docker 20.10 (dockerd over containerd's runc shim) with $HUTCH added as the runtime "hutch"
# and made the default. containerd and dockerd run by hand with every path in $CL_DIR: their
# own root, state, exec-root and sockets, no CRI plugin, no iptables or bridge, the cgroupfs
# driver, and $TAG as the cgroup parent of every container. The Docker CLI maps the runtime's
# error text to exit codes: "no such file or directory" is 127, "permission denied" 126.

load helpers
load ../integration/debootstrap

# Paths dockerd 20.10 writes whatever its flags say: the trust key, the plugin socket dir,
# and the shim sockets (/run/containerd/s).
HOST_PATHS=(/etc/docker/key.json /run/docker /run/containerd)

docker() {
	timeout -k 5 "$CLIENT_TIMEOUT" /usr/bin/docker --host "unix://$CL_DIR/docker.sock" "$@"
}

setup_file() {
	clients_setup_file dockerd docker.io
	cat >"$CL_DIR/containerd.toml" <<-EOF
		version = 2
		root = "$CL_DIR/containerd-root"
		state = "$CL_DIR/containerd-state"
		disabled_plugins = ["io.containerd.grpc.v1.cri"]
		[grpc]
		  address = "$CL_DIR/containerd.sock"
		[ttrpc]
		  address = "$CL_DIR/containerd.sock.ttrpc"
		[debug]
		  address = "$CL_DIR/containerd-debug.sock"
		[plugins."io.containerd.internal.v1.opt"]
		  path = "$CL_DIR/opt"
	EOF
	start_daemon containerd "$CL_DIR/containerd.log" containerd --config "$CL_DIR/containerd.toml"
	if ! wait_for ctr --address "$CL_DIR/containerd.sock" version; then
		tail -n 20 "$CL_DIR/containerd.log" >&2
		skip "containerd did not start (log above)"
	fi
	echo '{}' >"$CL_DIR/daemon.json"
	export DOCKER_CONFIG=$CL_DIR/cli
	start_daemon dockerd "$CL_DIR/dockerd.log" dockerd --config-file "$CL_DIR/daemon.json" \
		--data-root "$CL_DIR/root" --exec-root "$CL_DIR/exec" --pidfile "$CL_DIR/exec/docker.pid" \
		--host "unix://$CL_DIR/docker.sock" --containerd "$CL_DIR/containerd.sock" \
		--iptables=false --ip-masq=false --ip-forward=false --bridge=none \
		--userland-proxy=false --exec-opt native.cgroupdriver=cgroupfs \
		--cgroup-parent "$TAG" --add-runtime "hutch=$HUTCH" --default-runtime hutch \
		--default-ulimit nofile=1024:1024 --storage-driver overlay2
	if ! wait_for docker version; then
		tail -n 20 "$CL_DIR/dockerd.log" >&2
		skip "dockerd did not start (log above)"
	fi
	docker import "$CL_DIR/busybox.tar" bb:latest >/dev/null
}

teardown() {
	[ -f "$CL_DIR/dockerd.pid" ] || return 0 # stopped by the last test
	docker rm -f $(docker ps -aq) >/dev/null 2>&1 || true
}

teardown_file() {
	[ -d "${CL_DIR:-}" ] || return 0
	stop_daemon dockerd
	stop_daemon containerd
	check_and_clean 2>/dev/null || true
}

@test "docker: run echo" {
	run docker run --rm --network none bb echo hello from hutch
	check_status 0
	[ "$output" = "hello from hutch" ]
}

@test "docker: exit codes 0, 3, 126 (not executable), 127 (not found)" {
	run docker run --rm --network none bb true
	check_status 0
	run docker run --rm --network none bb sh -c 'exit 3'
	check_status 3
	run -126 docker run --rm --network none bb /etc/passwd
	run -127 docker run --rm --network none bb /nonexistent
}

@test "docker: exec in a running container: plain, env and user, tty, exit code" {
	run docker run -d --network none --name svc bb sh -c "$SERVICE_SH"
	check_status 0
	run docker exec svc echo exec works
	check_status 0
	[ "$output" = "exec works" ]
	run docker exec -e FOO=bar -u 1000:1000 svc sh -c 'echo $FOO $(id -u) $(id -g)'
	check_status 0
	[ "$output" = "bar 1000 1000" ]
	run docker exec -t svc tty
	check_status 0
	[[ $output == /dev/pts/* ]]
	run docker exec svc sh -c 'exit 5'
	check_status 5
	# dockerd sets 126 for any exec that fails to start (with runc too), whatever the text.
	run -126 docker exec svc /etc/passwd
	expect_output "permission denied"
	run -126 docker exec svc /nonexistent
	expect_output "no such file or directory"
}

@test "docker: stop (SIGTERM) and kill (SIGKILL)" {
	docker run -d --network none --name svc bb sh -c "$SERVICE_SH"
	docker run -d --network none --name victim bb sleep 1000
	run docker stop -t 10 svc
	check_status 0
	[ "$(docker inspect --format '{{.State.ExitCode}}' svc)" = 0 ]
	run docker kill victim
	check_status 0
	run docker wait victim
	[ "$output" = 137 ]
}

@test "docker: pause and unpause" {
	docker run -d --network none --name svc bb sh -c "$SERVICE_SH"
	run docker pause svc
	check_status 0
	[ "$(docker inspect --format '{{.State.Status}}' svc)" = paused ]
	run docker unpause svc
	check_status 0
	[ "$(docker inspect --format '{{.State.Status}}' svc)" = running ]
	run docker exec svc echo thawed
	check_status 0
	[ "$output" = thawed ]
}

@test "docker: memory and pids limits" {
	run docker run --rm --network none --memory 64m --pids-limit 32 bb \
		sh -c "$MEM_LIMIT_SH; $PIDS_LIMIT_SH"
	check_status 0
	[ "${lines[0]}" = 67108864 ]
	[ "${lines[1]}" = 32 ]
}

@test "docker: read-only rootfs" {
	run docker run --rm --network none --read-only bb touch /x
	[ "$status" -ne 0 ]
	expect_output "Read-only file system"
}

@test "docker: tmpfs" {
	run docker run --rm --network none --read-only --tmpfs /scratch:rw,size=1m bb \
		sh -c 'grep " /scratch " /proc/mounts; echo data >/scratch/f && cat /scratch/f'
	check_status 0
	[[ ${lines[0]} == "tmpfs /scratch tmpfs "* ]]
	[ "${lines[1]}" = data ]
}

@test "docker: cap-drop" {
	run docker run --rm --network none --cap-drop CHOWN bb chown 1000 /tmp
	[ "$status" -ne 0 ]
	expect_output "Operation not permitted"
	run docker run --rm --network none --cap-drop all bb grep CapEff /proc/self/status
	check_status 0
	[[ $output == *0000000000000000 ]]
}

@test "docker: no-new-privileges" {
	run docker run --rm --network none --security-opt no-new-privileges bb \
		grep NoNewPrivs /proc/self/status
	check_status 0
	[[ $output == *1 ]]
}

@test "docker: top" {
	docker run -d --network none --name svc bb sh -c "$SERVICE_SH"
	run docker top svc
	check_status 0
	expect_output "$SERVICE_SH"
}

@test "docker: update memory and pids" {
	docker run -d --network none --name svc --memory 64m bb sh -c "$SERVICE_SH"
	run docker update --memory 128m --memory-swap 256m --pids-limit 64 svc
	check_status 0
	run docker exec svc sh -c "$MEM_LIMIT_SH; $PIDS_LIMIT_SH"
	check_status 0
	[ "${lines[0]}" = 134217728 ]
	[ "${lines[1]}" = 64 ]
}

@test "docker: rm -f a running container removes its state and cgroup" {
	docker run -d --network none --name svc bb sh -c "$SERVICE_SH"
	local id
	id=$(docker inspect --format '{{.Id}}' svc)
	[ -n "$(container_cgroup "$id")" ]
	run docker rm -f svc
	check_status 0
	[ -z "$(docker ps -aq)" ]
	[ -z "$(ls -A "$CL_DIR/exec/runtime-hutch/moby" 2>/dev/null)" ]
	[ -z "$(container_cgroup "$id")" ]
}

# Issue 21's "done when": the agent image (debootstrap.bash: a venv on PATH, an Entrypoint found
# through it, a Cmd, a WorkingDir, User 1234) given to Docker as it is (its rootfs from `hutch
# bundle`, its config as `docker import --change` lines), then run by `docker run` and by
# `hutch sandbox` with the same stdin: the same argv, cwd, ids, interpreter and environment,
# apart from the defaults each documents (docker's HOSTNAME and passwd HOME; the sandbox's
# HOME and TMPDIR). The integration suite has built the image by now; a cache hit here.
@test "docker: an image's config runs under hutch sandbox as under docker run" {
	local agent store ref b d h
	agent=$(agent_image) || skip "no agent image (needs debootstrap and the Debian mirror)"
	store=${agent% *}
	ref=${agent#* }
	b=$CL_DIR/agent-bundle
	HUTCH_STORE=$store timeout 300 "$HUTCH" bundle --image "$ref" "$b" >/dev/null
	local -a change=()
	mapfile -t change < <(HUTCH_STORE=$store "$HUTCH" image inspect "$ref" | jq -r '.config.config |
		(.Env[] | "--change\nENV " + .), "--change\nWORKDIR " + .WorkingDir,
		"--change\nUSER " + .User, "--change\nENTRYPOINT " + (.Entrypoint | tojson),
		"--change\nCMD " + (.Cmd | tojson)')
	tar -C "$b/rootfs" --numeric-owner -cf "$CL_DIR/agent.tar" .
	rm -rf "$b"
	CLIENT_TIMEOUT=300 docker import "${change[@]}" "$CL_DIR/agent.tar" agent:hutch >/dev/null
	rm -f "$CL_DIR/agent.tar"
	d=$(echo '{"task": 1}' | docker run --rm -i --runtime runc --network none agent:hutch)
	h=$(echo '{"task": 1}' | HUTCH_STORE=$store timeout 60 "$HUTCH" sandbox --image "$ref")
	echo "docker: $d" >&2
	echo "hutch:  $h" >&2
	jq -e '.argv == ["/srv/agent.py", "--mode", "default"] and .cwd == "/srv"
		and .uid == 1234 and .prefix == "/opt/venv"' <<<"$d"
	[ "$(jq -S 'del(.env.HOSTNAME, .env.HOME)' <<<"$d")" = \
		"$(jq -S 'del(.env.TMPDIR, .env.HOME)' <<<"$h")" ]
	docker rmi agent:hutch >/dev/null
}

@test "docker: leaves nothing behind" {
	[ -z "$(docker ps -aq)" ]
	run docker rmi bb:latest
	check_status 0
	stop_daemon dockerd
	stop_daemon containerd
	check_and_clean
}
