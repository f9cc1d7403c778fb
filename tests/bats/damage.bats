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
	stop_second
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

# pool_state -- "STATE PENDING RECOVERABLE_GENERATION" of r1/p, as listed
pool_state() {
	"$RPMEMCTL" list --json "$T/r1/p" |
		jq -r '.pools[0] | "\(.state) \(.pending) \(.recoverable_generation)"'
}

# no_writer -- r1/p is open for writing by no session
no_writer() {
	[ -z "$("$RPMEMCTL" list --json "$T/r1/p" | jq -r '.pools[0].writer')" ]
}

# interrupted N -- a sync that wrote N blocks of 4 KiB, 128 KiB apart,
# each from a session of its own, and stopped: the pool is syncing, its
# undo journal (one record a block) bound to generation 1; the image
# before in $W/gen1, the mixed one in $W/mixed
interrupted() {
	cp "$R1/p" "$W/gen1"
	for i in $(seq 0 $(($1 - 1))); do
		run python3 "$TOP/tests/peers/hostile.py" "$PORT" raw-sync p \
			"vm:/src" $((i * 131072))
		[ "$output" = OK ]
	done
	alive_until "$DPID" no_writer
	[ "$(pool_state)" = "syncing true 1" ]
	[ "$(stat -c %s "$R1/.rpmemd/p.undo")" -eq $((4096 + $1 * (32 + 4096))) ]
	cp "$R1/p" "$W/mixed"
	run cmp -s "$W/gen1" "$W/mixed"
	[ "$status" -ne 0 ]
}

@test "rollback over a journal whose record 1 of 8 has a flipped byte is refused, naming the record; the pool stays pending, nothing is cut or written" {
	interrupted 8
	# a byte of record 1's data (after the 4 KiB header and its 32-byte head)
	poke "$R1/.rpmemd/p.undo" $((4096 + 32 + 100))
	cp "$R1/.rpmemd/p.undo" "$W/undo"
	rc rollback "$T/r1/p"
	echo "$output"
	[ "$status" -eq 4 ]
	[[ "$output" == *"its undo journal's record at byte 4096 (the blocks of 0x0 length 4096) is damaged and valid records follow it, so it cannot give back generation 1"* ]]
	[ "$(pool_state)" = "syncing true 1" ]
	cmp "$W/undo" "$R1/.rpmemd/p.undo"
	cmp "$W/mixed" "$R1/p"
	grep -q "the record at byte 4096 is damaged and valid records follow it" "$DLOG"
	# still so after a restart, and a sync completes the new image
	stop_daemon
	start_daemon
	rc rollback "$T/r1/p"
	[ "$status" -eq 4 ]
	cmp "$W/undo" "$R1/.rpmemd/p.undo"
	rc sync "$W/src" "$T/r1/p"
	[ "$status" -eq 0 ]
	cmp "$W/src" "$R1/p"
	[ "$(pool_state)" = "consistent false null" ]
}

@test "a torn last record (a crash while it was appended) is cut off and the rollback gives generation 1 back" {
	interrupted 3
	# half a record head after the last record: never durable, so the
	# block it was for was never written
	printf 'UREC\001\000\000\000\000\000' >>"$R1/.rpmemd/p.undo"
	rc rollback "$T/r1/p"
	[ "$status" -eq 0 ]
	cmp "$W/gen1" "$R1/p"
	[ "$(pool_state)" = "consistent false null" ]
	rc scrub "$T/r1/p"
	[ "$status" -eq 0 ]
}

@test "a rollback whose result is not generation 1's image (a byte flipped outside the journal) is checked against the scrub record and refused; the pool stays pending" {
	interrupted 2
	poke "$R1/p" $((3 * 1048576 + 7))
	rc rollback "$T/r1/p"
	echo "$output"
	[ "$status" -eq 4 ]
	[[ "$output" == *"is not marked consistent: after the rollback 1 piece of 4 KiB differ from generation 1's scrub record, the first at 0x300000 length 4096"* ]]
	[ "$(pool_state)" = "syncing true 1" ]
	[ -f "$R1/.rpmemd/p.undo" ]
	rc sync "$W/src" "$T/r1/p"
	[ "$status" -eq 0 ]
	cmp "$W/src" "$R1/p"
}

@test "a rollback of a pool with a known damaged piece the sync did not touch gives generation 1 back and the piece stays listed damaged" {
	flip_mapped "$R1/p" $((5 * 1048576 + 9))
	rc scrub "$T/r1/p"
	[ "$status" -eq 7 ]
	interrupted 2
	rc rollback "$T/r1/p"
	echo "$output"
	[ "$status" -eq 0 ]
	cmp "$W/gen1" "$R1/p"
	[ "$(damaged_bytes)" -eq 4096 ]
	rc scrub "$T/r1/p"
	[ "$status" -eq 7 ]
	[[ "$output" == *"damaged at 0x500000 length 4096"* ]]
}

