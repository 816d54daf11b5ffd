# SPDX-License-Identifier: Apache-2.0
# Shared set-up for the bench scripts (sourced, not run): the work directory, the drivers
# built from bench/*.c, one busybox rootfs with a bundle per variant, and the wrapper that
# makes a hybrid cgroup host look like plain v1 to every runtime (crun 1.8 refuses hybrid).
# After `bench_setup`: $hutch $work $bin $rootfs $st (state roots, on tmpfs) $own (our
# cgroup) $W (the wrapper, empty on a host that is not hybrid).

# shellcheck shell=bash
bench_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$bench_dir")

bench_setup()
{
	hutch=$(readlink -f "${HUTCH:-$repo/build/runtime/hutch}")
	[ -x "$hutch" ] || {
		echo "bench: no hutch at $hutch (build it, or set HUTCH)" >&2
		exit 1
	}
	for t in jq crun runc bwrap unshare cc; do
		command -v "$t" >/dev/null || {
			echo "bench: $t missing: run bench/install-deps.sh" >&2
			exit 1
		}
	done
	work=$(mktemp -d /tmp/hutch-bench.XXXXXX)
	chmod 755 "$work"
	# State roots on tmpfs, as /run is on a usual host: on ext4 each run's state dir, fifo
	# and state.json cost inode allocation that no runtime pays in production.
	st=$(mktemp -d /dev/shm/hutch-bench-state.XXXXXX)
	bin=$work/bin
	mkdir -p "$bin" "$work/b"
	trap bench_cleanup EXIT
	for c in interleave throughput peakrss; do
		cc -O2 -Wall -o "$bin/$c" "$bench_dir/$c.c"
	done
	for c in floor v1only; do
		cc -O2 -static -Wall -o "$bin/$c" "$bench_dir/$c.c"
	done
	# Our cgroup: the longest of our paths (the memory one here), where test cgroups belong.
	own=$(awk -F: '{ if (length($3) > length(m)) m = $3 } END { print (m == "/" ? "" : m) }' \
		/proc/self/cgroup)
	W=""
	if grep -q ' /sys/fs/cgroup/unified .*cgroup2' /proc/self/mountinfo; then
		W=$bin/v1only
	fi
	"$repo/tests/mkbundle.sh" "$hutch" "$work/base" /bin/true >/dev/null
	rootfs=$work/base/rootfs
	# Seccomp compiled-filter cache of our own, warmed below, so hits are hits.
	export HUTCH_SECCOMP_CACHE=$work/sc-cache
	bench_seccomp_profile
}

# bench_bundle NAME [JQ-FILTER]: $work/b/NAME from the base config, with a cgroup of its own
# beneath ours (absolute: crun reads a relative path from the hierarchy root). The filter may
# use $p[0], the default seccomp profile. Written compact, as podman and containerd write it.
bench_bundle()
{
	local name=$1 filter=${2:-.}
	mkdir -p "$work/b/$name"
	jq -c --arg r "$rootfs" --arg cg "$own/hbench-$name" --slurpfile p "$work/profile.json" \
		".root.path = \$r | .linux.cgroupsPath = \$cg | .ociVersion = \"1.0.2-dev\" | $filter" \
		"$work/base/config.json" >"$work/b/$name/config.json"
}

# The built-in default profile as OCI JSON, the same for every runtime.
bench_seccomp_profile()
{
	local out=$work/profile.json
	mkdir -p "$work/spec"
	if (cd "$work/spec" && "$hutch" spec --seccomp) >/dev/null 2>&1 &&
		jq -e '.linux.seccomp.syscalls | length > 0' "$work/spec/config.json" >/dev/null; then
		jq '.linux.seccomp' "$work/spec/config.json" >"$out"
	else
		jq -f "$repo/seccomp/default-oci.jq" "$repo/seccomp/default.json" >"$out"
	fi
}

# Every runtime by its short name: the command that runs a bundle (under the wrapper).
bench_rt()
{
	case $1 in
	hutch) echo "$W $hutch" ;;
	crun) echo "$W crun" ;;
	runc) echo "$W runc" ;;
	*) return 1 ;;
	esac
}

# Cgroups named hbench-* beneath ours, in every hierarchy (leaks, or left by an OOM kill).
bench_cgroups()
{
	local h
	for h in /sys/fs/cgroup/*/; do
		[ -d "$h${own#/}" ] && find "$h${own#/}" -mindepth 1 -maxdepth 2 -type d \
			-name 'hbench-*' 2>/dev/null
	done
	return 0
}

bench_rm_cgroups()
{
	bench_cgroups | sort -r | while read -r d; do
		find "$d" -depth -type d -exec rmdir {} + 2>/dev/null || true
	done
}

bench_cleanup()
{
	# State roots are $st/RUNTIME.CASE: delete what any of them still holds.
	local r rt
	for r in "${st:-/nonexistent}"/*; do
		[ -d "$r" ] || continue
		rt=$(bench_rt "$(basename "${r%%.*}")") || continue
		$rt --root "$r" list -q 2>/dev/null | while read -r id; do
			$rt --root "$r" delete -f "$id" >/dev/null 2>&1 || true
		done
	done
	bench_rm_cgroups
	[ -n "${st:-}" ] && rm -rf --one-file-system "$st"
	[ -n "${work:-}" ] && rm -rf --one-file-system "$work"
}
