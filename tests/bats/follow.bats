#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# follow.bats -- sync --follow: rounds on one session until SIGTERM, a consistent pool at the end

load helpers

setup() {
	setup_daemon
	mkfile "$W/src" 4
}
teardown() {
	if [ -n "${FPID:-}" ] && kill -0 "$FPID" 2>/dev/null; then
		kill -KILL "$FPID"
	fi
	teardown_daemon
}

# follow_start ARGS... -- rpmemctl sync --follow 200ms ARGS... in the
# background: stdout in $W/out, stderr in $W/err, its pid in $FPID
follow_start() {
	"$RPMEMCTL" sync --follow 200ms "$@" "$W/src" "$T/r1/p1" \
		>"$W/out" 2>"$W/err" &
	FPID=$!
}

# follow_stop -- SIGTERM to the follower; its exit code in $status
follow_stop() {
	kill -TERM "$FPID"
	status=0
	wait "$FPID" || status=$?
	FPID=
}

# rounds -- the JSON lines the follower wrote so far
rounds() {
	wc -l <"$W/out"
}

# caught_up -- the daemon's file of r1/p1 equals the local file
caught_up() {
	cmp -s "$W/src" "$R1/p1"
}

# at_least N -- the follower reported N rounds or more
at_least() {
	[ "$(rounds)" -ge "$1" ]
}

# writer_session -- the id of the daemon's session holding r1/p1
writer_session() {
	"$RPMEMCTL" status --json "$T" |
		jq -er '[.sessions[] | select(.pool == "p1")] | .[0].id'
}

# state -- the pool's state as the daemon lists it
state() {
	"$RPMEMCTL" list --json "$T/r1/p1" | jq -r '.pools[0].state'
}

@test "sync --follow pushes each change made between rounds on one session and ends with exit 0 and a consistent pool on SIGTERM" {
	local sid
	follow_start --json
	wait_for caught_up
	sid=$(writer_session)
	poke "$W/src" 100
	poke "$W/src" $((3 << 20))
	wait_for caught_up
	dd if=/dev/urandom of="$W/src" bs=4096 seek=77 count=3 \
		conv=notrunc 2>/dev/null
	wait_for caught_up
	# the same session of the daemon's from start to end
	[ "$(writer_session)" = "$sid" ]
	follow_stop
	[ "$status" -eq 0 ]
	cmp "$W/src" "$R1/p1"
	[ "$(state)" = consistent ]
}

@test "sync --follow --json writes one object per round, numbered, each conforming to the schema" {
	local n i
	follow_start --json
	wait_for at_least 3
	poke "$W/src" 5000
	wait_for caught_up
	follow_stop
	[ "$status" -eq 0 ]
	n=$(rounds)
	[ "$n" -ge 3 ]
	for i in $(seq "$n"); do
		sed -n "${i}p" "$W/out" >"$W/line"
		python3 "$TOP/tests/json/check.py" "$TOP/tests/json/schema.json" \
			sync <"$W/line"
		[ "$(jq -r .round "$W/line")" -eq "$i" ]
	done
	# the first round created the pool and sent it whole
	[ "$(sed -n 1p "$W/out" | jq -r .created)" = true ]
	[ "$(sed -n 1p "$W/out" | jq -r .data_bytes)" -eq $((4 << 20)) ]
	# and exactly one later round sent the one changed 4 KiB block
	[ "$(jq -s '[.[] | select(.round > 1) | .data_bytes] | add' \
		"$W/out")" -eq 4096 ]
}

@test "sync --follow survives a restart of rpmemd: it reconnects at a later round, says so, and catches up" {
	follow_start --json
	wait_for caught_up
	stop_daemon
	poke "$W/src" 200000
	wait_for grep -q 'unreachable\|lost' "$W/err"
	start_daemon
	wait_for caught_up
	follow_stop
	[ "$status" -eq 0 ]
	[ "$(jq -s '[.[] | select(.reconnected)] | length' "$W/out")" -eq 1 ]
	grep -q 'retrying in 200ms\|reconnecting in 200ms' "$W/err"
	[ "$(state)" = consistent ]
}

@test "sync --follow prints one summary line per round without --json" {
	follow_start
	wait_for grep -q '^round 2: ' "$W/out"
	follow_stop
	[ "$status" -eq 0 ]
	grep -q "^round 1: synced '$W/src' to $T/r1/p1" "$W/out"
	grep -q "^stopped after round [0-9]*: $T/r1/p1 is consistent" "$W/out"
}

@test "sync --follow refuses a bad interval, --pull and --dry-run before connecting" {
	for bad in 0s 5d 1.5s abc 25h; do
		rc sync --follow "$bad" "$W/src" "$T/r1/p1"
		[ "$status" -eq 2 ]
		[[ "$output" == *"invalid interval '$bad'"* ]]
	done
	rc sync --follow 1s --pull "$W/src" "$T/r1/p1"
	[ "$status" -eq 2 ]
	rc sync --follow 1s --dry-run "$W/src" "$T/r1/p1"
	[ "$status" -eq 2 ]
	# nothing reached the daemon
	rc list --json "$T/r1"
	[ "$(json '.pools | length')" -eq 0 ]
}
