#!/usr/bin/env bats
# maskedPaths and readonlyPaths: the defaults and the image's own files and directories.

load helpers

setup() {
	setup_bundle
	mkdir "$BUNDLE/rootfs/testdir"
	echo secret >"$BUNDLE/rootfs/testdir/file"
	echo secret >"$BUNDLE/rootfs/testfile"
}

@test "mask: default masked files are /dev/null and read as empty" {
	set_args sh -c 'for f in /proc/kcore /proc/keys /proc/timer_list; do
		[ -e $f ] || continue; echo "$f $(wc -c < $f) $(stat -c "%F %t:%T" $f)"; done'
	run_ok
	[[ ${lines[0]} == "/proc/kcore 0 character special file 1:3" ]]
	local l
	for l in "${lines[@]}"; do
		[[ $l == *" 0 character special file 1:3" ]]
	done
}

@test "mask: a file of the image reads as empty, and the image keeps it" {
	update_config '.linux.maskedPaths += ["/testfile"] | .root.readonly = false'
	set_args sh -c 'cat /testfile; echo changed > /testfile; cat /testfile; echo end'
	run hutch run "$ID"
	[ "$output" = end ]
	[ "$(cat "$BUNDLE/rootfs/testfile")" = secret ]
}

@test "mask: a directory of the image is empty and read-only" {
	update_config '.linux.maskedPaths += ["/testdir"] | .root.readonly = false'
	set_args sh -c 'ls -A /testdir; touch /testdir/new'
	run hutch run "$ID"
	[ "$status" -ne 0 ]
	[[ ${lines[0]} == *"Read-only file system"* ]]
	[ "${#lines[@]}" -eq 1 ]
	[ "$(ls "$BUNDLE/rootfs/testdir")" = file ]
}

@test "mask: masks cannot be unmounted from inside" {
	update_config '.linux.maskedPaths += ["/testfile"]'
	set_args sh -c 'umount /testfile; umount -l /testfile; cat /testfile; umount /proc/kcore;
		wc -c < /proc/kcore'
	run hutch run "$ID"
	[ "${lines[${#lines[@]} - 1]}" = 0 ]
	[[ $output != *secret* ]]
}

@test "mask: a masked path that does not exist is ignored" {
	update_config '.linux.maskedPaths += ["/does/not/exist", "/proc/does-not-exist"]'
	run_ok
}

@test "mask: readonlyPaths are read-only, still readable" {
	update_config '.linux.readonlyPaths += ["/testdir"] | .root.readonly = false'
	set_args sh -c 'cat /testdir/file; touch /testdir/new; touch /ok && echo root-writable'
	run hutch run "$ID"
	[ "${lines[0]}" = secret ]
	[[ ${lines[1]} == *"Read-only file system"* ]]
	[ "${lines[2]}" = root-writable ]
	[ ! -e "$BUNDLE/rootfs/testdir/new" ]
}
