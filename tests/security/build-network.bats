#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
#
# `hutch image build` runs its steps, and a base's package scripts, as root in a user
# namespace: on the host's network (the default until now) a --run step reached a service
# on the host's 127.0.0.1 and a host abstract unix socket (those belong to a network
# namespace). Builds get a network namespace of their own by default (bridge: the internet,
# not the host); --network host is there when asked for, with a warning.

load ../integration/helpers
bats_require_minimum_version 1.5.0

setup() {
	[ -x "$BUSYBOX" ] || skip "$BUSYBOX missing (apt-get install busybox-static)"
	command -v python3 >/dev/null || skip "python3 missing"
	setup_tmp
	export HUTCH_STORE=$TEST_DIR/store
	local root=$TEST_DIR/base
	cp -a "$(rootfs_template)" "$root"
	cc -static -O2 -Wall -o "$root/bin/localprobe" "$INTEGRATION_ROOT/helpers/localprobe.c"
	tar -C "$root" -czf "$TEST_DIR/base.tar.gz" .
	timeout 60 "$HUTCH" image import "$TEST_DIR/base.tar.gz" --name base:1 >/dev/null
	start_host_services
}

teardown() {
	[ -z "${SERVICES:-}" ] || { kill "$SERVICES" 2>/dev/null; wait "$SERVICES" 2>/dev/null; }
	teardown_bundle
}

# A host service on 127.0.0.1:$PORT and one on the abstract unix socket $ABSTRACT, each
# answering "secret" to whoever connects; it stops by itself after 60 s.
start_host_services() {
	ABSTRACT=hutch-it-build-$TAG
	python3 - "$ABSTRACT" "$TEST_DIR/port" <<-'PY' &
		import select, socket, sys, time
		t = socket.socket()
		t.bind(("127.0.0.1", 0))
		t.listen(8)
		u = socket.socket(socket.AF_UNIX)
		u.bind("\0" + sys.argv[1])
		u.listen(8)
		with open(sys.argv[2] + ".tmp", "w") as f:
		    f.write(str(t.getsockname()[1]))
		import os; os.rename(sys.argv[2] + ".tmp", sys.argv[2])
		end = time.time() + 60
		while time.time() < end:
		    for s in select.select([t, u], [], [], 1)[0]:
		        c, _ = s.accept()
		        c.sendall(b"secret\n")
		        c.close()
	PY
	SERVICES=$!
	local tries=100
	until [ -s "$TEST_DIR/port" ] || [ $tries -eq 0 ]; do
		sleep 0.05
		tries=$((tries - 1))
	done
	PORT=$(cat "$TEST_DIR/port")
	# the host itself reaches both
	[ "$(/bin/sh -c "$TEST_DIR/base/bin/localprobe tcp $PORT")" = "tcp: secret" ]
	[ "$("$TEST_DIR/base/bin/localprobe" abstract "$ABSTRACT")" = "abstract: secret" ]
}

# build ARGS...: an image build whose step probes both services (--no-cache: it runs).
build() {
	run --separate-stderr timeout -k 5 120 "$HUTCH" image build --from base:1 --no-cache \
		--run "localprobe tcp $PORT; localprobe abstract $ABSTRACT" --tag probe "$@"
	echo "# image build $*: $status; $stderr" >&3
}

@test "build network: a step reaches neither the host's 127.0.0.1 nor its abstract sockets" {
	build
	[ "$status" = 0 ]
	[[ $stderr == *"tcp: Connection refused"* ]]
	[[ $stderr == *"abstract: Connection refused"* ]]
	[[ $stderr != *secret* ]]
	[[ $stderr != *warning* ]]
}

@test "build network: --network none the same; --network host reaches both, with a warning" {
	build --network none
	[ "$status" = 0 ]
	[[ $stderr == *"tcp: Connection refused"* ]]
	[[ $stderr == *"abstract: Connection refused"* ]]
	build --network host
	[ "$status" = 0 ]
	[[ $stderr == *"tcp: secret"* ]]
	[[ $stderr == *"abstract: secret"* ]]
	[[ $stderr == *"warning: build: --network host: "*"127.0.0.1"* ]]
}

@test "build network: a bad --network is refused, named" {
	build --network nope
	[ "$status" = 1 ]
	[ "$stderr" = "hutch: error: --network nope: expected bridge, none or host" ]
}
