#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
#
# hutch sandbox --isolation landlock|none: the command runs on the host behind a private mount
# view, Landlock and seccomp. Each policy rule is checked from inside, as root and (where user
# namespaces allow) as nobody: writes blocked for every kind of write, deny winning inside an
# rw tree, denied paths that don't exist yet, links to denied files, home dotfiles, network
# off, strict vs --best-effort on a simulated old Landlock ABI, the report. After every test,
# teardown checks that no cgroup, placeholder, registry, mount or process is left.

load ../helpers
bats_require_minimum_version 1.5.0


setup_file() {
	file_runs_here || return 0
	# nobody runs hutch where an unprivileged user namespace with a mount namespace works.
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
	chmod 666 "$LL_PIDS" # nobody's hutch records itself too
	W=$TEST_DIR/w # the tree each test works in, owned by whoever runs the sandbox
	mkdir -p "$W/ro/d" "$W/rw"
	echo original >"$W/ro/f"
	echo secret >"$W/rw/secret"
	mkdir "$W/rw/secretdir"
	echo inner >"$W/rw/secretdir/x"
	mkdir -m 700 "$TEST_DIR/run-nobody" && chown 65534:65534 "$TEST_DIR/run-nobody"
	# A home outside /tmp: the sandbox's private /tmp would hide one inside it.
	HOME_DIR=$(mktemp -d /var/tmp/hutch-ll-home.XXXXXX)
	chmod 755 "$HOME_DIR"
}

teardown() {
	local rc=0 p d
	[ -n "${TEST_DIR:-}" ] || return 0 # skipped in setup (the rootless passes)
	rm -rf "${HOME_DIR:?}"
	for p in $(sort -u "$LL_PIDS" 2>/dev/null); do
		for d in $(own_cgroup_dirs); do
			if [ -e "$d/hutch-sb-$p" ]; then
				echo "LEAK: cgroup $d/hutch-sb-$p" >&2
				rc=1
			fi
		done
		if [ -e "$SB_RUNS/$p" ]; then
			echo "LEAK: placeholder registry $SB_RUNS/$p" >&2
			rc=1
		fi
	done
	reports_valid "$TEST_DIR" || rc=1
	teardown_bundle || rc=1
	return $rc
}

# ll_as USER ARGS...: `hutch sandbox --isolation landlock ARGS` as USER (root or nobody), with
# a clean environment (root's in the test's root, nobody's in its own state directory); the
# shell records hutch's pid for teardown.
ll_as() {
	local who=$1
	shift
	local pre=() xdg=XDG_RUNTIME_DIR=/run root=HUTCH_ROOT=$HUTCH_ROOT
	if [ "$who" = nobody ]; then
		root=HUTCH_ROOT= # the caller's own: $TEST_DIR/run-nobody/hutch
		chown -R 65534:65534 "$W/rw"
		pre=(setpriv --reuid 65534 --regid 65534 --clear-groups)
		xdg=XDG_RUNTIME_DIR=$TEST_DIR/run-nobody
		# This host delegates no cgroup: nobody's limits would be refused (tests/
		# integration/rootless); these tests are about Landlock, so ask for none.
		set -- --memory 0 --pids 0 "$@"
	fi
	timeout -k 5 "$HUTCH_CMD_TIMEOUT" "${pre[@]}" env -i PATH=/usr/bin:/bin \
		HOME="${LL_HOME:-/nonexistent}" "$xdg" "$root" ${LL_ENV:-} sh -c \
		'echo $$ >>"$0"; exec "$@"' "$LL_PIDS" "$HUTCH" sandbox --isolation landlock "$@"
}

ll() {
	ll_as root "$@"
}

@test "host mode: every kind of write outside the rw paths fails" {
	local who
	for who in $LL_USERS; do
		# shellcheck disable=SC2016 # expanded inside the sandbox
		run -0 ll_as "$who" --allow-read "$W" --allow-rw "$W/rw" -- bash -c '
			cd "$1/ro"
			try() { if "$@" 2>/dev/null; then echo "WROTE: $*"; fi; }
			try sh -c ": >new"
			try sh -c "echo more >>f"
			try truncate -s 0 f
			try mv f g
			try ln f h
			try ln -s f s
			try rm f
			try mkdir e
			try rmdir d
			try chmod 777 f
			try touch -d 2001-01-01 f
			try sh -c ": >/etc/hutch-ll-test"
			try sh -c ": >/root/hutch-ll-test"
			cd "$1/rw" && : >made && mkdir madedir && mv made moved && echo rw-ok
		' _ "$W"
		[ "$output" = rw-ok ]
		[ "$(cat "$W/ro/f")" = original ]
		[ ! -e "$W/ro/new" ] && [ ! -e /etc/hutch-ll-test ] && [ ! -e /root/hutch-ll-test ]
		[ -e "$W/rw/moved" ] && [ -d "$W/rw/madedir" ]
		[ "$(stat -c %a "$W/ro/f")" = 644 ]
		rm -rf "$W/rw/moved" "$W/rw/madedir"
	done
}

