#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# export.bats -- rpmemctl export and import: a pool's image as a framed
# stream (or --raw), checked against the pool file in the daemon's region,
# damaged streams refused with the target's pool byte for byte as it was,
# through restic and borg

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

# interrupted POOL -- leave r1/POOL syncing, as a sync cut short does: a
# raw import into it (--force) whose input ends early
interrupted() {
	head -c 1M "$W/src" |
		"$RPMEMCTL" import --raw -f --discard-target - "$T/r1/$1" --size 6M 2>/dev/null ||
		true
	[ "$(pool_field "$1" state)" = syncing ]
}

# stream_len SIZE -- the length of the export stream of a SIZE-byte image:
# a 512-byte header, each 1 MiB chunk and its 16-byte hash, a 64-byte
# trailer
stream_len() {
	echo $((512 + $1 + ($1 + 1048575) / 1048576 * 16 + 64))
}

# unchanged POOL FILE GEN -- r1/POOL holds FILE's bytes, consistent at
# GEN, with no undo journal left: a refused import changed nothing
unchanged() {
	cmp "$2" "$R1/$1"
	[ "$(pool_field "$1" state)" = consistent ]
	[ "$(pool_field "$1" generation)" -eq "$3" ]
	[ ! -e "$R1/.rpmemd/$1.undo" ]
}

# refused STREAM WHY -- import -f --discard-target of STREAM (through a pipe, as a backup
# tool's dump comes) into r1/p exits 5 saying WHY, and leaves p as it was
# (generation 1, $W/src)
refused() {
	run bash -c "cat '$1' | '$RPMEMCTL' import -f --discard-target - '$T/r1/p'"
	echo "$1: $output"
	[ "$status" -eq 5 ]
	[[ "$output" == *"$2"* ]]
	unchanged p "$W/src" 1
}

@test "export --raw - writes exactly the pool file the daemon holds" {
	rc mirror "$W/src" "$T/r1/p"
	[ "$status" -eq 0 ]
	"$RPMEMCTL" export --raw "$T/r1/p" - >"$W/out"
	cmp "$W/out" "$R1/p"
	# the same into a file, a size that is no multiple of the chunk
	rc mirror "$W/odd" "$T/r1/odd"
	[ "$status" -eq 0 ]
	rc export --raw "$T/r1/odd" "$W/odd.out"
	[ "$status" -eq 0 ]
	cmp "$W/odd.out" "$R1/odd"
}

@test "export writes a framed stream: header, each chunk then its hash, trailer; import of it is byte-exact" {
	rc mirror "$W/odd" "$T/r1/odd"
	[ "$status" -eq 0 ]
	"$RPMEMCTL" export "$T/r1/odd" - >"$W/s"
	local size=$((3 * 1048576 + 12288))
	[ "$(stat -c %s "$W/s")" -eq "$(stream_len $size)" ]
	[ "$(head -c 8 "$W/s")" = RPMEMEXP ]
	[ "$(tail -c 64 "$W/s" | head -c 8)" = RPMEMEND ]
	# the header says the size, the generation, the pool
	[ "$(od -An -tu8 -j24 -N8 "$W/s" | tr -d ' ')" -eq $size ]
	[ "$(od -An -tu8 -j32 -N8 "$W/s" | tr -d ' ')" -eq 1 ]
	grep -aq "r1/odd" <(head -c 512 "$W/s")
	# the image's bytes, between the hashes, are the pool's
	{
		tail -c +513 "$W/s" | head -c 1048576
		tail -c +$((513 + 1048592)) "$W/s" | head -c 1048576
	} | cmp - <(head -c 2097152 "$R1/odd")
	# no --size: the header gives it; a new pool, byte for byte
	rc import - "$T/r1/back" <"$W/s"
	echo "$output"
	[ "$status" -eq 0 ]
	cmp "$R1/back" "$R1/odd"
	[ "$(pool_field back state)" = consistent ]
	# and from a regular file, over an existing pool (--force)
	rc mirror "$W/src" "$T/r1/p"
	"$RPMEMCTL" export "$T/r1/p" "$W/p.s"
	mkfile "$W/other" 6
	rc mirror "$W/other" "$T/r1/q"
	rc import -f --discard-target "$W/p.s" "$T/r1/q"
	[ "$status" -eq 0 ]
	cmp "$R1/q" "$W/src"
}

