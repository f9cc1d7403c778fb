#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# dirtylog.bats -- after the target was away, sync moves only the extents the dirty log marked

load helpers

WRITER=$BUILD/tests/dirty_writer
PRELOAD=$BUILD/librpmem_preload.so
APP=$BUILD/tests/pobj_app
MiB=$((1 << 20))
bats_require_minimum_version 1.5.0

setup() {
	setup_daemon
	mkfile "$W/src" 16
}
teardown() {
	[ -z "${PUB:-}" ] || rm -rf "$PUB"
	teardown_daemon
}

# write_while_away RANGE... -- the replica API opens r1/p1 (its sync
# binds src.rpmemlog to the pool), then rpmemd stops and each
# OFFSET:LEN is persisted locally only; the writer dies without a close.
# rpmemd is down afterwards.
write_while_away() {
	mkfifo "$W/go"
	"$WRITER" "$W/src" "$T/r1/p1" "$@" <"$W/go" >"$W/wout" 2>"$W/werr" &
	local wp=$!
	exec 4>"$W/go"
	alive_until "$wp" grep -q open "$W/wout"
	stop_daemon
	echo go >&4
	exec 4>&-
	wait "$wp"
}

@test "after writes while the target was away, sync moves only the marked extents and the target's file equals the local one" {
	# extents 1, 5 and 10 (1 MiB each); 5 is written twice
	write_while_away $((1 * MiB + 7)):100 $((5 * MiB)):5000 \
		$((10 * MiB + 4096)):4096 $((5 * MiB + 9000)):10
	[ -f "$W/src.rpmemlog" ]
	start_daemon
	[ "$(written p1)" -eq 0 ]
	rc sync --json "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	[ "$(json .dirty_only)" = true ]
	[ "$(json .dirty_fallback)" = "" ]
	# the daemon received the three extents, nothing else
	[ "$(written p1)" -eq $((3 * MiB)) ]
	[ "$(json .data_bytes)" -eq $((3 * MiB)) ]
	cmp "$W/src" "$R1/p1"
	rc list --json "$T/r1/p1"
	[ "$(json '.pools[0].state')" = consistent ]
	# the log was cleared: the next sync sends nothing
	rc sync --json "$W/src" "$T/r1/p1"
	[ "$(json .dirty_only)" = true ]
	[ "$(written p1)" -eq $((3 * MiB)) ]
}

@test "a dirty log relative to an older generation (another writer synced meanwhile) falls back to a full hashed sync and says so" {
	write_while_away $((2 * MiB)):4096
	start_daemon
	mkfile "$W/other" 16
	# an unchecked writer (its own history would make src's push a
	# refused split brain): the pool's history stays src's
	rc sync --no-history --no-dirty-log "$W/other" "$T/r1/p1"
	[ "$status" -eq 0 ]
	rc sync --json "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	[ "$(json .dirty_only)" = false ]
	[[ "$(json .dirty_fallback)" == *"relative to generation"* ]]
	# a full comparison found and moved every block the other file changed
	[ "$(json .blocks_changed)" -eq 256 ]
	cmp "$W/src" "$R1/p1"
	# and without --json it says so on stdout
	poke "$W/other" 5
	rc sync --no-history --no-dirty-log "$W/other" "$T/r1/p1"
	rc sync "$W/src" "$T/r1/p1"
	[[ "$output" == *"dirty log '$W/src.rpmemlog' not used"* ]]
	cmp "$W/src" "$R1/p1"
}

@test "verify ignores the dirty log and compares everything" {
	write_while_away $((3 * MiB)):4096
	start_daemon
	rc verify --json "$W/src" "$T/r1/p1"
	[ "$status" -eq 1 ]
	[ "$(json 'has("dirty_log")')" = false ]
	[ "$(json '.ranges | length')" -eq 1 ]
	[ "$(json '.ranges[0].offset')" -eq $((3 * MiB)) ]
}

@test "sync --dirty-log refuses --pull, --dry-run and --no-dirty-log" {
	rc sync --dirty-log "$W/log" --pull "$W/src" "$T/r1/p1"
	[ "$status" -eq 2 ]
	rc sync --dirty-log "$W/log" --dry-run "$W/src" "$T/r1/p1"
	[ "$status" -eq 2 ]
	rc sync --dirty-log "$W/log" --no-dirty-log "$W/src" "$T/r1/p1"
	[ "$status" -eq 2 ]
	[ ! -e "$W/log" ]
}

