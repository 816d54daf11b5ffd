#!/usr/bin/env bats
# /dev: the standard nodes and symlinks, linux.devices, and that it is not the host's /dev.

load ../helpers

@test "dev: the standard nodes with their numbers" {
	set_args stat -c '%n %F %t:%T' /dev/null /dev/zero /dev/full /dev/random /dev/urandom /dev/tty
	run_ok
	[ "${lines[0]}" = "/dev/null character special file 1:3" ]
	[ "${lines[1]}" = "/dev/zero character special file 1:5" ]
	[ "${lines[2]}" = "/dev/full character special file 1:7" ]
	[ "${lines[3]}" = "/dev/random character special file 1:8" ]
	[ "${lines[4]}" = "/dev/urandom character special file 1:9" ]
	[ "${lines[5]}" = "/dev/tty character special file 5:0" ]
}

@test "dev: the standard nodes work (read, write)" {
	set_args sh -c 'echo x > /dev/null && head -c 3 /dev/zero | od -An -tx1 &&
		head -c 1 /dev/urandom > /dev/null && echo ok'
	run_ok
	[ "$(echo $output)" = "00 00 00 ok" ]
}

@test "dev: the fd, stdio and ptmx symlinks" {
	set_args sh -c 'for l in fd stdin stdout stderr ptmx; do readlink /dev/$l; done'
	run_ok
	[ "${lines[0]}" = /proc/self/fd ]
	[ "${lines[1]}" = /proc/self/fd/0 ]
	[ "${lines[2]}" = /proc/self/fd/1 ]
	[ "${lines[3]}" = /proc/self/fd/2 ]
	[ "${lines[4]}" = pts/ptmx ]
}

@test "dev: /dev is the container's own, not the host's" {
	set_args sh -c 'for d in mem kmem port kmsg sda vda loop0 loop-control; do
		[ -e /dev/$d ] && echo "host device /dev/$d"; done; true'
	run_ok
	[ -z "$output" ]
}

@test "dev: /dev/shm is writable, /dev/pts is a new devpts instance" {
	set_args sh -c 'echo x > /dev/shm/f && cat /dev/shm/f; ls /dev/pts'
	run_ok
	[ "${lines[0]}" = x ]
	# a fresh instance holds nothing but ptmx
	[ "${lines[1]}" = ptmx ]
	[ "${#lines[@]}" -eq 2 ]
}

@test "dev: linux.devices makes nodes with their type, numbers, mode and owner" {
	update_config '.linux.devices = [
		{path: "/dev/mydev", type: "c", major: 1, minor: 7, fileMode: 420, uid: 1000, gid: 1000},
		{path: "/dev/sub/myzero", type: "c", major: 1, minor: 5},
		{path: "/dev/myfifo", type: "p"}]'
	set_args stat -c '%n %F %t:%T %a %u:%g' /dev/mydev /dev/sub/myzero /dev/myfifo
	run_ok
	[ "${lines[0]}" = "/dev/mydev character special file 1:7 644 1000:1000" ]
	[[ ${lines[1]} == "/dev/sub/myzero character special file 1:5 "* ]]
	[[ ${lines[2]} == "/dev/myfifo fifo "* ]]
}

@test "dev: a linux.devices node that the cgroup allows can be used" {
	update_config '.linux.devices = [{path: "/dev/myzero", type: "c", major: 1, minor: 5}]
		| .linux.resources.devices += [{allow: true, type: "c", major: 1, minor: 5, access: "rwm"}]'
	set_args sh -c 'head -c 2 /dev/myzero | od -An -tx1'
	run_ok
	[ "$(echo $output)" = "00 00" ]
}
