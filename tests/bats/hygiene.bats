#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# hygiene.bats -- region hygiene: a region directory or its .rpmemd that
# someone else could write is refused (region_check = "strict") or warned
# about ("warn"), by rpmemd and rpmemd -n; a side file that is not
# rpmemd's own is not used; undo journals are bound to their pool (uuid,
# generation), so one planted from another pool, an older generation or
# another user is never applied by a rollback

load helpers

setup() {
	setup_env
	mkfile "$W/src" 1
	# what an attacker wants in the pool
	head -c 1048576 /dev/zero | tr '\0' 'E' >"$W/evil"
}

teardown() {
	[ -z "${HP:-}" ] || kill -KILL "$HP" 2>/dev/null || true
	teardown_daemon
}

# needs_root -- chown to nobody needs root (CI runs the suite as root)
needs_root() {
	[ "$(id -u)" -eq 0 ] || skip "needs root to give files to nobody"
}

# check_refuses WHAT -- rpmemd -n and rpmemd refuse the region (exit 1)
# saying WHAT
check_refuses() {
	run "$RPMEMD" -n -c "$CONF"
	[ "$status" -eq 1 ]
	[[ "$output" == *"region 'r1': "*"$1"*"someone else could replace its pools' files"* ]]
	[[ "$output" == *"region_check = \"warn\""* ]]
	[[ "$output" != *"configuration OK"* ]]
	run timeout 20 "$RPMEMD" -c "$CONF"
	[ "$status" -eq 1 ]
	[[ "$output" == *"$1"* ]]
}

@test "rpmemd -n and rpmemd refuse a region directory or .rpmemd writable by others or not owned by rpmemd's user; region_check = warn only warns" {
	needs_root
	chmod 1777 "$R1"
	check_refuses "$R1 is writable by others (mode 1777)"
	chmod 0775 "$R1"
	check_refuses "$R1 is writable by its group (mode 0775)"
	chmod 0755 "$R1"
	chown nobody "$R1"
	check_refuses "$R1 is owned by uid 65534, not rpmemd's user (uid 0)"
	chown root "$R1"
	mkdir -p "$R1/.rpmemd"
	chown nobody "$R1/.rpmemd"
	chmod 0777 "$R1/.rpmemd"
	check_refuses "$R1/.rpmemd is owned by uid 65534"
	# a clean region passes
	chown root "$R1/.rpmemd"
	chmod 0755 "$R1/.rpmemd"
	run "$RPMEMD" -n -c "$CONF"
	[ "$status" -eq 0 ]
	[[ "$output" == *"configuration OK"* ]]
	# warn: said, and served
	chmod 1777 "$R1"
	echo 'region_check = "warn";' >>"$CONF"
	run "$RPMEMD" -n -c "$CONF"
	[ "$status" -eq 0 ]
	[[ "$output" == *"warning: region 'r1': $R1 is writable by others (mode 1777)"* ]]
	[[ "$output" == *"configuration OK"* ]]
	start_daemon
	rc mirror "$W/src" "$T/r1/p"
	[ "$status" -eq 0 ]
	cmp "$W/src" "$R1/p"
	grep -q "warning: region 'r1': $R1 is writable by others (mode 1777)" "$DLOG"
	sed -i 's/region_check = "warn";/region_check = "loose";/' "$CONF"
	run "$RPMEMD" -n -c "$CONF"
	[ "$status" -eq 1 ]
	[[ "$output" == *"region_check: 'loose' is not one of strict, warn"* ]]
}

@test "a reload that adds a region others may write is refused; the running regions stay served" {
	needs_root
	start_daemon
	mkdir -m 0777 "$W/r2"
	chmod 0777 "$W/r2"
	sed -i "s|  { name = \"r1\"; type = \"dir\"; path = \"$R1\"; }|  { name = \"r1\"; type = \"dir\"; path = \"$R1\"; },\n  { name = \"r2\"; type = \"dir\"; path = \"$W/r2\"; }|" "$CONF"
	grep -q r2 "$CONF"
	kill -HUP "$DPID"
	wait_for grep -q "reload failed" "$DLOG"
	grep -q "reload failed.*region 'r2': $W/r2 is writable by others (mode 0777)" "$DLOG"
	[ ! -e "$W/r2/.rpmemd/p.meta" ]
	rc mirror "$W/src" "$T/r1/p"
	[ "$status" -eq 0 ]
	rc list "$T/r2"
	[ "$status" -eq 4 ]
}

