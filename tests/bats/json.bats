#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# json.bats -- every command's --json object has exactly the keys and types of tests/json/schema.json
#
# The schema file is the one place a key is added (see docs/JSON.md,
# "Adding a key"); these tests need no change for a new key.

load helpers

SCHEMA=$TOP/tests/json/schema.json
CHECK=$TOP/tests/json/check.py

setup() {
	setup_daemon
	mkfile "$W/src" 1
}
teardown() { teardown_daemon; }

# jrun COMMAND ARGS... -- rpmemctl COMMAND --json ARGS...: its stdout,
# byte for byte, in $W/out (and in $output), its exit code in $status
jrun() {
	LAST=$1
	shift
	status=0
	"$RPMEMCTL" "$LAST" --json "$@" >"$W/out" 2>"$W/err" || status=$?
	output=$(cat "$W/out")
	cat "$W/err"
}

# conforms -- the last jrun wrote one line, one object, with exactly the
# keys schema.json gives its command (no key missing, none extra), each
# of its type, at every depth
conforms() {
	python3 "$CHECK" "$SCHEMA" "$LAST" <"$W/out"
}

# names_pool REGION POOL -- the last object says the daemon as HOST:PORT
# and the pool in its own keys
names_pool() {
	[ "$(json .target)" = "127.0.0.1:$PORT" ]
	[ "$(json .region)" = "$1" ]
	[ "$(json .pool)" = "$2" ]
}

@test "list --json with pools: exactly the keys and types of the schema, in every region and pool" {
	"$RPMEMCTL" create "$T/r1/empty" 64K
	"$RPMEMCTL" mirror "$W/src" "$T/r1/p1"
	jrun list "$T"
	[ "$status" -eq 0 ]
	conforms
	[ "$(json .target)" = "127.0.0.1:$PORT" ]
	[ "$(json '.regions | length')" -eq 1 ]
	[ "$(json '.pools | length')" -eq 2 ]
	[ "$(json '.pools[] | select(.name == "p1") | .created_at')" -gt 0 ]
	[ "$(json '.pools[] | select(.name == "p1") | .last_sync_at')" -gt 0 ]
	[ "$(json '.pools[] | select(.name == "empty") | .last_sync_at')" -eq 0 ]
	jrun list "$T/r1/p1"
	[ "$status" -eq 0 ]
	conforms
	[ "$(json '.pools | length')" -eq 1 ]
}

