#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# generations.bats -- which copy is newer: generation histories decide a
# sync (same, source ahead, target ahead, split brain); promotion in place
# and to a file, of a consistent and of a syncing copy; failback moves
# only what differs

load helpers

MiB=$((1 << 20))

setup() {
	setup_daemon
	mkfile "$W/f" 8
	# an empty FILE.rpmemgen: start a history for f at its first sync
	: >"$W/f.rpmemgen"
}

teardown() {
	stop_second
	teardown_daemon
}

# gens WHAT -- the target's history of r1/p (list --json), ids joined by ","
tgens() {
	"$RPMEMCTL" list --json "$T/r1/${1:-p}" | jq -r '.pools[0].generations | join(",")'
}

# hold POOL -- keep f and the target's POOL as they are now, and the
# target's history of POOL (HELD_GENS), for unchanged
hold() {
	cp "$W/f" "$W/held_l"
	cp "$R1/$1" "$W/held_t"
	HELD_GENS=$(tgens "$1")
}

# unchanged POOL -- f, the target's POOL and its history as hold kept them
unchanged() {
	cmp "$W/f" "$W/held_l"
	cmp "$R1/$1" "$W/held_t"
	[ "$(tgens "$1")" = "$HELD_GENS" ]
}

# lgens -- f's own history (f.rpmemgen), ids joined by ","
lgens() {
	sed -n 's/^ids=//p' "$W/f.rpmemgen"
}

# role -- the target's role of r1/p
role() {
	"$RPMEMCTL" list --json "$T/r1/p" | jq -r '.pools[0].role'
}

# write_target OFFSET -- a local application on the target host writes 4
# KiB of its own into the pool file in the region
write_target() {
	head -c 4096 /dev/urandom |
		dd of="$R1/p" bs=4096 seek=$(($1 / 4096)) conv=notrunc 2>/dev/null
}

# last_read -- bytes the daemon says the last closed session read
last_read() {
	sed -n 's/.* closed: .*(\([0-9]*\) bytes written, \([0-9]*\) read.*/\2/p' \
		"$DLOG" | tail -n 1
}

# synced_pair -- f synced to r1/p with a history on both sides
synced_pair() {
	rc sync "$W/f" "$T/r1/p"
	[ "$status" -eq 0 ]
	[ -n "$(lgens)" ]
	[ "$(tgens)" = "$(lgens)" ]
}

@test "promote in place: a new id and the role primary; pushes, mirrors and live writers are refused (exit 4) and write nothing; demote takes them again" {
	synced_pair
	local before
	before=$(tgens)
	rc promote --json "$T/r1/p"
	[ "$status" -eq 0 ]
	[ "$(json .role)" = primary ]
	[ "$(json '.generations | length')" -eq 2 ]
	[ "$(json '.generations[1]')" = "$before" ]
	[ "$(role)" = primary ]
	# promoting it again changes nothing (a cluster manager may repeat)
	rc promote --json "$T/r1/p"
	[ "$status" -eq 0 ]
	[ "$(json '.generations | length')" -eq 2 ]
	rc list "$T/r1"
	[[ "$output" == *"consistent, primary"* ]]
	# status shows the same per pool
	rc status --json "$T"
	[ "$(json '.pools[] | select(.name == "p") | .role')" = primary ]
	cp "$R1/p" "$W/held"
	local w0
	w0=$(written p)
	poke "$W/f" 5
	rc sync --discard-target "$W/f" "$T/r1/p"
	[ "$status" -eq 4 ]
	[[ "$output" == *"is the primary on this target"* ]]
	[[ "$output" == *"rpmemctl demote"* ]]
	rc mirror "$W/f" "$T/r1/p"
	[ "$status" -eq 4 ]
	run "$BUILD/tests/hold_pool" "$T/r1/p" 0
	[ "$status" -eq 4 ]
	[[ "$output" == *"hold_pool: open: "*"primary"* ]]
	[ "$(written p)" -eq "$w0" ]
	cmp "$R1/p" "$W/held"
	grep -q "pool r1/p: promote: role primary" "$DLOG"
	rc demote --json "$T/r1/p"
	[ "$status" -eq 0 ]
	[ "$(json .role)" = secondary ]
	[ "$(role)" = secondary ]
}

