#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# mirror.bats -- full copies, byte for byte, and the state they leave

load helpers

setup() { setup_daemon; }
teardown() { teardown_daemon; }

@test "mirror creates the remote pool sized to the local file and copies it byte for byte" {
	mkfile "$W/src" 8
	rc mirror "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	cmp "$W/src" "$R1/p1"
	rc list --json "$T/r1"
	[ "$status" -eq 0 ]
	[ "$(json '.pools[] | select(.name=="p1") | .size')" -eq $((8 << 20)) ]
	[ "$(json '.pools[] | select(.name=="p1") | .state')" = consistent ]
	[ "$(json '.pools[] | select(.name=="p1") | .generation')" -eq 1 ]
}

@test "mirror of a file whose size is not a multiple of 4 KiB is refused with the reason" {
	head -c 3000001 /dev/urandom >"$W/odd"
	rc mirror "$W/odd" "$T/r1/odd"
	[ "$status" -eq 4 ]
	[[ "$output" == *"multiple of 4096"* ]]
	[ ! -e "$R1/odd" ]
}

@test "mirror --json reports every byte moved and the new generation" {
	mkfile "$W/src" 4
	rc mirror --json "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	[ "$(json .data_bytes)" -eq $((4 << 20)) ]
	[ "$(written p1)" -eq $((4 << 20)) ]
	[ "$(json .created)" = true ]
	[ "$(json .generation)" -eq 1 ]
	# a mirror copies everything again, unchanged or not
	rc mirror --json "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	[ "$(json .data_bytes)" -eq $((4 << 20)) ]
	[ "$(written p1)" -eq $((8 << 20)) ]
	[ "$(json .created)" = false ]
	[ "$(json .generation)" -eq 2 ]
}

@test "the generation mirror and sync report is the one the target records" {
	mkfile "$W/src" 1
	rc mirror --json "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	local g=$(json .generation)
	rc list --json "$T/r1"
	[ "$(json '.pools[] | select(.name=="p1") | .generation')" -eq "$g" ]
	for off in 4096 $((512 << 10)); do
		poke "$W/src" "$off"
		rc sync --json "$W/src" "$T/r1/p1"
		[ "$status" -eq 0 ]
		[ "$(json .generation)" -gt "$g" ]
		g=$(json .generation)
		rc list --json "$T/r1"
		[ "$(json '.pools[] | select(.name=="p1") | .generation')" -eq "$g" ]
	done
}

@test "mirror into an existing pool of another size is refused with both sizes named" {
	mkfile "$W/a" 2
	mkfile "$W/b" 3
	rc mirror "$W/a" "$T/r1/p1"
	[ "$status" -eq 0 ]
	rc mirror "$W/b" "$T/r1/p1"
	[ "$status" -eq 4 ]
	[[ "$output" == *"2 MiB"* ]]
	[[ "$output" == *"3 MiB"* ]]
	cmp "$W/a" "$R1/p1"
}

@test "mirror --no-create into a missing pool is refused" {
	mkfile "$W/a" 1
	rc mirror --no-create "$W/a" "$T/r1/nope"
	[ "$status" -eq 4 ]
	[[ "$output" == *nope* ]]
	[ ! -e "$R1/nope" ]
}

@test "the replica's metadata lives beside the pool, never inside it" {
	mkfile "$W/src" 1
	rc mirror "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	[ "$(stat -c %s "$R1/p1")" -eq $((1 << 20)) ]
	ls "$R1/.rpmemd/" | grep -q p1
}

@test "mirror over rpmem:// URI works the same" {
	mkfile "$W/src" 1
	rc mirror "$W/src" "rpmem://$T/r1/p2"
	[ "$status" -eq 0 ]
	cmp "$W/src" "$R1/p2"
}
