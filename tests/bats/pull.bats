#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# pull.bats -- sync --pull (plain and --at) replaces the local file whole:
# kill -9 at any point leaves the old or the new image byte for byte, the
# temporary file of a killed run is removed by the next pull or restore,
# a symbolic link stays a link, the file keeps its owner and mode; and in
# this versions region a refused import leaves the versions as they were

load helpers

setup() {
	setup_env
	# r1 keeps versions, for the --at restores
	cat >"$CONF" <<CONF
listen = ["127.0.0.1"];
port = $PORT;
log = { level = "info"; target = "stderr"; };
max_sessions = 16;
regions = (
  { name = "r1"; type = "dir"; path = "$R1"; versions = "last=5"; }
);
CONF
	start_daemon
	mkdir -p "$W/l"
	mkfile "$W/src" 8
	mkfile "$W/old" 8
}

teardown() { teardown_daemon; }

# tmps -- the temporary files of sync --pull in $W/l
tmps() {
	find "$W/l" -maxdepth 1 -name '*.rpmem-tmp.*' -printf '%f\n'
}

# read_at_least N -- the daemon's sessions have read N bytes or more
# (status --json sessions[].bytes_read)
read_at_least() {
	local n
	n=$("$RPMEMCTL" status --json "$T" 2>/dev/null |
		jq '[.sessions[].bytes_read] | max // 0')
	[ "${n:-0}" -ge "$1" ]
}

# old_or_new -- $W/l/f is $W/old or $W/src, byte for byte (which: $which)
old_or_new() {
	if cmp -s "$W/l/f" "$W/old"; then
		which=old
	elif cmp -s "$W/l/f" "$W/src"; then
		which=new
	else
		echo "the local file is a mix of the old and the new image" >&2
		cmp "$W/l/f" "$W/old" | head -1 >&2
		return 1
	fi
}

@test "kill -9 of rpmemctl at several points of a paced sync --pull: the local file is the old or the new image byte for byte; the next pull removes the temporary file" {
	rc mirror "$W/src" "$T/r1/p"
	[ "$status" -eq 0 ]
	cp "$W/old" "$W/l/f"
	local at pid olds=0
	# killed once 1, 3 and 6 of the 8 MiB were read (every block differs)
	for at in 1 3 6; do
		"$RPMEMCTL" sync --pull --bwlimit 2M "$W/l/f" "$T/r1/p" \
			>/dev/null 2>&1 &
		pid=$!
		alive_until "$pid" read_at_least $((at << 20))
		kill -9 "$pid"
		wait "$pid" || true
		old_or_new
		echo "killed after $at MiB: the $which image"
		[ "$which" = new ] || olds=$((olds + 1))
		# the killed run's temporary file is there
		[ "$(tmps | wc -l)" -eq 1 ]
	done
	# at least one kill really was in the middle
	[ "$olds" -ge 1 ]
	rc sync --pull "$W/l/f" "$T/r1/p"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"removed '$W/l/.f.rpmem-tmp."*"', left by an interrupted run (pid "* ]]
	cmp "$W/l/f" "$W/src"
	[ -z "$(tmps)" ]
}

@test "kill -9 of a paced --at restore: the local file as it was, its temporary file (the pool's size) removed by the next restore; a running one's is left" {
	rc mirror "$W/old" "$T/r1/p"
	rc sync "$W/src" "$T/r1/p"
	[ "$status" -eq 0 ]
	cp "$W/src" "$W/l/f"
	"$RPMEMCTL" sync --pull --at 1 --bwlimit 2M "$W/l/f" "$T/r1/p" \
		>/dev/null 2>&1 &
	local pid=$!
	alive_until "$pid" read_at_least $((2 << 20))
	kill -9 "$pid"
	wait "$pid" || true
	cmp "$W/l/f" "$W/src"
	[ "$(tmps)" = ".f.rpmem-tmp.$pid" ]
	[ "$(stat -c %s "$W/l/.f.rpmem-tmp.$pid")" -eq $((8 << 20)) ]
	# a running one's (this shell's pid, alive) stays
	: >"$W/l/.f.rpmem-tmp.$$"
	rc sync --pull --at 1 "$W/l/f" "$T/r1/p"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"removed '$W/l/.f.rpmem-tmp.$pid', left by an interrupted run (pid $pid)"* ]]
	cmp "$W/l/f" "$W/old"
	[ "$(tmps)" = ".f.rpmem-tmp.$$" ]
}

