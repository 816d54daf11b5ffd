#!/usr/bin/env bats
# linux.seccomp: the default profile and hand-written ones per action and operator, checked
# from inside the container by scprobe (helpers/scprobe.c, built static into the rootfs): an
# allowed call fails in the kernel on its bad argument (EBADF, EFAULT), a filtered one with
# the profile's errno. Also unknown syscall names, malformed profiles, NOTIFY with a listener
# (helpers/sclistener.c), the noNewPrivileges=false ordering and the compiled-filter cache.

load ../helpers

setup() {
	setup_bundle
	# Every test gets its own cache, so none touches /var/cache/hutch. Not under $TEST_DIR:
	# its name is the tag by which teardown finds leaked processes in every environment.
	SCCACHE=$(mktemp -d "${BATS_RUN_TMPDIR:-/tmp}/sccache.XXXXXX")
	export HUTCH_SECCOMP_CACHE=$SCCACHE/seccomp
	install_static_helper scprobe # the rootfs is busybox, without a libc
}

teardown() {
	unset HUTCH_SECCOMP_CACHE
	[ -z "${SCCACHE:-}" ] || rm -rf "$SCCACHE" # none: skipped in setup (rootless passes)
	teardown_bundle
}

# The built-in profile as OCI JSON for this bundle's capabilities (none that matter here).
# `hutch spec --seccomp` writes it; until the runtime has that option, seccomp/default-oci.jq
# resolves seccomp/default.json (moby's format) the way seccomp/sc-default.c does on x86_64.
default_profile() {
	local d
	d=$(mktemp -d "$TEST_DIR/spec.XXXXXX")
	if (cd "$d" && hutch spec --seccomp) >/dev/null 2>&1 && [ -f "$d/config.json" ] &&
		jq -e '.linux.seccomp.syscalls | length > 0' "$d/config.json" >/dev/null; then
		jq '.linux.seccomp' "$d/config.json"
		return
	fi
	[ "$(uname -m)" = x86_64 ] || skip "no hutch spec --seccomp, and the jq fallback is x86_64 only"
	jq -f "$INTEGRATION_ROOT/../../seccomp/default-oci.jq" "$INTEGRATION_ROOT/../../seccomp/default.json"
}

set_seccomp() {
	update_config '.linux.seccomp = $p' --argjson p "$1"
}

# A profile allowing everything but getppid, which gets ACTION (and errnoRet when given).
getppid_profile() {
	jq -n --arg a "$1" --argjson e "${2:-null}" '{defaultAction: "SCMP_ACT_ALLOW",
		syscalls: [{names: ["getppid"], action: $a} + (if $e then {errnoRet: $e} else {} end)]}'
}

# A profile allowing everything but NAME with one condition: ERRNO(EDOM) when it holds.
op_profile() {
	local name=$1 args=$2
	jq -n --arg n "$name" --argjson args "$args" '{defaultAction: "SCMP_ACT_ALLOW",
		syscalls: [{names: [$n], action: "SCMP_ACT_ERRNO", errnoRet: 33, args: $args}]}'
}

probe() {
	set_args scprobe "$@"
	run hutch run "$ID"
	echo "$output"
}

@test "seccomp: the default profile, as a syscall matrix inside the container" {
	set_seccomp "$(default_profile)"
	probe getppid=OK read/-1/0/0=EBADF write/-1/0/0=EBADF close/100000=EBADF \
		getcwd/1/100=EFAULT uname/1=EFAULT mkdirat/-100/0/0=EFAULT \
		ioctl/-1/0x5401=EBADF ioctl/-1/0x80005412=EBADF \
		ioctl/-1/0x5412=EPERM ioctl/-1/0x100005412=EPERM ioctl/-1/0xffffffff0000541c=EPERM \
		ioctl/-1/0x541c=EPERM \
		socket/1/0xffff/0=EINVAL socket/40/1/0=EPERM socket/38/5/0=EPERM \
		socket/0x100000028/1/0=EPERM \
		mount/0/0/0/0/0=EPERM umount2/0/0=EPERM unshare/0x20000=EPERM setns/-1/0=EPERM \
		keyctl/0=EPERM add_key/0=EPERM request_key/0=EPERM bpf/0/0/0=EPERM \
		userfaultfd/0=EPERM io_uring_setup/1/0=EPERM kexec_load/0/0/0/0=EPERM \
		ptrace/0=EPERM personality/6=EPERM personality/0xffffffff=OK \
		clone/0x20011/0/0/0/0=EPERM clone3/0/0=ENOSYS 1000=ENOSYS \
		acct/0=EPERM reboot/0/0/0/0=EPERM chroot/1=EPERM open_by_handle_at/-1/0/0=EPERM \
		perf_event_open/0/0/0/0/0=EPERM init_module/0/0/0=EPERM
	check_status 0
}

