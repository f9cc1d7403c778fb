#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# vrepair.bats -- scrub --repair heals a damaged version, not only the
# pool's image: the bytes of that generation from another copy (a second
# target's version, or a file the user names), written into the version's
# file only where its own record vouches for them; a forged file is
# refused, a kill -9 mid-repair leaves it damaged as before or repaired
# (docs/ARCHITECTURE.md, "Versions")

load helpers
load vhist

# the test build of rpmemd that dies where RPMEMD_CRASH_AT says
CRASHD=$BUILD/tests/rpmemd-crash

# history -- pool p on both targets mirrored from s1, then synced 4 times
# with the same changes: versions 1-4 on each, the pools at generation 5;
# sI is image I
history() {
	cp "$W/s1" "$W/src"
	"$RPMEMCTL" -q mirror "$W/src" "$T/r1/p"
	"$RPMEMCTL" -q mirror "$W/src" "$T2/r1/p"
	for i in 2 3 4 5; do
		change "$i"
		"$RPMEMCTL" -q sync "$W/src" "$T/r1/p"
		"$RPMEMCTL" -q sync "$W/src" "$T2/r1/p"
		cp "$W/src" "$W/s$i"
	done
}

# restores GEN... -- each version of r1/p restores byte-identical to sGEN
restores() {
	local g
	for g in "$@"; do
		rm -f "$W/o$g"
		rc sync --pull --at "$g" "$W/o$g" "$T/r1/p"
		[ "$status" -eq 0 ] || { echo "$output"; return 1; }
		cmp "$W/o$g" "$W/s$g" || return 1
	done
}

# clean -- every version of r1/p scrubs clean (exit 0), none is listed
# damaged, and the pool's own scrub (which reads the versions' records)
# exits 0
clean() {
	local g
	for g in 1 2 3 4; do
		rc scrub --at "$g" "$T/r1/p"
		[ "$status" -eq 0 ] || { echo "$output"; return 1; }
	done
	rc versions --json "$T/r1/p"
	[ "$(json '[.versions[] | select(.damaged)] | length')" -eq 0 ]
	rc scrub --json "$T/r1/p"
	[ "$status" -eq 0 ]
	[ "$(json '.damaged_versions | length')" -eq 0 ]
}

# V3 -- version 3's file; its first record holds blocks 28 and 29 (what
# sync 4 changed) as they were at generation 3
V3=
# REC -- the file offset of that record's data
REC=$((4096 + 32))
BAD="0x$(printf '%x' $((4 * 7 * 4096))) length 8192"

setup() {
	setup_env
	versions_conf
	start_daemon
	start_second
	mkfile "$W/s1" 1
	history
	V3=$R1/.rpmemd/p.v3.ver
	cp "$V3" "$W/v3.good"
}

teardown() {
	stop_second
	teardown_daemon
}

# damaged AT -- flip the byte of version 3's record data at AT; the
# version then scrubs damaged and restores through it are refused
damaged() {
	poke "$V3" $((REC + $1))
	cp "$V3" "$W/v3.bad"
	rc scrub --at 3 "$T/r1/p"
	[ "$status" -eq 7 ]
	[[ "$output" == *"damaged at $BAD"* ]]
	rm -f "$W/o2"
	rc sync --pull --at 2 "$W/o2" "$T/r1/p"
	[ "$status" -eq 7 ]
	[ ! -e "$W/o2" ]
	# the pool's own scrub reads its versions' records too: exit 7
	rc scrub "$T/r1/p"
	[ "$status" -eq 7 ]
	[[ "$output" == *"damaged version 3: a record of its journal on the target does not check"* ]]
	rc scrub --json "$T/r1/p"
	[ "$status" -eq 7 ]
	[ "$(json '.damaged_versions | join(",")')" = 3 ]
	grep -q "version 3 is damaged: its record at 0x1c000 length 8192 does not check" "$DLOG"
}

