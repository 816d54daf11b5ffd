#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
#
# containerd 1.6's CRI plugin, driven the way the kubelet drives it (pods, containers in pods,
# ExecSync, stats, updates) by our own CRI client, cri/cri.py, with two runtime handlers: `hutch`
# ($HUTCH as the runc shim's BinaryName, what a RuntimeClass selects) and `runc` (/usr/sbin/runc)
# as the reference. Every operation is a pair of tests, "... (hutch)" and "... (runc)", that run
# the same function: a failure under hutch only is a hutch bug, under both a client quirk.
#
# containerd runs in its own mount and network namespace, kept by a holder process (nsholder)
# so that a restarted containerd finds the same one: a tmpfs on /run there takes the shims'
# sockets (/run/containerd/s/, hard-coded whatever the state dir is) and everything else a
# default puts in /run, so nothing reaches the host's. Pods use the node's network (that
# namespace), so no CNI is needed. Every other path is in $CL_DIR.

load helpers

# libcni's result cache, hard-coded: containerd's namespace has a tmpfs there (below), whose
# mount point we make when the host has none.
HOST_PATHS=(/var/lib/cni)

IMG=hutch.test/busybox:latest
PAUSE=hutch.test/pause:latest
PYTHON=/usr/bin/python3 # Debian's, with python3-grpcio; not whatever python3 is first in PATH

cri() {
	timeout -k 5 "$CLIENT_TIMEOUT" "$PYTHON" "$BATS_TEST_DIRNAME/cri/cri.py" \
		--socket "$CL_DIR/containerd.sock" --stubs "$CL_DIR/stubs" "$@"
}

ctr() {
	timeout -k 5 "$CLIENT_TIMEOUT" /usr/bin/ctr --address "$CL_DIR/containerd.sock" \
		--namespace k8s.io "$@"
}

start_containerd() {
	start_daemon containerd "$CL_DIR/containerd.log" \
		nsenter -t "$(cat "$CL_DIR/nsholder.pid")" -m -n \
		containerd --config "$CL_DIR/containerd.toml"
	if ! wait_for cri version; then
		tail -n 20 "$CL_DIR/containerd.log" >&2
		return 1
	fi
}

# pod_config NAME HANDLER [JQ]: writes $CL_DIR/NAME.pod.json, a PodSandboxConfig with the node's
# network, a pid namespace per container (POD is the enum's zero, the default, so the kubelet
# says CONTAINER unless the pod shares its process namespace; so do we), its logs in
# $CL_DIR/logs/NAME and its cgroup parent $TAG/NAME (relative: the runtime puts it beneath our
# own cgroup in every hierarchy, which on a v1 host is not the same path in each), then JQ
# applied to it. No hostname: the pod has no UTS namespace of its
# own with the node's network, and both runtimes refuse a hostname without one (the kubelet
# sets none for hostNetwork pods).
pod_config() {
	local name=$1 handler=$2 filter=${3:-.}
	jq -n --arg n "$name" --arg h "$handler" --arg logs "$CL_DIR/logs/$name" \
		--arg cg "$TAG/$name" '{
		metadata: {name: $n, namespace: "hutch-test", uid: ($n + "-uid"), attempt: 0},
		labels: {handler: $h}, log_directory: $logs,
		linux: {cgroup_parent: $cg,
			security_context: {namespace_options: {network: "NODE", pid: "CONTAINER"}}}}' |
		jq "$filter" >"$CL_DIR/$name.pod.json"
}

# ctr_config NAME COMMAND [JQ]: writes $CL_DIR/NAME.ctr.json, a ContainerConfig running
# `sh -c COMMAND` in $IMG with its log at NAME.log in the pod's log directory and a pid
# namespace of its own.
ctr_config() {
	local name=$1 cmd=$2 filter=${3:-.}
	jq -n --arg n "$name" --arg c "$cmd" --arg img "$IMG" '{
		metadata: {name: $n, attempt: 0}, image: {image: $img},
		command: ["sh", "-c", $c], log_path: ($n + ".log"),
		linux: {security_context: {namespace_options: {network: "NODE", pid: "CONTAINER"}}}}' |
		jq "$filter" >"$CL_DIR/$name.ctr.json"
}

# run_pod NAME HANDLER [JQ]: RunPodSandbox; the pod's id in $POD.
run_pod() {
	pod_config "$@"
	POD=$(cri runp "$CL_DIR/$1.pod.json" --runtime "$2" | jq -r .pod_sandbox_id)
	[ -n "$POD" ] && [ "$POD" != null ]
}

