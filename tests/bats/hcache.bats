#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# hcache.bats -- the target keeps its block hashes (in 4 KiB pieces) between
# syncs, re-hashes only what was written, and never lets a kept hash hide a
# change

load helpers

setup() {
	setup_env
	# the per-request "N from the hash cache, M hashed" lines are debug
	sed -i 's/level = "info"/level = "debug"/' "$CONF"
	start_daemon
	# 4 MiB: 64 blocks of 64 KiB
	mkfile "$W/src" 4
	rc mirror "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	# the mirror wrote every block; its commit hashed them all for the
	# scrub record (docs/ARCHITECTURE.md, "Scrub") and kept the hashes,
	# so this verify hashes none
	rc verify "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	grep -q "HASH of 64 blocks at offset 0: 64 from the hash cache, 0 hashed" "$DLOG"
}
teardown() { teardown_daemon; }

# last_hash -- the daemon's last coarse HASH line (the whole pool; a fine
# pass's requests of 4 KiB blocks are logged too)
last_hash() {
	grep "HASH of 64 blocks at offset 0" "$DLOG" | tail -1
}

@test "a sync after a change hashes no target block and writes exactly the changed block" {
	local w0
	poke "$W/src" 200000
	w0=$(written p1)
	rc sync "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	[[ "$(last_hash)" == *"64 from the hash cache, 0 hashed (0 KiB read)"* ]]
	# the fine pass over the differing 64 KiB block: from the cache too
	[[ "$(grep -E "HASHV? of 16 blocks at offset 196608" "$DLOG" | tail -1)" == *": 16 from the hash cache, 0 hashed (0 KiB read)"* ]]
	[ $(($(written p1) - w0)) -eq 4096 ]
	cmp "$W/src" "$R1/p1"
	# the sync's commit hashed the 4 KiB piece it wrote for the scrub
	# record, and kept it: the next compare reads nothing
	rc verify "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	[[ "$(last_hash)" == *"64 from the hash cache, 0 hashed (0 KiB read)"* ]]
}

@test "a hash cache file of the 64 KiB layout (version 1) is rebuilt, not misread" {
	local hf="$R1/.rpmemd/p1.hashes"
	stop_daemon
	[ -f "$hf" ]
	# the version field follows the 16-byte magic
	printf '\x01\x00\x00\x00' | dd of="$hf" bs=1 seek=16 conv=notrunc status=none
	start_daemon
	rc verify "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	[[ "$(last_hash)" == *"0 from the hash cache, 64 hashed (4096 KiB read)"* ]]
}

@test "the block hashes survive a restart of rpmemd" {
	stop_daemon
	start_daemon
	rc verify "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	[[ "$(last_hash)" == *"64 from the hash cache, 0 hashed"* ]]
}

@test "a pool file changed while rpmemd was stopped is hashed again and the change is synced" {
	stop_daemon
	poke "$R1/p1" 3000000
	start_daemon
	rc verify "$W/src" "$T/r1/p1"
	[ "$status" -eq 1 ]
	[[ "$output" == *0x2dc000* ]]
	[[ "$(last_hash)" == *"0 from the hash cache, 64 hashed"* ]]
	rc sync "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	cmp "$W/src" "$R1/p1"
}

@test "a pool file written with write(2) behind a running rpmemd has its block hashes dropped" {
	poke "$R1/p1" 70000
	rc verify "$W/src" "$T/r1/p1"
	[ "$status" -eq 1 ]
	[[ "$(last_hash)" == *"0 from the hash cache, 64 hashed"* ]]
}

@test "verify --full hashes every target block and finds a byte changed through a mapping behind rpmemd's back" {
	flip_mapped "$R1/p1" 1000000
	rc verify --full "$W/src" "$T/r1/p1"
	[ "$status" -eq 1 ]
	# 1000000 lies in the 4 KiB block at 0xf4000
	[[ "$output" == *0xf4000* ]]
	[[ "$(last_hash)" == *"(full): 0 from the hash cache, 64 hashed"* ]]
	# what --full hashed is kept: a sync repairs the block
	rc sync "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	cmp "$W/src" "$R1/p1"
}

@test "rpmemd answers plain 64 KiB hashes (an older initiator's) with the XXH3 of each block, tree and 4 KiB hashes from its cache, all as libxxhash reckons them" {
	local hostile="python3 $TOP/tests/peers/hostile.py"
	# the pool's bytes are the source's: the mirror wrote them
	cmp "$W/src" "$R1/p1"
	$hostile "$PORT" hash p1 65536 64 0 >"$W/plain"
	"$BUILD/tests/xxh3_blocks" "$W/src" 65536 >"$W/plain.want"
	cmp "$W/plain" "$W/plain.want"
	# RPMEM_HASH_TREE (bit 1)
	$hostile "$PORT" hash p1 65536 64 2 >"$W/tree"
	"$BUILD/tests/xxh3_blocks" "$W/src" 65536 tree >"$W/tree.want"
	cmp "$W/tree" "$W/tree.want"
	# the tree and the plain hashes differ: the flag is not ignored
	run cmp -s "$W/tree" "$W/plain"
	[ "$status" -ne 0 ]
	[[ "$(last_hash)" == *"64 from the hash cache, 0 hashed (0 KiB read)"* ]]
	$hostile "$PORT" hash p1 4096 1024 0 >"$W/fine"
	"$BUILD/tests/xxh3_blocks" "$W/src" 4096 >"$W/fine.want"
	cmp "$W/fine" "$W/fine.want"
	grep -q "HASH of 1024 blocks at offset 0: 1024 from the hash cache, 0 hashed (0 KiB read)" "$DLOG"
}

