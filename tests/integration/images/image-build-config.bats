#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
#
# hutch image build: --copy of host trees into the image (owners, modes, links, the tree in
# the inputs hash, bad inputs that leave nothing behind), stdin as an input of the steps, and
# the image config the build writes (--env, --workdir, --entrypoint, --cmd, --user). A store
# per test ($HUTCH_STORE) with a busybox base imported from a rootfs tar.

load ../helpers
bats_require_minimum_version 1.5.0

setup() {
	[ -x "$BUSYBOX" ] || skip "$BUSYBOX missing (apt-get install busybox-static)"
	setup_tmp
	export HUTCH_STORE=$TEST_DIR/store
	tar -C "$(rootfs_template)" -czf "$TEST_DIR/bb.tar.gz" .
	img import "$TEST_DIR/bb.tar.gz" --name base:1 >/dev/null
	SRC=$TEST_DIR/src
	mkdir -p "$SRC/tree/sub"
	printf 'run me\n' >"$SRC/tree/sub/tool"
	chmod 750 "$SRC/tree/sub/tool"
	ln -s sub/tool "$SRC/tree/link"
	ln -s /etc/shadow "$SRC/tree/abs" # a link out of SRC: copied as a link, not followed
	printf 'one\n' >"$SRC/file"
	chmod 640 "$SRC/file"
	# owned by someone else on the host: the image has it as root's
	chown -R 1234:1234 "$SRC"
}

teardown() {
	teardown_bundle
}

img() {
	timeout -k 5 120 "$HUTCH" image "$@"
}

# in_image TAG CMD: CMD in a sandbox on the image, as its root (ids as the image has them).
in_image() {
	timeout 30 "$HUTCH" sandbox --as-root --image "$1" --entrypoint "" -- /bin/sh -c "$2"
}

tmp_empty() {
	[ -z "$(ls -A "$HUTCH_STORE/tmp")" ]
}

@test "build --copy: a file and a directory, owned by root, modes and links kept" {
	run -0 --separate-stderr img build --from base:1 --copy "$SRC/file:/etc/" \
		--copy "$SRC/tree:/opt/app" --copy "$SRC/file:/srv/renamed" \
		--run 'cat /opt/app/sub/tool >/seen' \
		--run 'stat -c "%u:%g" /etc /opt/app /etc/file >/ids; echo w >/etc/w; echo w >/opt/app/w' \
		--tag cp
	local tag=$output
	# the steps after the copies see them as root's, and may write where they were copied
	run -0 in_image "$tag" 'cat /ids /etc/w /opt/app/w'
	[ "$output" = "$(printf '0:0\n0:0\n0:0\nw\nw')" ]
	[[ "$tag" == cp:* ]]
	run -0 in_image "$tag" 'stat -c "%u:%g %a %F" /etc/file /opt/app/sub/tool /opt/app/link \
		/srv/renamed /opt/app; readlink /opt/app/link; readlink /opt/app/abs
		cat /opt/app/link /seen'
	[ "${lines[0]}" = "0:0 640 regular file" ]
	[ "${lines[1]}" = "0:0 750 regular file" ]
	[ "${lines[2]}" = "0:0 777 symbolic link" ]
	[ "${lines[3]}" = "0:0 640 regular file" ]
	[ "${lines[4]}" = "0:0 755 directory" ]
	[ "${lines[5]}" = sub/tool ]
	[ "${lines[6]}" = /etc/shadow ]
	[ "${lines[7]}" = "run me" ] # the link works inside, and the step ran after the copy
	[ "${lines[8]}" = "run me" ]
	# the base's /etc is merged into, not replaced
	run -0 in_image "$tag" 'grep -c ^root: /etc/passwd; test -e /opt/app/tree || echo contents'
	[ "${lines[0]}" = 1 ] && [ "${lines[1]}" = contents ]
	run -0 img inspect "$tag"
	jq -e --arg s "$SRC" '.config.history[-1].created_by ==
		"copy \($s)/file /etc/ && copy \($s)/tree /opt/app && copy \($s)/file /srv/renamed && cat /opt/app/sub/tool >/seen && stat -c \"%u:%g\" /etc /opt/app /etc/file >/ids; echo w >/etc/w; echo w >/opt/app/w"' <<<"$output"
	tmp_empty
}

