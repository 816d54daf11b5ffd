#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
#
# `hutch sandbox -t`'s terminal relay against a caller or a command that stops reading: a
# paste the command never reads, an output the caller never reads, a stdin another process
# also reads. hutch relayed with blocking writes and reads: it stopped in write() or read(),
# the timeout never fired, no report was written and hutch never returned. Each direction now
# pauses alone, and the timeout, the report and the exit status happen whatever the terminal
# does. The relay's own fds are never wider than the caller's: a stdout opened read-only was
# reopened for writing (as root), and a file's offset was lost.

load ../integration/helpers
load ../integration/sandbox-helpers
bats_require_minimum_version 1.5.0

setup_file() {
	sb_images_setup
}


setup() {
	sb_setup
	command -v python3 >/dev/null || skip "python3 missing"
}

teardown() {
	local rc=0
	sb_teardown || rc=1
	teardown_bundle || rc=1 # the leak checks, and the test's own dir removed
	return $rc
}

# stuck_tty MODE ARGS...: hutch sandbox ARGS on a pty whose other side (this script) either
# pastes 1 MiB without reading anything (paste) or never reads at all (mute). Prints hutch's
# exit status and the seconds it took, or "alive" if it was still running after 25 s.
stuck_tty() {
	local mode=$1
	shift
	python3 - "$mode" "$SB_PIDS" "$HUTCH" sandbox --image "$IMAGE" -e "HUTCH_IT_TAG=$TAG" "$@" <<'PY'
import os, pty, select, subprocess, sys, time
mode, pids, argv = sys.argv[1], sys.argv[2], sys.argv[3:]
master, slave = pty.openpty()
t0 = time.monotonic()
p = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=subprocess.DEVNULL,
                     start_new_session=True)
open(pids, "a").write(f"{p.pid}\n")
os.close(slave)
os.set_blocking(master, False)
chunk = b"x" * 4096
sent = 0
while time.monotonic() - t0 < 25 and p.poll() is None:
    if mode == "paste" and sent < (1 << 20):
        try:
            sent += os.write(master, chunk)
        except BlockingIOError:
            pass
        except OSError:
            break
    time.sleep(0.01)
rc = p.poll()
if rc is None:
    p.kill()
    p.wait()
    print("alive")
else:
    print(f"{rc} {time.monotonic() - t0:.0f}")
PY
}

@test "sandbox -t: a paste the command never reads does not stop the timeout" {
	run -0 stuck_tty paste --timeout 3 --report "$TEST_DIR/r.json" -t -- sleep 100
	echo "# $output" >&3
	[ "${output%% *}" = 124 ]
	[ "${output#* }" -lt 15 ]
	jq -e '.failure == "timeout" and .exit_code == 124' "$TEST_DIR/r.json"
}

@test "sandbox -t: a caller that never reads the output does not stop the timeout" {
	run -0 stuck_tty mute --timeout 3 --report "$TEST_DIR/r.json" -t -- yes
	echo "# $output" >&3
	[ "${output%% *}" = 124 ]
	[ "${output#* }" -lt 15 ]
	jq -e '.failure == "timeout" and .exit_code == 124' "$TEST_DIR/r.json"
}

@test "sandbox -t: the output still arrives whole, and the command's status" {
	command -v script >/dev/null || skip "script (util-linux) missing"
	printf -v cmd '%q ' "$HUTCH" sandbox --image "$IMAGE" -e "HUTCH_IT_TAG=$TAG" -t -- \
		sh -c 'seq 1 20000; exit 3'
	run -3 --separate-stderr timeout 20 script -qec "echo \$\$ >>$SB_PIDS; exec $cmd" /dev/null </dev/null
	[ "$(printf '%s\n' "$output" | tr -d '\r' | tail -1)" = 20000 ]
	[ "$(printf '%s\n' "$output" | tr -d '\r' | grep -c .)" = 20000 ]
}

# stdout_file MODE: hutch sandbox -t on a pty's stdin, with stdout a file opened MODE ("r":
# read-only, "a": append) holding "original"; prints hutch's status, then the file.
stdout_file() {
	local f=$TEST_DIR/out
	printf 'original\n' >"$f"
	chmod 444 "$f"
	python3 - "$1" "$f" "$SB_PIDS" "$HUTCH" sandbox --image "$IMAGE" -e "HUTCH_IT_TAG=$TAG" \
		-t -- echo WRITTEN-BY-SANDBOX <<'PY'
import os, pty, subprocess, sys
mode, path, pids, argv = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
master, slave = pty.openpty()
out = open(path, "rb" if mode == "r" else "ab")
p = subprocess.Popen(argv, stdin=slave, stdout=out, stderr=subprocess.DEVNULL)
open(pids, "a").write(f"{p.pid}\n")
os.close(slave)
print(p.wait(timeout=20))
PY
	cat "$f"
}

@test "sandbox -t: a stdout opened read-only is never written (hutch never reopens it wider)" {
	run -0 stdout_file r
	echo "# $output" >&3
	[ "${lines[1]}" = original ]
	[ "${#lines[@]}" = 2 ]
}

@test "sandbox -t: a stdout opened for appending keeps what it held, and gets the output after it" {
	run -0 stdout_file a
	[ "${lines[1]}" = original ]
	[[ "${lines[2]}" == WRITTEN-BY-SANDBOX* ]]
}

@test "sandbox -t: a terminal stdin that another process also reads does not stop the timeout" {
	# hutch read fd 0 blocking: the byte poll saw was taken by the other reader first, and
	# hutch sat in read() past --timeout. A race: the old code failed this about 1 run in 3.
	run -0 python3 - "$SB_PIDS" "$HUTCH" sandbox --image "$IMAGE" -e "HUTCH_IT_TAG=$TAG" \
		--timeout 3 -t -- sleep 60 <<'PY'
import os, pty, subprocess, sys, time
pids, argv = sys.argv[1], sys.argv[2:]
master, slave = pty.openpty()
t0 = time.monotonic()
p = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=subprocess.DEVNULL)
open(pids, "a").write(f"{p.pid}\n")
# a reader already blocked in read(): it is woken with hutch's poll, and takes the one byte
thief = subprocess.Popen(["cat"], stdin=slave, stdout=subprocess.DEVNULL)
time.sleep(1)
os.write(master, b"x")
try:
    rc = p.wait(timeout=20)
except subprocess.TimeoutExpired:
    p.kill(); p.wait(); rc = "alive"
thief.kill(); thief.wait()
print(rc, round(time.monotonic() - t0))
PY
	echo "# $output" >&3
	[ "${output%% *}" = 124 ]
}