@test "host mode: \$HOME and paths not allowed are unreadable, system paths readable" {
	echo x >"$HOME_DIR/notes"
	LL_HOME=$HOME_DIR run -0 ll -- sh -c '
		cat /etc/hostname >/dev/null && echo etc-ok
		ls "$HOME" 2>/dev/null || echo home-closed
		cat "$HOME/notes" 2>/dev/null || echo notes-closed
		ls /root 2>/dev/null || echo root-closed'
	[ "$output" = "$(printf 'etc-ok\nhome-closed\nnotes-closed\nroot-closed')" ]
}

@test "host mode: deny inside an allowed rw tree wins, creating next to it still works" {
	local who
	for who in $LL_USERS; do
		run -0 ll_as "$who" --allow-rw "$W/rw" --deny "$W/rw/secret" \
			--deny "$W/rw/secretdir" -- sh -c '
			cd "$1"
			cat secret 2>/dev/null && echo READ
			echo pwned 2>/dev/null >secret && echo WROTE
			ls secretdir 2>/dev/null && echo LISTED
			cat secretdir/x 2>/dev/null && echo READ-IN-DIR
			touch secretdir/y 2>/dev/null && echo CREATED-IN-DIR
			rm -f secret 2>/dev/null; rm -rf secretdir 2>/dev/null
			echo new >beside && cat beside' _ "$W/rw"
		[ "$output" = new ]
		[ "$(cat "$W/rw/secret")" = secret ] && [ -e "$W/rw/secretdir/x" ]
		[ ! -e "$W/rw/secretdir/y" ]
		rm "$W/rw/beside"
	done
}

@test "host mode: a denied directory inside another, in either order or twice, holds, and over a tree in it" {
	local who
	mkdir -p "$W/rw/secretdir/in"
	for who in $LL_USERS; do
		local d=$W/rw/secretdir i
		local pairs=("$d" "$d/in" "$d/in" "$d" "$d" "$d")
		for i in 0 2 4; do
			run -0 ll_as "$who" --allow-rw "$W/rw" --deny "${pairs[i]}" \
				--deny "${pairs[i + 1]}" -- \
				sh -c 'ls "$1" "$1/in" 2>/dev/null; cat "$1/x" 2>/dev/null; echo held' \
				_ "$d"
			[ "$output" = held ]
		done
		# A tree allowed inside a denied directory: deny wins over it too.
		echo in >"$d/in/f"
		run -0 ll_as "$who" --allow-read "$d/in" --deny "$d" -- \
			sh -c 'cat "$1/in/f" 2>/dev/null; ls "$1/in" 2>/dev/null; echo held' _ "$d"
		[ "$output" = held ]
	done
}

@test "host mode: a denied path that doesn't exist yet holds, and its placeholder goes after" {
	local who
	for who in $LL_USERS; do
		run -0 ll_as "$who" --allow-rw "$W/rw" --deny "$W/rw/later" -- sh -c '
			cd "$1"
			mkdir later 2>/dev/null && echo MKDIR
			echo x 2>/dev/null >later && echo CREATED
			touch later/inside 2>/dev/null && echo CREATED-INSIDE
			ls later 2>/dev/null && echo LISTED
			echo held' _ "$W/rw"
		[ "$output" = held ]
		[ ! -e "$W/rw/later" ]
	done
}

@test "host mode: a killed run's placeholders are reclaimed by the next run" {
	local pid
	ll --allow-rw "$W/rw" --deny "$W/rw/later" -- sleep 60 &
	pid=$!
	local tries=100
	until [ -d "$W/rw/later" ] && [ -s "$SB_RUNS/$(tail -1 "$LL_PIDS")" ]; do
		[ $tries -gt 0 ] || false
		sleep 0.05
		tries=$((tries - 1))
	done
	local hutch_pid
	hutch_pid=$(tail -1 "$LL_PIDS")
	kill -9 "$hutch_pid"
	wait "$pid" || true
	pid_gone "$hutch_pid"
	[ -d "$W/rw/later" ] # the placeholder outlives a SIGKILLed hutch
	run -0 ll -- true
	[ ! -e "$W/rw/later" ] && [ ! -e "$SB_RUNS/$hutch_pid" ]
}

