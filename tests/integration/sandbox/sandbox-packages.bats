#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
#
# --as-root is root inside a user namespace: apt-get installs a local .deb into a
# debootstrap'd Debian's throw-away layer, with the image's own system users and its setuid
# file (dpkg sets the bit, which root inside may), while every id inside is a subordinate one
# on the host and the image itself is not changed; the walk that clears setuid bits when the
# sandbox ends looks at the workspace only, never at the layer.
# The image is made once per machine (debootstrap.bash); without the Debian mirror the tests
# skip, unless HUTCH_IT_REQUIRE_DEBOOTSTRAP=1 (CI), where they fail.

load ../helpers
load ../sandbox-helpers
load ../named-helpers
load ../debootstrap
bats_require_minimum_version 1.5.0

setup() {
	sb_setup
	IMAGE=$(debootstrap_image) || {
		[ "${HUTCH_IT_REQUIRE_DEBOOTSTRAP:-0}" != 1 ] || return 1
		skip "no debootstrap image (needs debootstrap and the Debian mirror)"
	}
	SUB_UID=$(awk -F: '$1 == "root" || $1 == "0" { print $2; exit }' /etc/subuid 2>/dev/null)
	SUB_UID=${SUB_UID:-1879048192}
}

teardown() {
	local rc=0
	named_teardown || rc=1
	sb_teardown || rc=1
	teardown_bundle || rc=1
	return $rc
}

# A package with a file, a setuid one (as sudo's or passwd's), and a postinst that adds a
# system user and gives it that file.
make_deb() {
	local pkg=$TEST_DIR/pkg
	mkdir -p "$pkg/DEBIAN" "$pkg/usr/share/hutch-hello" "$pkg/usr/bin" "$TEST_DIR/debs"
	echo "hello from a package" >"$pkg/usr/share/hutch-hello/hello"
	printf '#!/bin/sh\necho su\n' >"$pkg/usr/bin/hutch-hello-su"
	chmod 4755 "$pkg/usr/bin/hutch-hello-su"
	cat >"$pkg/DEBIAN/control" <<-'CONTROL'
		Package: hutch-hello
		Version: 1.0
		Architecture: all
		Maintainer: hutch tests <tests@hutch.invalid>
		Description: a package for hutch's tests
	CONTROL
	cat >"$pkg/DEBIAN/postinst" <<-'POSTINST'
		#!/bin/sh
		set -e
		useradd --system --no-create-home --shell /usr/sbin/nologin hutchhello
		chown hutchhello:hutchhello /usr/share/hutch-hello/hello
		install -d -o hutchhello -g hutchhello -m 0750 /var/lib/hutch-hello
	POSTINST
	chmod 755 "$pkg/DEBIAN/postinst"
	dpkg-deb --build --root-owner-group "$pkg" "$TEST_DIR/debs/hutch-hello.deb" >/dev/null
	chmod 755 "$TEST_DIR" "$TEST_DIR/debs"
}

@test "packages: --as-root apt-get installs a local .deb, as root in a user namespace" {
	make_deb
	local before
	before=$(cd "$IMAGE" && find . -xdev -printf '%p %m %u %g %s %T@\n' | sort | sha256sum)
	mkdir "$TEST_DIR/ws"
	chown 1500:1500 "$TEST_DIR/ws"
	run sb --as-root --timeout 120 --memory 1g --ro-bind "$TEST_DIR/debs:/debs" \
		--workspace "$TEST_DIR/ws" --report "$TEST_DIR/r.json" \
		-- sh -c 'apt-get install -y /debs/hutch-hello.deb >/tmp/apt.log 2>&1 ||
			{ cat /tmp/apt.log; exit 1; }
		cat /usr/share/hutch-hello/hello
		stat -c "%U:%G" /usr/share/hutch-hello/hello /var/lib/hutch-hello
		dpkg-query -W -f "\${Status}\n" hutch-hello
		id -u; cat /proc/self/uid_map; stat -c %U /var/lib/dpkg/status
		stat -c "%a %U" /usr/bin/hutch-hello-su'
	echo "$output"
	check_status 0
	[ "${lines[0]}" = "hello from a package" ]
	[ "${lines[1]}" = hutchhello:hutchhello ]
	[ "${lines[2]}" = hutchhello:hutchhello ]
	[ "${lines[3]}" = "install ok installed" ]
	[ "${lines[4]}" = 0 ]
	[[ ${lines[5]} =~ ^\ +0\ +$SUB_UID\ +65536$ ]]
	[ "${lines[6]}" = root ] # the image's root is root's inside (the idmapped view)
	[ "${lines[7]}" = "4755 root" ] # dpkg set the setuid bit in the layer
	# The walk ran (a workspace, root inside) and found nothing there: the layer is not its.
	jq -e '.setid_bits_cleared == 0' "$TEST_DIR/r.json"
	# The host saw only subordinate ids, and the image is as it was.
	jq -e '.isolation.user | .user_namespace and .uid == 0 and .host_uid == '"$SUB_UID" \
		"$TEST_DIR/r.json"
	[ "$(cd "$IMAGE" && find . -xdev -printf '%p %m %u %g %s %T@\n' | sort | sha256sum)" = "$before" ]
	[ ! -e "$IMAGE/usr/share/hutch-hello" ]
}

