#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
#
# The files a caller names, attacked by the sandbox that writes the workspace they sit in.
# --report: FIFOs planted at the writer's temp names (hutch blocked on one for good, the
# lock held), a directory of the path swapped for a symlink to a host directory during the
# run or before it (hutch, as root, removed and replaced r.json there), the name itself a
# link, a FIFO or a directory. --profile and --env-file: a FIFO with no writer (hutch waited
# on it for good); a pipe of the caller's, as <(...) gives, is read.
# A report the sandbox wrote at the name of --report, in a workspace it then filled so that
# hutch's write (or its watcher's) failed, is removed; so is one found when hutch is killed
# just as it begins its report.

load ../integration/helpers
load ../integration/sandbox-helpers
bats_require_minimum_version 1.5.0

setup_file() {
	sb_images_setup
}

setup() {
	sb_setup
	sb_private_image # $WS, owned by 1500:1500: the sandbox writes it as that owner
	LOCK=it-$TAG
	# A host directory the sandbox must never reach: root's, with a root-owned r.json.
	VICTIM=$TEST_DIR/victim
	mkdir "$VICTIM"
	echo victim >"$VICTIM/r.json"
	VICTIM_ID=$(stat -c %i:%s:%Y "$VICTIM/r.json")
}

# teardown and teardown_file: sandbox-helpers' (a container left by create is deleted too).

# sb_nocheck ARGS...: sb, without sb_raw's check of the --report file afterwards, which
# would read the victim's file through the link the sandbox planted.
sb_nocheck() {
	timeout -k 5 "$HUTCH_CMD_TIMEOUT" sh -c 'echo $$ >>"$0"; exec "$@"' "$SB_PIDS" \
		"$HUTCH" sandbox --image "$IMAGE" -e "HUTCH_IT_TAG=$TAG" "$@"
}

# The victim's r.json is the one made in setup: same inode, size, mtime and content.
victim_untouched() {
	[ -f "$VICTIM/r.json" ] && [ ! -L "$VICTIM/r.json" ] &&
		[ "$(stat -c %i:%s:%Y "$VICTIM/r.json")" = "$VICTIM_ID" ] &&
		[ "$(cat "$VICTIM/r.json")" = victim ] &&
		[ "$(ls -A "$VICTIM")" = r.json ] || {
		echo "the victim directory was touched: $(ls -la "$VICTIM")" >&2
		return 1
	}
}

@test "report: FIFOs at the report's temp names (.r.json.tmp.PID for hutch's pid too) and at its name: hutch ends, the report is written, the lock is free" {
	local last st=0 tries=500
	# The old writer's name for the next 2000 pids (one mkfifo: a loop would use them up), planted from the host before the run.
	last=$(cat /proc/sys/kernel/ns_last_pid)
	# shellcheck disable=SC2046 # one name per word
	mkfifo $(seq -f "$WS/.r.json.tmp.%g" "$last" $((last + 2000)))
	chown -h 1500:1500 "$WS"/.r.json.tmp.*
	# From inside: hutch's own pid (which the test hands it), with every suffix it can guess,
	# and a FIFO at the report's name once the earlier report is cleared.
	SB_PIDFILE=$TEST_DIR/hutch.pid HUTCH_CMD_TIMEOUT=20 sb --workspace "$WS" --lock "$LOCK" \
		--report "$WS/r.json" -- sh -c 'cd /workspace
		i=0; while [ ! -s pid ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i + 1)); done
		p=$(cat pid)
		for s in "" .0 .0000000000000000 .ffffffffffffffff; do
			rm -f ".r.json.tmp.$p$s"; mkfifo ".r.json.tmp.$p$s"; done
		mkfifo r.json && echo "planted at $p"' >"$TEST_DIR/out" 2>&1 3>&- &
	local bg=$!
	track_pid $bg
	while [ ! -s "$TEST_DIR/hutch.pid" ] && [ $tries -gt 0 ]; do
		sleep 0.02
		tries=$((tries - 1))
	done
	cp "$TEST_DIR/hutch.pid" "$WS/pid.tmp" && mv "$WS/pid.tmp" "$WS/pid"
	wait $bg || st=$?
	cat "$TEST_DIR/out" >&2
	[ "$st" -eq 0 ] # not 124: timeout(1) ended a hutch blocked on a FIFO
	grep -qx "planted at $(cat "$TEST_DIR/hutch.pid")" "$TEST_DIR/out"
	[ -f "$WS/r.json" ] && check_report "$WS/r.json"
	[ "$(jq -r .exit_code "$WS/r.json")" = 0 ]
	# Every FIFO is still a FIFO (none opened, none replaced), and no temp file is left.
	[ "$(find "$WS" -maxdepth 1 -name '.r.json.tmp.*' -type p | wc -l)" -ge 2000 ]
	[ -z "$(find "$WS" -maxdepth 1 -name '.r.json.tmp.*' ! -type p)" ]
	run sb --lock "$LOCK" --no-wait -- true
	check_status 0
}

