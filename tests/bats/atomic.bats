#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# atomic.bats -- a sync is atomic on the target: killed at any point
# (rpmemctl or rpmemd, kill -9), the pool rolls back to the previous image
# byte for byte or the next sync completes the new one; its undo journal
# is gone after either, and a full region refuses the write, not the image

load helpers

setup() {
	setup_daemon
	MNT=
	mkfile "$W/old" 64
	rc mirror "$W/old" "$T/r1/p"
	[ "$status" -eq 0 ]
	GEN=1
}

teardown() {
	teardown_daemon
	if [ -n "${MNT:-}" ]; then
		umount "$MNT" 2>/dev/null || true
	fi
}

# change SRC DST PCT SEED -- DST: SRC with PCT% of its 4 KiB blocks
# changed (one byte each, complemented), the blocks picked with SEED
change() {
	cp "$1" "$2"
	python3 - "$2" "$3" "$4" <<'PY'
import random, sys
path, pct, seed = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
rnd = random.Random(seed)
with open(path, "r+b") as f:
    nb = f.seek(0, 2) // 4096
    for b in sorted(rnd.sample(range(nb), max(1, int(nb * pct / 100)))):
        o = b * 4096 + rnd.randrange(4096)
        f.seek(o)
        c = f.read(1)[0]
        f.seek(o)
        f.write(bytes([c ^ 0xff]))
PY
}

# pool_state -- "STATE PENDING RECOVERABLE_GENERATION" of r1/p, as listed
pool_state() {
	"$RPMEMCTL" list --json "$T/r1/p" |
		jq -r '.pools[0] | "\(.state) \(.pending) \(.recoverable_generation)"'
}

# writing -- the pool is syncing with an undo journal bound to $GEN
writing() {
	[ "$(pool_state)" = "syncing true $GEN" ]
}

# written_past BEFORE N -- the daemon counted at least N bytes written
# into pool p since it counted BEFORE
written_past() {
	[ $(($(written p) - $1)) -ge "$2" ]
}

# wait_writing -- until the sync under way marked the pool syncing with
# an undo journal bound to generation $GEN
wait_writing() {
	wait_for writing || {
		echo "the sync never started: $(pool_state)" >&2
		return 1
	}
}

# interrupt WHO -- a sync of $W/new paced at $BW, kill -9 of WHO
# (rpmemctl or rpmemd, then restarted) at a random point once it writes;
# asserts that it was cut short: the pool is syncing, its previous image
# recoverable
interrupt() {
	"$RPMEMCTL" sync --bwlimit "$BW" "$W/new" "$T/r1/p" >/dev/null 2>&1 &
	local cpid=$!
	wait_writing
	# not a wait: a random point in the writing for the kill
	sleep "$(printf '0.%02d' $((RANDOM % 40)))"
	if [ "$1" = rpmemctl ]; then
		kill -9 "$cpid"
	else
		kill -9 "$DPID"
		wait "$DPID" || true
		DPID=
		start_daemon
	fi
	wait "$cpid" || true
	[ "$(pool_state)" = "syncing true $GEN" ]
	[ -f "$R1/.rpmemd/p.undo" ]
}

# committed GEN -- the pool is consistent at GEN, its journal gone
committed() {
	[ "$(pool_state)" = "consistent false null" ]
	[ "$("$RPMEMCTL" list --json "$T/r1/p" | jq -r '.pools[0].generation')" -eq "$1" ]
	[ ! -e "$R1/.rpmemd/p.undo" ]
}

# roll_back -- rollback gives back the old image, byte for byte
roll_back() {
	rc rollback "$T/r1/p"
	[ "$status" -eq 0 ]
	[[ "$output" == *"to generation $GEN"* ]]
	cmp "$W/old" "$R1/p"
	committed "$GEN"
}

# killmatrix WHO POINTS -- tests/tools/killmatrix.sh: kill -9 of WHO at
# POINTS random points of syncs of 1%, 50% and 100% changed images and of
# a mirror into an existing pool; every result checked byte for byte
killmatrix() {
	run env POINTS="$2" KILLERS="$1" DIR="$W" BUILD="$BUILD" \
		RPMEMD="$RPMEMD" "$TOP/tests/tools/killmatrix.sh"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"; 0 mismatches; "* ]]
	# the dense ones went through a new file
	[[ "$output" =~ mismatches\;\ [1-9][0-9]*\ syncs\ written\ into\ a\ new\ file ]]
}