@test "export refuses a damaged piece it reads, naming it (exit 7), and lists the pool damaged; --force exports it as it is, saying which range" {
	flip_mapped "$R1/p" $((4 * 1048576 + 10))
	# no scrub ran: the read itself compares with the scrub record
	rc export "$T/r1/p" "$W/out"
	echo "$output"
	[ "$status" -eq 7 ]
	[[ "$output" == *"pool 'p' is damaged at 0x400000 length 4096: its data is not as recorded at its last commit"* ]]
	[ ! -e "$W/out" ]
	[ "$(damaged_bytes)" -eq 4096 ]
	rc export --force --raw "$T/r1/p" "$W/out"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"warning: read as it is (--force): pool 'p' is damaged at 0x400000 length 4096"* ]]
	cmp "$W/out" "$R1/p"
	run cmp -s "$W/out" "$W/src"
	[ "$status" -ne 0 ]
}

@test "sync --pull refuses a damaged piece (exit 7, the range named, the local file untouched); --force pulls it, saying which range" {
	flip_mapped "$R1/p" $((1048576 + 4095))
	cp "$W/src" "$W/local"
	poke "$W/local" $((1048576 + 1))
	cp "$W/local" "$W/local.before"
	rc sync --pull "$W/local" "$T/r1/p"
	echo "$output"
	[ "$status" -eq 7 ]
	[[ "$output" == *"pool 'p' is damaged at 0x100000 length 4096"* ]]
	cmp "$W/local.before" "$W/local"
	rc sync --pull --force "$W/local" "$T/r1/p"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"read as it is (--force): pool 'p' is damaged at 0x100000 length 4096"* ]]
	cmp "$W/local" "$R1/p"
	rc sync --force "$W/local" "$T/r1/p"
	[ "$status" -eq 2 ]
}

@test "RPMEM_READ_SCRUB=1 drives the RDMA path's check over tcp: a pull has rpmemd SCRUB its pieces before it reads them, refused naming the range with no READ sent for it; --force delivers" {
	flip_mapped "$R1/p" $((1048576 + 4095))
	cp "$W/src" "$W/local"
	poke "$W/local" $((1048576 + 1))
	cp "$W/local" "$W/local.before"
	RPMEM_READ_SCRUB=1 rc sync --pull "$W/local" "$T/r1/p"
	echo "$output"
	[ "$status" -eq 7 ]
	[[ "$output" == *"pool 'p' is damaged at 0x100000 length 4096"* ]]
	cmp "$W/local.before" "$W/local"
	[ "$(damaged_bytes)" -eq 4096 ]
	# the SCRUB found it: rpmemd refused no READ (its check of READs)
	[ "$(grep -c "a read of .* refused: damaged" "$DLOG")" -eq 0 ]
	RPMEM_READ_SCRUB=1 rc sync --pull --force "$W/local" "$T/r1/p"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"read as it is (--force): pool 'p' is damaged at 0x100000 length 4096"* ]]
	cmp "$W/local" "$R1/p"
}

@test "a restore --at of a version whose block in the current image is damaged is refused naming the range; --force restores it with a warning" {
	stop_daemon
	sed -i 's|type = "dir"; path = "\([^"]*\)"; }|type = "dir"; path = "\1"; versions = "all"; }|' "$CONF"
	grep -q 'versions = "all"' "$CONF"
	start_daemon
	cp "$W/src" "$W/v1"
	# generation 2 changes the first block only: version 1 shares the rest
	poke "$W/src" 10
	rc sync "$W/src" "$T/r1/p"
	[ "$status" -eq 0 ]
	rc versions "$T/r1/p"
	[[ "$output" == *"1"* ]]
	flip_mapped "$R1/p" $((3 * 1048576 + 5))
	rc sync --pull --at 1 "$W/restored" "$T/r1/p"
	echo "$output"
	[ "$status" -eq 7 ]
	[[ "$output" == *"version 1 of pool 'p' is damaged at 0x300000 length 4096"* ]]
	[ ! -e "$W/restored" ]
	rc sync --pull --at 1 --force "$W/restored" "$T/r1/p"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"read as it is (--force): version 1 of pool 'p' is damaged at 0x300000 length 4096"* ]]
	[ "$(cmp -l "$W/v1" "$W/restored" | wc -l)" -eq 1 ]
	# the current image (generation 2) is checked against the pool's record
	rc sync --pull --at 2 "$W/cur" "$T/r1/p"
	[ "$status" -eq 7 ]
	[[ "$output" == *"pool 'p' is damaged at 0x300000 length 4096"* ]]
}

# pool_gen -- r1/p's generation and state, as listed
pool_gen() {
	"$RPMEMCTL" list --json "$T/r1/p" |
		jq -r '.pools[0] | "\(.state) \(.generation)"'
}

