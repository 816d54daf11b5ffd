#!/usr/bin/env bats
# Idmapped bind mounts (mounts[].uidMappings/gidMappings, the idmap and ridmap options) in a
# container without a user namespace: on-disk containerID is seen as hostID inside. ridmap
# maps the bind's submounts too; idmap only its top. With a user namespace: userns.bats.

load ../helpers

setup() {
	setup_bundle
}

teardown() {
	teardown_bundle
}

@test "idmap: explicit maps without a user namespace; ridmap maps submounts, idmap only the top" {
	mkdir -p "$TEST_DIR/tree/sub" "$BUNDLE/rootfs/r" "$BUNDLE/rootfs/i"
	mount -t tmpfs -o mode=755 tmpfs "$TEST_DIR/tree/sub"
	track_mount "$TEST_DIR/tree/sub"
	chown 1500:1600 "$TEST_DIR/tree" "$TEST_DIR/tree/sub"
	update_config '.mounts += [
		{destination: "/r", type: "bind", source: $t, options: ["rbind", "ridmap"],
		 uidMappings: [{containerID: 1500, hostID: 0, size: 1}],
		 gidMappings: [{containerID: 1600, hostID: 0, size: 1}]},
		{destination: "/i", type: "bind", source: $t, options: ["rbind", "idmap"],
		 uidMappings: [{containerID: 1500, hostID: 0, size: 1}],
		 gidMappings: [{containerID: 1600, hostID: 0, size: 1}]}]' --arg t "$TEST_DIR/tree"
	set_args sh -c 'stat -c %u:%g /r /r/sub /i /i/sub; touch /r/sub/new'
	run_ok
	[ "${lines[0]}" = 0:0 ]
	[ "${lines[1]}" = 0:0 ]
	[ "${lines[2]}" = 0:0 ]
	[ "${lines[3]}" = 1500:1600 ] # idmap: the submount as it is on disk
	# Made by root inside, through the mapping: on disk as 1500:1600.
	[ "$(stat -c %u:%g "$TEST_DIR/tree/sub/new")" = 1500:1600 ]
}

@test "idmap: the option without maps needs the container's user namespace maps" {
	mkdir -p "$TEST_DIR/src" "$BUNDLE/rootfs/m"
	update_config '.mounts += [{destination: "/m", type: "bind", source: $s,
		options: ["bind", "ridmap"]}]' --arg s "$TEST_DIR/src"
	run_bg create "$ID"
	[ "$status" -eq 1 ]
	[[ $output == *"idmap without uidMappings needs linux.uidMappings and gidMappings"* ]]
	assert_no_leftovers
}
