#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# damage.bats -- what a scrub finds damaged is acted on: the pool is listed
# damaged (list, status, JSON, events, Prometheus) and its hash cache
# forgets the pieces, so the next sync of the good source rewrites them

load helpers

setup() {
	setup_env
	# in tmpfs a byte flipped through a mapping leaves the file's stat
	# as it was: rpmemd's hash cache still vouches for the old byte
	SHM=
	if [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ]; then
		SHM=$(mktemp -d /dev/shm/rpmem-damage.XXXXXX)
		R1=$SHM
		write_conf "$CONF" "$PORT"
	fi
	start_daemon
	mkfile "$W/src" 6
	rc mirror "$W/src" "$T/r1/p"
	[ "$status" -eq 0 ]
}

teardown() {
	teardown_daemon
	[ -z "$SHM" ] || rm -rf "$SHM"
}

# damaged_bytes -- the pool's damaged_bytes as list --json reports them
damaged_bytes() {
	"$RPMEMCTL" list --json "$T/r1/p" | jq -er '.pools[0].damaged_bytes'
}

@test "a byte flipped behind rpmemd's back: scrub exits 7, the pool is damaged until a plain sync rewrites the piece, then clean again" {
	local off=$((2 * 1048576 + 100))
	subscribe "$W/ev" "$T"
	# a first sync fills the hash cache with every piece's hash
	rc sync "$W/src" "$T/r1/p"
	[ "$status" -eq 0 ]
	flip_mapped "$R1/p" "$off"
	[ "$(cmp -l "$W/src" "$R1/p" | wc -l)" -eq 1 ]
	rc scrub "$T/r1/p"
	[ "$status" -eq 7 ]
	[[ "$output" == *"damaged at 0x200000 length 4096"* ]]
	# the daemon keeps it, and says so everywhere
	[ -f "$R1/.rpmemd/p.damaged" ]
	rc list "$T/r1/p"
	echo "$output"
	[[ "$output" == *"consistent, damaged (4 KiB)"* ]]
	rc list --json "$T/r1/p"
	[ "$(json '.pools[0].damaged')" = true ]
	[ "$(json '.pools[0].damaged_bytes')" -eq 4096 ]
	rc status "$T"
	[[ "$output" == *"damaged (4 KiB)"* ]]
	"$RPMEMCTL" status --prometheus "$T" >"$W/prom.txt"
	grep -E '^rpmem_pool_damaged_bytes\{.*pool="p".*\} 4096$' "$W/prom.txt"
	alive_until "$EPID" grep -q "pool 'p' damaged: scrub found 1 damaged piece" "$W/ev"
	grep -q "pool 'p' damaged: scrub found 1 damaged piece" "$DLOG"
	# a second scrub finds the same piece: still one listed
	rc scrub "$T/r1/p"
	[ "$status" -eq 7 ]
	[ "$(damaged_bytes)" -eq 4096 ]
	# a plain sync of the good source finds the piece and rewrites it
	rc sync "$W/src" "$T/r1/p"
	[ "$status" -eq 0 ]
	cmp "$W/src" "$R1/p"
	[ ! -e "$R1/.rpmemd/p.damaged" ]
	[ "$(damaged_bytes)" -eq 0 ]
	rc list --json "$T/r1/p"
	[ "$(json '.pools[0].damaged')" = false ]
	alive_until "$EPID" grep -q "pool 'p' repaired" "$W/ev"
	kill "$EPID"
	rc scrub "$T/r1/p"
	[ "$status" -eq 0 ]
	[[ "$output" == *"every piece as recorded at generation 2"* ]]
}

@test "the damaged state survives a restart of rpmemd, and a default verify sees the difference" {
	rc sync "$W/src" "$T/r1/p"
	flip_mapped "$R1/p" 5000
	rc scrub "$T/r1/p"
	[ "$status" -eq 7 ]
	stop_daemon
	start_daemon
	[ "$(damaged_bytes)" -eq 4096 ]
	# the hash cache no longer vouches for the piece
	rc verify "$W/src" "$T/r1/p"
	[ "$status" -eq 1 ]
	[[ "$output" == *0x1000* ]]
}

@test "a list of damaged pieces that is itself damaged still marks the pool damaged, and a scrub lists the pieces again" {
	flip_mapped "$R1/p" 5000
	rc scrub "$T/r1/p"
	[ "$status" -eq 7 ]
	poke "$R1/.rpmemd/p.damaged" 70
	[ "$(damaged_bytes)" -gt 0 ]
	rc scrub "$T/r1/p"
	[ "$status" -eq 7 ]
	[ "$(damaged_bytes)" -eq 4096 ]
	grep -q "its list of damaged pieces is damaged or not its own" "$DLOG"
}

@test "remove takes the list of damaged pieces with the pool" {
	flip_mapped "$R1/p" 5000
	rc scrub "$T/r1/p"
	[ "$status" -eq 7 ]
	rc remove "$T/r1/p"
	[ "$status" -eq 0 ]
	[ ! -e "$R1/.rpmemd/p.damaged" ]
	rc mirror "$W/src" "$T/r1/p"
	[ "$(damaged_bytes)" -eq 0 ]
}