# interrupted POOL -- a sync of r1/POOL cut short (hold_pool wrote 8 KiB
# of 0xa5 at 0 and was killed): POOL syncing, its journal holding what
# was there
interrupted() {
	hold "$T/r1/$1" 60 8192
	kill -KILL "$HP"
	wait "$HP" || true
	HP=
	[ -f "$R1/.rpmemd/$1.undo" ]
}

# state POOL -- "STATE GENERATION" of r1/POOL
state() {
	"$RPMEMCTL" list --json "$T/r1/$1" |
		jq -r '.pools[0] | "\(.state) \(.generation)"'
}

@test "an undo journal planted by another user (forged with the pool's uuid and generation) is not applied: rollback refuses, the pool's bytes unchanged, the file left in place" {
	needs_root
	start_daemon
	# the forgery: a real journal of this pool at generation 1 whose
	# blocks are the attacker's (the uuid and generation are what a
	# client learns from list and open)
	rc -q mirror "$W/evil" "$T/r1/p"
	interrupted p
	cp "$R1/.rpmemd/p.undo" "$W/forged.undo"
	rc rollback "$T/r1/p"
	[ "$status" -eq 0 ]
	stop_daemon
	cp "$W/src" "$R1/p" # the owner's image, same pool, generation 1
	start_daemon
	# the owner's sync is interrupted
	interrupted p
	cp "$R1/p" "$W/before"
	[ "$(state p)" = "syncing 1" ]
	stop_daemon
	# a local user replaces the journal
	cp "$W/forged.undo" "$R1/.rpmemd/p.undo"
	chown nobody "$R1/.rpmemd/p.undo"
	start_daemon
	rc rollback "$T/r1/p"
	[ "$status" -eq 4 ]
	cmp "$W/before" "$R1/p"
	! cmp -s -n 8192 "$W/evil" "$R1/p"
	[ "$(state p)" = "syncing 1" ]
	# left for the administrator, and said why
	[ "$(stat -c %u "$R1/.rpmemd/p.undo")" -eq 65534 ]
	grep -q "error: refusing 'p.undo' in a region: it is owned by uid 65534, not rpmemd's user" "$DLOG"
	grep -q "pool 'p': its undo journal is not rpmemd's own" "$DLOG"
	# the same file group-writable but rpmemd's: refused too
	stop_daemon
	chown root "$R1/.rpmemd/p.undo"
	chmod 0660 "$R1/.rpmemd/p.undo"
	start_daemon
	rc rollback "$T/r1/p"
	[ "$status" -eq 4 ]
	cmp "$W/before" "$R1/p"
}

@test "an undo journal from another pool or from an older generation of the same pool is refused by rollback: the pool's bytes unchanged" {
	start_daemon
	rc -q mirror "$W/evil" "$T/r1/q"
	interrupted q
	cp "$R1/.rpmemd/q.undo" "$W/q.undo"
	rc -q mirror "$W/evil" "$T/r1/p"
	interrupted p
	cp "$R1/.rpmemd/p.undo" "$W/p1.undo"
	rc rollback "$T/r1/p"
	[ "$status" -eq 0 ]
	rc -q sync "$W/src" "$T/r1/p"
	[ "$(state p)" = "consistent 2" ]
	interrupted p
	cp "$R1/p" "$W/before"
	stop_daemon
	# another pool's journal (same size, another uuid)
	cp "$W/q.undo" "$R1/.rpmemd/p.undo"
	start_daemon
	rc rollback "$T/r1/p"
	[ "$status" -eq 4 ]
	cmp "$W/before" "$R1/p"
	grep -q "pool 'p': its undo journal is Bad message" "$DLOG"
	# this pool's own journal of generation 1, replayed at generation 2
	stop_daemon
	cp "$W/p1.undo" "$R1/.rpmemd/p.undo"
	start_daemon
	rc rollback "$T/r1/p"
	[ "$status" -eq 4 ]
	cmp "$W/before" "$R1/p"
	grep -q "pool 'p': its undo journal is bound to another generation" "$DLOG"
	[ "$(state p)" = "syncing 2" ]
}

