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
