#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# versions.bats -- point-in-time versions: a committed sync's undo journal
# kept as the version of the generation it replaced (rpmemd.conf versions),
# listed, restored (sync --pull --at), verified, exported, scrubbed and
# pruned; retention and quota applied by the daemon at each commit

load helpers
load access

# versions_conf POLICY [QUOTA] -- region r1 keeps versions
versions_conf() {
	local q=""
	[ -n "${2:-}" ] && q="versions_quota = \"$2\";"
	cat >"$CONF" <<CONF
listen = ["127.0.0.1"];
port = $PORT;
log = { level = "info"; target = "stderr"; };
max_sessions = 16;
regions = (
  { name = "r1"; type = "dir"; path = "$R1"; versions = "$1"; $q }
);
CONF
}

# change I -- write a marker into src at block I*7 (one 4 KiB block)
change() {
	printf 'version-%04d' "$1" |
		dd of="$W/src" bs=1 seek=$(($1 * 7 * 4096 + 100)) conv=notrunc 2>/dev/null
}

# syncs N -- N syncs of src, each changing one block; copy I saved as sI
# (sI is generation I: the mirror made generation 1)
syncs() {
	local i
	for i in $(seq 2 "$1"); do
		change "$i"
		"$RPMEMCTL" -q sync "$W/src" "$T/r1/p"
		cp "$W/src" "$W/s$i"
	done
}

setup() {
	setup_env
	versions_conf all
	start_daemon
	mkfile "$W/src" 1
	rc -q mirror "$W/src" "$T/r1/p"
	[ "$status" -eq 0 ]
	cp "$W/src" "$W/s1"
}

teardown() {
	teardown_daemon
	! mountpoint -q "$W/small" 2>/dev/null || umount "$W/small"
}

@test "ten syncs keep ten versions, each restored byte-identical to what was synced then" {
	syncs 11
	rc versions --json "$T/r1/p"
	[ "$status" -eq 0 ]
	[ "$(json .command)" = versions ]
	[ "$(json .generation)" -eq 11 ]
	[ "$(json '[.versions[].generation] | join(",")')" = 1,2,3,4,5,6,7,8,9,10 ]
	[ "$(json '[.versions[] | select(.size == 1048576)] | length')" -eq 10 ]
	[ "$(json '[.versions[] | select(.hash | length == 16)] | length')" -eq 10 ]
	for g in $(seq 1 10); do
		rc sync --pull --at "$g" "$W/out$g" "$T/r1/p"
		[ "$status" -eq 0 ]
		cmp "$W/out$g" "$W/s$g"
		rc verify --at "$g" "$W/s$g" "$T/r1/p"
		[ "$status" -eq 0 ]
	done
	# the current image too, and export --at streams a version
	rc sync --pull --at 11 "$W/out11" "$T/r1/p"
	[ "$status" -eq 0 ]
	cmp "$W/out11" "$W/src"
	"$RPMEMCTL" export --at 4 "$T/r1/p" - | cmp - "$W/s4"
	# a version differs from the next one in the block that sync changed
	rc verify --at 4 "$W/s5" "$T/r1/p"
	[ "$status" -eq 1 ]
	[[ "$output" == *"differs at 0x$(printf '%x' $((5 * 7 * 4096))) length 4096"* ]]
}

@test "a version takes space in proportion to the blocks its sync changed" {
	syncs 3
	# the journal of a one-block sync: a 4 KiB header, one record
	[ "$(stat -c %s "$R1/.rpmemd/p.v1.ver")" -eq $((4096 + 32 + 4096)) ]
	[ "$(stat -c %s "$R1/.rpmemd/p.v2.ver")" -eq $((4096 + 32 + 4096)) ]
	# and its scrub record: 16 bytes a 4 KiB piece
	[ "$(stat -c %s "$R1/.rpmemd/p.scrub.v1")" -eq $((4096 + 256 * 16)) ]
	rc versions --json "$T/r1/p"
	[ "$(json '.versions[0].space_bytes')" -eq $((8224 + 8192)) ]
	[ "$(json .versions_bytes)" -eq $((2 * (8224 + 8192))) ]
}

