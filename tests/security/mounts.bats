#!/usr/bin/env bats
# Mount destinations and sources: an image's symlinks must not send a mount outside the
# rootfs or into /proc, a bind's source is the host's path, read-only binds stay read-only,
# and hutch's own state is out of reach.

load ../integration/helpers

@test "mounts: a mount destination through an image symlink stays inside the rootfs" {
	mkdir "$TEST_DIR/host-dir" "$TEST_DIR/host-dir2"
	ln -s "$TEST_DIR/host-dir" "$BUNDLE/rootfs/evil"
	ln -s "../../../../../../../../..$TEST_DIR/host-dir2" "$BUNDLE/rootfs/evil2"
	update_config '.mounts += [
		{destination: "/evil/x", type: "tmpfs", source: "tmpfs", options: []},
		{destination: "/evil2/y", type: "tmpfs", source: "tmpfs", options: []}]'
	run hutch run "$ID"
	echo "status $status"
	# refusing is fine, mounting inside the rootfs is fine; the host must not change
	[ -z "$(ls -A "$TEST_DIR/host-dir")" ]
	[ -z "$(ls -A "$TEST_DIR/host-dir2")" ]
}

@test "mounts: a bind mount source is not resolved inside the rootfs" {
	# Destinations resolve in the rootfs; the source is the host's own path (no confusion)
	mkdir "$TEST_DIR/src"
	echo host >"$TEST_DIR/src/file"
	update_config '.mounts += [{destination: "/data", type: "bind", source: $s, options: ["bind", "ro"]}]' \
		--arg s "$TEST_DIR/src"
	set_args cat /data/file
	run_ok
	[ "$output" = host ]
}

@test "mounts: ro bind mounts are really read-only" {
	mkdir "$TEST_DIR/ro"
	mkdir "$TEST_DIR/ro/sub"
	update_config '.mounts += [{destination: "/ro", type: "bind", source: $s, options: ["rbind", "ro"]}]' \
		--arg s "$TEST_DIR/ro"
	set_args sh -c 'touch /ro/a; touch /ro/sub/b; mkdir /ro/c; mount -o remount,rw,bind /ro;
		touch /ro/d; echo end'
	run hutch run "$ID"
	[[ $output == *"Read-only file system"* ]]
	[ "$(ls -A "$TEST_DIR/ro")" = sub ]
	[ -z "$(ls -A "$TEST_DIR/ro/sub")" ]
}

@test "mounts: the state directory is out of the container's reach" {
	set_args sh -c 'grep -c "'"$HUTCH_ROOT"'" /proc/self/mountinfo; ls / | grep -c state; true'
	run_ok
	[ "${lines[0]}" = 0 ]
}

@test "mounts: a destination that an image's symlink sends into /proc is refused" {
	ln -s proc/sys/kernel "$BUNDLE/rootfs/data"
	ln -s /proc/self "$BUNDLE/rootfs/data2"
	local dest
	for dest in /data /data2/attr; do
		cp "$BUNDLE/config.json" "$TEST_DIR/config.orig"
		update_config '.mounts += [{destination: $d, type: "tmpfs", source: "tmpfs", options: []}]' \
			--arg d "$dest"
		run_bg create "$ID"
		echo "$dest: $output"
		[ "$status" -eq 1 ]
		[[ $output == *"mount $dest: resolves inside /proc"* ]]
		assert_no_leftovers
		mkdir -p "$TEST_DIR/src"
		cp "$TEST_DIR/config.orig" "$BUNDLE/config.json"
		update_config '.mounts += [{destination: $d, type: "bind", source: $s, options: ["bind"]}]' \
			--arg d "$dest" --arg s "$TEST_DIR/src"
		run_bg create "$ID"
		[ "$status" -eq 1 ]
		[[ $output == *"resolves inside /proc"* ]]
		assert_no_leftovers
		cp "$TEST_DIR/config.orig" "$BUNDLE/config.json"
	done
}

@test "mounts: inside /proc only proc itself and lxcfs's files may be mounted" {
	echo "fake meminfo" >"$TEST_DIR/meminfo"
	update_config '.mounts += [{destination: "/proc/meminfo", type: "bind", source: $s,
		options: ["bind", "ro"]}]' --arg s "$TEST_DIR/meminfo"
	set_args cat /proc/meminfo
	run_ok
	[ "$output" = "fake meminfo" ]
	update_config '.mounts += [{destination: "/proc/sys", type: "tmpfs", source: "tmpfs",
		options: []}]'
	run_bg create "$ID"
	[ "$status" -eq 1 ]
	[[ $output == *"mount /proc/sys: inside /proc: only proc itself"* ]]
	assert_no_leftovers
}
