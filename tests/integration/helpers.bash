# SPDX-License-Identifier: Apache-2.0
# shellcheck disable=SC2016 # jq programs: their $vars are jq's, not the shell's
#
# Shared by every .bats file: a busybox bundle per test, the `hutch` wrapper, waiting for
# container states, and a teardown that deletes the test's containers and then fails the
# test if anything leaked: a state dir, a mount, a cgroup, a process, an fd, a netns.
# Everything a test makes lives in its own $TEST_DIR under $BATS_TMPDIR (or /tmp).

INTEGRATION_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
: "${HUTCH:?set HUTCH to the hutch binary (run the suite with run.sh or meson test)}"
BUSYBOX=${HUTCH_IT_BUSYBOX:-/bin/busybox}
# Every hutch command gets this long; a hang fails the command instead of the whole suite.
HUTCH_CMD_TIMEOUT=${HUTCH_CMD_TIMEOUT:-30}

# The binary under test, with the test's private state root.
hutch() {
	timeout -k 5 "$HUTCH_CMD_TIMEOUT" "$HUTCH" --root "$HUTCH_ROOT" "$@"
}

# Where the compiled helpers (recvtty, reaper) live: run.sh builds them once per run; when
# bats is run by hand they are built here, on first use, into bats' per-run temp dir.
helper_bin() {
	local name=$1 dir=${HUTCH_HELPERS_BIN:-${BATS_RUN_TMPDIR:?}/bin}
	if [ ! -x "$dir/$name" ]; then
		mkdir -p "$dir"
		cc -O2 -Wall -o "$dir/$name.tmp.$$" "$INTEGRATION_ROOT/helpers/$name.c" >&2 || return 1
		mv "$dir/$name.tmp.$$" "$dir/$name"
	fi
	echo "$dir/$name"
}

# untraced FUNC ARGS...: FUNC without bats's DEBUG trap, which runs bats_debug_trap before
# every command of the test's shell to keep a stack trace for the failing line. In the
# setup and teardown helpers' loops it was most of a test's cost (0.3 of an empty test's
# 0.45 s); they name their own failures, and the test body keeps the trap. Nests.
untraced() {
	local saved
	saved=$(trap -p DEBUG)
	trap - DEBUG
	"$@"
	local rc=$? # (under set -e a failure has ended the shell: the trap's loss doesn't matter)
	eval "$saved"
	return $rc
}

# A static helper from helpers/NAME.c, copied into the container's /bin.
install_static_helper() {
	local name=$1 dir=${HUTCH_HELPERS_BIN:-${BATS_RUN_TMPDIR:?}/bin}
	if [ ! -x "$dir/$name.static" ]; then
		mkdir -p "$dir"
		cc -static -O2 -Wall -o "$dir/$name.static.$$" "$INTEGRATION_ROOT/helpers/$name.c" &&
			mv "$dir/$name.static.$$" "$dir/$name.static" || return 1
	fi
	cp "$dir/$name.static" "$BUNDLE/rootfs/bin/$name"
}

# A busybox rootfs, built once per run and copied into every bundle.
rootfs_template() {
	local dir=${HUTCH_HELPERS_BIN:-${BATS_RUN_TMPDIR:?}/bin}/rootfs applet
	if [ -d "$dir" ]; then
		echo "$dir"
		return
	fi
	mkdir -p "${dir%/*}"
	local tmp
	tmp=$(mktemp -d "$dir.XXXXXX")
	chmod 755 "$tmp" # mktemp's 0700 would keep non-root and user-namespaced processes out
	mkdir -p "$tmp"/{bin,dev,etc,home/user,mnt,proc,root,run,sys,tmp,usr/bin,var}
	chmod 1777 "$tmp/tmp"
	chmod 0700 "$tmp/root"
	cp "$BUSYBOX" "$tmp/bin/busybox"
	for applet in $("$BUSYBOX" --list); do
		[ -e "$tmp/bin/$applet" ] || ln -s busybox "$tmp/bin/$applet"
	done
	cat >"$tmp/etc/passwd" <<-'EOF'
		root:x:0:0:root:/root:/bin/sh
		user:x:1000:1000:user:/home/user:/bin/sh
		nobody:x:65534:65534:nobody:/nonexistent:/bin/false
	EOF
	cat >"$tmp/etc/group" <<-'EOF'
		root:x:0:
		user:x:1000:
		nogroup:x:65534:
	EOF
	chown 1000:1000 "$tmp/home/user"
	# Another test file may have won the race; either copy is fine.
	mv -T "$tmp" "$dir" 2>/dev/null || rm -rf "$tmp"
	echo "$dir"
}

