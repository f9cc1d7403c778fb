#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# errors.bats -- bad input gets a clear message, the documented exit code, and loses nothing

load helpers
bats_require_minimum_version 1.5.0 # run --separate-stderr

setup() { setup_daemon; }
teardown() { teardown_daemon; }

# p1_syncing -- the daemon lists pool r1/p1 as syncing
p1_syncing() {
	rc list --json "$T/r1"
	[ "$(json '.pools[] | select(.name=="p1") | .state')" = syncing ]
}

@test "a missing local file exits 5 and names the file" {
	rc mirror "$W/nonexistent" "$T/r1/p1"
	[ "$status" -eq 5 ]
	[[ "$output" == *nonexistent* ]]
	# the documented prefix, as for every other error
	[[ "$output" == "rpmemctl: mirror: cannot open '$W/nonexistent'"* ]]
	[ ! -e "$R1/p1" ]
}

@test "an unknown region exits 4 and names the region" {
	mkfile "$W/src" 1
	rc mirror "$W/src" "$T/nosuch/p1"
	[ "$status" -eq 4 ]
	[[ "$output" == *nosuch* ]]
}

@test "an unknown pool exits 4 for verify" {
	mkfile "$W/src" 1
	rc verify "$W/src" "$T/r1/ghost"
	[ "$status" -eq 4 ]
	[[ "$output" == *ghost* ]]
}

@test "a pool name with '..' is refused before connecting (exit 2)" {
	mkfile "$W/src" 1
	rc mirror "$W/src" "$T/r1/.."
	[ "$status" -eq 2 ]
	[[ "$output" == *"pool name"* ]]
	rc create "$T/r1/../etc" 1M
	[ "$status" -eq 2 ]
}

@test "a pool name with '/' is refused (exit 2)" {
	mkfile "$W/src" 1
	rc mirror "$W/src" "$T/r1/a/b"
	[ "$status" -eq 2 ]
	[ ! -e "$R1/a" ]
}

@test "a pool name starting with '-' is refused (exit 2), so no file '-rf' appears" {
	mkfile "$W/src" 1
	rc mirror "$W/src" "$T/r1/-rf"
	[ "$status" -eq 2 ]
	[[ "$output" == *"not starting with '.' or '-'"* ]]
	# the target refuses it too: proto_poke.py sends CREATE "-rf" (protocol.bats)
	[ ! -e "$R1/-rf" ]
}

@test "missing arguments exit 2 with the command's usage line" {
	for c in mirror sync verify create remove; do
		rc "$c"
		[ "$status" -eq 2 ]
		[[ "$output" == *"missing argument"* ]]
		[[ "$output" == *"usage: rpmemctl $c "* ]]
	done
}

@test "a malformed target or size is a usage error (exit 2)" {
	rc create "$T" 1M
	[ "$status" -eq 2 ]
	rc create "$T/r1/p" 12X
	[ "$status" -eq 2 ]
	rc create "http://$T/r1/p" 1M
	[ "$status" -eq 2 ]
	rc frobnicate
	[ "$status" -eq 2 ]
	rc mirror
	[ "$status" -eq 2 ]
}

@test "a pool larger than the region's free space is refused (exit 4) and leaves nothing" {
	rc create "$T/r1/huge" 1000T
	[ "$status" -eq 4 ]
	[[ "$output" == *space* ]]
	[ ! -e "$R1/huge" ]
	rc list --json "$T/r1"
	[ "$(json '.pools | length')" -eq 0 ]
}

@test "a size beyond what any pool can have says so, never 'a positive multiple of 4096' (client and target), and leaves nothing" {
	# 2^63, 2^64 (would wrap to 0), far beyond, 2^64 in bytes
	for s in 8388608T 16777216T 99999999999T 18446744073709551616; do
		rc create "$T/r1/huge" "$s"
		echo "$s: $output"
		[ "$status" -eq 2 ]
		[[ "$output" == *"size '$s' is larger than the largest size supported (9223372036854775807 bytes"* ]]
		[[ "$output" != *"multiple"* ]]
	done
	# the largest size a pool may have is a matter of free space
	rc create "$T/r1/huge" 9223372036854771712
	[ "$status" -eq 4 ]
	[[ "$output" == *"needs 8192.0 PiB but region 'r1' has"* ]]
	# the target, asked by a peer that does not check (2^63, 2^64 - 1)
	for s in 9223372036854775808 18446744073709551615; do
		run python3 "$TOP/tests/peers/hostile.py" "$PORT" create huge "$s"
		echo "$s: $output"
		[[ "$output" == "ERROR "*" size $s of pool 'huge' is larger than the largest size supported (9223372036854775807 bytes"* ]]
	done
	# a size that is not a multiple of the alignment still says that
	run python3 "$TOP/tests/peers/hostile.py" "$PORT" create huge 4097
	[[ "$output" == *"a positive multiple of 4096 bytes is required"* ]]
	[ ! -e "$R1/huge" ]
	rc list --json "$T/r1"
	[ "$(json '.pools | length')" -eq 0 ]
}

@test "an unreachable target exits 3 and says it cannot connect" {
	mkfile "$W/src" 1
	rc mirror "$W/src" "127.0.0.1:$(free_port)/r1/p1"
	[ "$status" -eq 3 ]
	[[ "$output" == *connect* ]]
}

@test "a second writer is refused as busy, naming the holder" {
	mkfile "$W/src" 64
	rc create "$T/r1/p1" 64M
	[ "$status" -eq 0 ]
	# hold a write open: a slow first writer (pipe throttled by pv-less sleep)
	hold "$T/r1/p1" 30
	local hp=$HP
	rc mirror "$W/src" "$T/r1/p1"
	kill "$hp" 2>/dev/null || true
	wait "$hp" || true
	[ "$status" -eq 4 ]
	[[ "$output" == *busy* || "$output" == *"open for writing"* ]]
	[[ "$output" == *session* ]]
}

