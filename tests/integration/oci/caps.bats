#!/usr/bin/env bats
# Capabilities: the five sets exactly as configured, what they allow, and ambient
# capabilities across the switch to a non-root user.

load ../helpers

# Bit numbers of the capabilities these tests use (linux/capability.h).
declare -gA CAP=([CAP_CHOWN]=0 [CAP_DAC_OVERRIDE]=1 [CAP_FOWNER]=3 [CAP_KILL]=5 [CAP_SETGID]=6
	[CAP_SETUID]=7 [CAP_SETPCAP]=8 [CAP_NET_BIND_SERVICE]=10 [CAP_NET_RAW]=13
	[CAP_SYS_CHROOT]=18 [CAP_SYS_ADMIN]=21 [CAP_MKNOD]=27 [CAP_AUDIT_WRITE]=29 [CAP_SETFCAP]=31)

# The /proc/PID/status hex mask of a JSON list of capability names.
cap_mask() {
	local name mask=0
	for name in $(jq -r '.[]' <<<"$1"); do
		[ -n "${CAP[$name]:-}" ] || { echo "cap_mask: add $name to CAP" >&2; return 1; }
		mask=$((mask | (1 << ${CAP[$name]})))
	done
	printf '%016x\n' "$mask"
}

# Compares every set the process reported in $output with process.capabilities.
check_sets() {
	local set field
	for set in inheritable permitted effective bounding ambient; do
		case $set in
		inheritable) field=CapInh ;; permitted) field=CapPrm ;; effective) field=CapEff ;;
		bounding) field=CapBnd ;; ambient) field=CapAmb ;;
		esac
		local want got
		want=$(cap_mask "$(jq -c ".process.capabilities.$set // []" "$BUNDLE/config.json")")
		got=$(awk -v f="$field:" '$1 == f { print $2 }' <<<"$output")
		echo "$set: want $want got $got"
		[ "$want" = "$got" ]
	done
}

@test "caps: the default sets are exactly the configured ones" {
	set_args grep ^Cap /proc/self/status
	run_ok
	check_sets
}

@test "caps: custom sets, each one different" {
	update_config '.process.capabilities = {
		bounding: ["CAP_CHOWN", "CAP_KILL", "CAP_SETUID", "CAP_SETGID", "CAP_NET_BIND_SERVICE", "CAP_SYS_CHROOT"],
		permitted: ["CAP_CHOWN", "CAP_KILL", "CAP_NET_BIND_SERVICE"],
		effective: ["CAP_CHOWN", "CAP_KILL"],
		inheritable: ["CAP_NET_BIND_SERVICE"],
		ambient: ["CAP_NET_BIND_SERVICE"]}'
	set_args grep ^Cap /proc/self/status
	run_ok
	# after execve, root keeps its permitted set as effective; check the others exactly
	local bnd inh amb
	bnd=$(awk '$1 == "CapBnd:" { print $2 }' <<<"$output")
	inh=$(awk '$1 == "CapInh:" { print $2 }' <<<"$output")
	amb=$(awk '$1 == "CapAmb:" { print $2 }' <<<"$output")
	[ "$bnd" = "$(cap_mask '["CAP_CHOWN", "CAP_KILL", "CAP_SETUID", "CAP_SETGID", "CAP_NET_BIND_SERVICE", "CAP_SYS_CHROOT"]')" ]
	[ "$inh" = "$(cap_mask '["CAP_NET_BIND_SERVICE"]')" ]
	[ "$amb" = "$(cap_mask '["CAP_NET_BIND_SERVICE"]')" ]
}

@test "caps: without CAP_CHOWN chown fails, with it it works" {
	add_tmpfs /scratch
	set_args sh -c 'touch /scratch/f && chown 1000 /scratch/f && echo chowned'
	run hutch run "$ID"
	[[ $output == *"Operation not permitted"* ]]
	update_config '.process.capabilities |= with_entries(.value += ["CAP_CHOWN"])'
	run_ok
	[ "$output" = chowned ]
}

@test "caps: without CAP_SYS_ADMIN mount fails, with it it works" {
	set_args sh -c 'mount -t tmpfs none /mnt && echo mounted'
	run hutch run "$ID"
	[ "$status" -ne 0 ]
	update_config '.process.capabilities |= with_entries(.value += ["CAP_SYS_ADMIN"])'
	run_ok
	[ "$output" = mounted ]
}

@test "caps: ambient capabilities survive the switch to a non-root user" {
	update_config '.process.user = {uid: 1000, gid: 1000}
		| .process.capabilities = {bounding: ["CAP_NET_BIND_SERVICE", "CAP_KILL"],
			permitted: ["CAP_NET_BIND_SERVICE"], effective: ["CAP_NET_BIND_SERVICE"],
			inheritable: ["CAP_NET_BIND_SERVICE"], ambient: ["CAP_NET_BIND_SERVICE"]}'
	set_args grep ^Cap /proc/self/status
	run_ok
	local want
	want=$(cap_mask '["CAP_NET_BIND_SERVICE"]')
	grep -qx "CapEff:	$want" <<<"$output"
	grep -qx "CapPrm:	$want" <<<"$output"
	grep -qx "CapAmb:	$want" <<<"$output"
	grep -qx "CapBnd:	$(cap_mask '["CAP_NET_BIND_SERVICE", "CAP_KILL"]')" <<<"$output"
}

@test "caps: a non-root user without ambient capabilities has none" {
	update_config '.process.user = {uid: 1000, gid: 1000}'
	set_args grep ^Cap /proc/self/status
	run_ok
	grep -qx "CapEff:	0000000000000000" <<<"$output"
	grep -qx "CapPrm:	0000000000000000" <<<"$output"
	grep -qx "CapBnd:	$(cap_mask "$(jq -c .process.capabilities.bounding "$BUNDLE/config.json")")" <<<"$output"
}

# runc's own `spec` lists ambient capabilities that are not inheritable; the kernel cannot
# raise those, and runc and crun skip them silently. So does hutch; --debug names them.
@test "caps: ambient capabilities that are not inheritable are skipped, named under --debug" {
	update_config '.process.capabilities = {bounding: ["CAP_KILL", "CAP_NET_BIND_SERVICE"],
		permitted: ["CAP_KILL", "CAP_NET_BIND_SERVICE"], effective: ["CAP_KILL"],
		inheritable: ["CAP_NET_BIND_SERVICE"], ambient: ["CAP_KILL", "CAP_NET_BIND_SERVICE"]}'
	set_args grep ^CapAmb /proc/self/status
	run_ok
	[ "$output" = "CapAmb:	$(cap_mask '["CAP_NET_BIND_SERVICE"]')" ]
	run hutch --debug run "$ID-debug"
	check_status 0
	grep -qx "CapAmb:	$(cap_mask '["CAP_NET_BIND_SERVICE"]')" <<<"$output"
	[[ $output == *"process.capabilities.ambient: CAP_KILL is not both permitted and inheritable"*"ignoring, as runc does"* ]]
	! [[ $output == *"CAP_NET_BIND_SERVICE is not"* ]]
}

# runc's own default config, as `runc spec` writes it, runs without a word on stderr.
@test "caps: runc spec's config runs without a warning" {
	command -v runc >/dev/null || skip "runc is not installed"
	(cd "$BUNDLE" && rm config.json && runc spec)
	update_config '.process.terminal = false | .process.args = ["true"]'
	hutch run "$ID" 2>"$TEST_DIR/stderr"
	[ ! -s "$TEST_DIR/stderr" ] || { cat "$TEST_DIR/stderr"; false; }
}
