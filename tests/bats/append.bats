#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# append.bats -- the append right (rpmemd.conf access): an identity that
# may create, mirror, sync and read but loses nothing already committed.
# Every command that writes is tried as the appender; what is refused is
# exit 4 with the pool file and its version files on the target unchanged.

load helpers
load access

setup() {
	setup_env
	R2=$W/r2
	mkdir -p "$R2"
	: >"$W/server.psk"
	chmod 600 "$W/server.psk"
	for id in nightly ops auditor; do
		"$RPMEMCTL" -q psk-gen -i "$id" "$W/$id.psk"
		cat "$W/$id.psk" >>"$W/server.psk"
	done
	# r1 keeps versions, r2 does not
	cat >"$CONF" <<CONF
listen = ["127.0.0.1"];
port = $PORT;
log = { level = "info"; target = "stderr"; };
max_sessions = 16;
regions = (
  { name = "r1"; type = "dir"; path = "$R1"; versions = "all"; },
  { name = "r2"; type = "dir"; path = "$R2"; }
);
tls = { psk_file = "$W/server.psk"; };
access = (
  { identity = "nightly"; regions = [ "r1", "r2" ]; rights = [ "append" ]; },
  { identity = "ops"; rights = [ "admin" ]; },
  { identity = "ops"; regions = [ "*" ]; rights = [ "write" ]; },
  { identity = "auditor"; regions = [ "r1" ]; rights = [ "read" ]; }
);
CONF
	mkfile "$W/src" 2
	cp "$W/src" "$W/mod"
	poke "$W/mod" 8192
	start_daemon
}

teardown() {
	[ -z "${HP:-}" ] || kill -KILL "$HP" 2>/dev/null || true
	teardown_daemon
}

