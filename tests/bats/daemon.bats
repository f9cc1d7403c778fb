#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# daemon.bats -- rpmemd's configuration check, reload and shutdown

load helpers

setup() { setup_env; }
teardown() { teardown_daemon; }

# keepalive_armed -- the daemon's end of the connection from port $PORT
# (in $line) shows its keepalive timer
keepalive_armed() {
	line=$(ss -tnoH state established "( sport = :$PORT )")
	[[ "$line" == *keepalive* ]]
}

@test "rpmemd -n accepts a good configuration" {
	run "$RPMEMD" -n -c "$CONF"
	[ "$status" -eq 0 ]
	[[ "$output" == *"configuration OK"* ]]
}

@test "rpmemd -n names the file and line of a syntax error" {
	printf 'port = 7636;\nregions = ( { name = "x"; type = = "dir"; } );\n' >"$W/bad.conf"
	run "$RPMEMD" -n -c "$W/bad.conf"
	[ "$status" -ne 0 ]
	[[ "$output" == *bad.conf* ]]
	[[ "$output" == *2* ]]
}

@test "rpmemd -n names the setting of a semantic error" {
	printf 'regions = ( { name = "x"; type = "floppy"; path = "%s"; } );\n' "$R1" >"$W/bad.conf"
	run "$RPMEMD" -n -c "$W/bad.conf"
	[ "$status" -ne 0 ]
	[[ "$output" == *floppy* || "$output" == *type* ]]
	printf 'regions = ( { name = "x"; type = "dir"; path = "%s/missing"; } );\n' "$W" >"$W/bad.conf"
	run "$RPMEMD" -n -c "$W/bad.conf"
	[ "$status" -ne 0 ]
	[[ "$output" == *missing* ]]
}

@test "rpmemd -n accepts limits.rdma_staging_max as a size and names it when it is not one" {
	echo 'limits = { rdma_staging_max = "512M"; };' >>"$CONF"
	run "$RPMEMD" -n -c "$CONF"
	[ "$status" -eq 0 ]
	[[ "$output" == *"configuration OK"* ]]
	sed -i 's/"512M"/"half"/' "$CONF"
	run "$RPMEMD" -n -c "$CONF"
	echo "$output"
	[ "$status" -ne 0 ]
	[[ "$output" == *"limits.rdma_staging_max: must be a size like"* ]]
}

@test "rpmemd refuses a non-loopback listener without authentication" {
	printf 'listen = ["0.0.0.0"];\nregions = ( { name = "x"; type = "dir"; path = "%s"; } );\n' "$R1" >"$W/open.conf"
	run "$RPMEMD" -n -c "$W/open.conf"
	[ "$status" -ne 0 ]
	[[ "$output" == *auth* ]]
}

@test "rpmemd -n with a missing file says so" {
	run "$RPMEMD" -n -c "$W/none.conf"
	[ "$status" -ne 0 ]
	[[ "$output" == *none.conf* ]]
}

@test "SIGTERM stops rpmemd with exit 0 and pools keep their state" {
	start_daemon
	mkfile "$W/src" 2
	rc mirror "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	kill -TERM "$DPID"
	wait "$DPID"
	DPID=
	grep -q '^state=consistent' "$R1/.rpmemd/p1.meta"
	start_daemon
	rc verify "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
}

@test "SIGHUP adds a region without dropping a session on an untouched region" {
	start_daemon
	rc create "$T/r1/p1" 1M
	hold "$T/r1/p1" 60
	local hp=$HP
	mkdir -p "$W/r2"
	cat >>"$CONF" <<CONF2
CONF2
	sed -i "s|^regions = (|regions = (\n  { name = \"r2\"; type = \"dir\"; path = \"$W/r2\"; },|" "$CONF"
	kill -HUP "$DPID"
	wait_for regions_are 2
	rc status --json "$T"
	[ "$(json '[.sessions[] | select(.region=="r1" and .pool=="p1")] | length')" -eq 1 ]
	# the holder still closes its pool cleanly
	kill -USR1 "$hp"
	wait "$hp"
}

@test "SIGHUP with a broken configuration keeps the old one" {
	start_daemon
	echo 'this is not a config' >"$CONF"
	kill -HUP "$DPID"
	# the reload has happened (and failed) once the daemon says so
	wait_for grep -q "reload failed, keeping the running configuration" \
		"$DLOG"
	kill -0 "$DPID"
	rc list --json "$T"
	[ "$status" -eq 0 ]
	[ "$(json '.regions[0].name')" = r1 ]
}

@test "a client connection has a 30 s keepalive, so a vanished client frees its pool in about a minute" {
	start_daemon
	rc create "$T/r1/p1" 1M
	hold "$T/r1/p1" 30
	local hp=$HP line=
	# the daemon's end of the held connection: source port $PORT; the
	# keepalive timer shows once nothing is waiting to be acknowledged
	wait_for keepalive_armed
	kill "$hp" 2>/dev/null || true
	wait "$hp" || true
	echo "ss: $line"
	# timer:(keepalive,29sec,0) or similar: armed, at most 30 s away
	[[ "$line" =~ timer:\(keepalive,([0-9.]+)(ms|sec), ]]
	local v=${BASH_REMATCH[1]} unit=${BASH_REMATCH[2]}
	if [ "$unit" = sec ]; then
		[ "${v%.*}" -le 30 ]
	fi
}
