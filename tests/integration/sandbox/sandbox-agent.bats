#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
#
# The migration of issue 21, retraced: a Python agent that reads JSON on stdin and writes JSON
# on stdout, in a debootstrap'd Debian with a venv that `hutch image build` made (its PATH, an
# Entrypoint found through it, a Cmd, a WorkingDir and a non-root User), run with `hutch
# sandbox --image` and no command. The values expected are docker run's, apart from the
# sandbox's documented defaults (HOME, TMPDIR; docker adds HOSTNAME); tests/clients/docker.bats
# compares the two directly. The image is built once per machine (debootstrap.bash); without
# the Debian mirror the tests skip, unless HUTCH_IT_REQUIRE_DEBOOTSTRAP=1 (CI).

load ../helpers
load ../sandbox-helpers
load ../debootstrap
bats_require_minimum_version 1.5.0

setup_file() {
	sb_images_setup
	# Minutes the first time on a machine (debootstrap, apt-get, the venv); then a cache hit.
	AGENT=$(agent_image) || AGENT=
	export AGENT
}

setup() {
	sb_setup
	if [ -z "$AGENT" ]; then
		[ "${HUTCH_IT_REQUIRE_DEBOOTSTRAP:-0}" != 1 ] || return 1
		skip "no agent image (needs debootstrap and the Debian mirror)"
	fi
	export HUTCH_STORE=${AGENT% *}
	REF=${AGENT#* }
	R=$TEST_DIR/r.json
}

@test "agent image: no command runs its Entrypoint + Cmd, the venv's python, in /srv, as 1234" {
	run sb_raw --image "$REF" --report "$R" <<<'{"task": 1}'
	check_status 0
	echo "$output" >&2
	jq -e --arg path "$AGENT_PATH" '
		.argv == ["/srv/agent.py", "--mode", "default"]
		and .executable == "/opt/venv/bin/python3" and .prefix == "/opt/venv"
		and .cwd == "/srv" and .uid == 1234 and .gid == 0
		and .env.PATH == $path and .env.FOO == "x" and .env.VIRTUAL_ENV == "/opt/venv"
		and .env.LANG == "C.UTF-8" and .request == {task: 1}' <<<"$output"
	# The image's Env and the sandbox's defaults, and nothing of the host's.
	jq -e '.env | keys == ["FOO", "HOME", "LANG", "PATH", "TMPDIR", "VIRTUAL_ENV"]
		and .HOME == "/tmp" and .TMPDIR == "/tmp"' <<<"$output"
	jq -e --arg ref "$REF" '.image.name == $ref and (.image.digest | startswith("sha256:"))
		and .isolation.user.uid == 1234' "$R"
}

@test "agent image: -- ARGS replaces the Cmd, --env and --cwd win, --entrypoint replaces it" {
	mkdir -m 755 "$TEST_DIR/ws"
	chown 1000:1000 "$TEST_DIR/ws"
	run sb_raw --image "$REF" -e FOO=y --workspace "$TEST_DIR/ws" -- --mode task <<<'[]'
	check_status 0
	jq -e '.argv == ["/srv/agent.py", "--mode", "task"] and .env.FOO == "y"
		and .cwd == "/srv" and .env.HOME == "/workspace"' <<<"$output"
	run sb_raw --image "$REF" --cwd /tmp --entrypoint python3 -- -c \
		'import os, sys; print(os.getcwd(), sys.prefix, os.getuid())'
	check_status 0
	[ "$output" = "/tmp /opt/venv 1234" ]
}
