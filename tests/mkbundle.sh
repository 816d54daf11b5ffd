#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Makes a small OCI bundle from Debian's busybox-static: DIR/rootfs + DIR/config.json
# (written by `hutch spec`, then made non-interactive). Usage: mkbundle.sh HUTCH DIR [CMD...]
set -euo pipefail
hutch=$(realpath "$1") dir=$2
shift 2
busybox=$(command -v busybox || echo /bin/busybox)
rm -rf "$dir"
mkdir -p "$dir"/rootfs/{bin,dev,proc,sys,tmp,etc,root,home/user}
cp "$busybox" "$dir/rootfs/bin/busybox"
for applet in $("$busybox" --list); do
	[ "$applet" = busybox ] || ln -sf busybox "$dir/rootfs/bin/$applet"
done
printf 'root:x:0:0:root:/root:/bin/sh\nuser:x:1000:1000:user:/home/user:/bin/sh\n' >"$dir/rootfs/etc/passwd"
printf 'root:x:0:\nuser:x:1000:\n' >"$dir/rootfs/etc/group"
chmod 1777 "$dir/rootfs/tmp"
(cd "$dir" && "$hutch" spec)
args='["sh", "-c", "echo hello from $(hostname): $(id); cat /proc/self/status | grep -E \"^(NoNewPrivs|Seccomp|CapEff)\""]'
if [ $# -gt 0 ]; then
	args=$(printf '%s\n' "$@" | jq -R . | jq -s -c .)
fi
jq --argjson a "$args" '.process.terminal = false | .process.args = $a' \
	"$dir/config.json" >"$dir/config.json.new"
mv "$dir/config.json.new" "$dir/config.json"