@test "build --copy: one changed byte is a new tag and the new content; the same tree is cached" {
	run -0 --separate-stderr img build --from base:1 --copy "$SRC/tree:/opt/app" --tag cp
	local tag=$output
	# mtimes and owners are not inputs
	touch -d '2001-01-01' "$SRC/tree/sub/tool"
	chown 0:0 "$SRC/tree/sub/tool"
	run -0 --separate-stderr img build --from base:1 --copy "$SRC/tree:/opt/app" --tag cp
	[ "$output" = "$tag" ]
	[[ "$stderr" == *"build: $tag (cached)"* ]]
	run -0 img status --from base:1 --copy "$SRC/tree:/opt/app" --tag cp
	[ "$output" = "$tag built" ]
	printf 'run mE\n' >"$SRC/tree/sub/tool"
	run -1 img status --from base:1 --copy "$SRC/tree:/opt/app" --tag cp
	local next=${output% not built}
	[ "$next" != "$tag" ]
	run -0 --separate-stderr img build --from base:1 --copy "$SRC/tree:/opt/app" --tag cp
	[ "$output" = "$next" ]
	[[ "$stderr" == *"build: built $next sha256:"* ]]
	run -0 in_image "$next" 'cat /opt/app/sub/tool'
	[ "$output" = "run mE" ]
	# a mode, a link target, a new empty file: each a new tag
	local seen=" $tag $next " t
	chmod 755 "$SRC/tree/sub/tool"
	t=$(img build --from base:1 --copy "$SRC/tree:/opt/app" --tag cp 2>/dev/null)
	[[ "$seen" != *" $t "* ]] && seen+="$t "
	ln -sfn sub "$SRC/tree/link"
	t=$(img build --from base:1 --copy "$SRC/tree:/opt/app" --tag cp 2>/dev/null)
	[[ "$seen" != *" $t "* ]] && seen+="$t "
	: >"$SRC/tree/empty"
	t=$(img build --from base:1 --copy "$SRC/tree:/opt/app" --tag cp 2>/dev/null)
	[[ "$seen" != *" $t "* ]]
	tmp_empty
}

@test "build --copy: missing SRC, relative or escaping DST, a FIFO: one line naming --copy" {
	mkfifo "$SRC/tree/fifo"
	local n_layers
	n_layers=$(ls "$HUTCH_STORE/layers" | wc -l)
	local bad
	for bad in "$TEST_DIR/nosuch:/opt/x" "$SRC/file:opt/x" "$SRC/file:/opt/../../x" \
		"$SRC/tree:/opt/x" "$SRC/file"; do
		run -1 --separate-stderr img build --from base:1 --copy "$bad" --run true
		[ -z "$output" ]
		[ "${#stderr_lines[@]}" -eq 1 ]
		[[ "$stderr" == "hutch: error: --copy $bad: "* ]]
		tmp_empty
	done
	run -1 --separate-stderr img build --from base:1 --copy "$SRC/tree:/opt/x"
	[[ "$stderr" == *"$SRC/tree/fifo: a FIFO cannot be copied"* ]]
	run -1 --separate-stderr img build --from base:1 --copy "$TEST_DIR/nosuch:/opt/x"
	[[ "$stderr" == *"No such file or directory"* ]]
	run -0 img ls
	[ "${#lines[@]}" -eq 1 ] # base:1 alone
	[ "$(ls "$HUTCH_STORE/layers" | wc -l)" -eq "$n_layers" ]
	run -0 img prune
	[ "$output" = "removed 0 blobs, 0 layers, 0 download caches, 0 leftovers (0B)" ]
}

