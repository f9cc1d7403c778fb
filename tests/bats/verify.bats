#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# verify.bats -- compares hashes, moves no data, exit 1 on a difference

load helpers

setup() {
	setup_daemon
	mkfile "$W/src" 4
	rc mirror "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
}
teardown() { teardown_daemon; }

@test "verify of an identical replica exits 0" {
	rc verify "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
}

@test "verify detects a one-byte difference, exits 1 and names the range" {
	poke "$W/src" 1000000
	rc verify "$W/src" "$T/r1/p1"
	[ "$status" -eq 1 ]
	# 1000000 lies in the 4 KiB block at 999424 = 0xf4000
	[[ "$output" == *0xf4000* ]]
}

@test "verify --json lists the differing ranges and moves no data" {
	local w0
	poke "$W/src" 10
	poke "$W/src" 3000000
	w0=$(written p1)
	rc verify --json "$W/src" "$T/r1/p1"
	[ "$status" -eq 1 ]
	[ "$(json .identical)" = false ]
	[ "$(json '.ranges | length')" -eq 2 ]
	[ "$(json '.ranges[0].offset')" -eq 0 ]
	[ "$(json .data_bytes)" -eq 0 ]
	[ "$(written p1)" -eq "$w0" ]
}

@test "verify of a local file whose size differs from the pool says they differ (exit 1) and names both sizes" {
	head -c 1000 /dev/urandom >"$W/small"
	rc verify "$W/small" "$T/r1/p1"
	[ "$status" -eq 1 ]
	[[ "$output" == *"differs in size"*"1000 bytes"* ]]
	rc verify --json "$W/small" "$T/r1/p1"
	[ "$status" -eq 1 ]
	[ "$(json .identical)" = false ]
	[ "$(json .local_size)" -eq 1000 ]
	[ "$(json .pool_size)" -eq "$(stat -c %s "$R1/p1")" ]
}