@test "status --json with pools and a writer session: exactly the keys and types of the schema, in every session" {
	"$RPMEMCTL" mirror "$W/src" "$T/r1/p1"
	hold "$T/r1/p1" 30
	local hp=$HP
	jrun status "$T"
	cat "$W/hold.out"
	kill "$hp"
	wait "$hp" || true
	[ "$status" -eq 0 ]
	conforms
	[ "$(json .target)" = "127.0.0.1:$PORT" ]
	[ "$(json .uptime_s)" -ge 0 ]
	[ "$(json '.pools | length')" -eq 1 ]
	# the holder, and the status session itself with no pool open (the
	# mirror's session may not have been reaped yet: it has none open)
	[ "$(json '[.sessions[] | select(.pool == "p1")] | length')" -eq 1 ]
	[ "$(json '.sessions[] | select(.pool == "p1") | .region')" = r1 ]
	[ "$(json '.sessions[] | select(.pool == "p1") | .access')" = rw ]
	[ "$(json '[.sessions[] | select(.pool == "")] | length')" -ge 1 ]
	[ "$(json '[.sessions[] | select(.pool == "")] |
		all(.region == "" and .access == "")')" = true ]
}

@test "create and remove --json: exactly the keys and types of the schema" {
	jrun create "$T/r1/db" 64K
	[ "$status" -eq 0 ]
	conforms
	names_pool r1 db
	[ "$(json .pool_size)" -eq 65536 ]
	[ "$(json .created)" = true ]
	jrun remove "$T/r1/db"
	[ "$status" -eq 0 ]
	conforms
	names_pool r1 db
	[ "$(json .forced)" = false ]
	"$RPMEMCTL" create "$T/r1/db" 64K
	jrun remove --force "$T/r1/db"
	[ "$status" -eq 0 ]
	conforms
	[ "$(json .forced)" = true ]
}

@test "promote and demote --json (in place, --to FILE): exactly the keys and types of the schema" {
	mkfile "$W/f" 1
	"$RPMEMCTL" mirror "$W/f" "$T/r1/db"
	jrun promote "$T/r1/db"
	[ "$status" -eq 0 ]
	conforms
	names_pool r1 db
	[ "$(json .role)" = primary ]
	jrun demote "$T/r1/db"
	[ "$status" -eq 0 ]
	conforms
	[ "$(json .role)" = secondary ]
	jrun promote --to "$W/g" "$T/r1/db"
	[ "$status" -eq 0 ]
	conforms
	[ "$(json .file)" = "$W/g" ]
	# the mirror's id, the in-place promotion's, and g's own
	[ "$(json '.generations | length')" -eq 3 ]
	jrun list "$T/r1/db"
	conforms
	[ "$(json '.pools[0].role')" = secondary ]
	[ "$(json '.pools[0].generations | length')" -eq 2 ]
}

@test "kick --json: exactly the keys and types of the schema" {
	"$RPMEMCTL" -q create "$T/r1/held" 64K
	hold "$T/r1/held" 30
	local hp=$HP
	local sid
	sid=$("$RPMEMCTL" status --json "$T" |
		jq -r '.sessions[] | select(.pool == "held") | .id')
	jrun kick "$T" "$sid"
	kill "$hp" 2>/dev/null || true
	wait "$hp" || true
	[ "$status" -eq 0 ]
	conforms
	[ "$(json .session)" -eq "$sid" ]
	[ "$(json .kicked)" = true ]
}

@test "mirror and sync --json (push, pull, dry run): exactly the keys and types of the schema, ranges only in a dry run" {
	jrun mirror "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	conforms
	names_pool r1 p1
	[ "$(json .operation)" = mirror ]
	[ "$(json .created)" = true ]
	[ "$(json .local_size)" -eq $((1 << 20)) ]
	[ "$(json 'has("ranges")')" = false ]
	poke "$W/src" 4096
	jrun sync --dry-run "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	conforms
	[ "$(json '.ranges | length')" -eq 1 ]
	jrun sync "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	conforms
	names_pool r1 p1
	[ "$(json .operation)" = push ]
	[ "$(json .created)" = false ]
	[ "$(json 'has("ranges")')" = false ]
	jrun sync --pull "$W/copy" "$T/r1/p1"
	[ "$status" -eq 0 ]
	conforms
	[ "$(json .operation)" = pull ]
	[ "$(json .local_created)" = true ]
	jrun sync --pull --dry-run "$W/missing" "$T/r1/p1"
	[ "$status" -eq 0 ]
	conforms
	jrun sync --dry-run "$W/src" "$T/r1/absent"
	[ "$status" -eq 0 ]
	conforms
	[ "$(json .pool)" = absent ]
}

@test "verify --json (identical, different, another size): exactly the keys and types of the schema, always with ranges" {
	"$RPMEMCTL" mirror "$W/src" "$T/r1/p1"
	jrun verify "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	conforms
	names_pool r1 p1
	[ "$(json .operation)" = verify ]
	[ "$(json '.ranges')" = "[]" ]
	poke "$W/src" 100
	jrun verify "$W/src" "$T/r1/p1"
	[ "$status" -eq 1 ]
	conforms
	[ "$(json '.ranges | length')" -eq 1 ]
	head -c $((2 << 20)) /dev/zero >"$W/big"
	jrun verify "$W/big" "$T/r1/p1"
	[ "$status" -eq 1 ]
	conforms
	[ "$(json .local_size)" -eq $((2 << 20)) ]
	[ "$(json .pool_size)" -eq $((1 << 20)) ]
}

@test "bench --json: exactly the keys and types of the schema" {
	jrun bench --size 1M --count 20 "$T/r1/b"
	[ "$status" -eq 0 ]
	conforms
	names_pool r1 b
	[ "$(json .created)" = true ]
}

@test "import and scrub --json: exactly the keys and types of the schema, findings of a damaged pool too" {
	jrun import --raw "$W/src" "$T/r1/i"
	[ "$status" -eq 0 ]
	conforms
	names_pool r1 i
	[ "$(json .input)" = "$W/src" ]
	jrun scrub "$T/r1/i"
	[ "$status" -eq 0 ]
	conforms
	names_pool r1 i
	poke "$R1/i" 100
	jrun scrub "$T/r1/i"
	[ "$status" -eq 7 ]
	conforms
	[ "$(json '.findings | length')" -eq 1 ]
}

@test "versions --json and scrub --at --json: exactly the keys and types of the schema" {
	stop_daemon
	sed -i "s|path = \"$R1\"; }|path = \"$R1\"; versions = \"all\"; }|" "$CONF"
	start_daemon
	"$RPMEMCTL" -q mirror "$W/src" "$T/r1/v"
	jrun versions "$T/r1/v"
	[ "$status" -eq 0 ]
	conforms
	[ "$(json '.versions | length')" -eq 0 ]
	poke "$W/src" 100
	"$RPMEMCTL" -q sync "$W/src" "$T/r1/v"
	jrun versions "$T/r1/v"
	[ "$status" -eq 0 ]
	conforms
	names_pool r1 v
	[ "$(json '.versions[0].generation')" -eq 1 ]
	jrun scrub --at 1 "$T/r1/v"
	[ "$status" -eq 0 ]
	conforms
	[ "$(json .version)" -eq 1 ]
	jrun list "$T/r1/v"
	conforms
	[ "$(json '.pools[0].versions')" -eq 1 ]
	[ "$(json '.pools[0].versions_bytes')" -gt 0 ]
	[ "$(json '.regions[0].versions_bytes')" = "$(json '.pools[0].versions_bytes')" ]
	jrun versions --prune 1 "$T/r1/v"
	[ "$status" -eq 0 ]
	conforms
	[ "$(json '.pruned | join(",")')" = 1 ]
}

@test "the schema check refuses a missing key, a key not in the schema and a key of another type" {
	jrun create "$T/r1/db" 64K
	conforms
	jq -c 'del(.pool)' "$W/out" >"$W/bad"
	run python3 "$CHECK" "$SCHEMA" create <"$W/bad"
	[ "$status" -eq 1 ]
	[ "$output" = "create.pool: missing (create)" ]
	jq -c '.extra = 1' "$W/out" >"$W/bad"
	run python3 "$CHECK" "$SCHEMA" create <"$W/bad"
	[ "$status" -eq 1 ]
	[ "$output" = "create.extra: not in the schema (create)" ]
	jq -c '.pool_size = "65536"' "$W/out" >"$W/bad"
	run python3 "$CHECK" "$SCHEMA" create <"$W/bad"
	[ "$status" -eq 1 ]
	[ "$output" = "create.pool_size: is string, not integer" ]
	# and a nested one: a pool's created_at as a boolean
	"$RPMEMCTL" mirror "$W/src" "$T/r1/p1"
	jrun list "$T"
	jq -c '.pools[0].created_at = true' "$W/out" >"$W/bad"
	run python3 "$CHECK" "$SCHEMA" list <"$W/bad"
	[ "$status" -eq 1 ]
	[ "$output" = "list.pools[0].created_at: is boolean, not integer" ]
}

@test "every key of the schema file is documented in docs/JSON.md" {
	local k missing=
	for k in $(python3 "$CHECK" --keys "$SCHEMA"); do
		grep -qE "[\`.]$k\`" "$TOP/docs/JSON.md" || missing="$missing $k"
	done
	echo "not in docs/JSON.md:$missing"
	[ -z "$missing" ]
	# and the schema number the documentation describes is the file's
	grep -q "describes \*\*schema $(jq .schema "$SCHEMA")\*\*" "$TOP/docs/JSON.md"
}

# strict_json FILE... -- each file is one JSON document as strict parsers
# see it: Python's json.loads on its raw bytes (which must be UTF-8)
strict_json() {
	python3 -c 'import json, sys
for f in sys.argv[1:]:
    json.loads(open(f, "rb").read())' "$@"
}

# strict_utf8 FILE... -- each file is well-formed UTF-8
strict_utf8() {
	python3 -c 'import sys
for f in sys.argv[1:]:
    open(f, "rb").read().decode("utf-8")' "$@"
}

@test "a local file name and a client name that are not UTF-8: mirror, list, status --json and --prometheus stay UTF-8, the target stores them as UTF-8" {
	local bad hold
	bad=$W/$(printf 'db\xe9\xff')
	cp "$W/src" "$bad"
	jrun mirror "$bad" "$T/r1/p1"
	[ "$status" -eq 0 ]
	cp "$W/out" "$W/mirror.json"
	# the client's own string: each stray byte is U+FFFD
	[ "$(json .local)" = "$W/db"$'\uFFFD\uFFFD' ]
	# the target stored the source as UTF-8 ('?' for each stray byte)
	strict_utf8 "$R1/.rpmemd/p1.meta"
	grep -q "^source=.*/db??\$" "$R1/.rpmemd/p1.meta"
	# a writer whose program name (its HELLO's client) is not UTF-8
	hold=$W/$(printf 'hold\xe9\xff')
	ln -s "$BUILD/tests/hold_pool" "$hold"
	"$hold" "$T/r1/p1" 30 >"$W/hold.out" 2>&1 &
	local hp=$!
	alive_until "$hp" grep -q holding "$W/hold.out"
	jrun list "$T"
	cp "$W/out" "$W/list.json"
	jrun status "$T"
	cp "$W/out" "$W/status.json"
	"$RPMEMCTL" status "$T" >"$W/status.txt"
	"$RPMEMCTL" status --prometheus "$T" >"$W/status.prom"
	kill "$hp"
	wait "$hp" || true
	strict_json "$W/mirror.json" "$W/list.json" "$W/status.json"
	# the text output is what the target sent, byte for byte
	strict_utf8 "$W/status.txt" "$W/status.prom"
	[ "$(json '.pools[0].source')" = "$(hostname):$W/db??" ]
	[ "$(json '.sessions[] | select(.pool == "p1") | .client')" != "" ]
	python3 "$TOP/tests/bats/promparse.py" <"$W/status.prom" >/dev/null
}

@test "a pool whose stored source is not UTF-8 (written by an older rpmemd): the target sends it as UTF-8" {
	"$RPMEMCTL" mirror "$W/src" "$T/r1/p1"
	stop_daemon
	sed -i "s|^source=.*|source=$(printf 'old\xe9\xff')|" "$R1/.rpmemd/p1.meta"
	start_daemon
	"$RPMEMCTL" status "$T" >"$W/status.txt"
	strict_utf8 "$W/status.txt"
	grep -q "old??" "$W/status.txt"
	jrun list "$T"
	strict_json "$W/out"
	[ "$(json '.pools[0].source')" = "old??" ]
}

# man_summary ARRAY -- the keys rpmemctl(1)'s JSON summary gives for
# ARRAY[] (from ".BR ARRAY []" to its closing ".BR KEY )." or ");", or
# the next array), one a line
man_summary() {
	awk -v start=".BR $1 []" '
		$0 == start { on = 1; next }
		!on { next }
		/^\.BR [a-z_]+ \[\]$/ { exit }
		/^\.BR? [a-z_]+ \)[.;]$/ { last = 1 }
		/^\.R?BR? / {
			sub(/^\.R?BR? (\( )?/, "")
			if ($1 ~ /^[a-z_]+$/) print $1
		}
		last { exit }
	' "$TOP/man/rpmemctl.1"
}

@test "rpmemctl(1)'s JSON summary names every key of sessions[], pools[] and regions[] that the schema (and docs/JSON.md) has" {
	local o k missing=
	for o in session:sessions pool:pools region:regions; do
		man_summary "${o#*:}" >"$W/man.keys"
		[ -s "$W/man.keys" ]
		for k in $(jq -r --arg o "${o%:*}" '.objects[$o] | keys[]' "$SCHEMA"); do
			grep -qx "$k" "$W/man.keys" || missing="$missing ${o#*:}[].$k"
		done
	done
	echo "not in rpmemctl(1):$missing"
	[ -z "$missing" ]
}