# run_ctr NAME PODNAME POD COMMAND [JQ]: CreateContainer + StartContainer; its id in $CTR.
run_ctr() {
	local name=$1 podname=$2 pod=$3
	shift 3
	ctr_config "$name" "$@"
	CTR=$(cri create "$pod" "$CL_DIR/$name.ctr.json" "$CL_DIR/$podname.pod.json" |
		jq -r .container_id)
	[ -n "$CTR" ] && [ "$CTR" != null ]
	cri start "$CTR" >/dev/null
}

# exec_sync ID CMD...: ExecSync, its stdout (its stderr to ours); fails only when the RPC does,
# whatever the command's exit code (cri exec-sync has it).
exec_sync() {
	local id=$1 r
	shift
	r=$(cri exec-sync "$id" -- "$@") || return 1
	jq -j .stderr <<<"$r" >&2
	jq -j .stdout <<<"$r"
}

# The pid of a container's (or pod's pause) process, as the verbose status has it.
ctr_pid() { cri inspect "$1" | jq -r .info.info.pid; }
pod_pid() { cri inspectp "$1" | jq -r .info.info.pid; }

# The pid of a pod's shim: one per pod, named by the sandbox id, its containers' too.
shim_of() { pgrep -f "containerd-shim-runc-v2 .*-id $1 " || true; }

# The cgroups named NAME beneath $TAG, in any hierarchy. hutch removes the parent levels it
# made once they are empty ($TAG too), runc leaves them: no $TAG is no cgroup.
cgroups_named() {
	local d
	for d in $(tag_cgroup_dirs); do
		find "$d" -type d -name "$1"
	done
}

# ctr_state_is ID STATE: ContainerStatus says STATE (CONTAINER_RUNNING, CONTAINER_EXITED...).
ctr_state_is() { [ "$(cri inspect "$1" | jq -r .status.state)" = "$2" ]; }

# Removes every pod (and so its containers), then the pods' parent cgroups: those are the
# kubelet's to make and remove, the runtimes only mkdir -p them. A container's cgroup left in
# one makes rmdir fail, and the last test reports it.
remove_pods() {
	local p d
	for p in $(cri pods 2>/dev/null | jq -r '.items[].id'); do
		cri stopp "$p" >/dev/null || true
		cri rmp "$p" >/dev/null || true
	done
	for d in $(tag_cgroup_dirs); do
		find "$d" -mindepth 1 -maxdepth 1 -type d -exec rmdir {} + 2>/dev/null || true
	done
}

setup_file() {
	clients_setup_file containerd containerd
	"$PYTHON" -c 'import grpc, grpc_tools' 2>/dev/null ||
		skip "needs python3-grpcio and python3-grpc-tools"
	# The stubs are generated for this run, from the vendored api.proto (cri/README.md).
	cri gen "$CL_DIR/stubs"
	mkdir -p "$CL_DIR/logs"
	cat >"$CL_DIR/containerd.toml" <<-EOF
		version = 2
		root = "$CL_DIR/root"
		state = "$CL_DIR/state"
		[grpc]
		  address = "$CL_DIR/containerd.sock"
		[ttrpc]
		  address = "$CL_DIR/containerd.sock.ttrpc"
		[debug]
		  address = "$CL_DIR/debug.sock"
		[plugins."io.containerd.internal.v1.opt"]
		  path = "$CL_DIR/opt"
		[plugins."io.containerd.grpc.v1.cri"]
		  sandbox_image = "$PAUSE"
		  disable_apparmor = true
		  # The CRI plugin gives the pause container oom_score_adj -998; our test hosts run
		  # without CAP_SYS_RESOURCE, and neither runtime can then lower it: keep it at ours.
		  restrict_oom_score_adj = true
		  stream_server_address = "127.0.0.1"
		  stream_server_port = "0"
		  [plugins."io.containerd.grpc.v1.cri".cni]
		    bin_dir = "$CL_DIR/cni-bin"
		    conf_dir = "$CL_DIR/cni"
		  [plugins."io.containerd.grpc.v1.cri".containerd]
		    default_runtime_name = "runc"
		    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.hutch]
		      runtime_type = "io.containerd.runc.v2"
		      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.hutch.options]
		        BinaryName = "$HUTCH"
		        Root = "$CL_DIR/hutch-root"
		        SystemdCgroup = false
		    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
		      runtime_type = "io.containerd.runc.v2"
		      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
		        BinaryName = "/usr/sbin/runc"
		        Root = "$CL_DIR/runc-root"
		        SystemdCgroup = false
	EOF
	# Pods with a network namespace of their own (network POD) get one through CNI: a bridge
	# in containerd's network namespace (not the host's), a documentation subnet, no masquerade
	# or gateway, its addresses kept in $CL_DIR.
	mkdir -p "$CL_DIR/cni-bin" "$CL_DIR/cni"
	local plugin
	if [ -x /usr/lib/cni/bridge ]; then
		for plugin in bridge host-local loopback; do
			ln -s /usr/lib/cni/$plugin "$CL_DIR/cni-bin/$plugin"
		done
		jq -n --arg ipam "$CL_DIR/cni-ipam" '{cniVersion: "0.4.0", name: "hutch-test",
			plugins: [{type: "bridge", bridge: "cni-hutch0", isGateway: false, ipMasq: false,
				ipam: {type: "host-local", dataDir: $ipam,
					ranges: [[{subnet: "198.51.100.0/24"}]]}}]}' >"$CL_DIR/cni/10-test.conflist"
	fi
	# The namespaces' holder: lo up for the stream server's 127.0.0.1.
	cat >"$CL_DIR/nsholder" <<-'EOF'
		mkdir -p /var/lib/cni && mount -t tmpfs -o mode=700 tmpfs /var/lib/cni &&
		mount -t tmpfs -o mode=755 tmpfs /run && mkdir -m 711 /run/containerd &&
			ip link set lo up || exit 1
		exec sleep infinity
	EOF
	start_daemon nsholder "$CL_DIR/nsholder.log" \
		unshare -m -n --propagation private sh "$CL_DIR/nsholder"
	local holder
	holder=$(cat "$CL_DIR/nsholder.pid")
	wait_for sh -c "[ -d /proc/$holder/root/run/containerd ]" ||
		skip "could not make containerd's namespaces: $(cat "$CL_DIR/nsholder.log")"
	start_containerd || skip "containerd did not start (log above)"
	make_oci_archive "$CL_DIR/busybox.tar" "$CL_DIR/bb-oci.tar" "$IMG"
	# The pause container only has to stay: busybox sleep, as long as it can.
	make_oci_archive "$CL_DIR/busybox.tar" "$CL_DIR/pause-oci.tar" "$PAUSE" \
		'{"Entrypoint": ["sleep", "2147483647"], "Cmd": null}'
	ctr images import "$CL_DIR/bb-oci.tar" >/dev/null
	ctr images import "$CL_DIR/pause-oci.tar" >/dev/null
}

