#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
#
# `hutch sandbox --image NAME` runs a store image as its config says, as `docker run` reads
# it: Env beneath --env, WorkingDir unless --cwd (made when the image lacks it), Entrypoint +
# Cmd with `-- CMD` replacing Cmd and --entrypoint replacing both, and User unless --user,
# except that a root User keeps the non-root default. Images are busybox OCI layouts that
# umoci gives a config; the agent prints what it was started with.

load ../helpers
load ../sandbox-helpers
bats_require_minimum_version 1.5.0

setup_file() {
	sb_images_setup
}

setup() {
	sb_setup
	command -v umoci >/dev/null || skip "umoci missing (apt-get install umoci)"
	export HUTCH_STORE=$TEST_DIR/store
	R=$TEST_DIR/r.json
}

# oci_image NAME:TAG [UMOCI CONFIG FLAGS...]: a busybox image with /opt/venv/bin/agent (which
# prints its argv, cwd, ids and some of its environment) and a passwd entry for "agent"
# (2345:3456), given those config flags, imported into the store.
oci_image() {
	local ref=$1 u=$TEST_DIR/oci-${1//[:\/]/-} b
	shift
	b=$u.unpacked
	umoci init --layout "$u"
	umoci new --image "$u:x"
	umoci unpack --image "$u:x" "$b" >/dev/null
	cp -a "$(rootfs_template)/." "$b/rootfs/"
	mkdir -p "$b/rootfs/opt/venv/bin" "$b/rootfs/workspace"
	cat >"$b/rootfs/opt/venv/bin/agent" <<-'EOF'
		#!/bin/sh
		echo "argv:$*"
		echo "cwd:$(pwd)"
		echo "ids:$(id -u):$(id -g)"
		echo "FOO:${FOO-unset}"
		echo "PATH:$PATH"
		echo "HOME:$HOME"
		echo "TMPDIR:$TMPDIR"
	EOF
	chmod 755 "$b/rootfs/opt/venv/bin/agent"
	echo "agent:x:2345:3456::/home/agent:/bin/sh" >>"$b/rootfs/etc/passwd"
	umoci repack --image "$u:x" "$b"
	[ $# -eq 0 ] || umoci config --image "$u:x" "$@"
	rm -rf "$b"
	timeout 60 "$HUTCH" image import "$u" --name "$ref" >/dev/null
}

# The config of the issue's agent image: a venv's PATH, an entrypoint, a Cmd, a WorkingDir
# the image lacks, and a non-root numeric User.
agent_image() {
	oci_image agent:1 --config.env FOO=x --config.env PATH=/opt/venv/bin:/usr/bin:/bin \
		--config.workingdir /srv --config.entrypoint /opt/venv/bin/agent \
		--config.cmd default --config.cmd args --config.user 1234
}

line() { # line KEY: the agent's KEY:value line of $output
	grep "^$1:" <<<"$output" | head -1 | cut -d: -f2-
}

@test "image config: no command runs Entrypoint + Cmd with the image's Env, WorkingDir and User" {
	agent_image
	run sb_raw --image agent:1 --report "$R"
	check_status 0
	[ "$(line argv)" = "default args" ]
	[ "$(line cwd)" = /srv ]	    # made in the throw-away layer: the image has none
	[ "$(line ids)" = 1234:0 ]	    # a number without a group: gid 0, as docker and runc
	[ "$(line FOO)" = x ]
	[ "$(line PATH)" = /opt/venv/bin:/usr/bin:/bin ] # the image's PATH replaces hutch's
	[ "$(line HOME)" = /tmp ]	    # hutch's defaults where the image sets none
	[ "$(line TMPDIR)" = /tmp ]
	jq -e '.isolation.user.uid == 1234 and .isolation.user.gid == 0 and .image.name == "agent:1"' "$R"
}

@test "image config: -- CMD replaces Cmd; --entrypoint replaces both; --entrypoint '' none" {
	agent_image
	run sb_raw --image agent:1 -- one two
	check_status 0
	[ "$(line argv)" = "one two" ]
	run sb_raw --image agent:1 --entrypoint /bin/echo -- hi there
	check_status 0
	[ "$output" = "hi there" ] # the image's Cmd went with its Entrypoint
	run sb_raw --image agent:1 --entrypoint /bin/pwd
	check_status 0
	[ "$output" = /srv ]
	run sb_raw --image agent:1 --entrypoint '' -- /bin/echo bare
	check_status 0
	[ "$output" = bare ]
	run sb_raw --image agent:1 --entrypoint '' --report "$R"
	check_status 125
	[[ "$output" == *"no command"* ]]
	jq -e '.failure == "bad_option"' "$R"
}

@test "image config: --env, --cwd and --user win over the image's; --workspace gives way to WorkingDir" {
	agent_image
	mkdir -m 755 "$TEST_DIR/ws"
	chown 1000:1000 "$TEST_DIR/ws"
	run sb_raw --image agent:1 -e FOO=mine -e PATH=/bin --cwd /tmp -u 42:43
	check_status 0
	[ "$(line FOO)" = mine ]
	[ "$(line PATH)" = /bin ]
	[ "$(line cwd)" = /tmp ]
	[ "$(line ids)" = 42:43 ]
	# The workspace default applies only where the image names no WorkingDir.
	run sb_raw --image agent:1 --workspace "$TEST_DIR/ws"
	check_status 0
	[ "$(line cwd)" = /srv ]
	[ "$(line HOME)" = /workspace ]
	oci_image plain:1 --config.entrypoint /opt/venv/bin/agent
	run sb_raw --image plain:1 --workspace "$TEST_DIR/ws"
	check_status 0
	[ "$(line cwd)" = /workspace ]
	[ "$(line ids)" = 1000:1000 ] # no User: the default
	[ "$(line PATH)" = /usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin ]
}

@test "image config: a named User from the image's passwd; root's keeps the default; --as-root is root" {
	oci_image named:1 --config.entrypoint /opt/venv/bin/agent --config.user agent
	run sb_raw --image named:1
	check_status 0
	[ "$(line ids)" = 2345:3456 ]
	oci_image rooted:1 --config.entrypoint /opt/venv/bin/agent --config.user root
	run sb_raw --image rooted:1
	check_status 0
	[ "$(line ids)" = 1000:1000 ] # root inside is the caller's decision, not the image's
	run sb_raw --image rooted:1 --as-root
	check_status 0
	[ "$(line ids)" = 0:0 ]
	oci_image zero:1 --config.entrypoint /opt/venv/bin/agent --config.user 0:0
	run sb_raw --image zero:1
	check_status 0
	[ "$(line ids)" = 1000:1000 ]
}

@test "image config: a User the image's passwd lacks is one error line naming it, and nothing is left" {
	oci_image ghost:1 --config.entrypoint /opt/venv/bin/agent --config.user ghost
	run sb_raw --image ghost:1 --report "$R"
	check_status 125
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == *"config.User"*"ghost"* ]]
	jq -e '.failure == "setup"' "$R"
}

@test "image config: an image with neither Entrypoint nor Cmd still needs a command" {
	oci_image bare:1
	run sb_raw --image bare:1 --report "$R"
	check_status 125
	[[ "$output" == *"no command"*"bare:1"* ]]
	jq -e '.failure == "bad_option"' "$R"
	run sb_raw --image bare:1 -- echo ok
	check_status 0
	[ "$output" = ok ]
}

@test "image config: an image build's steps run as RUN does, not through the base's Entrypoint" {
	agent_image
	run -0 timeout 120 "$HUTCH" image build --from agent:1 --run 'echo built >/built' --tag built
	local tag=${lines[-1]}
	run sb_raw --image "$tag" --entrypoint /bin/cat -- /built
	check_status 0
	[ "$output" = built ]
}
