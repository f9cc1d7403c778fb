#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# dirtylog.bats -- after the target was away, sync moves only the extents the dirty log marked

load helpers

WRITER=$BUILD/tests/dirty_writer
MiB=$((1 << 20))

setup() {
	setup_daemon
	mkfile "$W/src" 16
}
teardown() { teardown_daemon; }

# write_while_away RANGE... -- the replica API opens r1/p1 (its sync
# binds src.rpmemlog to the pool), then rpmemd stops and each
# OFFSET:LEN is persisted locally only; the writer dies without a close.
# rpmemd is down afterwards.
write_while_away() {
	mkfifo "$W/go"
	"$WRITER" "$W/src" "$T/r1/p1" "$@" <"$W/go" >"$W/wout" 2>"$W/werr" &
	local wp=$!
	exec 4>"$W/go"
	for _ in $(seq 300); do
		grep -q open "$W/wout" && break
		kill -0 "$wp" 2>/dev/null || break
		sleep 0.1
	done
	grep -q open "$W/wout"
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
	rc sync --no-dirty-log "$W/other" "$T/r1/p1"
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
	rc sync --no-dirty-log "$W/other" "$T/r1/p1"
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