teardown() {
	[ -f "$CL_DIR/containerd.pid" ] || return 0 # stopped by the last test
	remove_pods
}

teardown_file() {
	[ -d "${CL_DIR:-}" ] || return 0
	stop_daemon containerd
	stop_daemon nsholder
	check_and_clean 2>/dev/null || true
}

@test "cri: version, and both handlers known" {
	run cri version
	check_status 0
	[ "$(jq -r .runtime_api_version <<<"$output")" = v1 ]
	run cri status
	check_status 0
	[ "$(jq -r '.status.conditions[] | select(.type == "RuntimeReady") | .status' \
		<<<"$output")" = true ]
	jq -e '.info.config.containerd.runtimes | has("hutch") and has("runc")' <<<"$output"
}

# A pod whose containers share the pause container's pid and ipc namespaces (the kubelet's
# shareProcessNamespace): each sees the other's process, and pause as pid 1.
pod_shared_ns() {
	local ns='.linux.security_context.namespace_options += {pid: "POD", ipc: "POD"}' a b ipc
	run_pod shared-$1 "$1" "$ns"
	run_ctr a shared-$1 "$POD" 'exec sleep 1001' "$ns"
	a=$CTR
	run_ctr b shared-$1 "$POD" 'exec sleep 1002' "$ns"
	b=$CTR
	run exec_sync "$a" ps -o pid,args
	check_status 0
	[[ $output == *"sleep 1002"* ]]
	[[ $(grep -E '^ +1 ' <<<"$output") == *"sleep 2147483647" ]]
	run exec_sync "$b" ps -o pid,args
	check_status 0
	[[ $output == *"sleep 1001"* ]]
	[[ $(grep -E '^ +1 ' <<<"$output") == *"sleep 2147483647" ]]
	# The same ipc namespace as pause's (pid 1 here), and not the node's.
	ipc=$(exec_sync "$a" readlink /proc/self/ns/ipc)
	[[ $ipc == ipc:* ]]
	[ "$(exec_sync "$b" readlink /proc/1/ns/ipc)" = "$ipc" ]
	[ "$(readlink /proc/self/ns/ipc)" != "$ipc" ]
	[ "$(cri ps --pod "$POD" | jq '.containers | length')" -eq 2 ]
}

@test "cri: a pod, two containers sharing its pid and ipc namespaces (hutch)" {
	pod_shared_ns hutch
}

@test "cri: a pod, two containers sharing its pid and ipc namespaces (runc)" {
	pod_shared_ns runc
}

