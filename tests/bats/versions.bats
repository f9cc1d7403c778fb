#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# versions.bats -- point-in-time versions: a committed sync's undo journal
# kept as the version of the generation it replaced (rpmemd.conf versions),
# listed, restored (sync --pull --at), verified, exported, scrubbed and
# pruned; retention and quota applied by the daemon at each commit; versions
# of a live pool (versions --create) while a libpmemobj application writes
# it under the preload library

load helpers
load vhist
load access
load pobj

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
	[ -z "${APID:-}" ] || kill -KILL "$APID" 2>/dev/null || true
	[ -z "${EPID:-}" ] || kill "$EPID" 2>/dev/null || true
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
	"$RPMEMCTL" export --raw --at 4 "$T/r1/p" - | cmp - "$W/s4"
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
	refute ls "$R1"/.rpmemd/p.v*.ver 2>/dev/null
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
	[ "$status" -eq 7 ]
	[[ "$output" == *"version 2 of"*"is damaged on the target"*"nothing was written"* ]]
	cmp "$W/o2" "$W/s1"
	[ -z "$(ls -A "$W" | grep "^\.o2\.rpmem-tmp\.")" ]
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
	subscribe "$W/ev" "$T"
	syncs 3
	rc versions --prune 1 "$T/r1/p"
	[ "$status" -eq 0 ]
	wait_for grep -q "pruned (request)" "$W/ev"
	kill "$EPID"
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