@test "build --copy: packages first, then the copies, then the steps (a fake apk)" {
	# apk add writes each package's file, apk info -v is the installed list
	run -0 --separate-stderr img build --from base:1 --tag pkgbase --run 'cat >/bin/apk <<-"E"
		#!/bin/sh
		case $1 in
		add) shift; shift; mkdir -p /usr/share; for p; do echo "pkg $p" >/usr/share/pkg-$p; done ;;
		info) echo fake-1.0 ;;
		esac
	E
	chmod 755 /bin/apk'
	local base=$output
	run -0 --separate-stderr img build --from "$base" --package foo \
		--copy "$SRC/file:/usr/share/pkg-foo" --run 'cat /usr/share/pkg-foo >/seen' --tag ord
	local tag=$output
	run -0 in_image "$tag" 'cat /seen'
	[ "$output" = one ] # the copy replaced the package's file, and the step saw the copy
	run -0 img inspect "$tag"
	jq -e '.config.config.Labels["org.hutch.build.packages"] == "fake-1.0\n"' <<<"$output"
	jq -e --arg s "$SRC" '.config.history[-1].created_by ==
		"install foo && copy \($s)/file /usr/share/pkg-foo && cat /usr/share/pkg-foo >/seen"' <<<"$output"
	tmp_empty
}

@test "build --copy alone needs no shell in the base: nothing runs in a sandbox" {
	mkdir -p "$TEST_DIR/bare/etc"
	echo 'root:x:0:0::/:/nonexistent' >"$TEST_DIR/bare/etc/passwd"
	tar -C "$TEST_DIR/bare" -cf "$TEST_DIR/bare.tar" .
	img import "$TEST_DIR/bare.tar" --name bare:1
	run -0 --separate-stderr img build --from bare:1 --copy "$SRC/tree:/app" --tag bare
	local layer
	layer=$(img inspect "$output" | jq -r '.layers[-1]' | cut -d: -f2)
	local root=$HUTCH_STORE/layers/$layer/root
	[ "$(stat -c '%u:%g %a' "$root/app/sub/tool")" = "0:0 750" ]
	[ "$(readlink "$root/app/link")" = sub/tool ]
	[ "$(cat "$root/app/sub/tool")" = "run me" ]
}

@test "build: stdin is an input of the steps: a changed stdin is a new tag, the same is cached" {
	printf 'v1\n' >"$TEST_DIR/in"
	run -0 --separate-stderr img build --from base:1 --run 'cat >/bin/x' --tag st <"$TEST_DIR/in"
	local t1=$output
	printf 'v2\n' >"$TEST_DIR/in"
	run -1 img status --from base:1 --run 'cat >/bin/x' --tag st <"$TEST_DIR/in"
	local t2=${output% not built}
	[ "$t2" != "$t1" ]
	run -0 --separate-stderr img build --from base:1 --run 'cat >/bin/x' --tag st <"$TEST_DIR/in"
	[ "$output" = "$t2" ]
	[[ "$stderr" == *"build: built $t2"* ]]
	run -0 in_image "$t2" 'cat /bin/x'
	[ "$output" = v2 ]
	run -0 img status --from base:1 --run 'cat >/bin/x' --tag st <"$TEST_DIR/in"
	[ "$output" = "$t2 built" ]
	run -0 --separate-stderr img build --from base:1 --run 'cat >/bin/x' --tag st <"$TEST_DIR/in"
	[ "$output" = "$t2" ] && [[ "$stderr" == *"(cached)"* ]]
	# /dev/null and an empty stdin give nothing: the same tag (and the steps read nothing)
	run -0 --separate-stderr img build --from base:1 --run 'cat >/bin/x' --tag st </dev/null
	local t0=$output
	[ "$t0" != "$t1" ] && [ "$t0" != "$t2" ]
	run -0 --separate-stderr img build --from base:1 --run 'cat >/bin/x' --tag st < <(:)
	[ "$output" = "$t0" ] && [[ "$stderr" == *"(cached)"* ]]
	run -0 in_image "$t0" 'wc -c </bin/x'
	[ "$output" = 0 ]
	tmp_empty
}

