#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# events.bats -- rpmemctl events: what happens on a daemon, in order, as
# it happens; the current state first with --now; a subscriber that stalls
# holds nobody up; an identity sees only what it may read

load helpers

setup() {
	setup_env
	mkfile "$W/src" 2
}
teardown() {
	if [ -n "${EPID:-}" ]; then
		kill -CONT "$EPID" 2>/dev/null || true
		kill "$EPID" 2>/dev/null || true
		wait "$EPID" 2>/dev/null || true
	fi
	teardown_daemon
}

# finished -- the background subscriber exited 0 (its --count reached)
finished() {
	wait "$EPID"
	EPID=
}

# live OUT -- the live events after the marker, one JSON object a line
live() {
	sed -n '/"object":"-"/,$p' "$1" | tail -n +2
}

# conform OUT -- every line of OUT has exactly the keys and types of the
# schema's events object
conform() {
	while IFS= read -r line; do
		printf '%s\n' "$line" |
			python3 "$TOP/tests/json/check.py" \
				"$TOP/tests/json/schema.json" events
	done <"$1"
}

@test "events: create, mirror and remove appear in order, with the pool, its state, generation and the bytes moved" {
	start_daemon
	# --now: the subscriber's own session, then the marker; then 13 live
	subscribe "$W/ev" --count 15 --timeout 30 "$T"
	"$RPMEMCTL" create "$T/r1/p1" 2M
	"$RPMEMCTL" mirror "$W/src" "$T/r1/p1"
	"$RPMEMCTL" remove "$T/r1/p1"
	finished
	conform "$W/ev"
	run live "$W/ev"
	[ "$(jq -s length <<<"$output")" -eq 13 ]
	# what happened to the pool, in order
	run jq -r 'select(.object != "session") |
		"\(.event) \(.object) \(.region)/\(.pool) \(.state) \(.generation) \(.bytes) \(.text)"' <<<"$(live "$W/ev")"
	[ "${lines[0]}" = "create pool r1/p1 empty 0 0 " ]
	[ "${lines[1]}" = "change pool r1/p1 syncing 0 0 " ]
	[ "${lines[2]}" = "create transfer r1/p1 empty 0 0 " ]
	[ "${lines[3]}" = "change pool r1/p1 consistent 1 0 " ]
	[ "${lines[4]}" = "destroy transfer r1/p1 empty 0 2097152 consistent" ]
	# the pool took the mirror's generation history (GEN adopt)
	[ "${lines[5]}" = "change pool r1/p1 consistent 1 0 adopt role:secondary disk:Consistent" ]
	[ "${lines[6]}" = "destroy pool r1/p1 empty 0 0 " ]
	[ "${#lines[@]}" -eq 7 ]
	# each command was one session, opened then closed
	run jq -r 'select(.object == "session") | "\(.event) \(.session)"' \
		<<<"$(live "$W/ev")"
	[ "${#lines[@]}" -eq 6 ]
	[ "${lines[0]%% *}" = create ]
	[ "${lines[1]%% *}" = destroy ]
	[ "${lines[0]#* }" = "${lines[1]#* }" ]
	# the pool's size and the mirror's session on the pool events
	jq -se 'map(select(.event == "create" and .object == "pool")) |
		.[0].pool_size == 2097152' <<<"$(live "$W/ev")"
	# the transfer's bytes are what the daemon counted into its session
	jq -se 'map(select(.event == "destroy" and .object == "session" and
		.bytes > 0)) | length == 1 and .[0].bytes == 2097152' \
		<<<"$(live "$W/ev")"
}

@test "events: human lines say VERB OBJECT key:value, and --timeout ends a stream that is short of --count with 1" {
	start_daemon
	"$RPMEMCTL" mirror "$W/src" "$T/r1/p1"
	wait_for closed 1
	run "$RPMEMCTL" events --now --count 5 --timeout 1 "$T"
	[ "$status" -eq 1 ]
	[[ "${lines[0]}" == "exists pool name:r1/p1 state:consistent generation:1 size:2097152" ]]
	[[ "${lines[1]}" == "exists session id:"*" peer:127.0.0.1:"* ]]
	[ "${lines[2]}" = "exists -" ]
	[ "${#lines[@]}" -eq 3 ]
}

