#!/usr/bin/env bats
# Escapes: symlinks in the image as mount destinations, a symlinked /proc, masked and
# read-only /proc, fds leaking into the container, a cwd through a leaked fd, overwriting the
# runtime through /proc/PID/exe (CVE-2019-5736), no_new_privs and read-only bind mounts.

load helpers

@test "security: a mount destination through an image symlink stays inside the rootfs" {
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

@test "security: a bind mount source is not resolved inside the rootfs" {
	# Destinations resolve in the rootfs; the source is the host's own path (no confusion)
	mkdir "$TEST_DIR/src"
	echo host >"$TEST_DIR/src/file"
	update_config '.mounts += [{destination: "/data", type: "bind", source: $s, options: ["bind", "ro"]}]' \
		--arg s "$TEST_DIR/src"
	set_args cat /data/file
	run_ok
	[ "$output" = host ]
}

@test "security: a symlinked /proc in the image is refused" {
	rmdir "$BUNDLE/rootfs/proc"
	mkdir "$TEST_DIR/fakeproc"
	ln -s "$TEST_DIR/fakeproc" "$BUNDLE/rootfs/proc"
	run_bg create "$ID"
	[ "$status" -eq 1 ]
	[[ $output == */proc* ]]
	[ -z "$(ls -A "$TEST_DIR/fakeproc")" ]
	assert_no_leftovers
	# A relative link into the rootfs is refused as well
	rm "$BUNDLE/rootfs/proc"
	ln -s tmp "$BUNDLE/rootfs/proc"
	run_bg create "$ID"
	[ "$status" -eq 1 ]
	[[ $output == */proc* ]]
	assert_no_leftovers
}

@test "security: masked /proc files read as empty and are the 1:3 device" {
	[ -e /proc/kcore ] || [ -e /proc/keys ] || [ -e /proc/timer_list ] ||
		skip "none of /proc/kcore, keys, timer_list exists here"
	set_args sh -c 'for f in /proc/kcore /proc/keys /proc/timer_list; do
		[ -e $f ] && echo "$f $(wc -c < $f) $(stat -c "%t:%T" $f)"; done; true'
	run_ok
	[ -n "$output" ]
	local l
	for l in "${lines[@]}"; do
		[[ $l == *" 0 1:3" ]]
	done
}

@test "security: /proc/sys is read-only" {
	# vm.swappiness is not namespaced; writing its current value back is harmless even if
	# the write got through
	set_args sh -c 'v=$(cat /proc/sys/vm/swappiness); echo "$v" > /proc/sys/vm/swappiness && echo WROTE
		grep " /proc/sys " /proc/self/mountinfo'
	run hutch run "$ID"
	[[ $output != *WROTE* ]]
	[[ $output == *"Read-only file system"* ]]
	[[ $(grep " /proc/sys " <<<"$output") =~ \ /proc/sys\ ro[,\ ] ]]
}

@test "security: no fd of hutch or of the caller reaches the container" {
	exec 7</dev/null
	exec 8>"$TEST_DIR/fd8"
	set_args ls /proc/self/fd
	run hutch run "$ID"
	exec 7<&- 8>&-
	check_status 0
	# ls's own directory is 3
	[ "$(echo $output)" = "0 1 2 3" ]
}

@test "security: the running process holds nothing but 0, 1 and 2" {
	set_args sleep 100
	exec 7</dev/null
	run_bg create "$ID"
	exec 7<&-
	hutch start "$ID"
	local pid
	pid=$(state_field "$ID" .pid)
	ls -l "/proc/$pid/fd"
	[ "$(ls "/proc/$pid/fd" | sort -n | tr '\n' ' ')" = "0 1 2 " ]
}

@test "security: a cwd through /proc/self/fd/N is refused (CVE-2024-21626)" {
	local fd
	exec 7<"$TEST_DIR"
	for fd in 3 4 5 6 7 8 9 10; do
		update_config '.process.cwd = $c' --arg c "/proc/self/fd/$fd"
		set_args sh -c 'echo "escaped to $(pwd)"; ls ..'
		run hutch run "$ID"
		echo "cwd fd $fd: $status: $output"
		if [ "$status" -eq 0 ] || [[ $output == *escaped* ]]; then
			exec 7<&-
			false
		fi
	done
	exec 7<&-
	assert_no_leftovers
}

@test "security: the runtime binary cannot be overwritten through /proc/PID/exe (CVE-2019-5736)" {
	# Work on a copy, so that a vulnerable runtime does not wreck the build.
	cp "$HUTCH" "$TEST_DIR/hutch-copy"
	HUTCH=$TEST_DIR/hutch-copy
	local sum
	sum=$(sha256sum <"$HUTCH")
	# A: created, so its pid 1 is still the runtime waiting for start.
	set_args sleep 100
	run_bg create "$ID-a"
	check_status 0
	local pid_a
	pid_a=$(state_field "$ID-a" .pid)
	# B joins A's pid namespace, grabs /proc/1/exe, waits for A to exec, then writes.
	make_bundle "$TEST_DIR/b"
	add_shared_mount "$TEST_DIR/b"
	update_config_in "$TEST_DIR/b" '.linux.namespaces |= map(if .type == "pid" then .path = $p else . end)
		| .process.args = ["sh", "-c", "if (exec 5</proc/1/exe) 2>/dev/null; then exec 5</proc/1/exe; echo opened; else echo not-opened; fi
			while [ ! -e /shared/go ]; do sleep 0.05; done
			echo pwned >> /proc/self/fd/5 && echo WROTE
			cat /proc/1/exe > /dev/null; echo done"]' --arg p "/proc/$pid_a/ns/pid"
	run_bg run -d --bundle "$TEST_DIR/b" "$ID-b"
	check_status 0
	wait_for_output "$ID-b" opened
	hutch start "$ID-a"
	touch "$TEST_DIR/shared/go"
	wait_for_output "$ID-b" done
	ctr_output "$ID-b"
	[ "$(sha256sum <"$HUTCH")" = "$sum" ]
	[ "$(sha256sum <"$ORIG_HUTCH")" = "$sum" ]
}

@test "security: /proc/self/exe of the container's process is not the runtime" {
	set_args sh -c 'readlink /proc/self/exe; readlink /proc/1/exe; echo x >> /proc/1/exe && echo WROTE'
	run hutch run "$ID"
	[[ $output != *WROTE* ]]
	[[ $output != *hutch* ]]
}

@test "security: noNewPrivileges is on by default" {
	set_args grep ^NoNewPrivs: /proc/self/status
	run_ok
	[ "$(echo $output)" = "NoNewPrivs: 1" ]
}

@test "security: ro bind mounts are really read-only" {
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

@test "security: the state directory is out of the container's reach" {
	set_args sh -c 'grep -c "'"$HUTCH_ROOT"'" /proc/self/mountinfo; ls / | grep -c state; true'
	run_ok
	[ "${lines[0]}" = 0 ]
}