@test "report: the sandbox swaps a directory of --report for a symlink to a host directory: the report lands in the directory hutch resolved, the host's file is untouched" {
	mkdir "$WS/sub"
	chown 1500:1500 "$WS/sub"
	echo stale >"$WS/sub/r.json"
	run sb_nocheck --workspace "$WS" -e "VICTIM=$VICTIM" --report "$WS/sub/r.json" -- \
		sh -c 'cd /workspace && [ ! -e sub/r.json ] && mv sub sub.old && ln -s "$VICTIM" sub &&
			echo swapped'
	check_status 0
	[ "$output" = swapped ]
	victim_untouched
	# The directory hutch held (the old sub, renamed) has the report; the link is the
	# sandbox's, left as it made it.
	[ -L "$WS/sub" ] && [ "$(readlink "$WS/sub")" = "$VICTIM" ]
	check_report "$WS/sub.old/r.json"
	[ "$(jq -r .exit_code "$WS/sub.old/r.json")" = 0 ]
	# The directory removed instead: no report at all, an error naming --report, and still
	# nothing outside.
	rm -rf "$WS/sub" "$WS/sub.old"
	mkdir "$WS/sub"
	chown 1500:1500 "$WS/sub"
	run --separate-stderr sb_nocheck --workspace "$WS" -e "VICTIM=$VICTIM" \
		--report "$WS/sub/r.json" \
		-- sh -c 'cd /workspace && rm -rf sub && ln -s "$VICTIM" sub && echo swapped'
	check_status 125
	[ "$output" = swapped ]
	[ "$(wc -l <<<"$stderr")" -eq 1 ]
	[[ $stderr == "hutch: error: --report $WS/sub/r.json"* ]]
	victim_untouched
}

@test "report: a symlink an earlier sandbox left in the workspace's path is refused, naming --report; nothing outside is touched" {
	ln -s "$VICTIM" "$WS/sub"
	chown -h 1500:1500 "$WS/sub"
	run --separate-stderr sb_nocheck --workspace "$WS" --report "$WS/sub/r.json" -- echo ran
	check_status 125
	[ -z "$output" ] && [ "$(wc -l <<<"$stderr")" -eq 1 ]
	[[ $stderr == "hutch: error: --report $WS/sub: a symlink in a directory that another user can write"* ]]
	victim_untouched
	# A link in a directory only root writes is the caller's own: followed.
	ln -s "$TEST_DIR/real" "$TEST_DIR/link"
	mkdir "$TEST_DIR/real"
	run sb --report "$TEST_DIR/link/r.json" -- true
	check_status 0
	check_report "$TEST_DIR/real/r.json"
}

@test "report: --report naming a symlink replaces the link, never its target, whoever made it" {
	echo keep >"$TEST_DIR/target"
	ln -s "$TEST_DIR/target" "$TEST_DIR/r.json"
	run sb --report "$TEST_DIR/r.json" -- true
	check_status 0
	[ ! -L "$TEST_DIR/r.json" ] && check_report "$TEST_DIR/r.json"
	[ "$(cat "$TEST_DIR/target")" = keep ]
	# The sandbox makes the report's name a link to the host's file during the run.
	run sb --workspace "$WS" -e "VICTIM=$VICTIM" --report "$WS/r.json" -- \
		sh -c 'ln -s "$VICTIM/r.json" /workspace/r.json && echo linked'
	check_status 0
	[ "$output" = linked ]
	[ ! -L "$WS/r.json" ] && check_report "$WS/r.json"
	victim_untouched
}