# ExecSync: the command's stdout, stderr and exit code come back separately.
exec_sync_codes() {
	run_pod exec-$1 "$1"
	run_ctr svc exec-$1 "$POD" "$SERVICE_SH"
	run cri exec-sync "$CTR" -- sh -c 'echo out; echo err >&2; exit 3'
	check_status 0
	[ "$(jq -r .stdout <<<"$output")" = out ]
	[ "$(jq -r .stderr <<<"$output")" = err ]
	[ "$(jq -r .exit_code <<<"$output")" = 3 ]
	run cri exec-sync "$CTR" -- true
	check_status 0
	[ "$(jq -r .exit_code <<<"$output")" = 0 ]
	# A command that cannot run: an error from the runtime, not an exit code.
	run cri exec-sync "$CTR" -- /nonexistent
	[ "$status" -ne 0 ] || [ "$(jq -r .exit_code <<<"$output")" != 0 ]
	# Past its timeout the exec fails and its process is killed (the kubelet's exec probes).
	run cri exec-sync --timeout 1 "$CTR" -- sleep 3333
	check_status 1
	expect_output DEADLINE_EXCEEDED
	run exec_sync "$CTR" ps -o args
	check_status 0
	[[ $output != *"sleep 3333"* ]]
}

# A container that exits: its exit code and reason in ContainerStatus (Completed for 0,
# Error otherwise), the way the kubelet learns a pod's container finished.
ctr_exit() {
	run_pod exit-$1 "$1"
	run_ctr three exit-$1 "$POD" 'exit 3'
	wait_for ctr_state_is "$CTR" CONTAINER_EXITED
	run cri inspect "$CTR"
	[ "$(jq -r .status.exit_code <<<"$output")" = 3 ]
	[ "$(jq -r .status.reason <<<"$output")" = Error ]
	# Set, but not necessarily after started_at: containerd stamps that when the start returns,
	# and the exit's own time can be earlier.
	[ "$(jq -r .status.finished_at <<<"$output")" -gt 0 ]
	run_ctr zero exit-$1 "$POD" 'true'
	wait_for ctr_state_is "$CTR" CONTAINER_EXITED
	run cri inspect "$CTR"
	[ "$(jq -r .status.exit_code <<<"$output")" = 0 ]
	[ "$(jq -r .status.reason <<<"$output")" = Completed ]
	[ "$(cri ps --pod "$POD" | jq '.containers | length')" -eq 0 ] # none running
	[ "$(cri ps --pod "$POD" --all | jq '.containers | length')" -eq 2 ]
}

@test "cri: a container's exit code and reason in ContainerStatus (hutch)" {
	ctr_exit hutch
}

@test "cri: a container's exit code and reason in ContainerStatus (runc)" {
	ctr_exit runc
}

@test "cri: ExecSync stdout, stderr, exit code (hutch)" {
	exec_sync_codes hutch
}

@test "cri: ExecSync stdout, stderr, exit code (runc)" {
	exec_sync_codes runc
}

# cri_exec ID [--tty] [--stdin TEXT] [--size COLSxROWS] -- CMD...: the streamed exec (kubectl
# exec): Exec's URL upgraded to a WebSocket by cri.py. It runs in containerd's network
# namespace, where the stream server listens on 127.0.0.1.
cri_exec() {
	timeout -k 5 "$CLIENT_TIMEOUT" nsenter -t "$(cat "$CL_DIR/nsholder.pid")" -n \
		"$PYTHON" "$BATS_TEST_DIRNAME/cri/cri.py" --socket "$CL_DIR/containerd.sock" \
		--stubs "$CL_DIR/stubs" exec "$@"
}

# A pod with a network namespace of its own (network POD, through CNI's bridge plugin): both
# containers are in pause's, which is not the node's, with the pod's address on its eth0.
pod_net() {
	local ns='.linux.security_context.namespace_options.network = "POD"' a b net ip
	[ -e "$CL_DIR/cni/10-test.conflist" ] ||
		skip "no CNI plugins (apt-get install containernetworking-plugins)"
	run_pod net-$1 "$1" "$ns"
	run_ctr a net-$1 "$POD" 'exec sleep 1001' "$ns"
	a=$CTR
	run_ctr b net-$1 "$POD" 'exec sleep 1002' "$ns"
	b=$CTR
	net=$(exec_sync "$a" readlink /proc/self/ns/net)
	[[ $net == net:* ]]
	[ "$(exec_sync "$b" readlink /proc/self/ns/net)" = "$net" ]
	[ "$(readlink "/proc/$(pod_pid "$POD")/ns/net")" = "$net" ]
	[ "$(readlink "/proc/$(cat "$CL_DIR/nsholder.pid")/ns/net")" != "$net" ]
	ip=$(cri inspectp "$POD" | jq -r .status.network.ip)
	[[ $ip == 198.51.100.* ]]
	run exec_sync "$b" ip -o -4 addr show
	check_status 0
	[[ $output == *"eth0"*"inet $ip/24"* ]]
	[[ $output == *"lo"*"inet 127.0.0.1/8"* ]]
}