@test "seccomp: noNewPrivileges=false loads the filter while CAP_SYS_ADMIN is still held" {
	set_seccomp "$(default_profile)"
	update_config '.process.noNewPrivileges = false'
	probe getppid=OK mount/0/0/0/0/0=EPERM 1000=ENOSYS
	check_status 0
	[ "$(grep -c '^ok' <<<"$output")" -eq 3 ]
}

@test "seccomp: SCMP_ACT_ERRNO with errnoRet" {
	set_seccomp "$(getppid_profile SCMP_ACT_ERRNO 33)"
	probe getppid=EDOM getpid=OK
	check_status 0
}

# The runtime cuts the profile's bytes out of config.json unparsed; text it cannot vouch for
# goes through the ordinary parser, with the same result.
@test "seccomp: the profile applies in config.json with a comment, or written compactly" {
	set_seccomp "$(getppid_profile SCMP_ACT_ERRNO 33)"
	set_args scprobe getppid=EDOM getpid=OK
	sed -i '1s|^|/* yajl allows comments */ |' "$BUNDLE/config.json"
	run hutch run "$ID"
	check_status 0
	sed -i '1s|^/\* yajl allows comments \*/ ||' "$BUNDLE/config.json"
	set_args scprobe getppid=ERANGE getpid=OK
	update_config -c '.linux.seccomp.syscalls[0].errnoRet = 34'
	run hutch run "$ID"
	check_status 0
}

@test "seccomp: SCMP_ACT_KILL_PROCESS, KILL_THREAD and KILL end the process with SIGSYS" {
	local a
	for a in SCMP_ACT_KILL_PROCESS SCMP_ACT_KILL_THREAD SCMP_ACT_KILL; do
		set_seccomp "$(getppid_profile $a)"
		probe getpid=OK getppid=OK
		check_status 159 # 128 + SIGSYS
		[[ $output == *"ok getpid"* ]]
	done
}

@test "seccomp: SCMP_ACT_TRAP raises SIGSYS" {
	set_seccomp "$(getppid_profile SCMP_ACT_TRAP)"
	set_args scprobe --trap getppid=OK
	run hutch run "$ID"
	check_status 0
	[ "$output" = "trapped $(printf '%d' 110) code 1" ] # x86_64 getppid, SYS_SECCOMP
}

@test "seccomp: SCMP_ACT_TRACE without a tracer gives ENOSYS, SCMP_ACT_LOG lets it through" {
	set_seccomp "$(getppid_profile SCMP_ACT_TRACE 5)"
	probe getppid=ENOSYS
	check_status 0
	set_seccomp "$(getppid_profile SCMP_ACT_LOG)"
	probe getppid=OK
	check_status 0
}

@test "seccomp: a denying default with an allow list; new syscalls get ENOSYS" {
	set_seccomp "$(jq -n '{defaultAction: "SCMP_ACT_ERRNO", defaultErrnoRet: 34,
		syscalls: [{names: ["execve", "brk", "arch_prctl", "set_tid_address",
			"set_robust_list", "rseq", "prlimit64", "readlink", "readlinkat", "mprotect",
			"getrandom", "exit_group", "exit", "write", "writev", "close", "newfstatat",
			"fstat", "rt_sigaction", "rt_sigprocmask", "mmap", "munmap", "uname", "futex",
			"getppid", "dup"], action: "SCMP_ACT_ALLOW"}]}')"
	probe getppid=OK dup/999=EBADF getpid=ERANGE mkdir/0/0=ERANGE 1000=ENOSYS
	check_status 0
}