@test "kill -9 of rpmemctl at random points of syncs (1%, 50%, 100% changed) and of a mirror into an existing pool: the state says which image, rollback or the next sync gives it, nothing left behind" {
	killmatrix rpmemctl 3
}

@test "kill -9 of rpmemd at random points of syncs and of a mirror into an existing pool: restarted, the same" {
	killmatrix rpmemd 2
}

# previous_freed GEN -- the previous image of the dense sync that committed
# GEN was freed (its last fd closed: rpmemd holds no deleted pool file)
# after the commit was answered, not before
previous_freed() {
	local n
	wait_for grep -q "pool 'p': its previous image ($((64 << 20)) bytes) freed" "$DLOG"
	n=$(grep -n "pool r1/p is consistent (generation $1)" "$DLOG" | cut -d: -f1)
	[ -n "$n" ]
	tail -n +"$n" "$DLOG" | grep -q "pool 'p': its previous image ($((64 << 20)) bytes) freed, after the commit was answered"
	[ -z "$(find /proc/"$DPID"/fd -lname "$R1/p (deleted)" 2>/dev/null)" ]
}

@test "a dense sync is written into a new file renamed over the pool: nothing journaled, the unchanged blocks copied on the target, scrub and verify agree" {
	local ino
	ino=$(stat -c %i "$R1/p")
	change "$W/old" "$W/new" 100 9
	rc sync "$W/new" "$T/r1/p"
	[ "$status" -eq 0 ]
	cmp "$W/new" "$R1/p"
	committed 2
	[ "$(stat -c %i "$R1/p")" != "$ino" ]
	grep -q "pool 'p': a dense sync (67108864 of 67108864 bytes): written into a new file" "$DLOG"
	grep -q "pool 'p': its new image renamed over the pool file (67108864 bytes written, 0 bytes copied from the previous image)" "$DLOG"
	grep -q "pool 'p': its undo journal of generation 1 (0 blocks, 4096 bytes) removed" "$DLOG"
	[ -z "$(ls -A "$R1/.rpmemd" | grep -v '^p\.meta$\|^p\.hashes$\|^p\.scrub$')" ]
	previous_freed 2

	rc scrub "$T/r1/p"
	[ "$status" -eq 0 ]
	rc verify "$W/new" "$T/r1/p"
	[ "$status" -eq 0 ]
	# a dense sync that writes one unaligned range: the rest of its
	# blocks, and every other block, come from the previous image
	cp "$W/new" "$W/want"
	head -c 5000 /dev/zero | tr '\0' 'Z' |
		dd of="$W/want" bs=1 seek=12388 conv=notrunc status=none
	run python3 "$TOP/tests/peers/hostile.py" "$PORT" dense-write p 12388 5000
	[ "$output" = OK ]
	cmp "$W/want" "$R1/p"
	grep -q "its new image renamed over the pool file (5000 bytes written, $((64 << 20)) bytes copied" "$DLOG"
	rc verify "$W/want" "$T/r1/p"
	[ "$status" -eq 0 ]
	rc scrub "$T/r1/p"
	[ "$status" -eq 0 ]
}

# mapped_kib FILE -- KiB of FILE's pages rpmemd has mapped (Rss of its
# mappings of FILE)
mapped_kib() {
	awk -v f="$1" '$NF == f {m = 1; next} m && /^Rss:/ {s += $2; m = 0}
		END {print s + 0}' /proc/"$DPID"/smaps
}

@test "the scrub record of a commit reads the pool through its file: after a first mirror (its WRITEs go through the file) rpmemd's mapping of the pool holds none of its pages, so a dense sync's remapping has none to tear down" {
	rc mirror "$W/old" "$T/r1/q"
	[ "$status" -eq 0 ]
	grep -q "pool r1/q is syncing (generation 0); WRITEs go through its file" "$DLOG"
	# the record was written; the pool's mapping (cached after its
	# close) holds no page of it
	[ -s "$R1/.rpmemd/q.scrub" ]
	grep -q " $R1/q\$" /proc/"$DPID"/maps
	echo "mapped: $(mapped_kib "$R1/q") KiB"
	[ "$(mapped_kib "$R1/q")" -lt 1024 ]
	# and it is the pool's: scrub agrees with it
	rc scrub "$T/r1/q"
	[ "$status" -eq 0 ]
}

