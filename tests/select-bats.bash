# SPDX-License-Identifier: Apache-2.0
# Sourced by tests/integration/run.sh and tests/clients/run.sh: the .bats files of a
# directory whose names match comma- or space-separated globs ("kill,tty*"; "*" = all).
# select_bats DIR GLOBS: sets the array `files`; fails if nothing matches.
# shellcheck shell=bash
select_bats() {
	local f g globs
	files=()
	IFS=', ' read -r -a globs <<<"$2"
	for f in "$1"/*.bats; do
		for g in "${globs[@]}"; do
			# shellcheck disable=SC2053 # the glob is meant to match
			if [[ $(basename "$f" .bats) == ${g%.bats} ]]; then
				files+=("$f")
				break
			fi
		done
	done
	[ ${#files[@]} -gt 0 ]
}
