#!/usr/bin/env bats
# mounts: bind (rw, ro, file, rbind vs bind), tmpfs options, the standard mounts, created
# destinations and root.readonly. Checked from inside, through /proc/self/mountinfo.

load ../helpers

# The mountinfo line of mount point $1 in $output (a container's /proc/self/mountinfo).
mount_line() {
	awk -v mp="$1" '$5 == mp' <<<"$output" | tail -n1
}

@test "mounts: a bind-mounted host directory is shared both ways" {
	add_shared_mount
	echo from-host >"$TEST_DIR/shared/in"
	set_args sh -c 'cat /shared/in; echo from-container > /shared/out'
	run_ok
	[ "$output" = from-host ]
	[ "$(cat "$TEST_DIR/shared/out")" = from-container ]
}

@test "mounts: a ro bind mount cannot be written nor remounted rw" {
	mkdir "$TEST_DIR/ro"
	echo data >"$TEST_DIR/ro/file"
	update_config '.mounts += [{destination: "/ro", type: "bind", source: $s,
		options: ["bind", "ro"]}]' --arg s "$TEST_DIR/ro"
	set_args sh -c 'cat /ro/file; touch /ro/new; echo "data" >> /ro/file;
		mount -o remount,rw /ro; touch /ro/new2; grep " /ro " /proc/self/mountinfo'
	run hutch run "$ID"
	[[ ${lines[0]} == data ]]
	[[ $output == *"Read-only file system"* ]]
	[ "$(ls "$TEST_DIR/ro")" = file ]
	[ "$(cat "$TEST_DIR/ro/file")" = data ]
	[[ $(grep " /ro " <<<"$output") =~ \ /ro\ ro[,\ ] ]]
}

@test "mounts: a bind-mounted file" {
	echo hello-file >"$TEST_DIR/file.txt"
	update_config '.mounts += [{destination: "/etc/hostfile", type: "bind", source: $s,
		options: ["bind", "ro"]}]' --arg s "$TEST_DIR/file.txt"
	set_args cat /etc/hostfile
	run_ok
	[ "$output" = hello-file ]
}

@test "mounts: rbind carries submounts, bind does not" {
	mkdir -p "$TEST_DIR/tree/sub"
	mount -t tmpfs tmpfs "$TEST_DIR/tree/sub"
	track_mount "$TEST_DIR/tree/sub"
	touch "$TEST_DIR/tree/sub/inner"
	update_config '.mounts += [
		{destination: "/rb", type: "bind", source: $s, options: ["rbind", "ro"]},
		{destination: "/b", type: "bind", source: $s, options: ["bind", "ro"]}]' \
		--arg s "$TEST_DIR/tree"
	set_args sh -c 'ls /rb/sub; echo ---; ls /b/sub'
	run_ok
	[ "$(echo $output)" = "inner ---" ]
}

@test "mounts: tmpfs with options" {
	add_tmpfs /scratch nosuid nodev noexec mode=1770 size=4m
	set_args sh -c 'grep " /scratch " /proc/self/mountinfo; stat -c %a /scratch;
		cp /bin/busybox /scratch/bb && /scratch/bb true && echo EXECUTED'
	run hutch run "$ID"
	local line=${lines[0]}
	[[ $line == *tmpfs* ]]
	[[ $line == *nosuid* ]]
	[[ $line == *nodev* ]]
	[[ $line == *noexec* ]]
	[[ $line == *size=4096k* ]]
	[ "${lines[1]}" = 1770 ]
	[[ $output != *EXECUTED* ]]
}

@test "mounts: proc, sys, dev, dev/pts, dev/shm and dev/mqueue are there" {
	set_args cat /proc/self/mountinfo
	run_ok
	[[ $(mount_line /proc) == *" - proc "* ]]
	[[ $(mount_line /dev) == *" - tmpfs "* ]]
	[[ $(mount_line /dev/pts) == *" - devpts "* ]]
	[[ $(mount_line /dev/shm) == *" - tmpfs "* ]]
	[[ $(mount_line /dev/mqueue) == *" - mqueue "* ]]
	[[ $(mount_line /sys) == *" - sysfs "* ]]
	# sysfs is ro in the default config
	[[ $(mount_line /sys) =~ ^[0-9]+\ [0-9]+\ [0-9:]+\ [^\ ]+\ /sys\ ro[,\ ] ]]
}