# bound_then_changed -- src.rpmemlog bound to r1/p1 by a sync (the target
# then equals src, the log marks nothing), a copy of it in $W/genuine,
# then a change to src at 5 MiB + 3 that the log does not know about
bound_then_changed() {
	rc sync --dirty-log "$W/src.rpmemlog" "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	cp -p "$W/src.rpmemlog" "$W/genuine"
	poke "$W/src" $((5 * MiB + 3))
}

# sync_full_said LOG WHY -- sync src (the push), stdout and stderr apart:
# it succeeds, says once on stderr that LOG was not used (WHY), and the
# target's file equals src; then --json says the same
sync_full_said() {
	run --separate-stderr "$RPMEMCTL" sync "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	cmp "$W/src" "$R1/p1"
	echo "$stderr"
	[ "$(grep -c "not used" <<<"$stderr")" -eq 1 ]
	[[ "$stderr" == *"dirty log '$1' not used: $2"*"compared every block"* ]]
}

@test "a symbolic link planted as the dirty log is not followed: sync compares every block, moves the change the log hid and says so once" {
	bound_then_changed
	rm "$W/src.rpmemlog"
	ln -s "$W/genuine" "$W/src.rpmemlog"
	sync_full_said "$W/src.rpmemlog" "it is a symbolic link"
	poke "$W/src" 77
	rc sync --json "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	[ "$(json .dirty_only)" = false ]
	[ "$(json .dirty_fallback)" = "it is a symbolic link" ]
	[ "$(json .blocks_changed)" -eq 1 ]
	cmp "$W/src" "$R1/p1"
	# neither the link nor what it points at was written
	[ -L "$W/src.rpmemlog" ]
	cmp "$W/genuine" "$(readlink "$W/src.rpmemlog")"
}

@test "a dirty log owned by another user than the pool file's is not trusted: sync compares every block and moves the change" {
	bound_then_changed
	chown nobody "$W/src.rpmemlog"
	sync_full_said "$W/src.rpmemlog" \
		"it is owned by uid $(id -u nobody), the pool file by uid 0"
	poke "$W/src" 77
	rc sync --json "$W/src" "$T/r1/p1"
	[ "$(json .dirty_only)" = false ]
	[ "$(json .blocks_changed)" -eq 1 ]
	cmp "$W/src" "$R1/p1"
	# a group- or world-writable log of a pool that is not is refused too
	chown root "$W/src.rpmemlog"
	chmod 0646 "$W/src.rpmemlog"
	poke "$W/src" 99
	rc sync --json "$W/src" "$T/r1/p1"
	[ "$(json .dirty_only)" = false ]
	[[ "$(json .dirty_fallback)" == *"writable by others"* ]]
	cmp "$W/src" "$R1/p1"
}

