#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
#
# Host mode's deny across runs: `--deny` inside `--allow-rw` covers a name, so a sandbox that
# moves the denied file out of its place (renaming a directory above it, the file itself, a
# hard link, a symlink planted where the next run resolves the policy) would have the next run,
# with the same policy, cover an empty decoy and leave the file readable. Every attack is run
# 1, and run 2 (the same policy) must not read the secret at any path. As root and, where user
# namespaces allow, as nobody (the view is then made in nobody's own user namespace).

load ../integration/helpers
bats_require_minimum_version 1.5.0


setup_file() {
	file_runs_here || return 0
	if setpriv --reuid 65534 --regid 65534 --clear-groups unshare -Urm true 2>/dev/null; then
		export LL_USERS="root nobody"
	else
		export LL_USERS="root"
	fi
}

setup() {
	setup_tmp
	LL_PIDS=$TEST_DIR/hutch.pids
	: >"$LL_PIDS"
	chmod 666 "$LL_PIDS"
	W=$TEST_DIR/w
	mkdir -m 700 "$TEST_DIR/run-nobody" && chown 65534:65534 "$TEST_DIR/run-nobody"
	mkdir -m 1777 "$TEST_DIR/reports" # whoever runs the sandbox writes its report there
	LL_MOUNTS=()   # host mounts a test makes (aliases), unmounted before the leak check
	LL_HOST_DIRS=() # stand-in host services' directories outside $TEST_DIR
}

teardown() {
	local rc=0 p d
	[ -n "${TEST_DIR:-}" ] || return 0
	for p in "${BG_PIDS[@]}"; do
		kill -9 "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	BG_PIDS=()
	for d in "${LL_MOUNTS[@]}"; do umount -l "$d" 2>/dev/null; done
	for d in "${LL_HOST_DIRS[@]}"; do rm -rf "$d"; done
	for p in $(sort -u "$LL_PIDS" 2>/dev/null); do
		for d in $(own_cgroup_dirs); do
			[ ! -e "$d/hutch-sb-$p" ] || { echo "LEAK: cgroup $d/hutch-sb-$p" >&2 && rc=1; }
		done
		[ ! -e "$SB_RUNS/$p" ] || { echo "LEAK: registry $SB_RUNS/$p" >&2 && rc=1; }
	done
	# The pins live in the run's own mount namespace: none reaches the host.
	if grep -qF "$TEST_DIR" /proc/self/mountinfo; then
		echo "LEAK: a mount under $TEST_DIR on the host" >&2
		rc=1
	fi
	teardown_bundle || rc=1
	return $rc
}

# fresh_tree WHO: $W with two secrets and a plain file, owned by WHO: what keeps a secret from
# the sandbox is the deny alone, never the file's mode.
fresh_tree() {
	rm -rf "$W"
	mkdir -p "$W/sub" "$W/a/b"
	echo secret-1 >"$W/sub/secret"
	echo secret-2 >"$W/a/b/secret"
	echo plain >"$W/sub/plain"
	if [ "$1" = nobody ]; then chown -R 65534:65534 "$W"; fi
}

# ll_as WHO ARGS...: `hutch sandbox --isolation landlock ARGS` as WHO, with a clean
# environment (root's in the test's root, nobody's in its own state directory); the shell
# records hutch's pid for teardown.
ll_as() {
	local who=$1
	shift
	local pre=() xdg=XDG_RUNTIME_DIR=/run root=HUTCH_ROOT=$HUTCH_ROOT
	if [ "$who" = nobody ]; then
		root=HUTCH_ROOT= # the caller's own: $TEST_DIR/run-nobody/hutch
		pre=(setpriv --reuid 65534 --regid 65534 --clear-groups)
		xdg=XDG_RUNTIME_DIR=$TEST_DIR/run-nobody
		set -- --memory 0 --pids 0 "$@" # no delegated cgroup here: no limits asked
	fi
	timeout -k 5 "$HUTCH_CMD_TIMEOUT" "${pre[@]}" env -i PATH=/usr/bin:/bin \
		HOME="${LL_HOME:-/nonexistent}" \
		"$xdg" "$root" sh -c 'echo $$ >>"$0"; exec "$@"' "$LL_PIDS" \
		"$HUTCH" sandbox --isolation landlock "$@"
}

