#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# accept.bats -- from accept to HELLO_OK: every connection ends by
# handshake_timeout whatever it sends, a refusal costs the daemon little
# CPU, a vanished TLS client is not called a tamperer, and only loopback
# addresses listen without TLS

load helpers

HOSTILE="python3 $TOP/tests/peers/hostile.py"

setup() {
	setup_env
	# debug: each connection's end is logged, which the tests wait for
	sed -i 's/level = "info"/level = "debug"/' "$CONF"
}
teardown() {
	for p in ${BG:-}; do
		kill -9 "$p" 2>/dev/null || true
	done
	teardown_daemon
}

# with_tls -- TLS with the pre-shared key of identity alice ($W/alice.psk)
with_tls() {
	"$RPMEMCTL" -q psk-gen -i alice "$W/alice.psk"
	cat >>"$CONF" <<CONF
tls = { psk_file = "$W/alice.psk"; };
access = ( { identity = "alice"; regions = [ "*" ]; rights = [ "write", "admin" ]; } );
CONF
}

# logged N PATTERN -- the daemon log has at least N lines matching PATTERN
logged() {
	[ "$(grep -c -- "$2" "$DLOG")" -ge "$1" ]
}

# tls_written_some -- rpmemd counted some bytes written into r1/p1 (alice)
tls_written_some() {
	[ "$("$RPMEMCTL" list --psk-file "$W/alice.psk" --json "$T/r1/p1" |
		jq -r '.pools[0].bytes_written // 0')" -gt 0 ]
}

# cpu_ms PID -- the process's user + system CPU time so far, in ms
cpu_ms() {
	awk -v hz="$(getconf CLK_TCK)" \
		'{ sub(/^.*\) /, ""); print int(($12 + $13) * 1000 / hz) }' \
		"/proc/$1/stat"
}

# ended -- how many connections the daemon logged as ended before HELLO_OK
ended() {
	grep -c "closed before the handshake completed" "$DLOG" || true
}

@test "connections refused at the TLS handshake cost the daemon little CPU, even when they close early" {
	with_tls
	start_daemon
	wait_for logged 1 "closed before the handshake completed"
	local n0 c0 c1
	n0=$(ended)
	c0=$(cpu_ms "$DPID")
	run $HOSTILE "$PORT" garbage 20
	[ "$output" = "sent 20" ]
	wait_for logged $((n0 + 20)) "closed before the handshake completed"
	c1=$(cpu_ms "$DPID")
	echo "daemon CPU for 20 refused connections: $((c1 - c0)) ms"
	# a refusal drains for up to 1 s; polling, that costs well under 1 ms
	[ $((c1 - c0)) -lt 400 ]
}

# linger_closed KIND... -- for each KIND, 9 connections (one more than
# max_unauthenticated_per_address) that send KIND and then nothing are
# all closed by the daemon (EOF) within 3 x handshake_timeout (2 s), and
# an honest client from the same address is served after them (ARGS:
# its credentials)
linger_closed() {
	local k
	for k in "$@"; do
		run $HOSTILE "$PORT" linger 9 "$k" 6
		echo "$k: $output"
		[[ "$output" == "closed 9 of 9,"* ]]
		rc list ${CREDS:-} "$T"
		[ "$status" -eq 0 ]
	done
}

@test "without TLS, connections silent, sending a byte or all of HELLO but one are closed at handshake_timeout" {
	echo "limits = { handshake_timeout = 2; };" >>"$CONF"
	start_daemon
	linger_closed silent byte hello-part
	grep -q "no handshake within handshake_timeout = 2 s; closed" "$DLOG"
}

@test "with TLS, connections silent, sending a byte or a partial ClientHello are closed at handshake_timeout" {
	with_tls
	echo "limits = { handshake_timeout = 2; };" >>"$CONF"
	start_daemon
	CREDS="--psk-file $W/alice.psk"
	linger_closed silent tls-byte tls-part
	grep -q "no handshake within handshake_timeout = 2 s; closed" "$DLOG"
}

@test "a TLS client killed mid-transfer is logged as gone without closing its session, not as tampering" {
	with_tls
	start_daemon
	mkfile "$W/src" 16
	# 16 MiB at 1 MiB/s: killed long before the end
	"$RPMEMCTL" mirror --psk-file "$W/alice.psk" --bwlimit 1M "$W/src" \
		"$T/r1/p1" >/dev/null 2>&1 &
	local pid=$!
	BG="$pid"
	wait_for logged 1 "session .*: opened pool r1/p1"
	# mid-transfer: the target has taken some of the data
	wait_for tls_written_some
	kill -9 "$pid"
	# the killed session's close (the test's own lists, which say BYE,
	# close sessions before it)
	wait_for logged 1 "closed: the client disconnected without closing the session" ||
		{ grep "session .* closed: " "$DLOG"; false; }
	[ "$(grep -c "tampered" "$DLOG")" -eq 0 ]
}