@test "host mode: symlinks and hard links to denied files don't open them" {
	local who
	for who in $LL_USERS; do
		run -0 ll_as "$who" --allow-rw "$W/rw" --deny "$W/rw/secret" -- sh -c '
			cd "$1"
			ln -s secret sl && cat sl 2>/dev/null && echo SYMLINK-READ
			ln secret hl 2>/dev/null && echo HARDLINKED
			ln -s secretdir/../secret sl2 && cat sl2 2>/dev/null && echo SYMLINK2-READ
			echo done' _ "$W/rw"
		[ "$output" = done ]
		rm -f "$W/rw/sl" "$W/rw/sl2"
	done
	# A hard link made before the run is another name the mount doesn't cover: strict refuses.
	ln "$W/rw/secret" "$W/rw/other-name"
	run -125 ll --allow-rw "$W/rw" --deny "$W/rw/secret" -- true
	[[ $output == *"hard links are not covered"* ]]
	run -0 ll --best-effort --report "$TEST_DIR/r.json" --allow-rw "$W/rw" \
		--deny "$W/rw/secret" -- true
	jq -e '.isolation.weakened | any(test("hard links"))' "$TEST_DIR/r.json"
}

@test "host mode: allow_home_dotfiles on and off" {
	local home=$HOME_DIR
	mkdir -p "$home/.config/tool"
	echo rc >"$home/.rc"
	echo conf >"$home/.config/tool/c"
	echo private >"$home/notes"
	chmod -R a+rX "$home"
	local script='cat "$HOME/.rc" "$HOME/.config/tool/c" 2>/dev/null || echo closed
		cat "$HOME/notes" 2>/dev/null || echo notes-closed
		ls "$HOME" >/dev/null 2>&1 || echo home-unlisted'
	LL_HOME=$home run -0 ll -- sh -c "$script"
	[ "$output" = "$(printf 'closed\nnotes-closed\nhome-unlisted')" ]
	LL_HOME=$home run -0 ll --allow-home-dotfiles -- sh -c "$script"
	[ "$output" = "$(printf 'rc\nconf\nnotes-closed\nhome-unlisted')" ]
	echo '{"version": 1, "allow_home_dotfiles": true}' >"$TEST_DIR/p.json"
	LL_HOME=$home run -0 ll --profile "$TEST_DIR/p.json" -- sh -c "$script"
	[ "${lines[0]}" = rc ]
}

@test "host mode: network off can't reach a loopback listener outside, on can" {
	local port=$((20000 + RANDOM % 20000)) who
	python3 -c 'import socket,sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(16)
print("up", flush=True)
while True: s.accept()[0].close()' "$port" >"$TEST_DIR/listener.out" &
	BG_PIDS+=($!)
	local tries=100
	until grep -q up "$TEST_DIR/listener.out"; do
		[ $tries -gt 0 ] || false
		sleep 0.05
		tries=$((tries - 1))
	done
	local connect="{ exec 3<>/dev/tcp/127.0.0.1/$port; } 2>/dev/null && echo connected || echo refused"
	for who in $LL_USERS; do
		run -0 ll_as "$who" -- bash -c "$connect"
		[ "$output" = connected ]
		run -0 ll_as "$who" --network none -- bash -c "$connect"
		[ "$output" = refused ]
	done
	echo '{"version": 1, "allow_network": false}' >"$TEST_DIR/p.json"
	run -0 ll --profile "$TEST_DIR/p.json" --report "$TEST_DIR/r.json" -- \
		bash -c "$connect"
	[ "$output" = refused ]
	jq -e '.isolation | .network == "none" and (.namespaces | index("network"))' \
		"$TEST_DIR/r.json"
}

