#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# abi.bats -- a program built against the released LIBRPMEMCTL_1 header still runs against today's library

load helpers

setup() { setup_daemon; }
teardown() { teardown_daemon; }

# pool FIELD -- FIELD of pool "old" in the last `list --json`
pool() {
	json ".pools[] | select(.name == \"old\") | .$1"
}

@test "the program built against the LIBRPMEMCTL_1 header binds only LIBRPMEMCTL_1 symbols" {
	run objdump -T "$BUILD/tests/old_sync_user"
	[ "$status" -eq 0 ]
	[[ "$output" == *"(LIBRPMEMCTL_1) rpmemctl_pool_sync"* ]]
	refute grep 'LIBRPMEMCTL_[2-9]' <<<"$output"
}

@test "rpmemctl_pool_sync with the released structs pushes and verifies, reading and writing nothing past them" {
	run "$BUILD/tests/old_sync_user" 127.0.0.1 "$PORT" r1 old "$W/old.bin"
	echo "$output"
	[ "$status" -eq 0 ]
	# the target holds the program's final local copy
	cmp "$W/old.bin" "$R1/old"
	rc list --json "$T/r1"
	[ "$status" -eq 0 ]
	[ "$(pool state)" = consistent ]
	[ "$(pool generation)" -eq 2 ]
	[ "$(pool source)" = old_sync_user ]
	# the first push wrote all 4 MiB, the second the two changed 4 KiB blocks
	[ "$(pool bytes_written)" -eq $((4194304 + 8192)) ]
}
