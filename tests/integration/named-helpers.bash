# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# shellcheck disable=SC2016,SC2154 # SESSION_VIEW runs inside; $output is bats' run's
# What the files that test long-lived (named) sandboxes share: starting one detached with its
# supervisor's pid in $SB_PIDS (teardown checks its state and cgroups), the subcommands, and
# checks that an exec'd process is the session's and that nothing of a session is left.
# Loaded after helpers.bash and sandbox-helpers.bash.

fail() {
	echo "$*" >&2
	return 1
}

# The pid of the hutch that keeps sandbox NAME (its id is sb-PID).
sup_pid() {
	local id
	id=$(cat "$SB_NAMES/$1" 2>/dev/null) && [ -n "$id" ] || return 1
	echo "${id#sb-}"
}

# sb_named NAME ARGS...: a detached named sandbox (ARGS end with -- CMD); NAME on stdout, and
# its supervisor's pid in $SB_PIDS for teardown.
sb_named() {
	local name=$1
	shift
	sb --name "$name" --detach "$@" || return
	sup_pid "$name" >>"$SB_PIDS"
}

# `hutch sandbox ARGS...` (the subcommands), bounded in time.
hs() {
	timeout -k 5 "$HUTCH_CMD_TIMEOUT" "$HUTCH" sandbox "$@"
}

# The pid of sandbox NAME's init, as `sandbox ls` says.
init_pid() {
	hs ls --format json | jq -r --arg n "$1" '.[] | select(.name == $n) | .pid'
}

# PID has exited (a zombie counts; /proc/PID may vanish between the two looks).
gone() {
	pid_gone "$1" || [ ! -e "/proc/$1" ]
}

# Waits (up to 10 s) until process PID is gone.
wait_gone() {
	local tries=200
	while ! gone "$1" && [ $tries -gt 0 ]; do
		sleep 0.05
		tries=$((tries - 1))
	done
	gone "$1"
}

# What a process of the session sees of itself, printed from inside (the same text for the
# main command and an exec'd one): ids, capabilities, no_new_privs, seccomp, cgroups,
# namespaces, rlimits, the network's links and addresses.
SESSION_VIEW='grep -E "^(Uid|Gid|Groups|Cap[A-Za-z]+|NoNewPrivs|Seccomp|Seccomp_filters):" \
	/proc/self/status; cat /proc/self/cgroup; for n in mnt net pid user ipc uts cgroup; do
	readlink /proc/self/ns/$n; done; ulimit -a; ip -o link | cut -d" " -f2 | sed "s/@.*//"
	ip -o addr | tr -s " " | cut -d" " -f2-4'

# The main command of a session that writes its view to /tmp/main.view, then sleeps.
session_cmd() {
	echo "($SESSION_VIEW) >/tmp/main.tmp; mv /tmp/main.tmp /tmp/main.view; exec sleep 1000"
}

# exec_is_session NAME: an exec'd process in session NAME sees itself as its main command
# (session_cmd) did; and from the host, they share every namespace and cgroup.
exec_is_session() {
	local name=$1 init ep m
	m=$(mark)
	run hs exec "$name" -- sh -c "i=0; until [ -e /tmp/main.view ] || [ \$i = 100 ]; do
		sleep 0.05; i=\$((i + 1)); done; ($SESSION_VIEW) >/tmp/exec.view
		diff /tmp/main.view /tmp/exec.view && cat /tmp/exec.view"
	check_status 0
	echo "$output" >&2
	init=$(init_pid "$name")
	hs exec "$name" -- sleep "$m" 3>&- &
	track_pid $!
	wait_process_like "^sleep $m\$" || fail "the exec'd sleep never ran"
	ep=$(pgrep -xf "sleep $m")
	diff "/proc/$init/cgroup" "/proc/$ep/cgroup" || fail "not in the session's cgroups"
	for n in mnt net pid user ipc uts cgroup; do
		[ "$(readlink "/proc/$init/ns/$n")" = "$(readlink "/proc/$ep/ns/$n")" ] ||
			fail "not in the session's $n namespace"
	done
	kill "$ep"
}

# SESSION_NS: the mount namespaces of session NAME's init and of its supervisor (the scratch
# that holds its rootfs and throw-away layer), for mnt_ns_gone.
session_mnt_ns() {
	SESSION_NS=("$(readlink "/proc/$(init_pid "$1")/ns/mnt")"
		"$(readlink "/proc/$(sup_pid "$1")/ns/mnt")")
	[ -n "${SESSION_NS[0]}" ] && [ -n "${SESSION_NS[1]}" ]
}

# mnt_ns_gone NS...: no process is left in those mount namespaces (so their mounts, the
# overlay and the scratch tmpfs with its layer, are gone with them).
mnt_ns_gone() {
	local ns p tries=100
	for ns; do
		while [ $tries -gt 0 ]; do
			p=$(for f in /proc/[0-9]*/ns/mnt; do
				[ "$(readlink "$f" 2>/dev/null)" != "$ns" ] || echo "${f#/proc/}"
			done)
			[ -z "$p" ] && break
			sleep 0.05
			tries=$((tries - 1))
		done
		[ -z "$p" ] || fail "mount namespace $ns still held: ${p//\/ns\/mnt/}"
	done
}

# session_gone NAME PID: nothing of sandbox NAME, whose supervisor was PID, is left: name
# record, state, cgroups, an entry in ls, scratch mounts on the host.
session_gone() {
	local name=$1 pid=$2 d
	wait_gone "$pid" || fail "its supervisor $pid still runs"
	[ ! -e "$SB_NAMES/$name" ] || fail "name record $name left"
	[ ! -e "$SB_STATE/sb-$pid" ] || fail "state sb-$pid left"
	d=$(sb_cgroups "$pid")
	[ -z "$d" ] || fail "cgroups left: $d"
	! grep -qF " $SB_SCRATCH" /proc/self/mountinfo || fail "scratch mounts left"
	run hs ls --format json
	check_status 0
	jq -e --arg n "$name" 'all(.[]; .name != $n)' <<<"$output" >/dev/null ||
		fail "ls still lists $name"
}

# Name records of the test's (named after $TAG) left: said, removed, and a failure.
named_teardown() {
	local rc=0 f
	# (none before setup made the test's root and tag: a test skipped in setup; an empty
	# SB_NAMES or TAG would make this glob the host's /)
	for f in ${SB_NAMES:+${TAG:+"$SB_NAMES"/*"$TAG"*}}; do
		[ -e "$f" ] || continue
		echo "LEAK: name record $f left" >&2
		rc=1
		"$HUTCH" sandbox rm -f "${f##*/}" >/dev/null 2>&1
		rm -f "$f"
	done
	return $rc
}
