#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# scrub.bats -- rpmemctl scrub: the target re-reads a pool and checks it
# against the hashes it recorded at the last commit; bytes are flipped in
# the pool file on the target, behind rpmemd's back

load helpers
load access

setup() {
	setup_daemon
	mkfile "$W/src" 6
	rc mirror "$W/src" "$T/r1/p"
	[ "$status" -eq 0 ]
}

teardown() { teardown_daemon; }

# scrub_verified -- a scrub of r1/p verified every byte (did not exit 8,
# unverified); its $status and $output stay for the test
scrub_verified() {
	rc scrub "$T/r1/p"
	[ "$status" -ne 8 ]
}

@test "a healthy pool: exit 0, every byte checked" {
	rc scrub "$T/r1/p"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"all 6 MiB (6291456 bytes) checked, every piece as recorded at generation 1"* ]]
	rc scrub --json "$T/r1/p"
	[ "$status" -eq 0 ]
	[ "$(json .command)" = scrub ]
	[ "$(json .bytes_checked)" -eq 6291456 ]
	[ "$(json .bytes_damaged)" -eq 0 ]
	[ "$(json .bytes_unverified)" -eq 0 ]
	[ "$(json .clean)" = true ]
	[ "$(json '.findings | length')" -eq 0 ]
	# the record is beside the pool, of the generation it describes
	[ -f "$R1/.rpmemd/p.scrub" ]
}

@test "a flipped byte in the pool file is found and named, exit 7, and not repaired" {
	local off=$((4 * 1048576 + 70000))
	poke "$R1/p" "$off"
	cp "$R1/p" "$W/flipped"
	rc scrub "$T/r1/p"
	echo "$output"
	[ "$status" -eq 7 ]
	# the 4 KiB piece holding it: 0x411000 (4 MiB + 68 KiB)
	[[ "$output" == *"damaged at 0x411000 length 4096"* ]]
	[ "$(grep -c '^damaged at' <<<"$output")" -eq 1 ]
	[[ "$output" == *"nothing was repaired"* ]]
	rc scrub --json "$T/r1/p"
	[ "$status" -eq 7 ]
	[ "$(json .clean)" = false ]
	[ "$(json .bytes_damaged)" -eq 4096 ]
	[ "$(json .bytes_checked)" -eq 6291456 ]
	[ "$(json '.findings[0].offset')" -eq $(((off / 4096) * 4096)) ]
	[ "$(json '.findings[0].length')" -eq 4096 ]
	[ "$(json '.findings[0].status')" = damaged ]
	# the target still holds the flipped byte: scrub repairs nothing
	cmp "$W/flipped" "$R1/p"
	[ "$(cmp -l "$W/src" "$R1/p" | wc -l)" -eq 1 ]
	# a sync from the source mends it, and records the new image
	rc sync "$W/src" "$T/r1/p"
	[ "$status" -eq 0 ]
	cmp "$W/src" "$R1/p"
	rc scrub "$T/r1/p"
	[ "$status" -eq 0 ]
	[[ "$output" == *"recorded at generation 2"* ]]
}