@test "pruning a middle version keeps the older and newer ones restorable" {
	syncs 6
	rc versions --prune 3,4 "$T/r1/p"
	[ "$status" -eq 0 ]
	rc versions --json "$T/r1/p"
	[ "$(json '[.versions[].generation] | join(",")')" = 1,2,5 ]
	[ ! -e "$R1/.rpmemd/p.v3.ver" ]
	[ ! -e "$R1/.rpmemd/p.v4.ver" ]
	for g in 1 2 5; do
		rc sync --pull --at "$g" "$W/out$g" "$T/r1/p"
		[ "$status" -eq 0 ]
		cmp "$W/out$g" "$W/s$g"
	done
	# the oldest end too
	rc versions --prune 1 "$T/r1/p"
	[ "$status" -eq 0 ]
	rc sync --pull --at 2 "$W/o2" "$T/r1/p"
	cmp "$W/o2" "$W/s2"
	grep -q "version 4 pruned" "$DLOG"
}

@test "versions --keep prunes what a policy does not keep; --dry-run prunes nothing" {
	syncs 6
	rc versions --keep last=2 --dry-run "$T/r1/p"
	[ "$status" -eq 0 ]
	[[ "$output" == *"would prune version 1 of"* ]]
	[ "$(ls "$R1"/.rpmemd/p.v*.ver | wc -l)" -eq 5 ]
	rc versions --keep last=2 "$T/r1/p"
	[ "$status" -eq 0 ]
	[ "$(ls "$R1"/.rpmemd/p.v*.ver | wc -l)" -eq 2 ]
	rc sync --pull --at 4 "$W/o4" "$T/r1/p"
	cmp "$W/o4" "$W/s4"
}

@test "the region's retention policy is applied by the daemon at each commit" {
	stop_daemon
	versions_conf "last=3"
	start_daemon
	syncs 7
	rc versions --json "$T/r1/p"
	[ "$(json '[.versions[].generation] | join(",")')" = 4,5,6 ]
	[ "$(ls "$R1"/.rpmemd/p.v*.ver | wc -l)" -eq 3 ]
	rc sync --pull --at 4 "$W/o4" "$T/r1/p"
	cmp "$W/o4" "$W/s4"
	grep -q "version 3 pruned" "$DLOG"
}

@test "the quota: the region's oldest versions give way, the newest are kept" {
	stop_daemon
	# a one-block version of a 1 MiB pool takes 8224 + 8192 bytes
	versions_conf all 40K
	start_daemon
	syncs 6
	rc versions --json "$T/r1/p"
	[ "$(json '[.versions[].generation] | join(",")')" = 4,5 ]
	[ "$(json .versions_bytes)" -le 40960 ]
	rc sync --pull --at 4 "$W/o4" "$T/r1/p"
	cmp "$W/o4" "$W/s4"
}

@test "a region without versions keeps none: the journal goes at the commit" {
	stop_daemon
	write_conf "$CONF" "$PORT"
	start_daemon
	syncs 3
	! ls "$R1"/.rpmemd/p.v*.ver 2>/dev/null
	rc versions --json "$T/r1/p"
	[ "$status" -eq 0 ]
	[ "$(json '.versions | length')" -eq 0 ]
	rc sync --pull --at 2 "$W/o2" "$T/r1/p"
	[ "$status" -eq 4 ]
	[ ! -e "$W/o2" ]
}

