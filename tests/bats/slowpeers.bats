#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# slowpeers.bats -- hostile and slow peers lose their connection, never the daemon or its honest clients

load helpers

HOSTILE="python3 $TOP/tests/peers/hostile.py"

setup() {
	setup_env
	# debug: the daemon logs each accepted connection (start_daemon's probe
# included), which the tests wait for
	sed -i 's/level = "info"/level = "debug"/' "$CONF"
}
teardown() {
	for p in ${BG:-}; do
		kill "$p" 2>/dev/null || true
	done
	teardown_daemon
}

# limits SETTINGS -- a limits group in the configuration
limits() {
	echo "limits = { $*; };" >>"$CONF"
}

# bg OUT CMD... -- run CMD in the background, output into OUT
bg() {
	local out=$1
	shift
	"$@" >"$out" 2>&1 &
	BG="${BG:-} $!"
}

# logged N PATTERN -- the daemon log has at least N lines matching PATTERN
logged() {
	[ "$(grep -c -- "$2" "$DLOG")" -ge "$1" ]
}

# has_line FILE PATTERN -- FILE has a line matching PATTERN
has_line() {
	grep -q -- "$2" "$1"
}

# pool_held POOL -- the daemon lists a session holding r1/POOL
pool_held() {
	"$RPMEMCTL" status --json "$T" |
		jq -e --arg p "$1" '[.sessions[] | select(.region == "r1" and .pool == $p)] | length > 0' >/dev/null
}

# session_listed ID -- the daemon lists session ID
session_listed() {
	"$RPMEMCTL" status --json "$T" |
		jq -e --argjson id "$1" '[.sessions[] | select(.id == $id)] | length > 0' >/dev/null
}

# rss_anon PID -- the process's anonymous resident memory, KiB
rss_anon() {
	awk '/^RssAnon:/ { print $2 }' "/proc/$1/status"
}

@test "a HELLO trickled a byte at a time is cut at handshake_timeout while an honest client connects" {
	limits "handshake_timeout = 2"
	start_daemon
	bg "$W/trickle" $HOSTILE "$PORT" trickle 0.5
	wait_for logged 2 "accepted"
	rc list "$T"
	[ "$status" -eq 0 ]
	wait_for has_line "$W/trickle" "closed after"
	# 36 bytes at 2 a second would take 18 s: the target cut it
	has_line "$W/trickle" "ERROR 11 handshake not completed within 2 s (handshake_timeout)"
	grep -q "notice: connection .* from 127.0.0.1:.*: no handshake within handshake_timeout = 2 s; closed" "$DLOG"
}

@test "a writer stalling in the middle of a WRITE frame loses its session at frame_timeout and its pool is free" {
	limits "frame_timeout = 2"
	start_daemon
	rc create "$T/r1/p1" 4M
	[ "$status" -eq 0 ]
	bg "$W/stall" $HOSTILE "$PORT" stall-write p1
	# it opened p1 for writing and sent half a WRITE (the pool is held
	# only until frame_timeout, too short a window to poll the daemon in)
	wait_for has_line "$W/stall" "^session "
	wait_for has_line "$W/stall" "closed after"
	has_line "$W/stall" "ERROR 11 a request frame did not arrive in full within 2 s (frame_timeout)"
	grep -q "notice: session .* a frame did not arrive within frame_timeout = 2 s" "$DLOG"
	# the daemon's own view: nobody holds it, and a writer gets it
	run pool_held p1
	[ "$status" -ne 0 ]
	mkfile "$W/src" 4
	rc mirror "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	cmp "$W/src" "$R1/p1"
}

@test "a writer idle for writer_idle_timeout is dropped with the reason and its pool released" {
	limits "writer_idle_timeout = 2"
	start_daemon
	rc create "$T/r1/p1" 4M
	bg "$W/idle" $HOSTILE "$PORT" idle-writer p1
	wait_for has_line "$W/idle" "closed after"
	has_line "$W/idle" "id 0 ERROR 11 no request for 2 s with a pool open for writing (writer_idle_timeout)"
	grep -q "session .* closed pool r1/p1" "$DLOG"
	run pool_held p1
	[ "$status" -ne 0 ]
}

@test "connections over max_unauthenticated_per_address are refused at once, told why, and logged at notice with the peer" {
	limits "max_unauthenticated_per_address = 2; handshake_timeout = 30"
	start_daemon
	bg "$W/t1" $HOSTILE "$PORT" trickle 1
	bg "$W/t2" $HOSTILE "$PORT" trickle 1
	wait_for logged 3 "accepted"
	# they have sent something: not silent, so not displaced
	wait_for logged 2 "connection [0-9]* from .*: first bytes"
	run $HOSTILE "$PORT" trickle 1
	[[ "$output" == *"ERROR 11 too many unauthenticated connections from your address 127.0.0.1: 2 awaiting their handshake (max_unauthenticated_per_address = 2)"* ]]
	grep -q "notice: connection from 127.0.0.1:[0-9]* refused: too many unauthenticated connections from your address 127.0.0.1" "$DLOG"
	# another address is not affected
	run $HOSTILE "$PORT" hello 127.0.0.2
	[ "$output" = "HELLO_OK" ]
}