# snapshot DIR -- the sums of DIR's pool files and version files
snapshot() {
	(cd "$1" && sha256sum -- * .rpmemd/*.ver 2>/dev/null | sort)
}

# gens -- the generations of r1/p's versions, as ops lists them
gens() {
	"$RPMEMCTL" versions --json --psk-file "$W/ops.psk" "$T/r1/p" |
		jq -r '[.versions[].generation] | join(",")'
}

# refused -- the last command was refused by the target for the right
refused() {
	[ "$status" -eq 4 ]
	[[ "$output" == *"identity 'nightly' may only append to region"* ]]
}

@test "an appender creates, mirrors, syncs and reads: in a versions region every overwrite, a mirror or an import over the pool too, keeps the replaced image as a version" {
	as nightly create "$T/r1/empty" 1M
	[ "$status" -eq 0 ]
	[ -e "$R1/empty" ]
	as nightly mirror "$W/src" "$T/r1/p"
	[ "$status" -eq 0 ]
	cmp "$W/src" "$R1/p"
	as nightly sync "$W/mod" "$T/r1/p"
	[ "$status" -eq 0 ]
	cmp "$W/mod" "$R1/p"
	[ -f "$R1/.rpmemd/p.v1.ver" ]
	# a mirror over the pool is a sync that writes everything (src never
	# saw mod's writes: only an explicit discard overwrites them)
	as nightly mirror --discard-target "$W/src" "$T/r1/p"
	[ "$status" -eq 0 ]
	cmp "$W/src" "$R1/p"
	# a raw image carries no history: only an explicit discard imports
	# it over the pool's
	as nightly import --raw --force --discard-target "$W/mod" "$T/r1/p"
	[ "$status" -eq 0 ]
	cmp "$W/mod" "$R1/p"
	[ "$(gens)" = 1,2,3 ]
	# every one of them restores
	as nightly sync --pull --at 1 "$W/back" "$T/r1/p"
	[ "$status" -eq 0 ]
	cmp "$W/src" "$W/back"
	as nightly sync --pull --at 2 "$W/back" "$T/r1/p"
	[ "$status" -eq 0 ]
	cmp "$W/mod" "$W/back"
	as nightly sync --pull --at 3 "$W/back" "$T/r1/p"
	[ "$status" -eq 0 ]
	cmp "$W/src" "$W/back"
	as nightly verify "$W/mod" "$T/r1/p"
	[ "$status" -eq 0 ]
}

@test "an appender is refused (exit 4) remove, versions --prune and --keep, promote, demote, kick: the pool and its version files unchanged" {
	as nightly mirror "$W/src" "$T/r1/p"
	as nightly sync "$W/mod" "$T/r1/p"
	as nightly sync --discard-target "$W/src" "$T/r1/p"
	[ "$status" -eq 0 ]
	[ "$(gens)" = 1,2 ]
	before=$(snapshot "$R1")
	as nightly remove "$T/r1/p"
	refused
	[[ "$output" == *"need the write right"* ]]
	as nightly remove --force "$T/r1/p"
	refused
	as nightly versions --prune 1 "$T/r1/p"
	refused
	as nightly versions --keep last=1 "$T/r1/p"
	refused
	as nightly promote "$T/r1/p"
	refused
	as nightly demote "$T/r1/p"
	refused
	# ending another session (a writer's sync) is an admin's
	as nightly kick "$T" 1
	[ "$status" -eq 4 ]
	[[ "$output" == *"identity 'nightly' is not an admin"* ]]
	[ "$(snapshot "$R1")" = "$before" ]
	[ "$(gens)" = 1,2 ]
	as ops list --json "$T/r1/p"
	[ "$(json '.pools[0].role')" = secondary ]
	[ "$(json '.pools[0].state')" = consistent ]
	[ "$(json '.pools[0].generation')" -eq 3 ]
	grep -q "notice: .*refused: identity 'nightly' may only append to region 'r1'" "$DLOG"
	# the same requests with the write right: the refusal was the right's
	as ops versions --prune 1 "$T/r1/p"
	[ "$status" -eq 0 ]
	[ "$(gens)" = 2 ]
}

@test "an appender heals a damaged version with data its own record vouches for (scrub --repair --at 1 --from FILE); forged data is refused, and a read-only identity cannot repair" {
	as nightly mirror "$W/src" "$T/r1/p"
	as nightly sync "$W/mod" "$T/r1/p"
	[ "$status" -eq 0 ]
	[ "$(gens)" = 1 ]
	local v1=$R1/.rpmemd/p.v1.ver
	cp "$v1" "$W/v1.good"
	# version 1's one record: block 2 as src had it
	poke "$v1" $((4096 + 32 + 5))
	cp "$v1" "$W/v1.bad"
	as nightly scrub --at 1 "$T/r1/p"
	[ "$status" -eq 7 ]
	as auditor scrub --repair --at 1 --from "$W/src" "$T/r1/p"
	[ "$status" -eq 4 ]
	cmp "$W/v1.bad" "$v1"
	cp "$W/src" "$W/forged"
	poke "$W/forged" $((8192 + 9))
	as nightly scrub --repair --at 1 --from "$W/forged" "$T/r1/p"
	[ "$status" -eq 7 ]
	[[ "$output" == *"does not check"* ]]
	cmp "$W/v1.bad" "$v1"
	as nightly scrub --repair --at 1 --from "$W/src" "$T/r1/p"
	[ "$status" -eq 0 ]
	cmp "$W/v1.good" "$v1"
	as nightly sync --pull --at 1 "$W/o1" "$T/r1/p"
	[ "$status" -eq 0 ]
	cmp "$W/o1" "$W/src"
	[ "$(gens)" = 1 ]
}

@test "an appender rolls back an interrupted sync: the last committed image back, no version lost" {
	as nightly mirror "$W/src" "$T/r1/p"
	as nightly sync "$W/mod" "$T/r1/p"
	[ "$status" -eq 0 ]
	hold "$T/r1/p" 60 8192 "$W/nightly.psk"
	kill -KILL "$HP"
	wait "$HP" || true
	HP=
	[ -f "$R1/.rpmemd/p.undo" ]
	! cmp -s "$W/mod" "$R1/p"
	as nightly rollback "$T/r1/p"
	[ "$status" -eq 0 ]
	[[ "$output" == *"to generation 2"* ]]
	cmp "$W/mod" "$R1/p"
	[ "$(gens)" = 1 ]
}

@test "in a region without versions an appender creates and fills new pools, but sync, mirror and import over a pool are refused (exit 4), its bytes unchanged; rollback still allowed" {
	as nightly mirror "$W/src" "$T/r2/p"
	[ "$status" -eq 0 ]
	cmp "$W/src" "$R2/p"
	before=$(snapshot "$R2")
	as nightly sync "$W/mod" "$T/r2/p"
	[ "$status" -eq 4 ]
	[[ "$output" == *"which keeps no versions: changing pool 'p' would lose its image of generation 1"* ]]
	as nightly mirror "$W/mod" "$T/r2/p"
	[ "$status" -eq 4 ]
	as nightly import --raw --force "$W/mod" "$T/r2/p"
	[ "$status" -eq 4 ]
	[ "$(snapshot "$R2")" = "$before" ]
	as ops list --json "$T/r2/p"
	[ "$(json '.pools[0].state')" = consistent ]
	[ "$(json '.pools[0].generation')" -eq 1 ]
	# a writer's interrupted sync: the appender may roll it back, not
	# finish it
	hold "$T/r2/p" 60 8192 "$W/ops.psk"
	kill -KILL "$HP"
	wait "$HP" || true
	HP=
	as nightly sync "$W/mod" "$T/r2/p"
	[ "$status" -eq 4 ]
	as nightly rollback "$T/r2/p"
	[ "$status" -eq 0 ]
	cmp "$W/src" "$R2/p"
}

@test "an appender's writes go over tcp: a write open over rdma is refused saying why" {
	as nightly mirror -t rdma "$W/src" "$T/r1/p"
	[ "$status" -ne 0 ]
	[[ "$output" == *"its writes go over tcp"* ]]
	! cmp -s "$W/src" "$R1/p"
}

@test "rpmemd -n accepts the append right and refuses a misspelt one naming all four" {
	run "$RPMEMD" -n -c "$CONF"
	[ "$status" -eq 0 ]
	sed -i 's/"append"/"apend"/' "$CONF"
	run "$RPMEMD" -n -c "$CONF"
	[ "$status" -ne 0 ]
	[[ "$output" == *"'apend' is not one of read, append, write, admin"* ]]
}

@test "rpmemd -n warns about an append-only rule on a region that keeps no versions (it can fill new pools only)" {
	run "$RPMEMD" -n -c "$CONF"
	[ "$status" -eq 0 ]
	[[ "$output" == *"identity 'nightly' may only append to region 'r2', which keeps no versions"* ]]
	[[ "$output" != *"region 'r1', which keeps no versions"* ]]
	# a write right on r2 as well: nothing to warn about
	sed -i 's|  { identity = "ops"; rights = \[ "admin" \]; },|  { identity = "ops"; rights = [ "admin" ]; },\n  { identity = "nightly"; regions = [ "r2" ]; rights = [ "write" ]; },|' "$CONF"
	run "$RPMEMD" -n -c "$CONF"
	[ "$status" -eq 0 ]
	[[ "$output" != *"keeps no versions"* ]]
}
