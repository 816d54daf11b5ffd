#!/usr/bin/env bats
# hostname, domainname and sysctl: set inside the container's namespaces, refused when they
# would change the host.

load ../helpers

@test "hostname: hostname and domainname in a new UTS namespace" {
	local host_name host_domain
	host_name=$(cat /proc/sys/kernel/hostname)
	host_domain=$(cat /proc/sys/kernel/domainname)
	update_config '.hostname = "box-1" | .domainname = "example.org"'
	set_args sh -c 'hostname; cat /proc/sys/kernel/domainname'
	run_ok
	[ "${lines[0]}" = box-1 ]
	[ "${lines[1]}" = example.org ]
	[ "$(cat /proc/sys/kernel/hostname)" = "$host_name" ]
	[ "$(cat /proc/sys/kernel/domainname)" = "$host_domain" ]
}

@test "hostname: refused without a new UTS namespace" {
	remove_ns uts
	# the host's own name, so that a runtime that wrongly sets it changes nothing
	update_config '.hostname = $h' --arg h "$(cat /proc/sys/kernel/hostname)"
	run_bg create "$ID"
	[ "$status" -eq 1 ]
	[[ $output == *hostname* ]]
	assert_no_leftovers
}

@test "sysctl: namespaced keys are written inside, the host keeps its values" {
	local fwd msgmax
	fwd=$(cat /proc/sys/net/ipv4/ip_forward)
	msgmax=$(cat /proc/sys/kernel/msgmax)
	update_config '.linux.sysctl = {"net.ipv4.ip_forward": "1", "kernel.msgmax": "4321",
		"net.ipv4.ping_group_range": "0 2147483647"}'
	set_args cat /proc/sys/net/ipv4/ip_forward /proc/sys/kernel/msgmax /proc/sys/net/ipv4/ping_group_range
	run_ok
	[ "${lines[0]}" = 1 ]
	[ "${lines[1]}" = 4321 ]
	[ "$(echo ${lines[2]})" = "0 2147483647" ]
	[ "$(cat /proc/sys/net/ipv4/ip_forward)" = "$fwd" ]
	[ "$(cat /proc/sys/kernel/msgmax)" = "$msgmax" ]
}

@test "sysctl: user.* (ucount limits) in a new user namespace; refused without one" {
	update_config '.linux.namespaces += [{type: "user"}]
		| .linux.uidMappings = [{containerID: 0, hostID: 100000, size: 65536}]
		| .linux.gidMappings = [{containerID: 0, hostID: 100000, size: 65536}]
		| .linux.sysctl = {"user.max_inotify_instances": "5"}'
	set_args cat /proc/sys/user/max_inotify_instances
	run_ok
	[ "$output" = 5 ]
	[ "$(cat /proc/sys/user/max_inotify_instances)" -ge 128 ] # the host's: untouched
	update_config '.linux.namespaces -= [{type: "user"}] | del(.linux.uidMappings)
		| del(.linux.gidMappings)'
	run_bg create "$ID"
	[ "$status" -eq 1 ]
	[[ $output == *"user.max_inotify_instances needs a new user namespace"* ]]
	assert_no_leftovers
}

@test "sysctl: a key no namespace covers is refused" {
	# the host's current value, so that a runtime that wrongly writes it changes nothing
	update_config '.linux.sysctl = {"vm.swappiness": $v}' --arg v "$(cat /proc/sys/vm/swappiness)"
	run_bg create "$ID"
	[ "$status" -eq 1 ]
	[[ $output == *vm.swappiness* ]]
	assert_no_leftovers
}

@test "sysctl: net.* without a new network namespace is refused" {
	remove_ns network
	update_config '.linux.sysctl = {"net.ipv4.ip_forward": $v}' --arg v "$(cat /proc/sys/net/ipv4/ip_forward)"
	run_bg create "$ID"
	[ "$status" -eq 1 ]
	[[ $output == *net.ipv4.ip_forward* ]]
	assert_no_leftovers
}

@test "sysctl: kernel.hostname is refused (the hostname field owns it, as runc says)" {
	update_config '.linux.sysctl = {"kernel.hostname": "viasysctl"}'
	run_bg create "$ID"
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ $output == *kernel.hostname*"hostname field"* ]]
	assert_no_leftovers
}

@test "sysctl: kernel.domainname is written in the new uts namespace" {
	update_config '.linux.sysctl = {"kernel.domainname": "viasysctl"}'
	set_args cat /proc/sys/kernel/domainname
	run_ok
	[ "$output" = viasysctl ]
}