@test "report: --report naming a FIFO, a directory or a device: one error line naming --report, exit 125, the command never runs" {
	mkfifo "$TEST_DIR/fifo.json"
	sb_fails "--report $TEST_DIR/fifo.json: a FIFO, not a regular file" \
		--report "$TEST_DIR/fifo.json" -- echo ran
	[ -p "$TEST_DIR/fifo.json" ]
	mkdir "$TEST_DIR/dir.json"
	sb_fails "--report $TEST_DIR/dir.json: a directory, not a regular file" \
		--report "$TEST_DIR/dir.json" -- echo ran
	[ -d "$TEST_DIR/dir.json" ]
	# A link to an fd, as /dev/stdout is (the test's own: a hutch that replaced the link
	# must not take the host's /dev/stdout with it), and /dev/fd/N itself.
	ln -s /proc/self/fd/1 "$TEST_DIR/stdout.link"
	sb_fails "--report $TEST_DIR/stdout.link: not a file (to write to an fd: --report-fd N)" \
		--report "$TEST_DIR/stdout.link" -- echo ran
	[ "$(readlink "$TEST_DIR/stdout.link")" = /proc/self/fd/1 ]
	sb_fails "--report /dev/fd/1: not a file" --report /dev/fd/1 -- echo ran
	sb_fails "--report $TEST_DIR/none: No such file or directory" \
		--report "$TEST_DIR/none/r.json" -- echo ran
	# --report-fd: an fd the caller did not open, or opened only for reading.
	sb_fails "--report-fd 7: not open" --report-fd 7 -- echo ran 7>&-
	sb_fails "--report-fd 7: not open for writing" --report-fd 7 -- echo ran 7</dev/null
}

@test "report: --profile or --env-file naming a FIFO with no writer: exit 125 at once, naming the flag" {
	local t0
	mkfifo "$TEST_DIR/p.fifo" "$TEST_DIR/e.fifo"
	t0=$(now_ms)
	HUTCH_CMD_TIMEOUT=10 sb_fails "--profile $TEST_DIR/p.fifo: a pipe that gave nothing" \
		--profile "$TEST_DIR/p.fifo" --report "$TEST_DIR/r.json" -- echo ran
	HUTCH_CMD_TIMEOUT=10 sb_fails "--env-file $TEST_DIR/e.fifo: a pipe that gave nothing" \
		--env-file "$TEST_DIR/e.fifo" -- echo ran
	[ $(($(now_ms) - t0)) -lt 4000 ]
	# The bad option's report is written all the same.
	check_report "$TEST_DIR/r.json"
	jq -e '.failure == "bad_option" and (.error | contains("--profile"))' "$TEST_DIR/r.json"
}

@test "report: --profile and --env-file read the caller's pipe (<(...))" {
	echo '{"version": 1, "env": ["FROM_PROFILE=p"], "hostname": "piped"}' >"$TEST_DIR/p.json"
	run sb --env-file <(printf 'A=1\nexport B="two"\n') --profile <(cat "$TEST_DIR/p.json") \
		-- sh -c 'echo "$A $B $FROM_PROFILE $(hostname)"'
	check_status 0
	[ "$output" = "1 two p piped" ]
	# A regular file given as /dev/fd/N is read from its start each time it is named.
	printf 'A=2\n' >"$TEST_DIR/env"
	run sb --env-file /dev/fd/7 -e A=1 --env-file "/proc/self/fd/7" -- sh -c 'echo "$A"' \
		7<"$TEST_DIR/env"
	check_status 0
	[ "$output" = 2 ]
}

@test "report: the directory --report holds never reaches the command" {
	run sb --workspace "$WS" --report "$WS/r.json" -- \
		sh -c 'for f in /proc/self/fd/*; do echo "${f##*/} $(readlink "$f")"; done; true'
	check_status 0
	# (the directory the shell's glob listed is gone by the time readlink looks: no target)
	[ -z "$(grep -vE '^([012] |[0-9]+ ?$)' <<<"$output")" ] || {
		echo "the command holds more than stdio: $output" >&2
		return 1
	}
	check_report "$WS/r.json"
}

@test "report: --report-fd whose reader is gone: an error naming it, never hutch killed by SIGPIPE; the --report file is written all the same" {
	run --separate-stderr sb --report "$TEST_DIR/r.json" --report-fd 7 -- true 7> >(exec true)
	check_status 125 # not 141: killed by SIGPIPE, before the --report file
	[ "$(wc -l <<<"$stderr")" -eq 1 ]
	[[ $stderr == "hutch: error: --report-fd 7: "*"pipe"* ]]
	check_report "$TEST_DIR/r.json"
	[ "$(jq -r .exit_code "$TEST_DIR/r.json")" = 0 ]
}