@test "seccomp: every comparison operator" {
	local cases=(
		'[{"index":0,"value":1000,"op":"SCMP_CMP_EQ"}]|dup/1000=EDOM|dup/1001=EBADF'
		'[{"index":0,"value":1000,"op":"SCMP_CMP_NE"}]|dup/1001=EDOM|dup/1000=EBADF'
		'[{"index":0,"value":1000,"op":"SCMP_CMP_LT"}]|dup/999=EDOM|dup/1000=EBADF'
		'[{"index":0,"value":1000,"op":"SCMP_CMP_LE"}]|dup/1000=EDOM|dup/1001=EBADF'
		'[{"index":0,"value":1000,"op":"SCMP_CMP_GT"}]|dup/1001=EDOM|dup/1000=EBADF'
		'[{"index":0,"value":1000,"op":"SCMP_CMP_GE"}]|dup/1000=EDOM|dup/999=EBADF'
		'[{"index":0,"value":65280,"valueTwo":4608,"op":"SCMP_CMP_MASKED_EQ"}]|dup/0x1234=EDOM|dup/0x1334=EBADF'
		# Two conditions on one argument mean OR (runc's reading).
		'[{"index":0,"value":1000,"op":"SCMP_CMP_EQ"},{"index":0,"value":2000,"op":"SCMP_CMP_EQ"}]|dup/2000=EDOM|dup/1500=EBADF'
	)
	local c args yes no
	for c in "${cases[@]}"; do
		IFS='|' read -r args yes no <<<"$c"
		set_seccomp "$(op_profile dup "$args")"
		probe "$yes" "$no"
		check_status 0
	done
	# On different arguments, AND.
	set_seccomp "$(op_profile dup3 '[{"index":0,"value":1000,"op":"SCMP_CMP_EQ"},
		{"index":1,"value":5,"op":"SCMP_CMP_EQ"}]')"
	probe dup3/1000/5/0=EDOM dup3/1000/6/0=EBADF dup3/999/5/0=EBADF
	check_status 0
}

@test "seccomp: unknown syscall names are skipped in allow rules, refused in deny rules" {
	set_seccomp "$(default_profile | jq '.syscalls[0].names += ["no_such_call"]')"
	probe getppid=OK
	check_status 0

	set_seccomp "$(jq -n '{defaultAction: "SCMP_ACT_ALLOW", syscalls: [{names: ["getppid",
		"no_such_call"], action: "SCMP_ACT_ERRNO"}]}')"
	run hutch run "$ID"
	[ "$status" -ne 0 ]
	[[ $output == *"linux.seccomp.syscalls[0].names[1]: unknown syscall no_such_call in a rule that denies while the default action allows"* ]]
	cd / # the check's own subshells must not count as processes in $TEST_DIR
	assert_no_leftovers
}

@test "seccomp: malformed profiles fail with the field that is wrong" {
	local cases=(
		'{"defaultAction":"SCMP_ACT_ALLOW","architectures":["SCMP_ARCH_VAX"]}|linux.seccomp.architectures[0]: unknown architecture SCMP_ARCH_VAX'
		'{"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":["getpid"],"action":"SCMP_ACT_NOPE"}]}|linux.seccomp.syscalls[0].action: unknown action SCMP_ACT_NOPE'
		'{"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":["dup"],"action":"SCMP_ACT_ERRNO","args":[{"index":0,"value":1,"op":"SCMP_CMP_XX"}]}]}|linux.seccomp.syscalls[0].args[0].op: unknown operator SCMP_CMP_XX'
		'{"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":["dup"],"action":"SCMP_ACT_ERRNO","args":[{"index":6,"value":1,"op":"SCMP_CMP_EQ"}]}]}|linux.seccomp.syscalls[0].args[0].index: 6 out of range 0..5'
		'{"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":["mkdir"],"action":"SCMP_ACT_NOTIFY"}]}|linux.seccomp.syscalls[0]: SCMP_ACT_NOTIFY needs listenerPath'
		'{"defaultAction":"SCMP_ACT_ALLOW","listenerPath":"/x.sock","syscalls":[{"names":["write"],"action":"SCMP_ACT_NOTIFY"}]}|linux.seccomp.syscalls[0]: SCMP_ACT_NOTIFY on write is not supported'
	)
	local c json want
	for c in "${cases[@]}"; do
		IFS='|' read -r json want <<<"$c"
		set_seccomp "$json"
		run hutch run "$ID"
		[ "$status" -ne 0 ]
		[[ $output == *"$want"* ]] || {
			echo "want: $want" >&2
			false
		}
	done
	cd / # the check's own subshells must not count as processes in $TEST_DIR
	assert_no_leftovers
}

