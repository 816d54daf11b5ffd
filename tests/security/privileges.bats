#!/usr/bin/env bats
# Privileges a container process must not have by default.

load ../integration/helpers

@test "privileges: noNewPrivileges is on by default" {
	set_args grep ^NoNewPrivs: /proc/self/status
	run_ok
	[ "$(echo $output)" = "NoNewPrivs: 1" ]
}