@test "the sync after an interruption sends only what did not arrive" {
	change "$W/old" "$W/new" 1 11
	rc sync --dry-run --json "$W/new" "$T/r1/p"
	[ "$status" -eq 0 ]
	local differ
	differ=$(json .bytes_changed)
	local before
	before=$(written p)
	"$RPMEMCTL" sync --bwlimit 128K "$W/new" "$T/r1/p" >/dev/null 2>&1 &
	local cpid=$!
	# at least 128 KiB of the new blocks are in the pool when it is cut
	wait_for written_past "$before" $((128 << 10))
	kill -9 "$cpid"
	wait "$cpid" || true
	local arrived=$(($(written p) - before))
	[ "$arrived" -ge $((128 << 10)) ]
	[ "$(pool_state)" = "syncing true 1" ]
	rc sync --json "$W/new" "$T/r1/p"
	[ "$status" -eq 0 ]
	# what arrived compares equal and is not sent again
	[ "$(json .data_bytes)" -le $((differ - arrived + 4096)) ]
	cmp "$W/new" "$R1/p"
	committed 2
}

@test "an interrupted pool: pull refuses saying how to roll back; rollback of a consistent pool refuses; list and rollback --json follow the schema" {
	change "$W/old" "$W/new" 50 3
	BW=8M
	interrupt rpmemctl
	cp "$W/old" "$W/local"
	rc sync --pull "$W/local" "$T/r1/p"
	[ "$status" -eq 4 ]
	[[ "$output" == *"rpmemctl rollback"* ]]
	cmp "$W/old" "$W/local"
	# list and rollback --json: the schema's keys and types
	"$RPMEMCTL" list --json "$T/r1/p" >"$W/out"
	python3 "$TOP/tests/json/check.py" "$TOP/tests/json/schema.json" list <"$W/out"
	"$RPMEMCTL" rollback --json "$T/r1/p" >"$W/out"
	python3 "$TOP/tests/json/check.py" "$TOP/tests/json/schema.json" rollback <"$W/out"
	[ "$(jq -r '"\(.state) \(.generation)"' "$W/out")" = "consistent $GEN" ]
	cmp "$W/old" "$R1/p"
	committed "$GEN"
	rc rollback "$T/r1/p"
	[ "$status" -eq 4 ]
	[[ "$output" == *"no interrupted sync to roll back (it is consistent)"* ]]
	cmp "$W/old" "$R1/p"
	rc rollback "$T/r1/nosuchpool"
	[ "$status" -eq 4 ]
	[[ "$output" == *"no pool 'nosuchpool'"* ]]
}

@test "a live replica's syncing keeps no journal; a first mirror into a new pool neither" {
	mkfile "$W/fresh" 4
	rc mirror "$W/fresh" "$T/r1/fresh"
	[ "$status" -eq 0 ]
	[ ! -e "$R1/.rpmemd/fresh.undo" ]
	# the preload library's source ends in " (live)": crash-consistent as
	# of its last drain, no undo journal
	run python3 "$TOP/tests/peers/hostile.py" "$PORT" raw-sync p "vm:/x (live)" 8192
	[ "$output" = OK ]
	[ ! -e "$R1/.rpmemd/p.undo" ]
	[ "$(pool_state)" = "syncing false null" ]
	rc rollback "$T/r1/p"
	[ "$status" -eq 4 ]
	[[ "$output" == *"with no undo journal"* ]]
}

@test "a client that sends no PRESERVE: the daemon keeps the old blocks itself before its WRITE" {
	run python3 "$TOP/tests/peers/hostile.py" "$PORT" raw-sync p "old:/client" 12288
	[ "$output" = OK ]
	refute cmp -s "$W/old" "$R1/p"
	[ "$(pool_state)" = "syncing true 1" ]
	roll_back
}

@test "a sync over TCP sends each batch's WRITEs without waiting for its PRESERVE's reply (the target journals their blocks first): no stall behind a slow reply, the image intact" {
	change "$W/old" "$W/new" 5 12
	python3 "$TOP/tests/peers/preserve_proxy.py" 0 "$PORT" 0.5 >"$W/proxy" &
	local pid=$! pp
	wait_for grep -q "^PORT " "$W/proxy"
	pp=$(sed -n 's/^PORT //p' "$W/proxy")
	rc sync "$W/new" "127.0.0.1:$pp/r1/p"
	[ "$status" -eq 0 ]
	wait "$pid"
	cat "$W/proxy"
	# several batches, none of them waited for its PRESERVE's reply
	[[ "$(tail -1 "$W/proxy")" =~ ^PRESERVE\ ([0-9]+)\ stalls\ 0$ ]]
	[ "${BASH_REMATCH[1]}" -ge 3 ]
	cmp "$W/new" "$R1/p"
	committed 2
}