@test "scrub finds a flipped byte in a version and names it; a restore of it refuses and writes nothing" {
	syncs 4
	rc scrub --at 2 "$T/r1/p"
	[ "$status" -eq 0 ]
	# the data of version 2's one record (the block sync 3 changed)
	poke "$R1/.rpmemd/p.v2.ver" $((4096 + 32 + 100))
	rc scrub --at 2 "$T/r1/p"
	echo "$output"
	[ "$status" -eq 7 ]
	[[ "$output" == *"damaged at 0x$(printf '%x' $((3 * 7 * 4096))) length 4096"* ]]
	rc scrub --json --at 2 "$T/r1/p"
	[ "$(json .version)" -eq 2 ]
	[ "$(json .bytes_damaged)" -eq 4096 ]
	# the newer version does not need that file
	rc scrub --at 3 "$T/r1/p"
	[ "$status" -eq 0 ]
	cp "$W/s1" "$W/o2"
	rc sync --pull --at 2 "$W/o2" "$T/r1/p"
	[ "$status" -eq 4 ]
	[[ "$output" == *"version 2 of pool 'p' is damaged"* ]]
	cmp "$W/o2" "$W/s1"
	[ -z "$(ls "$W"/o2.rpmem-restore.* 2>/dev/null)" ]
}

@test "bad input: an unknown version, a local file of another size, a bad --keep: a clear message, its exit code, nothing changed" {
	syncs 3
	rc sync --pull --at 9 "$W/o9" "$T/r1/p"
	[ "$status" -eq 4 ]
	[[ "$output" == *"has no version 9"*"nothing was done"* ]]
	[ ! -e "$W/o9" ]
	rc verify --at 9 "$W/s1" "$T/r1/p"
	[ "$status" -eq 4 ]
	rc versions --prune 9 "$T/r1/p"
	[ "$status" -eq 4 ]
	[[ "$output" == *"pool 'p' has no version 9"* ]]
	rc sync --pull --at 0 "$W/o9" "$T/r1/p"
	[ "$status" -eq 2 ]
	head -c 4096 /dev/zero >"$W/small"
	rc sync --pull --at 1 "$W/small" "$T/r1/p"
	[ "$status" -eq 5 ]
	[[ "$output" == *"version 1 of"*"is 1 MiB, the file is 4 KiB; nothing was written"* ]]
	[ "$(stat -c %s "$W/small")" -eq 4096 ]
	[ -z "$(tr -d '\0' <"$W/small")" ]
	rc versions --keep last=x "$T/r1/p"
	[ "$status" -eq 2 ]
	[[ "$output" == *"'last=x': the count must be a number from 1 to 100000"* ]]
	rc versions --json "$T/r1/p"
	[ "$(json '.versions | length')" -eq 2 ]
}

@test "bad configuration: a retention policy that does not parse, a quota smaller than one version" {
	versions_conf "last=3,dayly=7"
	run "$RPMEMD" -n -c "$CONF"
	[ "$status" -eq 1 ]
	[[ "$output" == *"regions[0].versions: 'dayly=7' is not a retention rule"* ]]
	versions_conf all 4K
	run "$RPMEMD" -n -c "$CONF"
	[ "$status" -eq 1 ]
	[[ "$output" == *"regions[0].versions_quota: 4096 bytes is smaller than the smallest version (8224 bytes"* ]]
	# a reload with it is refused: the running daemon keeps its versions
	kill -HUP "$DPID"
	syncs 3
	[ "$(ls "$R1"/.rpmemd/p.v*.ver | wc -l)" -eq 2 ]
}

@test "events report a version kept and one pruned" {
	"$RPMEMCTL" events --json "$T" >"$W/ev" 2>/dev/null &
	local epid=$!
	sleep 0.5
	syncs 3
	rc versions --prune 1 "$T/r1/p"
	[ "$status" -eq 0 ]
	for _ in $(seq 50); do
		grep -q "pruned (request)" "$W/ev" && break
		sleep 0.1
	done
	kill "$epid"
	grep -q "version 2 of pool 'p' kept" "$W/ev"
	grep -q "version 1 of pool 'p' pruned (request)" "$W/ev"
}

