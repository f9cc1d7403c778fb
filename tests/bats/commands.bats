#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# commands.bats -- list, create, remove, status, help, version

load helpers

setup() { setup_daemon; }
teardown() { teardown_daemon; }

@test "create makes an empty pool of the requested size" {
	rc create "$T/r1/db1" 4M
	[ "$status" -eq 0 ]
	[ "$(stat -c %s "$R1/db1")" -eq $((4 << 20)) ]
	rc list --json "$T/r1"
	[ "$status" -eq 0 ]
	[ "$(json '.pools[0].name')" = db1 ]
	[ "$(json '.pools[0].state')" = empty ]
	[ "$(json '.pools[0].generation')" -eq 0 ]
	[ "$(json '.pools[0].uuid | length')" -eq 36 ]
}

@test "create --json prints the pool it made" {
	rc create --json "$T/r1/db2" 64K
	[ "$status" -eq 0 ]
	[ "$(json .pool)" = db2 ]
	[ "$(json .pool_size)" -eq 65536 ]
	[ "$(json .created)" = true ]
}

@test "create of an existing pool is refused (exit 4)" {
	rc create "$T/r1/db1" 1M
	rc create "$T/r1/db1" 1M
	[ "$status" -eq 4 ]
	[[ "$output" == *exist* ]]
}

@test "list shows regions and pools in a table" {
	rc create "$T/r1/a" 1M
	rc create "$T/r1/b" 2M
	rc list "$T"
	[ "$status" -eq 0 ]
	[[ "$output" == *r1* ]]
	[[ "$output" == *dir* ]]
	[[ "$output" == *" a "* || "$output" == *"a "* ]]
	[[ "$output" == *empty* ]]
}

@test "list --json of all regions is valid JSON with regions and pools" {
	rc create "$T/r1/a" 1M
	rc list --json "$T"
	[ "$status" -eq 0 ]
	[ "$(json '.regions[0].name')" = r1 ]
	[ "$(json '.regions[0].type')" = dir ]
	[ "$(json '.regions[0].free')" -gt 0 ]
	[ "$(json '.pools | length')" -eq 1 ]
}

@test "remove deletes the pool and its metadata" {
	rc create "$T/r1/a" 1M
	rc remove "$T/r1/a"
	[ "$status" -eq 0 ]
	[ ! -e "$R1/a" ]
	rc list --json "$T/r1"
	[ "$(json '.pools | length')" -eq 0 ]
}

@test "remove of an unknown pool exits 4" {
	rc remove "$T/r1/ghost"
	[ "$status" -eq 4 ]
	[[ "$output" == *ghost* ]]
}

@test "status shows the daemon, pools with state and generation, and sessions" {
	mkfile "$W/src" 1
	rc mirror "$W/src" "$T/r1/p1"
	rc status --json "$T"
	[ "$status" -eq 0 ]
	[ "$(json .pid)" -eq "$DPID" ]
	[ "$(json '.pools[0].state')" = consistent ]
	[ "$(json '.pools[0].generation')" -eq 1 ]
	[ "$(json '.pools[0].bytes_written')" -ge $((1 << 20)) ]
	[ "$(json '.sessions | length')" -ge 1 ]
	[ "$(json '.sessions[0].transport')" = tcp ]
	rc status "$T"
	[ "$status" -eq 0 ]
	[[ "$output" == *p1* ]]
	[[ "$output" == *consistent* ]]
}

@test "status counts a writer session's bytes and flushes while it holds a pool" {
	rc create "$T/r1/p1" 1M
	# 64 KiB written and flushed once, then held open
	hold "$T/r1/p1" 30 65536
	local hp=$HP
	rc status --json "$T"
	kill "$hp"; wait "$hp" || true
	[ "$status" -eq 0 ]
	local s='.sessions[] | select(.region=="r1" and .pool=="p1")'
	[ "$(json "[$s] | length")" -eq 1 ]
	[ "$(json "$s | .access")" = rw ]
	[ "$(json "$s | .bytes_written")" -eq 65536 ]
	[ "$(json "$s | .flushes")" -eq 1 ]
	[ "$(json "$s | .bytes_read")" -eq 0 ]
	# the pool counts the same, and names its writer
	[ "$(json '.pools[] | select(.name=="p1") | .bytes_written')" -eq 65536 ]
	[ "$(json '.pools[] | select(.name=="p1") | .flushes')" -eq 1 ]
	[ "$(json '.pools[] | select(.name=="p1") | .writer')" != "" ]
	# and the bytes are on the target
	cmp -n 65536 "$R1/p1" <(head -c 65536 /dev/zero | tr '\0' '\245')
}

@test "--help and --version exit 0; help for a command names its options" {
	rc --help
	[ "$status" -eq 0 ]
	[[ "$output" == *mirror* ]]
	rc --version
	[ "$status" -eq 0 ]
	rc sync --help
	[ "$status" -eq 0 ]
	[[ "$output" == *--pull* ]]
}

@test "output that is not a terminal carries no progress line" {
	mkfile "$W/src" 32
	run bash -c "'$RPMEMCTL' mirror '$W/src' '$T/r1/p1' 2>&1 | cat"
	[ "$status" -eq 0 ]
	[[ "$output" != *$'\r'* ]]
}

@test "a transfer longer than a second shows a progress line on a terminal" {
	command -v script || skip "script(1) from bsdutils is not installed"
	mkfile "$W/src" 256
	rc create "$T/r1/p1" 256M
	# a paused daemon makes the transfer last well over a second
	kill -STOP "$DPID"
	# not a wait: the sleep is the subject, the length of the pause
	(sleep 2; kill -CONT "$DPID") &
	local cp=$!
	run script -qec "'$RPMEMCTL' mirror '$W/src' '$T/r1/p1'" /dev/null
	wait "$cp"
	[ "$status" -eq 0 ]
	[[ "$output" == *$'\r'* ]]
	[[ "$output" == *"MiB"* ]]
	cmp "$W/src" "$R1/p1"
}

@test "a pool removed and created again under the same name holds none of the old data" {
	mkfile "$W/src" 4
	rc mirror "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	rc verify "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	rc remove "$T/r1/p1"
	[ "$status" -eq 0 ]
	rc create "$T/r1/p1" 4M
	[ "$status" -eq 0 ]
	head -c $((4 << 20)) /dev/zero >"$W/zero"
	rc verify "$W/zero" "$T/r1/p1"
	[ "$status" -eq 0 ]
}
