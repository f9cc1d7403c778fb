#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# integrity.bats -- pools stay truthful and the tools survive files that
# change under them (issue 9)

load helpers

setup() { setup_daemon; }
teardown() { teardown_daemon; }

# --- issue 9.3: CREATE never reuses a file that is not rpmemd's own --------

@test "CREATE over a hard link to a file outside the region leaves that file untouched" {
	mkdir "$W/outside"
	head -c 100000 /dev/urandom >"$W/outside/precious"
	cp "$W/outside/precious" "$W/precious.orig"
	ln "$W/outside/precious" "$R1/p3"
	rc create "$T/r1/p3" 4M
	echo "$output"
	[ "$status" -eq 0 ]
	cmp "$W/outside/precious" "$W/precious.orig"
	[ "$(stat -c %h "$W/outside/precious")" -eq 1 ]
	[ "$(stat -c %s "$R1/p3")" -eq $((4 << 20)) ]
	mkfile "$W/src" 4
	rc sync "$W/src" "$T/r1/p3"
	[ "$status" -eq 0 ]
	cmp "$W/outside/precious" "$W/precious.orig"
	grep -qi "warn.*p3.*2 links" "$DLOG"
}

@test "CREATE over an orphan file owned by another user makes a new file of its own" {
	[ "$(id -u)" -eq 0 ] || skip "needs root to own a file as another user"
	head -c 8192 /dev/urandom >"$R1/p4"
	chown 65534 "$R1/p4"
	rc create "$T/r1/p4" 1M
	[ "$status" -eq 0 ]
	[ "$(stat -c %u "$R1/p4")" -eq 0 ]
	cmp -n $((1 << 20)) /dev/zero "$R1/p4"
	grep -qi "warn.*p4.*owned by uid 65534" "$DLOG"
}

@test "CREATE still reuses an orphan file of its own (a crash between file and metadata)" {
	head -c 8192 /dev/urandom >"$R1/p5"
	ino=$(stat -c %i "$R1/p5")
	rc create "$T/r1/p5" 1M
	[ "$status" -eq 0 ]
	[ "$(stat -c %i "$R1/p5")" = "$ino" ]
	cmp -n $((1 << 20)) /dev/zero "$R1/p5"
}
