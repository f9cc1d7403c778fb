#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# history.bats -- a pool's versions survive the target's worst nights:
# rpmemd killed (kill -9) at each point of a prune's fold, a torn tail a
# crash left at the end of a version file, a flipped byte in a version's
# header. No version is lost that was not pruned, a damaged one is listed
# as damaged and never removed by the daemon (docs/ARCHITECTURE.md,
# "Versions")

load helpers
load vhist

# the test build of rpmemd that dies where RPMEMD_CRASH_AT says
CRASHD=$BUILD/tests/rpmemd-crash

# history POOL -- POOL mirrored from s1 then synced 4 times: versions 1-4,
# the pool at generation 5; sI is image I
history() {
	cp "$W/s1" "$W/src"
	"$RPMEMCTL" -q mirror "$W/src" "$T/r1/$1"
	for i in 2 3 4 5; do
		change "$i"
		"$RPMEMCTL" -q sync "$W/src" "$T/r1/$1"
		cp "$W/src" "$W/s$i"
	done
}

# gens POOL -- the generations `versions --json` lists, comma separated
gens() {
	rc versions --json "$T/r1/$1"
	[ "$status" -eq 0 ] || return 1
	json '[.versions[].generation] | join(",")'
}

# restores POOL GEN... -- each version restores byte-identical to sGEN
restores() {
	local p=$1 g
	shift
	for g in "$@"; do
		rm -f "$W/o$g"
		rc sync --pull --at "$g" "$W/o$g" "$T/r1/$p"
		[ "$status" -eq 0 ] || { echo "$output"; return 1; }
		cmp "$W/o$g" "$W/s$g" || return 1
	done
}

# crash_prune POINT POOL GEN -- rpmemd (the test build) killed at POINT of
# pruning version GEN of POOL; restarted (the product build)
crash_prune() {
	stop_daemon
	RPMEMD=$CRASHD RPMEMD_CRASH_AT=$1 start_daemon
	rc versions --prune "$3" "$T/r1/$2"
	[ "$status" -ne 0 ]
	wait "$DPID" || true
	DPID=
	start_daemon
}

setup() {
	setup_env
	versions_conf
	start_daemon
	mkfile "$W/s1" 1
}

teardown() {
	teardown_daemon
}

