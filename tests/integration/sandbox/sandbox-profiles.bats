#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
#
# The example profiles of the two agent platforms (docs/examples/), each run as its platform
# runs it, with only the host paths (image, workspace, report, lock) rewritten: a per-message
# agent container (stdin JSON in, stdout JSON out) and a task's shell session (a named
# sandbox that commands are exec'd into). From inside: HOME is the workspace, the cgroup has
# the memory limit, eth0 is on the bridge; the report has the timeout. hutch runs in a network
# namespace the test makes, as in bridge.bats (net-helpers.bash). Every example validates
# against docs/sandbox-profile.schema.json.

load ../helpers
load ../sandbox-helpers
load ../net-helpers
bats_require_minimum_version 1.5.0

EXAMPLES=$INTEGRATION_ROOT/../../docs/examples

setup_file() {
	sb_images_setup
}

setup() {
	sb_setup
	net_setup
	LOCK=it-$TAG
	R=$TEST_DIR/r.json
	WS=$TEST_DIR/ws
	mkdir "$WS"
	chown 4242:4242 "$WS"
	chmod 755 "$TEST_DIR"
}

teardown() {
	local rc=0
	sb_teardown || rc=1
	net_teardown || rc=1
	return $rc
}

# example NAME: docs/examples/NAME.json with this test's image, workspace, report and lock (a
# key the example has), at $TEST_DIR/NAME.json.
example() {
	jq --arg i "$IMAGE" --arg w "$WS" --arg r "$R" --arg l "$LOCK" \
		'.image = $i | .workspace = $w | .report = $r | if has("lock") then .lock = $l else . end' \
		"$EXAMPLES/$1.json" >"$TEST_DIR/$1.json"
	echo "$TEST_DIR/$1.json"
}

# sbn ARGS...: hutch sandbox ARGS in the test's "host" netns, its pid in $SB_PIDS (as sb_raw).
sbn() {
	# shellcheck disable=SC2016 # expanded by that sh
	timeout -k 5 "$HUTCH_CMD_TIMEOUT" nsenter --net="/run/netns/$HOSTNS" sh -c \
		'echo $$ >>"$0"; exec "$@"' "$SB_PIDS" "$HUTCH" sandbox "$@"
}

# What the settings are, from inside: HOME, the cgroup's memory limit, eth0's address.
# shellcheck disable=SC2016 # expanded in the sandbox
PROBE='echo "home=$HOME"
if [ -e /sys/fs/cgroup/cgroup.controllers ]; then m=$(cat /sys/fs/cgroup/memory.max)
else m=$(cat /sys/fs/cgroup/memory/memory.limit_in_bytes); fi
echo "mem=$m"
ip -4 -o addr show eth0 | awk "{ print \"eth0=\" \$4 }"
ip route | grep "^default"'

@test "profiles: every example profile is valid against the profile schema" {
	local f
	for f in "$EXAMPLES"/*.json; do
		python3 - "$f" "$EXAMPLES/../sandbox-profile.schema.json" <<-'PY'
			import json, sys
			import jsonschema
			profile, schema = (json.load(open(p)) for p in sys.argv[1:3])
			errors = list(jsonschema.Draft202012Validator(schema).iter_errors(profile))
			for e in errors:
			    print(f"{sys.argv[1]}: {e.message}", file=sys.stderr)
			sys.exit(1 if errors else 0)
		PY
	done
}

@test "profiles: the per-message agent container: JSON through stdin and stdout, HOME the workspace, 512m, the bridge, 300 s" {
	local p
	p=$(example agent-message)
	run -0 sbn --profile "$p" -e "HUTCH_IT_TAG=$TAG" -- sh -c "cat; $PROBE" <<<'{"task": 1}'
	[ "${lines[0]}" = '{"task": 1}' ]
	[ "${lines[1]}" = home=/workspace ]
	[ "${lines[2]}" = mem=536870912 ]
	[[ ${lines[3]} == eth0=10.89.0.*/24 ]]
	[[ ${lines[4]} == "default via 10.89.0.1 dev eth0"* ]]
	check_report "$R"
	jq -e '.failure == null and .limits_hit == [] and .isolation.network == "bridge"
		and .isolation.limits.timeout_s == 300 and .isolation.limits.memory_bytes == 536870912' \
		"$R"
	nothing_left
}

@test "profiles: the task shell session: a named sandbox whose execs get HOME the workspace, its limits, the bridge; the report its long timeout" {
	local p n=s-$TAG sup
	p=$(example task-session)
	run -0 sbn --name "$n" --profile "$p" -e "HUTCH_IT_TAG=$TAG" # detached by the profile
	[ "$output" = "$n" ]
	sup=$(timeout 10 "$HUTCH" sandbox ls --format json |
		jq -r --arg n "$n" '.[] | select(.name == $n) | .id | ltrimstr("sb-")')
	[ -n "$sup" ] && echo "$sup" >>"$SB_PIDS"
	run -0 timeout 20 "$HUTCH" sandbox exec "$n" -- sh -c "$PROBE; echo kept >\$HOME/f"
	[ "${lines[0]}" = home=/workspace ]
	[ "${lines[1]}" = mem=2147483648 ]
	[[ ${lines[2]} == eth0=10.89.0.*/24 ]]
	[[ ${lines[3]} == "default via 10.89.0.1 dev eth0"* ]]
	# The next command of the session finds it, in the host's workspace too.
	run -0 timeout 20 "$HUTCH" sandbox exec "$n" -- sh -c 'cd && cat f'
	[ "$output" = kept ]
	[ "$(cat "$WS/f")" = kept ]
	run -0 timeout 20 "$HUTCH" sandbox stop "$n"
	local tries=100
	while [ ! -s "$R" ] && [ $tries -gt 0 ]; do
		sleep 0.05
		tries=$((tries - 1))
	done
	check_report "$R"
	jq -e '.isolation.network == "bridge" and .isolation.limits.timeout_s == 28800
		and .isolation.limits.memory_bytes == 2147483648 and .isolation.limits.pids == 1024
		and .isolation.limits.cpus == 2' "$R"
	nothing_left
}