@test "a tree HASH of blocks under 4 KiB is malformed: ERROR PROTO, and rpmemd serves on" {
	run python3 "$TOP/tests/peers/hostile.py" "$PORT" hash p1 2048 4 2
	[[ "$output" == "ERROR 1 "* ]]
	rc verify "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
}

# plant_link FILE SIZE -- with rpmemd stopped, FILE (in the region)
# becomes a hard link to $W/outside, SIZE bytes outside the region (a
# copy in $W/outside.orig); then rpmemd starts again
plant_link() {
	stop_daemon
	head -c "$2" /dev/urandom >"$W/outside"
	cp "$W/outside" "$W/outside.orig"
	rm -f "$1"
	ln "$W/outside" "$1"
	start_daemon
}

@test "a pool file hard-linked to a file outside the region is refused: the client gets the reason, the outside file is unchanged" {
	plant_link "$R1/p1" $((4 << 20))
	poke "$W/src" 100
	rc sync "$W/src" "$T/r1/p1"
	cmp "$W/outside" "$W/outside.orig"
	[ "$status" -ne 0 ]
	[[ "$output" == *"pool 'p1' in region 'r1': its file has more than one hard link"* ]]
	grep -q "refusing to write 'p1': it has 2 hard links" "$DLOG"
}

@test "a hash cache file hard-linked to a file outside the region is neither truncated nor written: the pool goes without a cache, saying why" {
	plant_link "$R1/.rpmemd/p1.hashes" 8192
	poke "$W/src" 100
	rc sync "$W/src" "$T/r1/p1"
	cmp "$W/outside" "$W/outside.orig"
	[ "$status" -eq 0 ]
	cmp "$W/src" "$R1/p1"
	grep -q "refusing to write 'p1.hashes': it has 2 hard links" "$DLOG"
	grep -q "pool 'p1': no hash cache (every HASH hashes the pool): Too many links" "$DLOG"
}

@test "a metadata temporary file hard-linked to a file outside the region is neither truncated nor written: the state change fails with the reason" {
	plant_link "$R1/.rpmemd/p1.meta.tmp" 8192
	poke "$W/src" 100
	rc sync "$W/src" "$T/r1/p1"
	cmp "$W/outside" "$W/outside.orig"
	[ "$status" -ne 0 ]
	[[ "$output" == *"cannot write the metadata of pool 'p1': Too many links"* ]]
	grep -q "refusing to write 'p1.meta.tmp': it has 2 hard links" "$DLOG"
	cmp "$W/outside" "$W/outside.orig"
	# the pool's metadata is the one before
	rc list --json "$T/r1/p1"
	[ "$(json '.pools[0].state')" = consistent ]
}

@test "a scrub record's temporary file hard-linked to a file outside the region is neither truncated nor written: the sync stands, the old record stays" {
	plant_link "$R1/.rpmemd/p1.scrub.tmp" 8192
	cp "$R1/.rpmemd/p1.scrub" "$W/record.before"
	poke "$W/src" 100
	rc sync "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	cmp "$W/src" "$R1/p1"
	cmp "$W/outside" "$W/outside.orig"
	cmp "$W/record.before" "$R1/.rpmemd/p1.scrub"
	grep -q "refusing to write 'p1.scrub.tmp': it has 2 hard links" "$DLOG"
	grep -q "pool 'p1': cannot record its hashes for scrub" "$DLOG"
	# the record is of the generation before: nothing is called damaged
	rc scrub "$T/r1/p1"
	[ "$status" -eq 8 ]
	[[ "$output" == *"the recorded hashes are of another image"* ]]
}

@test "pool and metadata files are created 0600 (only rpmemd's user may read them)" {
	rc create "$T/r1/p2" 1M
	[ "$status" -eq 0 ]
	[ "$(stat -c %a "$R1/p2")" = 600 ]
	[ "$(stat -c %a "$R1/.rpmemd/p2.meta")" = 600 ]
	[ "$(stat -c %a "$R1/.rpmemd/p1.hashes")" = 600 ]
	[ "$(stat -c %a "$R1/.rpmemd/p1.scrub")" = 600 ]
	# a metadata rewrite (the state change of a sync) keeps it so
	rc sync "$W/src" "$T/r1/p1"
	[ "$(stat -c %a "$R1/.rpmemd/p1.meta")" = 600 ]
}
