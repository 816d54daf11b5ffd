# SPDX-License-Identifier: Apache-2.0
# Sourced by tests/integration/run.sh and tests/clients/run.sh: the .bats files of a
# directory and of its subdirectories (one per area: oci/, sandbox/, ...) whose names match
# comma- or space-separated globs ("kill,tty*"; "*" = all), by file name or area/name.
# select_bats DIR GLOBS: sets the array `files`; fails if nothing matches.
# shellcheck shell=bash
select_bats() {
	local f g globs
	files=()
	IFS=', ' read -r -a globs <<<"$2"
	for f in "$1"/*.bats "$1"/*/*.bats; do
		[ -e "$f" ] || continue
		for g in "${globs[@]}"; do
			# shellcheck disable=SC2053 # the glob is meant to match
			if [[ $(basename "$f" .bats) == ${g%.bats} ||
				${f#"$1"/} == ${g%.bats}.bats ]]; then
				files+=("$f")
				break
			fi
		done
	done
	[ ${#files[@]} -gt 0 ]
}
