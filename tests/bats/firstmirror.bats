#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# firstmirror.bats -- a new pool's data goes through its file, not its
# mapping: the bytes and the daemon's counters on tmpfs and on a disk

load helpers

# regions -- r1 (the test's directory), shm (a directory in /dev/shm when
# that is tmpfs) and disk (a directory in /var/tmp when that is not)
regions() {
	local shm= disk=
	if [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ]; then
		SHM=$(mktemp -d /dev/shm/rpmem-bats.XXXXXX)
		shm="{ name = \"shm\"; type = \"dir\"; path = \"$SHM\"; },"
	fi
	if [ -d /var/tmp ] && [ -w /var/tmp ] &&
	   [ "$(stat -f -c %T /var/tmp)" != tmpfs ]; then
		DISK=$(mktemp -d /var/tmp/rpmem-bats.XXXXXX)
		disk="{ name = \"disk\"; type = \"dir\"; path = \"$DISK\"; },"
	fi
	cat >"$CONF" <<CONF
listen = ["127.0.0.1"];
port = $PORT;
log = { level = "info"; target = "stderr"; };
regions = (
  $shm $disk
  { name = "r1"; type = "dir"; path = "$R1"; }
);
CONF
}

setup() {
	SHM= DISK= SMALL=
	setup_env
	regions
	start_daemon
}

teardown() {
	teardown_daemon
	[ -z "$SMALL" ] || umount "$SMALL" 2>/dev/null || true
	[ -z "$SHM" ] || rm -rf "$SHM"
	[ -z "$DISK" ] || rm -rf "$DISK"
}

# pool_written REGION POOL -- the daemon's count of bytes written into it
pool_written() {
	"$RPMEMCTL" list --json "$T/$1/$2" | jq -er '.pools[0].bytes_written'
}

# pool_state REGION POOL -- its state as the target records it
pool_state() {
	"$RPMEMCTL" list --json "$T/$1/$2" | jq -er '.pools[0].state'
}

# by_file_over REGION POOL N -- by_file counted more than N
by_file_over() {
	[ "$(by_file "$1" "$2")" -gt "$3" ]
}

# written_over REGION POOL N -- the daemon counted more than N bytes
# written into the pool since it started
written_over() {
	[ "$(pool_written "$1" "$2")" -gt "$3" ]
}

# by_file REGION POOL -- how many times a syncing period of the pool
# wrote through its file, as rpmemd logged it
by_file() {
	grep -c "pool $1/$2 is syncing .*WRITEs go through its file" "$DLOG" ||
		true
}

# allocated FILE -- bytes of FILE's allocated blocks
allocated() {
	echo $(($(stat -c '%b * %B' "$1")))
}

# first_mirror_8m REGION DIR -- mirror the 8 MiB $W/src into REGION/p1 (in
# DIR): it succeeds, the pool holds the same bytes, its syncing period went
# through the file once, and the daemon counted 8 MiB written, once
first_mirror_8m() {
	rc mirror "$W/src" "$T/$1/p1"
	[ "$status" -eq 0 ]
	cmp "$W/src" "$2/p1"
	[ "$(by_file "$1" p1)" -eq 1 ]
	[ "$(pool_written "$1" p1)" -eq $((8 << 20)) ]
	[ "$(session_written)" -eq $((8 << 20)) ]
}

# session_written -- the bytes the last session that wrote any counted
session_written() {
	grep -E "closed: client said BYE \([1-9][0-9]* bytes written" "$DLOG" |
		tail -1 |
		sed -n 's/.*BYE (\([0-9]*\) bytes written.*/\1/p'
}

@test "a first mirror into a tmpfs region goes through the file: the same bytes, counted once, every page allocated by the writes" {
	[ -n "$SHM" ] || skip "/dev/shm is not tmpfs"
	mkfile "$W/src" 8
	rc create "$T/shm/p1" 8M
	[ "$status" -eq 0 ]
	# a new pool in memory is sized, not allocated: its writes allocate it
	[ "$(allocated "$SHM/p1")" -eq 0 ]
	first_mirror_8m shm "$SHM"
	[ "$(allocated "$SHM/p1")" -eq $((8 << 20)) ]
	[ "$(pool_state shm p1)" = consistent ]
	# its next mirror (a dense sync) goes into a new file renamed over
	# the pool at the commit (docs/ARCHITECTURE.md, "Atomic syncs"),
	# through that file too, and reads back what it holds
	poke "$W/src" 5000
	rc mirror "$W/src" "$T/shm/p1"
	[ "$status" -eq 0 ]
	cmp "$W/src" "$SHM/p1"
	[ "$(by_file shm p1)" -eq 2 ]
	grep -q "pool 'p1': a dense sync (8388608 of 8388608 bytes): written into a new file" "$DLOG"
	[ "$(pool_written shm p1)" -eq $((16 << 20)) ]
	rc verify "$W/src" "$T/shm/p1"
	[ "$status" -eq 0 ]
}