@test "report: create --pid-file through a symlink a container could have planted is refused; nothing outside is touched" {
	make_bundle "$TEST_DIR/bundle"
	ln -s "$VICTIM" "$WS/sub"
	chown -h 1500:1500 "$WS/sub"
	run_bg create --bundle "$TEST_DIR/bundle" --pid-file "$WS/sub/init.pid" "$TAG-c"
	check_status 1
	[[ $output == *"--pid-file $WS/sub: a symlink in a directory that another user can write"* ]]
	[ ! -e "$HUTCH_ROOT/$TAG-c" ]
	victim_untouched
	# Where the link is the caller's own (a directory only root writes): followed.
	ln -s "$VICTIM" "$TEST_DIR/link"
	run_bg create --bundle "$TEST_DIR/bundle" --pid-file "$TEST_DIR/link/init.pid" "$TAG-c"
	check_status 0
	[ "$(cat "$VICTIM/init.pid")" = "$(state_field "$TAG-c" .pid)" ]
}

@test "report: the sandbox leaves a report of its own at the --report name in a workspace it filled: hutch's write (and its watcher's) fails, says so, and nothing is left at the name" {
	local fs=$TEST_DIR/tws st=0 tries=300
	mkdir "$fs"
	mount -t tmpfs -o size=1m,mode=755,uid=1500,gid=1500 tmpfs "$fs"
	# hutch's own write: the forged report is a link to the filler, which its removal
	# before the write does not free.
	sb_nocheck --workspace "$fs" --report "$fs/r.json" -- sh -c \
		'dd if=/dev/zero of=/workspace/fill bs=4k 2>/dev/null
		 ln /workspace/fill /workspace/r.json; exit 3' \
		>"$TEST_DIR/out" 2>"$TEST_DIR/err" || st=$?
	local left=absent
	[ ! -e "$fs/r.json" ] && [ ! -L "$fs/r.json" ] || left=present
	rm -f "$fs/fill" "$fs/r.json"
	# The watcher's, hutch killed before it began the report: what is at the name goes.
	HUTCH_TEST_KILL_AT=sandbox:waited sb_nocheck --workspace "$fs" --report "$fs/r.json" \
		-- sh -c 'echo "{\"version\":3,\"exit_code\":0,\"failure\":null}" >/workspace/r.json
		 dd if=/dev/zero of=/workspace/fill bs=4k 2>/dev/null; exit 3' >/dev/null 2>&1 || true
	while [ -e "$fs/r.json" ] && [ $tries -gt 0 ]; do
		sleep 0.01
		tries=$((tries - 1))
	done
	local watched=absent
	[ ! -e "$fs/r.json" ] || watched=$(cat "$fs/r.json")
	watcher_left "$fs"
	umount "$fs" || umount -l "$fs"
	run -0 sb -- true # its sweep: the killed hutch's state
	cat "$TEST_DIR/err" >&2
	[ "$st" -eq 125 ]
	[ "$(wc -l <"$TEST_DIR/err")" -eq 1 ]
	grep -q -- "--report $fs/r.json: .*No space left on device; nothing is left at its name" "$TEST_DIR/err"
	[ "$left" = absent ]
	[ "$watched" = absent ]
}

# watcher_left DIR: waits (3 s at most) until no process holds DIR open (the watcher ended).
watcher_left() {
	local tries=300
	while fuser -m "$1" >/dev/null 2>&1 && [ $tries -gt 0 ]; do
		sleep 0.01
		tries=$((tries - 1))
	done
}

@test "report: hutch killed once the sandbox is gone, as it starts the report: the watcher's report, never one the sandbox left at the name" {
	local tries=500
	HUTCH_TEST_KILL_AT=sandbox:reporting sb_nocheck --workspace "$WS" --report "$WS/r.json" \
		-- sh -c 'echo "{\"version\":3,\"exit_code\":0,\"failure\":null,\"FAKE\":true}" >/workspace/r.json' \
		>/dev/null 2>&1 || true
	# The watcher writes its report once it sees hutch gone.
	while { [ ! -s "$WS/r.json" ] || grep -q FAKE "$WS/r.json"; } && [ $tries -gt 0 ]; do
		sleep 0.01
		tries=$((tries - 1))
	done
	cat "$WS/r.json" >&2
	jq -e '.failure == "hutch_killed" and (has("FAKE") | not)' "$WS/r.json"
	run -0 sb -- true # its sweep: the killed hutch's run record
}