@test "readers share a pool: verify runs while another verify holds it" {
	mkfile "$W/src" 4
	rc mirror "$W/src" "$T/r1/p1"
	"$RPMEMCTL" verify "$W/src" "$T/r1/p1" &
	local vp=$!
	rc verify "$W/src" "$T/r1/p1"
	wait "$vp"
	[ "$status" -eq 0 ]
}

@test "daemon killed mid-sync: the pool shows syncing, the next sync completes it, verify passes" {
	mkfile "$W/src" 256
	rc create "$T/r1/p1" 256M
	[ "$status" -eq 0 ]
	# 256 MiB at 64 MiB/s: about 4 s, so it is still writing when killed
	"$RPMEMCTL" mirror --bwlimit 64M "$W/src" "$T/r1/p1" >"$W/m.out" 2>&1 &
	local mp=$!
	alive_until "$mp" grep -qs '^state=syncing' "$R1/.rpmemd/p1.meta"
	kill -9 "$DPID"
	wait "$mp" && mstatus=0 || mstatus=$?
	[ "$mstatus" -eq 3 ]
	DPID=
	start_daemon
	rc list --json "$T/r1"
	[ "$(json '.pools[] | select(.name=="p1") | .state')" = syncing ]
	rc status "$T"
	[[ "$output" == *syncing* ]]
	rc sync "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	rc verify "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	rc list --json "$T/r1"
	[ "$(json '.pools[] | select(.name=="p1") | .state')" = consistent ]
}

@test "a client that disappears mid-transfer leaves the daemon serving" {
	mkfile "$W/src" 128
	# paced to about 8 s, so the kill surely lands mid-transfer
	"$RPMEMCTL" mirror --bwlimit 16M "$W/src" "$T/r1/p1" >/dev/null 2>&1 &
	local mp=$!
	wait_for p1_syncing
	kill -9 "$mp"
	wait "$mp" || true
	kill -0 "$DPID"
	# it was interrupted: the pool is not the source yet, and says so
	rc list --json "$T/r1"
	[ "$(json '.pools[] | select(.name=="p1") | .state')" = syncing ]
	refute cmp -s "$W/src" "$R1/p1"
	rc sync "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	cmp "$W/src" "$R1/p1"
}

# --- the error channel and the library's log, as applications see them ---

LIBERR=$BUILD/tests/lib_errors

@test "a library application's log lines go nowhere by default: nothing on its stderr" {
	run --separate-stderr env -u RPMEM_LOG_LEVEL "$LIBERR" log 127.0.0.1 "$PORT"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ -z "$output" ]
	# the session did happen: the daemon saw it come and go
	grep -q "(lib_errors librpmemctl/.*) opened" "$DLOG"
}

@test "a log function installed with rpmemctl_log_set_fn receives the library's lines with syslog priorities" {
	run --separate-stderr env -u RPMEM_LOG_LEVEL "$LIBERR" log-fn 127.0.0.1 "$PORT"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	# LOG_DEBUG is 7
	[[ "$output" == *"fn: 7 session "*" with 127.0.0.1:$PORT"* ]]
}

@test "RPMEM_LOG_LEVEL sends the library's lines to stderr as 'librpmemctl: <level>: <message>'" {
	RPMEM_LOG_LEVEL=debug run --separate-stderr "$LIBERR" log 127.0.0.1 "$PORT"
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"librpmemctl: debug: session "*" with 127.0.0.1:$PORT"* ]]
}

@test "a failed call on a pool leaves a reason naming the pool; the next call that succeeds clears it" {
	mkfile "$W/src" 1
	rc mirror "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	run "$LIBERR" pool 127.0.0.1 "$PORT" r1 p1
	[ "$status" -eq 0 ]
	[[ "$output" == *"write=-30 pool: pool 'p1' in region 'r1' is open read-only"* ]]
	[[ "$output" == *"write=-30 session: pool 'p1' in region 'r1' is open read-only"* ]]
	[[ "$output" == *"read=0 pool: ''"* ]]
	# the refused write changed nothing on the target
	cmp "$W/src" "$R1/p1"
}

@test "the target killed under an open pool: the next flush's reason names the pool and the lost connection" {
	rc create "$T/r1/p1" 4M
	[ "$status" -eq 0 ]
	mkfifo "$W/go"
	"$LIBERR" kill 127.0.0.1 "$PORT" r1 p1 <"$W/go" >"$W/kill.out" 2>&1 &
	local lp=$!
	exec 5>"$W/go"
	alive_until "$lp" grep -q '^open$' "$W/kill.out"
	kill -9 "$DPID"
	wait "$DPID" || true
	DPID=
	echo go >&5
	exec 5>&-
	wait "$lp"
	cat "$W/kill.out"
	grep -q "^flush=-104 pool: .*pool 'p1' in region 'r1'.*127.0.0.1:$PORT" "$W/kill.out"
}

@test "rpmemctl prints the library's log lines only with -v, as 'rpmemctl: lib: <message>'" {
	run --separate-stderr env -u RPMEM_LOG_LEVEL "$RPMEMCTL" list "$T"
	[ "$status" -eq 0 ]
	[[ "$stderr" != *"rpmemctl: lib:"* ]]
	run --separate-stderr env -u RPMEM_LOG_LEVEL "$RPMEMCTL" -v -v list "$T"
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"rpmemctl: lib: session "*" with 127.0.0.1:$PORT"* ]]
}
