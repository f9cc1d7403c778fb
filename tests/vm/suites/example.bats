#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# example.bats -- bats tests run on the initiator guest by suites/example.sh

@test "suite variables are set" {
	[ -n "$RPMEM_SRC" ]
	[ -d "$RPMEM_SRC" ]
	[ -n "$RPMEM_BUILD" ]
	[ "$TARGET_IP" = 192.168.77.1 ]
	[ "$INITIATOR_IP" = 192.168.77.2 ]
	[ "$DEVDAX" = /dev/dax1.0 ]
	[ -n "$FSDAX_DIR" ]
	[ -d "$RESULTS" ]
}

@test "send a line to the target" {
	echo "hello from $INITIATOR_IP" | nc -N "$TARGET_IP" "$EXAMPLE_PORT"
}

@test "rpmemctl is built" {
	[ -x "$RPMEM_BUILD/rpmemctl" ] || skip "no $RPMEM_BUILD/rpmemctl yet"
	"$RPMEM_BUILD/rpmemctl" --help
}