@test "promote in place, then the target host replicates its copy onward: the pool file in the region, written there, is synced to another rpmemd, the second time only what differs" {
	synced_pair
	start_second
	rc promote "$T/r1/p"
	[ "$status" -eq 0 ]
	write_target $((4 * MiB))
	# the target host's application replicates the region's file onward
	rc sync --json "$R1/p" "$T2/r1/p"
	[ "$status" -eq 0 ]
	cmp "$R1/p" "$R1B/p"
	[ "$(role)" = primary ]
	# and again after another write: only what differs moves, as the
	# second daemon counts what it received
	local w0
	w0=$("$RPMEMCTL" list --json "$T2/r1/p" | jq -er '.pools[0].bytes_written')
	write_target $((6 * MiB))
	rc sync --json "$R1/p" "$T2/r1/p"
	[ "$status" -eq 0 ]
	[ "$(json .blocks_changed)" -eq 1 ]
	[ "$(($("$RPMEMCTL" list --json "$T2/r1/p" |
		jq -er '.pools[0].bytes_written') - w0))" -eq 4096 ]
	cmp "$R1/p" "$R1B/p"
	stop_second
}

@test "the same history: the sync moves nothing; the source ahead (written since): the sync goes forward and the target takes its history" {
	synced_pair
	local first
	first=$(lgens)
	rc sync --json "$W/f" "$T/r1/p"
	[ "$status" -eq 0 ]
	[ "$(json .blocks_changed)" -eq 0 ]
	[ "$(lgens)" = "$first" ]
	[ "$(json .history)" = same ]
	poke "$W/f" $((3 * MiB + 9))
	rc sync --json "$W/f" "$T/r1/p"
	[ "$status" -eq 0 ]
	[ "$(json .history)" = ahead ]
	[ "$(json .blocks_changed)" -eq 1 ]
	# a new id in front of the old one, on both sides
	[ "$(lgens | cut -d, -f2)" = "$first" ]
	[ "$(tgens)" = "$(lgens)" ]
	cmp "$W/f" "$R1/p"
}

# A promoted copy is written by applications on its host, outside rpmemd:
# the scrub record of the image it had cannot vouch for it any more, so
# promote removes it. Before, a scrub called the host's own writes damage
# (exit 7) and every read of them was refused, the failback pull included.
@test "a promoted copy written on its host is not damage: promote drops its scrub record, scrub says unverified (8), reads are served" {
	synced_pair
	[ -f "$R1/.rpmemd/p.scrub" ]
	rc promote "$T/r1/p"
	[ "$status" -eq 0 ]
	[ ! -e "$R1/.rpmemd/p.scrub" ]
	write_target $((2 * MiB))
	rc scrub "$T/r1/p"
	[ "$status" -eq 8 ]
	[ ! -e "$R1/.rpmemd/p.damaged" ]
	rc export --raw "$T/r1/p" "$W/out"
	[ "$status" -eq 0 ]
	cmp "$W/out" "$R1/p"
	! grep -q "refused: damaged" "$DLOG"
}

@test "the target ahead (promoted and written there): a push is refused, says how to pull, and overwrites nothing; the pull brings the target's writes" {
	synced_pair
	rc promote "$T/r1/p"
	[ "$status" -eq 0 ]
	write_target $((2 * MiB))
	rc demote "$T/r1/p"
	[ "$status" -eq 0 ]
	cp "$R1/p" "$W/held"
	local w0
	w0=$(written p)
	rc sync "$W/f" "$T/r1/p"
	[ "$status" -eq 4 ]
	[[ "$output" == *"the target holds newer writes"* ]]
	[[ "$output" == *"rpmemctl sync --pull $W/f $T/r1/p"* ]]
	[ "$(written p)" -eq "$w0" ]
	cmp "$R1/p" "$W/held"
	# the pull takes them (and the target's history)
	rc sync --pull --json "$W/f" "$T/r1/p"
	[ "$status" -eq 0 ]
	[ "$(json .history)" = behind ]
	cmp "$W/f" "$R1/p"
	[ "$(lgens)" = "$(tgens)" ]
	rc sync --json "$W/f" "$T/r1/p"
	[ "$status" -eq 0 ]
	[ "$(json .blocks_changed)" -eq 0 ]
}

