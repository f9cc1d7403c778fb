#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# paging.bats -- LIST and STATUS in pages: every pool of a crowded region and every one of hundreds of sessions

load helpers

CROWD="python3 $TOP/tests/peers/crowd.py"

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
	# a LIST left inside the FIFO test's read: let it out
	if [ -p "$R1/.rpmemd/zz.meta" ]; then
		timeout 5 sh -c "echo x >'$R1/.rpmemd/zz.meta'" || true
	fi
	if [ -n "${BG:-}" ]; then
		kill "$BG" 2>/dev/null || true
		wait "$BG" 2>/dev/null || true
	fi
	teardown_daemon
}

# in_fifo_open -- a daemon thread waits in an open of a FIFO (for its writer)
in_fifo_open() {
	grep -qx wait_for_partner /proc/"$DPID"/task/*/wchan
}

# crowd_sessions N -- hold N sessions open in the background; their ids
# (from HELLO_OK) are in $W/crowd as "session ID" lines
crowd_sessions() {
	mkfifo "$W/hold"
	$CROWD sessions "$PORT" "$1" <"$W/hold" >"$W/crowd" 2>&1 &
	BG=$!
	exec 9>"$W/hold"
	alive_until "$BG" grep -q "^open $1\$" "$W/crowd" && return 0
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

@test "a LIST stuck reading one pool's metadata does not hold up a create, an open or a remove in the region" {
	$CROWD pools "$R1" 50
	start_daemon
	rc create "$T/r1/p1" 1M
	[ "$status" -eq 0 ]
	# a metadata read that blocks until someone writes the FIFO: a LIST
	# that reaches it stays inside that read
	mkfifo "$R1/.rpmemd/zz.meta"
	"$RPMEMCTL" list --json "$T" >"$W/stuck.out" 2>&1 &
	BG=$!
	# until a daemon thread waits in that open (for the FIFO's writer)
	wait_for in_fifo_open
	kill -0 "$BG"
	# the region's other requests go on meanwhile (each bounded by
	# timeout only so that a failure does not hang the suite)
	run timeout 20 "$RPMEMCTL" create "$T/r1/new" 1M
	[ "$status" -eq 0 ]
	head -c 1M /dev/zero >"$W/zero"
	run timeout 20 "$RPMEMCTL" verify "$W/zero" "$T/r1/p1"
	[ "$status" -eq 0 ]
	run timeout 20 "$RPMEMCTL" remove "$T/r1/new"
	[ "$status" -eq 0 ]
	[ ! -e "$R1/new" ]
	kill -0 "$BG"
	# let the LIST go on: the FIFO's content is no metadata
	echo garbage >"$R1/.rpmemd/zz.meta"
	wait "$BG"
	BG=
	[ "$(jq '[.pools[] | select(.region == "r1")] | length' "$W/stuck.out")" -ge 51 ]
	grep -q "pool 'zz': metadata unreadable" "$DLOG"
	rm "$R1/.rpmemd/zz.meta"
}

@test "lists, paged and unpaged, while pools are created, removed and change state: no error, no torn entry" {
	$CROWD pools "$R1" 1500
	start_daemon
	rc create "$T/r1/churn" 1M
	[ "$status" -eq 0 ]
	"$BUILD/tests/state_churn" "$T/r1/churn" 1000000 >"$W/churn.out" 2>&1 &
	local sc=$!
	# its first change of state, before the lists begin
	wait_for grep -q "pool r1/churn is syncing" "$DLOG"
	(
		i=0
		while [ ! -e "$W/stop" ]; do
			i=$((i + 1))
			"$RPMEMCTL" create "$T/r1/c$((i % 4))" 1M >/dev/null 2>&1 || true
			"$RPMEMCTL" remove "$T/r1/c$(((i + 2) % 4))" >/dev/null 2>&1 || true
		done
		exit 0
	) &
	BG=$!
	local bad=0
	for i in $(seq 15); do
		run "$RPMEMCTL" list --json "$T"
		[ "$status" -eq 0 ] || { echo "list $i: $output"; bad=1; }
		# the crowd, whole; the churned pools whole or absent
		[ "$(json '[.pools[] | select(.name | test("^p[0-9]{5}$"))] | length')" -eq 1500 ] || {
			echo "list $i: $(json '[.pools[] | select(.name | test("^p[0-9]{5}$"))] | length') of the crowd"
			bad=1
		}
		[ "$(json '[.pools[] | select((.uuid | length) != 36 or (.size != 4096 and .size != 1048576) or (.state | IN("empty", "syncing", "consistent") | not))] | length')" -eq 0 ] || {
			json '.pools[] | select(.name | test("^p") | not)'
			bad=1
		}
		[ "$(json '.pools[] | select(.name == "churn") | .state' | grep -cE '^(syncing|consistent)$')" -eq 1 ] || {
			echo "list $i: churn $(json '.pools[] | select(.name == "churn")')"
			bad=1
		}
		run $CROWD list "$PORT"
		[[ "$output" == "LIST_REPLY regions 2 pools 15"0[1-5] ]] || { echo "unpaged $i: $output"; bad=1; }
	done
	touch "$W/stop"
	wait "$BG"
	BG=
	cat "$W/churn.out"
	kill "$sc"
	wait "$sc" || true
	[ "$bad" -eq 0 ]
	refute grep -q "metadata unreadable" "$DLOG"
}
