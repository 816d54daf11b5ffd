#!/usr/bin/env bats
# /proc: a symlinked /proc in the image is refused, masked files are the null device (the
# standard list, /proc/interrupts included), /proc/sys is read-only, and without pivot_root
# the host's /proc is hidden, so that no fresh procfs can be mounted from inside.

load ../integration/helpers

@test "proc: a symlinked /proc in the image is refused" {
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

@test "proc: masked /proc files read as empty and are the 1:3 device" {
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

@test "proc: /proc/sys is read-only" {
	# vm.swappiness is not namespaced; writing its current value back is harmless even if
	# the write got through
	set_args sh -c 'v=$(cat /proc/sys/vm/swappiness); echo "$v" > /proc/sys/vm/swappiness && echo WROTE
		grep " /proc/sys " /proc/self/mountinfo'
	run hutch run "$ID"
	[[ $output != *WROTE* ]]
	[[ $output == *"Read-only file system"* ]]
	[[ $(grep " /proc/sys " <<<"$output") =~ \ /proc/sys\ ro[,\ ] ]]
}

@test "proc: /proc/interrupts is masked, by hutch spec's config and in the sandbox" {
	[ -e /proc/interrupts ] || skip "no /proc/interrupts here"
	jq -e '.linux.maskedPaths | index("/proc/interrupts")' "$BUNDLE/config.json"
	set_args sh -c 'echo "$(wc -c </proc/interrupts) $(stat -c %t:%T /proc/interrupts)"'
	run_ok
	[ "$output" = "0 1:3" ]
	run hutch sandbox --image "$BUNDLE/rootfs" -- \
		sh -c 'echo "$(wc -c </proc/interrupts) $(stat -c %t:%T /proc/interrupts)"'
	check_status 0
	[ "$output" = "0 1:3" ]
}

@test "proc: --no-pivot hides the host's /proc, so no fresh procfs can be mounted inside" {
	# A user namespace made inside (with caps Docker gives, SETFCAP to map root) may mount
	# a procfs while a fully visible one is in the mount namespace: the host's, below the
	# chroot, unless hutch detached it. (With pivot_root the old root is gone.)
	local caps='["CAP_CHOWN","CAP_DAC_OVERRIDE","CAP_FOWNER","CAP_SETGID","CAP_SETUID","CAP_SETFCAP"]'
	update_config '.process.capabilities = {bounding: $c, effective: $c, permitted: $c}' \
		--argjson c "$caps"
	set_args sh -c 'unshare -mrpf sh -c "mount -t proc none /tmp && echo MOUNTED"; echo end'
	run hutch run --no-pivot "$ID"
	echo "$output"
	[[ $output == *end* ]]
	[[ $output != *MOUNTED* ]]
	[[ $output == *"permission denied"* ]]
	# Still a working container, with its own /proc.
	set_args sh -c 'grep -c " /proc " /proc/self/mountinfo; head -c 5 /proc/self/status'
	run hutch run --no-pivot "$ID"
	check_status 0
	[ "${lines[0]}" -ge 1 ]
	[ "${lines[1]}" = Name: ]
}