@test "import refuses a damaged, truncated or foreign stream: the target's pool stays byte for byte as it was" {
	rc mirror "$W/src" "$T/r1/p"
	[ "$status" -eq 0 ]
	mkfile "$W/other" 6
	rc mirror "$W/other" "$T/r1/o"
	"$RPMEMCTL" export "$T/r1/o" - >"$W/good"
	local len
	len=$(stat -c %s "$W/good")
	[ "$len" -eq "$(stream_len $((6 << 20)))" ]
	# truncated: in the header, in a chunk, before the trailer, inside it
	head -c 100 "$W/good" >"$W/t1"
	refused "$W/t1" "ends inside its header (truncated)"
	head -c $((3 << 20)) "$W/good" >"$W/t2"
	refused "$W/t2" "(truncated)"
	head -c $((len - 64)) "$W/good" >"$W/t3"
	refused "$W/t3" "ends before its trailer (truncated"
	head -c $((len - 10)) "$W/good" >"$W/t4"
	refused "$W/t4" "ends inside its trailer (truncated"
	# one flipped byte: in a chunk (the last one: all else was written
	# first, and rolled back), in its hash, in the header, in the trailer
	cp "$W/good" "$W/f1"
	poke "$W/f1" $((512 + 5 * 1048592 + 4096))
	refused "$W/f1" "chunk 5 (bytes 5242880 to 6291455 of the image) does not match its hash (damaged)"
	cp "$W/good" "$W/f2"
	poke "$W/f2" $((512 + 1048576 + 3))
	refused "$W/f2" "chunk 0 (bytes 0 to 1048575 of the image) does not match its hash"
	cp "$W/good" "$W/f3"
	poke "$W/f3" 30
	refused "$W/f3" "its header does not match its hash (damaged)"
	cp "$W/good" "$W/f4"
	poke "$W/f4" $((len - 40))
	refused "$W/f4" "trailer's chunk count or image hash differs"
	cp "$W/good" "$W/f5"
	poke "$W/f5" $((len - 3))
	refused "$W/f5" "its trailer does not match its hash (damaged)"
	# two chunks swapped (each with its own hash): a chunk is bound to
	# its place
	{
		head -c 512 "$W/good"
		tail -c +$((513 + 1048592)) "$W/good" | head -c 1048592
		tail -c +513 "$W/good" | head -c 1048592
		tail -c +$((513 + 2 * 1048592)) "$W/good"
	} >"$W/sw"
	[ "$(stat -c %s "$W/sw")" -eq "$len" ]
	refused "$W/sw" "chunk 0 (bytes 0 to 1048575 of the image) does not match its hash"
	# bytes after the trailer
	cat "$W/good" <(echo x) >"$W/long"
	refused "$W/long" "holds bytes after its trailer"
	# foreign: random bytes, a bare image without --raw, nothing
	head -c "$len" /dev/urandom >"$W/rnd"
	refused "$W/rnd" "not an rpmem export stream"
	refused "$W/other" "not an rpmem export stream (no RPMEMEXP header; a bare image needs --raw)"
	refused /dev/null "it is empty"
	# the stream of a 3 MiB pool into this 6 MiB one: refused by size
	rc mirror "$W/odd" "$T/r1/odd"
	"$RPMEMCTL" export "$T/r1/odd" "$W/odd.s"
	rc import -f --discard-target - "$T/r1/p" <"$W/odd.s"
	echo "$output"
	[ "$status" -eq 4 ]
	unchanged p "$W/src" 1
	# a regular file of the wrong length is refused before connecting
	rc import -f --discard-target "$W/t3" "$T/r1/p"
	[ "$status" -eq 5 ]
	[[ "$output" == *"(truncated or extended)"* ]]
	# a new pool: not created, or removed
	run "$RPMEMCTL" import - "$T/r1/new" <"$W/f1"
	[ "$status" -eq 5 ]
	[ -z "$(pool_field new state)" ]
	[ ! -e "$R1/new" ]
	# the good stream still imports
	rc import -f --discard-target - "$T/r1/p" <"$W/good"
	[ "$status" -eq 0 ]
	cmp "$R1/p" "$W/other"
	[ "$(pool_field p generation)" -eq 2 ]
}

