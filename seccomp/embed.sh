#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# embed.sh IN OUT NAME: writes OUT, a C file defining `const char NAME[]` with the bytes of
# IN and a final NUL, `const unsigned long NAME_len` (their number, without the NUL) and
# `const unsigned char NAME_sha256[32]`, their SHA-256 (so that a start needs not hash them).
# Only od, sed, wc and sha256sum: nothing beyond coreutils.
set -eu
in=$1 out=$2 name=$3
{
	echo "/* Generated from $(basename "$in") by embed.sh: do not edit. */"
	echo "const char $name[] = {"
	od -An -v -tx1 "$in" | sed -e 's/ \([0-9a-f][0-9a-f]\)/0x\1,/g' -e 's/^/\t/'
	echo "	0x00"
	echo "};"
	echo "const unsigned long ${name}_len = $(wc -c <"$in");"
	echo "const unsigned char ${name}_sha256[32] = {"
	sha256sum "$in" | cut -c1-64 | sed -e 's/../0x&,/g' -e 's/^/\t/'
	echo "};"
} >"$out.tmp"
mv "$out.tmp" "$out"