@test "scrub --repair --from FILE rewrites the damaged piece with data the target checks against its record: same generation, clean again" {
	flip_mapped "$R1/p" $((2 * 1048576 + 3))
	[ "$(pool_gen)" = "consistent 1" ]
	rc scrub --repair --from "$W/src" "$T/r1/p"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"repaired at 0x200000 length 4096"* ]]
	[[ "$output" == *"all of it repaired from $W/src"* ]]
	cmp "$W/src" "$R1/p"
	[ "$(pool_gen)" = "consistent 1" ]
	[ "$(damaged_bytes)" -eq 0 ]
	grep -q "4096 bytes at offset 2097152 repaired" "$DLOG"
	rc scrub --json "$T/r1/p"
	[ "$status" -eq 0 ]
	[ "$(json .repaired_bytes)" -eq 0 ]
	rc scrub "$T/r1/p"
	[[ "$output" == *"every piece as recorded at generation 1"* ]]
}

@test "a repair with data that is not the recorded data (another image) is refused by the target: nothing written, exit 7, still damaged" {
	flip_mapped "$R1/p" $((2 * 1048576 + 3))
	cp "$W/src" "$W/other"
	poke "$W/other" $((2 * 1048576 + 100))
	cp "$R1/p" "$W/before"
	rc scrub --repair --from "$W/other" "$T/r1/p"
	echo "$output"
	[ "$status" -eq 7 ]
	[[ "$output" == *"not repaired at 0x200000 length 4096 with the data of $W/other"* ]]
	[[ "$output" == *"does not hash as its scrub record says"* ]]
	cmp "$W/before" "$R1/p"
	[ "$(damaged_bytes)" -eq 4096 ]
	rc scrub --repair "$T/r1/p"
	[ "$status" -eq 2 ]
}

@test "scrub --repair --from another target at the same generation heals the piece across hosts; a copy at another generation is refused" {
	start_second
	rc mirror "$W/src" "$T2/r1/p"
	[ "$status" -eq 0 ]
	flip_mapped "$R1/p" $((5 * 1048576 + 4000))
	rc scrub --json --repair --from "$T2/r1/p" "$T/r1/p"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(json .repaired_bytes)" -eq 4096 ]
	[ "$(json '.findings[0].status')" = repaired ]
	cmp "$W/src" "$R1/p"
	[ "$(pool_gen)" = "consistent 1" ]
	# the other copy moves on: it no longer holds generation 1
	poke "$W/src" 9
	rc sync "$W/src" "$T2/r1/p"
	[ "$status" -eq 0 ]
	flip_mapped "$R1/p" 7
	cp "$R1/p" "$W/before"
	rc scrub --repair --from "$T2/r1/p" "$T/r1/p"
	echo "$output"
	[ "$status" -eq 4 ]
	[[ "$output" == *"holds another image (consistent at generation 2"* ]]
	cmp "$W/before" "$R1/p"
}

@test "a region's scrub_interval has rpmemd scrub its pools on a schedule: a flipped byte is found, listed damaged, and an event and the log say so" {
	stop_daemon
	sed -i 's|type = "dir"; path = "\([^"]*\)"; }|type = "dir"; path = "\1"; scrub_interval = "1s"; }|' "$CONF"
	grep -q 'scrub_interval = "1s"' "$CONF"
	start_daemon
	subscribe "$W/ev" "$T"
	flip_mapped "$R1/p" $((3 * 1048576 + 1))
	alive_until "$EPID" grep -q "scheduled scrub of pool 'p': 6291456 bytes checked, 4096 damaged, 0 unverified" "$W/ev"
	kill "$EPID"
	grep -q "pool 'p' damaged: scrub found 1 damaged piece" "$W/ev"
	[ "$(damaged_bytes)" -eq 4096 ]
	grep -q "scheduled scrub (scrub_interval) begins" "$DLOG"
	# repaired, the next scheduled scrub finds it clean
	rc sync "$W/src" "$T/r1/p"
	[ "$status" -eq 0 ]
	alive_until "$DPID" grep -q "scheduled scrub of pool 'p': 6291456 bytes checked, 0 damaged, 0 unverified: clean" "$DLOG"
	[ "$(damaged_bytes)" -eq 0 ]
}

@test "scrub_interval takes 1s to 52w and refuses anything else, naming the setting" {
	for v in 1s 90m 12h 1d 2w; do
		sed -e "s|type = \"dir\"; path = \"\([^\"]*\)\"; }|type = \"dir\"; path = \"\1\"; scrub_interval = \"$v\"; }|" "$CONF" >"$W/ok.conf"
		run "$RPMEMD" -n -c "$W/ok.conf"
		echo "$v: $output"
		[ "$status" -eq 0 ]
	done
	for v in 0s 1y 53w 5 "" 1.5h; do
		sed -e "s|type = \"dir\"; path = \"\([^\"]*\)\"; }|type = \"dir\"; path = \"\1\"; scrub_interval = \"$v\"; }|" "$CONF" >"$W/bad.conf"
		run "$RPMEMD" -n -c "$W/bad.conf"
		echo "$v: $output"
		[ "$status" -ne 0 ]
		[[ "$output" == *"regions[0].scrub_interval: '$v' is not an interval from 1s to 52w"* ]]
	done
}