@test "import --raw then export --raw: the round trip is byte-identical, the pool consistent" {
	rc import --raw - "$T/r1/q" --size 6M <"$W/src"
	echo "$output"
	[ "$status" -eq 0 ]
	cmp "$W/src" "$R1/q"
	[ "$(pool_field q state)" = consistent ]
	[ "$(pool_field q size)" -eq $((6 << 20)) ]
	[ "$(pool_field q bytes_written)" -eq $((6 << 20)) ]
	"$RPMEMCTL" export --raw "$T/r1/q" - >"$W/back"
	cmp "$W/src" "$W/back"
	# a regular file gives its own size, and JSON says what happened
	rc import --raw --json "$W/odd" "$T/r1/o"
	[ "$status" -eq 0 ]
	[ "$(json .command)" = import ]
	[ "$(json .pool_size)" -eq $((3 * 1048576 + 12288)) ]
	[ "$(json .created)" = true ]
	cmp "$W/odd" "$R1/o"
}

@test "import --raw refuses a short or a long input: nothing is left claiming consistent" {
	head -c 5M "$W/src" | {
		run "$RPMEMCTL" import --raw - "$T/r1/short" --size 6M
		echo "$output"
		[ "$status" -eq 5 ]
		[[ "$output" == *"standard input ended after 5242880 of 6291456 bytes"* ]]
	}
	# the pool this import created is gone, file and all
	[ -z "$(pool_field short state)" ]
	[ ! -e "$R1/short" ]
	cat "$W/src" "$W/src" | {
		run "$RPMEMCTL" import --raw - "$T/r1/long" --size 6M
		[ "$status" -eq 5 ]
		[[ "$output" == *"holds more than the 6291456 bytes of --size"* ]]
	}
	[ -z "$(pool_field long state)" ]
	# an existing pool: refused without --force, untouched
	rc mirror "$W/src" "$T/r1/p"
	rc import --raw - "$T/r1/p" --size 6M </dev/null
	[ "$status" -eq 4 ]
	[[ "$output" == *"exists; importing would overwrite it"* ]]
	[ "$(pool_field p generation)" -eq 1 ]
	# with --force, an input that ends early leaves it syncing, not consistent
	head -c 2M "$W/odd" | {
		run "$RPMEMCTL" import --raw -f --discard-target - "$T/r1/p" --size 6M
		[ "$status" -eq 5 ]
	}
	[ "$(pool_field p state)" = syncing ]
	[ "$(pool_field p generation)" -eq 1 ]
	# a file of the wrong size is refused before anything is created
	rc import --raw "$W/odd" "$T/r1/f" --size 6M
	[ "$status" -eq 5 ]
	[[ "$output" == *"not the 6291456 of --size"* ]]
	[ -z "$(pool_field f state)" ]
	# stdin without --size
	rc import --raw - "$T/r1/g" </dev/null
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
	# into a pipe: exit 4 and nothing written, which import refuses
	run bash -c "set -o pipefail; '$RPMEMCTL' export '$T/r1/p' - | cat >'$W/piped'"
	[ "$status" -eq 4 ]
	[ ! -s "$W/piped" ]
	run "$RPMEMCTL" import - "$T/r1/fromempty" <"$W/piped"
	[ "$status" -eq 5 ]
	[[ "$output" == *"it is empty"* ]]
	run "$RPMEMCTL" export -f --raw "$T/r1/p" "$W/x"
	[ "$status" -eq 0 ]
	[[ "$output" == *"exporting it anyway"* ]]
	cmp "$W/x" "$R1/p"
	# framed, the header says it was forced, and import warns
	run "$RPMEMCTL" export -f "$T/r1/p" "$W/xs"
	[ "$status" -eq 0 ]
	# flag 2 (forced); 8 (the pool's history follows) as well
	[ "$(( $(od -An -tu8 -j40 -N8 "$W/xs" | tr -d " ") & 2 ))" -eq 2 ]
	rc import "$W/xs" "$T/r1/copy"
	[ "$status" -eq 0 ]
	[[ "$output" == *"exported with --force from pool r1/p, which was not consistent"* ]]
	cmp "$R1/copy" "$R1/p"
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
	as monitor export --raw "$T/r2/p" "$W/x"
	[ "$status" -eq 0 ]
	cmp "$W/x" "$R2/p"
	as monitor import --raw "$W/odd" "$T/r2/new"
	[ "$status" -eq 4 ]
	[[ "$output" == *"identity 'monitor' may not write region 'r2'"* ]]
	[ ! -e "$R2/new" ]
	as monitor import --raw -f --discard-target "$W/src" "$T/r2/p"
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
		restic backup -q --stdin --stdin-filename pool.rpmemexp
	restic restore -q latest --target "$W/restored"
	"$RPMEMCTL" export "$T/r1/db" "$W/s"
	cmp "$W/restored/pool.rpmemexp" "$W/s"
	restic dump -q latest pool.rpmemexp |
		"$RPMEMCTL" import - "$T/r1/db2" --size 6M
	cmp "$R1/db2" "$R1/db"
	[ "$(pool_field db2 state)" = consistent ]
	# the bare image too (--raw both ways)
	"$RPMEMCTL" export --raw "$T/r1/db" - |
		restic backup -q --stdin --stdin-filename pool.obj
	restic dump -q latest pool.obj >"$W/dumped"
	cmp "$W/dumped" "$R1/db"
	restic dump -q latest pool.obj |
		"$RPMEMCTL" import --raw - "$T/r1/db3" --size 6M
	cmp "$R1/db3" "$R1/db"
}

