#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# prometheus.bats -- rpmemctl status --prometheus: valid exposition format, the daemon's own counters

load helpers

PROMPARSE="python3 $TOP/tests/bats/promparse.py"
CROWD="python3 $TOP/tests/peers/crowd.py"

setup() {
	setup_daemon
}

teardown() {
	exec 9>&- || true
	for p in ${BG:-}; do
		kill "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	teardown_daemon
}

# metric NAME [LABEL VALUE]... -- the value of the one sample in
# $W/prom.json with these labels (jq prints 1.0 as 1)
metric() {
	local name=$1 sel=""
	shift
	while [ $# -gt 0 ]; do
		sel="$sel and .labels.$1 == \"$2\""
		shift 2
	done
	jq -er ".samples[] | select(.name == \"$name\"$sel) | .value" \
		"$W/prom.json"
}

# scrape -- rpmemctl status --prometheus, checked and parsed into $W/prom.json
scrape() {
	"$RPMEMCTL" status --prometheus "$T" >"$W/prom.txt"
	$PROMPARSE <"$W/prom.txt" >"$W/prom.json"
	if command -v promtool >/dev/null; then
		promtool check metrics <"$W/prom.txt"
	fi
}

@test "status --prometheus is the text exposition format, with the pools' counters the daemon keeps" {
	mkfile "$W/src" 4
	rc mirror "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	rc create "$T/r1/p2" 1M
	rc list --json "$T"
	echo "$output" >"$W/list.json"
	scrape
	[ "$(metric rpmem_up)" = 1 ]
	[ "$(jq -r '.types.rpmem_pool_bytes_written_total' "$W/prom.json")" = counter ]
	[ "$(jq -r '.types.rpmem_pool_flushes_total' "$W/prom.json")" = counter ]
	for p in p1 p2; do
		local s=".pools[] | select(.name == \"$p\")"
		[ "$(metric rpmem_pool_bytes_written_total region r1 pool $p)" = \
			"$(jq -r "$s.bytes_written" "$W/list.json")" ]
		[ "$(metric rpmem_pool_flushes_total region r1 pool $p)" = \
			"$(jq -r "$s.flushes" "$W/list.json")" ]
		[ "$(metric rpmem_pool_generation region r1 pool $p)" = \
			"$(jq -r "$s.generation" "$W/list.json")" ]
		[ "$(metric rpmem_pool_size_bytes region r1 pool $p)" = \
			"$(jq -r "$s.size" "$W/list.json")" ]
	done
	# the mirror's 4 MiB are the daemon's count, and p1 is consistent
	[ "$(metric rpmem_pool_bytes_written_total region r1 pool p1)" = 4194304 ]
	[ "$(metric rpmem_pool_state region r1 pool p1 state consistent)" = 1 ]
	[ "$(metric rpmem_pool_state region r1 pool p1 state syncing)" = 0 ]
	[ "$(metric rpmem_pool_state region r1 pool p2 state empty)" = 1 ]
	[ "$(metric rpmem_pool_generation region r1 pool p1)" = 1 ]
	[ "$(metric rpmem_region_size_bytes region r1)" -gt 0 ]
	[ "$(metric rpmem_pool_primary region r1 pool p1)" = 0 ]
	rc promote "$T/r1/p1"
	[ "$status" -eq 0 ]
	scrape
	[ "$(metric rpmem_pool_primary region r1 pool p1)" = 1 ]
	[ "$(metric rpmem_pool_primary region r1 pool p2)" = 0 ]
}

@test "status --prometheus counts a writer session's bytes and flushes as status --json does" {
	rc create "$T/r1/p1" 1M
	hold "$T/r1/p1" 30 65536
	BG=$HP
	# the create's session and then the status's are gone before the
	# next counts them
	wait_for closed 1
	rc status --json "$T"
	echo "$output" >"$W/status.json"
	wait_for closed 2
	scrape
	local id
	id=$(jq -r '.sessions[] | select(.pool == "p1") | .id' "$W/status.json")
	[ -n "$id" ]
	[ "$(metric rpmem_session_bytes_written_total session "$id" region r1 pool p1)" = 65536 ]
	[ "$(metric rpmem_session_flushes_total session "$id")" = 1 ]
	[ "$(metric rpmem_session_bytes_read_total session "$id")" = 0 ]
	[ "$(metric rpmem_pool_writers region r1 pool p1)" = 1 ]
	[ "$(metric rpmem_pool_bytes_written_total region r1 pool p1)" = 65536 ]
	# the session count is the daemon's (the scrape's own session included)
	[ "$(metric rpmem_sessions)" = "$(jq '.sessions | length' "$W/status.json")" ]
}

@test "status --prometheus escapes quotes and backslashes in label values" {
	mkfifo "$W/hold"
	$CROWD sessions "$PORT" 1 'say "hi" \o/' <"$W/hold" >"$W/crowd" 2>&1 &
	BG=$!
	exec 9>"$W/hold"
	alive_until "$BG" grep -q "^open 1" "$W/crowd"
	scrape
	grep -qF 'client="say \"hi\" \\o/"' "$W/prom.txt"
	local id
	id=$(sed -n 's/^session //p' "$W/crowd")
	[ "$(jq -r ".samples[] | select(.name == \"rpmem_session_flushes_total\" and .labels.session == \"$id\") | .labels.client" "$W/prom.json")" = 'say "hi" \o/' ]
}

@test "status --prometheus of a daemon that does not answer says rpmem_up 0 and fails" {
	stop_daemon
	run "$RPMEMCTL" status --prometheus "$T"
	[ "$status" -ne 0 ]
	grep -v '^rpmemctl:' <<<"$output" | $PROMPARSE >"$W/prom.json"
	[ "$(metric rpmem_up)" = 0 ]
}
