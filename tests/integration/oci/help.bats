#!/usr/bin/env bats
# --help, help VERB, VERB --help, --version, and what an unknown verb or option does.

ROOTLESS_OK=1 # hutch needs no privilege for these
load ../helpers

setup() {
	setup_tmp
}

VERBS=(spec create start run state kill delete list features)

@test "--help: usage with every verb" {
	run hutch --help
	check_status 0
	[[ ${output,,} == *usage* ]]
	local v
	for v in "${VERBS[@]}"; do
		[[ $output == *"$v"* ]]
	done
	run hutch help
	check_status 0
	[[ ${output,,} == *usage* ]]
}

@test "help VERB and VERB --help: for every verb" {
	local v
	for v in "${VERBS[@]}"; do
		run hutch help "$v"
		check_status 0
		[[ $output == *"$v"* ]]
		local by_help=$output
		run hutch "$v" --help
		check_status 0
		[ "$output" = "$by_help" ]
	done
}

@test "help: the options of create and run" {
	run hutch help create
	local o
	for o in --bundle --pid-file --console-socket --preserve-fds --no-pivot --no-new-keyring; do
		[[ $output == *"$o"* ]]
	done
	run hutch help run
	for o in --bundle --pid-file --console-socket --detach --keep; do
		[[ $output == *"$o"* ]]
	done
}

@test "--version: prints the version" {
	run hutch --version
	check_status 0
	[[ ${lines[0]} =~ ^hutch\ version\ [0-9]+\.[0-9]+ ]]
}

@test "an unknown verb fails" {
	run hutch frobnicate
	[ "$status" -ne 0 ]
	[[ $output == *frobnicate* ]]
	run hutch help frobnicate
	[ "$status" -ne 0 ]
}

@test "an unknown or incomplete option fails" {
	run hutch --frobnicate list
	[ "$status" -ne 0 ]
	[[ $output == *frobnicate* ]]
	run hutch list --frobnicate
	[ "$status" -ne 0 ]
	[[ $output == *frobnicate* ]]
	run hutch create --bundle
	[ "$status" -ne 0 ]
	run "$HUTCH" --root
	[ "$status" -ne 0 ]
}

@test "no verb: usage and a failure" {
	run hutch
	[ "$status" -ne 0 ]
	[[ ${output,,} == *usage* ]]
}

@test "a verb without its container id fails" {
	for v in create start run state kill delete; do
		run hutch "$v"
		[ "$status" -ne 0 ]
	done
}
