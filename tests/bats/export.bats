#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# export.bats -- rpmemctl export and import: a pool's image as a stream,
# checked against the pool file in the daemon's region, through restic

load helpers
load access

setup() {
	setup_daemon
	mkfile "$W/src" 6
	# a multiple of 4 KiB (pool sizes are), not of 1 MiB
	head -c $((3 * 1048576 + 12288)) /dev/urandom >"$W/odd"
}

teardown() { teardown_daemon; }

# pool_field POOL FIELD -- FIELD of r1/POOL as the daemon lists it ("" if
# there is no such pool)
pool_field() {
	"$RPMEMCTL" list --json "$T/r1" |
		jq -r --arg n "$1" ".pools[] | select(.name == \$n) | .$2"
}

# interrupted POOL -- leave r1/POOL syncing, as a sync cut short does: an
# import into it (--force) whose input ends early
interrupted() {
	head -c 1M "$W/src" |
		"$RPMEMCTL" import -f - "$T/r1/$1" --size 6M 2>/dev/null || true
	[ "$(pool_field "$1" state)" = syncing ]
}

@test "export - writes exactly the pool file the daemon holds" {
	rc mirror "$W/src" "$T/r1/p"
	[ "$status" -eq 0 ]
	"$RPMEMCTL" export "$T/r1/p" - >"$W/out"
	cmp "$W/out" "$R1/p"
	# the same into a file, a size that is no multiple of the chunk
	rc mirror "$W/odd" "$T/r1/odd"
	[ "$status" -eq 0 ]
	rc export "$T/r1/odd" "$W/odd.out"
	[ "$status" -eq 0 ]
	cmp "$W/odd.out" "$R1/odd"
}

@test "import then export: the round trip is byte-identical, the pool consistent" {
	rc import - "$T/r1/q" --size 6M <"$W/src"
	echo "$output"
	[ "$status" -eq 0 ]
	cmp "$W/src" "$R1/q"
	[ "$(pool_field q state)" = consistent ]
	[ "$(pool_field q size)" -eq $((6 << 20)) ]
	[ "$(pool_field q bytes_written)" -eq $((6 << 20)) ]
	"$RPMEMCTL" export "$T/r1/q" - >"$W/back"
	cmp "$W/src" "$W/back"
	# a regular file gives its own size, and JSON says what happened
	rc import --json "$W/odd" "$T/r1/o"
	[ "$status" -eq 0 ]
	[ "$(json .command)" = import ]
	[ "$(json .pool_size)" -eq $((3 * 1048576 + 12288)) ]
	[ "$(json .created)" = true ]
	cmp "$W/odd" "$R1/o"
}

@test "import refuses a short or a long input: nothing is left claiming consistent" {
	head -c 5M "$W/src" | {
		run "$RPMEMCTL" import - "$T/r1/short" --size 6M
		echo "$output"
		[ "$status" -eq 5 ]
		[[ "$output" == *"standard input ended after 5242880 of 6291456 bytes"* ]]
	}
	# the pool this import created is gone, file and all
	[ -z "$(pool_field short state)" ]
	[ ! -e "$R1/short" ]
	cat "$W/src" "$W/src" | {
		run "$RPMEMCTL" import - "$T/r1/long" --size 6M
		[ "$status" -eq 5 ]
		[[ "$output" == *"holds more than the 6291456 bytes of --size"* ]]
	}
	[ -z "$(pool_field long state)" ]
	# an existing pool: refused without --force, untouched
	rc mirror "$W/src" "$T/r1/p"
	rc import - "$T/r1/p" --size 6M </dev/null
	[ "$status" -eq 4 ]
	[[ "$output" == *"exists; importing would overwrite it"* ]]
	[ "$(pool_field p generation)" -eq 1 ]
	# with --force, an input that ends early leaves it syncing, not consistent
	head -c 2M "$W/odd" | {
		run "$RPMEMCTL" import -f - "$T/r1/p" --size 6M
		[ "$status" -eq 5 ]
	}
	[ "$(pool_field p state)" = syncing ]
	[ "$(pool_field p generation)" -eq 1 ]
	# a file of the wrong size is refused before anything is created
	rc import "$W/odd" "$T/r1/f" --size 6M
	[ "$status" -eq 5 ]
	[[ "$output" == *"not the 6291456 of --size"* ]]
	[ -z "$(pool_field f state)" ]
	# stdin without --size
	rc import - "$T/r1/g" </dev/null
	[ "$status" -eq 2 ]
	[[ "$output" == *"--size is needed"* ]]
}