@test "cri: a pod's own network namespace, shared by its containers and pause (hutch)" {
	pod_net hutch
}

@test "cri: a pod's own network namespace, shared by its containers and pause (runc)" {
	pod_net runc
}

# Exec over the stream: stdout and stderr apart with the exit code in the status channel,
# stdin reaching the command, and a terminal at the size the client sent.
exec_streamed() {
	local r
	run_pod stream-$1 "$1"
	run_ctr s stream-$1 "$POD" 'exec sleep 1000'
	r=$(cri_exec "$CTR" -- sh -c 'echo out; echo err >&2; exit 3')
	[ "$(jq -r .stdout <<<"$r")" = out ]
	[ "$(jq -r .stderr <<<"$r")" = err ]
	[ "$(jq -r .exit_code <<<"$r")" = 3 ]
	r=$(cri_exec "$CTR" -- true)
	[ "$(jq -r '.exit_code, .status.status' <<<"$r")" = $'0\nSuccess' ]
	r=$(cri_exec "$CTR" --stdin $'hello there\n' -- sh -c 'read -r l; echo "got [$l]"')
	[ "$(jq -r .stdout <<<"$r")" = "got [hello there]" ]
	# The resize is a message of its own: the command waits until the terminal has it. A
	# terminal comes with stdin, as from kubectl exec -it (containerd shows nothing of a
	# terminal without it, under either runtime).
	r=$(cri_exec "$CTR" --tty --stdin '' --size 91x17 -- sh -c \
		'for i in $(seq 50); do [ "$(stty size)" = "17 91" ] && break; sleep 0.1; done
		tty; stty size')
	echo "the terminal exec: $r"
	jq -r .stdout <<<"$r" | tr -d '\r' >"$CL_DIR/stream-$1.tty"
	grep -qx '/dev/pts/[0-9]*' "$CL_DIR/stream-$1.tty"
	grep -qx '17 91' "$CL_DIR/stream-$1.tty"
	[ "$(jq -r .exit_code <<<"$r")" = 0 ]
}

@test "cri: streamed Exec: stdout, stderr, exit code, stdin, a terminal (hutch)" {
	exec_streamed hutch
}

@test "cri: streamed Exec: stdout, stderr, exit code, stdin, a terminal (runc)" {
	exec_streamed runc
}

# The container's output in its CRI log file (the pod's log_directory + log_path), one line
# per write: "TIMESTAMP STREAM F TEXT" (F: a full line).
ctr_logs() {
	local log
	run_pod logs-$1 "$1"
	run_ctr talker logs-$1 "$POD" 'echo hello out; echo hello err >&2; exec sleep 1000'
	log=$(cri logs-path "$CTR" | jq -r .log_path)
	[ "$log" = "$CL_DIR/logs/logs-$1/talker.log" ]
	wait_for grep -q 'hello err' "$log"
	grep -qE '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z stdout F hello out$' "$log"
	grep -qE '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z stderr F hello err$' "$log"
}

@test "cri: container logs in CRI format (hutch)" {
	ctr_logs hutch
}

@test "cri: container logs in CRI format (runc)" {
	ctr_logs runc
}

# StopPodSandbox and RemovePodSandbox with its containers running: no shim, no process, no
# runtime state, no container cgroup left.
stop_remove_pod() {
	local ids pids id p
	run_pod gone-$1 "$1"
	ids=$POD
	pids=$(pod_pid "$POD")
	run_ctr one gone-$1 "$POD" 'exec sleep 1000'
	ids+=" $CTR"
	pids+=" $(ctr_pid "$CTR")"
	run_ctr two gone-$1 "$POD" "$SERVICE_SH"
	ids+=" $CTR"
	pids+=" $(ctr_pid "$CTR")"
	for id in $ids; do
		[ -d "$CL_DIR/$1-root/k8s.io/$id" ]
		[ -n "$(cgroups_named "$id")" ]
	done
	[ -n "$(shim_of "$POD")" ]
	run cri stopp "$POD"
	check_status 0
	run cri rmp "$POD"
	check_status 0
	[ "$(cri pods | jq '.items | length')" -eq 0 ]
	[ "$(cri ps --all | jq '.containers | length')" -eq 0 ]
	for p in $pids; do
		[ ! -d "/proc/$p" ] || grep -q '^State:.*Z' "/proc/$p/status"
	done
	[ -z "$(shim_of "$POD")" ]
	for id in $ids; do
		[ ! -e "$CL_DIR/$1-root/k8s.io/$id" ]
		[ -z "$(cgroups_named "$id")" ]
	done
	[ -z "$(ls -A "$CL_DIR/$1-root/k8s.io")" ]
}

@test "cri: StopPodSandbox + RemovePodSandbox with running containers leave nothing (hutch)" {
	stop_remove_pod hutch
}

@test "cri: StopPodSandbox + RemovePodSandbox with running containers leave nothing (runc)" {
	stop_remove_pod runc
}

# The kubelet's restricted securityContext: read-only root, a uid, no capabilities, seen from
# the container's main process (pid 1: the pod's pid namespace is not shared) and an exec.
security_context() {
	local sc='.linux.security_context += {readonly_rootfs: true, run_as_user: {value: 1000},
		capabilities: {drop_capabilities: ["ALL"]}}'
	run_pod sec-$1 "$1"
	run_ctr locked sec-$1 "$POD" "$SERVICE_SH" "$sc"
	run exec_sync "$CTR" sh -c 'id -u; grep -E "^(Uid|CapEff|CapPrm|CapBnd)" /proc/1/status'
	check_status 0
	[ "${lines[0]}" = 1000 ]
	[[ $(grep ^Uid <<<"$output") == *"	1000	1000	1000	1000" ]]
	grep -qx 'CapEff:	0000000000000000' <<<"$output"
	grep -qx 'CapPrm:	0000000000000000' <<<"$output"
	grep -qx 'CapBnd:	0000000000000000' <<<"$output"
	run exec_sync "$CTR" grep CapEff /proc/self/status
	[ "$output" = 'CapEff:	0000000000000000' ]
	run exec_sync "$CTR" sh -c 'touch /x 2>&1; echo rc=$?'
	[[ $output == *"Read-only file system"* ]]
	[[ $output == *"rc=1" ]]
	# /tmp is the image's, on the read-only root too.
	run exec_sync "$CTR" sh -c 'touch /tmp/x 2>&1; echo rc=$?'
	[[ $output == *"rc=1" ]]
}