@test "packages: without root inside, the same install is refused" {
	make_deb
	run sb --timeout 60 --ro-bind "$TEST_DIR/debs:/debs" -- apt-get install -y /debs/hutch-hello.deb
	[ "$status" -ne 0 ]
	[[ $output == *"ermission denied"* || $output == *"are you root"* ]]
}

@test "packages: image build installs a package with a setuid file, which the image keeps" {
	# dpkg runs as root in the build's user namespace and sets the bit in the new layer; the
	# walk that clears bits after a run looks at workspaces and binds, never at a layer.
	make_deb
	export HUTCH_STORE=$TEST_DIR/store
	tar -C "$IMAGE" -cf "$TEST_DIR/deb.tar" .
	run -0 timeout 300 "$HUTCH" image import "$TEST_DIR/deb.tar" --name deb:12
	run -0 --separate-stderr timeout 300 "$HUTCH" image build --from deb:12 --network none \
		--copy "$TEST_DIR/debs/hutch-hello.deb:/opt/debs/" \
		--run 'dpkg -i /opt/debs/hutch-hello.deb' --tag su
	local tag=$output
	run -0 timeout 30 "$HUTCH" sandbox --as-root --image "$tag" -- stat -c "%a %U" /usr/bin/hutch-hello-su
	[ "$output" = "4755 root" ]
}

@test "packages: a root session on a stored image keeps an apt-get install between execs, not after rm" {
	# A task platform's shell session with "run as root": the install goes into the
	# session's throw-away layer (in its supervisor's scratch), which every exec shares and
	# which ends with the session.
	make_deb
	local n=p-$TAG sup
	export HUTCH_STORE=$TEST_DIR/store
	tar -C "$IMAGE" --exclude ./.complete -cf - . |
		timeout 300 "$HUTCH" image import - --name deb:12 >/dev/null
	IMAGE=deb:12
	sb_named "$n" --as-root --timeout 300 --memory 1g --ro-bind "$TEST_DIR/debs:/debs" \
		-- sleep 1000
	sup=$(sup_pid "$n")
	session_mnt_ns "$n"
	run hs exec "$n" -- sh -c 'apt-get install -y /debs/hutch-hello.deb >/tmp/apt.log 2>&1 ||
		{ cat /tmp/apt.log; exit 1; }'
	check_status 0
	run hs exec "$n" -- sh -c 'cat /usr/share/hutch-hello/hello
		dpkg-query -W -f "\${Status}\n" hutch-hello; id -u; getent passwd hutchhello | cut -d: -f1'
	check_status 0
	[ "${lines[0]}" = "hello from a package" ]
	[ "${lines[1]}" = "install ok installed" ]
	[ "${lines[2]}" = 0 ]
	[ "${lines[3]}" = hutchhello ]
	run hs rm -f "$n"
	check_status 0
	session_gone "$n" "$sup"
	mnt_ns_gone "${SESSION_NS[@]}"
	# a new session of the image has none of it
	sb_named "$n" --as-root -- sleep 1000
	sup=$(sup_pid "$n")
	run hs exec "$n" -- sh -c 'test ! -e /usr/share/hutch-hello && ! getent passwd hutchhello &&
		! dpkg-query -W hutch-hello 2>/dev/null'
	check_status 0
	run hs stop "$n"
	check_status 0
	session_gone "$n" "$sup"
}