# backup_refused TOOL -- a truncated and a flipped stream, each backed up
# by TOOL (restic or borg: tool_backup NAME, tool_dump NAME) as backups
# of a bad export would be, then dumped into import: refused, r1/p as it
# was
backup_refused() {
	rc mirror "$W/src" "$T/r1/p"
	[ "$status" -eq 0 ]
	mkfile "$W/other" 6
	rc mirror "$W/other" "$T/r1/o"
	"$RPMEMCTL" export "$T/r1/o" "$W/good"
	local len
	len=$(stat -c %s "$W/good")
	head -c $((len - 64 - 3 * 1048592)) "$W/good" | tool_backup trunc
	cp "$W/good" "$W/flip"
	poke "$W/flip" $((512 + 2 * 1048592 + 777))
	tool_backup flip <"$W/flip"
	tool_backup good <"$W/good"
	set -o pipefail
	run bash -c "$(declare -f tool_dump); tool_dump trunc |
		'$RPMEMCTL' import -f --discard-target - '$T/r1/p'"
	echo "$output"
	[ "$status" -eq 5 ]
	[[ "$output" == *"(truncated)"* ]]
	unchanged p "$W/src" 1
	run bash -c "$(declare -f tool_dump); tool_dump flip |
		'$RPMEMCTL' import -f --discard-target - '$T/r1/p'"
	echo "$output"
	[ "$status" -eq 5 ]
	[[ "$output" == *"chunk 2 (bytes 2097152 to 3145727 of the image) does not match its hash (damaged)"* ]]
	unchanged p "$W/src" 1
	# the good one goes through, byte for byte
	tool_dump good | "$RPMEMCTL" import -f --discard-target - "$T/r1/p"
	cmp "$R1/p" "$W/other"
	[ "$(pool_field p generation)" -eq 2 ]
}

