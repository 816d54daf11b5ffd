# SPDX-License-Identifier: Apache-2.0
# What sandbox.bats and sandbox-delegate.bats share: running hutch sandbox with its pid
# recorded, finding what a sandbox left on the host (cgroups, processes), and removing it.
# sb_teardown checks a native sandbox's leftovers; a file with delegates defines its own
# after loading this one. Loaded after helpers.bash.
# Every sandbox of a test runs in the test's own root, $HUTCH_ROOT (setup_tmp exports it and
# sets SB_STATE, SB_LOCKS, SB_NAMES, SB_SCRATCH and SB_RUNS, its .sandbox's directories):
# another root's sandboxes, which a test never counts, are not in it.

# sb_images_setup [DIR...]: SB_IMAGES, a directory the sandbox's mapped ids can traverse,
# with "full": the suite's busybox rootfs plus every mount point the sandbox uses (and DIRs,
# relative to it). For setup_file; teardown_file removes it.
sb_images_setup() {
	file_runs_here && [ -x "$BUSYBOX" ] || return 0
	SB_IMAGES=$(mktemp -d /tmp/hutch-it-sb.XXXXXX)
	chmod 755 "$SB_IMAGES"
	cp -a "$(rootfs_template)" "$SB_IMAGES/full"
	mkdir -p "$SB_IMAGES/full"/{workspace,sys/fs/cgroup}
	local d
	for d in "$@"; do
		mkdir -p "$SB_IMAGES/full/$d"
	done
	: >"$SB_IMAGES/full/etc/resolv.conf"
	export SB_IMAGES
}

# sb_image_helpers NAME...: static builds of helpers/NAME.c in the full image's /bin (after
# sb_images_setup, in setup_file).
sb_image_helpers() {
	[ -n "${SB_IMAGES:-}" ] || return 0
	local h
	for h in "$@"; do
		cc -static -O2 -Wall -o "$SB_IMAGES/full/bin/$h" "$INTEGRATION_ROOT/helpers/$h.c" ||
			return 1
	done
}

# The per-test start both files' setup share: the temp dir, the image, the pid list and the
# cgroups there were before (teardown compares).
sb_setup() { untraced _sb_setup "$@"; }
_sb_setup() {
	[ -x "$BUSYBOX" ] || skip "$BUSYBOX missing (apt-get install busybox-static)"
	setup_tmp
	IMAGE=$SB_IMAGES/full
	SB_PIDS=$TEST_DIR/hutch.pids
	: >"$SB_PIDS"
	# (find fails when a cgroup of someone else's vanishes during the walk: that is fine)
	find /sys/fs/cgroup -type d >"$TEST_DIR/cgroups.before" 2>/dev/null || true
}