@test "split brain (both written while apart): push and pull are refused, both last writes are named, nothing is overwritten; the discard commands resolve it" {
	synced_pair
	# the target is promoted and written while the initiator is away...
	rc promote "$T/r1/p"
	write_target $((1 * MiB))
	rc demote "$T/r1/p"
	# ...and the initiator's copy is written too
	poke "$W/f" $((5 * MiB + 3))
	hold p
	local w0 tg=$HELD_GENS
	w0=$(written p)
	rc sync "$W/f" "$T/r1/p"
	[ "$status" -eq 4 ]
	[[ "$output" == *"split brain"* ]]
	[[ "$output" == *"local: last written "*", history "* ]]
	[[ "$output" == *"target: last written "*", history ${tg%%,*}"* ]]
	[[ "$output" == *"rpmemctl sync --discard-target $W/f $T/r1/p"* ]]
	[[ "$output" == *"rpmemctl sync --pull --discard-local $W/f $T/r1/p"* ]]
	rc mirror "$W/f" "$T/r1/p"
	[ "$status" -eq 4 ]
	rc sync --pull "$W/f" "$T/r1/p"
	[ "$status" -eq 4 ]
	[[ "$output" == *"split brain"* ]]
	# nothing overwritten on either side
	[ "$(written p)" -eq "$w0" ]
	unchanged p
	# keep the target's: the local writes are discarded
	rc sync --pull --discard-local "$W/f" "$T/r1/p"
	[ "$status" -eq 0 ]
	cmp "$W/f" "$W/held_t"
	[ "$(lgens)" = "$tg" ]
}

@test "the source ahead, pulled: refused (the local writes would be lost), says how to push, overwrites neither side; --discard-local takes the target's copy" {
	synced_pair
	poke "$W/f" $((6 * MiB + 5))
	hold p
	local w0 tg=$HELD_GENS
	w0=$(written p)
	rc sync --pull "$W/f" "$T/r1/p"
	[ "$status" -eq 4 ]
	[[ "$output" == *"'$W/f' holds newer writes than the target"* ]]
	[[ "$output" == *"rpmemctl sync $W/f $T/r1/p"* ]]
	[[ "$output" == *"rpmemctl sync --pull --discard-local $W/f $T/r1/p"* ]]
	unchanged p
	[ "$(written p)" -eq "$w0" ]
	# the local write made a new id in front (kept: the write happened)
	[ "$(lgens | cut -d, -f2)" = "$tg" ]
	rc sync --pull --discard-local "$W/f" "$T/r1/p"
	[ "$status" -eq 0 ]
	cmp "$W/f" "$W/held_t"
	[ "$(lgens)" = "$tg" ]
}

@test "unrelated histories (no id in common: another file's pool): push and pull are refused as a split brain, nothing is overwritten" {
	synced_pair
	# g: another file with its own history, pushed to r1/q
	mkfile "$W/g" 8
	: >"$W/g.rpmemgen"
	rc sync "$W/g" "$T/r1/q"
	[ "$status" -eq 0 ]
	hold q
	[ -n "$HELD_GENS" ]
	rc sync "$W/f" "$T/r1/q"
	[ "$status" -eq 4 ]
	[[ "$output" == *"split brain"*"their histories have no id in common"* ]]
	rc sync --pull "$W/f" "$T/r1/q"
	[ "$status" -eq 4 ]
	[[ "$output" == *"their histories have no id in common"* ]]
	unchanged q
}

@test "split brain resolved the other way: sync --discard-target keeps the local copy and the target takes its history" {
	synced_pair
	rc promote "$T/r1/p"
	write_target 0
	rc demote "$T/r1/p"
	poke "$W/f" 77
	rc sync "$W/f" "$T/r1/p"
	[ "$status" -eq 4 ]
	rc sync --discard-target "$W/f" "$T/r1/p"
	[ "$status" -eq 0 ]
	cmp "$W/f" "$R1/p"
	[ "$(tgens)" = "$(lgens)" ]
	rc sync --pull --discard-target "$W/f" "$T/r1/p"
	[ "$status" -eq 2 ]
}

