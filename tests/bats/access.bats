#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# access.bats -- per-identity access rules over TLS with pre-shared keys:
# who may read, write and administer which region, and that a refusal
# changes nothing on the target

load helpers
load access

setup() {
	setup_env
	R2=$W/r2
	mkdir -p "$R2"
	access_keys
	default_rules | access_conf
	mkfile "$W/src" 4
	cp "$W/src" "$W/mod"
	poke "$W/mod" 8192
}

teardown() { teardown_daemon; }

# pool_state REGION POOL -- the pool's state as an admin lists it
pool_state() {
	run "$RPMEMCTL" list --json --psk-file "$W/ops.psk" "$T/$1"
	jq -r --arg n "$2" '.pools[] | select(.name == $n) | .state' \
		<<<"$output"
}

# no_writer POOL -- an admin's list of r1 shows POOL with no writer
no_writer() {
	as ops list --json "$T/r1"
	[ "$(json ".pools[] | select(.name == \"$1\") | .writer")" = "" ]
}

# reloads_past N -- the daemon has said "reload done" more than N times
reloads_past() {
	[ "$(grep -c "reload done" "$DLOG" || true)" -gt "$1" ]
}

# reload -- SIGHUP, then wait for the daemon to say it is done
reload() {
	local n
	n=$(grep -c "reload done" "$DLOG" || true)
	kill -HUP "$DPID"
	wait_for reloads_past "$n"
}

@test "a read-only identity lists every region, verifies and pulls" {
	start_daemon
	as ops mirror "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	as monitor list --json "$T"
	[ "$status" -eq 0 ]
	[ "$(json '[.regions[].name] | sort | join(",")')" = r1,r2 ]
	[ "$(json '[.pools[].name] | join(",")')" = p1 ]
	as monitor verify "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	as monitor sync --pull "$W/mod" "$T/r1/p1"
	[ "$status" -eq 0 ]
	cmp "$W/src" "$W/mod"
}

@test "a read-only identity cannot create, mirror, sync or remove: exit 4 naming identity, right and region, nothing changed" {
	start_daemon
	as ops mirror "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	as monitor create "$T/r1/new" 1M
	[ "$status" -eq 4 ]
	[[ "$output" == *"identity 'monitor' may not write region 'r1'"* ]]
	[ ! -e "$R1/new" ]
	as monitor mirror "$W/mod" "$T/r1/p1"
	[ "$status" -eq 4 ]
	[[ "$output" == *"may not write region 'r1'"* ]]
	as monitor mirror "$W/mod" "$T/r1/p2"
	[ "$status" -eq 4 ]
	[ ! -e "$R1/p2" ]
	as monitor sync "$W/mod" "$T/r1/p1"
	[ "$status" -eq 4 ]
	as monitor remove "$T/r1/p1"
	[ "$status" -eq 4 ]
	[[ "$output" == *"may not write region 'r1'"* ]]
	# the pool is the one ops wrote, still consistent
	cmp "$W/src" "$R1/p1"
	[ "$(pool_state r1 p1)" = consistent ]
	grep -q "notice: .*refused: identity 'monitor' may not write region 'r1'" "$DLOG"
}

@test "promote and demote need the write right: a read-only identity is refused (exit 4) and the role stays" {
	start_daemon
	as ops mirror "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	as monitor promote "$T/r1/p1"
	[ "$status" -eq 4 ]
	[[ "$output" == *"identity 'monitor' may not write region 'r1'"* ]]
	as ops list --json "$T/r1/p1"
	[ "$(json '.pools[0].role')" = secondary ]
	# the mirror's id only (it started the pool's history): no promotion
	[ "$(json '.pools[0].generations | length')" -eq 1 ]
	as backup1 promote "$T/r1/p1"
	[ "$status" -eq 0 ]
	as monitor demote "$T/r1/p1"
	[ "$status" -eq 4 ]
	as ops list --json "$T/r1/p1"
	[ "$(json '.pools[0].role')" = primary ]
	# a reader still reads the primary
	as monitor sync --pull "$W/mod" "$T/r1/p1"
	[ "$status" -eq 0 ]
	cmp "$W/src" "$W/mod"
}

@test "a writer on r1 does everything there" {
	start_daemon
	as backup1 create "$T/r1/a" 1M
	[ "$status" -eq 0 ]
	[ -e "$R1/a" ]
	as backup1 mirror "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	cmp "$W/src" "$R1/p1"
	as backup1 sync "$W/mod" "$T/r1/p1"
	[ "$status" -eq 0 ]
	cmp "$W/mod" "$R1/p1"
	as backup1 verify "$W/mod" "$T/r1/p1"
	[ "$status" -eq 0 ]
	as backup1 remove "$T/r1/a"
	[ "$status" -eq 0 ]
	[ ! -e "$R1/a" ]
}

@test "a writer on r1 neither sees nor touches r2" {
	start_daemon
	as ops mirror "$W/src" "$T/r2/q"
	[ "$status" -eq 0 ]
	as backup1 list --json "$T"
	[ "$status" -eq 0 ]
	[ "$(json '[.regions[].name] | join(",")')" = r1 ]
	[ "$(json '[.pools[] | select(.region == "r2")] | length')" -eq 0 ]
	as backup1 list "$T/r2"
	[ "$status" -eq 4 ]
	[[ "$output" == *"identity 'backup1' may not read region 'r2'"* ]]
	as backup1 verify "$W/src" "$T/r2/q"
	[ "$status" -eq 4 ]
	[[ "$output" == *"may not read region 'r2'"* ]]
	as backup1 sync --pull "$W/mod" "$T/r2/q"
	[ "$status" -eq 4 ]
	as backup1 mirror "$W/mod" "$T/r2/q"
	[ "$status" -eq 4 ]
	[[ "$output" == *"may not write region 'r2'"* ]]
	as backup1 create "$T/r2/x" 1M
	[ "$status" -eq 4 ]
	[ ! -e "$R2/x" ]
	as backup1 remove "$T/r2/q"
	[ "$status" -eq 4 ]
	cmp "$W/src" "$R2/q"
	[ "$(pool_state r2 q)" = consistent ]
	# a region that does not exist gets the same answer: nothing leaks
	as backup1 list "$T/r9"
	[ "$status" -eq 4 ]
	[[ "$output" == *"may not read region 'r9'"* ]]
}

@test "an identity without a rule authenticates but gets no session: list, status and everything else refused (exit 4)" {
	start_daemon
	as ops mirror "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	as nobody list "$T"
	[ "$status" -eq 4 ]
	[[ "$output" == *"identity 'nobody' has no access rules on this target"* ]]
	as nobody status "$T"
	[ "$status" -eq 4 ]
	as nobody verify "$W/src" "$T/r1/p1"
	[ "$status" -eq 4 ]
	[[ "$output" == *"identity 'nobody' has no access rules on this target"* ]]
	as nobody create "$T/r1/x" 1M
	[ "$status" -eq 4 ]
	[ ! -e "$R1/x" ]
	as nobody mirror "$W/mod" "$T/r1/p1"
	[ "$status" -eq 4 ]
	as nobody remove "$T/r1/p1"
	[ "$status" -eq 4 ]
	cmp "$W/src" "$R1/p1"
}

@test "status shows a non-admin its own sessions and an admin every session, with identity and auth" {
	start_daemon
	as ops create "$T/r1/p1" 1M
	[ "$status" -eq 0 ]
	"$BUILD/tests/hold_pool" "$T/r1/p1" 30 "$W/backup1.psk" \
		>"$W/hold.out" 2>&1 &
	local hp=$!
	alive_until "$hp" grep -q holding "$W/hold.out"
	as monitor status --json "$T"
	local mon=$output mon_rc=$status
	as ops status --json "$T"
	local adm=$output adm_rc=$status
	as ops status "$T"
	local human=$output
	kill "$hp"
	wait "$hp" || true
	[ "$mon_rc" -eq 0 ]
	[ "$adm_rc" -eq 0 ]
	# monitor: only its own (the status session itself)
	[ "$(jq '.sessions | length' <<<"$mon")" -ge 1 ]
	[ "$(jq '[.sessions[] | select(.identity != "monitor")] | length' \
		<<<"$mon")" -eq 0 ]
	# ops: the backup1 writer too, and who it is
	[ "$(jq -r '.sessions[] | select(.region == "r1" and .pool == "p1") | .identity' \
		<<<"$adm")" = backup1 ]
	[ "$(jq -r '.sessions[] | select(.region == "r1" and .pool == "p1") | .auth' \
		<<<"$adm")" = psk ]
	[ "$(jq -r '.sessions[] | select(.region == "r1" and .pool == "p1") | .access' \
		<<<"$adm")" = rw ]
	[ "$(jq '[.sessions[] | select(.identity == "ops")] | length' \
		<<<"$adm")" -ge 1 ]
	[[ "$human" == *IDENTITY* ]]
	[[ "$human" == *backup1* ]]
}

@test "kick needs the admin right: a writer is refused (exit 4), an admin ends the session and frees its pool" {
	start_daemon
	as ops create "$T/r1/p1" 1M
	[ "$status" -eq 0 ]
	"$BUILD/tests/hold_pool" "$T/r1/p1" 30 "$W/backup1.psk" \
		>"$W/hold.out" 2>&1 &
	local hp=$!
	alive_until "$hp" grep -q holding "$W/hold.out"
	as ops status --json "$T"
	local sid
	sid=$(jq -r '.sessions[] | select(.region == "r1" and .pool == "p1") | .id' <<<"$output")
	[ -n "$sid" ]
	as backup1 kick "$T" "$sid"
	[ "$status" -eq 4 ]
	[[ "$output" == *"identity 'backup1'"* ]]
	kill -0 "$hp"
	as ops kick "$T" "$sid"
	[ "$status" -eq 0 ]
	wait "$hp" || true
	# the daemon's own view: the pool has no writer any more
	wait_for no_writer p1
	[ "$(jq -r '.pools[] | select(.name == "p1") | .writer' <<<"$output")" = "" ]
	grep -q "kicked session $sid" "$DLOG"
}

# man_section PAGE HEADING -- the source of section HEADING of PAGE (its
# .SS or .SH line up to the next one)
man_section() {
	awk -v h="$2" 'index($0, h) == 1 { on = 1; print; next }
		on && /^\.S[SH] / { exit }
		on' "$TOP/man/$1"
}

@test "the man pages and PROTOCOL.md describe the admin right and authentication as the test above finds them enforced, not as future work" {
	local kick notes
	kick=$(man_section rpmemctl.1 ".SS kick")
	notes=$(man_section rpmemctl.1 ".SH NOTES")
	[ -n "$kick" ]
	[ -n "$notes" ]
	# kick: the admin right of the access rules, not "everyone, for now"
	[[ "$kick" != *"in this version"* ]]
	[[ "$kick" == *$'.B admin\nright of the target\'s access rules'* ]]
	[[ "$kick" == *"rpmemd.conf (5)"* ]]
	# ... which rpmemd.conf(5) defines as the right to disconnect sessions
	grep -A3 '^\.B admin$' "$TOP/man/rpmemd.conf.5" | grep -q "may disconnect"
	# NOTES: rpmemd authenticates (TLS) and enforces rules; no "until"
	[[ "$notes" != *"Until"* ]]
	[[ "$notes" == *"access rules"* ]]
	refute grep -q "does not check that yet" "$TOP/docs/PROTOCOL.md"
}

@test "a reload that takes away the write right refuses the next mirror and leaves the pool as it was" {
	start_daemon
	as backup1 mirror "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	access_conf <<'RULES'
access = (
  { identity = "backup1"; regions = [ "r1" ]; rights = [ "read" ]; },
  { identity = "ops"; rights = [ "admin" ]; },
  { identity = "ops"; regions = [ "*" ]; rights = [ "write" ]; }
);
RULES
	reload
	as backup1 mirror "$W/mod" "$T/r1/p1"
	[ "$status" -eq 4 ]
	[[ "$output" == *"identity 'backup1' may not write region 'r1'"* ]]
	cmp "$W/src" "$R1/p1"
	[ "$(pool_state r1 p1)" = consistent ]
	# reading is still allowed; monitor lost every right
	as backup1 verify "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	as monitor list "$T"
	[ "$status" -eq 4 ]
}

@test "tls without access rules: rpmemd -n and the start warn that nobody may do anything" {
	: | access_conf
	run "$RPMEMD" -n -c "$CONF"
	[ "$status" -eq 0 ]
	[[ "$output" == *"no access rules: nobody may do anything"* ]]
	start_daemon
	grep -q "no access rules: nobody may do anything" "$DLOG"
	as ops list "$T"
	[ "$status" -eq 4 ]
}

@test "rpmemd -n refuses an unknown right at its line and warns about an unknown region" {
	access_conf <<'RULES'
access = (
  { identity = "ops";
    rights = [ "admin", "root" ]; }
);
RULES
	run "$RPMEMD" -n -c "$CONF"
	[ "$status" -eq 1 ]
	[[ "$output" == *"rpmemd.conf:12: access[0].rights: 'root' is not one of read, append, write, admin"* ]]
	access_conf <<'RULES'
access = ( { identity = "ops"; regions = [ "r7" ]; rights = [ "read" ]; } );
RULES
	run "$RPMEMD" -n -c "$CONF"
	[ "$status" -eq 0 ]
	[[ "$output" == *"rpmemd.conf:10: access: identity 'ops': there is no region 'r7'"* ]]
}

@test "a plaintext daemon ignores access rules: every client may do everything" {
	write_conf "$CONF" "$PORT"
	echo 'access = ( { identity = "ops"; rights = [ "admin" ]; } );' >>"$CONF"
	run "$RPMEMD" -n -c "$CONF"
	[[ "$output" == *"apply only to TLS sessions"* ]]
	start_daemon
	rc mirror "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	cmp "$W/src" "$R1/p1"
	rc status --json "$T"
	[ "$status" -eq 0 ]
	[ "$(json '.sessions[0].auth')" = none ]
	[ "$(json '.sessions[0].identity')" = "" ]
}

@test "an admin-only identity (the man page's ops) lists no regions and sees status: exit 0, not NOREGION" {
	access_conf <<'RULES'
access = (
  { identity = "backup1"; regions = [ "r1" ]; rights = [ "write" ]; },
  { identity = "ops"; rights = [ "admin" ]; }
);
RULES
	start_daemon
	as backup1 create "$T/r1/p1" 1M
	[ "$status" -eq 0 ]
	as ops list --json "$T"
	[ "$status" -eq 0 ]
	[ "$(json '.regions | length')" -eq 0 ]
	[ "$(json '.pools | length')" -eq 0 ]
	as ops status --json "$T"
	[ "$status" -eq 0 ]
	[ "$(json '[.sessions[] | select(.identity == "ops")] | length')" -ge 1 ]
	as ops status "$T"
	[ "$status" -eq 0 ]
	# a region it may not read is still refused, as before
	as ops list "$T/r1"
	[ "$status" -eq 4 ]
}

# probe ID NAME ARGS... -- sess_probe as identity ID in the background,
# output in $W/NAME.out; waits until it holds its session (or ended)
probe() {
	local id=$1 name=$2
	shift 2
	"$BUILD/tests/sess_probe" 127.0.0.1 "$PORT" "$W/$id.psk" "$@" \
		>"$W/$name.out" 2>&1 &
	PROBES+=("$!")
	# holding, or refused (the test looks at which)
	alive_until "$!" grep -q holding "$W/$name.out" || true
}

# end_probes -- stop the probes still running
end_probes() {
	local p
	for p in "${PROBES[@]}"; do
		kill "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	PROBES=()
}

# sessions_of ID -- established sessions of identity ID, as ops sees them
sessions_of() {
	"$RPMEMCTL" status --json --psk-file "$W/ops.psk" "$T" |
		jq --arg i "$1" '[.sessions[] | select(.identity == $i)] | length'
}

# sessions_are IDENTITY N -- IDENTITY has N sessions
sessions_are() {
	[ "$(sessions_of "$1")" -eq "$2" ]
}

@test "a session holding no pool is closed after session_idle_timeout, told why; one holding a pool is not" {
	{ default_rules; echo 'limits = { session_idle_timeout = 1; };'; } |
		access_conf
	start_daemon
	as ops create "$T/r1/p1" 1M
	[ "$status" -eq 0 ]
	"$BUILD/tests/hold_pool" "$T/r1/p1" 30 "$W/backup1.psk" \
		>"$W/hold.out" 2>&1 &
	PROBES=("$!")
	probe monitor idle hold 30
	# hold_pool runs beside the probe: its line may come after the probe's
	wait_for grep -q holding "$W/hold.out"
	grep -q holding "$W/idle.out"
	# the daemon closes the idle one by itself
	wait_for sessions_are monitor 0
	grep -q "no request for 1 s with no pool open (session_idle_timeout); closing the session" "$DLOG"
	# the writer keeps its pool and its session. not a wait: time
	# passing is the subject, the 1 s session_idle_timeout let expire
	sleep 1.5
	[ "$(sessions_of backup1)" -eq 1 ]
	as ops list --json "$T/r1"
	[ "$(json '.pools[] | select(.name == "p1") | .writer')" != "" ]
	end_probes
	# a client told why: its next request fails with the reason
	run "$BUILD/tests/sess_probe" 127.0.0.1 "$PORT" "$W/monitor.psk" hold 3
	[ "$status" -eq 1 ]
	[[ "$output" == *"closed: "*"session_idle_timeout"* ]]
}

@test "max_sessions_per_identity refuses an identity's next session with the reason, and other identities still connect" {
	{ default_rules; echo 'limits = { max_sessions_per_identity = 2; };'; } |
		access_conf
	start_daemon
	PROBES=()
	probe backup1 b1 hold 30
	probe backup1 b2 hold 30
	grep -q holding "$W/b1.out"
	grep -q holding "$W/b2.out"
	as backup1 list "$T/r1"
	[ "$status" -eq 4 ]
	[[ "$output" == *"identity 'backup1' has 2 sessions already (max_sessions_per_identity = 2)"* ]]
	as monitor list "$T/r1"
	[ "$status" -eq 0 ]
	[ "$(sessions_of backup1)" -eq 2 ]
	grep -q "identity 'backup1'): session refused: .*max_sessions_per_identity" "$DLOG"
	end_probes
}

@test "with the defaults, non-admins fill max_sessions but the reserved slots: an admin still connects and kicks one" {
	# max_sessions = 16: at most 8 per identity, the last 2 for admins
	start_daemon
	PROBES=()
	for i in $(seq 8); do
		probe backup1 "b$i" hold 60
		grep -q holding "$W/b$i.out"
	done
	as backup1 list "$T/r1"
	[ "$status" -eq 4 ]
	[[ "$output" == *"identity 'backup1' has 8 sessions already (max_sessions_per_identity = 8)"* ]]
	for i in $(seq 6); do
		probe monitor "m$i" hold 60
		grep -q holding "$W/m$i.out"
	done
	# 14 taken: the last 2 slots are an admin's
	as monitor list "$T"
	[ "$status" -eq 4 ]
	[[ "$output" == *"the last 2 of max_sessions = 16 are reserved for administrators"* ]]
	as ops status --json "$T"
	[ "$status" -eq 0 ]
	[ "$(json '[.sessions[] | select(.identity != "ops")] | length')" -eq 14 ]
	local sid
	sid=$(json '[.sessions[] | select(.identity == "backup1")][0].id')
	as ops kick "$T" "$sid"
	[ "$status" -eq 0 ]
	wait_for sessions_are backup1 7
	grep -q "kicked session $sid" "$DLOG"
	end_probes
}

@test "an identity without any rule is refused at the handshake (exit 4, told why) and keeps no session" {
	start_daemon
	PROBES=()
	run "$BUILD/tests/sess_probe" 127.0.0.1 "$PORT" "$W/nobody.psk" hold 5
	[ "$status" -eq 3 ]
	[[ "$output" == *"identity 'nobody' has no access rules on this target"* ]]
	[[ "$output" != *holding* ]]
	as nobody status "$T"
	[ "$status" -eq 4 ]
	[[ "$output" == *"identity 'nobody' has no access rules on this target"* ]]
	[ "$(sessions_of nobody)" -eq 0 ]
	grep -q "identity 'nobody'): session refused: identity 'nobody' has no access rules" "$DLOG"
	# no session was opened for it (sessions opened are logged at info)
	[ "$(grep -c "session refused: identity 'nobody'" "$DLOG")" -eq 2 ]
	[ "$(grep -c ') opened$' "$DLOG")" -eq 1 ]
}

@test "a writer's source and client string with C1 and bidi controls reach the daemon's files and a read-only identity's status as '?'" {
	start_daemon
	local evil=$'src\xc2\x9b2J\xc2\x9d0;t\x07\xe2\x80\xaegnp.exe'
	local ctl=$'ctl\xc2\x9b31m\xe2\x81\xa6'
	cp "$W/src" "$W/$evil"
	ln -s "$RPMEMCTL" "$W/$ctl"
	run "$W/$ctl" mirror --psk-file "$W/ops.psk" "$W/$evil" "$T/r1/p1"
	[ "$status" -eq 0 ]
	# the daemon's own record: every control one '?'
	grep -a '^source=' "$R1/.rpmemd/p1.meta" >"$W/meta.src"
	cat "$W/meta.src"
	grep -qF 'src?2J?0;t??gnp.exe' "$W/meta.src"
	refute raw_controls "$W/meta.src"
	# the status session row of the client itself, and the pool's source
	run "$W/$ctl" status --psk-file "$W/monitor.psk" "$T"
	echo "$output"
	[ "$status" -eq 0 ]
	printf '%s' "$output" >"$W/status.out"
	grep -qF 'src?2J?0;t??gnp.exe' "$W/status.out"
	grep -qF 'ctl?31m? librpmemctl/' "$W/status.out"
	refute raw_controls "$W/status.out"
}