# The parent compiles (or finds) the filter while the init sets up and sends it over the sync
# socket; with prestart or createRuntime hooks on that socket it does so before the clone.
# Either way the same filter applies, and a failure of either side is the one reported.
@test "seccomp: the filter arrives with and without prestart hooks; errors on both sides" {
	set_seccomp "$(getppid_profile SCMP_ACT_ERRNO 33)"
	probe getppid=EDOM getpid=OK
	check_status 0
	update_config '.hooks.prestart = [{path: "/bin/true"}]'
	probe getppid=EDOM getpid=OK
	check_status 0
	# The init fails before it takes the filter: its error, not a broken pipe.
	update_config 'del(.hooks) | .process.args = ["/no/such/binary"]'
	run hutch run "$ID"
	[ "$status" -ne 0 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ $output == *"/no/such/binary"*"no such file"* ]]
	# The profile is bad and the init is fine: the profile's error, and nothing left.
	set_seccomp '{"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":["dup"],"action":"SCMP_ACT_NOPE"}]}'
	set_args true
	run hutch run "$ID"
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ $output == *"linux.seccomp.syscalls[0].action: unknown action SCMP_ACT_NOPE"* ]]
	cd /
	assert_no_leftovers
}

# The init's effective capabilities, no_new_privs and seccomp mode, from its /proc status.
init_status() {
	grep -E '^(Seccomp|NoNewPrivs|CapEff):' "/proc/$1/status" | awk '{ printf "%s%s ", $1, $2 }'
}

@test "seccomp: without startContainer hooks the init takes the filter at create; with them, at start" {
	set_seccomp "$(getppid_profile SCMP_ACT_ERRNO 33)"
	update_config '.process.user = {uid: 1000, gid: 1000}'
	set_args sleep 100
	run_bg create --pid-file "$TEST_DIR/pid" "$ID"
	check_status 0
	local pid
	pid=$(cat "$TEST_DIR/pid")
	local final="CapEff:0000000020000420 NoNewPrivs:1 Seccomp:2 " # the bundle's capabilities
	run init_status "$pid"
	[ "$output" = "$final" ]
	run hutch start "$ID"
	check_status 0
	run hutch delete --force "$ID"
	check_status 0
	pid_gone "$pid"

	update_config '.hooks.startContainer = [{path: "/bin/true"}]'
	run_bg create --pid-file "$TEST_DIR/pid" "$ID"
	check_status 0
	pid=$(cat "$TEST_DIR/pid")
	run init_status "$pid"
	[[ $output == *" NoNewPrivs:0 Seccomp:0 " ]] # at start, just before the hook
	run hutch start "$ID"
	check_status 0
	run init_status "$pid" # sleep now, as uid 1000: no capabilities left after execve
	[ "$output" = "CapEff:0000000000000000 NoNewPrivs:1 Seccomp:2 " ]
}

@test "seccomp: a profile that denies openat takes the filter at start, after exec.fifo" {
	set_seccomp "$(jq -n '{defaultAction: "SCMP_ACT_ALLOW",
		syscalls: [{names: ["openat", "open"], action: "SCMP_ACT_ERRNO", errnoRet: 33}]}')"
	set_args sh -c 'cat /etc/passwd; echo "cat: $?"'
	run hutch run "$ID"
	check_status 0
	[[ $output == *"cat: can't open '/etc/passwd': Numerical argument out of domain"* ]]
	[[ $output == *"cat: 1"* ]]
}

