#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/rootless-passes.sh BUILD_DIR: the integration suite twice more, without host root:
# as hutch-ci, an unprivileged user made for it (with /etc/subuid and subgid ranges), and as
# hutch-ci under `unshare -r` (one mapped id, as crun's CI runs it). Files marked ROOTLESS_OK
# run; every other test is skipped with its reason (helpers.bash). Prints both passes' TAP,
# then how many tests each skipped. Run as root (it makes the user); exits non-zero when a
# test failed.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ $# != 1 ] || [ ! -x "$1/runtime/hutch" ]; then
	echo "usage: tests/rootless-passes.sh BUILD_DIR (with runtime/hutch built)" >&2
	exit 2
fi
user=hutch-ci
id "$user" >/dev/null 2>&1 || useradd -M -d /nonexistent -s /usr/sbin/nologin "$user"
grep -q "^$user:" /etc/subuid ||
	usermod --add-subuids 400000-465535 --add-subgids 400000-465535 "$user"

# The tests, the docs they read and the binary where the user can reach them: the checkout
# may lie under a directory it cannot search.
dir=$(mktemp -d /tmp/hutch-rootless.XXXXXX)
trap 'rm -rf --one-file-system "$dir"' EXIT
cp -a tests docs "$dir/"
cp "$1/runtime/hutch" "$dir/hutch"
mkdir "$dir/home" "$dir/tmp"
chmod -R a+rX "$dir"
chown "$user:" "$dir/home" "$dir/tmp"

as_user() {
	setpriv --reuid "$user" --regid "$user" --init-groups env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		HOME="$dir/home" TMPDIR="$dir/tmp" HUTCH="$dir/hutch" "$@"
}

rc=0
for pass in user unshare; do
	echo "== rootless pass: $pass"
	wrap=()
	[ $pass = user ] || wrap=(unshare -r)
	status=0
	as_user "${wrap[@]}" "$dir/tests/integration/run.sh" bats "$dir/tests/integration" \
		>"$dir/$pass.tap" 2>&1 || status=$?
	cat "$dir/$pass.tap"
	[ $status = 0 ] || rc=1
	echo "rootless pass $pass: $(grep -c '^ok ' "$dir/$pass.tap") ok," \
		"$(grep -c '^ok .* # skip' "$dir/$pass.tap") of them skipped," \
		"$(grep -c '^not ok ' "$dir/$pass.tap") failed (exit $status)"
done
exit $rc