# make_bundle DIR: DIR/rootfs from busybox, DIR/config.json from `hutch spec`, then the
# suite's defaults: no terminal, `true` as the process, a cgroupsPath unique to this test and
# bundle (relative: hutch puts it beneath our own cgroup), and a tag in the environment by
# which teardown finds leaked container processes.
make_bundle() { untraced _make_bundle "$@"; }
_make_bundle() {
	local dir=$1 cg=$TAG
	[ "$(basename "$dir")" = bundle ] || cg=$TAG-$(basename "$dir")
	mkdir -p "$dir"
	cp -a "$(rootfs_template)" "$dir/rootfs"
	(cd "$dir" && hutch spec) || {
		echo "make_bundle: hutch spec failed" >&2
		return 1
	}
	update_config_in "$dir" '.process.terminal = false
		| .process.args = ["true"]
		| .linux.cgroupsPath = $cg
		| .process.env += ["HUTCH_IT_TAG=" + $tag]' --arg cg "$cg" --arg tag "$TAG"
}

# update_config FILTER [JQ_ARGS...]: edits $BUNDLE/config.json with jq.
update_config() {
	update_config_in "$BUNDLE" "$@"
}

update_config_in() {
	local dir=$1 filter=$2
	shift 2
	jq "$@" "$filter" "$dir/config.json" >"$dir/config.json.new" &&
		mv "$dir/config.json.new" "$dir/config.json"
}

# A JSON array of the arguments, in one jq run (jq 1.6's --args would take "-c" for its own
# option, and its raw input stops at NUL).
json_array() {
	local a i=0 named=()
	for a; do
		named+=(--arg "$(printf 'a%04d' $i)" "$a")
		i=$((i + 1))
	done
	jq -nc "${named[@]}" '[$ARGS.named | to_entries | sort_by(.key)[] | .value]'
}

# Gives the next container from $BUNDLE its own cgroup: `set_cgroup a` -> $TAG-a.
set_cgroup() {
	update_config '.linux.cgroupsPath = $c' --arg c "$TAG-$1"
}

# Sets process.args: `set_args sh -c 'echo hi'`.
set_args() {
	update_config '.process.args = $a' --argjson a "$(json_array "$@")"
}

# The file that collects what container ID (and hutch, for it) printed: see run_bg.
out_file() {
	echo "$TEST_DIR/out.$(printf %s "$1" | tr -c 'A-Za-z0-9._-' _)"
}

# run_bg ARGS...: like `run hutch ARGS...` for a command that leaves a container behind
# (create, run -d). The container inherits hutch's stdio, so it must not get `run`'s pipe
# (bats would wait for it to close) nor bats' fd 3: both go to the file `out_file ID`, the
# last argument being the id. Sets status, output and lines as `run` does, with what was
# printed during this command.
run_bg() {
	local log off=0
	log=$(out_file "${!#}")
	[ -e "$log" ] && off=$(stat -c %s "$log")
	status=0
	hutch "$@" </dev/null >>"$log" 2>&1 3>&- || status=$?
	output=$(tail -c +$((off + 1)) "$log") # what this command (and its container) added
	# (the file keeps everything: ctr_output)
	# shellcheck disable=SC2034 # lines is for the caller, as bats' run sets it
	mapfile -t lines <<<"$output"
	echo "# hutch $* -> $status: $output" >&2
}

# Everything container ID started with run_bg has printed so far.
ctr_output() {
	cat "$(out_file "$1")"
}

# wait_for_state ID STATUS [SECONDS]: polls `hutch state` (every 50ms, 10s by default).
wait_for_state() {
	local id=$1 want=$2 tries=$((${3:-10} * 20)) got=
	while [ "$tries" -gt 0 ]; do
		got=$(hutch state "$id" 2>/dev/null | jq -r .status 2>/dev/null) || true
		[ "$got" = "$want" ] && return 0
		sleep 0.05
		tries=$((tries - 1))
	done
	echo "wait_for_state: $id is '${got:-<no state>}', not '$want'" >&2
	hutch state "$id" >&2 || true
	return 1
}

# The state's field for a container: `state_field ID .pid`.
state_field() {
	hutch state "$1" | jq -r "$2"
}

