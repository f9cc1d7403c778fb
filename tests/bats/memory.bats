#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# memory.bats -- what rpmemd keeps resident for open sessions: sessions
# that did a mirror's work and stay open, idle, cost a bounded amount of
# anonymous memory each (the daemon's /proc/PID/status RssAnon). The goal
# itself (1,024 sessions under 64 MiB) is measured by
# tests/bench/sessions.sh; this guards against a session keeping its
# large buffers (a 1 MiB reply buffer, 256 KiB of TLS buffers).

load helpers

SESSCLIENT=$BUILD/tests/sessclient
N=200

setup() {
	setup_env
	sed -i "s/^max_sessions = 16;/max_sessions = $((N + 16));/" "$CONF"
	"$RPMEMCTL" -q psk-gen -i bench "$W/bench.psk"
	cp "$W/bench.psk" "$W/server.psk"
	chmod 600 "$W/server.psk"
}

teardown() {
	if [ -n "${CLIENT_PID:-}" ]; then
		kill "$CLIENT_PID" 2>/dev/null || true
	fi
	teardown_daemon
}

# status_kib FIELD -- a field of the daemon's /proc/PID/status (KiB, count)
status_kib() {
	awk -v f="$1:" '$1 == f {print $2}' "/proc/$DPID/status"
}

# hold_sessions PER_KIB [PSK_FILE] -- N sessions through tests/sessclient
# (each creates its pool, writes, flushes, hashes, lists, asks STATUS),
# all open at once: the daemon runs a thread for each, and once they are
# idle its RssAnon is within what it was before they came + N x PER_KIB
hold_sessions() {
	local per=$1 line base now
	shift
	start_daemon
	base=$(status_kib RssAnon)
	coproc SC { "$SESSCLIENT" 127.0.0.1 "$PORT" r1 "$N" "$@"; }
	# bash unsets SC_PID when it reaps the coprocess: keep the pid
	CLIENT_PID=$SC_PID
	read -r -t 120 line <&"${SC[0]}"
	[ "$line" = "open $N" ]
	[ "$(status_kib Threads)" -gt "$N" ]
	# idle sessions give their buffers back within a tenth of a second
	wait_for rss_within $((base + N * per)) || true
	echo "# RssAnon: $base KiB idle, $now KiB with $N sessions" \
		"(bound $((base + N * per)) KiB)" >&3
	[ "$now" -le $((base + N * per)) ]
	[ "$(status_kib Threads)" -gt "$N" ]
	echo >&"${SC[1]}"
	read -r -t 60 line <&"${SC[0]}"
	[ "$line" = closed ]
	echo >&"${SC[1]}"
	wait "$CLIENT_PID"
	CLIENT_PID=
}

# rss_within KIB -- rpmemd's anonymous memory (in $now) is at most KIB
rss_within() {
	now=$(status_kib RssAnon)
	[ "$now" -le "$1" ]
}

@test "200 idle plaintext sessions that did a mirror's work keep under 64 KiB of anonymous memory each in rpmemd" {
	hold_sessions 64
}

@test "200 idle TLS sessions that did a mirror's work keep under 96 KiB of anonymous memory each in rpmemd" {
	cat >>"$CONF" <<CONF
tls = { psk_file = "$W/server.psk"; };
access = ( { identity = "bench"; regions = [ "*" ]; rights = [ "write" ]; } );
# all 200 are one identity's (by default it may hold half of max_sessions)
limits = { max_sessions_per_identity = $((N + 16)); };
CONF
	hold_sessions 96 "$W/bench.psk"
}