@test "kill -9 of rpmemd at each point of pruning version 3 (its fold into 2): the prune is undone or completed at the restart, versions 1 and 2 stay restorable, the next commit removes nothing" {
	[ -x "$CRASHD" ] || skip "build/tests/rpmemd-crash not built (make examples)"
	local k=0 pt want
	# point: what the restart finds (undone: version 3 still there)
	for pt in undo-append-data:1,2,3,4 fold-appended:1,2,3,4 \
		  fold-synced:1,2,3,4 fold-trailer:1,2,4 prune-unlinked:1,2,4; do
		k=$((k + 1))
		want=${pt#*:}
		pt=${pt%%:*}
		history "p$k"
		crash_prune "$pt" "p$k" 3
		[ "$(gens "p$k")" = "$want" ] || { echo "$pt: $(gens "p$k")"; false; }
		restores "p$k" ${want//,/ }
		# the next commit keeps every file of them
		change 6
		"$RPMEMCTL" -q sync "$W/src" "$T/r1/p$k"
		cp "$W/src" "$W/s6"
		[ "$(gens "p$k")" = "$want,5" ]
		for g in ${want//,/ }; do
			[ -e "$R1/.rpmemd/p$k.v$g.ver" ]
		done
		if [ "$want" = 1,2,4 ]; then
			# completed: version 3's files gone, its prune logged
			[ ! -e "$R1/.rpmemd/p$k.v3.ver" ]
			[ ! -e "$R1/.rpmemd/p$k.scrub.v3" ]
		else
			# undone: the prune asked again succeeds
			rc versions --prune 3 "$T/r1/p$k"
			[ "$status" -eq 0 ]
			[ "$(gens "p$k")" = 1,2,4,5 ]
		fi
		restores "p$k" 1 2 4
		refute grep -q "p$k'.*cannot be restored any more" "$DLOG"
	done
	grep -q "was being pruned when rpmemd stopped" "$DLOG"
}

@test "a torn tail at the end of a version file (what a crash mid-append leaves) is cut at load: every version listed and restorable, nothing removed by the next commit" {
	history p
	# a few bytes of a record's head
	printf 'URE' >>"$R1/.rpmemd/p.v2.ver"
	# a record's data written, its head not yet (a hole of zeros)
	head -c 32 /dev/zero >>"$R1/.rpmemd/p.v3.ver"
	head -c 4096 /dev/urandom >>"$R1/.rpmemd/p.v3.ver"
	[ "$(gens p)" = 1,2,3,4 ]
	restores p 1 2 3 4
	change 6
	"$RPMEMCTL" -q sync "$W/src" "$T/r1/p"
	[ "$(gens p)" = 1,2,3,4,5 ]
	[ -e "$R1/.rpmemd/p.v2.ver" ]
	[ -e "$R1/.rpmemd/p.v1.ver" ]
	# a prune folding into the torn file cuts its tail off for good
	rc versions --prune 3 "$T/r1/p"
	[ "$status" -eq 0 ]
	grep -q "bytes of a torn record cut off" "$DLOG"
	restores p 1 2 4
}

@test "one flipped byte in a version's header: listed as damaged (human, JSON, scrub, events), never removed by a commit; the older versions stay listed and restore through its records, which still check" {
	history p
	subscribe "$W/ev" "$T"
	poke "$R1/.rpmemd/p.v3.ver" 200
	[ "$(gens p)" = 1,2,3,4 ]
	rc versions --json "$T/r1/p"
	[ "$(json '[.versions[] | select(.damaged) | .generation] | join(",")')" = 3 ]
	[ "$(json '.versions[2].size')" -eq 1048576 ]
	# its trailer still checks: when it was current, its hash
	[ "$(json '.versions[2].hash | length')" -eq 16 ]
	rc versions "$T/r1/p"
	[ "$status" -eq 0 ]
	[[ "$output" == *"DAMAGED"* ]]
	[[ "$output" == *"version 3 of"*"is damaged on the target"* ]]
	# scrub of the pool names it, exit 7
	rc scrub "$T/r1/p"
	[ "$status" -eq 7 ]
	[[ "$output" == *"damaged version 3: its journal on the target does not read"* ]]
	rc scrub --json "$T/r1/p"
	[ "$status" -eq 7 ]
	[ "$(json '.damaged_versions | join(",")')" = 3 ]
	[ "$(json .clean)" = false ]
	# commits keep it, and everything older
	change 6
	"$RPMEMCTL" -q sync "$W/src" "$T/r1/p"
	change 7
	"$RPMEMCTL" -q sync "$W/src" "$T/r1/p"
	[ "$(gens p)" = 1,2,3,4,5,6 ]
	for g in 1 2 3; do
		[ -e "$R1/.rpmemd/p.v$g.ver" ]
	done
	grep -q "version 3 is damaged.*kept" "$DLOG"
	wait_for grep -q "version 3 of pool 'p' is damaged" "$W/ev"
	kill "$EPID"
	grep -q "version 3 of pool 'p' is damaged" "$W/ev"
	# its records check: restored through it, each image hash-checked
	restores p 1 2 3 4 5
	# asked to prune it, the target refuses: the older ones need it
	rc versions --prune 3 "$T/r1/p"
	[ "$status" -eq 4 ]
	[[ "$output" == *"version 3 of pool 'p' is damaged"* ]]
	[ -e "$R1/.rpmemd/p.v3.ver" ]
}

@test "a flipped byte in a version's data: a restore through it names the ranges it cannot restore and writes nothing; --salvage writes the rest (exit 7); verify --at, scrub --at and export --at name them too" {
	history p
	# the data of version 3's record (blocks 28, 29: what sync 4 changed)
	poke "$R1/.rpmemd/p.v3.ver" $((4096 + 32 + 100))
	local bad
	bad="damaged at 0x$(printf '%x' $((4 * 7 * 4096))) length 8192"
	for g in 1 2 3; do
		rm -f "$W/o$g"
		rc sync --pull --at "$g" "$W/o$g" "$T/r1/p"
		[ "$status" -eq 7 ]
		[[ "$output" == *"$bad"* ]]
		[[ "$output" == *"8 KiB in 1 ranges (above) cannot be restored; nothing was written (--salvage writes the rest)"* ]]
		[ ! -e "$W/o$g" ]
		[ -z "$(ls -A "$W" | grep "rpmem-tmp\|rpmem-restore")" ]
	done
	rc sync --pull --at 2 --salvage "$W/o2" "$T/r1/p"
	[ "$status" -eq 7 ]
	[[ "$output" == *"$bad"* ]]
	[[ "$output" == *"salvaged version 2 of"* ]]
	# the rest is version 2's, the range zeros
	cmp -n $((4 * 7 * 4096)) "$W/o2" "$W/s2"
	cmp -i $((4 * 7 * 4096 + 8192)) "$W/o2" "$W/s2"
	[ -z "$(dd if="$W/o2" bs=4096 skip=28 count=2 2>/dev/null | tr -d '\0')" ]
	rc verify --at 2 "$W/s2" "$T/r1/p"
	[ "$status" -eq 7 ]
	[[ "$output" == *"$bad"* ]]
	[[ "$output" == *"were not compared; none of the rest differ"* ]]
	rc scrub --at 2 "$T/r1/p"
	[ "$status" -eq 7 ]
	# export --at: the same ranges; the stream without its trailer, gone
	rc export --at 2 "$T/r1/p" "$W/e2"
	[ "$status" -eq 7 ]
	[[ "$output" == *"damaged at 0x$(printf '%x' $((4 * 7 * 4096))) length 8192"* ]]
	[ ! -e "$W/e2" ]
	rc export --at 2 --salvage "$T/r1/p" "$W/e2"
	[ "$status" -eq 7 ]
	[[ "$output" == *"zeros exported"* ]]
	rc import "$W/e2" "$T/r1/q"
	[ "$status" -eq 0 ]
	[[ "$output" == *"exported with --salvage"* ]]
	rc sync --pull "$W/q" "$T/r1/q"
	cmp "$W/q" "$W/o2"
	# version 4 does not go through it
	restores p 4
	rc sync --salvage "$W/o2" "$T/r1/p"
	[ "$status" -eq 2 ]
	rc export --salvage "$T/r1/p" "$W/e4"
	[ "$status" -eq 2 ]
}

@test "the region's retention never prunes a damaged version, nor the newer ones whose blocks it would need" {
	stop_daemon
	sed -i 's|versions = "all"|versions = "last=1"|' "$CONF"
	start_daemon
	history p
	[ "$(gens p)" = 4 ]
	poke "$R1/.rpmemd/p.v4.ver" 200
	change 6
	"$RPMEMCTL" -q sync "$W/src" "$T/r1/p"
	change 7
	"$RPMEMCTL" -q sync "$W/src" "$T/r1/p"
	# 5 would fold into 4 to be pruned: kept while 4 is damaged
	[ -e "$R1/.rpmemd/p.v4.ver" ]
	[ "$(gens p)" = 4,5,6 ]
	rc versions --json "$T/r1/p"
	[ "$(json '[.versions[].damaged] | join(",")')" = true,false,false ]
	restores p 5
}

@test "kill -9 of rpmemd right after a commit, before its scrub record: the writer's next open records it, scrub --rebuild on request; the image becomes a version with its record and hash" {
	[ -x "$CRASHD" ] || skip "build/tests/rpmemd-crash not built (make examples)"
	history p
	stop_daemon
	RPMEMD=$CRASHD RPMEMD_CRASH_AT=scrub-record start_daemon
	change 6
	cp "$W/src" "$W/s6"
	run "$RPMEMCTL" -q sync "$W/src" "$T/r1/p"
	# the test build died at the point; were it still up, kill it there
	kill -9 "$DPID" 2>/dev/null || true
	wait "$DPID" || true
	DPID=
	start_daemon
	rc list --json "$T/r1/p"
	[ "$(json '.pools[0].generation')" -eq 6 ]
	[ "$(json '.pools[0].state')" = consistent ]
	# the image of generation 6 has no record: unverified
	rc scrub "$T/r1/p"
	[ "$status" -eq 8 ]
	rc scrub --rebuild "$T/r1/p"
	[ "$status" -eq 0 ]
	grep -q "pool 'p': its image (generation 6) has no scrub record" "$DLOG"
	rc scrub "$T/r1/p"
	[ "$status" -eq 0 ]
	# without --rebuild, the next sync's open records it first
	stop_daemon
	rm "$R1/.rpmemd/p.scrub"
	start_daemon
	change 7
	"$RPMEMCTL" -q sync "$W/src" "$T/r1/p"
	rc versions --json "$T/r1/p"
	[ "$(json '.versions[-1].generation')" -eq 6 ]
	[ "$(json '.versions[-1].hash | length')" -eq 16 ]
	[ -e "$R1/.rpmemd/p.scrub.v6" ]
	rc scrub --at 6 "$T/r1/p"
	[ "$status" -eq 0 ]
	restores p 6
	rc scrub --rebuild --at 6 "$T/r1/p"
	[ "$status" -eq 2 ]
}

@test "a damaged version off the chain (a stray file: a header of another generation) is listed and kept by commits; pruned by request it goes alone" {
	history p
	cp "$R1/.rpmemd/p.v2.ver" "$R1/.rpmemd/p.v9.ver"
	rc versions --json "$T/r1/p"
	[ "$(json '[.versions[].generation] | join(",")')" = 1,2,3,4,9 ]
	[ "$(json '[.versions[] | select(.damaged) | .generation] | join(",")')" = 9 ]
	change 6
	"$RPMEMCTL" -q sync "$W/src" "$T/r1/p"
	[ -e "$R1/.rpmemd/p.v9.ver" ]
	rc versions --prune 9 "$T/r1/p"
	[ "$status" -eq 0 ]
	[ ! -e "$R1/.rpmemd/p.v9.ver" ]
	[ "$(gens p)" = 1,2,3,4,5 ]
	restores p 1 2 3 4 5
}