@test "scrub --repair --from a second target heals a flipped byte in a version's data from that target's own version: the file as it was, every version restores exactly" {
	damaged 100
	# the other copy has moved on since: its version 3 still serves
	change 6
	"$RPMEMCTL" -q sync "$W/src" "$T2/r1/p"
	rc scrub --repair --from "$T2/r1/p" "$T/r1/p"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"version 3: repaired at $BAD"* ]]
	[[ "$output" == *"8192 bytes of damaged versions repaired from $T2/r1/p"* ]]
	# the version's file holds its bytes again, the pool is untouched
	cmp "$W/v3.good" "$V3"
	cmp "$W/s5" "$R1/p"
	grep -q "version 3: 8192 bytes of its damaged records .* repaired" "$DLOG"
	clean
	restores 1 2 3 4 5
	# nothing left to repair: a second run writes nothing
	rc scrub --json --repair --from "$T2/r1/p" "$T/r1/p"
	[ "$status" -eq 0 ]
	[ "$(json .version_repaired_bytes)" -eq 0 ]
	[ "$(json '.version_findings | length')" -eq 0 ]
}

@test "scrub --repair --at N --from FILE heals version N with a file the user says is that image, checked against the version's own record" {
	damaged 5000
	rc scrub --json --repair --at 3 --from "$W/s3" "$T/r1/p"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(json .repaired_bytes)" -eq 8192 ]
	[ "$(json '.findings[0].status')" = repaired ]
	cmp "$W/v3.good" "$V3"
	clean
	restores 1 2 3 4 5
	# a version older than the record's heals the same way: its image at
	# those blocks is what the record holds
	poke "$V3" $((REC + 7))
	rc scrub --repair --at 1 --from "$W/s1" "$T/r1/p"
	[ "$status" -eq 0 ]
	cmp "$W/v3.good" "$V3"
	restores 1 2 3
}

@test "a FILE whose bytes are not the version's (one byte forged in the damaged range) is refused by the target, naming the range; nothing written, still damaged" {
	damaged 100
	cp "$W/s3" "$W/forged"
	poke "$W/forged" $((4 * 7 * 4096 + 4096 + 77))
	rc scrub --repair --at 3 --from "$W/forged" "$T/r1/p"
	echo "$output"
	[ "$status" -eq 7 ]
	[[ "$output" == *"not repaired at $BAD with the data of $W/forged"* ]]
	[[ "$output" == *"record at $BAD (of version 3) does not check"* ]]
	cmp "$W/v3.bad" "$V3"
	rc scrub --at 3 "$T/r1/p"
	[ "$status" -eq 7 ]
	# a second target at another size is no copy of it
	"$RPMEMCTL" -q mirror "$W/s1" "$T2/r1/q"
	head -c 4096 "$W/s1" >"$W/small"
	"$RPMEMCTL" -q sync "$W/small" "$T2/r1/q" 2>/dev/null || true
	rc scrub --repair --at 3 --from "$W/small" "$T/r1/p"
	[ "$status" -eq 5 ]
	cmp "$W/v3.bad" "$V3"
}

@test "kill -9 of rpmemd in the middle of writing a version's repair leaves the version damaged as before (or repaired), never worse; the next repair heals it" {
	[ -x "$CRASHD" ] || skip "no $CRASHD (make check builds it)"
	# in the record's second block: the half written first changes nothing
	damaged $((4096 + 100))
	stop_daemon
	RPMEMD=$CRASHD RPMEMD_CRASH_AT=mend-half start_daemon
	rc scrub --repair --from "$T2/r1/p" "$T/r1/p"
	echo "$output"
	[ "$status" -ne 0 ]
	# it died at the point (SIGKILL), not for another reason
	local st=0
	wait "$DPID" || st=$?
	[ "$st" -eq 137 ]
	DPID=
	start_daemon
	cmp "$W/v3.bad" "$V3" || cmp "$W/v3.good" "$V3"
	rc scrub --at 3 "$T/r1/p"
	[ "$status" -eq 7 ]
	[[ "$output" == *"damaged at $BAD"* ]]
	[[ "$output" != *"damaged at 0x"*"damaged at 0x"* ]]
	restores 4 5
	rc scrub --repair --from "$T2/r1/p" "$T/r1/p"
	[ "$status" -eq 0 ]
	cmp "$W/v3.good" "$V3"
	clean
	restores 1 2 3 4 5
}

