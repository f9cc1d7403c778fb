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
	local w0
	w0=$(written p1)
	[ "$w0" -eq $((16 << 20)) ]
	rc sync --json "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	[ "$(json .blocks_changed)" -eq 0 ]
	[ "$(json .data_bytes)" -eq 0 ]
	[ "$(json .generation)" -eq 1 ]
	# and the daemon received no byte into the pool
	[ "$(written p1)" -eq "$w0" ]
}

@test "sync after changing 5 scattered blocks moves exactly 5 blocks" {
	local w0
	for i in 1 40 77 130 255; do
		poke "$W/src" $((i * 65536 + 100))
	done
	w0=$(written p1)
	rc sync --json "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	[ "$(json .blocks_changed)" -eq 5 ]
	[ "$(json .block_size)" -eq 65536 ]
	# the fine pass moves only the changed 4 KiB pieces: as the client
	# counts them, and as the daemon received them
	[ "$(json .data_bytes)" -eq $((5 * 4096)) ]
	[ "$(($(written p1) - w0))" -eq $((5 * 4096)) ]
	[ "$(json .generation)" -eq 2 ]
	cmp "$W/src" "$R1/p1"
}

@test "blocks changed close together still move only the changed 4 KiB pieces" {
	# 64 KiB blocks 1, 3 and 4 differ. rpmemd answers HASHV, so the fine
	# pass asks for blocks 1 and 3-4 as two ranges and bridges nothing;
	# the bridging of a HASH-only target is in tests/unit/client_sync.c
	local w0
	for b in 1 3 4; do
		poke "$W/src" $((b * 65536 + 4096 * b + 7))
	done
	w0=$(written p1)
	rc sync --json "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	[ "$(json .blocks_changed)" -eq 3 ]
	[ "$(json .data_bytes)" -eq $((3 * 4096)) ]
	[ "$(($(written p1) - w0))" -eq $((3 * 4096)) ]
	cmp "$W/src" "$R1/p1"
}

@test "sync --block-size 4K counts 4 KiB blocks" {
	local w0
	poke "$W/src" 5000
	poke "$W/src" 9000
	w0=$(written p1)
	rc sync --json --block-size 4K "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	[ "$(json .blocks_changed)" -eq 2 ]
	[ "$(json .data_bytes)" -eq 8192 ]
	[ "$(($(written p1) - w0))" -eq 8192 ]
	cmp "$W/src" "$R1/p1"
}

@test "sync --dry-run reports what would move and moves nothing" {
	local w0
	poke "$W/src" 123456
	cp "$R1/p1" "$W/before"
	w0=$(written p1)
	rc sync --dry-run --json "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	[ "$(json .blocks_changed)" -eq 1 ]
	[ "$(json .data_bytes)" -eq 0 ]
	[ "$(json '.ranges | length')" -eq 1 ]
	[ "$(written p1)" -eq "$w0" ]
	cmp "$W/before" "$R1/p1"
}