@test "two flips in pieces far apart: two ranges, in offset order" {
	poke "$R1/p" 5
	poke "$R1/p" $((6 * 1048576 - 1))
	rc scrub -q "$T/r1/p"
	[ "$status" -eq 7 ]
	[ "$output" = "damaged at 0x0 length 4096
damaged at 0x5ff000 length 4096" ]
}

@test "a flip the record does not cover is unverified (exit 8), never called clean" {
	# a pool last committed by an rpmemd that recorded nothing
	rm "$R1/.rpmemd/p.scrub"
	poke "$R1/p" 12345
	rc scrub "$T/r1/p"
	echo "$output"
	[ "$status" -eq 8 ]
	[[ "$output" == *"unverified at 0x0 length 6291456: no hashes were recorded for this pool"* ]]
	[[ "$output" != *"every piece as recorded"* ]]
	rc scrub --json "$T/r1/p"
	[ "$status" -eq 8 ]
	[ "$(json .clean)" = false ]
	[ "$(json .bytes_checked)" -eq 0 ]
	[ "$(json .bytes_unverified)" -eq 6291456 ]
	[ "$(json '.findings[0].status')" = unverified ]
}

@test "a syncing pool (an interrupted import) is unverified, not clean" {
	head -c 1M "$W/src" | {
		run "$RPMEMCTL" import --raw -f --discard-target - "$T/r1/p" --size 6M
		[ "$status" -eq 5 ]
	}
	poke "$R1/p" 8192
	rc scrub --json "$T/r1/p"
	[ "$status" -eq 8 ]
	[ "$(json .state)" = syncing ]
	[ "$(json .bytes_unverified)" -eq 6291456 ]
	[[ "$(json '.findings[0].reason')" == *"not consistent"* ]]
}

@test "a damaged recorded hash is reported as such, not as damaged data" {
	# the entry of piece 3 (16 bytes each, after a 4 KiB header)
	poke "$R1/.rpmemd/p.scrub" $((4096 + 3 * 16 + 2))
	rc scrub "$T/r1/p"
	echo "$output"
	[ "$status" -eq 8 ]
	[[ "$output" == *"unverified at 0x3000 length 4096: the recorded hash of the piece is itself damaged"* ]]
	[[ "$output" != *"damaged at"* ]]
}

@test "scrub needs the read right" {
	stop_daemon
	R2=$W/r2
	mkdir -p "$R2"
	access_keys
	default_rules | access_conf
	start_daemon
	as ops mirror "$W/src" "$T/r2/q"
	[ "$status" -eq 0 ]
	as backup1 scrub "$T/r2/q"
	[ "$status" -eq 4 ]
	[[ "$output" == *"identity 'backup1' may not read region 'r2'"* ]]
	as nobody scrub "$T/r2/q"
	[ "$status" -eq 4 ]
	as monitor scrub "$T/r2/q"
	[ "$status" -eq 0 ]
	[[ "$output" == *"every piece as recorded"* ]]
}

@test "an unknown pool or region: exit 4, named" {
	rc scrub "$T/r1/nope"
	[ "$status" -eq 4 ]
	[[ "$output" == *"no pool 'nope' in region 'r1'"* ]]
	rc scrub "$T/r9/p"
	[ "$status" -eq 4 ]
	rc scrub "$T/r1"
	[ "$status" -eq 2 ]
}

@test "a pool larger than one request (64 MiB) is scrubbed whole, a flip past the first request found" {
	mkfile "$W/big" 150
	rc mirror "$W/big" "$T/r1/big"
	[ "$status" -eq 0 ]
	poke "$R1/big" $((140 * 1048576 + 1))
	rc scrub --json "$T/r1/big"
	[ "$status" -eq 7 ]
	[ "$(json .bytes_checked)" -eq $((150 << 20)) ]
	[ "$(json '.findings[0].offset')" -eq $((140 << 20)) ]
}

@test "a pool open for writing (its state still consistent) is unverified: its data may change under the scrub" {
	hold "$T/r1/p" 30
	local hp=$HP
	poke "$R1/p" 4096
	run "$RPMEMCTL" scrub --json "$T/r1/p"
	local out=$output st=$status
	kill "$hp"
	wait "$hp" || true
	output=$out
	echo "$output"
	[ "$st" -eq 8 ]
	[ "$(json .state)" = consistent ]
	[ "$(json .bytes_unverified)" -eq 6291456 ]
	[[ "$(json '.findings[0].reason')" == *"open for writing"* ]]
	# once it is closed, the flip is found
	wait_for scrub_verified
	[ "$status" -eq 7 ]
	[[ "$output" == *"damaged at 0x1000 length 4096"* ]]
}