@test "a flipped byte in a version's header (listed DAMAGED) is rebuilt by scrub --repair to match the header's own check (a kill -9 after its write leaves it damaged or rebuilt); one in its source cannot be: kept damaged, nothing written" {
	poke "$V3" 200
	rc versions --json "$T/r1/p"
	[ "$(json '[.versions[] | select(.damaged) | .generation] | join(",")')" = 3 ]
	rc scrub "$T/r1/p"
	[ "$status" -eq 7 ]
	[[ "$output" == *"damaged version 3: its journal on the target does not read"* ]]
	rc scrub --repair --from "$W/s5" "$T/r1/p"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"version 3: header repaired"* ]]
	cmp "$W/v3.good" "$V3"
	grep -q "version 3: its damaged header rebuilt" "$DLOG"
	clean
	restores 1 2 3 4 5
	# killed right after the header's write, before its sync: the
	# header old (damaged) or rebuilt, nothing else of the file changed
	poke "$V3" 200
	cp "$V3" "$W/v3.hbad"
	stop_daemon
	RPMEMD=$CRASHD RPMEMD_CRASH_AT=mend-header start_daemon
	rc scrub --repair --from "$W/s5" "$T/r1/p"
	[ "$status" -ne 0 ]
	local st=0
	wait "$DPID" || st=$?
	[ "$st" -eq 137 ]
	DPID=
	start_daemon
	cmp "$W/v3.hbad" "$V3" || cmp "$W/v3.good" "$V3"
	restores 1 2 3 4 5
	rc scrub --repair --from "$W/s5" "$T/r1/p"
	[ "$status" -eq 0 ]
	cmp "$W/v3.good" "$V3"
	# the source's bytes are what the check vouches for, not known
	# otherwise: a flip there is refused, the file as it was
	[ "$(dd if="$V3" bs=1 skip=48 count=1 2>/dev/null | od -An -tu1 | tr -d ' ')" -gt 0 ]
	poke "$V3" 50
	cp "$V3" "$W/v3.bad"
	rc scrub --repair --at 3 --from "$W/s3" "$T/r1/p"
	echo "$output"
	[ "$status" -eq 7 ]
	[[ "$output" == *"version 3: its header is not repaired"*"cannot be rebuilt to match its own check"* ]]
	cmp "$W/v3.bad" "$V3"
	rc versions --json "$T/r1/p"
	[ "$(json '[.versions[] | select(.damaged) | .generation] | join(",")')" = 3 ]
	restores 1 2 3
}

@test "scrub_interval checks the versions' records too: a flipped byte in version 3's data is logged and announced naming the version and the record; healed, the next scheduled scrub is clean" {
	stop_daemon
	sed -i 's|versions = "all"; }|versions = "all"; scrub_interval = "1s"; }|' "$CONF"
	grep -q 'scrub_interval = "1s"' "$CONF"
	start_daemon
	subscribe "$W/ev" "$T"
	poke "$V3" $((REC + 100))
	alive_until "$EPID" grep -q "damaged versions: 3 (kept; scrub --repair heals them)" "$W/ev"
	kill "$EPID"
	grep -q "version 3 of pool 'p' is damaged at $BAD: a record of its journal does not check" "$W/ev"
	grep -q "scheduled scrub: version 3 of pool 'p' is damaged at $BAD: a record of its journal does not check" "$DLOG"
	grep -q "scheduled scrub of pool 'p': .* 0 damaged, 0 unverified; damaged versions: 3" "$DLOG"
	# the pool's own image is intact: not listed damaged
	[ "$("$RPMEMCTL" list --json "$T/r1/p" | jq -er '.pools[0].damaged_bytes')" -eq 0 ]
	# the scheduled scrub's finding stays: the plain listing names it
	[ "$(listed_damaged)" = 3 ]
	rc scrub --repair --from "$T2/r1/p" "$T/r1/p"
	[ "$status" -eq 0 ]
	cmp "$W/v3.good" "$V3"
	[ "$(listed_damaged)" = "" ]
	local n
	n=$(wc -l <"$DLOG")
	alive_until "$DPID" eval "tail -n +$((n + 1)) '$DLOG' | grep -q \"scheduled scrub of pool 'p': .* 0 damaged, 0 unverified: clean\""
}

