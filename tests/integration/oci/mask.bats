#!/usr/bin/env bats
# maskedPaths and readonlyPaths: the defaults and the image's own files and directories.

load ../helpers

setup() {
	setup_bundle
	mkdir "$BUNDLE/rootfs/testdir"
	echo secret >"$BUNDLE/rootfs/testdir/file"
	echo secret >"$BUNDLE/rootfs/testfile"
}

# The default masked files this kernel has (kcore is often configured out).
masked_files() {
	local f
	for f in /proc/kcore /proc/keys /proc/timer_list /proc/sched_debug /proc/latency_stats; do
		[ -e "$f" ] && echo "$f"
	done
	true
}

@test "mask: default masked files are /dev/null and read as empty" {
	local files
	files=$(masked_files)
	[ -n "$files" ] || skip "none of the default masked /proc files exists here"
	set_args sh -c 'for f; do echo "$f $(wc -c < $f) $(stat -c "%F %t:%T" $f)"; done' sh $files
	run_ok
	local l
	[ "${#lines[@]}" -eq "$(wc -w <<<"$files")" ]
	for l in "${lines[@]}"; do
		[[ $l == /proc/*" 0 character special file 1:3" ]]
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
	set_args sh -c 'umount /testfile; umount -l /testfile; cat /testfile; wc -c < /testfile'
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
