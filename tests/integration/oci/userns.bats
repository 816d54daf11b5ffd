#!/usr/bin/env bats
# User namespaces: id maps, what the host sees, files created through a bind mount, and the
# errors for maps without a namespace and a namespace without maps.

load ../helpers

# A user namespace mapping container 0..65535 to host 100000..165535.
use_userns() {
	update_config '.linux.namespaces += [{type: "user"}]
		| .linux.uidMappings = [{containerID: 0, hostID: 100000, size: 65536}]
		| .linux.gidMappings = [{containerID: 0, hostID: 100000, size: 65536}]'
}

@test "userns: root inside is 100000 outside, with the maps as configured" {
	use_userns
	set_args sh -c 'id -u; id -g; cat /proc/self/uid_map /proc/self/gid_map; exec sleep 100'
	run_bg run -d "$ID"
	check_status 0
	wait_for_output "$ID" 65536 # both maps printed
	local pid
	pid=$(state_field "$ID" .pid)
	[ "$(awk '/^Uid:/ { print $2, $3, $4, $5 }' "/proc/$pid/status")" = "100000 100000 100000 100000" ]
	[ "$(awk '/^Gid:/ { print $2, $3, $4, $5 }' "/proc/$pid/status")" = "100000 100000 100000 100000" ]
	[ "$(readlink "/proc/$pid/ns/user")" != "$(readlink /proc/self/ns/user)" ]
	run ctr_output "$ID"
	[ "${lines[0]}" = 0 ]
	[ "${lines[1]}" = 0 ]
	[ "$(echo ${lines[2]})" = "0 100000 65536" ]
	[ "$(echo ${lines[3]})" = "0 100000 65536" ]
}

@test "userns: a non-root user inside maps into the range" {
	use_userns
	update_config '.process.user = {uid: 1000, gid: 1000}'
	set_args sh -c 'id -u; exec sleep 100'
	run_bg run -d "$ID"
	check_status 0
	wait_for_output "$ID" 1000
	[ "$(awk '/^Uid:/ { print $2 }' "/proc/$(state_field "$ID" .pid)/status")" = 101000 ]
}

@test "userns: files created inside belong to the mapped host ids" {
	use_userns
	add_shared_mount
	set_args sh -c 'touch /shared/by-root && echo ok'
	run_ok
	[ "$output" = ok ]
	[ "$(stat -c %u:%g "$TEST_DIR/shared/by-root")" = 100000:100000 ]
}

@test "userns: the standard devices work without mknod" {
	use_userns
	set_args sh -c 'echo x > /dev/null && head -c 1 /dev/zero | od -An -tx1 && ls /proc/self/fd >/dev/null && echo ok'
	run_ok
	[ "$(echo $output)" = "00 ok" ]
}

@test "userns: capabilities apply inside the namespace only" {
	use_userns
	set_args sh -c 'grep CapEff /proc/self/status; hostname other || echo no-sethostname'
	run_ok
	# The default set has no CAP_SYS_ADMIN, even within the namespace
	[[ $output == *no-sethostname* ]]
}

@test "userns: a user namespace without mappings fails" {
	update_config '.linux.namespaces += [{type: "user"}]'
	run_bg create "$ID"
	[ "$status" -eq 1 ]
	[[ $output == *apping* ]]
	assert_no_leftovers
}

@test "userns: mappings without a user namespace fail" {
	update_config '.linux.uidMappings = [{containerID: 0, hostID: 100000, size: 65536}]
		| .linux.gidMappings = [{containerID: 0, hostID: 100000, size: 65536}]'
	run_bg create "$ID"
	[ "$status" -eq 1 ]
	[[ $output == *apping* ]]
	assert_no_leftovers
}

