#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# errors.bats -- bad input gets a clear message, the documented exit code, and loses nothing

load helpers

setup() { setup_daemon; }
teardown() { teardown_daemon; }

@test "a missing local file exits 5 and names the file" {
	rc mirror "$W/nonexistent" "$T/r1/p1"
	[ "$status" -eq 5 ]
	[[ "$output" == *nonexistent* ]]
	[ ! -e "$R1/p1" ]
}

@test "an unknown region exits 4 and names the region" {
	mkfile "$W/src" 1
	rc mirror "$W/src" "$T/nosuch/p1"
	[ "$status" -eq 4 ]
	[[ "$output" == *nosuch* ]]
}

@test "an unknown pool exits 4 for verify" {
	mkfile "$W/src" 1
	rc verify "$W/src" "$T/r1/ghost"
	[ "$status" -eq 4 ]
	[[ "$output" == *ghost* ]]
}

@test "a pool name with '..' is refused before connecting (exit 2)" {
	mkfile "$W/src" 1
	rc mirror "$W/src" "$T/r1/.."
	[ "$status" -eq 2 ]
	[[ "$output" == *"pool name"* ]]
	rc create "$T/r1/../etc" 1M
	[ "$status" -eq 2 ]
}

@test "a pool name with '/' is refused (exit 2)" {
	mkfile "$W/src" 1
	rc mirror "$W/src" "$T/r1/a/b"
	[ "$status" -eq 2 ]
	[ ! -e "$R1/a" ]
}

@test "a malformed target or size is a usage error (exit 2)" {
	rc create "$T" 1M
	[ "$status" -eq 2 ]
	rc create "$T/r1/p" 12X
	[ "$status" -eq 2 ]
	rc create "http://$T/r1/p" 1M
	[ "$status" -eq 2 ]
	rc frobnicate
	[ "$status" -eq 2 ]
	rc mirror
	[ "$status" -eq 2 ]
}

@test "a pool larger than the region's free space is refused (exit 4) and leaves nothing" {
	rc create "$T/r1/huge" 1000T
	[ "$status" -eq 4 ]
	[[ "$output" == *space* ]]
	[ ! -e "$R1/huge" ]
	rc list --json "$T/r1"
	[ "$(json '.pools | length')" -eq 0 ]
}

@test "an unreachable target exits 3 and says it cannot connect" {
	mkfile "$W/src" 1
	rc mirror "$W/src" "127.0.0.1:$(free_port)/r1/p1"
	[ "$status" -eq 3 ]
	[[ "$output" == *connect* ]]
}

@test "a second writer is refused as busy, naming the holder" {
	mkfile "$W/src" 64
	rc create "$T/r1/p1" 64M
	[ "$status" -eq 0 ]
	# hold a write open: a slow first writer (pipe throttled by pv-less sleep)
	"$BUILD/tests/hold_pool" "$T/r1/p1" 5 >"$W/hold.out" 2>&1 &
	local hp=$!
	for _ in $(seq 50); do
		grep -q holding "$W/hold.out" && break
		sleep 0.1
	done
	rc mirror "$W/src" "$T/r1/p1"
	kill "$hp" 2>/dev/null || true
	wait "$hp" || true
	[ "$status" -eq 4 ]
	[[ "$output" == *busy* || "$output" == *"open for writing"* ]]
	[[ "$output" == *session* ]]
}

@test "readers share a pool: verify runs while another verify holds it" {
	mkfile "$W/src" 4
	rc mirror "$W/src" "$T/r1/p1"
	"$RPMEMCTL" verify "$W/src" "$T/r1/p1" &
	local vp=$!
	rc verify "$W/src" "$T/r1/p1"
	wait "$vp"
	[ "$status" -eq 0 ]
}

@test "daemon killed mid-sync: the pool shows syncing, the next sync completes it, verify passes" {
	mkfile "$W/src" 256
	rc create "$T/r1/p1" 256M
	[ "$status" -eq 0 ]
	"$RPMEMCTL" mirror "$W/src" "$T/r1/p1" >"$W/m.out" 2>&1 &
	local mp=$!
	for _ in $(seq 200); do
		grep -q '^state=syncing' "$R1/.rpmemd/p1.meta" 2>/dev/null && break
		sleep 0.02
	done
	kill -9 "$DPID"
	wait "$mp" && mstatus=0 || mstatus=$?
	[ "$mstatus" -eq 3 ]
	DPID=
	start_daemon
	rc list --json "$T/r1"
	[ "$(json '.pools[] | select(.name=="p1") | .state')" = syncing ]
	rc status "$T"
	[[ "$output" == *syncing* ]]
	rc sync "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	rc verify "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	rc list --json "$T/r1"
	[ "$(json '.pools[] | select(.name=="p1") | .state')" = consistent ]
}

@test "a client that disappears mid-transfer leaves the daemon serving" {
	mkfile "$W/src" 128
	"$RPMEMCTL" mirror "$W/src" "$T/r1/p1" >/dev/null 2>&1 &
	local mp=$!
	sleep 0.3
	kill -9 "$mp" || true
	wait "$mp" || true
	kill -0 "$DPID"
	rc sync "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	cmp "$W/src" "$R1/p1"
}