@test "a full region with versions_full = \"prune\": the oldest versions give way to a sync's journal, the sync completes" {
	[ "$(id -u)" -eq 0 ] || skip "mounting a small tmpfs needs root"
	MNT=$W/small
	mkdir -p "$MNT"
	mount -t tmpfs -o size=14m,mode=0755 tmpfs "$MNT" || skip "cannot mount a tmpfs here"
	local all=
	stop_daemon
	sed -i "s|{ name = \"r1\";|{ name = \"small\"; type = \"dir\"; path = \"$MNT\"; versions = \"all\"; versions_full = \"prune\"; },\n  { name = \"r1\";|" "$CONF"
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
		all="$all$output"
	done
	# each sync says which versions gave way to its journal
	[[ "$all" == *"warning: $T/small/b: the target: version 1 of pool 'b' pruned (room)"* ]]
	cmp "$W/big" "$MNT/b"
	grep -q "a version was pruned to make room for the undo journal of pool 'b'" "$DLOG"
	# pruned up front, at the sync's start: no journal write ran out
	grep -q "pool 'b': a sync of 4194304 bytes needs up to $((4096 + 1024 * 4128)) bytes for its undo journal; the region's oldest versions were pruned first" "$DLOG"
	refute grep -q "cannot keep the blocks\|no room" "$DLOG"
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

# --- versions of a live pool (versions --create) ------------------------

# live_start -- pobj_app writing records into $POOL under the preload
# library (replicated to r1/app) until app_finish, once it has committed
live_start() {
	POOL=$W/app.obj
	export RPMEM_REPLICATE="$POOL=$T/r1/app"
	export PMEM_IS_PMEM_FORCE=0
	app records:1
	[ "$status" -eq 0 ]
	app_start records:until
	alive_until "$APID" committed_over 1 && return 0
	cat "$W/app.err" >&2
	return 1
}

# pool_gen POOL -- the generation of r1/POOL on the target
pool_gen() {
	"$RPMEMCTL" list --json "$T/r1" |
		jq -r ".pools[] | select(.name == \"$1\") | .generation"
}

# committed -- the last record the application said it committed
committed() {
	awk '$1 == "committed" {n = $2} END {print n + 0}' "$W/app.out"
}

# committed_over N -- the application reported a record past N committed
committed_over() {
	[ "$(committed)" -gt "$1" ]
}

# cut_app -- versions --create of r1/app succeeds ($status, $output kept)
cut_app() {
	rc versions --create "$T/r1/app"
	[ "$status" -eq 0 ]
}

# cuts N -- N versions --create of r1/app a second apart; each line of
# $W/cuts: the generation cut, the last record committed before the
# request and after its reply
cuts() {
	local i before
	: >"$W/cuts"
	for i in $(seq "$1"); do
		before=$(committed)
		rc versions --create --json "$T/r1/app"
		[ "$status" -eq 0 ] || { echo "cut $i: $output"; return 1; }
		echo "$(json .created) $before $(committed)" >>"$W/cuts"
		# not a wait: pacing, the subject: cuts spread over the
		# writer's run
		[ "$i" -eq "$1" ] || sleep 1
	done
}

# check_cuts -- every cut of $W/cuts is listed as a live version and
# restores (sync --pull --at) an image that passes pmempool check, opens
# with libpmemobj, holds no torn record, and whose records are those the
# application had committed when it was cut: at least the last it
# reported before the request, at most one past the last after the
# reply (committed on the target, not printed yet), never fewer than the
# cut before
check_cuts() {
	local gen before after counter prev=0 n=0
	rc versions --json "$T/r1/app"
	[ "$status" -eq 0 ]
	cp <(printf '%s\n' "$output") "$W/list.json"
	while read -r gen before after; do
		output=$(cat "$W/list.json")
		[[ "$(json ".versions[] | select(.generation == $gen) | .source")" == *" (live)" ]] ||
			{ echo "version $gen is not listed as live"; cat "$W/list.json"; return 1; }
		rm -f "$W/v.obj"
		"$RPMEMCTL" -q sync --pull --at "$gen" "$W/v.obj" "$T/r1/app"
		pmempool check "$W/v.obj" >"$W/check.out" 2>&1 ||
			{ echo "version $gen:"; cat "$W/check.out"; return 1; }
		run "$APP" "$W/v.obj" check
		[ "$status" -eq 0 ]
		[[ "$output" != *torn* ]] || { echo "version $gen: $output"; return 1; }
		counter=$(awk '$1 == "counter" {print $2}' <<<"$output")
		[ "$counter" -ge "$before" ] && [ "$counter" -le $((after + 1)) ] &&
			[ "$counter" -ge "$prev" ] ||
			{ echo "version $gen holds $counter records: committed $before before the cut, $after after it, $prev in the cut before"; return 1; }
		prev=$counter
		n=$((n + 1))
	done <"$W/cuts"
	echo "# $n versions restored; the last held $prev records" >&3
}

@test "a live libpmemobj application cut into a version every second: each restores an image that pmempool check passes, libpmemobj opens, holding the records committed by then (RPMEM_LIVE_VERSIONS=60: a minute)" {
	live_start
	cuts "${RPMEM_LIVE_VERSIONS:-10}"
	app_finish
	[ "$ASTATUS" -eq 0 ]
	# each cut was one, at the writer's drain boundary or at once
	[ "$(grep -c "cut at generation" "$DLOG")" -eq "$(wc -l <"$W/cuts")" ]
	check_cuts
	# the pool itself: consistent, what the application left
	"$RPMEMCTL" -q sync --pull "$W/now.obj" "$T/r1/app"
	cmp "$W/now.obj" "$POOL"
}

@test "a cut of a live pool whose writer was killed is the crash image it left; the writer's next run keeps it as a version" {
	live_start
	# killed mid-run: some records committed past the first ones
	wait_for committed_over $(($(committed) + 10))
	kill -KILL "$APID"
	wait "$APID" || true
	APID=
	local last gen
	last=$(committed)
	rc versions --create --json "$T/r1/app"
	[ "$status" -eq 0 ]
	gen=$(json .created)
	# not listed while the pool is live: its journal is still open
	rc versions --json "$T/r1/app"
	[ "$(json "[.versions[] | select(.generation == $gen)] | length")" -eq 0 ]
	app check
	[ "$status" -eq 0 ]
	echo "$gen $last $last" >"$W/cuts"
	check_cuts
}

@test "versions --create: a pool that is not live, an unknown pool, with --prune: a clear refusal, its exit code, nothing changed" {
	local gen
	gen=$(pool_gen p)
	rc versions --create "$T/r1/p"
	[ "$status" -eq 4 ]
	[[ "$output" == *"pool 'p' is not live (it is consistent"* ]]
	[[ "$output" == *"kept as a version by the next sync that changes it"* ]]
	[ "$(pool_gen p)" -eq "$gen" ]
	[ -z "$(ls "$R1/.rpmemd" | grep '\.ver$')" ]
	rc versions --create "$T/r1/nosuch"
	[ "$status" -eq 4 ]
	[[ "$output" == *nosuch* ]]
	[ ! -e "$R1/nosuch" ]
	rc versions --create --prune 1 "$T/r1/p"
	[ "$status" -eq 2 ]
	[[ "$output" == *"--create cannot be combined"* ]]
	refute grep -q "cut at generation" "$DLOG"
	# a region that keeps no versions would keep nothing of a cut
	stop_daemon
	write_conf "$CONF" "$PORT"
	start_daemon
	rc versions --create "$T/r1/p"
	[ "$status" -eq 4 ]
	[[ "$output" == *"region 'r1' keeps no versions"* ]]
}

@test "versions --create needs the write right on the region, checked before anything else" {
	stop_daemon
	R2=$W/r2
	mkdir -p "$R2"
	access_keys
	default_rules | access_conf
	sed -i "s|path = \"$R1\"; }|path = \"$R1\"; versions = \"all\"; }|" "$CONF"
	start_daemon
	as backup1 mirror "$W/src" "$T/r1/q"
	[ "$status" -eq 0 ]
	as monitor versions --create "$T/r1/q"
	[ "$status" -eq 4 ]
	[[ "$output" == *"identity 'monitor' may not write region 'r1'"* ]]
	as backup1 versions --create "$T/r1/q"
	[ "$status" -eq 4 ]
	[[ "$output" == *"pool 'q' is not live"* ]]
	refute grep -q "cut at generation" "$DLOG"
}

@test "versions cut live count in the region's retention and quota, and events report them kept and pruned" {
	stop_daemon
	versions_conf "last=3"
	start_daemon
	subscribe "$W/ev" "$T"
	live_start
	cuts 6
	app_finish
	[ "$ASTATUS" -eq 0 ]
	rc versions --json "$T/r1/app"
	[ "$status" -eq 0 ]
	# the newest three of the six cuts (each kept when the next was cut,
	# the last at the writer's commit)
	[ "$(json '[.versions[].generation] | join(" ")')" = \
		"$(tail -n 3 "$W/cuts" | awk '{print $1}' | paste -sd' ')" ]
	wait_for grep -q "pruned (retention)" "$W/ev"
	local g1
	g1=$(head -n 1 "$W/cuts" | awk '{print $1}')
	grep -q "version $g1 of pool 'app' kept" "$W/ev"
	grep -q "version $g1 of pool 'app' pruned (retention)" "$W/ev"
	# the quota: the oldest give way to the newest
	stop_daemon
	versions_conf all 40K
	start_daemon
	live_start
	cuts 4
	app_finish
	rc versions --json "$T/r1/app"
	[ "$status" -eq 0 ]
	[ "$(json .versions_bytes)" -le 40960 ]
	# 12 KiB or more each: at most three of the four cuts' and the start's
	[ "$(json '.versions | length')" -ge 1 ]
	[ "$(json '.versions | length')" -le 3 ]
	grep -q "version [0-9]* pruned" "$DLOG"
}

@test "cuts do not cost the live writer its dirty log: a degraded resync after cuts moves only the extents it marked" {
	POOL=$W/app.obj
	export RPMEM_REPLICATE="$POOL=$T/r1/app" PMEM_IS_PMEM_FORCE=0
	export RPMEM_REPLICATE_POLICY=degraded RPMEM_REPLICATE_RETRY=0
	export RPMEM_LOG_LEVEL=info
	app_start set:0:before pause set:1:unreplicated pause set:2:resumed \
		pace:10000 persist:until pause
	app_paused 1
	# two cuts: the pool's generation moves past the one the log is bound to
	rc versions --create "$T/r1/app"
	[ "$status" -eq 0 ]
	rc versions --create "$T/r1/app"
	[ "$status" -eq 0 ]
	stop_daemon
	app_continue
	app_paused 2
	start_daemon
	[ "$(written app)" -eq 0 ]
	app_continue
	# probed and resynced off the persists, which go on meanwhile
	wait_for grep -q "rpmem_preload: resynced: '$POOL' is replicated to $T/r1/app again" \
		"$W/app.err"
	app_continue
	app_paused 3
	grep -q "rpmem_preload: '$POOL': synced only the extents its dirty log marked" "$W/app.err" ||
		{ grep rpmem_preload "$W/app.err"; false; }
	# a few extents of the 16 MiB pool, not all of it
	[ "$(written app)" -lt $((8 << 20)) ]
	app_continue
	app_finish
	[ "$ASTATUS" -eq 0 ]
	"$RPMEMCTL" -q sync --pull "$W/now.obj" "$T/r1/app"
	cmp "$W/now.obj" "$POOL"
}

@test "a live writer stalled in the middle of a WRITE: versions --create says so (exit 4), cuts nothing, and cuts once the writer is gone" {
	rc create "$T/r1/app" 4M
	[ "$status" -eq 0 ]
	python3 "$TOP/tests/peers/hostile.py" "$PORT" stall-live-write app \
		"vm:/x (live)" >"$W/stall" 2>&1 &
	local hpid=$! gen
	alive_until "$hpid" grep -q stalled "$W/stall"
	gen=$(pool_gen app)
	rc versions --create "$T/r1/app"
	echo "$output"
	[ "$status" -eq 4 ]
	[[ "$output" == *"its writer's WRITE has been arriving for longer than 1000 ms: nothing was cut"* ]]
	[ "$(pool_gen app)" -eq "$gen" ]
	refute grep -q "cut at generation" "$DLOG"
	kill "$hpid"
	wait "$hpid" || true
	# the writer gone, its half WRITE dropped: the pool is cut at once
	wait_for cut_app
	[ "$(pool_gen app)" -eq $((gen + 1)) ]
}
