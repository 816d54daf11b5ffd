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

# agent_image: the agent image of the migration the image-config tests retrace, built once per
# machine with `hutch image build` into a store of the cache's own (HUTCH_IT_CACHE/agent-store):
# the debootstrap'd Debian, python3-venv, a venv at /opt/venv first on PATH, agent.py as the
# Entrypoint (found through that PATH), a Cmd, the WorkingDir /srv and User 1234. Prints
# "STORE NAME:TAG". $HUTCH builds it; a build of the same inputs is a cache hit.
AGENT_PATH=/opt/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
agent_image() {
	local cache=${HUTCH_IT_CACHE:-/var/cache/hutch-it} base store tag here
	here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
	base=$(debootstrap_image) || return 1
	store=$cache/agent-store
	tag=$(
		flock 9
		export HUTCH_STORE=$store
		if ! "$HUTCH" image inspect deb:12 >/dev/null 2>&1; then
			tar -C "$base" --exclude ./.complete -cf - . |
				"$HUTCH" image import - --name deb:12 >/dev/null || exit 1
		fi
		timeout 900 "$HUTCH" image build --from deb:12 --tag agent \
			--package python3-venv --run 'python3 -m venv /opt/venv' \
			--copy "$here/agent/agent.py:/srv/agent.py" \
			--env "PATH=$AGENT_PATH" --env VIRTUAL_ENV=/opt/venv --env LANG=C.UTF-8 \
			--env FOO=x --workdir /srv --entrypoint '["python3", "/srv/agent.py"]' \
			--cmd '["--mode", "default"]' --user 1234 2>"$cache/agent-build.log"
	) 9>"$cache/.agent-lock" || {
		tail -5 "$cache/agent-build.log" >&2
		return 1
	}
	echo "$store $tag"
}