# docker build -t NAME: NAME:latest is the build that finished last, built or cached; a
# build without --tag moves no latest (the base's own stays the base).
@test "build --tag NAME: NAME:latest follows the last build, cached or not; no --tag moves none" {
	img tag base:1 base:latest
	local base_digest
	base_digest=$(img inspect base:1 | jq -r .digest)
	printf 'v1\n' >"$TEST_DIR/in"
	run -0 --separate-stderr img build --from base:1 --run 'cat >/bin/x' --tag lt <"$TEST_DIR/in"
	local t1=$output
	[ "$(img inspect lt | jq -r .digest)" = "$(img inspect "$t1" | jq -r .digest)" ]
	printf 'v2\n' >"$TEST_DIR/in"
	run -0 --separate-stderr img build --from base:1 --run 'cat >/bin/x' --tag lt <"$TEST_DIR/in"
	local t2=$output
	run -0 in_image lt 'cat /bin/x'
	[ "$output" = v2 ]
	printf 'v1\n' >"$TEST_DIR/in"
	run -0 --separate-stderr img build --from base:1 --run 'cat >/bin/x' --tag lt <"$TEST_DIR/in"
	[ "$output" = "$t1" ] && [[ "$stderr" == *"(cached)"* ]]
	run -0 in_image lt 'cat /bin/x'
	[ "$output" = v1 ]
	[ "$t2" != "$t1" ]
	run -0 --separate-stderr img build --from base:1 --run 'echo > /bin/y'
	[ "$(img inspect base | jq -r .digest)" = "$base_digest" ]
	tmp_empty
}

# Two identical builds at once build once: the second waits for the first (a lock per
# inputs' tag in the store), finds its image and ends with the same digest.
@test "build: two identical builds at once install once and end with one digest" {
	img build --from base:1 --run 'sleep 1; date +%s%N >/built' --tag twice \
		>"$TEST_DIR/o1" 2>"$TEST_DIR/e1" &
	local p1=$!
	img build --from base:1 --run 'sleep 1; date +%s%N >/built' --tag twice \
		>"$TEST_DIR/o2" 2>"$TEST_DIR/e2" &
	local p2=$!
	wait "$p1"
	wait "$p2"
	[ "$(cat "$TEST_DIR/o1")" = "$(cat "$TEST_DIR/o2")" ]
	cat "$TEST_DIR/e1" "$TEST_DIR/e2" >"$TEST_DIR/both"
	[ "$(grep -c "build: built" "$TEST_DIR/both")" = 1 ]
	grep -q "waiting for an identical build to finish" "$TEST_DIR/both"
	grep -q "(cached)" "$TEST_DIR/both"
	run -0 img ls --format json 'twice:*'
	jq -e 'length == 2 and ([.[].digest] | unique | length) == 1' <<<"$output" # :HASH, :latest
	run -0 img prune
	[ -z "$(ls -A "$HUTCH_STORE/locks")" ]
	tmp_empty
}

# A build killed outright takes its step along: nothing keeps the build's locks, so the
# next identical build does not wait for an orphan, and prune runs.
@test "build: SIGKILL of a build ends its step; the next identical build and prune do not wait" {
	(exec "$HUTCH" image build --from base:1 --run 'sleep 40' --tag killed --network none \
		>/dev/null 2>&1) &
	local pid=$! # hutch itself
	for _ in $(seq 100); do
		pgrep -f '^sleep 40$' >/dev/null && break
		sleep 0.1
	done
	pgrep -f '^sleep 40$' >/dev/null
	kill -KILL "$pid"
	wait "$pid" || true
	for _ in $(seq 50); do
		pgrep -f '^sleep 40$' >/dev/null || break
		sleep 0.1
	done
	! pgrep -f '^sleep 40$'
	run -0 timeout 20 "$HUTCH" image prune
	# what the killed step's sandbox left in the root goes with the next one's sweep
	timeout 30 "$HUTCH" sandbox --image base:1 -- true
}