@test "read right lists and restores a version; pruning needs the write right" {
	stop_daemon
	R2=$W/r2
	mkdir -p "$R2"
	access_keys
	default_rules | access_conf
	sed -i "s|path = \"$R1\"; }|path = \"$R1\"; versions = \"all\"; }|" "$CONF"
	start_daemon
	as backup1 mirror "$W/src" "$T/r1/q"
	[ "$status" -eq 0 ]
	change 2
	as backup1 sync "$W/src" "$T/r1/q"
	[ "$status" -eq 0 ]
	as monitor versions "$T/r1/q"
	[ "$status" -eq 0 ]
	as monitor sync --pull --at 1 "$W/q1" "$T/r1/q"
	[ "$status" -eq 0 ]
	cmp "$W/q1" "$W/s1"
	as monitor versions --prune 1 "$T/r1/q"
	[ "$status" -eq 4 ]
	[ -e "$R1/.rpmemd/q.v1.ver" ]
	as backup1 versions --prune 1 "$T/r1/q"
	[ "$status" -eq 0 ]
	[ ! -e "$R1/.rpmemd/q.v1.ver" ]
}

@test "list and status --prometheus show each pool's versions and their space" {
	syncs 3
	rc list "$T/r1/p"
	[ "$status" -eq 0 ]
	[[ "$output" == *"consistent (2 versions, 32.1 KiB)"* ]]
	rc status --prometheus "$T"
	[ "$status" -eq 0 ]
	grep -qE '^rpmem_pool_versions\{.*region="r1",pool="p"\} 2$' <<<"$output"
	grep -qE "^rpmem_pool_versions_bytes\{.*pool=\"p\"\} $((2 * (8224 + 8192)))\$" <<<"$output"
}

@test "a full region: the oldest versions give way to a sync's journal, the sync completes" {
	[ "$(id -u)" -eq 0 ] || skip "mounting a small tmpfs needs root"
	MNT=$W/small
	mkdir -p "$MNT"
	mount -t tmpfs -o size=14m tmpfs "$MNT" || skip "cannot mount a tmpfs here"
	stop_daemon
	sed -i "s|{ name = \"r1\";|{ name = \"small\"; type = \"dir\"; path = \"$MNT\"; versions = \"all\"; },\n  { name = \"r1\";|" "$CONF"
	start_daemon
	mkfile "$W/big" 4
	rc -q mirror "$W/big" "$T/small/b"
	[ "$status" -eq 0 ]
	# each sync changes every block: its journal, and so each version,
	# takes the pool's 4 MiB; 14 MiB hold the pool and two of them
	for i in 1 2 3 4; do
		mkfile "$W/big" 4
		rc -q sync "$W/big" "$T/small/b"
		echo "sync $i: $output"
		[ "$status" -eq 0 ]
		cp "$W/big" "$W/b$i" # generation i + 1
	done
	cmp "$W/big" "$MNT/b"
	grep -q "a version was pruned to make room for the undo journal of pool 'b'" "$DLOG"
	# pruned up front, at the sync's start: no journal write ran out
	grep -q "pool 'b': a sync of 4194304 bytes needs up to $((4096 + 1024 * 4128)) bytes for its undo journal; the region's oldest versions were pruned first" "$DLOG"
	! grep -q "cannot keep the blocks\|no room" "$DLOG"
	rc versions --json "$T/small/b"
	[ "$(json '.versions | length')" -ge 1 ]
	[ "$(json '.versions | length')" -le 2 ]
	# the versions left are still restorable: the newest one is the
	# image before the last sync
	local g
	g=$(json '.versions[-1].generation')
	[ "$g" -eq 4 ]
	rc sync --pull --at "$g" "$W/restored" "$T/small/b"
	[ "$status" -eq 0 ]
	cmp "$W/restored" "$W/b3"
}

@test "removing a pool removes its versions; a new pool of that name has none" {
	syncs 3
	rc remove "$T/r1/p"
	[ "$status" -eq 0 ]
	[ -z "$(ls "$R1"/.rpmemd/p.v* "$R1"/.rpmemd/p.scrub.v* 2>/dev/null)" ]
	rc -q mirror "$W/src" "$T/r1/p"
	rc versions --json "$T/r1/p"
	[ "$(json '.versions | length')" -eq 0 ]
	rc sync --pull --at 1 "$W/o1" "$T/r1/p"
	[ "$status" -eq 0 ]
	cmp "$W/o1" "$W/src"
}
