#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# operator.bats -- what the operator sees of a replicated file: the
# failing target named, the quorum lost said, replicas' exit codes and
# its report after a clean exit or a crash (issue 34, point 9)

load helpers
load pobj

setup() {
	setup_two
}

teardown() {
	teardown_two
}

@test "degraded start with the second target down names that target as the one that failed, not the healthy first one" {
	stop_second
	RPMEM_REPLICATE_POLICY=degraded RPMEM_REPLICATE_RETRY=never \
		app set:0:alone
	[ "$status" -eq 0 ]
	[[ "$output" == *"degraded: cannot start replicating '$POOL' to $T2/r1/app: "* ]]
	[[ "$output" != *"replicating '$POOL' to $T/r1/app: "* ]]
	# and the healthy one did get the start-up push
	[ -s "$R1/app" ]
	[ ! -e "$R1B/app" ]
}

@test "quorum lost under the degraded policy: the application says the quorum itself is lost, replicas exits 9 (below the quorum), not 1 (one target behind)" {
	export RPMEM_REPLICATE_POLICY=degraded RPMEM_REPLICATE_RETRY=never
	app_start set:0:before pause set:1:after pause
	app_paused 1
	stop_second
	app_continue
	app_paused 2
	grep -q "rpmem_preload: degraded: cannot replicate '$POOL' to $T2/r1/app" "$W/app.err"
	grep -q "rpmem_preload: degraded: quorum lost: only 1 of 2 targets hold '$POOL' (2 needed)" "$W/app.err"
	# said once, not per write
	[ "$(grep -c "quorum lost" "$W/app.err")" -eq 1 ]
	rc replicas "$POOL"
	[ "$status" -eq 9 ]
	[[ "$output" == *"(1 hold: below the quorum"* ]]
	rc replicas --json "$POOL"
	[ "$status" -eq 9 ]
	[ "$(json .below_quorum)" = true ]
	python3 "$TOP/tests/json/check.py" "$TOP/tests/json/schema.json" replicas <<<"$output"
	app_continue
	app_finish
	[ "$ASTATUS" -eq 0 ]
}

@test "one target behind with the quorum held (1 of 2): replicas exits 1, not 9" {
	export RPMEM_REPLICATE_QUORUM=1 RPMEM_REPLICATE_RETRY=never
	app_start set:0:before pause set:1:after pause
	app_paused 1
	stop_second
	app_continue
	app_paused 2
	rc replicas --json "$POOL"
	[ "$status" -eq 1 ]
	[ "$(json .below_quorum)" = false ]
	refute grep -q "quorum lost" "$W/app.err"
	app_continue
	app_finish
}

@test "replicas after a clean exit: the writer stopped cleanly and each copy is synced (consistent, equal to the file), not '0 hold' and every target down; after a kill it says the links were never stopped" {
	app set:0:clean
	[ "$status" -eq 0 ]
	cmp "$POOL" "$R1/app"
	cmp "$POOL" "$R1B/app"
	rc replicas "$POOL"
	[ "$status" -eq 0 ]
	[[ "$output" == *"ended: stopped replicating cleanly"* ]]
	[[ "$output" == *"quorum:   2 of 2 (2 hold)"* ]]
	grep -E "^$T/r1/app +synced " <<<"$output"
	grep -E "^$T2/r1/app +synced " <<<"$output"
	rc replicas --json "$POOL"
	[ "$status" -eq 0 ]
	[ "$(json .stopped_cleanly)" = true ]
	[ "$(json .holding)" -eq 2 ]
	[ "$(json '.replicas[1].link_state')" = synced ]
	app set:1:killed kill
	[ "$status" -eq 137 ]
	rc replicas "$POOL"
	[ "$status" -eq 0 ]
	[[ "$output" == *"ended without stopping its links (killed or crashed)"* ]]
	rc replicas --json "$POOL"
	[ "$(json .stopped_cleanly)" = false ]
	[ "$(json '.replicas[0].link_state')" = live ]
}

@test "events --reconnect follows a target across an rpmemd restart (said on stderr, --now's state again, later events seen); without it the end says what happened and how to follow restarts (exit 3)" {
	"$RPMEMCTL" events --now --json --reconnect --timeout 120 "$T" \
		>"$W/ev" 2>"$W/ev.err" &
	local e1=$! e2 rc2=0
	wait_for grep -q '"event":"exists","object":"-"' "$W/ev"
	"$RPMEMCTL" events --now "$T2" >"$W/ev2" 2>"$W/ev2.err" &
	e2=$!
	wait_for grep -q '^exists -' "$W/ev2"
	stop_daemon
	start_daemon
	stop_second
	wait "$e2" || rc2=$?
	[ "$rc2" -eq 3 ]
	grep -q "the event stream of $T2 ended (the target closed it: rpmemd stopped or restarted.*events after this were not seen (--reconnect follows a target across restarts)" "$W/ev2.err"
	wait_for grep -q "reconnected to $T: events while it was away were not seen" "$W/ev.err"
	grep -q "the event stream of $T ended (the target closed it: rpmemd stopped or restarted.*; reconnecting" "$W/ev.err"
	# one line per outage, not one per attempt
	[ "$(grep -c "reconnect" "$W/ev.err")" -eq 2 ]
	wait_for test "$(grep -c '"event":"exists","object":"-"' "$W/ev")" -eq 2
	"$RPMEMCTL" create "$T/r1/after" 1M
	wait_for grep -q '"event":"create","object":"pool".*"pool":"after"' "$W/ev"
	kill "$e1"
}

@test "two targets live, the writer killed, one copy promoted and written: the old primary pulls it without --discard-local (its history lists both pools as live), and the other copy, not promoted, still takes its push" {
	app set:0:first put:1:acked kill
	[ "$status" -eq 137 ]
	rc promote -f "$T2/r1/app"
	[ "$status" -eq 0 ]
	cp "$R1B/app" "$W/promoted.obj"
	"$APP" "$W/promoted.obj" set:0:theirs
	cp "$W/promoted.obj" "$R1B/app"
	rc demote "$T2/r1/app"
	[ "$status" -eq 0 ]
	rc sync "$POOL" "$T2/r1/app"
	[ "$status" -eq 4 ]
	[[ "$output" == *"the target holds newer writes"* ]]
	rc sync --pull "$POOL" "$T2/r1/app"
	[ "$status" -eq 0 ]
	cmp "$POOL" "$R1B/app"
	cp "$POOL" "$W/copy.obj"
	[ "$("$APP" "$W/copy.obj" get:0)" = theirs ]
	[ "$("$APP" "$W/copy.obj" get:1)" = acked ]
	# the first copy (live until the kill, never promoted) is behind:
	# the push brings it the new primary's writes
	rc sync "$POOL" "$T/r1/app"
	[ "$status" -eq 0 ]
	cmp "$POOL" "$R1/app"
}