@test "a TLS target killed under a reading client is reported as a lost connection, not as tampering" {
	with_tls
	start_daemon
	# an events subscriber waits in a TLS read
	"$RPMEMCTL" events --psk-file "$W/alice.psk" "$T" >"$W/client.out" 2>&1 &
	local pid=$! rc=0
	BG="$pid"
	wait_for logged 1 "subscribed to events"
	kill -9 "$DPID"
	wait "$pid" || rc=$?
	DPID=
	cat "$W/client.out"
	[ "$rc" -eq 3 ]
	grep -q "connection to 127.0.0.1:$PORT lost while" "$W/client.out"
	[ "$(grep -c "tampered" "$W/client.out")" -eq 0 ]
}

# with_x509 -- TLS with certificates: a CA, the target's, alice's
with_x509() {
	local d=$W/pki
	mkdir -p "$d"
	(
		cd "$d" || exit 1
		ossl() { openssl "$@" 2>/dev/null; }
		ossl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 \
			-nodes -days 2 -subj "/CN=rpmem test ca" -keyout ca.key \
			-out ca.crt
		printf 'subjectAltName=DNS:localhost\n' >srv.ext
		for n in server alice; do
			ossl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 \
				-nodes -subj "/CN=$n" -keyout $n.key -out $n.csr
			ossl x509 -req -in $n.csr -CA ca.crt -CAkey ca.key \
				-CAcreateserial -days 2 -extfile srv.ext -out $n.crt
		done
		chmod 600 ./*.key
	)
	cat >>"$CONF" <<CONF
tls = { certificate = "$d/server.crt"; key = "$d/server.key"; ca = "$d/ca.crt"; };
access = ( { identity = "alice"; regions = [ "*" ]; rights = [ "write" ]; } );
CONF
}

@test "an authenticated TLS client trickling its HELLO record is closed at handshake_timeout" {
	with_x509
	echo "limits = { handshake_timeout = 2; };" >>"$CONF"
	start_daemon
	local d=$W/pki
	# a 60-byte record at 2 bytes a second would take 30 s
	run timeout 20 $HOSTILE "$PORT" tls-trickle "$d/ca.crt" "$d/alice.crt" \
		"$d/alice.key" 0.5
	echo "$output"
	[[ "$output" == "closed after "* ]]
	local t=${output#closed after }
	[ "${t%% *}" != "" ]
	awk -v t="${t%% *}" 'BEGIN { exit !(t < 6) }'
	grep -q "no handshake within handshake_timeout = 2 s; closed" "$DLOG"
}

# check_listen ADDR -- rpmemd -n on the configuration listening on ADDR
# without TLS, with /etc/hosts replaced by $W/hosts (a mount namespace)
check_listen() {
	sed -i "s/^listen = .*/listen = [\"$1\"];/" "$CONF"
	run unshare -rm sh -c 'mount --bind "$1" /etc/hosts && exec "$2" -n -c "$3"' \
		sh "$W/hosts" "$RPMEMD" "$CONF"
	echo "$1: $output"
}

@test "a listen name is loopback only if every address it resolves to is: a localhost that is not is refused without TLS" {
	unshare -rm true 2>/dev/null ||
		skip "no user and mount namespaces to replace /etc/hosts in"
	printf '192.0.2.2 localhost\n' >"$W/hosts"
	check_listen localhost
	[ "$status" -ne 0 ]
	[[ "$output" == *"'localhost' is not a loopback address"* ]]
	printf '127.0.0.1 localhost\n192.0.2.2 localhost\n' >"$W/hosts"
	check_listen localhost
	[ "$status" -ne 0 ]
	printf '127.0.0.1 localhost\n::1 localhost\n' >"$W/hosts"
	check_listen localhost
	[ "$status" -eq 0 ]
	check_listen 127.0.0.2
	[ "$status" -eq 0 ]
	check_listen 192.0.2.2
	[ "$status" -ne 0 ]
}

@test "eight silent connections kept open from the client's own address do not lock it out: a newcomer displaces the oldest silent one (TLS)" {
	with_tls
	echo "limits = { handshake_timeout = 30; };" >>"$CONF"
	start_daemon
	# max_unauthenticated_per_address (8) silent connections from
	# 127.0.0.1, reopened at once whenever the target closes one
	$HOSTILE "$PORT" silent 8 127.0.0.1 >"$W/silent.out" 2>&1 &
	BG="$!"
	wait_for grep -q "open 8" "$W/silent.out"
	wait_for logged 8 "accepted"
	local i
	for i in 1 2 3; do
		# not a wait: what the test is about, a connection silent for
		# 1 s (RPMEMD_SILENT_GRACE_MS) may be displaced; the attacker's,
		# opened or reopened for the last list, are that old now
		sleep 1.2
		rc list --psk-file "$W/alice.psk" "$T"
		echo "list $i: $output"
		[ "$status" -eq 0 ]
	done
	# each list closed silent ones, which the attacker reopened
	grep -q "reopened" "$W/silent.out"
	grep -q "notice: connection [0-9]* from 127.0.0.1:[0-9]* closed before it sent anything, to make room for a newer one from 127.0.0.1 (max_unauthenticated_per_address = 8)" "$DLOG"
}