@test "restic: a truncated and a flipped stream are backed up, and import of their dump refuses them; the pool stays as it was" {
	command -v restic >/dev/null ||
		skip "restic is missing (packaging/install-deps.sh installs it)"
	export RESTIC_PASSWORD=rpmem-test RESTIC_REPOSITORY=$W/restic
	export RESTIC_CACHE_DIR=$W/restic-cache
	restic init -q
	tool_backup() {
		restic backup -q --stdin --stdin-filename "$1.rpmemexp" \
			--tag "$1"
	}
	tool_dump() {
		restic dump -q --tag "$1" latest "$1.rpmemexp"
	}
	backup_refused
}

@test "borg: a truncated and a flipped stream are backed up, and import of their extract refuses them; the pool stays as it was" {
	command -v borg >/dev/null ||
		skip "borg is missing (packaging/install-deps.sh installs borgbackup)"
	export BORG_REPO=$W/borg BORG_PASSPHRASE=rpmem-test
	export BORG_BASE_DIR=$W/borg-home BORG_UNKNOWN_UNENCRYPTED_REPO_ACCESS_IS_OK=yes
	borg init -e none
	tool_backup() {
		borg create --stdin-name "$1.rpmemexp" "::$1" -
	}
	tool_dump() {
		borg extract --stdout "::$1" "$1.rpmemexp"
	}
	backup_refused
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
	# every chunk went out, but no trailer: import refuses it, and the
	# pool it would have overwritten stays as it was
	[ "$(stat -c %s "$W/got")" -eq $(($(stream_len $((24 << 20))) - 64)) ]
	rc mirror "$W/big" "$T/r1/p6"
	run bash -c "cat '$W/got' | '$RPMEMCTL' import -f --discard-target - '$T/r1/p6'"
	[ "$status" -eq 5 ]
	[[ "$output" == *"ends before its trailer (truncated: an export that failed writes none)"* ]]
	cmp "$R1/p6" "$W/big"
	[ "$(pool_field p6 state)" = consistent ]
}

@test "rpmemd killed mid-export: export exits non-zero, and its stream (no trailer) is refused by import" {
	mkfile "$W/big" 24
	rc mirror "$W/big" "$T/r1/p"
	[ "$status" -eq 0 ]
	mkfifo "$W/fifo"
	"$RPMEMCTL" export "$T/r1/p" "$W/fifo" 2>"$W/err" &
	local ep=$! st=0
	exec 4<"$W/fifo"
	# the first MiB read: the export is under way, the rest waits on us
	head -c 1M <&4 >"$W/got"
	kill -9 "$DPID"
	wait "$DPID" || true
	DPID=
	cat <&4 >>"$W/got"
	exec 4<&-
	wait "$ep" || st=$?
	cat "$W/err"
	[ "$st" -ne 0 ]
	[ "$(stat -c %s "$W/got")" -lt "$(stream_len $((24 << 20)))" ]
	start_daemon
	rc mirror "$W/src" "$T/r1/q"
	run "$RPMEMCTL" import -f --discard-target - "$T/r1/q" <"$W/got"
	echo "$output"
	[ "$status" -eq 5 ]
	[[ "$output" == *"(truncated"* ]]
	cmp "$R1/q" "$W/src"
	[ "$(pool_field q state)" = consistent ]
}

