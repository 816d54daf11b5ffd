#!/usr/bin/env bats
# hutch list: table, -q and json formats, sorted by id.

load ../helpers

@test "list: nothing to list" {
	run hutch list
	check_status 0
	[ "${#lines[@]}" -le 1 ]
	[[ ${lines[0]:-ID} == ID* ]]
	run hutch list -q
	check_status 0
	[ -z "$output" ]
	run hutch list --format json
	check_status 0
	jq -e 'length == 0' <<<"$output"
}

@test "list: a root that does not exist yet lists nothing" {
	run "$HUTCH" --root "$TEST_DIR/nonexistent" list -q
	check_status 0
	[ -z "$output" ]
}

@test "list: table, -q, --format json and -f json" {
	set_args sleep 100
	make_bundle "$TEST_DIR/b2"
	update_config_in "$TEST_DIR/b2" '.process.args = ["sleep", "100"]'
	run_bg create "$ID-created"
	check_status 0
	run_bg run -d --bundle "$TEST_DIR/b2" "$ID-running"
	check_status 0

	run hutch list -q
	check_status 0
	[ "$(sort <<<"$output" | tr '\n' ' ')" = "$ID-created $ID-running " ]

	run hutch list
	check_status 0
	[[ ${lines[0]} == ID* ]]
	[[ ${lines[0]} == *STATUS* ]]
	grep -E "^$ID-created +[0-9]+ +created +$BUNDLE " <<<"$output"
	grep -E "^$ID-running +[0-9]+ +running +$TEST_DIR/b2 " <<<"$output"

	local f
	for f in "--format json" "-f json" "--format=json"; do
		# shellcheck disable=SC2086 # split on purpose
		run hutch list $f
		check_status 0
		jq -e 'length == 2' <<<"$output"
		jq -e --arg id "$ID-created" --arg b "$BUNDLE" --argjson pid "$(state_field "$ID-created" .pid)" \
			'.[] | select(.id == $id) | .status == "created" and .bundle == $b and .pid == $pid' <<<"$output"
		jq -e --arg id "$ID-running" '.[] | select(.id == $id) | .status == "running"
			and (.created | type == "string") and (.owner | type == "string")' <<<"$output"
	done
}

@test "list: an unknown format fails" {
	run hutch list --format yaml
	[ "$status" -eq 1 ]
	[[ $output == *yaml* ]]
}

@test "list: sorted by id in every format, as runc" {
	local ids=(m z a 0 B y-1 y) id
	for id in "${ids[@]}"; do
		make_bundle "$TEST_DIR/b-$id"
		run_bg create --bundle "$TEST_DIR/b-$id" "$ID-$id"
		check_status 0
	done
	local want
	want=$(printf "$ID-%s\n" "${ids[@]}" | LC_ALL=C sort)
	run hutch list -q
	check_status 0
	[ "$output" = "$want" ]
	run hutch list
	check_status 0
	[ "$(tail -n +2 <<<"$output" | awk '{print $1}')" = "$want" ]
	run hutch list --format json
	check_status 0
	[ "$(jq -r '.[].id' <<<"$output")" = "$want" ]
}