@test "userns: idmapped binds: uidMappings, idmap with the container's maps, and refusals" {
	use_userns
	mkdir -p "$TEST_DIR/owned" "$TEST_DIR/root-owned" "$BUNDLE/rootfs/a" "$BUNDLE/rootfs/b"
	chown 1500:1500 "$TEST_DIR/owned"
	# Disk 1500 seen as host 100000, the container's root: its own directory inside.
	update_config '.mounts += [{destination: "/a", type: "bind", source: $s,
		options: ["rbind", "rw"], uidMappings: [{containerID: 1500, hostID: 100000, size: 1}],
		gidMappings: [{containerID: 1500, hostID: 100000, size: 1}]},
		{destination: "/b", type: "bind", source: $r, options: ["rbind", "rw", "idmap"]}]' \
		--arg s "$TEST_DIR/owned" --arg r "$TEST_DIR/root-owned"
	set_args sh -c 'stat -c %u:%g /a /b; touch /a/new /b/new && echo made'
	run_ok
	[ "${lines[0]}" = 0:0 ]
	[ "${lines[1]}" = 0:0 ] # idmap alone: the container's own maps, disk 0 as its root
	[ "${lines[2]}" = made ]
	[ "$(stat -c %u:%g "$TEST_DIR/owned/new")" = 1500:1500 ]
	[ "$(stat -c %u:%g "$TEST_DIR/root-owned/new")" = 0:0 ]
	# Only binds, and both maps.
	update_config '.mounts[-1] = {destination: "/b", type: "tmpfs", source: "tmpfs", options: ["idmap"]}'
	run_bg create "$ID"
	[ "$status" -eq 1 ]
	[[ $output == *"idmapped mounts must be binds"* ]]
	update_config '.mounts[-1] = {destination: "/b", type: "bind", source: $r, options: ["bind"],
		uidMappings: [{containerID: 0, hostID: 100000, size: 1}]}' --arg r "$TEST_DIR/root-owned"
	run_bg create "$ID"
	[ "$status" -eq 1 ]
	[[ $output == *"uidMappings and gidMappings go together"* ]]
	assert_no_leftovers
}

@test "userns: a bind source beneath a directory closed to the container's root still mounts" {
	use_userns
	mkdir -p "$TEST_DIR/closed/inner" "$BUNDLE/rootfs/data"
	chmod 700 "$TEST_DIR/closed"
	echo secret-ok >"$TEST_DIR/closed/inner/f"
	chmod 755 "$TEST_DIR/closed/inner"
	chmod 644 "$TEST_DIR/closed/inner/f"
	update_config '.mounts += [{destination: "/data", type: "bind", source: $s,
		options: ["rbind", "ro"]}]' --arg s "$TEST_DIR/closed/inner"
	set_args cat /data/f
	run_ok
	[ "$output" = secret-ok ]
}

@test "userns: the cgroup mount binds the container's own hierarchies with their submounts" {
	[ "$(stat -fc %T /sys/fs/cgroup/unified 2>/dev/null)" = cgroup2fs ] ||
		skip "no hybrid cgroup2 at /sys/fs/cgroup/unified"
	use_userns
	remove_ns cgroup # no cgroup namespace: cgroup2 can't be mounted, the container's dir is bound
	# The container's cgroup2 directory, made here first (an empty one is taken as it is), with a
	# mount beneath it in a mount namespace of our own: in the container's user namespace that
	# mount is locked, and a bind without MS_REC is EINVAL.
	local own=$(sed -n 's/^0:://p' /proc/self/cgroup)
	local dir=/sys/fs/cgroup/unified${own%/}/$TAG
	mkdir "$dir"
	local ino=$(stat -c %i "$dir")
	echo covered >"$TEST_DIR/stat"
	set_args sh -c 'cat /sys/fs/cgroup/unified/cgroup.stat; cat /sys/fs/cgroup/unified/cgroup.controllers >/dev/null && echo unified-ok; stat -c %i /sys/fs/cgroup/unified'
	run unshare -m --propagation private sh -c 'mount --bind "$1/stat" "$5/cgroup.stat" &&
		exec timeout -k 5 30 "$2" --root "$3" run "$4"' sh "$TEST_DIR" "$HUTCH" "$HUTCH_ROOT" "$ID" "$dir"
	rmdir "$dir" 2>/dev/null || true
	check_status 0
	[ "${lines[0]}" = covered ]
	[ "${lines[1]}" = unified-ok ]
	[ "${lines[2]}" = "$ino" ] # its own directory, not the host's whole tree
}
