#!/usr/bin/env bats
# The runtime's binary overwritten from inside (CVE-2019-5736): a container whose program is
# the script "#!/proc/self/exe" makes the process that runs it execute the runtime again, now
# inside the container; an attacker there holds /proc/PID/exe with O_PATH and, once that
# process is gone, reopens it for writing. hutch starts every container process through a
# sealed in-memory trampoline, so /proc/self/exe is never the host binary at that moment.

load ../integration/helpers

setup() {
	setup_bundle
	# A copy: a vulnerable runtime must wreck the copy, not the build.
	cp "$HUTCH" "$TEST_DIR/hutch-copy"
	HUTCH=$TEST_DIR/hutch-copy
	SUM=$(sha256sum <"$HUTCH")
	install_static_helper exeattack
	printf '#!/proc/self/exe\n' >"$BUNDLE/rootfs/bin/evil"
	chmod 755 "$BUNDLE/rootfs/bin/evil"
	ln -s /proc/self/exe "$BUNDLE/rootfs/bin/evil-link"
	add_shared_mount
}

teardown() {
	teardown_bundle
}

# The attacker as container $ID's process, until /shared/stop appears.
start_attacker() {
	set_args exeattack /shared/stop
	run_bg run -d "$ID"
	check_status 0
	wait_for_output "$ID" attacking
}

stop_attacker() {
	touch "$TEST_DIR/shared/stop"
	wait_for_output "$ID" stopped
	ctr_output "$ID" | grep -v '^CAUGHT' | sort | uniq -c >&2 || true
}

@test "exe: 200 execs of #!/proc/self/exe and of a link to it leave the binary intact" {
	start_attacker
	local i bad=0
	for i in $(seq 100); do
		hutch exec "$ID" /bin/evil >>"$TEST_DIR/exec.out" 2>&1 || true
		hutch exec "$ID" /bin/evil-link >>"$TEST_DIR/exec.out" 2>&1 || true
	done
	stop_attacker
	sort "$TEST_DIR/exec.out" | uniq -c >&2
	[ "$(sha256sum <"$HUTCH")" = "$SUM" ] || bad=1
	! ctr_output "$ID" | grep -q '^WROTE' || bad=1
	# The re-run is refused, so the runtime never ran inside.
	! grep -q 'unknown command' "$TEST_DIR/exec.out" || bad=1
	[ "$bad" = 0 ]
}

@test "exe: containers started with #!/proc/self/exe leave the binary intact" {
	start_attacker
	local pid i
	pid=$(state_field "$ID" .pid)
	# Each in the attacker's pid namespace, so that it sees them.
	make_bundle "$TEST_DIR/b"
	update_config_in "$TEST_DIR/b" '.linux.namespaces |= map(if .type == "pid" then .path = $p else . end)
		| .process.args = ["/bin/evil"]' --arg p "/proc/$pid/ns/pid"
	cp "$BUNDLE/rootfs/bin/evil" "$TEST_DIR/b/rootfs/bin/evil"
	for i in $(seq 40); do
		hutch run --bundle "$TEST_DIR/b" "$ID-b$i" >>"$TEST_DIR/run.out" 2>&1 || true
		hutch delete --force "$ID-b$i" 2>/dev/null || true
	done
	stop_attacker
	sort "$TEST_DIR/run.out" | uniq -c >&2
	[ "$(sha256sum <"$HUTCH")" = "$SUM" ]
	! ctr_output "$ID" | grep -q '^WROTE'
	! grep -q 'unknown command' "$TEST_DIR/run.out"
}

@test "exe: a sandbox command of #!/proc/self/exe does not run the runtime" {
	printf '#!/proc/self/exe\n' >"$TEST_DIR/evil"
	chmod 755 "$TEST_DIR/evil"
	run hutch sandbox --image "$BUNDLE/rootfs" --ro-bind "$TEST_DIR/evil:/evil" -- /evil
	echo "$output"
	[ "$status" -eq 126 ]
	[[ $output != *"unknown command"* ]]
	[ "$(sha256sum <"$HUTCH")" = "$SUM" ]
}

@test "exe: /proc/1/exe of an init waiting for start cannot be opened from beside it" {
	local sum=$SUM # of the copy setup made
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

@test "exe: /proc/self/exe of the container's process is not the runtime" {
	set_args sh -c 'readlink /proc/self/exe; readlink /proc/1/exe; echo x >> /proc/1/exe && echo WROTE'
	run hutch run "$ID"
	[[ $output != *WROTE* ]]
	[[ $output != *hutch* ]]
}

# hook_bundle DIR KIND PATH: a bundle in the attacker's pid namespace whose KIND hook is the
# image's /usr/libexec/hook, "#!/proc/self/exe --version", at PATH as the hook sees it.
hook_bundle() {
	local pid
	pid=$(state_field "$ID" .pid)
	make_bundle "$1"
	mkdir -p "$1/rootfs/usr/libexec"
	printf '#!/proc/self/exe --version\n' >"$1/rootfs/usr/libexec/hook"
	chmod 755 "$1/rootfs/usr/libexec/hook"
	update_config_in "$1" '.linux.namespaces |= map(if .type == "pid" then .path = $p else . end)
		| .hooks[$k] = [{path: $h}]' --arg p "/proc/$pid/ns/pid" --arg k "$2" --arg h "$3"
}

# A container hook (createContainer: before pivot, its path resolved on the host; startContainer:
# in the container) is forked from the init, a fork of hutch: exec'd directly, its
# "#!/proc/self/exe" ran the host binary in the container, where a neighbour in its pid
# namespace held its exe. Through the trampoline, the re-run is refused (126).
@test "exe: createContainer and startContainer hooks of #!/proc/self/exe do not run the runtime" {
	start_attacker
	local i kind
	hook_bundle "$TEST_DIR/s" startContainer /usr/libexec/hook
	hook_bundle "$TEST_DIR/c" createContainer "$TEST_DIR/c/rootfs/usr/libexec/hook"
	for i in $(seq 20); do
		for kind in s c; do
			hutch run --bundle "$TEST_DIR/$kind" "$ID-$kind$i" >>"$TEST_DIR/run.$kind" 2>&1 || true
			hutch delete --force "$ID-$kind$i" 2>/dev/null || true
		done
	done
	stop_attacker
	for kind in s c; do
		sort "$TEST_DIR/run.$kind" | uniq -c >&2
	done
	[ "$(sha256sum <"$HUTCH")" = "$SUM" ]
	! ctr_output "$ID" | grep -q '^WROTE'
	! grep -q 'hutch version' "$TEST_DIR/run.s" "$TEST_DIR/run.c"
	[ "$(grep -c 'cannot be run again' "$TEST_DIR/run.s")" -eq 20 ]
	[ "$(grep -c 'startContainer hook /usr/libexec/hook: exited with status 126' "$TEST_DIR/run.s")" -eq 20 ]
	[ "$(grep -c 'cannot be run again' "$TEST_DIR/run.c")" -eq 20 ]
}