@test "PRESERVE from a lying peer: outside the pool, read-only, a pool not syncing: refused, nothing journaled" {
	local h="$TOP/tests/peers/hostile.py"
	run python3 "$h" "$PORT" preserve p rw 0 4096
	[[ "$output" == "ERROR 9 "*"it is not syncing"* ]]
	run python3 "$h" "$PORT" preserve p ro 0 4096
	[[ "$output" == "ERROR 12 "*"read-only"* ]]
	run python3 "$h" "$PORT" raw-sync p "old:/client" 0
	[ "$output" = OK ]
	local size
	size=$(stat -c %s "$R1/.rpmemd/p.undo")
	run python3 "$h" "$PORT" preserve p rw $((64 << 20)) 4096
	[[ "$output" == "ERROR 9 "*"outside pool 'p'"* ]]
	run python3 "$h" "$PORT" preserve p rw 18446744073709551615 1
	[[ "$output" == "ERROR 1 "*"malformed"* ]]
	[ "$(stat -c %s "$R1/.rpmemd/p.undo")" -eq "$size" ]
	# the daemon lives on, the pool rolls back
	roll_back
}

# small_region MIB -- a tmpfs of MIB MiB mounted at $MNT as region "small"
small_region() {
	[ "$(id -u)" -eq 0 ] || skip "mounting a small tmpfs needs root"
	MNT=$W/small
	mkdir -p "$MNT"
	mount -t tmpfs -o size="$1"m,mode=0755 tmpfs "$MNT" || skip "cannot mount a tmpfs here"
	stop_daemon
	sed -i "s|{ name = \"r1\";|{ name = \"small\"; type = \"dir\"; path = \"$MNT\"; },\n  { name = \"r1\";|" "$CONF"
	start_daemon
	rc mirror "$W/old" "$T/small/p"
	[ "$status" -eq 0 ]
}

# small_state -- "STATE PENDING GENERATION BYTES_WRITTEN" of small/p
small_state() {
	"$RPMEMCTL" list --json "$T/small/p" |
		jq -r '.pools[0] | "\(.state) \(.pending) \(.generation) \(.bytes_written)"'
}

@test "a sync whose journal cannot fit is refused up front with the numbers (exit 4); the pool is untouched and consistent" {
	small_region 96
	local before free need
	before=$(small_state)
	[[ "$before" == "consistent false 1 "* ]]
	change "$W/old" "$W/new" 100 5
	free=$(stat -f -c '%a * %S' "$MNT" | bc)
	# every 4 KiB block of 64 MiB with a record head, and the header
	need=$((4096 + 16384 * (4096 + 32)))
	rc sync "$W/new" "$T/small/p"
	[ "$status" -eq 4 ]
	[[ "$output" == *"a sync of $((64 << 20)) bytes needs up to $need bytes for its undo journal, region 'small' ($MNT) has $free bytes free and 0 bytes of versions that could give way"* ]]
	# nothing written, no journal, still generation 1
	[ "$(small_state)" = "$before" ]
	cmp "$W/old" "$MNT/p"
	[ -z "$(ls -A "$MNT/.rpmemd" | grep -v '^p\.meta$\|^p\.scrub$\|^p\.hashes$')" ]
	# a sync that fits goes on
	change "$W/old" "$W/new" 1 6
	rc sync "$W/new" "$T/small/p"
	[ "$status" -eq 0 ]
	cmp "$W/new" "$MNT/p"
}

@test "a dense sync whose region fills up under it says the new file had no room, not the undo journal; the pool file is untouched" {
	small_region 160
	run python3 "$TOP/tests/peers/hostile.py" "$PORT" dense-write small/p 12388 5000 "$MNT/filler"
	echo "$output"
	[[ "$output" == "ERROR "*"no room for the new file this dense sync is written into"* ]]
	[[ "$output" != *"undo journal"* ]]
	grep -q "pool 'p': cannot copy the old blocks around a write into the dense sync's new file" "$DLOG"
	! grep -q "pool 'p': cannot keep the blocks a write overwrites in its undo journal" "$DLOG"
	cmp "$W/old" "$MNT/p"
	rm "$MNT/filler"
	rc rollback "$T/small/p"
	[ "$status" -eq 0 ]
	cmp "$W/old" "$MNT/p"
}

