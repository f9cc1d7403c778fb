#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# bwlimit.bats -- bandwidth limits work (never timed here: see
# tests/bench/bwlimit.sh): a limited mirror or sync completes with the
# right bytes on the target, bad values are refused

load helpers

setup() {
	setup_env
	mkfile "$W/src" 4
}
teardown() { teardown_daemon; }

@test "mirror --bwlimit completes and the pool holds the file's bytes" {
	start_daemon
	rc mirror --bwlimit 64M "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	"$RPMEMCTL" verify "$W/src" "$T/r1/p1"
	[ "$(written p1)" -eq $((4 << 20)) ]
}

@test "sync --bwlimit sends only the differing blocks and completes" {
	start_daemon
	"$RPMEMCTL" mirror "$W/src" "$T/r1/p1"
	poke "$W/src" 100000
	before=$(written p1)
	rc sync --bwlimit 8M/s "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	"$RPMEMCTL" verify "$W/src" "$T/r1/p1"
	[ "$(($(written p1) - before))" -eq 4096 ]
}

@test "a bad --bwlimit exits 2 before any connection" {
	for v in 0 1K 10X -5M ""; do
		rc mirror --bwlimit "$v" "$W/src" 127.0.0.1:1/r1/p1
		[ "$status" -eq 2 ]
		[[ "$output" == *"invalid --bwlimit"* ]]
	done
	rc sync --bwlimit 2K "$W/src" 127.0.0.1:1/r1/p1
	[ "$status" -eq 2 ]
}

@test "rpmemd bwlimit: a mirror under a low daemon limit and a short frame_timeout completes, and the pool is right" {
	# 1 MiB WRITEs at 1 MiB/s take about a second each, frame_timeout is
	# one second: the daemon's own pacing must not time the client out
	cat >>"$CONF" <<'CONF'
bwlimit = "1M";
limits = { frame_timeout = 1; };
CONF
	start_daemon
	mkfile "$W/small" 2
	rc mirror "$W/small" "$T/r1/p1"
	[ "$status" -eq 0 ]
	"$RPMEMCTL" verify "$W/small" "$T/r1/p1"
	[ "$(written p1)" -eq $((2 << 20)) ]
	refute grep -q frame_timeout "$DLOG"
}

@test "rpmemd refuses a bwlimit that is not a rate" {
	echo 'bwlimit = "fast";' >>"$CONF"
	run "$RPMEMD" -n -c "$CONF"
	[ "$status" -ne 0 ]
	[[ "$output" == *"bwlimit: must be bytes per second"* ]]
	sed -i 's/^bwlimit = .*/bwlimit = 100;/' "$CONF"
	run "$RPMEMD" -n -c "$CONF"
	[ "$status" -ne 0 ]
	[[ "$output" == *"bwlimit: 100 bytes per second is below the least"* ]]
}

@test "--bwlimit takes the size parser's suffixes, T included, on both ends, and says so in the help, rpmemctl(1) and rpmemd.conf(5)" {
	start_daemon
	rc mirror --bwlimit 1T "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	[ "$(written p1)" -eq $((4 << 20)) ]
	# beyond any rate: refused as the size parser refuses it
	rc mirror --bwlimit 16777216T "$W/src" "$T/r1/p1"
	[ "$status" -eq 2 ]
	[[ "$output" == *"K, M, G and T allowed"* ]]
	for c in mirror sync; do
		"$RPMEMCTL" "$c" --help | grep -A1 -e "--bwlimit" | tr -s ' \n' ' ' |
			grep -q "(K, M, G, T: powers of 1024"
	done
	grep -A3 'bwlimit " " \\fIRATE' "$TOP/man/rpmemctl.1" | tr '\n' ' ' |
		grep -q "K, M, G or T (powers of 1024"
	grep -A3 '^\.B bwlimit$' "$TOP/man/rpmemd.conf.5" | tr '\n' ' ' |
		grep -q "K, M, G or T (powers of 1024)"
	echo 'bwlimit = "1T";' >>"$CONF"
	run "$RPMEMD" -n -c "$CONF"
	[ "$status" -eq 0 ]
}