@test "events --now: existing pools with their state and generation come first, then the marker" {
	start_daemon
	"$RPMEMCTL" create "$T/r1/a" 64K
	"$RPMEMCTL" mirror "$W/src" "$T/r1/b"
	"$RPMEMCTL" mirror "$W/src" "$T/r1/b"
	wait_for closed 3
	run "$RPMEMCTL" events --now --json --count 4 "$T"
	[ "$status" -eq 0 ]
	printf '%s\n' "$output" >"$W/ev"
	conform "$W/ev"
	run jq -r '"\(.event) \(.object) \(.pool) \(.state) \(.generation)"' "$W/ev"
	[ "${lines[0]}" = "exists pool a empty 0" ]
	[ "${lines[1]}" = "exists pool b consistent 2" ]
	[ "${lines[2]}" = "exists session  empty 0" ]
	[ "${lines[3]}" = "exists -  empty 0" ]
	# what --now says is what list says
	[ "$("$RPMEMCTL" list --json "$T/r1/b" | jq -r '.pools[0].generation')" -eq 2 ]
}

@test "events: a subscriber that never reads holds no mirror up; overflow events count every event lost" {
	cat >>"$CONF" <<'CONF'
limits = { event_queue = 8; };
CONF
	start_daemon
	"$RPMEMCTL" create "$T/r1/churn" 64K
	subscribe "$W/ev" "$T"
	kill -STOP "$EPID"
	# thousands of events, far more than the queue and the socket hold
	"$BUILD/tests/state_churn" "$T/r1/churn" 3000
	"$RPMEMCTL" mirror "$W/src" "$T/r1/p1"
	"$RPMEMCTL" verify "$W/src" "$T/r1/p1"
	# the daemon is still at everyone's service
	[ "$("$RPMEMCTL" list --json "$T/r1/p1" | jq -r '.pools[0].state')" = consistent ]
	kill -CONT "$EPID"
	alive_until "$EPID" grep -q '"event":"overflow"' "$W/ev"
	kill "$EPID"
	wait "$EPID" || true
	EPID=
	# one overflow event per time the queue ran full (the socket may take
	# a few events while the subscriber is stopped, so it can fill twice)
	[ "$(grep -c '"event":"overflow"' "$W/ev")" -ge 1 ]
	lost=$(jq -s '[.[] | select(.event == "overflow") | .lost] | add' "$W/ev")
	[ "$lost" -gt 0 ]
	delivered=$(live "$W/ev" | grep -vc '"event":"overflow"')
	# every event of the churn (6000) and the mirror's session: delivered
	# or counted as lost, none missing silently
	[ "$((delivered + lost))" -ge 6000 ]
	grep -q "event subscriber lost [0-9]* events" "$DLOG"
}

@test "events: a read-only identity sees its region's pools and its own sessions, not another region's nor other identities' sessions" {
	mkdir -p "$W/r2"
	: >"$W/server.psk"
	chmod 600 "$W/server.psk"
	for id in reader writer; do
		"$RPMEMCTL" -q psk-gen -i "$id" "$W/$id.psk"
		cat "$W/$id.psk" >>"$W/server.psk"
	done
	cat >"$CONF" <<CONF
listen = ["127.0.0.1"];
port = $PORT;
log = { level = "info"; target = "stderr"; };
regions = (
  { name = "r1"; type = "dir"; path = "$R1"; },
  { name = "r2"; type = "dir"; path = "$W/r2"; }
);
tls = { psk_file = "$W/server.psk"; };
access = (
  { identity = "reader"; regions = [ "r1" ]; rights = [ "read" ]; },
  { identity = "writer"; regions = [ "*" ]; rights = [ "write" ]; }
);
CONF
	start_daemon
	"$RPMEMCTL" mirror --psk-file "$W/writer.psk" "$W/src" "$T/r2/hidden"
	# --now: r1 has no pool yet; its own session; the marker; then the
	# five events of the mirror into r1
	subscribe "$W/ev" --psk-file "$W/reader.psk" --count 7 --timeout 30 "$T"
	"$RPMEMCTL" mirror --psk-file "$W/writer.psk" "$W/src" "$T/r2/hidden"
	"$RPMEMCTL" mirror --psk-file "$W/writer.psk" "$W/src" "$T/r1/seen"
	finished
	conform "$W/ev"
	refute grep -q '"region":"r2"' "$W/ev"
	# no session of another identity (its transfers into r1 are shown,
	# with their identity: rpmemctl(1), events)
	refute grep -q '"object":"session".*"identity":"writer"' "$W/ev"
	[ "$(jq -r 'select(.object == "session") | .identity' "$W/ev")" = reader ]
	run jq -r 'select(.object == "pool" or .object == "transfer") |
		"\(.event) \(.object) \(.region)/\(.pool)"' <<<"$(live "$W/ev")"
	[ "${lines[0]}" = "create pool r1/seen" ]
	[ "${lines[4]}" = "destroy transfer r1/seen" ]
	[ "${#lines[@]}" -eq 5 ]
}

@test "events: a bad --count or --timeout exits 2" {
	rc events --count 0 127.0.0.1:1
	[ "$status" -eq 2 ]
	rc events --timeout x 127.0.0.1:1
	[ "$status" -eq 2 ]
}
