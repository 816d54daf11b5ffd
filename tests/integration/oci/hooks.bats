#!/usr/bin/env bats
# Hooks: every kind runs once with the state on stdin, with its args and env; a hook that
# times out or fails makes create fail and leaves nothing behind; poststop failures don't
# fail delete.

load ../helpers

HOOK_ENV='["PATH=/usr/sbin:/usr/bin:/sbin:/bin"]'

setup() {
	setup_bundle
	HOOKS=$TEST_DIR/hooks
	mkdir -m 1777 "$HOOKS" "$BUNDLE/rootfs/hooks"
	update_config '.mounts += [{destination: "/hooks", type: "bind", source: $h, options: ["rbind", "rw"]}]' \
		--arg h "$HOOKS"
	# Host-side hooks: save stdin (appended, to count the runs), args and env.
	cat >"$TEST_DIR/hook.sh" <<-EOF
		#!/bin/sh
		kind=\$1
		cat >> "$HOOKS/\$kind.json"
		echo "\$#:\$*" > "$HOOKS/\$kind.args"
		echo "\${HOOK_VAR:-unset}" > "$HOOKS/\$kind.env"
	EOF
	chmod 755 "$TEST_DIR/hook.sh"
}

# The hook for KIND: the host script, except for the hooks that run in the container's
# namespaces: createContainer (after or before pivot_root: both places are tried) and
# startContainer (its path resolves inside the container).
hook_json() {
	local kind=$1 env
	env=$(jq -c --arg t "HUTCH_IT_TAG=$TAG" '. + ["HOOK_VAR=set", $t]' <<<"$HOOK_ENV")
	case $kind in
	createContainer)
		jq -nc --arg k "$kind" --arg h "$HOOKS" --argjson env "$env" '{path: "/bin/sh",
			args: ["sh", "-c", "cat >> /hooks/\($k).json 2>/dev/null || cat >> \($h)/\($k).json"],
			env: $env}'
		;;
	startContainer)
		jq -nc --arg k "$kind" --argjson env "$env" \
			'{path: "/bin/sh", args: ["sh", "-c", "cat >> /hooks/\($k).json"], env: $env}'
		;;
	*)
		jq -nc --arg k "$kind" --arg p "$TEST_DIR/hook.sh" --argjson env "$env" \
			'{path: $p, args: ["hook.sh", $k, "an arg"], env: $env}'
		;;
	esac
}

set_hook() {
	update_config '.hooks[$k] = [$h]' --arg k "$1" --argjson h "$2"
}

# check_hook KIND STATUS PID: ran exactly once, with the container's state on stdin.
check_hook() {
	local f=$HOOKS/$1.json
	echo "checking $1: $(cat "$f" 2>/dev/null)"
	[ -s "$f" ]
	[ "$(jq -s length "$f")" -eq 1 ]
	[ "$(jq -r .id "$f")" = "$ID" ]
	[[ " $2 " == *" $(jq -r .status "$f") "* ]]
	[ "$(jq -r .bundle "$f")" = "$BUNDLE" ]
	[[ $(jq -r .ociVersion "$f") == 1.* ]]
	[ -z "$3" ] || [ "$(jq -r .pid "$f")" = "$3" ]
}

@test "hooks: every kind runs once, in order, with the state on stdin" {
	local k
	for k in createRuntime createContainer prestart startContainer poststart poststop; do
		set_hook "$k" "$(hook_json "$k")"
	done
	set_args sleep 100
	run_bg create "$ID"
	check_status 0
	local pid
	pid=$(state_field "$ID" .pid)
	check_hook createRuntime "creating created" "$pid"
	check_hook createContainer "creating created" "$pid"
	check_hook prestart "creating created" "$pid"
	[ ! -e "$HOOKS/startContainer.json" ]
	[ ! -e "$HOOKS/poststart.json" ]

	hutch start "$ID"
	check_hook startContainer "creating created" "$pid"
	check_hook poststart running "$pid"
	[ ! -e "$HOOKS/poststop.json" ]

	hutch kill "$ID" KILL
	wait_for_state "$ID" stopped
	hutch delete "$ID"
	check_hook poststop stopped ""
}

@test "hooks: args and env reach the hook" {
	set_hook prestart "$(hook_json prestart)"
	run hutch run "$ID"
	check_status 0
	# args[0] is the name the hook sees as $0
	[ "$(cat "$HOOKS/prestart.args")" = "2:prestart an arg" ]
	[ "$(cat "$HOOKS/prestart.env")" = set ]
}