@test "promote --to FILE: the copy is pulled into FILE (only what differs), FILE's history records the promotion, the target stays a secondary" {
	synced_pair
	local tg
	tg=$(tgens)
	cp "$W/f" "$W/g"
	poke "$W/g" 12345
	rc promote --json --to "$W/g" "$T/r1/p"
	[ "$status" -eq 0 ]
	[ "$(json .file)" = "$W/g" ]
	[ "$(json .role)" = primary ]
	[ "$(json '.generations[1]')" = "$tg" ]
	cmp "$W/g" "$R1/p"
	# the pull read one 4 KiB block, by the daemon's count
	[ "$(last_read)" -le 65536 ]
	[ "$(sed -n 's/^ids=//p' "$W/g.rpmemgen" | cut -d, -f2)" = "$tg" ]
	[ "$(role)" = secondary ]
	# FILE is ahead of the target: a push from it goes forward
	poke "$W/g" 999
	rc sync "$W/g" "$T/r1/p"
	[ "$status" -eq 0 ]
	cmp "$W/g" "$R1/p"
}

@test "promoting a syncing copy with an undo journal: refused without --force (says what is lost); --force rolls the interrupted sync back first" {
	cp "$W/f" "$W/orig"
	synced_pair
	run python3 "$TOP/tests/peers/hostile.py" "$PORT" raw-sync p "host:/elsewhere" 0
	[ "$output" = OK ]
	rc list --json "$T/r1/p"
	[ "$(json '.pools[0].state')" = syncing ]
	[ "$(json '.pools[0].pending')" = true ]
	rc promote "$T/r1/p"
	[ "$status" -eq 4 ]
	[[ "$output" == *"--force rolls it back to generation 1, its last complete image"* ]]
	[[ "$output" == *"host:/elsewhere"* ]]
	[ "$(role)" = secondary ]
	rc promote --force --json "$T/r1/p"
	[ "$status" -eq 0 ]
	[ "$(json .rolled_back)" = true ]
	[ "$(json .role)" = primary ]
	[ "$(json .state)" = consistent ]
	cmp "$R1/p" "$W/orig"
}

@test "promote --to FILE of a syncing copy with a journal: refused without --force; --force rolls back first, then pulls the last complete image" {
	cp "$W/f" "$W/orig"
	synced_pair
	run python3 "$TOP/tests/peers/hostile.py" "$PORT" raw-sync p "host:/elsewhere" 0
	[ "$output" = OK ]
	rc promote --to "$W/g" "$T/r1/p"
	[ "$status" -eq 4 ]
	[[ "$output" == *"--force rolls it back to generation 1"* ]]
	[ ! -e "$W/g" ]
	rc promote --json --force --to "$W/g" "$T/r1/p"
	[ "$status" -eq 0 ]
	[ "$(json .rolled_back)" = true ]
	cmp "$W/g" "$W/orig"
	cmp "$R1/p" "$W/orig"
	[ "$(role)" = secondary ]
}

@test "promoting a syncing copy without a journal (a live writer's): --force makes the partly written image the primary; --to pulls its last drained image" {
	synced_pair
	run python3 "$TOP/tests/peers/hostile.py" "$PORT" raw-sync p "host:/app (live)" 0
	[ "$output" = OK ]
	# its writer is gone: a live copy, pulled as it is (Consistent)
	rc promote --to "$W/g" "$T/r1/p"
	[ "$status" -eq 0 ]
	cmp "$W/g" "$R1/p"
	[ "$(role)" = secondary ]
	rc promote "$T/r1/p"
	[ "$status" -eq 4 ]
	[[ "$output" == *"a live copy whose writer is gone"* ]]
	[[ "$output" == *"--force makes it the primary in place as it is"* ]]
	rc promote --force --json "$T/r1/p"
	[ "$status" -eq 0 ]
	[ "$(json .rolled_back)" = false ]
	[ "$(json .role)" = primary ]
	# the interrupted sync's block is kept as written
	[ "$(head -c 4096 "$R1/p" | tr -d '\132' | wc -c)" -eq 0 ]
}