@test "host mode: strict refuses and --best-effort runs on a simulated old Landlock ABI" {
	# No Landlock at all: strict refuses before running anything.
	LL_ENV=HUTCH_LANDLOCK_ABI_MAX=0 run -125 ll --allow-rw "$W/rw" -- touch "$W/rw/ran"
	[[ $output == *"Landlock is not available"*"--best-effort"* ]]
	[ ! -e "$W/rw/ran" ]
	LL_ENV=HUTCH_LANDLOCK_ABI_MAX=0 run -0 ll --best-effort --report "$TEST_DIR/r.json" \
		--allow-read "$W/ro" --allow-rw "$W/rw" -- \
		sh -c "touch $W/rw/ran; touch $W/ro/f 2>/dev/null || echo ro-held"
	[ "$output" = ro-held ] && [ -e "$W/rw/ran" ] # the mount view still holds
	jq -e '.isolation | .landlock == "not applied" and
		(.weakened | any(test("Landlock is not available")))' "$TEST_DIR/r.json"
	# ABI 2 (Linux 5.19-6.1): no truncate right, but read-only mounts still block truncation.
	LL_ENV=HUTCH_LANDLOCK_ABI_MAX=2 run -0 ll --report "$TEST_DIR/r.json" \
		--allow-read "$W/ro" -- sh -c "truncate -s 0 $W/ro/f 2>/dev/null || echo held"
	[ "$output" = held ]
	jq -e '.isolation.landlock_rights | .abi == 2 and (.handled_fs | index("truncate") | not)
		and (.handled_fs | index("refer"))' "$TEST_DIR/r.json"
}

@test "host mode: the report names the applied layers" {
	run -0 ll --report "$TEST_DIR/r.json" --allow-rw "$W/rw" --deny "$W/rw/secret" \
		--deny "$W/rw/later" --network none -- true
	jq -e '.runtime == "host" and .exit_code == 0 and (.isolation |
		.mode == "landlock" and (.namespaces | index("mount") and index("network")) and
		.capabilities == "none" and .no_new_privs and .seccomp == "default" and
		.read_only_root and (.landlock | startswith("ABI ")) and
		(.landlock_rights.handled_fs | index("write_file")) and
		.policy.deny == ["'"$W"'/rw/secret", "'"$W"'/rw/later"] and
		.policy.placeholders == 1 and .weakened == [])' "$TEST_DIR/r.json"
}

@test "host mode: --isolation none warns and says so in the report" {
	run -3 --separate-stderr "$HUTCH" sandbox --isolation none --report "$TEST_DIR/r.json" -- \
		sh -c ': >"$1/made"; exit 3' _ "$W/ro"
	[[ $stderr == *"warning: --isolation none"* ]]
	[ -e "$W/ro/made" ]
	jq -e '.isolation | .mode == "none" and (.warning | test("unrestricted")) and
		.seccomp == "none"' "$TEST_DIR/r.json"
}

# Waits (up to 5 s) until no process's command line matches the regex.
no_process_like() {
	local tries=100
	while pgrep -f "$1" >/dev/null; do
		[ $tries -gt 0 ] || return 1
		sleep 0.05
		tries=$((tries - 1))
	done
}

@test "host mode: exit codes, the timeout, and the command's whole tree ends with it" {
	run -7 ll -- sh -c 'exit 7'
	run -127 ll -- /nonexistent/cmd
	local m
	m=$((500000 + RANDOM * 7 + BATS_TEST_NUMBER)) # a unique argument to find the sleeps by
	run -124 ll --timeout 0.5 --grace 0.5 -- sh -c "setsid sleep $m & sleep $m"
	no_process_like "sleep $m"
	run -0 ll -- sh -c "setsid sleep $m >/dev/null 2>&1 &"
	no_process_like "sleep $m"
}

@test "host mode: profile keys and option errors" {
	cat >"$TEST_DIR/p.json" <<-EOF
		{"version": 1, "allow_read": ["$W/ro"], "allow_read_write": ["$W/rw"],
		 "deny": ["$W/rw/secret"]}
	EOF
	run -0 ll --profile "$TEST_DIR/p.json" -- sh -c "cat $W/ro/f; : >$W/rw/n && echo w;
		cat $W/rw/secret 2>/dev/null || echo denied"
	[ "$output" = "$(printf 'original\nw\ndenied')" ]
	run -125 ll --image / -- true
	[[ $output == *"--image: not supported with --isolation landlock"* ]]
	run -125 "$HUTCH" sandbox --image / --allow-read /usr -- true
	[[ $output == *"need --isolation landlock"* ]]
	run -125 ll --allow-rw / -- true
	run -125 ll --allow-read relative -- true
	run -125 "$HUTCH" sandbox --isolation bogus -- true
}