@test "cri: readonly_rootfs, run_as_user, drop ALL capabilities (hutch)" {
	security_context hutch
}

@test "cri: readonly_rootfs, run_as_user, drop ALL capabilities (runc)" {
	security_context runc
}

# UpdateContainerResources: a new memory limit reaches the container's cgroup (this host's
# v1 memory.limit_in_bytes, or v2's memory.max), as the host and the container see it.
update_memory() {
	run_pod upd-$1 "$1"
	run_ctr mem upd-$1 "$POD" "$SERVICE_SH" \
		'.linux.resources = {memory_limit_in_bytes: 67108864}'
	[ "$(cgroup_value "$CTR" memory.limit_in_bytes memory.max)" = 67108864 ]
	echo '{"memory_limit_in_bytes": 100663296}' >"$CL_DIR/upd-$1.json"
	run cri update "$CTR" "$CL_DIR/upd-$1.json"
	check_status 0
	[ "$(cgroup_value "$CTR" memory.limit_in_bytes memory.max)" = 100663296 ]
	run exec_sync "$CTR" sh -c "$MEM_LIMIT_SH"
	[ "$output" = 100663296 ]
	# containerd keeps what it set: the status has the new limit.
	[ "$(cri inspect "$CTR" | jq -r .status.resources.linux.memory_limit_in_bytes)" = 100663296 ]
}

@test "cri: UpdateContainerResources memory limit (hutch)" {
	update_memory hutch
}

@test "cri: UpdateContainerResources memory limit (runc)" {
	update_memory runc
}

# UpdateContainerResources for cpu: quota, period, shares and cpuset reach the cgroup.
update_cpu() {
	run_pod cpu-$1 "$1"
	run_ctr cpu cpu-$1 "$POD" "$SERVICE_SH"
	echo '{"cpu_period": 100000, "cpu_quota": 50000, "cpu_shares": 512, "cpuset_cpus": "0"}' \
		>"$CL_DIR/cpu-$1.json"
	run cri update "$CTR" "$CL_DIR/cpu-$1.json"
	check_status 0
	if [ -f /sys/fs/cgroup/cgroup.controllers ]; then # v2: one file for quota and period
		[ "$(cgroup_value "$CTR" - cpu.max)" = "50000 100000" ]
	else
		[ "$(cgroup_value "$CTR" cpu.cfs_quota_us -)" = 50000 ]
		[ "$(cgroup_value "$CTR" cpu.cfs_period_us -)" = 100000 ]
		[ "$(cgroup_value "$CTR" cpu.shares -)" = 512 ]
	fi
	[ "$(cgroup_value "$CTR" cpuset.cpus cpuset.cpus)" = 0 ]
}