@test "failback: the old primary returns, is refused as a push, and pulls only the blocks the promoted copy wrote (the daemon's read counter)" {
	mkfile "$W/f" 64
	synced_pair
	rc promote "$T/r1/p"
	for off in $((3 * MiB)) $((17 * MiB)) $((40 * MiB + 8192)); do
		write_target "$off"
	done
	rc sync "$W/f" "$T/r1/p"
	[ "$status" -eq 4 ]
	rc demote "$T/r1/p"
	rc sync --pull --json "$W/f" "$T/r1/p"
	[ "$status" -eq 0 ]
	cmp "$W/f" "$R1/p"
	# three 4 KiB blocks read of 64 MiB, as the daemon counted them
	[ "$(last_read)" -eq $((3 * 4096)) ]
	rc sync --json "$W/f" "$T/r1/p"
	[ "$status" -eq 0 ]
	[ "$(json .blocks_changed)" -eq 0 ]
}

@test "no history yet (a plain file): the first push starts one on both sides; --no-history syncs as before, records nothing and says so" {
	rm "$W/f.rpmemgen"
	rc sync "$W/f" "$T/r1/p"
	[ "$status" -eq 0 ]
	[ -s "$W/f.rpmemgen" ]
	[ "$(tgens)" = "$(lgens)" ]
	cmp "$W/f" "$R1/p"
	mkfile "$W/g" 8
	rc sync --no-history "$W/g" "$T/r1/q"
	[ "$status" -eq 0 ]
	[[ "$output" == *"--no-history"* ]]
	[ ! -e "$W/g.rpmemgen" ]
	[ -z "$(tgens q)" ]
	cmp "$W/g" "$R1/q"
}

# two_copies -- f pushed to r1/p and r1/q (several targets, the defaults:
# no f.rpmemgen beforehand); then promote --to g of p, and g's own write
# synced to p: p holds writes f never saw
two_copies() {
	rm "$W/f.rpmemgen"
	rc sync "$W/f" "$T/r1/p" "$T/r1/q"
	[ "$status" -eq 0 ]
	[ -s "$W/f.rpmemgen" ]
	[ "$(tgens p)" = "$(lgens)" ]
	[ "$(tgens q)" = "$(lgens)" ]
	rc promote --to "$W/g" "$T/r1/p"
	[ "$status" -eq 0 ]
	poke "$W/g" 777
	rc sync "$W/g" "$T/r1/p"
	[ "$status" -eq 0 ]
	cmp "$W/g" "$R1/p"
	cp "$R1/p" "$W/held_p"
	HELD_P=$(tgens p)
}

# p_kept -- r1/p still holds g's writes and g's history: f wrote nothing
# there, and a pull into g finds nothing to move
p_kept() {
	cmp "$W/held_p" "$R1/p"
	[ "$(tgens p)" = "$HELD_P" ]
	rc sync --pull --json "$W/g" "$T/r1/p"
	[ "$status" -eq 0 ]
	[ "$(json .history)" = same ]
	cmp "$W/g" "$R1/p"
}

@test "the defaults, one target: after promote --to NEW and NEW's write synced, the old primary's push is refused (exit 4) and overwrites nothing" {
	two_copies
	rc sync "$W/f" "$T/r1/p"
	[ "$status" -eq 4 ]
	[[ "$output" == *"holds newer writes"* ]]
	p_kept
	rc mirror "$W/f" "$T/r1/p"
	[ "$status" -eq 4 ]
	p_kept
}

@test "sync --follow of the old primary: its first round is refused by the histories (exit 4, no later round can mend it) and writes nothing; the target keeps the newer writes" {
	two_copies
	rc sync --follow 200ms "$W/f" "$T/r1/p"
	[ "$status" -eq 4 ]
	[[ "$output" == *"round 1: cannot sync"*"holds newer writes"* ]]
	p_kept
}

@test "several targets: sync and mirror check each target's history: the one with writes the pusher never saw is refused and keeps its bytes and history, the other is synced" {
	two_copies
	rc sync "$W/f" "$T/r1/p" "$T/r1/q"
	[ "$status" -eq 4 ]
	[[ "$output" == *"holds newer writes"* ]]
	cmp "$W/f" "$R1/q"
	[ "$(tgens q)" = "$(lgens)" ]
	p_kept
	# f written too: a split brain with p, ahead of q
	poke "$W/f" 8192
	rc mirror "$W/f" "$T/r1/q" "$T/r1/p"
	[ "$status" -eq 4 ]
	[[ "$output" == *"split brain"* ]]
	cmp "$W/f" "$R1/q"
	[ "$(tgens q)" = "$(lgens)" ]
	p_kept
}