# wait_for_output ID TEXT [SECONDS]: waits until container ID has printed TEXT.
wait_for_output() {
	local id=$1 text=$2 tries=$((${3:-10} * 20))
	while [ "$tries" -gt 0 ]; do
		grep -qF -- "$text" "$(out_file "$id")" 2>/dev/null && return 0
		sleep 0.05
		tries=$((tries - 1))
	done
	echo "wait_for_output: $id never printed '$text'; it printed:" >&2
	ctr_output "$id" >&2 || true
	return 1
}

# True when PID has exited (it may stay a zombie until its parent, maybe PID 1, reaps it).
pid_gone() {
	[ ! -e "/proc/$1" ] || grep -qs '^State:.*Z' "/proc/$1/status"
}

# add_shared_mount [BUNDLE_DIR]: bind-mounts $TEST_DIR/shared (world-writable) at /shared,
# the way a test and its container exchange files. /shared is made in the image beforehand:
# a user-namespaced root could not create it in a rootfs that the host's root owns.
add_shared_mount() {
	mkdir -p "$TEST_DIR/shared" "${1:-$BUNDLE}/rootfs/shared"
	chmod 1777 "$TEST_DIR/shared"
	update_config_in "${1:-$BUNDLE}" '.mounts += [{destination: "/shared", type: "bind",
		source: $src, options: ["rbind", "rw"]}]' --arg src "$TEST_DIR/shared"
}

# Adds a fresh tmpfs at DEST: `add_tmpfs /scratch nosuid nodev`.
add_tmpfs() {
	local dest=$1
	shift
	update_config '.mounts += [{destination: $d, type: "tmpfs", source: "tmpfs",
		options: $o}]' --arg d "$dest" --argjson o "$(json_array "$@")"
}

# Removes namespace TYPE from linux.namespaces.
remove_ns() {
	update_config '.linux.namespaces |= map(select(.type != $t))' --arg t "$1"
}

# Keeps `run`'s caller honest: prints the output of a failed command in the test log.
check_status() {
	local want=$1
	if [ "$status" -ne "$want" ]; then
		echo "expected status $want, got $status; output:" >&2
		printf '%s\n' "$output" >&2
		return 1
	fi
}

# Runs the bundle's process in the foreground as container $ID and expects exit 0.
run_ok() {
	run hutch run "${@:-$ID}"
	check_status 0
}

# A host mount the test made under $TEST_DIR, for teardown to unmount before its checks.
track_mount() {
	HOST_MOUNTS+=("$1")
}

# A netns the test added with `ip netns add`, for teardown to delete.
track_netns() {
	NETNS_NAMES+=("$1")
}

# A background helper process (recvtty, a hutch run in the background) to kill in teardown.
track_pid() {
	BG_PIDS+=("$1")
}

# The rootless passes (run.sh sets HUTCH_IT_ROOTLESS for a caller that is not host root: an
# ordinary user, or root only inside `unshare -r`): a file runs there only if it sets
# ROOTLESS_OK=1 before loading this file; every other test is skipped with ROOT_ONLY_WHY
# (the file may give its own), and setup_file returns early (file_runs_here).
ROOT_ONLY_WHY=${ROOT_ONLY_WHY:-"needs host root: it makes cgroups, mounts or network namespaces on the host"}
rootless_pass() { [ -n "${HUTCH_IT_ROOTLESS:-}" ]; }
file_runs_here() {
	if rootless_pass; then [ -n "${ROOTLESS_OK:-}" ]; else [ "$(id -u)" -eq 0 ]; fi
}

# A test of a ROOTLESS_OK file that needs host root all the same.
requires_host_root() {
	! rootless_pass || skip "needs host root: ${1:-it runs a container without a user namespace}"
}

# host_i386: whether this host runs i386 syscalls (int $0x80) at all (helpers/i386probe.c).
# Where it does not (a guest whose hypervisor faults on int $0x80 before the kernel sees the
# call), the tests check the x86_64 ABI alone and say so: the i386 one is unreachable there.
host_i386() {
	if [ -z "${HUTCH_IT_I386:-}" ]; then
		HUTCH_IT_I386=0
		"$(helper_bin i386probe)" 2>/dev/null && HUTCH_IT_I386=1
		export HUTCH_IT_I386
	fi
	[ "$HUTCH_IT_I386" = 1 ]
}