@test "mounts: missing destinations are created, nested" {
	add_tmpfs /a/b/c
	set_args sh -c 'test -d /a/b/c && grep -c " /a/b/c " /proc/self/mountinfo'
	run_ok
	[ "$output" = 1 ]
}

@test "mounts: root.readonly true makes / read-only, false does not" {
	set_args sh -c 'touch /newfile && echo WROTE'
	run hutch run "$ID"
	[[ $output == *"Read-only file system"* ]]
	[ ! -e "$BUNDLE/rootfs/newfile" ]
	update_config '.root.readonly = false'
	run_ok
	[ "$output" = WROTE ]
	[ -e "$BUNDLE/rootfs/newfile" ]
}

@test "mounts: a bind mount of a missing source fails create, naming it" {
	update_config '.mounts += [{destination: "/x", type: "bind", source: $s,
		options: ["bind"]}]' --arg s "$TEST_DIR/no-such-dir"
	run_bg create "$ID"
	[ "$status" -eq 1 ]
	[[ $output == *no-such-dir* ]]
	assert_no_leftovers
}

@test "mounts: the host's mounts under the bundle stay as they were" {
	local before
	before=$(grep -c . /proc/self/mountinfo)
	add_tmpfs /scratch
	run_ok
	[ "$(grep -c . /proc/self/mountinfo)" -eq "$before" ]
}

@test "mounts: a read-only /dev is populated first, then read-only, as is a ro tmpfs with a mount beneath" {
	update_config '(.mounts[] | select(.destination == "/dev") | .options) += ["ro"]'
	add_tmpfs /t ro mode=755
	add_tmpfs /t/sub mode=755
	set_args sh -c 'grep -E " /(dev|t) " /proc/self/mountinfo | cut -d" " -f5,6;
		echo x >/dev/null && echo null-ok; [ -c /dev/zero ] && [ -L /dev/fd ] && echo nodes-ok
		grep -q " /dev/pts " /proc/self/mountinfo && echo pts-ok
		touch /dev/new 2>/dev/null || echo dev-ro; touch /t/new 2>/dev/null || echo t-ro
		touch /t/sub/new && echo sub-rw'
	run_ok
	[[ ${lines[0]} == "/dev ro,"* ]]
	[[ ${lines[1]} == "/t ro,"* ]]
	[ "$(echo "${lines[@]:2}")" = "null-ok nodes-ok pts-ok dev-ro t-ro sub-rw" ]
}

@test "mounts: recursive options (rro, rnosuid, rnoexec, rnoatime) reach every submount" {
	mkdir -p "$TEST_DIR/tree/sub"
	mount -t tmpfs tmpfs "$TEST_DIR/tree/sub"
	track_mount "$TEST_DIR/tree/sub"
	update_config '.mounts += [{destination: "/rb", type: "bind", source: $s,
		options: ["rbind", "rro", "rnosuid", "rnoexec", "rnoatime"]}]' --arg s "$TEST_DIR/tree"
	add_tmpfs /t rro
	add_tmpfs /t/sub mode=755 # made before /t turns read-only, then read-only with it
	set_args sh -c 'grep -E " /(rb|rb/sub|t|t/sub) " /proc/self/mountinfo | cut -d" " -f5,6
		touch /rb/sub/x 2>/dev/null || echo sub-ro; touch /t/sub/x 2>/dev/null || echo t-sub-ro'
	run_ok
	local l
	for l in "${lines[@]:0:4}"; do
		echo "$l"
		[[ $l == *" ro,"* ]]
	done
	[[ ${lines[0]} == "/rb ro,nosuid,nodev,noexec,noatime"* || ${lines[0]} == "/rb ro,nosuid,noexec,noatime"* ]]
	[[ ${lines[1]} == "/rb/sub ro,nosuid,"*noexec,noatime* ]]
	[ "${lines[4]}" = sub-ro ]
	[ "${lines[5]}" = t-sub-ro ]
	# Not hutch's own: an option it does not know goes to the filesystem, which refuses it.
	update_config '.mounts[-1].options = ["rfoo"]'
	run hutch run "$ID"
	[ "$status" -eq 1 ]
	[[ $output == *"mount /t/sub"* ]]
}
