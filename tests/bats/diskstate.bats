#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# diskstate.bats -- disk states (UpToDate, Outdated, Inconsistent,
# Consistent) and roles as list, status, replicas, JSON and Prometheus
# show them; the preload library over rpmemd instances on loopback

load helpers
load pobj

setup() {
	setup_two
}

teardown() {
	teardown_two
}

# disk TARGET [POOL] -- the disk state list --json gives pool (app) on TARGET
disk() {
	"$RPMEMCTL" list --json "$1/r1/${2:-app}" | jq -er '.pools[0].disk'
}

# is_disk TARGET STATE -- pool app on TARGET is in disk state STATE
is_disk() {
	[ "$(disk "$1")" = "$2" ]
}

@test "diskstate: a live copy is UpToDate while its writer replicates, Consistent once the writer is gone; an interrupted sync Inconsistent; a primary UpToDate (list, status, replicas, JSON, Prometheus)" {
	app set:0:first
	[ "$status" -eq 0 ]
	# a synced copy: complete, its target cannot know whether newest
	[ "$(disk "$T")" = Consistent ]
	app_start set:1:second pause
	app_paused 1
	# live: syncing (live), held by the writer, acknowledging its drains
	rc list --json "$T/r1/app"
	[ "$(json '.pools[0].state')" = syncing ]
	[ "$(json '.pools[0].disk')" = UpToDate ]
	[ "$(json '.pools[0].role')" = secondary ]
	rc status --json "$T2"
	[ "$(json '.pools[] | select(.name == "app") | .disk')" = UpToDate ]
	rc list "$T/r1/app"
	[[ "$output" == *"DISK"*"ROLE"* ]]
	[[ "$output" == *"UpToDate"*"secondary"* ]]
	rc replicas --json "$POOL"
	[ "$(json '[.replicas[].disk] | join(",")')" = UpToDate,UpToDate ]
	rc replicas "$POOL"
	[[ "$output" == *"live"*"UpToDate"* ]]
	rc replicas --prometheus "$POOL"
	grep -q "^rpmem_replica_disk_state{.*disk=\"UpToDate\"} 1" <<<"$output"
	rc status --prometheus "$T"
	grep -q "^rpmem_pool_disk_state{.*pool=\"app\".*disk=\"UpToDate\"} 1" <<<"$output"
	# the writer dies: its drained image is crash-consistent, but no
	# target alone can tell whether another copy went on without it
	kill -KILL "$APID"
	wait "$APID" || true
	APID=
	wait_for is_disk "$T" Consistent
	wait_for is_disk "$T2" Consistent
	rc list --json "$T/r1/app"
	[ "$(json '.pools[0].state')" = syncing ]
	# an interrupted sync (no live writer's source): Inconsistent
	"$RPMEMCTL" -q create "$T/r1/p" 1M
	run python3 "$TOP/tests/peers/hostile.py" "$PORT" raw-sync p "host:/elsewhere" 0
	[ "$output" = OK ]
	[ "$(disk "$T" p)" = Inconsistent ]
	# a copy promoted in place is the primary, UpToDate
	rc promote -f "$T2/r1/app"
	[ "$status" -eq 0 ]
	rc list --json "$T2/r1/app"
	[ "$(json '.pools[0].role')" = primary ]
	[ "$(json '.pools[0].disk')" = UpToDate ]
}

