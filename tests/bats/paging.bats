#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# paging.bats -- LIST and STATUS in pages: every pool of a crowded region and every one of hundreds of sessions

load helpers

CROWD="python3 $TOP/tests/bats/crowd.py"

setup() {
	setup_env
	R2=$W/r2
	mkdir -p "$R2"
	cat >"$CONF" <<CONF
listen = ["127.0.0.1"];
port = $PORT;
log = { level = "info"; target = "stderr"; };
max_sessions = 800;
regions = (
  { name = "r1"; type = "dir"; path = "$R1"; },
  { name = "r2"; type = "dir"; path = "$R2"; }
);
CONF
}

teardown() {
	exec 9>&- || true
	if [ -n "${BG:-}" ]; then
		kill "$BG" 2>/dev/null || true
		wait "$BG" 2>/dev/null || true
	fi
	teardown_daemon
}

# crowd_sessions N -- hold N sessions open in the background; their ids
# (from HELLO_OK) are in $W/crowd as "session ID" lines
crowd_sessions() {
	mkfifo "$W/hold"
	$CROWD sessions "$PORT" "$1" <"$W/hold" >"$W/crowd" 2>&1 &
	BG=$!
	exec 9>"$W/hold"
	for _ in $(seq 600); do
		grep -q "^open $1\$" "$W/crowd" && return 0
		kill -0 "$BG" 2>/dev/null || break
		sleep 0.1
	done
	cat "$W/crowd" >&2
	return 1
}

@test "list --json returns every one of 14000 pools of a region, each once, as the daemon's files name them" {
	$CROWD pools "$R1" 14000
	start_daemon
	rc list --json "$T"
	[ "$status" -eq 0 ]
	[ "$(json '.pools | length')" -eq 14000 ]
	json '.pools[] | select(.region == "r1") | .name' | sort >"$W/listed"
	(cd "$R1/.rpmemd" && ls -- *.meta) | sed 's/\.meta$//' | sort >"$W/files"
	[ "$(wc -l <"$W/files")" -eq 14000 ]
	diff "$W/files" "$W/listed"
	[ "$(json '[.regions[].name] | join(",")')" = "r1,r2" ]
	# one region alone, the crowded one too
	rc list --json "$T/r1"
	[ "$status" -eq 0 ]
	[ "$(json '.pools | length')" -eq 14000 ]
	[ "$(json '[.pools[].name] | unique | length')" -eq 14000 ]
}

@test "with 14000 pools in r1, list of r2 and its pools still works" {
	$CROWD pools "$R1" 14000
	$CROWD pools "$R2" 3 q
	start_daemon
	rc list "$T/r2"
	[ "$status" -eq 0 ]
	[[ "$output" == *"r2      q00002"* ]]
	rc list --json "$T/r2"
	[ "$(json '[.pools[].name] | join(",")')" = "q00000,q00001,q00002" ]
	# the whole target: every pool of both, r1's before r2's
	rc list --json "$T"
	[ "$(json '.pools | length')" -eq 14003 ]
	[ "$(json '.pools[-1] | .region + "/" + .name')" = "r2/q00002" ]
}

@test "a LIST page holds at most 512 pools and the cursor of the next; the last page has an empty one" {
	$CROWD pools "$R1" 600
	start_daemon
	run $CROWD list "$PORT" ""
	[ "$output" = "LIST_REPLY regions 2 pools 512 next r1/p00511" ]
	run $CROWD list "$PORT" "r1/p00511"
	[ "$output" = "LIST_REPLY regions 0 pools 88 next " ]
	run $CROWD list "$PORT" "r1/../etc"
	[[ "$output" == "ERROR 9 invalid LIST cursor 'r1/../etc'" ]]
}

@test "an unpaged LIST (an older client) of 14000 pools is refused with LIMIT and a reason, as before" {
	$CROWD pools "$R1" 14000
	start_daemon
	run $CROWD list "$PORT"
	[[ "$output" == "ERROR 11 14000 pools do not fit in one reply;"* ]]
}

@test "an unpaged LIST (an older client) that fits is answered in one reply, without a cursor" {
	$CROWD pools "$R1" 600
	start_daemon
	run $CROWD list "$PORT"
	[ "$output" = "LIST_REPLY regions 2 pools 600" ]
}

@test "status lists every one of 700 sessions, as the daemon numbered them" {
	start_daemon
	crowd_sessions 700
	rc status --json "$T"
	[ "$status" -eq 0 ]
	json '.sessions[] | select(.client == "crowd.py") | .id' | sort -n >"$W/listed"
	sed -n 's/^session //p' "$W/crowd" | sort -n >"$W/held"
	[ "$(wc -l <"$W/held")" -eq 700 ]
	diff "$W/held" "$W/listed"
	# and the one asking: 701 in all, each once
	[ "$(json '.sessions | length')" -eq 701 ]
	[ "$(json '[.sessions[].id] | unique | length')" -eq 701 ]
	# the human form counts them too
	rc status "$T"
	[[ "$output" == *"sessions: 701 of 800"* ]]
}

@test "a daemon with no regions answers list and status with an empty list, and a first page with no pools" {
	cat >"$CONF" <<CONF
listen = ["127.0.0.1"];
port = $PORT;
log = { level = "info"; target = "stderr"; };
regions = ();
CONF
	start_daemon
	run $CROWD list "$PORT" ""
	[ "$output" = "LIST_REPLY regions 0 pools 0 next " ]
	rc list --json "$T"
	[ "$status" -eq 0 ]
	[ "$(json '.regions | length')" -eq 0 ]
	[ "$(json '.pools | length')" -eq 0 ]
	rc status "$T"
	[ "$status" -eq 0 ]
	[[ "$output" == *"sessions: 1 of "* ]]
	# a cursor naming a region that is not there is still refused
	run $CROWD list "$PORT" "r1/p00001"
	[[ "$output" == "ERROR "*"region 'r1' went away"* ]]
}
