#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# readers.bats -- readers of a pool's versions cannot pin, exhaust or slow
# the target: the version files they hold are bounded and closed when a
# commit or a prune makes them stale, an idle read-only open times out,
# remove --force and an administrator's kick end them (reader.py: idle
# and busy readers on the wire)

load helpers

READER=$TOP/tests/peers/reader.py

# readers_conf [LIMITS] -- region r1 keeps every version; LIMITS: more
# of the limits group
readers_conf() {
	cat >"$CONF" <<CONF
listen = ["127.0.0.1"];
port = $PORT;
log = { level = "info"; target = "stderr"; };
max_sessions = 40;
limits = { ${1:-} };
regions = (
  { name = "r1"; type = "dir"; path = "$R1"; versions = "all"; }
);
CONF
}

# change I -- write a marker into src at block I*7 (one 4 KiB block)
change() {
	printf 'version-%04d' "$1" |
		dd of="$W/src" bs=1 seek=$(($1 * 7 * 4096 + 100)) conv=notrunc 2>/dev/null
}

# syncs N -- N - 1 syncs of src, each changing one block (generation N)
syncs() {
	local i
	for i in $(seq 2 "$1"); do
		change "$i"
		"$RPMEMCTL" -q sync "$W/src" "$T/r1/p"
	done
}

# reader_said -- reader.py printed its first line, or exited
reader_said() {
	[ -s "$W/reader.out" ] || ! kill -0 "$RPID" 2>/dev/null
}

# reader ARGS... -- reader.py PORT ARGS in the background (RPID), output
# in $W/reader.out; returns once it holds what it opened (the file is
# emptied first: the background job's own redirection may come after
# reader_said looks, which would then see an earlier reader's line)
reader() {
	: >"$W/reader.out"
	"$READER" "$PORT" "$@" >"$W/reader.out" 2>&1 3>&- &
	RPID=$!
	wait_for reader_said
	grep -q '^holding' "$W/reader.out" && return 0
	cat "$W/reader.out" >&2
	return 1
}

# ver_fds -- how many version files (.ver) rpmemd holds open
ver_fds() {
	find "/proc/$DPID/fd" -lname '*.ver*' 2>/dev/null | wc -l
}

# pool_fds POOL -- how many version files of POOL rpmemd holds open
pool_fds() {
	find "/proc/$DPID/fd" -lname "*/$1.v*.ver*" 2>/dev/null | wc -l
}

# no_ver_fds -- rpmemd holds no version file open
no_ver_fds() {
	[ "$(ver_fds)" -eq 0 ]
}

setup() {
	setup_env
	readers_conf
	start_daemon
	mkfile "$W/src" 1
	rc -q mirror "$W/src" "$T/r1/p"
	[ "$status" -eq 0 ]
}

teardown() {
	[ -z "${RPID:-}" ] || kill "$RPID" 2>/dev/null || true
	local p
	for p in ${RPIDS:-}; do
		kill "$p" 2>/dev/null || true
	done
	teardown_daemon
	! mountpoint -q "$W/small" 2>/dev/null || umount "$W/small"
}

@test "remove --force ends the sessions that only read the pool, and removes it with its versions" {
	syncs 3
	reader r1/p 1 2 2
	[ "$(ver_fds)" -gt 0 ]
	rc remove "$T/r1/p"
	[ "$status" -eq 4 ]
	[[ "$output" == *"open by 4 reader(s)"* ]]
	[ -e "$R1/p" ]
	rc remove --force "$T/r1/p"
	echo "$output"
	[ "$status" -eq 0 ]
	[ ! -e "$R1/p" ]
	[ -z "$(ls "$R1"/.rpmemd/p.* 2>/dev/null)" ]
	[ "$(ver_fds)" -eq 0 ]
	# the readers were told who ended them
	alive_until "$RPID" grep -q '^closed' "$W/reader.out"
	grep -q "ended by an administrator (remove --force of r1/p by session" "$W/reader.out"
	grep -q "notice: remove --force of r1/p by session .*, a reader of pool r1/p, ended" "$DLOG"
}

@test "remove --force does not end a writer: the pool stays, busy" {
	syncs 2
	reader r1/p 1 1 1
	hold "$T/r1/p" 60
	rc remove --force "$T/r1/p"
	[ "$status" -eq 4 ]
	[[ "$output" == *"open for writing"* ]]
	[ -e "$R1/p" ]
	# the reader was not ended for nothing
	kill -0 "$RPID"
	refute grep -q '^closed' "$W/reader.out"
	kill -USR1 "$HP"
	wait "$HP"
}