@test "build: --env, --workdir, --entrypoint, --cmd and --user go into the image config" {
	run -0 --separate-stderr img build --from base:1 --env A=1 --env PATH=/usr/bin:/bin \
		--cmd '["echo","base"]' --tag cfg0
	local base=$output
	run -0 img inspect base:1
	local path
	path=$(jq -r '.config.config.Env[0]' <<<"$output")
	[[ "$path" == PATH=* ]] # the import's default: replaced in place by --env PATH=
	run -0 img inspect "$base"
	jq -e '.config.config.Env == ["PATH=/usr/bin:/bin","A=1"]' <<<"$output"
	run -0 --separate-stderr img build --from "$base" --env A=2 --env B=x --workdir /srv \
		--entrypoint '["/bin/echo","hi"]' --user 1000:1000 --tag cfg
	local tag=$output
	run -0 img inspect "$tag"
	jq -e '.config.config.Env == ["PATH=/usr/bin:/bin","A=2","B=x"]' <<<"$output"
	jq -e '.config.config.WorkingDir == "/srv" and .config.config.User == "1000:1000"' <<<"$output"
	jq -e '.config.config.Entrypoint == ["/bin/echo","hi"]' <<<"$output"
	jq -e '.config.config | has("Cmd") | not' <<<"$output" # an entrypoint clears the base's Cmd
	jq -e '.config.config.Labels["org.hutch.build.inputs"] != null' <<<"$output"
	run -0 in_image "$tag" 'stat -c "%u:%g %a" /srv' # made, as Docker's WORKDIR
	[ "$output" = "0:0 755" ]
	# shell form: sh -c STRING; the rest of the base's config is inherited
	run -0 --separate-stderr img build --from "$tag" --cmd 'echo $A' --tag cfg
	local tag2=$output
	run -0 img inspect "$tag2"
	jq -e '.config.config.Cmd == ["/bin/sh","-c","echo $A"]' <<<"$output"
	jq -e '.config.config.Entrypoint == ["/bin/echo","hi"] and .config.config.User == "1000:1000"
		and .config.config.Env == ["PATH=/usr/bin:/bin","A=2","B=x"]' <<<"$output"
	# each is an input: a different value is a different tag, and status agrees with build
	local flags seen=" $tag "
	for flags in "--workdir /srv2" "--user 1000" "--env A=3" "--cmd true" "--entrypoint /bin/true"; do
		local args=(--from "$base" --env A=2 --env B=x --workdir /srv
			--entrypoint '["/bin/echo","hi"]' --user 1000:1000 --tag cfg)
		# shellcheck disable=SC2206
		args+=($flags)
		run -1 img status "${args[@]}"
		local t=${output% not built}
		[[ "$seen" != *" $t "* ]]
		seen+="$t "
		run -0 --separate-stderr img build "${args[@]}"
		[ "$output" = "$t" ]
		run -0 img status "${args[@]}"
		[ "$output" = "$t built" ]
	done
}

@test "build: inputs that join alike are different tags (\\x1f inside an argument)" {
	# Joined with a separator, ["/bin/echo","x"] and ["/bin/echo\u001fx"] were one tag: the
	# second build returned the first image.
	run -1 img status --from base:1 --entrypoint '["/bin/echo","x"]'
	local a=${output% not built}
	run -1 img status --from base:1 --entrypoint '["/bin/echo\u001fx"]'
	local b=${output% not built}
	run -1 img status --from base:1 --cmd '["/bin/echo","x"]'
	local c=${output% not built}
	run -1 img status --from base:1 --cmd '["/bin/echo\u001fx"]'
	local d=${output% not built}
	[ "$a" != "$b" ]
	[ "$c" != "$d" ]
	[ "$a" != "$c" ]
}

@test "build: bad config flags fail with the flag's name" {
	run -1 img build --from base:1 --entrypoint '["a",1]'
	[[ "$output" == *"--entrypoint"* ]]
	run -1 img build --from base:1 --cmd '[oops'
	[[ "$output" == *"--cmd"* ]]
	run -1 img build --from base:1 --workdir rel
	[[ "$output" == *"--workdir rel: expected an absolute path"* ]]
	run -1 img build --from base:1 --user 'a b'
	[[ "$output" == *"--user a b: expected USER[:GROUP]"* ]]
	run -1 img build --from base:1 --user ':x'
	[[ "$output" == *"--user :x"* ]]
	tmp_empty
}