@test "a first mirror into a disk directory goes through the file: the same bytes, counted once, allocated at create" {
	[ -n "$DISK" ] || skip "no disk file system at /var/tmp"
	mkfile "$W/src" 8
	first_mirror_8m disk "$DISK"
	[ "$(allocated "$DISK/p1")" -ge $((8 << 20)) ]
	[ "$(pool_state disk p1)" = consistent ]
	# a sync that changes one block goes through the mapping
	poke "$W/src" $((3 << 20))
	rc sync "$W/src" "$T/disk/p1"
	[ "$status" -eq 0 ]
	cmp "$W/src" "$DISK/p1"
	[ "$(by_file disk p1)" -eq 1 ]
}

@test "a dense sync into a disk directory goes through its new file: the same bytes, counted once, and a kill -9 of rpmemd mid-transfer leaves the previous image" {
	[ -n "$DISK" ] || skip "no disk file system at /var/tmp"
	mkfile "$W/src" 8
	first_mirror_8m disk "$DISK"
	cp "$W/src" "$W/old"
	# every block changed: a dense sync, written into a new file whose
	# blocks are allocated but unwritten
	mkfile "$W/src" 8
	rc sync "$W/src" "$T/disk/p1"
	[ "$status" -eq 0 ]
	grep -q "pool 'p1': a dense sync .* written into a new file" "$DLOG"
	cmp "$W/src" "$DISK/p1"
	[ "$(by_file disk p1)" -eq 2 ]
	[ "$(pool_written disk p1)" -eq $((16 << 20)) ]
	[ "$(pool_state disk p1)" = consistent ]
	# the new file's WRITEs are no less atomic: rpmemd killed while a
	# slow sync's data goes into it, the pool is the image before
	cp "$W/src" "$W/old"
	mkfile "$W/src" 8
	"$RPMEMCTL" sync --bwlimit 2M "$W/src" "$T/disk/p1" 2>/dev/null &
	local cpid=$!
	wait_for by_file_over disk p1 2
	[ "$(by_file disk p1)" -eq 3 ]
	# killed once some of the new data went into the new file
	wait_for written_over disk p1 $((16 << 20))
	kill -9 "$DPID"
	wait "$DPID" || true
	wait "$cpid" || true
	start_daemon
	# cut short: the new file was never renamed over the pool
	[ "$(pool_state disk p1)" = syncing ]
	cmp "$W/old" "$DISK/p1"
	rc sync "$W/src" "$T/disk/p1"
	[ "$status" -eq 0 ]
	cmp "$W/src" "$DISK/p1"
}

@test "a tmpfs pool whose first mirror was cut short keeps going through the file until every page is written" {
	[ -n "$SHM" ] || skip "/dev/shm is not tmpfs"
	mkfile "$W/src" 4
	rc create "$T/shm/p1" 4M
	[ "$status" -eq 0 ]
	# 64 KiB written and flushed, then the writer goes: syncing, sparse
	"$BUILD/tests/hold_pool" "$T/shm/p1" 0 65536 >"$W/hold.out" 2>&1
	grep -q holding "$W/hold.out"
	[ "$(pool_state shm p1)" = syncing ]
	[ "$(allocated "$SHM/p1")" -eq 65536 ]
	cmp -n 65536 "$SHM/p1" <(head -c 65536 /dev/zero | tr '\0' '\245')
	rc mirror "$W/src" "$T/shm/p1"
	[ "$status" -eq 0 ]
	cmp "$W/src" "$SHM/p1"
	[ "$(by_file shm p1)" -eq 2 ]
	[ "$(pool_written shm p1)" -eq $((65536 + (4 << 20))) ]
	[ "$(allocated "$SHM/p1")" -eq $((4 << 20)) ]
}

@test "a tmpfs region that fills up under a first mirror fails it with no space left (exit 4); the pool stays syncing and rpmemd serves on" {
	SMALL=$W/small
	mkdir -p "$SMALL"
	mount -t tmpfs -o size=8m,mode=0755 tmpfs "$SMALL" 2>/dev/null ||
		{ SMALL=; skip "cannot mount a small tmpfs (not root?)"; }
	mkdir "$SMALL/region"
	sed -i "s|regions = (|regions = (\n  { name = \"small\"; type = \"dir\"; path = \"$SMALL/region\"; },|" "$CONF"
	stop_daemon
	start_daemon
	mkfile "$W/src" 6
	rc create "$T/small/p1" 6M
	[ "$status" -eq 0 ]
	# someone else takes the memory the pool was created with
	head -c $((4 << 20)) /dev/zero >"$SMALL/other"
	rc mirror "$W/src" "$T/small/p1"
	echo "$output"
	[ "$status" -eq 4 ]
	[[ "$output" == *"No space left on device"* ]]
	[[ "$output" == *"p1"* ]]
	[ "$(pool_state small p1)" = syncing ]
	grep -q "warn.*p1.*No space left on device" "$DLOG"
	kill -0 "$DPID"
	# the bytes that did fit are counted, no more
	[ "$(pool_written small p1)" -lt $((6 << 20)) ]
	# with the memory back, the next mirror completes it
	rm "$SMALL/other"
	rc mirror "$W/src" "$T/small/p1"
	[ "$status" -eq 0 ]
	cmp "$W/src" "$SMALL/region/p1"
	[ "$(pool_state small p1)" = consistent ]
}