@test "an administrator's kick ends an idle reader: its version files are closed, remove works" {
	syncs 3
	reader r1/p 1 1 1
	[ "$(ver_fds)" -eq 2 ]
	rc status --json "$T"
	id=$(json '.sessions[] | select(.client == "reader.py") | .id')
	[ -n "$id" ]
	rc kick "$T" "$id"
	[ "$status" -eq 0 ]
	alive_until "$RPID" grep -q '^closed' "$W/reader.out"
	wait_for no_ver_fds
	rc remove "$T/r1/p"
	[ "$status" -eq 0 ]
}

@test "an idle reader of the oldest version does not pin it: a sync that needs room prunes it, its space is freed, the sync completes" {
	[ "$(id -u)" -eq 0 ] || skip "mounting a small tmpfs needs root"
	MNT=$W/small
	mkdir -p "$MNT"
	mount -t tmpfs -o size=14m,mode=0755 tmpfs "$MNT" || skip "cannot mount a tmpfs here"
	stop_daemon
	sed -i "s|{ name = \"r1\";|{ name = \"small\"; type = \"dir\"; path = \"$MNT\"; versions = \"all\"; versions_full = \"prune\"; },\n  { name = \"r1\";|" "$CONF"
	start_daemon
	mkfile "$W/big" 4
	rc -q mirror "$W/big" "$T/small/b"
	[ "$status" -eq 0 ]
	# each sync changes every block: versions 1 and 2 take 4 MiB each,
	# and 14 MiB hold no third beside the pool
	for i in 1 2; do
		mkfile "$W/big" 4
		rc -q sync "$W/big" "$T/small/b"
		[ "$status" -eq 0 ]
	done
	[ -e "$MNT/.rpmemd/b.v1.ver" ]
	# one READ_AT of the oldest version, then idle: its chain holds 1, 2
	reader small/b 1 1 1
	[ "$(ver_fds)" -eq 2 ]
	mkfile "$W/big" 4
	rc sync "$W/big" "$T/small/b"
	echo "$output"
	[ "$status" -eq 0 ]
	cmp "$W/big" "$MNT/b"
	[ ! -e "$MNT/.rpmemd/b.v1.ver" ]
	refute grep -q "no room" "$DLOG"
	# no file of a pruned version stays open in the idle reader
	[ -z "$(find "/proc/$DPID/fd" -lname '*(deleted)*')" ]
	rc list --json "$T/small/b"
	[ "$(json '.pools[0].state')" = consistent ]
}

@test "many read-only handles over many versions stay within a bound of file descriptors; list still works" {
	stop_daemon
	ulimit -n 256
	start_daemon
	syncs 21
	# 6 sessions x 16 handles, each reading version 1 (20 journals): 1920
	# version files if each held its own
	reader r1/p 1 6 16
	grep -q '^holding 96$' "$W/reader.out"
	[ "$(ver_fds)" -le 64 ]
	rc list "$T/r1/p"
	[ "$status" -eq 0 ]
	refute grep -q "Too many open files" "$DLOG"
	# and each handle reads its version still (its chain reopened)
	kill "$RPID"
	reader r1/p 1 2 16 1
	grep -q '^holding 64$' "$W/reader.out"
	[ "$(ver_fds)" -le 64 ]
}

@test "one session's open versions stay within its share: a session reading many versions closes its own least recently read chains, never another session's" {
	stop_daemon
	# the chains of the daemon hold at most 64 journals, a session's 16
	ulimit -n 256
	start_daemon
	syncs 21
	rc -q mirror "$W/src" "$T/r1/q"
	change 30
	rc -q sync "$W/src" "$T/r1/q"
	change 31
	rc -q sync "$W/src" "$T/r1/q"
	# one session reads version 1 of q: its chain holds versions 1, 2
	reader r1/q 1 1 1
	RPIDS=$RPID
	[ "$(pool_fds q)" -eq 2 ]
	# another reads version 1 of p (20 journals) on 16 handles, one after
	# the other: each chain alone is past its share, so each new one
	# closes the session's older chain, and the first session's stays
	reader r1/p 1 1 16
	grep -q '^holding 16$' "$W/reader.out"
	[ "$(pool_fds q)" -eq 2 ]
	[ "$(pool_fds p)" -eq 20 ]
	# the first reader reads on without reopening anything
	kill "$RPID"
	RPID=
	[ "$(pool_fds q)" -eq 2 ]
}

