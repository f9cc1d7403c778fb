#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# sync.bats -- only differing blocks move, in both directions

load helpers

setup() {
	setup_daemon
	mkfile "$W/src" 16
	rc mirror "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
}
teardown() { teardown_daemon; }

@test "sync of an unchanged pool transfers no data blocks" {
	rc sync --json "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	[ "$(json .blocks_changed)" -eq 0 ]
	[ "$(json .data_bytes)" -eq 0 ]
	[ "$(json .generation)" -eq 1 ]
}

@test "sync after changing 5 scattered blocks moves exactly 5 blocks" {
	for i in 1 40 77 130 255; do
		poke "$W/src" $((i * 65536 + 100))
	done
	rc sync --json "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	[ "$(json .blocks_changed)" -eq 5 ]
	[ "$(json .block_size)" -eq 65536 ]
	# the fine pass moves only the changed 4 KiB pieces
	[ "$(json .data_bytes)" -eq $((5 * 4096)) ]
	[ "$(json .generation)" -eq 2 ]
	cmp "$W/src" "$R1/p1"
}

@test "blocks changed close together still move only the changed 4 KiB pieces" {
	# 64 KiB blocks 1, 3 and 4 differ; 2 is bridged by the fine pass
	for b in 1 3 4; do
		poke "$W/src" $((b * 65536 + 4096 * b + 7))
	done
	rc sync --json "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	[ "$(json .blocks_changed)" -eq 3 ]
	[ "$(json .data_bytes)" -eq $((3 * 4096)) ]
	cmp "$W/src" "$R1/p1"
}

@test "sync --block-size 4K counts 4 KiB blocks" {
	poke "$W/src" 5000
	poke "$W/src" 9000
	rc sync --json --block-size 4K "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	[ "$(json .blocks_changed)" -eq 2 ]
	[ "$(json .data_bytes)" -eq 8192 ]
	cmp "$W/src" "$R1/p1"
}

@test "sync --dry-run reports what would move and moves nothing" {
	poke "$W/src" 123456
	cp "$R1/p1" "$W/before"
	rc sync --dry-run --json "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	[ "$(json .blocks_changed)" -eq 1 ]
	[ "$(json .data_bytes)" -eq 0 ]
	[ "$(json '.ranges | length')" -eq 1 ]
	cmp "$W/before" "$R1/p1"
}

@test "sync --pull restores a damaged local copy" {
	cp "$W/src" "$W/orig"
	dd if=/dev/zero of="$W/src" bs=4096 seek=100 count=10 conv=notrunc 2>/dev/null
	poke "$W/src" 7
	rc sync --pull --json "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	[ "$(json .mode)" = pull ]
	cmp "$W/orig" "$W/src"
}

@test "sync --pull into a missing local file creates it" {
	rc sync --pull "$W/new" "$T/r1/p1"
	[ "$status" -eq 0 ]
	cmp "$W/src" "$W/new"
}

@test "sync to a missing remote pool creates it" {
	rc sync --json "$W/src" "$T/r1/fresh"
	[ "$status" -eq 0 ]
	[ "$(json .created_remote)" = true ]
	cmp "$W/src" "$R1/fresh"
}

@test "a pool left syncing is completed by the next sync even when nothing differs" {
	# an interrupted sync leaves 'syncing' in the metadata
	sed -i 's/^state=.*/state=syncing/' "$R1/.rpmemd/p1.meta"
	stop_daemon
	start_daemon
	rc list --json "$T/r1"
	[ "$(json '.pools[] | select(.name=="p1") | .state')" = syncing ]
	rc sync --json "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	rc list --json "$T/r1"
	[ "$(json '.pools[] | select(.name=="p1") | .state')" = consistent ]
}
