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
	run hutch sandbox --image "$BUNDLE/rootfs" --bind "$TEST_DIR/evil:/evil" -- /evil
	echo "$output"
	[ "$status" -eq 126 ]
	[[ $output != *"unknown command"* ]]
	[ "$(sha256sum <"$HUTCH")" = "$SUM" ]
}