@test "hooks: a hook past its timeout is killed and create fails, leaving nothing" {
	local h
	h=$(jq -nc --arg d "$HOOKS" --arg t "HUTCH_IT_TAG=$TAG" '{path: "/bin/sh",
		args: ["sh", "-c", "echo $$ > \($d)/slow.pid; exec sleep 30"], timeout: 1,
		env: ["PATH=/usr/bin:/bin", $t]}')
	set_hook createRuntime "$h"
	local t0 t1
	t0=$(date +%s)
	run_bg create "$ID"
	t1=$(date +%s)
	[ "$status" -eq 1 ]
	[[ ${output,,} == *"timed out"* || ${output,,} == *timeout* ]]
	[ $((t1 - t0)) -lt 10 ]
	pid_gone "$(cat "$HOOKS/slow.pid")"
	assert_no_leftovers
}

@test "hooks: a failing createRuntime, createContainer or prestart hook fails create, leaving nothing" {
	local k h
	h=$(jq -nc --arg t "HUTCH_IT_TAG=$TAG" '{path: "/bin/false", args: ["false"], env: [$t]}')
	for k in createRuntime createContainer prestart; do
		cp "$BUNDLE/config.json" "$BUNDLE/config.json.orig"
		set_hook "$k" "$h"
		run_bg create "$ID-$k"
		echo "$k: $status: $output"
		[ "$status" -eq 1 ]
		[[ $output == *"$k"* ]]
		assert_no_leftovers
		mv "$BUNDLE/config.json.orig" "$BUNDLE/config.json"
	done
}

@test "hooks: a missing hook binary fails create, leaving nothing" {
	set_hook createRuntime '{"path": "/nonexistent/hook"}'
	run_bg create "$ID"
	[ "$status" -eq 1 ]
	[[ $output == */nonexistent/hook* ]]
	assert_no_leftovers
}

@test "hooks: a failing poststop hook does not fail delete" {
	set_hook poststop '{"path": "/bin/false", "args": ["false"]}'
	run hutch run --keep "$ID"
	check_status 0
	run hutch delete "$ID"
	check_status 0
	run hutch state "$ID"
	[ "$status" -eq 1 ]
}

@test "hooks: prestart's state says created, createRuntime's creating (runtime-tools' hooks_stdin)" {
	set_hook prestart "$(hook_json prestart)"
	update_config '.hooks.createRuntime = [$h]' --argjson h "$(hook_json createRuntime)"
	run_bg create "$ID"
	check_status 0
	[ "$(jq -r .status "$HOOKS/prestart.json")" = created ]
	[ "$(jq -r .status "$HOOKS/createRuntime.json")" = creating ]
}

@test "hooks: without env a host hook gets hutch's environment, with env [] none, as runc" {
	cat >"$TEST_DIR/env-hook.sh" <<-EOF
		#!/bin/sh
		env > "$HOOKS/\$1.envdump"
	EOF
	chmod 755 "$TEST_DIR/env-hook.sh"
	update_config '.hooks.prestart = [{path: $p, args: ["h", "noenv"]}]
		| .hooks.poststart = [{path: $p, args: ["h", "poststart"]}]
		| .hooks.createRuntime = [{path: $p, args: ["h", "emptyenv"], env: []}]' \
		--arg p "$TEST_DIR/env-hook.sh"
	export HUTCH_IT_RUNTIME_VAR=from-hutch
	run hutch run "$ID"
	check_status 0
	grep -qx HUTCH_IT_RUNTIME_VAR=from-hutch "$HOOKS/noenv.envdump"
	grep -qx HUTCH_IT_RUNTIME_VAR=from-hutch "$HOOKS/poststart.envdump"
	! grep -q HUTCH_IT_RUNTIME_VAR "$HOOKS/emptyenv.envdump"
}

@test "hooks: createContainer runs in the rootfs and startContainer in process.cwd, both with the process's env" {
	local dump='{ pwd; env; } > /hooks/$0.out 2>/dev/null || { pwd; env; } > '"$HOOKS"'/$0.out'
	update_config '.hooks.createContainer = [{path: "/bin/sh", args: ["sh", "-c", $d, "cc"]}]
		| .hooks.startContainer = [{path: "/bin/sh", args: ["sh", "-c", $d, "sc"]}]
		| .process.cwd = "/tmp" | .process.env += ["FROM_PROCESS=1"]' --arg d "$dump"
	export HUTCH_IT_RUNTIME_VAR=from-hutch
	run hutch run "$ID"
	check_status 0
	cat "$HOOKS/cc.out" "$HOOKS/sc.out"
	[ "$(head -1 "$HOOKS/cc.out")" = "$BUNDLE/rootfs" ]
	[ "$(head -1 "$HOOKS/sc.out")" = /tmp ]
	grep -qx FROM_PROCESS=1 "$HOOKS/cc.out"
	grep -qx FROM_PROCESS=1 "$HOOKS/sc.out"
	! grep -q HUTCH_IT_RUNTIME_VAR "$HOOKS/cc.out" "$HOOKS/sc.out"
}
