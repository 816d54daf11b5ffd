# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# A debootstrap'd Debian 12 (minbase), made once per machine and kept in a cache directory
# outside every test's own (HUTCH_IT_CACHE, default /var/cache/hutch-it), under a lock so that
# files running at once make it once. Tests read it as an image and never change it.
#   debootstrap_image: prints its path, or fails (the mirror unreachable, no debootstrap).

debootstrap_image() {
	local cache=${HUTCH_IT_CACHE:-/var/cache/hutch-it} dir mirror
	dir=$cache/bookworm-minbase
	mkdir -p "$cache"
	(
		flock 9
		[ -e "$dir/.complete" ] && exit 0
		command -v debootstrap >/dev/null || { echo "debootstrap missing" >&2; exit 1; }
		# The mirror apt itself uses (the machine may reach no other).
		mirror=$(awk '/^URIs:/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources \
			2>/dev/null)
		mirror=${mirror:-http://deb.debian.org/debian}
		rm -rf "$dir.tmp"
		debootstrap --variant=minbase bookworm "$dir.tmp" "$mirror" >"$cache/debootstrap.log" 2>&1 ||
			{ tail -5 "$cache/debootstrap.log" >&2; exit 1; }
		chmod 755 "$dir.tmp"
		rm -rf "$dir"
		mv "$dir.tmp" "$dir"
		touch "$dir/.complete"
	) 9>"$cache/.lock" || return 1
	echo "$dir"
}