@test "an in-place primary keeps its pool's history: its file in the region, written there and pushed onward, carries the promotion; the old primary is refused as behind (not a split brain); demote takes the writes back" {
	rm "$W/f.rpmemgen"
	rc sync "$W/f" "$T/r1/p" "$T/r1/c"
	[ "$status" -eq 0 ]
	rc promote --json "$T/r1/p"
	[ "$status" -eq 0 ]
	local prom
	prom=$(json '.generations[0]')
	[ -s "$R1/p.rpmemgen" ]
	[ "$(sed -n 's/^ids=//p' "$R1/p.rpmemgen")" = "$(tgens p)" ]
	write_target $((3 * MiB))
	# the target host's application replicates the region's file onward
	rc sync "$R1/p" "$T/r1/c"
	[ "$status" -eq 0 ]
	cmp "$R1/p" "$R1/c"
	[[ ",$(tgens c)," == *",$prom,"* ]]
	cp "$R1/c" "$W/held_c"
	# the old primary: c holds writes it never saw
	rc sync "$W/f" "$T/r1/c"
	[ "$status" -eq 4 ]
	[[ "$output" == *"holds newer writes"* ]]
	cmp "$W/held_c" "$R1/c"
	# demoted: the pool takes its file's history (c's now), the file goes
	rc demote "$T/r1/p"
	[ "$status" -eq 0 ]
	[ "$(tgens p)" = "$(tgens c)" ]
	[ ! -e "$R1/p.rpmemgen" ]
	rc sync "$W/f" "$T/r1/p"
	[ "$status" -eq 4 ]
	cmp "$W/held_c" "$R1/p"
}

@test "promotion in place never writes over a pool named like its local history (<pool>.rpmemgen): that pool keeps its bytes" {
	mkfile "$W/x" 1
	rc sync "$W/x" "$T/r1/p.rpmemgen"
	[ "$status" -eq 0 ]
	synced_pair
	rc promote "$T/r1/p"
	[ "$status" -eq 0 ]
	cmp "$W/x" "$R1/p.rpmemgen"
	rc demote "$T/r1/p"
	[ "$status" -eq 0 ]
	cmp "$W/x" "$R1/p.rpmemgen"
	rc verify "$W/x" "$T/r1/p.rpmemgen"
	[ "$status" -eq 0 ]
}

@test "a file without a history is refused by a target whose history shows a promotion ('unknown' is not enough there), nothing moves; --discard-target overrides" {
	synced_pair
	rc promote "$T/r1/p"
	[ "$status" -eq 0 ]
	write_target $((2 * MiB))
	rc demote "$T/r1/p"
	[ "$status" -eq 0 ]
	cp "$R1/p" "$W/held"
	mkfile "$W/g" 8
	rc sync "$W/g" "$T/r1/p"
	[ "$status" -eq 4 ]
	[[ "$output" == *"the target was promoted and may hold writes '$W/g' never saw"* ]]
	cmp "$W/held" "$R1/p"
	rc mirror "$W/g" "$T/r1/p"
	[ "$status" -eq 4 ]
	cmp "$W/held" "$R1/p"
	[ ! -e "$W/g.rpmemgen" ]
	# a target without a promotion takes a file without a history
	mkfile "$W/h" 8
	rc sync "$W/h" "$T/r1/q"
	[ "$status" -eq 0 ]
	rc sync --discard-target "$W/g" "$T/r1/p"
	[ "$status" -eq 0 ]
	cmp "$W/g" "$R1/p"
	[ "$(tgens p)" = "$(sed -n 's/^ids=//p' "$W/g.rpmemgen")" ]
}

@test "a history that cannot be written: the push says so and is refused (exit 4), nothing moves; --no-history goes on" {
	rm "$W/f.rpmemgen"
	mkdir "$W/f.rpmemgen.tmp"
	rc sync "$W/f" "$T/r1/p"
	[ "$status" -eq 4 ]
	[[ "$output" == *"cannot write the generation history '$W/f.rpmemgen'"*"--no-history"* ]]
	! cmp -s "$W/f" "$R1/p"
	rc mirror "$W/f" "$T/r1/p"
	[ "$status" -eq 4 ]
	! cmp -s "$W/f" "$R1/p"
	rc sync --no-history "$W/f" "$T/r1/p"
	[ "$status" -eq 0 ]
	cmp "$W/f" "$R1/p"
}