@test "cri: UpdateContainerResources cpu quota, shares, cpuset (hutch)" {
	update_cpu hutch
}

@test "cri: UpdateContainerResources cpu quota, shares, cpuset (runc)" {
	update_cpu runc
}

# ContainerStats: the shim reads the container's cgroup; memory and cpu usage are there.
ctr_stats() {
	run_pod stats-$1 "$1"
	# Some work to show in the cpu usage.
	run_ctr busy stats-$1 "$POD" 'i=0; while [ $i -lt 20000 ]; do i=$((i + 1)); done; exec sleep 1000'
	sleep 0.5
	run cri stats "$CTR"
	check_status 0
	[ "$(jq -r .stats.attributes.id <<<"$output")" = "$CTR" ]
	[ "$(jq -r .stats.attributes.metadata.name <<<"$output")" = busy ]
	[ "$(jq -r .stats.memory.working_set_bytes.value <<<"$output")" -gt 0 ]
	[ "$(jq -r .stats.cpu.usage_core_nano_seconds.value <<<"$output")" -gt 0 ]
	[ "$(jq -r .stats.writable_layer.used_bytes.value <<<"$output")" -ge 0 ]
}

@test "cri: ContainerStats (hutch)" {
	ctr_stats hutch
}

@test "cri: ContainerStats (runc)" {
	ctr_stats runc
}

# A memory hog past its limit: the kernel kills it, and the container's status says OOMKilled
# (the shim's OOM event, from the cgroup the runtime made).
oom_killed() {
	run_pod oom-$1 "$1"
	# A shell variable of 64 MiB, twice the limit (and no swap: swap limit = memory limit).
	run_ctr hog oom-$1 "$POD" 'x=$(head -c 67108864 /dev/zero | tr "\0" a); echo survived' \
		'.linux.resources = {memory_limit_in_bytes: 33554432,
			memory_swap_limit_in_bytes: 33554432}'
	wait_for ctr_state_is "$CTR" CONTAINER_EXITED
	run cri inspect "$CTR"
	check_status 0
	[ "$(jq -r .status.reason <<<"$output")" = OOMKilled ]
	[ "$(jq -r .status.exit_code <<<"$output")" = 137 ]
}

@test "cri: OOMKilled in ContainerStatus after a memory hog (hutch)" {
	oom_killed hutch
}

@test "cri: OOMKilled in ContainerStatus after a memory hog (runc)" {
	oom_killed runc
}

# seccomp RuntimeDefault (containerd's default profile): filter mode 2, and unshare(2), which
# the profile allows only with CAP_SYS_ADMIN, fails. Without a profile (unconfined, the CRI
# default) the same unshare -U works: the profile, not something else, blocks it.
seccomp_default() {
	run_pod sec-$1 "$1"
	run_ctr free sec-$1 "$POD" "$SERVICE_SH"
	run exec_sync "$CTR" sh -c 'grep "^Seccomp:" /proc/1/status; unshare -U true && echo ok'
	check_status 0
	[ "${lines[0]}" = 'Seccomp:	0' ]
	[ "${lines[1]}" = ok ]
	run_ctr confined sec-$1 "$POD" "$SERVICE_SH" \
		'.linux.security_context.seccomp = {profile_type: "RuntimeDefault"}'
	run exec_sync "$CTR" sh -c 'grep "^Seccomp:" /proc/1/status; unshare -U true 2>&1; echo rc=$?'
	check_status 0
	[ "${lines[0]}" = 'Seccomp:	2' ]
	expect_output "Operation not permitted"
	[ "${lines[-1]}" = rc=1 ]
}

@test "cri: seccomp RuntimeDefault (hutch)" {
	seccomp_default hutch
}

@test "cri: seccomp RuntimeDefault (runc)" {
	seccomp_default runc
}