@test "a pool file or its metadata given to another user is not opened; a version file of another user is not read" {
	needs_root
	# versions kept: r1 keeps every version
	sed -i "s|path = \"$R1\"; }|path = \"$R1\"; versions = \"all\"; }|" "$CONF"
	start_daemon
	rc -q mirror "$W/src" "$T/r1/p"
	cp "$W/src" "$W/mod"
	poke "$W/mod" 100
	rc -q sync "$W/mod" "$T/r1/p"
	[ -f "$R1/.rpmemd/p.v1.ver" ]
	stop_daemon
	chown nobody "$R1/.rpmemd/p.v1.ver"
	start_daemon
	rc sync --pull --at 1 "$W/back" "$T/r1/p"
	[ "$status" -ne 0 ]
	[ ! -e "$W/back" ]
	grep -q "refusing 'p.v1.ver' in a region: it is owned by uid 65534" "$DLOG"
	stop_daemon
	chown root "$R1/.rpmemd/p.v1.ver"
	chown nobody "$R1/p"
	start_daemon
	rc sync "$W/src" "$T/r1/p"
	[ "$status" -eq 4 ]
	cmp "$W/mod" "$R1/p"
	grep -q "refusing 'p' in a region: it is owned by uid 65534" "$DLOG"
	stop_daemon
	chown root "$R1/p"
	chmod 0666 "$R1/.rpmemd/p.meta"
	start_daemon
	rc sync "$W/src" "$T/r1/p"
	[ "$status" -eq 4 ]
	cmp "$W/mod" "$R1/p"
	grep -q "refusing 'p.meta' in a region: it is writable by others (mode 0666)" "$DLOG"
}

@test "a version file planted from another pool (same size, same generation) is never restored as this pool's version" {
	sed -i "s|path = \"$R1\"; }|path = \"$R1\"; versions = \"all\"; }|" "$CONF"
	start_daemon
	cp "$W/src" "$W/mod"
	poke "$W/mod" 100
	rc -q mirror "$W/src" "$T/r1/p"
	rc -q sync "$W/mod" "$T/r1/p"
	rc -q mirror "$W/evil" "$T/r1/q"
	# q holds evil's writes, which mod never saw: only an explicit discard
	rc -q sync --discard-target "$W/mod" "$T/r1/q"
	[ -f "$R1/.rpmemd/p.v1.ver" ] && [ -f "$R1/.rpmemd/q.v1.ver" ]
	rc sync --pull --at 1 "$W/back" "$T/r1/p"
	[ "$status" -eq 0 ]
	cmp "$W/src" "$W/back"
	rm -f "$W/back"
	stop_daemon
	cp "$R1/.rpmemd/q.v1.ver" "$R1/.rpmemd/p.v1.ver"
	start_daemon
	rc sync --pull --at 1 "$W/back" "$T/r1/p"
	[ "$status" -ne 0 ]
	! cmp -s "$W/evil" "$W/back"
	# the pool itself is untouched
	cmp "$W/mod" "$R1/p"
}

@test "a dense sync's committed image planted by another user is not renamed over the pool at its next open" {
	needs_root
	start_daemon
	rc -q mirror "$W/src" "$T/r1/p"
	stop_daemon
	# what a crash after the commit of a dense sync leaves, but not ours
	cp "$W/evil" "$R1/.rpmemd/p.done"
	chown nobody "$R1/.rpmemd/p.done"
	start_daemon
	rc sync --pull "$W/back" "$T/r1/p"
	cmp "$W/src" "$R1/p"
	[ "$(stat -c %u "$R1/.rpmemd/p.done")" -eq 65534 ]
	grep -q "the new image of a dense sync .* is not rpmemd's own" "$DLOG"
}
