#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# impostor.bats -- a fake target that does not hold the client's key, or
# whose certificate does not name the target, is refused: nothing is sent
# to it beyond the TLS handshake and nothing it serves is written locally

load helpers
load pki

setup_file() {
	make_pki "$BATS_FILE_TMPDIR/pki"
}

# The impostor relays to a plaintext rpmemd of its own ($PORT) whose pool
# r1/p1 holds other data: a client that accepted it would mirror into,
# and pull from, the impostor's pool.
setup() {
	setup_env
	P=$BATS_FILE_TMPDIR/pki
	"$RPMEMCTL" -q psk-gen -i alice "$W/alice.psk"
	mkfile "$W/theirs" 1
	start_daemon
	rc mirror "$W/theirs" "$T/r1/p1"
	[ "$status" -eq 0 ]
	mkfile "$W/src" 1
	cp "$W/src" "$W/orig"
	IPORT=$(free_port)
	IPID=
}

teardown() {
	stop_impostor
	teardown_daemon
}

# start_impostor NAME -- impostor.py on $IPORT with certificate NAME
start_impostor() {
	stop_impostor
	# the last impostor's "ready" must not count for this one
	rm -f "$W/imp.out"
	python3 "$TOP/tests/peers/impostor.py" "$IPORT" "$P/$1.crt" "$P/$1.key" \
		"$W/captured" "$PORT" >"$W/imp.out" 2>"$W/imp.err" &
	IPID=$!
	alive_until "$IPID" grep -qs ready "$W/imp.out"
}

stop_impostor() {
	if [ -n "${IPID:-}" ]; then
		kill "$IPID" 2>/dev/null || true
		wait "$IPID" 2>/dev/null || true
	fi
	IPID=
}

# refused WHY CREDENTIALS... -- mirror and sync --pull through the
# impostor both exit 3 saying WHY; the impostor got no byte past the
# handshake, its pool is untouched, our file too
refused() {
	local why=$1
	shift
	rc mirror "$@" "$W/src" "127.0.0.1:$IPORT/r1/p1"
	echo "mirror: $output"
	[ "$status" -eq 3 ]
	[[ "$output" == *"$why"* ]]
	rc sync --pull "$@" "$W/src" "127.0.0.1:$IPORT/r1/p1"
	echo "pull: $output"
	[ "$status" -eq 3 ]
	[[ "$output" == *"$why"* ]]
	[ ! -s "$W/captured" ]
	cmp "$W/src" "$W/orig"
	cmp "$W/theirs" "$R1/p1"
}

@test "the impostor captures what a client that accepts any certificate sends (the suite's own check)" {
	start_impostor self
	python3 - "$IPORT" >"$W/py.out" <<'PY'
import socket, ssl, sys
c = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
c.check_hostname = False
c.verify_mode = ssl.CERT_NONE
s = c.wrap_socket(socket.create_connection(("127.0.0.1", int(sys.argv[1]))))
s.sendall(b"x" * 16)
s.close()
print("sent")
PY
	grep -q sent "$W/py.out"
	wait_for test -s "$W/captured"
	[ "$(cat "$W/captured")" = xxxxxxxxxxxxxxxx ]
	grep -q "handshake ok" "$W/imp.err"
}

@test "a PSK client refuses a target that answers with a certificate instead of the key (exit 3, nothing sent, nothing pulled)" {
	local why="instead of proving it holds our pre-shared key"
	for cert in self elsewhere alice; do
		start_impostor "$cert"
		refused "$why" --psk-file "$W/alice.psk"
		# with the target's CA as well, and our certificate: the key,
		# not the CA, decides
		refused "$why" --psk-file "$W/alice.psk" --tls-ca "$P/ca.crt"
		refused "$why" --psk-file "$W/alice.psk" --tls-ca "$P/ca.crt" \
			--tls-cert "$P/alice.crt" --tls-key "$P/alice.key"
		grep -q "handshake failed" "$W/imp.err"
		refute grep -q "handshake ok" "$W/imp.err"
	done
}

@test "a PSK client from rpmemctl.conf refuses an impostor the same way" {
	mkdir -p "$XDG_CONFIG_HOME/rpmem"
	cat >"$XDG_CONFIG_HOME/rpmem/rpmemctl.conf" <<CONF
targets = ( { host = "127.0.0.1"; psk_file = "$W/alice.psk"; ca = "$P/ca.crt"; } );
CONF
	start_impostor elsewhere
	refused "instead of proving it holds our pre-shared key"
}

@test "an X.509 client refuses a self-signed target, one certified for another host, and a client's certificate" {
	local x509=(--tls-ca "$P/ca.crt" --tls-cert "$P/alice.crt"
		--tls-key "$P/alice.key")
	start_impostor self
	refused "certificate was not accepted: self-signed certificate" "${x509[@]}"
	start_impostor elsewhere
	refused "certificate was not accepted: IP address mismatch" "${x509[@]}"
	start_impostor alice
	refused "certificate was not accepted: IP address mismatch" "${x509[@]}"
	# by name: the certificate must carry the name we connect to
	start_impostor elsewhere
	rc mirror "${x509[@]}" "$W/src" "localhost:$IPORT/r1/p1"
	[ "$status" -eq 3 ]
	[[ "$output" == *"Hostname mismatch"* || "$output" == *"hostname mismatch"* ]]
	[ ! -s "$W/captured" ]
	cmp "$W/theirs" "$R1/p1"
}
