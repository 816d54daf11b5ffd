#!/usr/bin/env bats
# The lifecycle verbs together: create, start, state, kill, delete (and --no-pivot,
# --no-new-keyring), as a user drives them one by one.

load ../helpers

@test "create/start/state/kill/delete: the whole lifecycle" {
	set_args sleep 100
	run_bg create --pid-file "$TEST_DIR/pid" "$ID"
	check_status 0
	# the pid file is there when create returns
	local pid
	pid=$(cat "$TEST_DIR/pid")
	[ "$(state_field "$ID" .status)" = created ]
	[ "$(state_field "$ID" .pid)" = "$pid" ]
	kill -0 "$pid"

	run hutch start "$ID"
	check_status 0
	[ "$(state_field "$ID" .status)" = running ]
	[ "$(state_field "$ID" .pid)" = "$pid" ]

	run hutch kill "$ID" KILL
	check_status 0
	wait_for_state "$ID" stopped

	run hutch delete "$ID"
	check_status 0
	run hutch state "$ID"
	[ "$status" -eq 1 ]
	[[ $output == *"$ID"* ]]
	pid_gone "$pid"
}

@test "state: the OCI fields, plus rootfs, created and owner" {
	update_config '.annotations = {"org.example.key": "value"}'
	set_args sleep 100
	cd "$BUNDLE/rootfs"
	run_bg create --bundle .. "$ID" # the state's bundle is absolute all the same
	check_status 0
	run hutch state "$ID"
	check_status 0
	local s=$output
	[[ $(jq -r .ociVersion <<<"$s") == 1.* ]]
	[ "$(jq -r .id <<<"$s")" = "$ID" ]
	[ "$(jq -r .status <<<"$s")" = created ]
	[ "$(jq -r .pid <<<"$s")" -gt 0 ]
	[ "$(jq -r .bundle <<<"$s")" = "$BUNDLE" ]
	[ "$(jq -r .rootfs <<<"$s")" = "$BUNDLE/rootfs" ]
	[ "$(jq -r '.annotations["org.example.key"]' <<<"$s")" = value ]
	[[ $(jq -r .created <<<"$s") =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2} ]]
	jq -e '.owner | type == "string"' <<<"$s"
}

@test "create: the process does not run before start, and runs once started" {
	add_shared_mount
	set_args sh -c 'echo ran >> /shared/marker'
	run_bg create "$ID"
	check_status 0
	sleep 0.3
	[ ! -e "$TEST_DIR/shared/marker" ]
	hutch start "$ID"
	wait_for_state "$ID" stopped
	[ "$(cat "$TEST_DIR/shared/marker")" = ran ]
}

@test "start: returns at once, without waiting for the process" {
	set_args sleep 100
	run_bg create "$ID"
	check_status 0
	local t0 t1
	t0=$(date +%s%N)
	run hutch start "$ID"
	t1=$(date +%s%N)
	check_status 0
	[ $(((t1 - t0) / 1000000)) -lt 2000 ]
	[ "$(state_field "$ID" .status)" = running ]
}

@test "create: the process writes to create's stdout and stderr" {
	set_args sh -c 'echo to-stdout; echo to-stderr >&2'
	run_bg create "$ID"
	check_status 0
	hutch start "$ID"
	wait_for_state "$ID" stopped
	ctr_output "$ID" | grep -qx to-stdout
	ctr_output "$ID" | grep -qx to-stderr
}

@test "state: a process that exits by itself is stopped" {
	run_bg create "$ID"
	check_status 0
	hutch start "$ID"
	wait_for_state "$ID" stopped
	hutch delete "$ID"
}

@test "start: fails for a running, a stopped and a missing container" {
	set_args sleep 100
	run_bg create "$ID"
	hutch start "$ID"
	run hutch start "$ID"
	[ "$status" -eq 1 ]
	hutch kill "$ID" KILL
	wait_for_state "$ID" stopped
	run hutch start "$ID"
	[ "$status" -eq 1 ]
	run hutch start nonexistent
	[ "$status" -eq 1 ]
	[[ $output == *nonexistent* ]]
}

@test "create --bundle, -b and --bundle=DIR from another directory" {
	cd /
	set_cgroup a
	run_bg create --bundle "$BUNDLE" "$ID-a"
	check_status 0
	set_cgroup b
	run_bg create -b "$BUNDLE" "$ID-b"
	check_status 0
	[ "$(state_field "$ID-b" .bundle)" = "$BUNDLE" ]
	hutch delete --force "$ID-a"
	hutch delete --force "$ID-b"
	run_bg create --bundle="$BUNDLE" "$ID-c"
	check_status 0
}