@test "readers hammering READ_AT from another address cannot starve a sync's hashing: its requests waited for at most one identity's share of the slots" {
	rc -q mirror "$W/src" "$T/r1/q"
	local i p
	for i in 2 3 4 5; do
		change "$i"
		rc -q sync "$W/src" "$T/r1/q"
	done
	mkfile "$W/dst" 4
	rc -q mirror "$W/dst" "$T/r1/d"
	# 4 readers, from 127.0.0.2, each reading versions of q on 4 handles
	# without pause
	RPIDS=
	for i in 1 2 3 4; do
		READER_SRC=127.0.0.2 "$READER" "$PORT" r1/q 1 1 4 -1 \
			>"$W/hammer$i" 2>&1 3>&- &
		RPIDS="$RPIDS $!"
	done
	for i in 1 2 3 4; do
		wait_for grep -q '^hammering' "$W/hammer$i"
	done
	# syncs (from 127.0.0.1) that hash every block while they read on
	for i in 1 2 3; do
		mkfile "$W/dst" 4
		rc verify "$W/dst" "$T/r1/d"
		[ "$status" -eq 1 ]
		rc -q sync --no-history "$W/dst" "$T/r1/d"
		[ "$status" -eq 0 ]
		cmp "$W/dst" "$R1/d"
	done
	for p in $RPIDS; do
		kill -0 "$p"
	done
	for p in $RPIDS; do
		kill "$p"
	done
	for i in 1 2 3 4; do
		refute grep -q ERROR "$W/hammer$i"
	done
	RPIDS=
	stop_daemon
	# the daemon's own count: the readers hashed, and each session from
	# 127.0.0.1 that hashed waited behind at most one identity's share
	local re='from 127\.0\.0\.([12]):[0-9]*: ([0-9]+) requests took a hashing slot, at most ([0-9]+) others were served before one of them in turn \(one identity holds or awaits at most ([0-9]+) of the ([0-9]+) slots\)'
	local readers=0 syncs=0 line
	while read -r line; do
		[[ "$line" =~ $re ]] || continue
		if [ "${BASH_REMATCH[1]}" = 2 ]; then
			readers=$((readers + 1))
			[ "${BASH_REMATCH[2]}" -gt 20 ]
		else
			syncs=$((syncs + 1))
			[ "${BASH_REMATCH[3]}" -le "${BASH_REMATCH[4]}" ] ||
				{ echo "$line"; false; }
		fi
	done <"$DLOG"
	[ "$readers" -eq 4 ]
	[ "$syncs" -ge 3 ]
}

@test "a read-only open idle past reader_idle_timeout is closed, told why, its version files released; a writer is not" {
	stop_daemon
	readers_conf "reader_idle_timeout = 1;"
	start_daemon
	syncs 3
	reader r1/p 1 1 2
	[ "$(ver_fds)" -gt 0 ]
	alive_until "$RPID" grep -q '^closed' "$W/reader.out"
	grep -q "closed: ERROR .* no request for 1 s with pools open only for reading (reader_idle_timeout); the target closed the session and released its pools" "$W/reader.out"
	grep -q "notice: session [0-9]* from .*: no request for 1 s with pools open only for reading (reader_idle_timeout); closing the session" "$DLOG"
	wait_for no_ver_fds
	rc remove "$T/r1/p"
	[ "$status" -eq 0 ]
	# a writer idle as long keeps its pool (writer_idle_timeout: 600 s)
	rc -q mirror "$W/src" "$T/r1/q"
	hold "$T/r1/q" 60
	# not a wait: the subject, idle longer than reader_idle_timeout, on
	# purpose
	sleep 2
	kill -0 "$HP"
	rc list --json "$T/r1/q"
	[ "$(json '.pools[0].writer')" != "" ]
	kill -USR1 "$HP"
	wait "$HP"
}