# sb_raw ARGS...: `hutch --root "$HUTCH_ROOT" sandbox ARGS...`. The shell records its pid in $SB_PIDS (and in
# $SB_PIDFILE if set) and execs hutch, so the pids are hutch's own: teardown checks what each
# of them left behind (sandbox sb-PID, cgroups hutch-sb-PID).
# A --report file it names is then checked against the schema (check_report): every report
# of the suite validates, or the call fails with status 98 and says why. (A regular file
# only: what a test planted at the name, a FIFO or a link to an fd, is not read; nor is
# /dev/fd/N, which bash's test takes for its own fd N.)
sb_raw() {
	local st=0 a report= prev=
	timeout -k 5 "$HUTCH_CMD_TIMEOUT" sh -c \
		'echo $$ >>"$0"; [ -z "$1" ] || echo $$ >"$1"; shift; exec "$@"' \
		"$SB_PIDS" "${SB_PIDFILE:-}" "$HUTCH" --root "$HUTCH_ROOT" sandbox "$@" || st=$?
	for a in "$@"; do
		[ "$a" = -- ] && break
		[ "$prev" = --report ] && report=$a
		[[ $a == --report=* ]] && report=${a#--report=}
		prev=$a
	done
	[[ $report != /dev/* && $report != /proc/* ]] || report=
	if [ -n "$report" ] && [ -f "$report" ] && [ ! -L "$report" ] && ! check_report "$report"; then
		return 98
	fi
	return $st
}

# lock_pids NAME: the pids of --lock NAME's queue, in line: the holder first, then its
# waiters (a ticket's file holds its hutch's pid).
lock_pids() {
	cat "$SB_LOCKS/$1"/[0-9]* 2>/dev/null || true
}

# wait_lock_holder NAME PID: waits (5 s at most) until PID holds --lock NAME.
wait_lock_holder() {
	local tries=250
	while [ "$(lock_pids "$1" | head -1)" != "$2" ] && [ $tries -gt 0 ]; do
		sleep 0.02
		tries=$((tries - 1))
	done
}

# sb ARGS...: on the full image, with the test's tag in the sandbox's environment (by which
# teardown finds leaked sandbox processes).
sb() {
	sb_raw --image "$IMAGE" -e "HUTCH_IT_TAG=$TAG" "$@"
}

# sb_fails NEEDLE ARGS...: hutch sandbox ARGS exits 125 with exactly one line, on stderr,
# "hutch: error: ..." containing NEEDLE, and writes nothing to stdout.
sb_fails() {
	local needle=$1 st=0 err
	shift
	sb "$@" >"$TEST_DIR/fail.out" 2>"$TEST_DIR/fail.err" || st=$?
	err=$(cat "$TEST_DIR/fail.err")
	echo "# sandbox $* -> $st: $err" >&2
	[ "$st" -eq 125 ] || {
		echo "expected 125, got $st" >&2
		return 1
	}
	[ ! -s "$TEST_DIR/fail.out" ] || {
		echo "stdout was not empty: $(cat "$TEST_DIR/fail.out")" >&2
		return 1
	}
	[ "$(wc -l <"$TEST_DIR/fail.err")" -eq 1 ] || {
		echo "expected one line on stderr" >&2
		return 1
	}
	[[ $err == "hutch: error: "* ]] && [[ $err == *"$needle"* ]] || {
		echo "expected 'hutch: error: ...$needle...'" >&2
		return 1
	}
}

# Milliseconds on a monotonic-enough clock.
now_ms() {
	local t=${EPOCHREALTIME/./}
	echo $((t / 1000))
}

# True if PID is a live hutch (the binary under test), not a zombie.
is_hutch() {
	[ "$(readlink "/proc/$1/exe" 2>/dev/null)" = "$(readlink -f "$HUTCH")" ] && ! pid_gone "$1"
}

# any_hutch PID: a live hutch of any build (another session's, whose state is its own).
# sb_settled: the teardown helpers of the root's returned sandboxes are done (their run
# records are gone): up to 3 s. For a test that looks at the root right after a sandbox.
sb_settled() {
	local i
	for i in $(seq 30); do
		[ -z "$(ls -A "$SB_DIR/runs" 2>/dev/null)" ] && return 0
		sleep 0.1
	done
	echo "runs left: $(ls -A "$SB_DIR/runs")" >&2
	return 1
}

# sb_helpers_done: no teardown helper still holds a run record of the root (its delete is
# done, or it died and left it to a sweep): up to 10 s each, as a loaded host may need. A
# returned sandbox's delete finishes in a helper (docs/sandbox-named.md, "What may linger").
sb_helpers_done() {
	local f i fd held
	for f in "$SB_DIR"/runs/*; do
		for i in $(seq 100); do
			# Opened, never made: flock(1) given the name would make a gone record again.
			[ -e "$f" ] && { exec {fd}<"$f"; } 2>/dev/null || break
			held=0
			flock -n "$fd" || held=1
			exec {fd}<&-
			[ $held = 0 ] && break
			sleep 0.1
		done
	done
}

any_hutch() {
	[[ "$(readlink "/proc/$1/exe" 2>/dev/null)" == */hutch* ]] && ! pid_gone "$1"
}

# The cgroup dirs of sandbox PID's hutch, in every hierarchy; only those made during the
# test: hutches of other sessions on this host (whose pids may be the same) have their own.
sb_cgroups() {
	local d
	find /sys/fs/cgroup -type d -name "hutch-sb-$1" 2>/dev/null | while read -r d; do
		grep -qxF "$d" "$TEST_DIR/cgroups.before" || echo "$d"
	done
}

# Waits (up to 5 s) until no process's command line matches the regex; fails listing them.
no_process_like() {
	local tries=100
	while pgrep -f "$1" >/dev/null && [ $tries -gt 0 ]; do
		sleep 0.05
		tries=$((tries - 1))
	done
	if pgrep -f "$1" >/dev/null; then
		echo "processes left:" >&2
		pgrep -af "$1" >&2
		return 1
	fi
}

# Waits (up to 5 s) until a process's command line matches the regex.
wait_process_like() {
	local tries=200
	until pgrep -f "$1" >/dev/null; do
		[ $tries -gt 0 ] || return 1
		sleep 0.05
		tries=$((tries - 1))
	done
}

# A unique argument for `sleep`, to find a sandbox's processes on the host with pgrep.
mark() {
	echo $((500000 + RANDOM * 7 + BATS_TEST_NUMBER))
}

# remove_cgroups DIR...: removes leaked cgroup dirs, then those of their ancestors that did
# not exist before the test (hutch made them for the leaked ones), and only while empty.
remove_cgroups() {
	local d
	find "$@" -depth -type d -exec rmdir {} + 2>/dev/null
	for d; do
		d=${d%/*}
		while ! grep -qxF "$d" "$TEST_DIR/cgroups.before" && rmdir "$d" 2>/dev/null; do
			d=${d%/*}
		done
	done
}

# sb_left_by PID: adds to the caller's failures what the sandbox of hutch PID left (state,
# cgroups), and removes it.
sb_left_by() {
	local d
	[ ! -e "$SB_STATE/sb-$1" ] || failures+=("state left: $SB_STATE/sb-$1")
	d=$(sb_cgroups "$1")
	if [ -n "$d" ]; then
		failures+=("cgroups left: $(tr '\n' ' ' <<<"$d")")
		# shellcheck disable=SC2038 # xargs reads pids, not file names
		find $d -name cgroup.procs -exec cat {} + 2>/dev/null | xargs -r kill -9 2>/dev/null
		sleep 0.2
		remove_cgroups $d
	fi
}

sb_scratch_left() {
	if grep -qF " $SB_SCRATCH" /proc/self/mountinfo; then
		failures+=("scratch mounts visible on the host")
	fi
}

# A private copy of the suite's busybox rootfs at $IMAGE with the sandbox's mount points, and
# $WS, a workspace owned by host uid 1500, in a test dir the sandbox's ids can traverse.
sb_private_image() {
	IMAGE=$TEST_DIR/image
	cp -a "$(rootfs_template)" "$IMAGE"
	mkdir -p "$IMAGE/workspace" "$IMAGE/sys/fs/cgroup" "$IMAGE/data"
	chmod 755 "$TEST_DIR"
	WS=$TEST_DIR/ws
	mkdir "$WS"
	chown 1500:1500 "$WS"
}

# What every native sandbox of the test may have left: a running hutch, its state, its
# cgroups, scratch mounts on the host, lock files. Files with delegates keep their own.
sb_teardown() { untraced _sb_teardown "$@"; }
_sb_teardown() {
	local - failures=() p killed=0
	set +e
	[ -n "${TEST_DIR:-}" ] && [ -e "${SB_PIDS:-}" ] || return 0
	sb_helpers_done
	# The reports the test left (--report-fd ones too) are valid ones.
	reports_valid "$TEST_DIR" || failures+=("a report the test left is not valid")
	for p in $(sort -u "$SB_PIDS"); do
		if is_hutch "$p"; then
			failures+=("hutch $p still running")
			kill -9 "$p"
			killed=1
		fi
	done
	if [ $killed = 1 ]; then
		sleep 0.5
		SB_PIDS=/dev/null sb_raw --image "$IMAGE" -- true >/dev/null 2>&1
	fi
	for p in $(sort -u "$SB_PIDS"); do
		sb_left_by "$p"
	done
	sb_scratch_left
	[ -z "${LOCK:-}" ] || rm -rf "${SB_LOCKS:?}/$LOCK" "$SB_LOCKS/$LOCK-2"
	if [ ${#failures[@]} -gt 0 ]; then
		printf 'LEAK: %s\n' "${failures[@]}" >&2
		return 1
	fi
}

teardown() {
	local rc=0
	sb_teardown || rc=1
	teardown_bundle || rc=1
	return $rc
}

teardown_file() {
	[ -z "${SB_IMAGES:-}" ] || rm -rf --one-file-system "$SB_IMAGES"
}


# own_sb_cgroups PIDFILE [MAXDEPTH]: the sandbox cgroups (hutch-sb-PID, and what a delegate
# made beneath) of the hutches whose pids PIDFILE lists, beneath ours: another root's (or
# another session's) sandboxes are not this test's, nor is one of a live hutch (a pid of the
# list taken again since).
own_sb_cgroups() {
	local pids=$1 depth=${2:-8} d p
	[ -s "$pids" ] || return 0
	own_sb_cgroup_dirs | while read -r d; do # plain dirs too (runsc)
		find "$d" -mindepth 1 -maxdepth "$depth" -type d -name 'hutch-sb-*' -printf '%p/\n' \
			2>/dev/null
	done | { grep -F -f <(sed 's|^|/hutch-sb-|; s|$|/|' "$pids") || true; } | sed 's|/$||' |
		while read -r d; do
			p=${d##*/hutch-sb-}
			# pids wrap (a long CI run): the other root's run of a pid we once had is its own
			[ -n "${OTHER_DIR:-}" ] && [ -e "$OTHER_DIR/root/.sandbox/runs/${p%%/*}" ] &&
				continue
			any_hutch "${p%%/*}" || echo "$d"
		done
}

# own_sb_inits PIDFILE: hutch's init processes of the sandboxes of those hutches (found by
# their cgroup, hutch-sb-PID, which outlives a killed hutch): another root's are not ours.
own_sb_inits() {
	local pids=$1 p
	[ -s "$pids" ] || return 0
	for p in $(pgrep -f '^hutch-init'); do
		any_hutch "$(ps -o ppid= -p "$p" | tr -d ' ')" && continue # a live sandbox's
		grep -qsF -f <(sed 's|^|/hutch-sb-|; s|$|/|' "$pids") <(sed 's|$|/|' "/proc/$p/cgroup") &&
			echo "$p"
	done
	return 0
}

# other_root_start: for setup_file. Another root runs sandboxes in a loop for the whole file
# (one every ~200 ms: a --lock run, a --name'd detached one and its rm, a host-mode run), so
# that every count of leftovers in the file is shown to see its own root's alone, and each
# root's sweep to leave the other's sandboxes be. other_root_stop (teardown_file) ends it, and
# fails if a run of the loop failed or left state in its root.
other_root_start() {
	file_runs_here && [ -x "$BUSYBOX" ] || return 0
	local img
	img=$(rootfs_template) || return 1
	OTHER_DIR=$(mktemp -d /tmp/hutch-other.XXXXXX)
	chmod 755 "$OTHER_DIR"
	export OTHER_DIR
	other_root_round "$img" 0 # one of each first, so that the loop adds no cache entry later
	(
		cd / || exit 1
		local i=1
		while [ ! -e "$OTHER_DIR/stop" ]; do
			other_root_round "$img" "$i"
			echo "$i" >"$OTHER_DIR/rounds"
			i=$((i + 1))
			sleep 0.2
		done
	) </dev/null >/dev/null 2>&1 3>&- &
	OTHER_LOOP=$!
	export OTHER_LOOP
}

# other_root_round IMAGE I: the loop's runs, each kind once when I is 0, else one of them.
other_root_round() {
	local img=$1 i=$2 k r=(timeout -k 5 30 "$HUTCH" --root "$OTHER_DIR/root")
	for k in 0 1 2; do
		[ "$i" = 0 ] || [ "$k" = $((i % 3)) ] || continue
		case $k in
		0) "${r[@]}" sandbox --lock other --image "$img" -- true ;;
		1) "${r[@]}" sandbox --name other --detach --image "$img" -- sleep 30 &&
			"${r[@]}" sandbox rm -f other ;;
		2) HUTCH_ROOT=$OTHER_DIR/root timeout -k 5 30 "$HUTCH" sandbox --isolation landlock \
			-- true ;;
		esac >>"$OTHER_DIR/log" 2>&1 || echo "run $i ($k): status $?" >>"$OTHER_DIR/failed"
	done
}