@test "import over an existing pool refuses a stream whose history lacks the pool's writes (older, another pool's, a version, --raw); the pool's bytes unchanged" {
	rc mirror "$W/src" "$T/r1/p"
	[ "$status" -eq 0 ]
	"$RPMEMCTL" export "$T/r1/p" "$W/old.s"
	"$RPMEMCTL" export --raw "$T/r1/p" "$W/old.raw"
	# the header carries the pool's history (format 2, flag 8, ids)
	[ "$(od -An -tu4 -j8 -N4 "$W/old.s" | tr -d ' ')" -eq 2 ]
	[ "$(( $(od -An -tu8 -j40 -N8 "$W/old.s" | tr -d ' ') & 8 ))" -eq 8 ]
	[ "$(od -An -tu8 -j232 -N8 "$W/old.s" | tr -d ' ')" -ge 1 ]
	# the pool is written since: a new id in its history
	poke "$W/src" 8192
	rc sync "$W/src" "$T/r1/p"
	[ "$status" -eq 0 ]
	cmp "$W/src" "$R1/p"
	local gen
	gen=$(pool_field p generation)
	# the older stream, the raw image and another pool's stream: refused
	# (exit 4), the pool byte for byte as it was
	mkfile "$W/other" 6
	rc mirror "$W/other" "$T/r1/o"
	"$RPMEMCTL" export "$T/r1/o" "$W/o.s"
	local s
	for s in "$W/old.s" "--raw $W/old.raw" "$W/o.s"; do
		# shellcheck disable=SC2086
		rc import -f $s "$T/r1/p"
		echo "$s: $output"
		[ "$status" -eq 4 ]
		[[ "$output" == *"holds writes the stream does not"* ]]
		[[ "$output" == *"--discard-target"* ]]
		unchanged p "$W/src" "$gen"
	done
	# a stream of the pool as it is now: same history, taken
	"$RPMEMCTL" export "$T/r1/p" "$W/new.s"
	rc import -f "$W/new.s" "$T/r1/p"
	[ "$status" -eq 0 ]
	cmp "$W/src" "$R1/p"
	# --discard-target overwrites the newer writes on purpose
	rc import -f --discard-target "$W/old.s" "$T/r1/p"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"--discard-target overwrites them"* ]]
	cmp "$W/old.raw" "$R1/p"
}

@test "an import takes the stream's history: a pool imported from a newer stream then refuses the older one it was written past" {
	rc mirror "$W/src" "$T/r1/p"
	[ "$status" -eq 0 ]
	"$RPMEMCTL" export "$T/r1/p" "$W/old.s"
	# another copy of the same file, written further: its stream is ahead
	rc sync "$W/src" "$T/r1/q"
	[ "$status" -eq 0 ]
	poke "$W/src" 12288
	rc sync "$W/src" "$T/r1/q"
	[ "$status" -eq 0 ]
	"$RPMEMCTL" export "$T/r1/q" "$W/new.s"
	rc import -f "$W/new.s" "$T/r1/p"
	echo "$output"
	[ "$status" -eq 0 ]
	cmp "$W/src" "$R1/p"
	# p's history is the stream's (q's) now
	[ "$(pool_field p generations)" = "$(pool_field q generations)" ]
	# so the older stream, which lacks the writes p took, is refused
	local gen
	gen=$(pool_field p generation)
	rc import -f "$W/old.s" "$T/r1/p"
	echo "$output"
	[ "$status" -eq 4 ]
	[[ "$output" == *"it was written since the stream was exported"* ]]
	unchanged p "$W/src" "$gen"
	# a pool the import creates takes the stream's history too
	rc import "$W/new.s" "$T/r1/n"
	[ "$status" -eq 0 ]
	[ "$(pool_field n generations)" = "$(pool_field q generations)" ]
}

@test "a raw image forced over a pool with a history gives it a new id: the file whose history was the pool's is behind it and cannot push over the imported image (was: 'same', overwritten)" {
	rc mirror "$W/src" "$T/r1/p"
	[ "$status" -eq 0 ]
	mkfile "$W/other" 6
	local before
	before=$(pool_field p 'generations[0]')
	rc import -f --discard-target --raw "$W/other" "$T/r1/p"
	echo "$output"
	[ "$status" -eq 0 ]
	cmp "$W/other" "$R1/p"
	# the former history with a new id in front
	[ "$(pool_field p 'generations[0]')" != "$before" ]
	[ "$(pool_field p 'generations[1]')" = "$before" ]
	# src's history is the pool's former one: its push is refused, the
	# imported image stays
	poke "$W/src" 4096
	rc sync "$W/src" "$T/r1/p"
	echo "$output"
	[ "$status" -eq 4 ]
	cmp "$W/other" "$R1/p"
}
