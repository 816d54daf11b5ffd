#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What both guests' check scripts share (guest-v2.sh, guest-systemd.sh): the PASS/FAIL/SKIP
# lines and their counts, and small readers. run.sh hands it to the guest ahead of the
# script, as text like the script itself.
npass=0 nfail=0 nskip=0

pass() {
	echo "PASS: $*"
	npass=$((npass + 1))
}
fail() {
	echo "FAIL: $*"
	nfail=$((nfail + 1))
}
skip() {
	echo "SKIP: $*"
	nskip=$((nskip + 1))
}
# check DESCRIPTION TEST...: PASS when the TEST command succeeds.
check() {
	local what=$1
	shift
	if "$@"; then pass "$what"; else fail "$what"; fi
}
# check_all DESCRIPTION 'TEST' 'TEST'...: PASS when every TEST, a shell condition (eval'd in
# the caller's variables), holds. `check D [ a ] && [ b ]` would check only a.
check_all() {
	local what=$1 t_
	shift
	for t_; do
		if ! eval "$t_"; then
			fail "$what"
			return
		fi
	done
	pass "$what"
}
# read_into VAR FILE: the file's first line, or "" when it cannot be read.
read_into() {
	local line_=''
	IFS= read -r line_ 2>/dev/null <"$2"
	printf -v "$1" '%s' "$line_"
}
in_list() {
	local w=$1
	shift
	[[ " $* " == *" $w "* ]]
}