other_root_stop() {
	local tries=300 failures=()
	[ -n "${OTHER_DIR:-}" ] || return 0
	: >"$OTHER_DIR/stop"
	while ! pid_gone "$OTHER_LOOP" && [ $tries -gt 0 ]; do
		sleep 0.1
		tries=$((tries - 1))
	done
	pid_gone "$OTHER_LOOP" || {
		kill -9 "$OTHER_LOOP"
		failures+=("the loop did not end")
	}
	wait "$OTHER_LOOP" 2>/dev/null
	[ ! -s "$OTHER_DIR/failed" ] ||
		failures+=("runs failed: $(head -5 "$OTHER_DIR/failed") ($(tail -3 "$OTHER_DIR/log"))")
	[ -z "$(find "$OTHER_DIR/root/.sandbox" -mindepth 2 2>/dev/null)" ] ||
		failures+=("state left: $(find "$OTHER_DIR/root/.sandbox" -mindepth 2)")
	echo "# the other root ran $(cat "$OTHER_DIR/rounds" 2>/dev/null || echo 0) rounds meanwhile" >&3
	rm -rf --one-file-system "$OTHER_DIR"
	if [ ${#failures[@]} -gt 0 ]; then
		printf 'other root: %s\n' "${failures[@]}" >&2
		return 1
	fi
}
