#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Docker for the bench: a private containerd and dockerd, every path of theirs under one
# directory (as tests/clients/docker.bats runs them), runc their default runtime and hutch
# added as "hutch", the busybox rootfs imported as bb:latest. The host's own dockerd, if
# any, is never touched. Sourced by the bench scripts, or run alone:
#   bench/docker.sh [N]   docker run --rm (runc, and hutch as its runtime) against
#                         hutch sandbox on the same busybox tree, N rounds interleaved
# After `bench_docker_up DIR ROOTFS`: DOCKER_HOST is exported and `docker run --rm
# --network none bb true` works; `bench_docker_up` returns 1, saying why, when the machine
# has no docker.io or the daemons do not start. `bench_docker_down` stops them and removes
# what they made.

# shellcheck shell=bash

# Paths dockerd 20.10 writes whatever its flags say; removed at the end if it made them.
bench_docker_host_paths=(/etc/docker/key.json /run/docker /run/containerd)

bench_docker_wait()
{
	local tries=200
	while [ "$tries" -gt 0 ]; do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.1
		tries=$((tries - 1))
	done
	return 1
}

bench_docker_up()
{
	local d=$1 rootfs=$2 p
	for p in containerd dockerd docker; do
		command -v $p >/dev/null || {
			echo "docker: $p not installed (apt-get install docker.io)"
			return 1
		}
	done
	bench_docker_dir=$d
	mkdir -p "$d"
	: >"$d/preexisting"
	for p in "${bench_docker_host_paths[@]}"; do
		[ -e "$p" ] && echo "$p" >>"$d/preexisting"
	done
	cat >"$d/containerd.toml" <<-EOF
		version = 2
		root = "$d/containerd-root"
		state = "$d/containerd-state"
		disabled_plugins = ["io.containerd.grpc.v1.cri"]
		[grpc]
		  address = "$d/containerd.sock"
		[ttrpc]
		  address = "$d/containerd.sock.ttrpc"
		[debug]
		  address = "$d/containerd-debug.sock"
		[plugins."io.containerd.internal.v1.opt"]
		  path = "$d/opt"
	EOF
	containerd --config "$d/containerd.toml" </dev/null >>"$d/containerd.log" 2>&1 &
	echo $! >"$d/containerd.pid"
	if ! bench_docker_wait ctr --address "$d/containerd.sock" version; then
		echo "docker: containerd did not start ($d/containerd.log)"
		return 1
	fi
	echo '{}' >"$d/daemon.json"
	export DOCKER_CONFIG=$d/cli DOCKER_HOST=unix://$d/docker.sock
	# Beneath our own cgroup, as every bench cgroup is (hbench-* is what the leak check counts).
	# shellcheck disable=SC2154 # $hutch and $own: bench_setup's
	dockerd --config-file "$d/daemon.json" --data-root "$d/root" --exec-root "$d/exec" \
		--pidfile "$d/exec/docker.pid" --host "$DOCKER_HOST" \
		--containerd "$d/containerd.sock" --iptables=false --ip-masq=false \
		--ip-forward=false --bridge=none --userland-proxy=false \
		--exec-opt native.cgroupdriver=cgroupfs --cgroup-parent "${own:-}/hbench-docker" \
		--add-runtime "hutch=$hutch" --storage-driver overlay2 \
		</dev/null >>"$d/dockerd.log" 2>&1 &
	echo $! >"$d/dockerd.pid"
	if ! bench_docker_wait docker version; then
		echo "docker: dockerd did not start ($d/dockerd.log)"
		return 1
	fi
	tar -C "$rootfs" -c . | docker import - bb:latest >/dev/null
}

bench_docker_stop()
{
	local f=$bench_docker_dir/$1.pid pid tries=200
	[ -f "$f" ] || return 0
	pid=$(cat "$f")
	kill "$pid" 2>/dev/null || true
	while [ -d "/proc/$pid" ] && ! grep -qs '^State:.*Z' "/proc/$pid/status" &&
		[ "$tries" -gt 0 ]; do
		sleep 0.1
		tries=$((tries - 1))
	done
	[ "$tries" -gt 0 ] || kill -9 "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	rm -f "$f"
}

bench_docker_down()
{
	local d=${bench_docker_dir:-} p
	[ -n "$d" ] && [ -d "$d" ] || return 0
	if [ -f "$d/dockerd.pid" ]; then
		# shellcheck disable=SC2046
		docker rm -f $(docker ps -aq) >/dev/null 2>&1 || true
	fi
	bench_docker_stop dockerd
	bench_docker_stop containerd
	grep -l -s -a -F "$d" /proc/[0-9]*/cmdline | cut -d/ -f3 | xargs -r kill -9 2>/dev/null || true
	while read -r p; do
		umount -l "$p" 2>/dev/null || true
	done < <(awk -v d="$d" 'index($5, d) == 1 { print $5 }' /proc/self/mountinfo | sort -r)
	for p in "${bench_docker_host_paths[@]}"; do
		grep -qxF "$p" "$d/preexisting" 2>/dev/null || rm -rf "$p"
	done
	# The containers' cgroup parent, in every hierarchy (empty once the daemons are gone).
	for p in /sys/fs/cgroup/*/; do
		[ -d "$p${own#/}/hbench-docker" ] &&
			find "$p${own#/}/hbench-docker" -depth -type d -exec rmdir {} + 2>/dev/null
	done
	rm -rf --one-file-system "$d"
	unset DOCKER_HOST bench_docker_dir
}

# Run alone: docker run --rm against hutch sandbox, interleaved.
bench_docker_main()
{
	set -euo pipefail
	# shellcheck source=bench/lib.sh
	. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
	local n=${1:-30}
	bench_setup
	trap 'bench_docker_down; bench_cleanup' EXIT
	bench_docker_up "$work/docker" "$rootfs" || return 0
	local d=/usr/bin/docker sb="$hutch --root $work/sb sandbox --network none --image $rootfs"
	"$bin/interleave" -b docker-runc "$n" \
		"docker-runc=$d run --rm --network none bb true" \
		"docker-hutch=$d run --rm --runtime hutch --network none bb true" \
		"hutch-sandbox=$sb -- /bin/true"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	bench_docker_main "$@"
fi