@test "sync --pull restores a damaged local copy" {
	local w0
	cp "$W/src" "$W/orig"
	dd if=/dev/zero of="$W/src" bs=4096 seek=100 count=10 conv=notrunc 2>/dev/null
	poke "$W/src" 7
	w0=$(written p1)
	# the damage is a write to src's history: a plain pull would lose it
	rc sync --pull "$W/src" "$T/r1/p1"
	[ "$status" -eq 4 ]
	[[ "$output" == *"holds newer writes than the target"* ]]
	! cmp -s "$W/orig" "$W/src"
	rc sync --pull --discard-local --json "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	[ "$(json .operation)" = pull ]
	# 11 4 KiB blocks came back; nothing was written into the pool
	[ "$(json .data_bytes)" -eq $((11 * 4096)) ]
	[ "$(written p1)" -eq "$w0" ]
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
	[ "$(json .created)" = true ]
	[ "$(json .data_bytes)" -eq $((16 << 20)) ]
	[ "$(written fresh)" -eq $((16 << 20)) ]
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

# scatter FILE COARSE_STEP SEED -- change one byte in each of many 4 KiB
# blocks: in every COARSE_STEP-th 64 KiB block, one or two 4 KiB blocks at
# pseudo-random places. Prints the differing 64 KiB blocks, the differing
# 4 KiB blocks and the differing ranges (adjacent 4 KiB blocks merged).
scatter() {
	python3 - "$@" <<'PY'
import os, random, sys
path, step, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rnd = random.Random(seed)
size = os.path.getsize(path)
fine = set()
for cb in range(0, (size + 65535) // 65536, step):
    nf = min(16, (size - cb * 65536) // 4096)
    for f in rnd.sample(range(nf), min(nf, rnd.choice((1, 1, 2)))):
        fine.add(cb * 16 + f)
with open(path, "r+b") as fh:
    for f in sorted(fine):
        off = f * 4096 + rnd.randrange(4096)
        fh.seek(off)
        b = fh.read(1)
        fh.seek(off)
        fh.write(bytes([b[0] ^ 0xff]))
runs = sum(1 for f in fine if f - 1 not in fine)
print(len({f // 16 for f in fine}), len(fine), runs)
PY
}

@test "sync with changes scattered over hundreds of runs moves exactly the changed 4 KiB blocks" {
	# 64 MiB: 1024 blocks of 64 KiB, every other one changed, so the fine
	# pass has 512 separate runs (more than one HASHV request holds)
	local w0
	mkfile "$W/big" 64
	rc mirror "$W/big" "$T/r1/big"
	[ "$status" -eq 0 ]
	read -r ncoarse nfine nruns < <(scatter "$W/big" 2 11)
	[ "$ncoarse" -eq 512 ]
	rc verify --json "$W/big" "$T/r1/big"
	[ "$status" -eq 1 ]
	[ "$(json '.ranges | length')" -eq "$nruns" ]
	w0=$(written big)
	rc sync --json "$W/big" "$T/r1/big"
	[ "$status" -eq 0 ]
	[ "$(json .blocks_changed)" -eq "$ncoarse" ]
	[ "$(json .bytes_changed)" -eq $((nfine * 4096)) ]
	[ "$(json .data_bytes)" -eq $((nfine * 4096)) ]
	[ "$(($(written big) - w0))" -eq $((nfine * 4096)) ]
	# hashes: the dense probe's 64 blocks (half of them differ: not
	# dense), every 64 KiB block, then 16 fine ones in each differing one
	[ "$(json .blocks_compared)" -eq 1024 ]
	[ "$(json .bytes_transferred)" -eq \
		$((nfine * 4096 + 8 * (64 + 1024 + 16 * ncoarse))) ]
	cmp "$W/big" "$R1/big"
	rc verify "$W/big" "$T/r1/big"
	[ "$status" -eq 0 ]
}

@test "sync of a pool whose size is not a multiple of 64 KiB finds changes at its very end" {
	# 16 MiB + 12 KiB: the last 64 KiB block is 12 KiB (three 4 KiB blocks)
	local w0 size=$(((16 << 20) + 12288))
	head -c "$size" /dev/urandom >"$W/odd"
	rc sync "$W/odd" "$T/r1/odd"
	[ "$status" -eq 0 ]
	[ "$(stat -c %s "$R1/odd")" -eq "$size" ]
	poke "$W/odd" $((size - 1))     # last byte: 4 KiB block 4098
	poke "$W/odd" $((size - 12288)) # first byte of the short block
	poke "$W/odd" $((size - 12289)) # last byte of the block before it
	w0=$(written odd)
	rc sync --json "$W/odd" "$T/r1/odd"
	[ "$status" -eq 0 ]
	[ "$(json .blocks_total)" -eq 257 ]
	[ "$(json .blocks_changed)" -eq 2 ]
	[ "$(json .bytes_changed)" -eq $((3 * 4096)) ]
	[ "$(json .data_bytes)" -eq $((3 * 4096)) ]
	[ "$(($(written odd) - w0))" -eq $((3 * 4096)) ]
	# 64 for the dense probe (none differ), 257 coarse hashes, 16 + 3
	# fine ones for the last two blocks
	[ "$(json .bytes_transferred)" -eq \
		$((3 * 4096 + 8 * (64 + 257 + 16 + 3))) ]
	cmp "$W/odd" "$R1/odd"
	rc verify "$W/odd" "$T/r1/odd"
	[ "$status" -eq 0 ]
	# and back: a damaged end of the local copy is pulled from the pool
	cp "$W/odd" "$W/good"
	poke "$W/odd" $((size - 1))
	scatter "$W/odd" 3 5 >/dev/null
	rc sync --pull --discard-local --json "$W/odd" "$T/r1/odd"
	[ "$status" -eq 0 ]
	cmp "$W/good" "$W/odd"
}

@test "sync of a pool in which every block changed sends it whole, as a mirror does, and stays exact" {
	# 64 MiB: 1024 blocks of 64 KiB; a sample of 64 shows them all
	# changed, so the push writes the pool without hashing the rest
	local w0 size=$((64 << 20))
	mkfile "$W/big" 64
	rc mirror "$W/big" "$T/r1/big"
	[ "$status" -eq 0 ]
	mkfile "$W/big" 64
	w0=$(written big)
	rc sync --json "$W/big" "$T/r1/big"
	[ "$status" -eq 0 ]
	[ "$(json .blocks_total)" -eq 1024 ]
	[ "$(json .blocks_compared)" -eq 64 ]
	[ "$(json .blocks_changed)" -eq 1024 ]
	[ "$(json .data_bytes)" -eq "$size" ]
	# the daemon received exactly the pool, once
	[ "$(($(written big) - w0))" -eq "$size" ]
	[ "$(json .generation)" -eq 2 ]
	cmp "$W/big" "$R1/big"
	rc list --json "$T/r1/big"
	[ "$(json '.pools[0].state')" = consistent ]
	# the target's hash cache forgot every block written: a verify finds
	# the copies equal, and one changed byte moves one 4 KiB block
	rc verify "$W/big" "$T/r1/big"
	[ "$status" -eq 0 ]
	poke "$W/big" $((777 * 65536 + 5))
	w0=$(written big)
	rc sync --json "$W/big" "$T/r1/big"
	[ "$status" -eq 0 ]
	[ "$(json .blocks_compared)" -eq 1024 ]
	[ "$(json .data_bytes)" -eq 4096 ]
	[ "$(($(written big) - w0))" -eq 4096 ]
	cmp "$W/big" "$R1/big"
}

@test "sync of a large pool with 1% of its 4 KiB blocks changed compares every block and moves only those" {
	local w0 nfine
	mkfile "$W/big" 64
	rc mirror "$W/big" "$T/r1/big"
	[ "$status" -eq 0 ]
	nfine=$(python3 - "$W/big" <<'PY'
import random, sys
rnd = random.Random(7)
blocks = rnd.sample(range(16384), 164)
with open(sys.argv[1], "r+b") as f:
    for b in blocks:
        off = b * 4096 + rnd.randrange(4096)
        f.seek(off)
        c = f.read(1)[0]
        f.seek(off)
        f.write(bytes([c ^ 0xff]))
print(len(blocks))
PY
)
	w0=$(written big)
	rc sync --json "$W/big" "$T/r1/big"
	[ "$status" -eq 0 ]
	[ "$(json .blocks_compared)" -eq 1024 ]
	[ "$(json .bytes_changed)" -eq $((nfine * 4096)) ]
	[ "$(json .data_bytes)" -eq $((nfine * 4096)) ]
	[ "$(($(written big) - w0))" -eq $((nfine * 4096)) ]
	cmp "$W/big" "$R1/big"
}