requires_root() {
	if rootless_pass; then
		[ -n "${ROOTLESS_OK:-}" ] || skip "$ROOT_ONLY_WHY"
		return 0
	fi
	[ "$(id -u)" -eq 0 ] || skip "needs root"
}

# shellcheck source=../cgroup-dirs.bash
. "$(dirname "${BASH_SOURCE[0]}")/../cgroup-dirs.bash"

# Where the container's cgroup is expected in hierarchy DIR (from own_cgroup_dirs).
own_cgroup_dir() {
	local ctl=$1
	own_cgroup_dirs | grep -E "^/sys/fs/cgroup/([^/]*,)?$ctl(,[^/]*)?(/|$)" | head -n1
}

# The per-test temp dir, state root and leak-check baseline, without a bundle (help.bats).
setup_tmp() { untraced _setup_tmp "$@"; }
_setup_tmp() {
	requires_root
	TEST_DIR=$(mktemp -d "${BATS_TMPDIR:-/tmp}/hutch-it.XXXXXX")
	chmod 755 "$TEST_DIR" # user-namespaced containers must reach their rootfs
	TAG=$(basename "$TEST_DIR")
	# Exported: every hutch the test runs, `hutch sandbox` too, uses the test's own root
	# (hutch honours HUTCH_ROOT when no --root is given); its sandboxes' state is in .sandbox.
	export HUTCH_ROOT=$TEST_DIR/state
	SB_DIR=$HUTCH_ROOT/.sandbox
	SB_STATE=$SB_DIR/state
	SB_LOCKS=$SB_DIR/locks
	SB_NAMES=$SB_DIR/names
	SB_SCRATCH=$SB_DIR/scratch
	SB_RUNS=$SB_DIR/host-runs
	BUNDLE=$TEST_DIR/bundle
	ID=test-$BATS_TEST_NUMBER
	ORIG_HUTCH=$HUTCH
	HOST_MOUNTS=()
	NETNS_NAMES=()
	BG_PIDS=()
	local fds=(/proc/$BASHPID/fd/*)
	FDS_BEFORE=" ${fds[*]##*/} "
}

setup_bundle() {
	[ -x "$BUSYBOX" ] || skip "$BUSYBOX missing (apt-get install busybox-static)"
	setup_tmp
	make_bundle "$BUNDLE"
	cd "$BUNDLE" || return
}

# Fails, listing them, if processes of this test are still alive (waits up to a second for
# ones that are dying).
assert_no_test_processes() {
	local p tries=10 me=$BASHPID
	while [ "$tries" -gt 0 ]; do
		p=$(test_processes "$me")
		[ -z "$p" ] && return 0
		sleep 0.1
		tries=$((tries - 1))
	done
	echo "processes left:" >&2
	ps -o pid,ppid,stat,args -p "$(echo "$p" | tr '\n ' ,,)" >&2 || true
	return 1
}

# What the test's root holds: its containers' state dirs, and its sandboxes' records in
# .sandbox (whose subdirectories, state, locks, names, scratch and host-runs, stay, empty,
# once every sandbox is gone: hutch makes them once, and another hutch of the root may be
# about to use them). One a line. A sandbox's state and run record may outlive its hutch by
# the ms its teardown helper takes (docs/sandbox-named.md): up to 3 s.
state_left() {
	local i
	for i in $(seq 30); do
		[ -z "$(_state_left)" ] && return 0
		sleep 0.1
	done
	_state_left
}
_state_left() {
	[ -d "$HUTCH_ROOT" ] || return 0
	ls -A "$HUTCH_ROOT" | grep -vxF .sandbox
	[ -d "$SB_DIR" ] || return 0
	find "$SB_DIR" -mindepth 1 -maxdepth 2 \( -path "$SB_DIR/*/*" -o ! -type d \) \
		-printf '.sandbox/%P\n'
}

# Fails, saying what, if anything of the test's containers exists: state, mounts, cgroups,
# processes. For tests that check a failed command cleaned up after itself.
assert_no_leftovers() {
	local bad=0 d
	if [ -n "$(state_left)" ]; then
		echo "state left: $(state_left)" >&2
		bad=1
	fi
	if grep -F "$TEST_DIR" /proc/self/mountinfo >&2; then
		echo "^ mounts left" >&2
		bad=1
	fi
	d=$(own_cgroup_dirs | while read -r d; do find "$d" -maxdepth 3 -type d -name "$TAG*"; done)
	if [ -n "$d" ]; then
		echo "cgroups left: $d" >&2
		bad=1
	fi
	assert_no_test_processes || bad=1
	return $bad
}

