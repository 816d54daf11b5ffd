# SPDX-License-Identifier: Apache-2.0
# Sourced by the integration and client test helpers.

# The directory of this shell's own cgroup in every mounted hierarchy (v1 and v2): the places
# where a relative cgroups path lands.
own_cgroup_dirs() {
	awk '
	FNR == NR {
		i = index($0, ":"); rest = substr($0, i + 1)
		j = index(rest, ":"); ctl = substr(rest, 1, j - 1)
		path[ctl] = substr(rest, j + 1)
		next
	}
	{
		for (i = 7; $i != "-"; i++) {}
		fstype = $(i + 1); split($(i + 3), opts, ",")
		root = $4; mp = $5
		if (fstype == "cgroup2" && ("" in path))
			print mp rel(path[""], root)
		if (fstype != "cgroup")
			next
		for (c in path) {
			if (c == "")
				continue
			split(c, first, ",")
			for (k in opts)
				if (opts[k] == first[1])
					print mp rel(path[c], root)
		}
	}
	function rel(p, root) {
		if (root != "/" && index(p, root) == 1)
			p = substr(p, length(root) + 1)
		return p == "/" ? "" : p
	}' /proc/self/cgroup /proc/self/mountinfo | sort -u
}

# own_cgroup_dirs, and where a delegated runtime puts the same path in the plain directories
# of the /sys/fs/cgroup tmpfs (an unmounted controller's, which runsc fills as if it were
# mounted): the places to look for what a sandbox (hutch-sb-PID) left.
own_sb_cgroup_dirs() {
	local d own
	{
		own_cgroup_dirs
		[ "$(stat -f -c %T /sys/fs/cgroup 2>/dev/null)" = tmpfs ] || exit 0
		# hutch's sandboxes go beneath the longest of its own cgroups (cg_own_common)
		own=$(cut -d: -f3- /proc/self/cgroup | awk 'length($0) > length(l) { l = $0 } END { print l }')
		for d in /sys/fs/cgroup/*; do
			[ -d "$d" ] && [ ! -L "$d" ] && ! mountpoint -q "$d" && [ -d "$d$own" ] &&
				echo "$d${own%/}"
		done
	} | sort -u
}