@test "diskstate: a crashed writer's live copy after an rpmemd restart: the plain promote says what is in the way (a live copy, --force or --to), not a writer; promote --to and sync --pull take its last drained image" {
	app_start set:0:zero pause set:1:one pause
	app_paused 1
	app_continue
	app_paused 2
	kill -KILL "$APID"
	wait "$APID" || true
	APID=
	stop_daemon
	start_daemon
	rc list --json "$T/r1/app"
	[ "$(json '.pools[0].writer')" = "" ]
	[ "$(json '.pools[0].disk')" = Consistent ]
	rc promote "$T/r1/app"
	echo "$output"
	[ "$status" -eq 4 ]
	refute grep -q "open for writing by another session" <<<"$output"
	[[ "$output" == *"live copy"* ]]
	[[ "$output" == *"--to"* ]]
	rc list --json "$T/r1/app"
	[ "$(json '.pools[0].role')" = secondary ]
	# promote --to takes the crashed writer's last drained image
	rc promote --to "$W/new.obj" "$T/r1/app"
	[ "$status" -eq 0 ]
	cmp "$W/new.obj" "$R1/app"
	cp "$W/new.obj" "$W/copy.obj"
	[ "$("$APP" "$W/copy.obj" get:1)" = one ]
	# and so does sync --pull
	rc sync --pull "$W/pulled.obj" "$T2/r1/app"
	[ "$status" -eq 0 ]
	cmp "$W/pulled.obj" "$R1B/app"
}

# gens TARGET -- the history of pool app on TARGET, ids joined by ","
gens() {
	"$RPMEMCTL" list --json "$1/r1/app" | jq -r '.pools[0].generations | join(",")'
}

@test "diskstate: a target left behind is Outdated: the copy that stays and the file take a new generation id before the next persist returns; the target's return resyncs it with that id" {
	export RPMEM_REPLICATE_QUORUM=1
	app_start set:0:zero pause set:1:one pause
	app_paused 1
	local g0
	g0=$(gens "$T")
	[ "$(gens "$T2")" = "$g0" ]
	# the second target's daemon dies: the persist of set:1 goes on
	# with the first, which first takes a new id the second lacks
	stop_second
	app_continue
	app_paused 2
	local g1 ids
	g1=$(gens "$T")
	[ "$g1" != "$g0" ]
	[ "${g1#*,}" = "$g0" ]
	ids=$(sed -n 's/^ids=//p' "$POOL.rpmemgen")
	[ "$ids" = "$g1" ]
	grep -q "adopt: role secondary, generation history $g1" "$DLOG"
	rc replicas --json "$POOL"
	[ "$(json '.replicas[1].disk')" = Outdated ]
	# it returns; the clean exit resyncs it, with the new id
	start_second
	app_continue
	app_finish
	[ "$ASTATUS" -eq 0 ]
	cmp "$POOL" "$R1B/app"
	[ "$(gens "$T2")" = "$(gens "$T")" ]
	[ "$(gens "$T")" = "$(sed -n 's/^ids=//p' "$POOL.rpmemgen")" ]
	case ",$(gens "$T2")," in *",${g1%%,*},"*) ;; *) false ;; esac
}

@test "diskstate: a writer killed between recording the new id in FILE.rpmemgen and on the copies (the file ahead of every copy): the next start resyncs them, no split brain, every copy takes the file's history" {
	export RPMEM_REPLICATE_QUORUM=1
	app_start set:0:zero pause
	app_paused 1
	kill -KILL "$APID"
	wait "$APID" || true
	APID=
	# what the kill leaves at that point: the file's history has the
	# new id in front, the copies have not taken it
	local g0 ids
	g0=$(gens "$T")
	ids=$(sed -n 's/^ids=//p' "$POOL.rpmemgen")
	[ "$ids" = "$g0" ]
	sed -i "s/^ids=/ids=00000000000001d1,/" "$POOL.rpmemgen"
	app set:1:one
	[ "$status" -eq 0 ]
	refute grep -q "split brain" <<<"$output"
	cmp "$POOL" "$R1/app"
	cmp "$POOL" "$R1B/app"
	ids=$(sed -n 's/^ids=//p' "$POOL.rpmemgen")
	[ "$(gens "$T")" = "$ids" ]
	[ "$(gens "$T2")" = "$ids" ]
	case ",$ids," in *",00000000000001d1,"*) ;; *) false ;; esac
}
