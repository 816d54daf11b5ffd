#!/usr/bin/env bats
# The mount namespace: none in linux.namespaces (the container shares ours, chrooted, its
# mounts on a private bind of its rootfs that delete takes away, as runc minus the leak),
# and one joined by path.

load ../helpers

@test "mountns: without one the container shares ours, chrooted; its mounts go at delete" {
	remove_ns mount
	set_args sleep 100
	run_bg run -d "$ID"
	check_status 0
	local pid
	pid=$(state_field "$ID" .pid)
	[ "$(readlink "/proc/$pid/ns/mnt")" = "$(readlink /proc/self/ns/mnt)" ]
	[ "$(readlink "/proc/$pid/root")" = "$BUNDLE/rootfs" ]
	grep -q " $BUNDLE/rootfs/proc " /proc/self/mountinfo # made in ours, as under runc
	# An exec lands in the same root, not ours.
	run hutch exec "$ID" sh -c 'readlink /proc/self/ns/mnt; ls -d /home/user; ls /work 2>&1 || true'
	check_status 0
	[ "${lines[0]}" = "$(readlink /proc/self/ns/mnt)" ]
	[ "${lines[1]}" = /home/user ]
	[[ ${lines[2]} == *"No such file"* ]]
	hutch delete --force "$ID"
	! grep -F "$BUNDLE/rootfs" /proc/self/mountinfo
	# In the foreground, with a read-only root: the same, gone when run returns.
	update_config '.root.readonly = true'
	set_args sh -c 'touch /x 2>/dev/null || echo ro; readlink /proc/self/ns/mnt'
	run_ok
	[ "${lines[0]}" = ro ]
	[ "${lines[1]}" = "$(readlink /proc/self/ns/mnt)" ]
	! grep -F "$BUNDLE/rootfs" /proc/self/mountinfo
	# A create that fails halfway leaves none of its mounts either.
	update_config '.mounts += [{destination: "/data", type: "bind", source: "/nonexistent",
		options: ["rbind"]}]'
	run_bg create "$ID"
	[ "$status" -eq 1 ]
	[[ $output == *"/nonexistent"* ]]
	assert_no_leftovers
}

@test "mountns: one joined by path is the container's; ours, by path, is refused" {
	unshare -m --propagation private sleep 100 3>&- &
	local holder=$!
	track_pid "$holder"
	local ns
	for _ in $(seq 50); do
		ns=$(readlink "/proc/$holder/ns/mnt")
		[ "$ns" != "$(readlink /proc/self/ns/mnt)" ] && break
		sleep 0.02
	done
	update_config '(.linux.namespaces[] | select(.type == "mount")) |= {type: "mount", path: $p}' \
		--arg p "/proc/$holder/ns/mnt"
	set_args readlink /proc/self/ns/mnt
	run_ok
	[ "$output" = "$ns" ]
	! grep -F "$BUNDLE/rootfs" /proc/self/mountinfo # its mounts are in that namespace
	update_config '(.linux.namespaces[] | select(.type == "mount")) |= {type: "mount", path: $p}' \
		--arg p "/proc/$$/ns/mnt"
	run_bg create "$ID"
	[ "$status" -eq 1 ]
	[[ $output == *"linux.namespaces: mount /proc/$$/ns/mnt is hutch's own"* ]]
	kill "$holder"
	wait "$holder" || true
	assert_no_leftovers
}