# Processes that belong to this test: a cwd or root inside $TEST_DIR, or the tag in their
# command line (hutch's --root, hooks' arguments) or environment (container processes).
# The regex puts the tag's '.' in brackets so that grep does not match its own command line.
# $1: the pid of the calling shell, which is never counted (take $BASHPID outside of $(...)).
test_processes() { untraced _test_processes "$@"; }
_test_processes() {
	local me=$1 re=${TAG/./[.]}
	# From /, and with no $TEST_DIR on a command line: the pipeline must not find itself,
	# nor the subshells between it and the test (their cwd is the test's).
	(
		cd / || exit 1
		local anc=" " a=$BASHPID k v
		while [ "$a" -gt 1 ]; do
			anc+="$a "
			while read -r k v; do
				[ "$k" = PPid: ] && a=$v && break
			done <"/proc/$a/status"
		done
		{
			find /proc/[0-9]*/cwd /proc/[0-9]*/root -maxdepth 0 -printf '%p %l\n' 2>/dev/null |
				while read -r link target; do
					if [[ $target == "$TEST_DIR" || $target == "$TEST_DIR"/* ]]; then
						link=${link#/proc/}
						echo "${link%%/*}"
					fi
				done
			grep -l -s -a -E "$re" /proc/[0-9]*/environ /proc/[0-9]*/cmdline | cut -d/ -f3
		} | sort -u | while read -r p; do
			if [ "$p" = "$me" ] || [[ $anc == *" $p "* ]] || grep -qs '^State:.*Z' "/proc/$p/status"; then
				continue
			fi
			if [ -e "/proc/$p" ]; then echo "$p"; fi
		done
	)
}

teardown_bundle() { untraced _teardown_bundle "$@"; }
_teardown_bundle() {
	local - failures=() p d m cgdirs me=$BASHPID
	set +e # every check runs; failures are collected and reported at the end
	[ -n "${TEST_DIR:-}" ] || return 0
	cd /
	HUTCH=$ORIG_HUTCH

	for p in "${BG_PIDS[@]}"; do
		kill -9 "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	if [ -d "$HUTCH_ROOT" ]; then
		for d in "$HUTCH_ROOT"/*; do
			[ -e "$d" ] || continue
			hutch delete --force "$(basename "$d")" >/dev/null 2>&1 ||
				failures+=("delete --force $(basename "$d") failed")
		done
	fi
	for m in "${HOST_MOUNTS[@]}"; do
		umount -l "$m" 2>/dev/null || true
	done
	for p in "${NETNS_NAMES[@]}"; do
		ip netns del "$p" 2>/dev/null || failures+=("ip netns del $p failed")
	done

	# 1. state
	if [ -n "$(state_left)" ]; then
		failures+=("state left under $HUTCH_ROOT: $(state_left | tr '\n' ' ')")
	fi
	# 2. processes (killed, so that they don't hold mounts or cgroups below)
	# One that is dying as we look is no leak (a process substitution's shell, say): up to 2 s.
	local procs tries=20
	procs=$(test_processes "$me")
	while [ -n "$procs" ] && [ $tries -gt 0 ]; do
		sleep 0.1
		procs=$(test_processes "$me")
		tries=$((tries - 1))
	done
	if [ -n "$procs" ]; then
		for p in $procs; do
			[ -d "/proc/$p" ] || continue
			failures+=("process left: $p $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)")
			kill -9 "$p" 2>/dev/null || true
		done
		sleep 0.2
	fi
	# 3. mounts
	m=$(grep -F "$TEST_DIR" /proc/self/mountinfo || true)
	if [ -n "$m" ]; then
		failures+=("mounts left: $m")
		awk '{ print $5 }' <<<"$m" | sort -r | while read -r d; do
			umount -l "$d" 2>/dev/null || true
		done
	fi
	# 4. cgroups
	cgdirs=$(own_cgroup_dirs | while read -r d; do
		find "$d" -maxdepth 3 -type d -name "$TAG*" 2>/dev/null
	done)
	if [ -n "$cgdirs" ]; then
		failures+=("cgroups left: $(tr '\n' ' ' <<<"$cgdirs")")
		for d in $cgdirs; do
			find "$d" -name cgroup.procs -exec cat {} + 2>/dev/null | xargs -r kill -9 2>/dev/null
			sleep 0.1
			find "$d" -depth -type d -exec rmdir {} + 2>/dev/null || true
		done
	fi
	# 5. fds in this shell (bats itself leaves some open when the test failed halfway)
	local fds=(/proc/$me/fd/*) fd
	[ -n "${BATS_TEST_COMPLETED:-}" ] && [ -z "${BATS_TEST_SKIPPED:-}" ] || fds=()
	for fd in "${fds[@]##*/}"; do
		[[ $FDS_BEFORE == *" $fd "* ]] ||
			failures+=("fd $fd left open in the test shell: $(readlink "/proc/$me/fd/$fd")")
	done

	# Only ever rm what is provably ours: no mount may remain below $TEST_DIR.
	if grep -qF "$TEST_DIR" /proc/self/mountinfo; then
		failures+=("$TEST_DIR kept: mounts remain below it")
	else
		rm -rf --one-file-system "$TEST_DIR"
	fi
	if [ ${#failures[@]} -gt 0 ]; then
		printf 'LEAK: %s\n' "${failures[@]}" >&2
		return 1
	fi
}

# The defaults for a test file; files with extra needs define their own and call these.
setup() {
	setup_bundle
}

teardown() {
	teardown_bundle
}

# The console-socket tests (tty.bats, tty-exec.bats): $RECVTTY listening on $SOCK.
# Starts recvtty on $SOCK, writing what the terminal shows to $TEST_DIR/tty.out.
start_recvtty() {
	"$RECVTTY" "$SOCK" "$@" >"$TEST_DIR/tty.out" 2>"$TEST_DIR/tty.err" </dev/null 3>&- &
	RECVTTY_PID=$!
	track_pid "$RECVTTY_PID"
	local i
	for i in $(seq 100); do
		[ -S "$SOCK" ] && return 0
		sleep 0.02
	done
	echo "recvtty did not listen: $(cat "$TEST_DIR/tty.err")" >&2
	return 1
}

# Waits for recvtty to see the terminal close; sets output/lines to what it showed (no \r).
finish_recvtty() {
	local rc=0
	wait "$RECVTTY_PID" || rc=$?
	cat "$TEST_DIR/tty.err" >&2
	output=$(tr -d '\r' <"$TEST_DIR/tty.out")
	mapfile -t lines <<<"$output"
	echo "terminal showed: $output"
	[ "$rc" -eq 0 ]
}

# check_report FILE: one line of JSON that validates against docs/sandbox-report.schema.json
# (python3-jsonschema, formats checked: date-time stamps too).
check_report() {
	[ "$(wc -l <"$1")" -eq 1 ] || {
		echo "report $1: not one line" >&2
		return 1
	}
	python3 - "$1" "$INTEGRATION_ROOT/../../docs/sandbox-report.schema.json" <<'PY'
import json, sys
import jsonschema
report, schema = (json.load(open(p)) for p in sys.argv[1:3])
validator = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())
errors = sorted(validator.iter_errors(report), key=lambda e: list(e.path))
for e in errors:
    print(f"report {sys.argv[1]}: {'.'.join(map(str, e.path)) or '(top)'}: {e.message}", file=sys.stderr)
sys.exit(1 if errors else 0)
PY
}

# reports_valid DIR: every sandbox report left in DIR (*.json with exit_code and wall_ms) is
# valid (check_report). For teardowns: --report-fd reports are seen only there.
reports_valid() {
	local f rc=0
	for f in "$1"/*.json; do
		[ -s "$f" ] && jq -e 'type == "object" and has("exit_code") and has("wall_ms")' \
			"$f" >/dev/null 2>&1 || continue
		check_report "$f" || rc=1
	done
	return $rc
}

# take_pid PID [CMD...]: a process of ours (CMD, by default `sleep 60`; it must exec in place,
# keeping its pid) gets PID once it is free, through ns_last_pid (host root only): TAKEN.
take_pid() {
	local want=$1 q tries=200
	shift
	[ $# -gt 0 ] || set -- sleep 60
	while [ $tries -gt 0 ]; do
		echo $((want - 1)) >/proc/sys/kernel/ns_last_pid
		"$@" >/dev/null 2>&1 &
		q=$!
		if [ "$q" = "$want" ]; then
			TAKEN=$q
			return 0
		fi
		kill "$q"
		wait "$q" 2>/dev/null || true
		sleep 0.01
		tries=$((tries - 1))
	done
	return 1
}