@test "a forged or damaged history file is refused with a clear error and nothing is written" {
	synced_pair
	local w0
	w0=$(written p)
	printf 'rpmem-history 1\nids=zz\nsize=1\nmtime=1.1\n' >"$W/f.rpmemgen"
	poke "$W/f" 4
	rc sync "$W/f" "$T/r1/p"
	[ "$status" -eq 4 ]
	[[ "$output" == *"generation history of '$W/f': damaged"* ]]
	# a symbolic link planted as the history is not followed
	rm "$W/f.rpmemgen"
	ln -s "$W/elsewhere" "$W/f.rpmemgen"
	rc sync "$W/f" "$T/r1/p"
	[ "$status" -ne 0 ]
	[ "$(written p)" -eq "$w0" ]
}

@test "a live link (the replica API) compares histories at its first push: a promoted target, then one written as primary, is refused and keeps its writes" {
	local app=$BUILD/tests/replica_example
	run "$app" "$W/app.pool" "$T/r1/app"
	[ "$status" -eq 0 ]
	[ -s "$W/app.pool.rpmemgen" ]
	[ "$("$RPMEMCTL" list --json "$T/r1/app" | jq -r '.pools[0].generations[0]')" = \
		"$(sed -n 's/^ids=\([0-9a-f]*\).*/\1/p' "$W/app.pool.rpmemgen")" ]
	rc promote "$T/r1/app"
	[ "$status" -eq 0 ]
	run "$app" "$W/app.pool" "$T/r1/app"
	[ "$status" -eq 1 ]
	[[ "$output" == *"is the primary on this target"* ]]
	head -c 4096 /dev/urandom | dd of="$R1/app" bs=4096 seek=7 conv=notrunc 2>/dev/null
	rc demote "$T/r1/app"
	cp "$R1/app" "$W/held"
	run "$app" "$W/app.pool" "$T/r1/app"
	[ "$status" -eq 1 ]
	[[ "$output" == *"the target holds newer writes"* ]]
	cmp "$R1/app" "$W/held"
}

@test "a lying client's GEN: adopt on a read-only open, adopt of a syncing pool, ids with another op, an unknown op or flag, a split's flag on another op: refused, nothing recorded; a split report changes nothing" {
	local h=$TOP/tests/peers/hostile.py
	synced_pair
	local tg
	tg=$(tgens)
	run python3 "$h" "$PORT" gen p ro 3 0 00000000000000aa
	[[ "$output" == "ERROR 12 "*"read-only"* ]]
	run python3 "$h" "$PORT" gen p rw 1 0 00000000000000aa
	[[ "$output" == "ERROR 1 "* ]]
	run python3 "$h" "$PORT" gen p ro 5 0
	[[ "$output" == "ERROR 1 "* ]]
	run python3 "$h" "$PORT" gen p ro 1 4
	[[ "$output" == "ERROR 1 "* ]]
	run python3 "$h" "$PORT" gen p ro 1 2
	[[ "$output" == "ERROR 1 "* ]]
	[ "$(tgens)" = "$tg" ]
	[ "$(role)" = secondary ]
	# a split brain reported (any open): logged, the pool as it was
	run python3 "$h" "$PORT" gen p ro 4 2 00000000000000aa
	[ "$output" = "GEN_REPLY 0 2 1 $tg" ]
	grep -q "pool r1/p: split brain: .* was refused a pull: .*its history 00000000000000aa;" "$DLOG"
	[ "$(tgens)" = "$tg" ]
	# read: what list shows
	run python3 "$h" "$PORT" gen p ro 0 0
	[ "$output" = "GEN_REPLY 0 2 1 $tg" ]
	# an adopt of a syncing pool (a sync not completed) is refused
	run python3 "$h" "$PORT" raw-sync p "host:/x" 0
	[ "$output" = OK ]
	run python3 "$h" "$PORT" gen p rw 3 0 00000000000000aa
	[[ "$output" == "ERROR 9 "*"only a consistent copy"* ]]
	[ "$(tgens)" = "$tg" ]
}