@test "export refuses a syncing pool unless forced, saying why" {
	rc mirror "$W/src" "$T/r1/p"
	interrupted p
	run "$RPMEMCTL" export "$T/r1/p" "$W/x"
	echo "$output"
	[ "$status" -eq 4 ]
	[[ "$output" == *"pool $T/r1/p is syncing"* ]]
	[[ "$output" == *"may hold a mix of the old and the new image"* ]]
	[[ "$output" == *"--force"* ]]
	[ ! -e "$W/x" ]
	run "$RPMEMCTL" export -f "$T/r1/p" "$W/x"
	[ "$status" -eq 0 ]
	[[ "$output" == *"exporting it anyway"* ]]
	cmp "$W/x" "$R1/p"
}

@test "export needs the read right, import the write right" {
	stop_daemon
	R2=$W/r2
	mkdir -p "$R2"
	access_keys
	default_rules | access_conf
	start_daemon
	as ops mirror "$W/src" "$T/r2/p"
	[ "$status" -eq 0 ]
	# backup1 may not read r2
	as backup1 export "$T/r2/p" "$W/x"
	[ "$status" -eq 4 ]
	[[ "$output" == *"identity 'backup1' may not read region 'r2'"* ]]
	[ ! -e "$W/x" ]
	# monitor may read it, not write it
	as monitor export "$T/r2/p" "$W/x"
	[ "$status" -eq 0 ]
	cmp "$W/x" "$R2/p"
	as monitor import "$W/odd" "$T/r2/new"
	[ "$status" -eq 4 ]
	[[ "$output" == *"identity 'monitor' may not write region 'r2'"* ]]
	[ ! -e "$R2/new" ]
	as monitor import -f "$W/src" "$T/r2/p"
	[ "$status" -eq 4 ]
	cmp "$W/src" "$R2/p"
}

@test "restic round trip: export | restic backup --stdin, restore and dump byte-identical, dump | import" {
	command -v restic >/dev/null ||
		skip "restic is missing (packaging/install-deps.sh installs it)"
	export RESTIC_PASSWORD=rpmem-test RESTIC_REPOSITORY=$W/restic
	export RESTIC_CACHE_DIR=$W/restic-cache
	restic init -q
	rc mirror "$W/src" "$T/r1/db"
	[ "$status" -eq 0 ]
	set -o pipefail
	"$RPMEMCTL" export "$T/r1/db" - |
		restic backup -q --stdin --stdin-filename pool.obj
	restic restore -q latest --target "$W/restored"
	cmp "$W/restored/pool.obj" "$R1/db"
	restic dump -q latest pool.obj >"$W/dumped"
	cmp "$W/dumped" "$R1/db"
	restic dump -q latest pool.obj |
		"$RPMEMCTL" import - "$T/r1/db2" --size 6M
	cmp "$R1/db2" "$R1/db"
	[ "$(pool_field db2 state)" = consistent ]
}

@test "a sync that completes while export reads fails the export (exit 4); a FIFO as DEST is written, not removed" {
	mkfile "$W/big" 24
	cp "$W/big" "$W/mod"
	poke "$W/mod" 100
	rc mirror "$W/big" "$T/r1/p"
	[ "$status" -eq 0 ]
	mkfifo "$W/fifo"
	"$RPMEMCTL" export "$T/r1/p" "$W/fifo" 2>"$W/err" &
	local ep=$! st=0
	# the export opens the FIFO after it opened the pool (generation 1);
	# 24 MiB do not fit in the pipe, so it waits on us from here
	exec 4<"$W/fifo"
	rc sync "$W/mod" "$T/r1/p"
	[ "$status" -eq 0 ]
	cat <&4 >"$W/got"
	exec 4<&-
	wait "$ep" || st=$?
	cat "$W/err"
	[ "$st" -eq 4 ]
	grep -q "changed during the export (a sync ran)" "$W/err"
	[ -p "$W/fifo" ]
	# whatever it wrote was the pool's bytes, old or new, 24 MiB
	[ "$(stat -c %s "$W/got")" -eq $((24 << 20)) ]
}