@test "create ID --bundle DIR and run ID -d: flags after the id, as runc's parser allows" {
	make_bundle "$TEST_DIR/b2"
	update_config_in "$TEST_DIR/b2" '.process.args = ["sleep", "100"]'
	cd "$TEST_DIR"
	run_bg create "$ID" --bundle "$TEST_DIR/b2" --pid-file "$TEST_DIR/pid"
	check_status 0
	[ "$(state_field "$ID" .bundle)" = "$TEST_DIR/b2" ]
	[ "$(state_field "$ID" .pid)" = "$(cat "$TEST_DIR/pid")" ]
	hutch delete -f "$ID"
	run_bg run "$ID-2" -d -b "$TEST_DIR/b2"
	check_status 0
	[ "$(state_field "$ID-2" .status)" = running ]
}

@test "create --config FILE and run -f FILE: FILE relative to the cwd, the rootfs to the bundle" {
	set_args sleep 100
	mkdir "$TEST_DIR/elsewhere"
	jq '.process.env += ["FROM=alt"]' "$BUNDLE/config.json" >"$TEST_DIR/elsewhere/alt.json"
	jq '.process.args = ["echo", "from-alt"]' "$BUNDLE/config.json" >"$TEST_DIR/elsewhere/echo.json"
	echo '{"not": "a config"}' >"$BUNDLE/config.json" # what a create that read it would refuse
	cd "$TEST_DIR/elsewhere"
	run_bg create --bundle "$BUNDLE" --config alt.json "$ID"
	check_status 0
	[ "$(state_field "$ID" .rootfs)" = "$BUNDLE/rootfs" ]
	# exec, start and delete read the config as create did, even once the file is gone
	rm alt.json
	run hutch exec "$ID" sh -c 'echo "$FROM"'
	check_status 0
	[ "$output" = alt ]
	run hutch start "$ID"
	check_status 0
	run hutch delete -f "$ID"
	check_status 0
	run hutch run -b "$BUNDLE" -f echo.json "$ID"
	check_status 0
	[ "$output" = from-alt ]
	run hutch run -b "$BUNDLE" --config=no-such.json "$ID"
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ $output == *no-such.json* ]]
	assert_no_leftovers
}

@test "create --no-pivot: the process still sees only the rootfs" {
	set_args sh -c 'ls /; cat /etc/passwd | head -n1'
	run hutch run --no-pivot "$ID"
	check_status 0
	[[ $output == *bin* ]]
	[[ $output == *root:x:0:0:root:/root:/bin/sh* ]]
	[[ $output != *"$(basename "$TEST_DIR")"* ]]
}

@test "create and exec: a new session keyring, the process user's; --no-new-keyring keeps ours" {
	install_static_helper keyring
	update_config '.process.user = {uid: 1000, gid: 1000}'
	set_args /bin/keyring
	local kr
	kr=$(helper_bin keyring)
	# ours, then the container's with --no-new-keyring, then without
	run "$kr" --join sh -c '"$0"; "$1" --root "$2" run --no-new-keyring "$3-a" &&
		"$1" --root "$2" run "$3-b"' "$kr" "$HUTCH" "$HUTCH_ROOT" "$ID"
	check_status 0
	mapfile -t lines <<<"$output"
	[ "${#lines[@]}" -eq 3 ]
	[ "${lines[1]}" = "${lines[0]}" ] # inherited: the same keyring, root's
	[ "${lines[2]% *}" != "${lines[0]% *}" ] && [ "${lines[2]#* }" = 1000 ]
	set_args sleep 100
	run_bg create "$ID"
	check_status 0
	hutch start "$ID"
	run hutch exec -u 0:0 "$ID" /bin/keyring
	check_status 0
	[ "${output#* }" = 0 ]
	local exec_root=${output% *}
	run hutch exec -u 1000:1000 "$ID" /bin/keyring
	check_status 0
	[ "${output#* }" = 1000 ] && [ "${output% *}" != "$exec_root" ] # a new one each time
}

@test "create: two containers from two bundles at once" {
	make_bundle "$TEST_DIR/b2"
	set_args sleep 100
	update_config_in "$TEST_DIR/b2" '.process.args = ["sleep", "100"]'
	run_bg create "$ID-1"
	check_status 0
	run_bg create --bundle "$TEST_DIR/b2" "$ID-2"
	check_status 0
	hutch start "$ID-1"
	[ "$(state_field "$ID-1" .status)" = running ]
	[ "$(state_field "$ID-2" .status)" = created ]
	[ "$(state_field "$ID-2" .bundle)" = "$TEST_DIR/b2" ]
	[ "$(state_field "$ID-1" .pid)" != "$(state_field "$ID-2" .pid)" ]
}