@test "seccomp: SCMP_ACT_NOTIFY sends the notify fd and the state to listenerPath" {
	local sock=$TEST_DIR/listener.sock state=$TEST_DIR/listener.state lst
	lst=$(helper_bin sclistener)
	"$lst" "$sock" "$state" 18 2>"$TEST_DIR/listener.log" & # mkdir -> EXDEV
	track_pid $!
	for _ in $(seq 50); do [ -S "$sock" ] && break; sleep 0.02; done
	set_seccomp "$(jq -n --arg s "$sock" '{defaultAction: "SCMP_ACT_ALLOW", listenerPath: $s,
		listenerMetadata: "hello", syscalls: [{names: ["mkdir", "mkdirat"],
		action: "SCMP_ACT_NOTIFY"}]}')"
	set_args sh -c 'mkdir /tmp/a; echo "rc=$?"; mkdir /tmp/b 2>/dev/null; echo done'
	run hutch run "$ID"
	if [[ $output == *"sc_load_listener"* ]]; then
		skip "the runtime does not pass the notify fd to the listener yet"
	fi
	check_status 0
	[[ $output == *"Invalid cross-device link"* ]]
	[[ $output == *"rc=1"* ]]
	jq -e --arg id "$ID" '.fds == ["seccompFd"] and .metadata == "hello" and .pid > 0 and
		.state.id == $id and .ociVersion != null' "$state"
}

@test "seccomp: SCMP_ACT_NOTIFY on exec: the exec'd process's notify fd goes to listenerPath" {
	local sock=$TEST_DIR/listener.sock state=$TEST_DIR/listener.state lst
	lst=$(helper_bin sclistener)
	"$lst" "$sock" "$state" 18 2>"$TEST_DIR/listener.log" 3>&- &
	track_pid $!
	for _ in $(seq 50); do [ -S "$sock" ] && break; sleep 0.02; done
	set_seccomp "$(jq -n --arg s "$sock" '{defaultAction: "SCMP_ACT_ALLOW", listenerPath: $s,
		listenerMetadata: "m", syscalls: [{names: ["mkdir", "mkdirat"],
		action: "SCMP_ACT_NOTIFY"}]}')"
	set_args sleep 100
	run_bg run -d "$ID"
	check_status 0
	run hutch exec "$ID" sh -c 'mkdir /tmp/a; echo "rc=$?"'
	check_status 0
	[[ $output == *"Invalid cross-device link"* ]]
	[[ $output == *"rc=1"* ]]
	local init
	init=$(state_field "$ID" .pid)
	# The init's at create, then the exec'd process's: its own pid, the container's state.
	jq -e --arg id "$ID" --argjson init "$init" '.fds == ["seccompFd"] and .metadata == "m"
		and .pid != $init and .pid > 0 and .state.id == $id and .state.pid == $init
		and .state.status == "running"' "$state.2"
}

@test "seccomp: the compiled-filter cache is filled, hit, repaired and not trusted when writable" {
	local cache=$HUTCH_SECCOMP_CACHE entries inos e
	set_seccomp "$(default_profile)"
	set_args scprobe getppid=OK mount/0/0/0/0/0=EPERM
	run_ok
	[ "$(stat -c %a "$cache")" = 700 ]
	# Two keys: the profile's own bytes (a hit parses nothing) and the parsed config.
	entries=$(ls "$cache"/*.bpf)
	[ "$(echo "$entries" | wc -l)" -eq 2 ]
	for e in $entries; do [ "$(stat -c %a "$e")" = 600 ]; done
	inos=$(stat -c %i $entries)
	run_ok # a hit: no entry is rewritten
	[ "$(stat -c %i $entries)" = "$inos" ]

	# The same profile written differently: a new key for the bytes, the config's entry hit.
	jq -c . "$BUNDLE/config.json" >"$TEST_DIR/compact" && mv "$TEST_DIR/compact" "$BUNDLE/config.json"
	run_ok
	[ "$(ls "$cache"/*.bpf | wc -l)" -eq 3 ]
	[ "$(stat -c %i $entries)" = "$inos" ]

	truncate -s 100 "$cache"/*.bpf # corrupt: compiled again, both keys' entries replaced
	run_ok
	[ "$(find "$cache" -name '*.bpf' -size +100c | wc -l)" -eq 2 ]
	[ "$(stat -c %i $entries)" != "$inos" ]

	# The entries' secret: made once, ours alone.
	[ "$(stat -c %a:%s:%u "$cache/key")" = 600:32:0 ]
	rm "$cache"/* # a directory others can write is neither read nor written
	chmod 777 "$cache"
	run_ok
	[ -z "$(ls "$cache")" ]

	export HUTCH_SECCOMP_CACHE=off
	rm -rf "$cache"
	run_ok
	[ ! -e "$cache" ]
}