@test "a rollback whose metadata cannot be written (a full region) says the pool file already holds the last good image; the next rollback with room finishes it" {
	small_region 200
	run python3 "$TOP/tests/peers/hostile.py" "$PORT" says-less small p 0
	[ "$output" = OK ]
	python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import hostile; hostile.fill_fs(sys.argv[2])' \
		"$TOP/tests/peers" "$MNT/filler"
	rc rollback "$T/small/p"
	echo "$output"
	[ "$status" -ne 0 ]
	[[ "$output" == *"the pool file holds generation 1's image again"* ]]
	grep -q "pool 'p': the pool file holds generation 1's image again" "$DLOG"
	cmp "$W/old" "$MNT/p"
	rm "$MNT/filler"
	rc rollback "$T/small/p"
	[ "$status" -eq 0 ]
	cmp "$W/old" "$MNT/p"
	[ "$(small_state | cut -d' ' -f1-3)" = "consistent false 1" ]
}

@test "a client that says less than it writes: the write is refused with the reason, the pool stays recoverable" {
	small_region 96
	run python3 "$TOP/tests/peers/hostile.py" "$PORT" says-less small p 4096
	echo "$output"
	[[ "$output" == "ERROR "*"no room for the undo journal"* ]]
	local st
	st=$("$RPMEMCTL" list --json "$T/small/p" | jq -r '.pools[0] | "\(.state) \(.pending) \(.recoverable_generation)"')
	[ "$st" = "syncing true 1" ]
	rc rollback "$T/small/p"
	[ "$status" -eq 0 ]
	cmp "$W/old" "$MNT/p"
	[ ! -e "$MNT/.rpmemd/p.undo" ]
}

@test "what a crash left in .rpmemd is finished or removed at the next open: a dense sync's new file, its committed image, a scrub record's or the metadata's .tmp" {
	change "$W/old" "$W/new" 100 12
	# a crash mid-sync: .next (and a scrub record's .tmp) beside the pool
	stop_daemon
	head -c 4096 /dev/urandom >"$R1/.rpmemd/p.next"
	head -c 4096 /dev/urandom >"$R1/.rpmemd/p.scrub.tmp"
	head -c 100 /dev/urandom >"$R1/.rpmemd/p.meta.tmp"
	# one that is not rpmemd's own (a hard link) is left alone
	head -c 4096 /dev/urandom >"$W/outside"
	start_daemon
	rc verify "$W/old" "$T/r1/p"
	[ "$status" -eq 0 ]
	[ ! -e "$R1/.rpmemd/p.next" ]
	[ ! -e "$R1/.rpmemd/p.scrub.tmp" ]
	[ ! -e "$R1/.rpmemd/p.meta.tmp" ]
	grep -q "pool 'p': removed the new file of a dense sync cut short" "$DLOG"
	# a crash after the metadata said N + 1, before the rename: the pool
	# file still N, N + 1 complete in .done; the next open renames it
	rc sync "$W/new" "$T/r1/p"
	[ "$status" -eq 0 ]
	stop_daemon
	cp "$R1/p" "$R1/.rpmemd/p.done"
	cp "$W/old" "$R1/p"
	ln "$W/outside" "$R1/.rpmemd/p.scrub.tmp"
	ln "$W/outside" "$R1/.rpmemd/p.meta.tmp"
	start_daemon
	rc verify "$W/new" "$T/r1/p"
	[ "$status" -eq 0 ]
	cmp "$W/new" "$R1/p"
	[ ! -e "$R1/.rpmemd/p.done" ]
	grep -q "pool 'p': the committed new image of a dense sync renamed over the pool file" "$DLOG"
	[ "$(stat -c %h "$W/outside")" -eq 3 ]
	rm "$R1/.rpmemd/p.scrub.tmp" "$R1/.rpmemd/p.meta.tmp"
	# a crash before the metadata said N + 1: .done is not the pool's
	run python3 "$TOP/tests/peers/hostile.py" "$PORT" raw-sync p "old:/client" 0
	[ "$output" = OK ]
	stop_daemon
	cp "$W/old" "$R1/.rpmemd/p.done"
	start_daemon
	[ "$(pool_state)" = "syncing true 2" ]
	GEN=2
	rc rollback "$T/r1/p"
	[ "$status" -eq 0 ]
	cmp "$W/new" "$R1/p"
	[ ! -e "$R1/.rpmemd/p.done" ]
	committed 2
}

@test "a dense sync written into a new file is not rolled back under another session's open (its mapping is the new file): BUSY until it closes" {
	run python3 "$TOP/tests/peers/hostile.py" "$PORT" dense-shared p
	echo "$output"
	[[ "${lines[0]}" == "ERROR "*"pool 'p' is open in other sessions: its interrupted sync can be rolled back once they close it"* ]]
	[ "${lines[1]}" = OK ]
	cmp "$W/old" "$R1/p"
	committed 1
}
