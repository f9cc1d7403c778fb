#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# splitbrain.bats -- a crash failover is no split brain: a primary killed
# while replicating live resyncs from the promoted copy without a discard;
# a real split brain (writes on both sides) is still refused, its retries
# add no id, and it is reported (docs/ARCHITECTURE.md, "A crash is not a
# split brain")

load helpers
load pobj

setup() {
	setup_daemon
	POOL=$W/app.obj
	REP=$R1/app
	export RPMEM_REPLICATE="$POOL=$T/r1/app"
	export PMEM_IS_PMEM_FORCE=0
	unset RPMEM_REPLICATE_POLICY RPMEM_REPLICATE_RETRY
}

teardown() {
	[ -z "${APID:-}" ] || kill -KILL "$APID" 2>/dev/null || true
	teardown_daemon
}

# nids FILE -- how many ids FILE's history (FILE.rpmemgen) holds
nids() {
	sed -n 's/^ids=//p' "$1.rpmemgen" | tr ',' '\n' | grep -c .
}

# get FILE I -- slot I of a copy of FILE, read without the library
get() {
	cp "$1" "$W/copy.obj"
	"$APP" "$W/copy.obj" "get:$2"
}

# failover -- the copy promoted in place after the primary's crash
# (forced: a live copy is syncing), written there as the new primary
# (slot 0 "theirs"), demoted again for the failback; its image kept in
# $W/promoted.obj
failover() {
	rc promote -f "$T/r1/app"
	[ "$status" -eq 0 ]
	cp "$REP" "$W/promoted.obj"
	"$APP" "$W/promoted.obj" set:0:theirs
	cp "$W/promoted.obj" "$REP"
	rc demote "$T/r1/app"
	[ "$status" -eq 0 ]
}

@test "a primary killed while replicating live, its copy promoted and written: the old primary's push is refused as behind, not as a split brain, and it resyncs from the new primary without --discard-local" {
	app set:0:first put:1:acked kill
	[ "$status" -eq 137 ]
	failover
	rc sync "$POOL" "$T/r1/app"
	[ "$status" -eq 4 ]
	[[ "$output" == *"the target holds newer writes"* ]]
	[[ "$output" != *"split brain"* ]]
	cmp "$W/promoted.obj" "$REP"
	rc sync --pull "$POOL" "$T/r1/app"
	[ "$status" -eq 0 ]
	cmp "$POOL" "$REP"
	[ "$(get "$POOL" 0)" = theirs ]
	[ "$(get "$POOL" 1)" = acked ]
	# the failback is complete: the application runs on over the copy
	app set:2:again
	[ "$status" -eq 0 ]
	cmp "$POOL" "$REP"
}

@test "a primary killed while replicating live is restarted under the library after the failover: it is told to pull the new primary's writes, not that it is a split brain" {
	app set:0:first kill
	[ "$status" -eq 137 ]
	failover
	app set:0:ours
	[ "$status" -ne 0 ]
	[[ "$output" == *"the target holds newer writes"* ]]
	[[ "$output" != *"split brain"* ]]
	cmp "$W/promoted.obj" "$REP"
}

@test "a real split brain (the old primary ran degraded without its target, the copy was promoted and written) is still refused both ways, nothing is overwritten, and refused retries add no id" {
	app set:0:first kill
	[ "$status" -eq 137 ]
	# a partition: the old primary restarts and runs degraded, alone
	stop_daemon
	RPMEM_REPLICATE_POLICY=degraded RPMEM_REPLICATE_RETRY=never \
		app set:1:ours
	[ "$status" -eq 0 ]
	refute grep -q '^live=' "$POOL.rpmemgen"
	start_daemon
	failover
	cp "$POOL" "$W/ours.obj"
	rc sync "$POOL" "$T/r1/app"
	[ "$status" -eq 4 ]
	[[ "$output" == *"split brain"* ]]
	rc sync --pull "$POOL" "$T/r1/app"
	[ "$status" -eq 4 ]
	[[ "$output" == *"split brain"* ]]
	local n
	n=$(nids "$POOL")
	# the old primary is written again between retries: no id per retry
	"$APP" "$POOL" set:2:more
	rc sync "$POOL" "$T/r1/app"
	[ "$status" -eq 4 ]
	[ "$(nids "$POOL")" -eq "$n" ]
	"$APP" "$POOL" set:3:evenmore
	rc sync --pull "$POOL" "$T/r1/app"
	[ "$status" -eq 4 ]
	[ "$(nids "$POOL")" -eq "$n" ]
	cmp "$W/promoted.obj" "$REP"
	[ "$(get "$POOL" 1)" = ours ]
	[ "$(get "$POOL" 3)" = evenmore ]
	[ "$(get "$REP" 0)" = theirs ]
}
