#!/usr/bin/env bats
# The compiled seccomp filter cache, which every later sandbox loads, against a sandbox that
# could write where it lives. A host-mode run of root's is root without capabilities, which
# still owns root's files: with --allow-rw over the cache it rewrote every entry as "return
# ALLOW" (keeping the header's key, recomputing its SHA-256), and every later sandbox loaded
# that (Seccomp: 2, nothing filtered). hutch now keeps its own directories out of every
# sandbox's reach (host mode covers them as --deny does; a native workspace or rw bind that
# holds one is refused), and an entry carries an HMAC under a secret of the cache's that no
# sandbox reads, so an entry planted anyway is not loaded. Each test has its own cache
# ($HUTCH_SECCOMP_CACHE, under $D/vc/hutch as the default is under /var/cache/hutch).
# shellcheck disable=SC2016 # sh -c programs: expanded in the sandbox

load ../integration/helpers
load ../integration/sandbox-helpers

setup() {
	sb_setup
	sb_private_image # $IMAGE, and $WS owned by 1500:1500
	BUNDLE=$TEST_DIR/image-bundle
	mkdir -p "$BUNDLE"
	ln -s "$IMAGE" "$BUNDLE/rootfs"
	D=$TEST_DIR/d
	mkdir -p "$D/vc"
	chmod 755 "$D" "$D/vc"
	export HUTCH_SECCOMP_CACHE=$D/vc/hutch/seccomp
	install_static_helper scpoison # /bin/scpoison DIR: every entry as RET ALLOW
	cp "$IMAGE/bin/scpoison" "$D/vc/scpoison" # a host-mode command runs the host's files
	# What must stay impossible in a sandbox whose filter works: a setuid bit, a new user
	# namespace. Then the filter's mode.
	PROBE='touch /workspace/x; chmod 4755 /workspace/x 2>&1; unshare -U true 2>&1
		grep "^Seccomp:" /proc/self/status | tr -d "\t"'
}

teardown() {
	local rc=0 p
	unset HUTCH_SECCOMP_CACHE HUTCH_STORE
	for p in $(sort -u "${SB_PIDS:-/dev/null}"); do
		if [ -e "$SB_RUNS/$p" ]; then
			echo "LEAK: $SB_RUNS/$p" >&2
			rc=1
		fi
	done
	sb_teardown || rc=1
	teardown_bundle || rc=1
	return $rc
}

# The filter works: the probe's chmod and unshare were refused, and it was loaded.
filter_holds() {
	echo "$output"
	[[ $output == *"chmod: /workspace/x: Operation not permitted"* ]]
	[[ $output == *"unshare: unshare(0x10000000): Operation not permitted"* ]]
	[[ $output == *"Seccomp:2"* ]]
	[ "$(stat -c %a "$WS/x")" = 644 ]
}

fill_cache() {
	run -0 sb --workspace "$WS" -- true
	[ -n "$(ls "$HUTCH_SECCOMP_CACHE"/*.bpf)" ]
}

