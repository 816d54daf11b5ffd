#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
#
# hutch image build's download cache (STORE/cache/<base digest>): a changed package list
# fetches only the packages no earlier build on the base fetched; the cache is never part of
# the image and never within the steps' reach; prune removes it with the last name of its
# base. Real apt on the debootstrap'd Debian, through the build's bridge to the Debian mirror.

load ../helpers
load ../debootstrap
bats_require_minimum_version 1.5.0

setup() {
	setup_tmp
	BASE=$(debootstrap_image) || {
		[ "${HUTCH_IT_REQUIRE_DEBOOTSTRAP:-0}" != 1 ] || return 1
		skip "no debootstrap image (needs debootstrap and the Debian mirror)"
	}
	export HUTCH_STORE=$TEST_DIR/store
	tar -C "$BASE" --exclude ./.complete -cf - . | "$HUTCH" image import - --name deb:12 >/dev/null
	CACHE=$HUTCH_STORE/cache/$("$HUTCH" image ls --format json deb:12 | jq -r '.[0].digest | sub("^sha256:"; "")')
}

teardown() {
	teardown_bundle
}

build() {
	timeout -k 5 600 "$HUTCH" image build --from deb:12 --progress plain "$@" </dev/null
}

# fetched: the packages apt downloaded, from its "Get:N URL SUITE/COMPONENT ARCH NAME ..."
# lines in $stderr.
fetched() {
	awk '$1 ~ /^Get:/ && NF >= 5 && $0 !~ /InRelease|Packages|Translation/ { print $5 }' \
		<<<"$stderr" | sort -u
}

@test "image build: a changed package list fetches only what is new; the cache stays out of the image" {
	run -0 --separate-stderr build --package hello --tag one
	[ "$(fetched)" = hello ] || { echo "$stderr" >&2; false; }
	ls "$CACHE"/archives/hello_*.deb
	run -0 --separate-stderr build --package hello --package tree --tag two
	local two=${lines[-1]}
	# hello came from the cache, tree from the mirror; both are in the image
	[ "$(fetched)" = tree ] || { echo "$stderr" >&2; false; }
	ls "$CACHE"/archives/tree_*.deb
	run -0 timeout 60 "$HUTCH" sandbox --image "$two" -- sh -c \
		'hello; test -x /usr/bin/tree && echo tree; test ! -e /.hutch-cache && echo no-mount-point;
		 ls /var/cache/apt/archives | grep -c "\.deb$" || true'
	[ "${lines[0]}" = "Hello, world!" ]
	[ "${lines[1]}" = tree ]
	[ "${lines[2]}" = no-mount-point ]
	[ "${lines[3]}" = 0 ]
	# A rebuild of the same list (--no-cache: a new layer) fetches nothing
	run -0 --separate-stderr build --package hello --package tree --tag two --no-cache
	[ -z "$(fetched)" ] || { echo "$stderr" >&2; false; }
}

@test "image build: the steps never see the download cache; prune removes it with its base" {
	# the steps run in a sandbox of their own, after the packages', without the cache
	run -0 --separate-stderr build --package hello --tag three \
		--run 'test ! -e /.hutch-cache && hello >/hello.out'
	local three=${lines[-1]}
	ls "$CACHE"/archives/hello_*.deb
	run -0 timeout 60 "$HUTCH" sandbox --image "$three" -- cat /hello.out
	[ "$output" = "Hello, world!" ]
	# the cache's dirs are the build's root's (the namespace's), not the host's root's
	[ "$(stat -c %u "$CACHE")" != 0 ]
	# it stays while a name reaches its base, and goes with the last one
	run -0 "$HUTCH" image rm 'three:*'
	run -0 "$HUTCH" image prune
	[[ "$output" == *", 0 download caches,"* ]]
	[ -d "$CACHE/archives" ]
	run -0 "$HUTCH" image rm deb:12
	run -0 "$HUTCH" image prune
	[[ "$output" == *", 1 download caches,"* ]]
	[ ! -e "$CACHE" ]
}