@test "a 1-byte READ_AT of the oldest of 20 versions that each changed every block checks one record, not one per version; newer versions read through the same open journals" {
	stop_daemon
	sed -i 's/level = "info"/level = "debug"/' "$CONF"
	start_daemon
	cp "$W/src" "$W/s1"
	local i
	for i in $(seq 2 21); do
		mkfile "$W/src" 1
		"$RPMEMCTL" -q sync "$W/src" "$T/r1/p"
	done
	rc versions --json "$T/r1/p"
	[ "$(json '.versions | length')" -eq 20 ]
	# 1 handle: version 1, then 2 rounds over versions 1 to 21
	reader r1/p 1 1 1 42
	grep -q '^holding 43$' "$W/reader.out"
	# the daemon's own count: the bytes of records it read and checked
	grep "READ_AT of 1 bytes of version 1:" "$DLOG"
	grep -q "READ_AT of 1 bytes of version 1: 1048576 bytes of its records checked (the daemon's chains loaded 20 journals so far)" "$DLOG"
	# the handle's chain of version 1 serves every newer version as it
	# is: no journal loaded again
	[ "$(grep -c "READ_AT of 1 bytes of version [0-9]*: 1048576 bytes of its records checked (the daemon's chains loaded 20 journals so far)" "$DLOG")" -eq 41 ]
	grep -q "READ_AT of 1 bytes of version 21: 0 bytes of its records checked (the daemon's chains loaded 20 journals so far)" "$DLOG"
	# and version 1 restores as it was, every block from the oldest
	kill "$RPID"
	rc sync --pull --at 1 "$W/v1" "$T/r1/p"
	[ "$status" -eq 0 ]
	cmp "$W/v1" "$W/s1"
	rc scrub --at 1 "$T/r1/p"
	[ "$status" -eq 0 ]
}

# pool_state -- "STATE PENDING RECOVERABLE_GENERATION" of r1/q
pool_state() {
	"$RPMEMCTL" list --json "$T/r1/q" |
		jq -r '.pools[0] | "\(.state) \(.pending) \(.recoverable_generation)"'
}

# pending_at G -- r1/q is syncing, its previous image G recoverable
pending_at() {
	[ "$(pool_state)" = "syncing true $1" ]
}

# journal_over BYTES -- r1/q's undo journal is larger than BYTES
journal_over() {
	[ "$(stat -c %s "$R1/.rpmemd/q.undo" 2>/dev/null || echo 0)" -gt "$1" ]
}

@test "--at N of a pending pool (syncing, rollback: N) reads generation N, and older versions, through its journal; the pool is not changed, nor by a kill -9 mid-read" {
	local g
	for g in 1 2 3; do
		mkfile "$W/src" 4
		if [ "$g" -eq 1 ]; then
			rc -q mirror "$W/src" "$T/r1/q"
		else
			rc -q sync "$W/src" "$T/r1/q"
		fi
		[ "$status" -eq 0 ]
		cp "$W/src" "$W/s$g"
	done
	# a sync of a new image, paced, killed once it writes
	mkfile "$W/new" 4
	"$RPMEMCTL" sync --bwlimit 1M "$W/new" "$T/r1/q" >/dev/null 2>&1 &
	local cpid=$!
	wait_for pending_at 3
	wait_for journal_over 300000
	# read while the sync still writes: generation 3 all the same
	rc sync --pull --at 3 "$W/live3" "$T/r1/q"
	[ "$status" -eq 0 ]
	cmp "$W/live3" "$W/s3"
	kill -9 "$cpid"
	wait "$cpid" || true
	[ "$(pool_state)" = "syncing true 3" ]
	# the pool holds a mix now: neither image
	refute cmp -s "$R1/q" "$W/s3"
	cp "$R1/q" "$W/mix"
	cp "$R1/.rpmemd/q.undo" "$W/undo"
	rc sync --pull --at 3 "$W/r3" "$T/r1/q"
	echo "$output"
	[ "$status" -eq 0 ]
	cmp "$W/r3" "$W/s3"
	rc export --raw --at 3 "$T/r1/q" "$W/e3"
	echo "$output"
	[ "$status" -eq 0 ]
	cmp "$W/e3" "$W/s3"
	rc verify --at 3 "$W/s3" "$T/r1/q"
	echo "$output"
	[ "$status" -eq 0 ]
	rc verify --at 3 "$W/new" "$T/r1/q"
	[ "$status" -eq 1 ]
	rc scrub --at 3 "$T/r1/q"
	echo "$output"
	[ "$status" -eq 0 ]
	# an older version reads through the pending journal too
	rc sync --pull --at 2 "$W/r2" "$T/r1/q"
	[ "$status" -eq 0 ]
	cmp "$W/r2" "$W/s2"
	# kill -9 of rpmemd while restores of version 3 keep reading it
	(while :; do
		"$RPMEMCTL" sync --pull --at 3 "$W/k3" "$T/r1/q" >/dev/null 2>&1
		touch "$W/pulled"
	done) &
	local lpid=$!
	wait_for [ -e "$W/pulled" ]
	kill -9 "$DPID"
	wait "$DPID" || true
	# the loop ends by itself at its first failed restore (errexit)
	kill "$lpid" 2>/dev/null || true
	wait "$lpid" || true
	start_daemon
	# nothing changed: the pool, its journal, its state
	cmp "$R1/q" "$W/mix"
	cmp "$R1/.rpmemd/q.undo" "$W/undo"
	[ "$(pool_state)" = "syncing true 3" ]
	rc sync --pull --at 3 "$W/r3b" "$T/r1/q"
	[ "$status" -eq 0 ]
	cmp "$W/r3b" "$W/s3"
	# and the rollback still gives generation 3
	rc rollback "$T/r1/q"
	[ "$status" -eq 0 ]
	cmp "$R1/q" "$W/s3"
}