# no_secret_anywhere WHO TEXT POLICY...: run 2, with the same policy: every file under $W is
# read (symlinks followed), and none may hold TEXT. The plain file beside the secret shows that
# reading works at all.
no_secret_anywhere() {
	local who=$1 text=$2
	shift 2
	run -0 ll_as "$who" "$@" -- sh -c 'grep -RlsF -e "$2" "$1"; cat "$1/sub/plain"' _ "$W" "$text"
	[ "$output" = plain ]
}

@test "landlock-deny: renaming the denied file's parent fails, and run 2 reads the secret nowhere" {
	local who
	for who in $LL_USERS; do
		fresh_tree "$who"
		local policy=(--allow-rw "$W" --deny "$W/sub/secret")
		# shellcheck disable=SC2016 # expanded inside the sandbox
		run -0 ll_as "$who" "${policy[@]}" -- sh -c '
			cd "$1"
			mv sub sub2 && mkdir sub && echo RENAMED
			rmdir sub 2>/dev/null && echo REMOVED
			python3 -c "import ctypes, sys
sys.exit(ctypes.CDLL(None, use_errno=True).umount2(b\"sub\", 2))" && echo UNMOUNTED
			echo run1-done' _ "$W"
		[[ $output == *"cannot move 'sub' to 'sub2': Device or resource busy"* ]]
		[[ $output != *RENAMED* && $output != *REMOVED* && $output != *UNMOUNTED* ]]
		[[ $output == *run1-done ]]
		[ "$(cat "$W/sub/secret")" = secret-1 ] && [ ! -e "$W/sub2" ] # seen from the host
		no_secret_anywhere "$who" secret-1 "${policy[@]}"
	done
}

@test "landlock-deny: a deeper ancestor, and the directory between, can't be renamed either" {
	local who
	for who in $LL_USERS; do
		fresh_tree "$who"
		local policy=(--allow-rw "$W" --deny "$W/a/b/secret" --deny "$W/sub/secret")
		run -0 ll_as "$who" "${policy[@]}" -- sh -c '
			cd "$1"
			mv a a2 2>/dev/null && mkdir -p a/b && echo RENAMED-A
			mv a/b a/c 2>/dev/null && mkdir a/b && echo RENAMED-B
			mkdir -p x && mv a x/ 2>/dev/null && echo MOVED-A
			echo run1-done' _ "$W"
		[ "$output" = run1-done ]
		[ "$(cat "$W/a/b/secret")" = secret-2 ] && [ ! -e "$W/a2" ] && [ ! -e "$W/x/a" ]
		no_secret_anywhere "$who" secret "${policy[@]}"
	done
}

@test "landlock-deny: the denied file and directory can't be renamed, removed or replaced" {
	local who
	for who in $LL_USERS; do
		fresh_tree "$who"
		local policy=(--allow-rw "$W" --deny "$W/sub/secret" --deny "$W/a/b")
		run -0 ll_as "$who" "${policy[@]}" -- sh -c '
			cd "$1"
			try() { if "$@" 2>/dev/null; then echo "DID: $*"; fi; }
			echo decoy >decoy
			try mv sub/secret sub/moved
			try mv sub/secret moved
			try rm -f sub/secret
			try mv decoy sub/secret
			try mv a/b a/c
			try rm -rf a/b
			try mv decoy a/b
			echo run1-done' _ "$W"
		[ "$output" = run1-done ]
		[ "$(cat "$W/sub/secret")" = secret-1 ] && [ "$(cat "$W/a/b/secret")" = secret-2 ]
		no_secret_anywhere "$who" secret "${policy[@]}"
	done
}

@test "landlock-deny: no hard link to a denied file, so run 2 isn't refused for one" {
	local who
	for who in $LL_USERS; do
		fresh_tree "$who"
		local policy=(--allow-rw "$W" --deny "$W/sub/secret")
		run -0 ll_as "$who" "${policy[@]}" -- sh -c '
			cd "$1"
			ln sub/secret hl 2>&1
			ln sub/secret sub/hl 2>/dev/null && echo LINKED-BESIDE
			python3 -c "import os; os.link(\"sub/secret\", \"hl2\", follow_symlinks=False)" \
				2>/dev/null && echo LINKED-NOFOLLOW
			echo run1-done' _ "$W"
		[[ $output == *"Invalid cross-device link"* ]]
		[[ $output != *LINKED* ]] && [[ $output == *run1-done ]]
		[ "$(stat -c %h "$W/sub/secret")" = 1 ]
		no_secret_anywhere "$who" secret-1 "${policy[@]}" # strict: it refuses a second link
	done
}

@test "landlock-deny: overlapping rw trees: the directories between pinned in both, roots too" {
	local who
	for who in $LL_USERS; do
		fresh_tree "$who"
		mkdir -p "$W/x/b/c" "$W/ro/d"
		echo secret-3 >"$W/x/b/c/secret"
		[ "$who" = root ] || chown -R 65534:65534 "$W"
		local policy=(--allow-rw "$W" --allow-rw "$W/x/b" --deny "$W/x/b/c/secret")
		run -0 ll_as "$who" "${policy[@]}" -- sh -c '
			cd "$1"
			mv x x2 2>/dev/null && mkdir -p x/b/c && echo RENAMED-X
			mv x/b x/b2 2>/dev/null && echo RENAMED-ROOT
			mv "$1" "$1.moved" 2>/dev/null && echo RENAMED-W
			mv x/b/c x/b/c2 2>/dev/null && echo RENAMED-C
			cd x/b && mv c ../c 2>/dev/null && echo MOVED-C
			echo run1-done' _ "$W"
		[ "$output" = run1-done ]
		[ "$(cat "$W/x/b/c/secret")" = secret-3 ]
		no_secret_anywhere "$who" secret-3 "${policy[@]}"
		# A read tree: nothing in it can be renamed at all.
		echo secret-2 >"$W/ro/d/secret"
		run -0 ll_as "$who" --allow-read "$W/ro" --deny "$W/ro/d/secret" -- sh -c '
			mv "$1/d" "$1/d2" 2>/dev/null && echo RENAMED; echo done' _ "$W/ro"
		[ "$output" = done ]
	done
}

@test "landlock-deny: in a pinned directory renames stay in it; across a pin EXDEV, and mv copies" {
	local who
	for who in $LL_USERS; do
		fresh_tree "$who"
		run -0 ll_as "$who" --allow-rw "$W" --deny "$W/a/b/secret" -- sh -c '
			cd "$1"
			echo n >a/b/n && mv a/b/n a/b/m && echo same-dir-ok
			mkdir a/b/d && mv a/b/m a/b/d/m && echo subdir-ok
			python3 -c "import os; os.rename(\"a/b/d/m\", \"m\")" 2>&1 | grep -o "Errno 18"
			mv a/b/d/m m && cat m' _ "$W"
		[ "$output" = "$(printf 'same-dir-ok\nsubdir-ok\nErrno 18\nn')" ]
	done
}

@test "landlock-deny: a parent that didn't exist, planted as a symlink, is refused or followed" {
	local who
	for who in $LL_USERS; do
		fresh_tree "$who"
		local other=$TEST_DIR/other-$who
		mkdir "$other"
		echo other-secret >"$other/file"
		chmod -R a+rX "$other"
		# Run 1, strict: the parent is missing, so no placeholder could hold the path: refused.
		run -125 ll_as "$who" --allow-rw "$W" --deny "$W/p/file" -- touch "$W/ran"
		[[ $output == *"--deny $W/p/file: its parent doesn't exist"* ]] && [ ! -e "$W/ran" ]
		# Run 1 with --best-effort runs without that deny: the sandbox plants the parent.
		run -0 ll_as "$who" --best-effort --allow-rw "$W" --deny "$W/p/file" -- \
			ln -s "$other" "$W/p"
		# Run 2, strict: the deny resolves through a link a sandbox made: refused.
		local policy=(--allow-rw "$W" --allow-read "$other" --deny "$W/p/file")
		run -125 ll_as "$who" "${policy[@]}" -- cat "$W/p/file"
		[[ $output == *"--deny $W/p/file: through $W/p, a symlink in an rw tree"* ]]
		[[ $output != *other-secret* ]]
		# --best-effort: what the link leads to is denied, by the link's name and its own.
		run -0 ll_as "$who" --best-effort --report "$TEST_DIR/reports/$who.json" "${policy[@]}" \
			-- sh -c 'cat "$1/p/file" "$2/file" 2>/dev/null; ls "$2"' _ "$W" "$other"
		[[ $output != *other-secret* ]] && [ "${lines[-1]}" = file ]
		jq -e '.isolation.weakened | any(test("a symlink in an rw tree"))' \
			"$TEST_DIR/reports/$who.json"
		# ...and makes no placeholder through it: nothing appears outside the rw tree.
		run -0 ll_as "$who" --best-effort --allow-rw "$W" --deny "$W/p/absent" -- true
		[ ! -e "$other/absent" ] && [ "$(cat "$other/file")" = other-secret ]
	done
}

@test "landlock-deny: an allowed path through a symlink planted in an rw tree is refused" {
	local who out
	for who in $LL_USERS; do
		fresh_tree "$who"
		out=$TEST_DIR/outside-$who
		mkdir -p "$out" "$W/docs" "$W/x/build"
		echo private >"$out/private"
		chmod -R a+rX "$out"
		[ "$who" = root ] || chown -R 65534:65534 "$W"
		# Run 1 replaces a read tree (inside the rw one: not a mount point) with a link out.
		run -0 ll_as "$who" --allow-rw "$W" --allow-read "$W/docs" -- \
			sh -c 'rm -r "$1/docs" && ln -s "$2" "$1/docs"' _ "$W" "$out"
		run -125 ll_as "$who" --allow-rw "$W" --allow-read "$W/docs" -- cat "$W/docs/private"
		[[ $output == *"--allow-read $W/docs: resolves through $W/docs, a symlink"* ]]
		[ "${#lines[@]}" -eq 1 ] # the one error line, nothing read
		run -125 ll_as "$who" --best-effort --allow-rw "$W" --allow-read "$W/docs" -- true
		# A nested rw tree: run 1 renames the directory above it and plants a link there.
		run -0 ll_as "$who" --allow-rw "$W" --allow-rw "$W/x/build" -- sh -c '
			cd "$1" && mv x x2 && mkdir x && ln -s "$2" x/build' _ "$W" "$out"
		run -125 ll_as "$who" --allow-rw "$W" --allow-rw "$W/x/build" -- \
			sh -c 'echo pwned >"$1/x/build/written"' _ "$W"
		[[ $output == *"--allow-rw $W/x/build: resolves through $W/x/build"* ]]
		[ ! -e "$out/written" ]
	done
}

# unix_listener PATH: a stand-in host service on the pathname socket PATH, connectable by
# anyone (mode 777, its directory 755), as the host's /run/docker.sock or a session bus would
# be to their users; each connection it accepts is logged to PATH.log.
unix_listener() {
	python3 -c 'import os, socket, sys
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); os.chmod(sys.argv[1], 0o777)
s.listen(16)
print("up", flush=True)
while True:
    c = s.accept()[0]; open(sys.argv[1] + ".log", "a").write("hit\n"); c.close()' \
		"$1" >"$1.up" &
	BG_PIDS+=($!)
	local tries=100
	until grep -qs up "$1.up"; do
		[ $tries -gt 0 ] || return 1
		sleep 0.05
		tries=$((tries - 1))
	done
}

# connect_each PATH...: run inside; "ok" or the errno's name for each socket, one a line.
# shellcheck disable=SC2016 # python's, not the shell's
CONNECT_EACH='import errno, socket, sys
for p in sys.argv[1:]:
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect("\0" + p[1:] if p[0] == "@" else p); print("ok")
    except OSError as e:
        print(errno.errorcode.get(e.errno, e.errno))'

@test "landlock-deny: the host's pathname unix sockets are out of reach, allowed ones are not" {
	local who net run var
	# Where host services put their sockets: /run (and /var/run), and any directory the
	# policy doesn't name (here one under /var/tmp, outside $TEST_DIR's /tmp).
	run=$(mktemp -d /run/hutch-ll-sock.XXXXXX)
	var=$(mktemp -d /var/tmp/hutch-ll-sock.XXXXXX)
	LL_HOST_DIRS+=("$run" "$var")
	chmod 755 "$run" "$var"
	unix_listener "$run/ctl.sock"
	unix_listener "$var/s.sock"
	for who in $LL_USERS; do
		fresh_tree "$who"
		unix_listener "$W/a/own.sock" # under --allow-rw: the command may use it
		for net in none host; do
			run -0 ll_as "$who" --network "$net" --allow-rw "$W" --deny "$W/a/b/secret" \
				-- sh -c 'ls "$1" >/dev/null 2>&1 && echo LISTED
					python3 -c "$2" "$1/ctl.sock" "/var/run/${1#/run/}/ctl.sock" \
						"$3/s.sock" "$4/a/own.sock"' \
				_ "$run" "$CONNECT_EACH" "$var" "$W"
			[ "${#lines[@]}" -eq 4 ]
			local l
			for l in "${lines[@]:0:3}"; do
				[[ $l == ENOENT || $l == ECONNREFUSED || $l == EACCES ]]
			done
			[ "${lines[3]}" = ok ]
		done
		{ kill -9 "${BG_PIDS[-1]}" && wait "${BG_PIDS[-1]}"; } 2>/dev/null || true
		unset 'BG_PIDS[-1]'
	done
	[ ! -e "$run/ctl.sock.log" ] && [ ! -e "$var/s.sock.log" ] # seen from the host
}

@test "landlock-deny: a host abstract unix socket is out of reach with --network host (ABI 6+)" {
	local abi who
	abi=$(python3 -c 'import ctypes; print(ctypes.CDLL(None).syscall(444, None, 0, 1))')
	[ "$abi" -ge 6 ] || skip "Landlock ABI $abi: no scopes (documented in docs/landlock.md)"
	local name="hutch-ll-abstract-$$-$RANDOM"
	python3 -c 'import socket, sys
s = socket.socket(socket.AF_UNIX); s.bind("\0" + sys.argv[1]); s.listen(16)
print("up", flush=True)
while True: s.accept()[0].close()' "$name" >"$TEST_DIR/abstract.up" &
	BG_PIDS+=($!)
	local tries=100
	until grep -qs up "$TEST_DIR/abstract.up"; do
		[ $tries -gt 0 ] || false
		sleep 0.05
		tries=$((tries - 1))
	done
	for who in $LL_USERS; do
		run -0 ll_as "$who" --network host --report "$TEST_DIR/reports/$who.json" -- \
			python3 -c "$CONNECT_EACH" "@$name"
		[ "$output" = EPERM ]
		jq -e '.isolation.landlock_rights.scoped | index("abstract_unix_socket")' \
			"$TEST_DIR/reports/$who.json"
	done
}

@test "landlock-deny: a dotfile symlink into an rw tree doesn't open a denied directory" {
	local who home
	for who in $LL_USERS; do
		fresh_tree "$who"
		echo key-1 >"$W/sub/key"
		mkdir -p "$W/sub/deep" && echo key-2 >"$W/sub/deep/key"
		[ "$who" = root ] || chown -R 65534:65534 "$W"
		# A home inside /tmp: the private /tmp hides it, so its dotfiles are put back.
		home=$TEST_DIR/home-$who
		mkdir -p "$home"
		ln -s "$W" "$home/.proj"
		ln -s "$W/sub" "$home/.sdir"
		echo rc >"$home/.rc"
		chmod -R a+rX "$home"
		LL_HOME=$home run -0 ll_as "$who" --allow-home-dotfiles --allow-rw "$W" \
			--deny "$W/sub" -- sh -c 'cd "$HOME"
				cat .proj/sub/key .proj/sub/deep/key .sdir/key 2>/dev/null
				ls .proj/sub .sdir 2>/dev/null
				cat .proj/sub/plain .sdir/plain 2>/dev/null
				echo x 2>/dev/null >.proj/sub/new && echo WROTE
				cat .rc; ls .proj | sort | tr "\n" " "'
		[ "$output" = "$(printf 'rc\na sub ')" ]
		[ ! -e "$W/sub/new" ]
		# In an rw home a run could have planted the link: not followed, and said so.
		[ "$who" = root ] || chown -R 65534:65534 "$home"
		LL_HOME=$home run -0 --separate-stderr ll_as "$who" --allow-home-dotfiles \
			--allow-rw "$home" -- sh -c 'cat "$HOME/.proj/sub/plain" 2>/dev/null; cat "$HOME/.rc"'
		[ "$output" = rc ]
		[[ $stderr == *"--allow-home-dotfiles: $home/.proj: through $home/.proj, a symlink in an rw tree, ignoring"* ]]
	done
}

@test "landlock-deny: --allow-read through a symlink, and another mount of a tree, keep the deny" {
	local who out
	out=$(mktemp -d /var/tmp/hutch-ll-names.XXXXXX) # outside the private /tmp, as a home
	LL_HOST_DIRS+=("$out")
	chmod 755 "$out"
	for who in $LL_USERS; do
		fresh_tree "$who"
		echo key >"$W/sub/key"
		[ "$who" = root ] || chown -R 65534:65534 "$W"
		# A symlink outside the rw trees, into the denied directory's parent.
		ln -sfn "$W" "$out/link"
		run -0 ll_as "$who" --allow-read "$out/link" --deny "$W/sub" -- sh -c '
			cat "$1/sub/key" "$1/sub/secret" 2>/dev/null; ls "$1/sub" 2>/dev/null
			ls "$1" | tr "\n" " "' _ "$out/link"
		[ "$output" = "a sub " ]
		# Another name for the tree, a bind mount on the host (as /srv/data of /data): the
		# deny covers it there too, by what the directory is, not by its name; and the
		# directories above a denied path are pinned under that name as well.
		mkdir -p "$out/alias"
		mount --bind "$W" "$out/alias"
		LL_MOUNTS+=("$out/alias")
		run -0 ll_as "$who" --allow-read "$out/alias" --allow-rw "$W" \
			--deny "$W/sub" --deny "$W/a/b/secret" -- sh -c '
			cat "$1/sub/key" "$1/a/b/secret" 2>/dev/null; ls "$1/sub" 2>/dev/null
			cat "$1/sub/plain" 2>/dev/null; echo listed $(ls "$1")' _ "$out/alias"
		[ "$output" = "listed a sub" ]
		run -0 ll_as "$who" --allow-rw "$out/alias" --deny "$W/a/b/secret" -- sh -c '
			cd "$1" && mv a a2 2>/dev/null && echo RENAMED
			mv a/b a/c 2>/dev/null && echo RENAMED-B
			cat a/b/secret 2>/dev/null; echo done' _ "$out/alias"
		[ "$output" = done ] && [ "$(cat "$W/a/b/secret")" = secret-2 ]
		umount "$out/alias"
	done
}

@test "landlock-deny: --tmpfs inside --allow-rw is a tmpfs, and nothing written there persists" {
	local who w2
	w2=$(mktemp -d /var/tmp/hutch-ll-tmpfs.XXXXXX) # outside the default private /tmp
	LL_HOST_DIRS+=("$w2")
	for who in $LL_USERS; do
		fresh_tree "$who"
		rm -rf "${w2:?}"/* && cp -a "$W/." "$w2"
		local tree
		for tree in "$w2" "$W"; do
			run -0 ll_as "$who" --allow-rw "$tree" --tmpfs /tmp --tmpfs "$tree/sub:1m" -- \
				sh -c 'ls -A "$1/sub"; df -k "$1/sub" | tail -1 | awk "{print \$2}"
				echo new >"$1/sub/new" && cat "$1/sub/new"; echo kept >"$1/kept"' _ "$tree"
			[ "$output" = "$(printf '1024\nnew')" ]
			[ ! -e "$tree/sub/new" ] && [ "$(cat "$tree/sub/plain")" = plain ]
			[ "$(cat "$tree/kept")" = kept ]
		done
	done
}
