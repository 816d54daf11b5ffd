# SPDX-License-Identifier: Apache-2.0
# seccomp/default.json (moby's profile format) -> OCI linux.seccomp, for x86_64 and a process
# without any of the capabilities the profile conditions on: what sc_default_profile_oci(0)
# returns, for the tests and bench/seccomp.sh until `hutch spec --seccomp` exists.
# Usage: jq -f seccomp/default-oci.jq seccomp/default.json
def bit($v; $i): (($v / pow(2; $i)) | floor) % 2;
def split($prefix; $depth; $vals):
	if ($vals | length) == 0 then
		[{mask: (if $depth == 0 then 0 else 4294967296 - pow(2; 32 - $depth) end),
		  value: $prefix}]
	elif $depth == 32 then []
	else
		split($prefix; $depth + 1; $vals | map(select(bit(.; 31 - $depth) == 0))) +
		split($prefix + pow(2; 31 - $depth); $depth + 1;
			$vals | map(select(bit(.; 31 - $depth) == 1)))
	end;
{defaultAction, defaultErrnoRet,
 architectures: (["SCMP_ARCH_X86_64"] + (.archMap[] |
	select(.architecture == "SCMP_ARCH_X86_64") | .subArchitectures)),
 syscalls: [.syscalls[]
	| select(.includes.arches == null or (.includes.arches | index("amd64")))
	| select((.excludes.arches // []) | index("amd64") | not)
	| select((.includes.caps // []) | length == 0)
	| if .exceptValues32 then
		. as $r | split(0; 0; $r.exceptValues32.values | sort)[] |
		{names: $r.names, action: $r.action, args: [{index: $r.exceptValues32.index,
			value: .mask, valueTwo: .value, op: "SCMP_CMP_MASKED_EQ"}]}
	  else {names, action} + (if .errnoRet then {errnoRet} else {} end) +
		(if .args then {args} else {} end) end]}