# forge_log LOG POOLSIZE UUID GENERATION -- a self-consistent dirty log
# (lib/client/sync/dirtylog.c: header, XXH3 over it by the independent
# xxh3_blocks, clean mark) bound to UUID at GENERATION, marking nothing
forge_log() {
	python3 - "$@" "$BUILD/tests/xxh3_blocks" <<'EOF2'
import os, struct, subprocess, sys
log, size, uuid, gen, xxh = sys.argv[1:]
size, n = int(size), (int(size) + (1 << 20) - 1) >> 20
hdr = (b"RPMEMDL\0" + struct.pack("<IIQQ", 2, 20, size, n) +
       bytes.fromhex(uuid.replace("-", "")) +
       struct.pack("<QII", int(gen), 1, 0))
open(log + ".h", "wb").write(hdr)
out = subprocess.check_output([xxh, log + ".h", "64"])
os.unlink(log + ".h")
data = hdr + struct.pack("<Q", int(out.split()[0], 16))
open(log, "wb").write(data + bytes(4096 - len(data)) +
                      bytes((n + 63) // 64 * 8))
EOF2
}

@test "a dirty log forged by another user in the pool's directory (self-consistent, clean, marking nothing) is not trusted: sync moves the changed block" {
	# a directory others may write to (sticky, like /tmp); the pool is root's
	PUB=$(mktemp -d /tmp/rpmem-pub.XXXXXX)
	chmod 1777 "$PUB"
	mkfile "$PUB/src" 16
	rc sync --no-dirty-log "$PUB/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	rc list --json "$T/r1/p1"
	local uuid gen
	uuid=$(json '.pools[0].uuid')
	gen=$(json '.pools[0].generation')
	poke "$PUB/src" $((9 * MiB + 1))
	# the attacker, uid nobody, plants a log that claims nothing changed
	export -f forge_log
	run setpriv --reuid=nobody --regid=nogroup --clear-groups \
		bash -c "BUILD=$BUILD; forge_log '$PUB/src.rpmemlog' $((16 * MiB)) $uuid $gen"
	[ "$status" -eq 0 ]
	[ "$(stat -c %u "$PUB/src.rpmemlog")" -eq "$(id -u nobody)" ]
	rc sync --json "$PUB/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	[ "$(json .dirty_only)" = false ]
	[[ "$(json .dirty_fallback)" == *"owned by uid $(id -u nobody)"* ]]
	[ "$(json .blocks_changed)" -eq 1 ]
	cmp "$PUB/src" "$R1/p1"
	# the trust boundary: the same forgery by the pool's owner is used
	# (whoever may write the pool may write its log)
	rm -f "$PUB/src.rpmemlog"
	rc list --json "$T/r1/p1"
	forge_log "$PUB/src.rpmemlog" $((16 * MiB)) $uuid \
		"$(json '.pools[0].generation')"
	poke "$PUB/src" 5
	rc sync --json "$PUB/src" "$T/r1/p1"
	[ "$(json .dirty_only)" = true ]
	refute cmp "$PUB/src" "$R1/p1"
}

@test "a dirty log left by a crashed writer (the preload library killed) has no clean mark: sync compares every block and moves a change the library never saw" {
	RPMEM_REPLICATE="$W/app.obj=$T/r1/app" PMEM_IS_PMEM_FORCE=0 \
		run env LD_PRELOAD="$PRELOAD" "$APP" "$W/app.obj" put:1:persisted kill
	[ "$status" -eq 137 ]
	[ -f "$W/app.obj.rpmemlog" ]
	rc list --json "$T/r1/app"
	[ "$(json '.pools[0].state')" = syncing ]
	# what a crash may leave unmarked: a store never flushed, a write(2)
	poke "$W/app.obj" $((3 * MiB + 5))
	run --separate-stderr "$RPMEMCTL" sync "$W/app.obj" "$T/r1/app"
	[ "$status" -eq 0 ]
	cmp "$W/app.obj" "$R1/app"
	echo "$stderr"
	[ "$(grep -c "not used" <<<"$stderr")" -eq 1 ]
	[[ "$stderr" == *"the dirty log has no clean mark"* ]]
	rc list --json "$T/r1/app"
	[ "$(json '.pools[0].state')" = consistent ]
}

@test "the preload library's next start after a crash compares the whole file even if the file's and its log's mtimes are equal: the clean mark is missing" {
	export RPMEM_REPLICATE="$W/app.obj=$T/r1/app" PMEM_IS_PMEM_FORCE=0
	run env LD_PRELOAD="$PRELOAD" "$APP" "$W/app.obj" put:1:first kill
	[ "$status" -eq 137 ]
	# a change the library never saw; the coarse clock may give the file
	# and the log one mtime (3 of 40 kills did): made so here
	poke "$W/app.obj" $((12 * MiB + 5))
	touch -r "$W/app.obj.rpmemlog" "$W/app.obj"
	run env LD_PRELOAD="$PRELOAD" "$APP" "$W/app.obj" get:1 exit
	[ "$status" -eq 0 ]
	[ "$output" = first ]
	cmp "$W/app.obj" "$R1/app"
	rc list --json "$T/r1/app"
	[ "$(json '.pools[0].state')" = consistent ]
}

@test "a dirty log of another version (left by an older library) means a full hashed sync, said once, and is left alone" {
	bound_then_changed
	# version 1: the header before the clean mark
	printf '\001' | dd of="$W/src.rpmemlog" bs=1 seek=8 conv=notrunc 2>/dev/null
	cp "$W/src.rpmemlog" "$W/v1"
	sync_full_said "$W/src.rpmemlog" "it is not a dirty log of this version"
	cmp "$W/src.rpmemlog" "$W/v1"
}