@test "sync --pull and --at into a symbolic link: the link stays, the file it names is replaced, owner and mode kept" {
	[ "$(id -u)" -eq 0 ] || skip "needs root to give the file another owner"
	rc mirror "$W/old" "$T/r1/p"
	rc sync "$W/src" "$T/r1/p"
	[ "$status" -eq 0 ]
	mkdir -p "$W/data"
	cp "$W/old" "$W/data/real"
	chown 4242:4343 "$W/data/real"
	chmod 0640 "$W/data/real"
	ln -s ../data/real "$W/l/f"
	rc sync --pull "$W/l/f" "$T/r1/p"
	echo "$output"
	[ "$status" -eq 0 ]
	[ -L "$W/l/f" ]
	[ "$(readlink "$W/l/f")" = ../data/real ]
	cmp "$W/data/real" "$W/src"
	[ "$(stat -c '%u:%g %a' "$W/data/real")" = "4242:4343 640" ]
	# the temporary file went beside the file, not the link
	[ -z "$(tmps)" ]
	[ -z "$(find "$W/data" -name '*.rpmem-tmp.*')" ]
	rc sync --pull --at 1 "$W/l/f" "$T/r1/p"
	echo "$output"
	[ "$status" -eq 0 ]
	[ -L "$W/l/f" ]
	cmp "$W/data/real" "$W/old"
	[ "$(stat -c '%u:%g %a' "$W/data/real")" = "4242:4343 640" ]
	# a missing file is created, by the rename, whole
	rc sync --pull "$W/l/new" "$T/r1/p"
	[ "$status" -eq 0 ]
	cmp "$W/l/new" "$W/src"
	[ -z "$(tmps)" ]
}

@test "a pull refused before it moves anything (size) creates no temporary file; a pull that fails removes its own" {
	rc mirror "$W/src" "$T/r1/p"
	head -c 4M /dev/urandom >"$W/l/f"
	cp "$W/l/f" "$W/l/f.before"
	rc sync --pull "$W/l/f" "$T/r1/p"
	[ "$status" -eq 5 ]
	[[ "$output" == *"the pool's size is"* ]]
	cmp "$W/l/f" "$W/l/f.before"
	[ -z "$(tmps | grep -v f.before)" ]
	# the daemon goes away mid-pull: exit non-zero, the old file intact,
	# the temporary file removed
	cp "$W/old" "$W/l/g"
	"$RPMEMCTL" sync --pull --bwlimit 2M "$W/l/g" "$T/r1/p" \
		>/dev/null 2>&1 &
	local pid=$! st=0
	alive_until "$pid" read_at_least $((1 << 20))
	kill -9 "$DPID"
	wait "$DPID" || true
	DPID=
	wait "$pid" || st=$?
	[ "$st" -ne 0 ]
	cmp "$W/l/g" "$W/old"
	[ -z "$(tmps)" ]
	start_daemon
}

@test "in a versions region, an import of a damaged stream is refused and rolled back: the pool, its generation and its versions as they were" {
	rc mirror "$W/old" "$T/r1/p"
	rc sync "$W/src" "$T/r1/p"
	[ "$status" -eq 0 ]
	local before
	before=$("$RPMEMCTL" versions --json "$T/r1/p" |
		jq -c '[.generation, [.versions[] | [.generation, .hash, .space_bytes]]]')
	[ "$before" = "$(echo "$before" | jq -c '.[0] = 2')" ]
	"$RPMEMCTL" export "$T/r1/p" "$W/s"
	poke "$W/s" $((512 + 7 * 1048592 + 5))
	run bash -c "cat '$W/s' | '$RPMEMCTL' import -f - '$T/r1/p'"
	echo "$output"
	[ "$status" -eq 5 ]
	[[ "$output" == *"chunk 7 (bytes 7340032 to 8388607 of the image) does not match its hash (damaged)"* ]]
	[[ "$output" == *"rolled back pool $T/r1/p: it holds generation 2 again"* ]]
	cmp "$R1/p" "$W/src"
	[ "$("$RPMEMCTL" versions --json "$T/r1/p" |
		jq -c '[.generation, [.versions[] | [.generation, .hash, .space_bytes]]]')" = "$before" ]
	# and the version it kept still restores
	rc sync --pull --at 1 "$W/l/v1" "$T/r1/p"
	[ "$status" -eq 0 ]
	cmp "$W/l/v1" "$W/old"
	# exported as a stream too: its header says version 1 (flag 1)
	"$RPMEMCTL" export --at 1 "$T/r1/p" "$W/v1.s"
	[ "$(od -An -tu8 -j32 -N8 "$W/v1.s" | tr -d ' ')" -eq 1 ]
	[ "$(od -An -tu8 -j40 -N8 "$W/v1.s" | tr -d ' ')" -eq 1 ]
	rc import "$W/v1.s" "$T/r1/v1"
	[ "$status" -eq 0 ]
	cmp "$R1/v1" "$W/old"
	# --size, if given, must agree with the header
	run bash -c "cat '$W/v1.s' | '$RPMEMCTL' import -f - '$T/r1/p' --size 4M"
	[ "$status" -eq 5 ]
	[[ "$output" == *"holds an image of 8388608 bytes, not the 4194304 of --size"* ]]
	cmp "$R1/p" "$W/src"
}

@test "sync --pull into a file that was removed, its history left beside it: the pull makes the file and a history of the pool's (was: No such file or directory)" {
	"$RPMEMCTL" mirror "$W/src" "$T/r1/gone"
	[ -f "$W/src.rpmemgen" ]
	rm "$W/src"
	"$RPMEMCTL" sync --pull "$W/src" "$T/r1/gone"
	cmp "$W/src" "$R1/gone"
	# the history now agrees with the pool: a push of the same file is
	# "same" and moves nothing
	run "$RPMEMCTL" sync --json "$W/src" "$T/r1/gone"
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | jq -r '.history')" = same ]
	[ "$(echo "$output" | jq -r '.blocks_changed')" = 0 ]
}