# listed_damaged -- the generations plain `versions --json` of r1/p calls
# damaged (no check asked: what the target keeps), comma-joined
listed_damaged() {
	rc versions --json "$T/r1/p"
	[ "$status" -eq 0 ] || { echo "$output"; return 1; }
	json '[.versions[] | select(.damaged) | .generation] | join(",")'
}

@test "a version a scrub found damaged in its data stays listed damaged (versions, --json, across a restart) until scrub --repair heals it" {
	poke "$V3" $((REC + 100))
	# nothing has read its records yet: the plain listing cannot know
	[ "$(listed_damaged)" = "" ]
	[ ! -e "$R1/.rpmemd/p.v3.ver.bad" ]
	rc scrub "$T/r1/p"
	[ "$status" -eq 7 ]
	# the target keeps the finding: a mark beside the version, rpmemd's own
	[ -f "$R1/.rpmemd/p.v3.ver.bad" ]
	[ "$(stat -c %u "$R1/.rpmemd/p.v3.ver.bad")" = "$(id -u)" ]
	[ "$(listed_damaged)" = 3 ]
	rc versions "$T/r1/p"
	[ "$status" -eq 0 ]
	echo "$output"
	[[ "$(grep '^3 ' <<<"$output")" == *"DAMAGED "* ]]
	[[ "$output" == *"version 3 of $T/r1/p is damaged on the target: a scrub found a record of it not checking"* ]]
	[ -z "$(grep -E '^(1|2|4) ' <<<"$output" | grep DAMAGED)" ]
	# the version stays listed, and the mark survives a restart
	stop_daemon
	start_daemon
	[ "$(listed_damaged)" = 3 ]
	rc versions --json "$T/r1/p"
	[ "$(json '.versions | length')" -eq 4 ]
	# repaired from the second target: the mark goes
	rc scrub --repair --from "$T2/r1/p" "$T/r1/p"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(listed_damaged)" = "" ]
	[ ! -e "$R1/.rpmemd/p.v3.ver.bad" ]
	rc versions "$T/r1/p"
	[[ "$output" != *DAMAGED* ]]
	restores 1 2 3 4 5
}

@test "a version marked damaged in its data loses its mark with it when pruned, and a scrub that finds it checking again unmarks it" {
	poke "$V3" $((REC + 100))
	rc scrub "$T/r1/p"
	[ "$status" -eq 7 ]
	[ "$(listed_damaged)" = 3 ]
	# the byte put back behind rpmemd's back: the next scrub unmarks it
	cp "$W/v3.good" "$V3"
	rc scrub "$T/r1/p"
	[ "$status" -eq 0 ]
	[ "$(listed_damaged)" = "" ]
	[ ! -e "$R1/.rpmemd/p.v3.ver.bad" ]
	# the oldest version damaged, then pruned: its mark goes with it
	poke "$R1/.rpmemd/p.v1.ver" $((REC + 100))
	rc scrub "$T/r1/p"
	[ "$status" -eq 7 ]
	[ -e "$R1/.rpmemd/p.v1.ver.bad" ]
	[ "$(listed_damaged)" = 1 ]
	rc versions --prune 1 "$T/r1/p"
	echo "$output"
	[ "$status" -eq 0 ]
	[ ! -e "$R1/.rpmemd/p.v1.ver" ]
	[ ! -e "$R1/.rpmemd/p.v1.ver.bad" ]
	[ "$(listed_damaged)" = "" ]
}