@test "the client shows the target's refusal, not a lost connection" {
	limits "max_unauthenticated_per_address = 1; handshake_timeout = 30"
	start_daemon
	bg "$W/t1" $HOSTILE "$PORT" trickle 1
	wait_for logged 2 "accepted"
	wait_for logged 1 "connection [0-9]* from .*: first bytes"
	rc list "$T"
	[ "$status" -ne 0 ]
	[[ "$output" == *"too many unauthenticated connections from your address 127.0.0.1: 1 awaiting their handshake (max_unauthenticated_per_address = 1)"* ]]
	[[ "$output" != *"still running"* ]]
	[[ "$output" != *"lost"* ]]
}

@test "over max_unauthenticated, the oldest handshake of the busiest address is closed to make room" {
	limits "max_unauthenticated = 3; handshake_timeout = 30"
	start_daemon
	bg "$W/a1" $HOSTILE "$PORT" trickle 1 127.0.0.2
	wait_for logged 2 "accepted"
	bg "$W/a2" $HOSTILE "$PORT" trickle 1 127.0.0.2
	bg "$W/b" $HOSTILE "$PORT" trickle 1 127.0.0.3
	wait_for logged 4 "accepted"
	rc list "$T"
	[ "$status" -eq 0 ]
	wait_for has_line "$W/a1" "closed after"
	has_line "$W/a1" "ERROR 11 too many connections awaiting their handshake (max_unauthenticated = 3); closed to make room"
	grep -q "notice: connection .* from 127.0.0.2:.* to make room" "$DLOG"
	# the one from the address holding fewer stays
	[ ! -s "$W/b" ]
}

@test "a HASHV over the hashing cap is refused with LIMIT naming the cap, and the daemon stays responsive" {
	start_daemon
	rc create "$T/r1/p1" 64M
	[ "$status" -eq 0 ]
	# 340 ranges of the whole 64 MiB pool: 21 GiB of hashing asked
	run $HOSTILE "$PORT" hashv p1 67108864 340
	[[ "$output" == "ERROR 11 HASHV would hash 22817013760 bytes of pool 'p1'; this target hashes at most 1 GiB"* ]]
	grep -q "notice: .* HASHV of 22817013760 bytes refused" "$DLOG"
	# 16 ranges = 1 GiB is within the cap
	run $HOSTILE "$PORT" hashv p1 67108864 16
	[[ "$output" == "HASHES 16"* ]]
	rc status "$T"
	[ "$status" -eq 0 ]
}

@test "a sync with the largest block size is not refused by the hashing cap" {
	start_daemon
	mkfile "$W/src" 64
	rc mirror "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	poke "$W/src" 12345
	rc sync --block-size 64M "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	cmp "$W/src" "$R1/p1"
	run grep -c "refused hash\|HASH.* refused" "$DLOG"
	[ "$output" -eq 0 ]
}

@test "kick ends a session, releases its pool, tells its client and logs who kicked whom" {
	start_daemon
	rc create "$T/r1/p1" 4M
	bg "$W/idle" $HOSTILE "$PORT" idle-writer p1
	wait_for has_line "$W/idle" "^session "
	id=$(awk '/^session / { print $2 }' "$W/idle")
	wait_for pool_held p1
	rc kick "$T" "$id"
	[ "$status" -eq 0 ]
	wait_for has_line "$W/idle" "closed after"
	has_line "$W/idle" "id 0 ERROR 14 session $id ended by an administrator (session [0-9]* from 127.0.0.1:"
	grep -q "notice: session [0-9]* from 127.0.0.1:[0-9]* (rpmemctl .*) kicked session $id from 127.0.0.1:[0-9]* (hostile.py)" "$DLOG"
	wait_for eval '! session_listed '"$id"
	run pool_held p1
	[ "$status" -ne 0 ]
}

@test "kick of a session that does not exist exits 4 and says so" {
	start_daemon
	rc kick "$T" 999
	[ "$status" -eq 4 ]
	[[ "$output" == *"no session 999"* ]]
	rc kick "$T" abc
	[ "$status" -eq 2 ]
}

@test "with 1000 hostile connections open, an honest 64 MiB mirror and verify complete and rpmemd's anonymous memory stays under 64 MiB" {
	ulimit -n 8192 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
	if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt 2100 ]; then
		skip "cannot open 1000 sockets on both ends (ulimit -n is $(ulimit -n))"
	fi
	sed -i 's/level = "debug"/level = "info"/' "$CONF"
	start_daemon
	srcs=$(for i in $(seq 2 17); do echo "127.0.0.$i"; done)
	bg "$W/flood" $HOSTILE "$PORT" flood 1000 $srcs
	wait_for has_line "$W/flood" "^open 1000"
	mkfile "$W/src" 64
	rc mirror "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	rc verify "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	cmp "$W/src" "$R1/p1"
	kb=$(rss_anon "$DPID")
	echo "rpmemd RssAnon under the flood: $kb KiB" >&3
	[ "$kb" -lt $((64 * 1024)) ]
	# the flood was refused and logged, but rate-limited: hundreds of
	# refusals, a few lines a second (the count of the rest is logged
	# with the next line after each second, if any)
	n=$(grep -c "notice: .*refused\|notice: .*closed before its handshake" "$DLOG" || true)
	echo "refusal log lines: $n" >&3
	[ "$n" -ge 1 ]
	[ "$n" -lt 200 ]
}