# containerd restarted while a pod runs (an upgrade on a node): the pod and its container
# are still there, an exec works, and they are removed as usual. The shim and the containers
# live on meanwhile; the namespaces' holder keeps the shims' /run for the new containerd.
containerd_restart() {
	local pod ctr shim
	run_pod restart-$1 "$1"
	pod=$POD
	run_ctr svc restart-$1 "$POD" "$SERVICE_SH"
	ctr=$CTR
	shim=$(shim_of "$pod")
	[ -n "$shim" ]
	stop_daemon containerd
	[ "$(shim_of "$pod")" = "$shim" ]
	start_containerd
	[ "$(shim_of "$pod")" = "$shim" ] # reconnected to, not restarted
	run cri inspectp "$pod"
	check_status 0
	[ "$(jq -r .status.state <<<"$output")" = SANDBOX_READY ]
	run cri inspect "$ctr"
	check_status 0
	[ "$(jq -r .status.state <<<"$output")" = CONTAINER_RUNNING ]
	run exec_sync "$ctr" echo after restart
	check_status 0
	[ "$output" = "after restart" ]
	run cri stop "$ctr" --timeout 10
	check_status 0
	[ "$(cri inspect "$ctr" | jq -r .status.exit_code)" = 0 ] # SIGTERM, not a SIGKILL
	run cri rm "$ctr"
	check_status 0
	run cri stopp "$pod"
	check_status 0
	run cri rmp "$pod"
	check_status 0
	[ -z "$(ls -A "$CL_DIR/$1-root/k8s.io")" ]
	[ -z "$(shim_of "$pod")" ]
}

@test "cri: containerd restarted while a pod runs (hutch)" {
	containerd_restart hutch
}

@test "cri: containerd restarted while a pod runs (runc)" {
	containerd_restart runc
}

# Every cgroup hierarchy the container sees under /sys/fs/cgroup is rooted at its own cgroup
# (on this v1/hybrid host there is no cgroup namespace: the CRI plugin asks for one on v2
# only), so it cannot see another pod's. mountinfo's 4th field is a mount's root.
own_cgroup_view() {
	run_pod cgv-$1 "$1"
	run_ctr a cgv-$1 "$POD" "$SERVICE_SH"
	run exec_sync "$CTR" awk '{ for (i = 7; $i != "-"; i++) {}
		if ($(i + 1) ~ /^cgroup/) print $4, $5 }' /proc/self/mountinfo
	check_status 0
	[ -n "$output" ]
	local root mp bad=0
	while read -r root mp; do
		if [[ $root != */"$CTR" ]]; then
			echo "$mp: the host's $root, not the container's cgroup" >&2
			bad=1
		fi
	done <<<"$output"
	return $bad
}

@test "cri: a container's cgroup mounts are its own cgroup (hutch)" {
	own_cgroup_view hutch
}

@test "cri: a container's cgroup mounts are its own cgroup (runc)" {
	own_cgroup_view runc
}

# A privileged container (pod and container privileged, as the kubelet asks): containerd's
# own capabilities, the host's devices, /sys read-write, no masked /proc paths.
privileged() {
	local priv='.linux.security_context.privileged = true' caps
	run_pod priv-$1 "$1" "$priv"
	run_ctr priv priv-$1 "$POD" "$SERVICE_SH" "$priv"
	caps=$(grep CapBnd /proc/self/status | cut -f2) # containerd's are ours
	run exec_sync "$CTR" sh -c 'grep CapEff /proc/self/status | cut -f2
		awk "\$5 == \"/sys\" { print \$6 }" /proc/self/mountinfo
		grep -c " /proc/kcore " /proc/self/mountinfo
		ls /dev/kmsg'
	check_status 0
	[ "${lines[0]}" = "$caps" ]
	[[ ${lines[1]} == rw,* ]]
	[ "${lines[2]}" = 0 ]
	[ "${lines[3]}" = /dev/kmsg ]
}

@test "cri: a privileged container (hutch)" {
	privileged hutch
}

@test "cri: a privileged container (runc)" {
	privileged runc
}

# A pod's namespaced sysctl (kernel.shm_rmid_forced: the ipc namespace's) is set for its
# containers, and not for the host.
pod_sysctl() {
	local host
	host=$(cat /proc/sys/kernel/shm_rmid_forced)
	run_pod sysctl-$1 "$1" \
		".linux.sysctls = {\"kernel.shm_rmid_forced\": \"$((1 - host))\"}"
	run_ctr c sysctl-$1 "$POD" "$SERVICE_SH"
	run exec_sync "$CTR" cat /proc/sys/kernel/shm_rmid_forced
	check_status 0
	[ "$output" = $((1 - host)) ]
	[ "$(cat /proc/sys/kernel/shm_rmid_forced)" = "$host" ]
}

@test "cri: a pod's sysctls (hutch)" {
	pod_sysctl hutch
}

@test "cri: a pod's sysctls (runc)" {
	pod_sysctl runc
}

@test "cri: leaves nothing behind" {
	[ -z "$(cri pods | jq -r '.items[].id')" ]
	[ -z "$(ls -A "$CL_DIR/hutch-root/k8s.io" 2>/dev/null)" ]
	[ -z "$(ls -A "$CL_DIR/runc-root/k8s.io" 2>/dev/null)" ]
	ctr images remove "$IMG" "$PAUSE" >/dev/null
	stop_daemon containerd
	stop_daemon nsholder
	check_and_clean
}
