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

# wait_writing -- until the sync under way marked the pool syncing with
# an undo journal bound to generation $GEN
wait_writing() {
	for _ in $(seq 500); do
		[ "$(pool_state)" = "syncing true $GEN" ] && return 0
		sleep 0.01
	done
	echo "the sync never started: $(pool_state)" >&2
	return 1
}

# interrupt WHO -- a sync of $W/new paced at $BW, kill -9 of WHO
# (rpmemctl or rpmemd, then restarted) at a random point once it writes;
# asserts that it was cut short: the pool is syncing, its previous image
# recoverable
interrupt() {
	"$RPMEMCTL" sync --bwlimit "$BW" "$W/new" "$T/r1/p" >/dev/null 2>&1 &
	local cpid=$!
	wait_writing
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

# go_forward -- the next sync completes the new image; then back to old
go_forward() {
	rc sync "$W/new" "$T/r1/p"
	[ "$status" -eq 0 ]
	cmp "$W/new" "$R1/p"
	GEN=$((GEN + 1))
	committed "$GEN"
	rc sync "$W/old" "$T/r1/p"
	[ "$status" -eq 0 ]
	cmp "$W/old" "$R1/p"
	GEN=$((GEN + 1))
	committed "$GEN"
}

# kill_loop WHO PCT N -- N interrupted syncs of a PCT% changed image, each
# rolled back or carried forward (alternately), every result compared
# with the pool file on the target
kill_loop() {
	change "$W/old" "$W/new" "$2" "$2"
	for i in $(seq "$3"); do
		interrupt "$1"
		if [ $((i % 2)) -eq 1 ]; then
			roll_back
		else
			# a second cut: the same journal carries on
			[ $((i % 4)) -eq 0 ] && interrupt "$1"
			go_forward
		fi
	done
}

@test "kill -9 of rpmemctl mid-sync, 1% changed: rollback gives the old image, the next sync the new one" {
	BW=256K
	kill_loop rpmemctl 1 10
}

@test "kill -9 of rpmemctl mid-sync, 50% changed" {
	BW=24M
	kill_loop rpmemctl 50 6
}

@test "kill -9 of rpmemctl mid-sync, 100% changed" {
	BW=24M
	kill_loop rpmemctl 100 6
}

@test "kill -9 of rpmemctl mid-mirror into an existing pool: rollback gives the old image" {
	change "$W/old" "$W/new" 100 7
	for i in 1 2 3 4; do
		"$RPMEMCTL" mirror --bwlimit 24M "$W/new" "$T/r1/p" >/dev/null 2>&1 &
		local cpid=$!
		wait_writing
		sleep "$(printf '0.%02d' $((RANDOM % 40)))"
		kill -9 "$cpid"
		wait "$cpid" || true
		[ "$(pool_state)" = "syncing true $GEN" ]
		roll_back
	done
}

@test "kill -9 of rpmemd mid-sync (1%, 50%, 100%): restarted, it rolls back or completes" {
	for pct in 1 50 100; do
		BW=256K
		[ "$pct" -gt 1 ] && BW=24M
		kill_loop rpmemd "$pct" 3
	done
	grep -q "an interrupted sync: .* kept in its undo journal" "$DLOG"
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
	for _ in $(seq 500); do
		[ $(($(written p) - before)) -ge $((128 << 10)) ] && break
		sleep 0.01
	done
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
	BW=24M
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
	run python3 "$TOP/tests/bats/hostile.py" "$PORT" raw-sync p "vm:/x (live)" 8192
	[ "$output" = OK ]
	[ ! -e "$R1/.rpmemd/p.undo" ]
	[ "$(pool_state)" = "syncing false null" ]
	rc rollback "$T/r1/p"
	[ "$status" -eq 4 ]
	[[ "$output" == *"with no undo journal"* ]]
}

@test "a client that sends no PRESERVE: the daemon keeps the old blocks itself before its WRITE" {
	run python3 "$TOP/tests/bats/hostile.py" "$PORT" raw-sync p "old:/client" 12288
	[ "$output" = OK ]
	! cmp -s "$W/old" "$R1/p"
	[ "$(pool_state)" = "syncing true 1" ]
	roll_back
}

@test "PRESERVE from a lying peer: outside the pool, read-only, a pool not syncing: refused, nothing journaled" {
	local h="$TOP/tests/bats/hostile.py"
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
	mount -t tmpfs -o size="$1"m tmpfs "$MNT" || skip "cannot mount a tmpfs here"
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

@test "a client that says less than it writes: the write is refused with the reason, the pool stays recoverable" {
	small_region 96
	run python3 "$TOP/tests/bats/hostile.py" "$PORT" says-less small p 4096
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