@test "seccomp-cache: a host-mode run of root's with --allow-rw over the cache can neither rewrite nor read it" {
	bats_require_minimum_version 1.5.0
	fill_cache
	local before
	before=$(cd "$HUTCH_SECCOMP_CACHE" && sha256sum ./*)
	run sb_raw --isolation landlock --allow-rw "$D/vc" -- "$D/vc/scpoison" "$HUTCH_SECCOMP_CACHE"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ $output == *"$HUTCH_SECCOMP_CACHE: Permission denied"* ]]
	[ "$(cd "$HUTCH_SECCOMP_CACHE" && sha256sum ./*)" = "$before" ]
	# Covered as a --deny is: its "hutch" directory can't be listed, the secret not read, a
	# new entry not made; read-only access doesn't reach it either.
	run sb_raw --isolation landlock --allow-rw "$D" -- sh -c \
		'ls "$1/vc/hutch"; cat "$1/vc/hutch/seccomp/key"; touch "$1/vc/hutch/seccomp/new.bpf"
		mv "$1/vc/hutch" "$1/vc/moved"; echo done' sh "$D"
	echo "$output"
	[[ $output == *"ls: cannot open directory '$D/vc/hutch': Permission denied"* ]]
	[[ $output == *"cat: can't open '$D/vc/hutch/seccomp/key': Permission denied"* ||
		$output == *"cat: $D/vc/hutch/seccomp/key: Permission denied"* ]]
	[[ $output == *done* ]]
	[ ! -e "$HUTCH_SECCOMP_CACHE/new.bpf" ] && [ -d "$D/vc/hutch" ] && [ ! -e "$D/vc/moved" ]
	run sb_raw --isolation landlock --allow-read "$D" -- cat "$HUTCH_SECCOMP_CACHE/key"
	[ "$status" -eq 1 ]
	[ "$(cd "$HUTCH_SECCOMP_CACHE" && sha256sum ./*)" = "$before" ]
	# The next sandbox loads the filter it was given.
	run -0 sb --workspace "$WS" -- sh -c "$PROBE"
	filter_holds
}

@test "seccomp-cache: an entry rewritten to allow everything (with a SHA-256 of it, no MAC) is not loaded" {
	bats_require_minimum_version 1.5.0
	fill_cache
	# Planted from the host, as a write through some other hole would: the secret is out of
	# reach, so the MAC is not the entry's.
	run -0 "$D/vc/scpoison" "$HUTCH_SECCOMP_CACHE"
	[[ $output == "poisoned "* ]]
	run -0 sb --workspace "$WS" -- sh -c "$PROBE"
	filter_holds
	# The entries' secret: root's alone, made by the first run.
	[ "$(stat -c %a:%s:%u "$HUTCH_SECCOMP_CACHE/key")" = 600:32:0 ]
	# The poisoned entries were compiled again and replaced (no more 1-instruction files).
	[ -z "$(find "$HUTCH_SECCOMP_CACHE" -name '*.bpf' -size -100c)" ]
	# Host mode loads the same kind of filter (the default profile, no setid rules).
	run -0 "$D/vc/scpoison" "$HUTCH_SECCOMP_CACHE"
	run -0 sb_raw --isolation landlock --allow-rw "$TEST_DIR/ws" -- sh -c \
		'unshare -U true 2>&1; grep "^Seccomp:" /proc/self/status | tr -d "\t"'
	[[ $output == *"unshare: unshare failed: Operation not permitted"* ]]
	[[ $output == *"Seccomp:2"* ]]
}

@test "seccomp-cache: a workspace or rw bind that holds or lies in one of hutch's own directories is refused; read-only is not" {
	bats_require_minimum_version 1.5.0
	fill_cache
	chown 1500:1500 "$D" # a workspace the sandbox user could have, but for the cache in it
	sb_fails "--workspace $D: holds $D/vc/hutch, one of hutch's own directories" \
		--workspace "$D" -- true
	sb_fails "--bind $D: holds $D/vc/hutch" --bind "$D:/d" -- true
	sb_fails "--bind $D/vc: holds $D/vc/hutch" --bind "$D/vc:/d:rw" -- true
	sb_fails "--bind $HUTCH_SECCOMP_CACHE: inside $D/vc/hutch" \
		--bind "$HUTCH_SECCOMP_CACHE:/d" -- true
	# Through a symlink to it: resolved.
	ln -s "$D/vc" "$TEST_DIR/link"
	sb_fails "--bind $TEST_DIR/link: holds $D/vc/hutch" --bind "$TEST_DIR/link:/d" -- true
	# Through another name on the host, a bind mount of it: by device and inode.
	mkdir "$TEST_DIR/alias" "$TEST_DIR/alias2"
	mount --bind "$D/vc" "$TEST_DIR/alias"
	mount --bind "$HUTCH_SECCOMP_CACHE" "$TEST_DIR/alias2"
	run sb --bind "$TEST_DIR/alias:/d" -- true
	local st1=$status out1=$output
	run sb --bind "$TEST_DIR/alias2:/d" -- true
	umount "$TEST_DIR/alias" "$TEST_DIR/alias2"
	[ "$st1" -eq 125 ]
	[[ $out1 == *"--bind $TEST_DIR/alias: holds $D/vc/hutch"* ]]
	# (inside: the walk up from a mount's root leaves the tree, but the directory is root's,
	# which no rw bind may be)
	[ "$status" -eq 125 ]
	# hutch's state (named sandboxes' specs) and image store too.
	sb_fails "--bind /run: holds /run/hutch" --bind /run:/r -- true
	mkdir -p "$D/store/x"
	export HUTCH_STORE=$D/store
	sb_fails "--bind $D/store/x: inside $D/store" --bind "$D/store/x:/s" -- true
	unset HUTCH_STORE
	# The report names the bad option.
	run sb --workspace "$D" --report "$TEST_DIR/r.json" -- true
	[ "$status" -eq 125 ]
	jq -e '.failure == "bad_option"' "$TEST_DIR/r.json"
	# Read-only, the cache can't be written: run.
	run -0 sb --ro-bind "$D:/d" -- true
	run -0 sb --workspace "$WS" -- sh -c "$PROBE"
	filter_holds
}

@test "seccomp-cache: host mode gives a missing directory of hutch's a placeholder, and refuses a path inside one" {
	bats_require_minimum_version 1.5.0
	export HUTCH_STORE=$D/vc/store # not made yet: the command must not make it
	run sb_raw --isolation landlock --allow-rw "$D/vc" -- sh -c \
		'mkdir -p "$1/x" && echo MADE; ls -d "$1"' sh "$HUTCH_STORE"
	echo "$output"
	[[ $output != *MADE* ]]
	[ ! -e "$HUTCH_STORE" ] # the placeholder went with the run
	jq -e '.isolation.policy.placeholders == 1' < <(sb_raw --isolation landlock \
		--allow-rw "$D/vc" --report-fd 3 -- true 3>&1 >/dev/null 2>/dev/null)
	run sb_raw --isolation landlock --allow-rw "$HUTCH_SECCOMP_CACHE" -- true
	[ "$status" -eq 125 ]
	[[ $output == *"--allow-rw $HUTCH_SECCOMP_CACHE: inside $D/vc/hutch, one of hutch's own directories"* ]]
	run sb_raw --isolation landlock --allow-read /run/hutch -- true
	[ "$status" -eq 125 ]
	[[ $output == *"--allow-read /run/hutch: inside /run/hutch"* ]]
	# A symlink in an rw tree on the way to one: a sandbox could point it elsewhere.
	mkdir -p "$D/real/hutch"
	ln -s "$D/real" "$D/vc/lnk"
	export HUTCH_SECCOMP_CACHE=$D/vc/lnk/hutch/seccomp
	run sb_raw --isolation landlock --allow-rw "$D/vc" -- true
	[ "$status" -eq 125 ]
	[[ $output == *"$D/vc/lnk/hutch, one of hutch's own directories: resolves through $D/vc/lnk"* ]]
}

@test "seccomp-cache: rootless, the caller's ~/.cache/hutch is out of its sandboxes' reach" {
	bats_require_minimum_version 1.5.0
	local home=$TEST_DIR/home h=$TEST_DIR/hutch
	mkdir -m 700 "$home" "$TEST_DIR/xdg"
	chown 65534:65534 "$home" "$TEST_DIR/xdg"
	cp "$HUTCH" "$h" # where nobody can run it
	chmod 755 "$h"
	cp "$D/vc/scpoison" "$home/scpoison"
	chown 65534:65534 "$home/scpoison"
	nobody() {
		timeout -k 5 "$HUTCH_CMD_TIMEOUT" setpriv --reuid 65534 --regid 65534 --clear-groups \
			env -i PATH=/usr/bin:/bin HOME="$home" XDG_RUNTIME_DIR="$TEST_DIR/xdg" "$@"
	}
	# The cache is ~/.cache/hutch/seccomp (the store ~/.local/share/hutch): a --bind of $HOME
	# holds them, made or not.
	run nobody "$h" sandbox --image "$IMAGE" --best-effort --bind "$home:/h" -- true
	echo "$output"
	[ "$status" -eq 125 ]
	[[ $output == "hutch: error: --bind $home: holds $home/"*"/hutch, one of hutch's own directories, which no sandbox may write" ]]
	run nobody "$h" sandbox --image "$IMAGE" --best-effort --workspace "$home" -- true
	[ "$status" -eq 125 ]
	[[ $output == *"--workspace $home: holds $home/"*"/hutch"* ]]
	mkdir "$home/.cache"
	chown 65534:65534 "$home/.cache"
	run nobody "$h" sandbox --image "$IMAGE" --best-effort --bind "$home/.cache:/c" -- true
	[ "$status" -eq 125 ]
	[[ $output == *"--bind $home/.cache: holds $home/.cache/hutch"* ]]
	# A run fills it; a host-mode run with --allow-rw $HOME can't rewrite it.
	run -0 nobody "$h" sandbox --image "$IMAGE" --best-effort -- true
	[ -n "$(ls "$home/.cache/hutch/seccomp/"*.bpf)" ]
	local before
	before=$(cd "$home/.cache/hutch/seccomp" && sha256sum ./*)
	run nobody "$h" sandbox --isolation landlock --best-effort --memory 0 --pids 0 \
		--allow-rw "$home" -- "$home/scpoison" "$home/.cache/hutch/seccomp"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ $output == *"Permission denied"* ]]
	[ "$(cd "$home/.cache/hutch/seccomp" && sha256sum ./*)" = "$before" ]
}
