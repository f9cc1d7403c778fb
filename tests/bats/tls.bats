#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# tls.bats -- TLS 1.3 with pre-shared keys and X.509: who gets in, who does
# not, what each refusal says, and that nothing is written for them

load helpers
load pki

setup_file() {
	make_pki "$BATS_FILE_TMPDIR/pki"
}

setup() {
	setup_env
	P=$BATS_FILE_TMPDIR/pki
	export XDG_CONFIG_HOME=$W/xdg
	"$RPMEMCTL" -q psk-gen -i alice "$W/alice.psk"
	"$RPMEMCTL" -q psk-gen -i alice "$W/wrong.psk"
	"$RPMEMCTL" -q psk-gen -i carol "$W/carol.psk"
	cp "$W/alice.psk" "$W/server.psk"
	cat >>"$CONF" <<CONF
tls = {
  certificate = "$P/server.crt";
  key = "$P/server.key";
  ca = "$P/ca.crt";
  psk_file = "$W/server.psk";
};
access = ( { identity = "alice"; regions = [ "*" ]; rights = [ "write", "admin" ]; } );
CONF
	mkfile "$W/src" 4
}

teardown() { teardown_daemon; }

# pool_absent NAME -- the daemon's own listing (over PSK) has no such pool
pool_absent() {
	run "$RPMEMCTL" list --json --psk-file "$W/alice.psk" "$T/r1"
	[ "$status" -eq 0 ]
	[ "$(jq --arg n "$1" '[.pools[] | select(.name == $n)] | length' \
		<<<"$output")" -eq 0 ]
	[ ! -e "$R1/$1" ]
}

@test "psk-gen writes IDENTITY:HEXKEY with mode 0600 and never replaces a file silently" {
	[ "$(stat -c %a "$W/alice.psk")" = 600 ]
	grep -Eq '^alice:[0-9a-f]{64}$' "$W/alice.psk"
	rc psk-gen -i alice "$W/alice.psk"
	[ "$status" -eq 5 ]
	[[ "$output" == *"--force"* ]]
	rc psk-gen -i 'bad id' "$W/x.psk"
	[ "$status" -eq 2 ]
}

@test "mirror, verify and sync --pull over TLS with a pre-shared key move the bytes" {
	start_daemon
	rc mirror --psk-file "$W/alice.psk" "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	cmp "$W/src" "$R1/p1"
	rc verify --psk-file "$W/alice.psk" "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	cp "$W/src" "$W/back" && poke "$W/back" 4096
	rc sync --pull --psk-file "$W/alice.psk" "$W/back" "$T/r1/p1"
	[ "$status" -eq 0 ]
	cmp "$W/src" "$W/back"
	grep -q "TLS, psk identity 'alice'" "$DLOG" ||
		grep -q "session .* opened" "$DLOG"
}

@test "mirror over TLS with X.509 certificates on both ends" {
	start_daemon
	rc mirror --tls-ca "$P/ca.crt" --tls-cert "$P/alice.crt" \
		--tls-key "$P/alice.key" "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	cmp "$W/src" "$R1/p1"
}

@test "credentials come from rpmemctl.conf when the command line gives none" {
	start_daemon
	mkdir -p "$XDG_CONFIG_HOME/rpmem"
	cat >"$XDG_CONFIG_HOME/rpmem/rpmemctl.conf" <<CONF
targets = (
  { host = "127.0.0.1"; port = $PORT; psk_file = "$W/alice.psk"; }
);
CONF
	rc mirror "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	cmp "$W/src" "$R1/p1"
	# --config names another file: its "*" entry applies
	cat >"$W/other.conf" <<CONF
targets = ( { host = "*"; psk_file = "$W/wrong.psk"; } );
CONF
	rc verify --config "$W/other.conf" "$W/src" "$T/r1/p1"
	[ "$status" -eq 3 ]
}

@test "a wrong pre-shared key exits 3, says the target refused, and writes nothing" {
	start_daemon
	rc mirror --psk-file "$W/wrong.psk" "$W/src" "$T/r1/p1"
	[ "$status" -eq 3 ]
	[[ "$output" == *TLS*"refused our credentials"* ]]
	pool_absent p1
	grep -q "notice: .*claimed identity 'alice'" "$DLOG"
}

@test "an identity the target does not know exits 3 and writes nothing" {
	start_daemon
	rc mirror --psk-file "$W/carol.psk" "$W/src" "$T/r1/p1"
	[ "$status" -eq 3 ]
	[[ "$output" == *TLS* ]]
	pool_absent p1
	grep -q "notice: .*claimed identity 'carol'" "$DLOG"
}

@test "a client certificate from another CA exits 3 and writes nothing" {
	start_daemon
	rc mirror --tls-ca "$P/ca.crt" --tls-cert "$P/mallory.crt" \
		--tls-key "$P/mallory.key" "$W/src" "$T/r1/p1"
	[ "$status" -eq 3 ]
	[[ "$output" == *TLS* ]]
	pool_absent p1
	grep -q "notice: .*client's certificate was not accepted" "$DLOG"
}

@test "an expired client certificate exits 3 and writes nothing" {
	start_daemon
	rc mirror --tls-ca "$P/ca.crt" --tls-cert "$P/old.crt" \
		--tls-key "$P/old.key" "$W/src" "$T/r1/p1"
	[ "$status" -eq 3 ]
	pool_absent p1
	grep -q "expired" "$DLOG"
}

@test "a target certificate the client does not trust exits 3 and says why" {
	start_daemon
	rc list --tls-ca "$P/other.crt" --tls-cert "$P/alice.crt" \
		--tls-key "$P/alice.key" "$T"
	[ "$status" -eq 3 ]
	[[ "$output" == *"certificate was not accepted"* ]]
}

@test "a plaintext client of a TLS target exits 3 and is told TLS is required" {
	start_daemon
	rc mirror "$W/src" "$T/r1/p1"
	[ "$status" -eq 3 ]
	[[ "$output" == *"requires TLS"* ]]
	pool_absent p1
}

@test "a TLS client of a plaintext target exits 3 and says the target does not answer with TLS" {
	write_conf "$CONF" "$PORT"
	start_daemon
	rc list --psk-file "$W/alice.psk" "$T"
	[ "$status" -eq 3 ]
	[[ "$output" == *"does not answer with TLS"* ]]
}

@test "key files that group or others can read are refused with the chmod to run" {
	chmod 644 "$W/alice.psk"
	write_conf "$CONF" "$PORT"
	start_daemon
	rc list --psk-file "$W/alice.psk" "$T"
	[ "$status" -ne 0 ]
	[[ "$output" == *"chmod 600 $W/alice.psk"* ]]
	# the library's one message for the call names the target it was for
	[[ "$output" == *"credentials for 127.0.0.1:$PORT: "*"$W/alice.psk"* ]]
	chmod 640 "$W/server.psk"
	cat >>"$CONF" <<CONF
tls = { psk_file = "$W/server.psk"; };
CONF
	run "$RPMEMD" -n -c "$CONF"
	[ "$status" -eq 1 ]
	[[ "$output" == *"chmod 600 $W/server.psk"* ]]
}

@test "a non-loopback listener is accepted with TLS and refused without it" {
	local c2=$W/remote.conf
	sed 's/^listen = .*/listen = ["0.0.0.0"];/' "$CONF" >"$c2"
	run "$RPMEMD" -n -c "$c2"
	[ "$status" -eq 0 ]
	sed '/^tls = {/,/^};/d' "$c2" >"$W/plain.conf"
	run "$RPMEMD" -n -c "$W/plain.conf"
	[ "$status" -eq 1 ]
	[[ "$output" == *"requires TLS"* ]]
}

@test "a byte flipped on the wire breaks the connection (exit 3) and the pool stays truthfully syncing" {
	start_daemon
	local pp pid
	pp=$(free_port)
	python3 "$TOP/tests/peers/flip_proxy.py" "$pp" "$PORT" 1500000 \
		>"$W/proxy.out" 2>"$W/proxy.err" &
	pid=$!
	alive_until "$pid" grep -q ready "$W/proxy.out"
	rc mirror --psk-file "$W/alice.psk" "$W/src" "127.0.0.1:$pp/r1/p1"
	kill "$pid" 2>/dev/null || true
	[ "$status" -eq 3 ]
	grep -q flipped "$W/proxy.err"
	run "$RPMEMCTL" list --json --psk-file "$W/alice.psk" "$T/r1"
	[ "$(jq -r '.pools[] | select(.name == "p1") | .state' <<<"$output")" = syncing ]
	# the next honest mirror completes it
	rc mirror --psk-file "$W/alice.psk" "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	cmp "$W/src" "$R1/p1"
}

# session_of KEY VALUE -- the id of the session whose KEY is VALUE, as the
# daemon lists them (empty if none)
session_of() {
	"$RPMEMCTL" status --json --psk-file "$W/alice.psk" "$T" |
		jq -r --arg v "$2" ".sessions[] | select(.$1 == \$v) | .id"
}

# held_and_subscribed -- the pool r1/held has a writer (its session id in
# $wid) that says it holds it, and the subscriber is subscribed
held_and_subscribed() {
	wid=$(session_of pool held)
	[ -n "$wid" ] && grep -q holding "$W/hold.out" &&
		grep -q "subscribed to events" "$DLOG"
}

@test "a session kicked over TLS is told an administrator ended it (exit 4, as rpmemctl(1) says), not that its records were tampered with" {
	start_daemon
	local ep hp sid wid
	# an idle event subscriber and a writer holding a pool, both TLS
	"$RPMEMCTL" events --psk-file "$W/alice.psk" "$T" \
		>"$W/ev.out" 2>"$W/ev.err" &
	ep=$!
	"$RPMEMCTL" -q create --psk-file "$W/alice.psk" "$T/r1/held" 1M
	"$BUILD/tests/hold_pool" "$T/r1/held" 30 "" "$W/alice.psk" \
		>"$W/hold.out" 2>&1 &
	hp=$!
	wait_for held_and_subscribed
	rc kick --psk-file "$W/alice.psk" "$T" "$wid"
	[ "$status" -eq 0 ]
	wait "$hp" || true
	# the subscriber: the oldest session without a pool
	sid=$("$RPMEMCTL" status --json --psk-file "$W/alice.psk" "$T" |
		jq -r '[.sessions[] | select(.pool == "" and .region == "")] | min_by(.id) | .id')
	rc kick --psk-file "$W/alice.psk" "$T" "$sid"
	[ "$status" -eq 0 ]
	local st=0
	wait "$ep" || st=$?
	cat "$W/ev.err"
	[ "$st" -eq 4 ]
	grep -q "session $sid ended by an administrator" "$W/ev.err"
	refute grep -qi "TLS failure\|tamper\|alert" "$W/ev.err"
	# the daemon's side: both ended by the kick, not by a TLS failure,
	# and the pool is free again
	grep -q "session $wid from .* closed: ended by an administrator" "$DLOG"
	grep -q "session $sid from .* closed: ended by an administrator" "$DLOG"
	refute grep -q "TLS failure" "$DLOG"
	[ "$(session_of pool held)" = "" ]
	run "$RPMEMCTL" list --json --psk-file "$W/alice.psk" "$T/r1/held"
	[ "$(jq -r '.pools[0].writer' <<<"$output")" = "" ]
}

# check_at SETTING -- rpmemd -n on $CONF exits 1 and names the file, the
# line of SETTING (as grep -n finds it) and the setting, then the reason
check_at() {
	local line
	line=$(grep -n "^ *${1#tls.} = " "$CONF" | cut -d: -f1)
	[ -n "$line" ]
	run "$RPMEMD" -n -c "$CONF"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == "rpmemd: $CONF:$line: $1: "* ]]
}

@test "rpmemd -n reports a key file problem as FILE:LINE: SETTING: reason (a psk_file others can read, a missing one, a key others can read, a missing CA)" {
	chmod 644 "$W/server.psk"
	check_at tls.psk_file
	[[ "$output" == *"(mode 0644): run chmod 600 $W/server.psk" ]]
	rm "$W/server.psk"
	check_at tls.psk_file
	[[ "$output" == *"key file $W/server.psk: No such file or directory" ]]
	cp "$W/alice.psk" "$W/server.psk"
	cp "$P/server.key" "$W/server.key"
	chmod 640 "$W/server.key"
	sed -i "s|key = \"$P/server.key\"|key = \"$W/server.key\"|" "$CONF"
	check_at tls.key
	[[ "$output" == *"(mode 0640): run chmod 600 $W/server.key" ]]
	sed -i "s|ca = \"$P/ca.crt\"|ca = \"$W/none.crt\"|" "$CONF"
	chmod 600 "$W/server.key"
	check_at tls.ca
	[[ "$output" == *"$W/none.crt: No such file or directory" ]]
	# and the daemon itself does not start, saying the same
	run "$RPMEMD" -c "$CONF"
	[ "$status" -eq 1 ]
	[[ "$output" == *"$CONF:"*": tls.ca: $W/none.crt: No such file or directory"* ]]
}

@test "rpmemd stopping under an idle TLS subscriber: the client reads a lost connection, as over plaintext, not a tampered record" {
	start_daemon
	local ep st=0
	"$RPMEMCTL" events --psk-file "$W/alice.psk" "$T" \
		>"$W/ev.out" 2>"$W/ev.err" &
	ep=$!
	alive_until "$ep" grep -q "subscribed to events" "$DLOG"
	stop_daemon
	wait "$ep" || st=$?
	cat "$W/ev.err"
	[ "$st" -eq 3 ]
	grep -q "lost while waiting for an event" "$W/ev.err"
	refute grep -qi "TLS failure\|tamper\|alert" "$W/ev.err"
	grep -q "closed: the daemon is stopping" "$DLOG"
	refute grep -q "TLS failure" "$DLOG"
}

@test "a certificate name that is not UTF-8 (a T61String CN) is read as UTF-8 (its 0xE9 an e acute): the identity its rules name, valid in the admin's status --json and --prometheus" {
	# a client certificate of the test CA whose CN is "caf" and byte 0xE9
	printf '[ req ]\ndistinguished_name = dn\nstring_mask = nombstr\nprompt = no\n[ dn ]\nCN = caf\xe9\n' >"$W/latin.cnf"
	openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
		-config "$W/latin.cnf" -keyout "$W/latin.key" \
		-out "$W/latin.csr" 2>/dev/null
	openssl x509 -req -in "$W/latin.csr" -CA "$P/ca.crt" -CAkey "$P/ca.key" \
		-CAserial "$W/latin.srl" -CAcreateserial -days 2 \
		-out "$W/latin.crt" 2>/dev/null
	chmod 600 "$W/latin.key"
	printf 'access = ( { identity = "alice"; regions = [ "*" ]; rights = [ "write", "admin" ]; },\n  { identity = "caf\xc3\xa9"; regions = [ "r1" ]; rights = [ "read" ]; } );\n' >"$W/rules"
	sed -i '/^access = /d' "$CONF"
	cat "$W/rules" >>"$CONF"
	start_daemon
	"$RPMEMCTL" events --tls-ca "$P/ca.crt" --tls-cert "$W/latin.crt" \
		--tls-key "$W/latin.key" "$T" >"$W/ev.out" 2>"$W/ev.err" &
	local ep=$!
	alive_until "$ep" grep -q "subscribed to events" "$DLOG"
	"$RPMEMCTL" status --json --psk-file "$W/alice.psk" "$T" >"$W/st.json"
	"$RPMEMCTL" status --prometheus --psk-file "$W/alice.psk" "$T" \
		>"$W/st.prom"
	kill "$ep"
	wait "$ep" || true
	cat "$W/ev.err"
	python3 -c 'import json, sys
d = json.loads(open(sys.argv[1], "rb").read())
ids = [s["identity"] for s in d["sessions"]]
assert "caf\u00e9" in ids, ids
open(sys.argv[2], "rb").read().decode("utf-8")' "$W/st.json" "$W/st.prom"
	grep -q 'identity="caf'$'\xc3\xa9''"' "$W/st.prom"
	# the rule for it applied: the subscriber was not refused
	refute grep -q "identity 'caf.*' has no access rules" "$DLOG"
	python3 "$TOP/tests/bats/promparse.py" <"$W/st.prom" >/dev/null
}

@test "a wrong key and an unknown identity fail identically for the client; the daemon's log says which" {
	start_daemon
	rc list --psk-file "$W/wrong.psk" "$T"
	[ "$status" -eq 3 ]
	local wrong=${output//alice/ID}
	rc list --psk-file "$W/carol.psk" "$T"
	[ "$status" -eq 3 ]
	local unknown=${output//carol/ID}
	echo "wrong key: $wrong"
	echo "unknown:   $unknown"
	[ "$wrong" = "$unknown" ]
	grep -q "claimed identity 'alice' (in tls.psk_file: a wrong key?)" "$DLOG"
	grep -q "claimed identity 'carol' (not in tls.psk_file)" "$DLOG"
}

@test "a PSK-only target never completes a certificate handshake (openssl s_client without the key fails)" {
	sed -i '/^tls = {/,/^};/d' "$CONF"
	cat >>"$CONF" <<CONF
tls = { psk_file = "$W/server.psk"; };
CONF
	start_daemon
	run timeout 20 openssl s_client -connect "$T" -tls1_3 -brief \
		-ciphersuites TLS_AES_128_GCM_SHA256 </dev/null
	echo "$output"
	[ "$status" -ne 0 ]
	[[ "$output" == *"handshake failure"* || "$output" == *"alert"* ]]
	[[ "$output" != *"Peer certificate"* ]]
	# the same client with the key completes it (the check above is not
	# a broken s_client)
	local key
	key=$(cut -d: -f2 "$W/alice.psk")
	run timeout 20 openssl s_client -connect "$T" -tls1_3 -brief \
		-ciphersuites TLS_AES_128_GCM_SHA256 \
		-psk_identity alice -psk "$key" </dev/null
	echo "$output"
	[[ "$output" == *"CONNECTION ESTABLISHED"* ]]
}

@test "the target's certificate must carry the name given by --tls-name or tls_name" {
	start_daemon
	local x509=(--tls-ca "$P/ca.crt" --tls-cert "$P/alice.crt"
		--tls-key "$P/alice.key")
	rc list "${x509[@]}" --tls-name localhost "$T"
	[ "$status" -eq 0 ]
	rc mirror "${x509[@]}" --tls-name elsewhere.example "$W/src" "$T/r1/p1"
	[ "$status" -eq 3 ]
	[[ "$output" == *"certificate was not accepted: hostname mismatch"* ||
		"$output" == *"certificate was not accepted: Hostname mismatch"* ]]
	pool_absent p1
	mkdir -p "$XDG_CONFIG_HOME/rpmem"
	cat >"$XDG_CONFIG_HOME/rpmem/rpmemctl.conf" <<CONF
targets = ( { host = "127.0.0.1"; ca = "$P/ca.crt";
  certificate = "$P/alice.crt"; key = "$P/alice.key";
  tls_name = "elsewhere.example"; } );
CONF
	rc mirror "$W/src" "$T/r1/p1"
	[ "$status" -eq 3 ]
	pool_absent p1
	sed -i 's/elsewhere.example/localhost/' "$XDG_CONFIG_HOME/rpmem/rpmemctl.conf"
	rc mirror "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	cmp "$W/src" "$R1/p1"
}

# global_addr -- an IPv4 address of this host that is not loopback
global_addr() {
	ip -4 -o addr show scope global 2>/dev/null | awk '{print $4}' |
		cut -d/ -f1 | head -n 1
}

@test "no credentials for a target not on loopback: refused before anything is sent, unless --plaintext or plaintext = true" {
	local a
	a=$(global_addr)
	[ -n "$a" ] || skip "this host has no non-loopback IPv4 address"
	sed -i '/^tls = {/,/^};/d; s/^listen = .*/listen = ["0.0.0.0"];/' "$CONF"
	echo "allow_insecure_remote = true;" >>"$CONF"
	start_daemon
	rc mirror "$W/src" "$a:$PORT/r1/p1"
	echo "$output"
	[ "$status" -eq 3 ]
	[[ "$output" == *"refusing to talk to it in plaintext"* ]]
	[[ "$output" == *"--plaintext"* ]]
	[ ! -e "$R1/p1" ]
	refute grep -q "session .* opened" "$DLOG"
	rc mirror --plaintext "$W/src" "$a:$PORT/r1/p1"
	[ "$status" -eq 0 ]
	cmp "$W/src" "$R1/p1"
	mkdir -p "$XDG_CONFIG_HOME/rpmem"
	cat >"$XDG_CONFIG_HOME/rpmem/rpmemctl.conf" <<CONF
targets = ( { host = "$a"; plaintext = true; } );
CONF
	rc verify "$W/src" "$a:$PORT/r1/p1"
	[ "$status" -eq 0 ]
}

# evil_cert NAME CN -- a client certificate of the test CA whose subject CN
# is CN (Python escapes: NUL, newline, any length)
evil_cert() {
	python3 "$TOP/tests/bats/mkcert.py" "$2" "$P/ca.crt" "$P/ca.key" "$W/$1"
}

@test "certificate names with a NUL, a control character or over 128 bytes are refused, not cut (exit 3, nothing written, the log escaped)" {
	python3 -c 'import cryptography' 2>/dev/null ||
		skip "no python3 cryptography module to write the certificates"
	local long
	long=$(printf 'a%.0s' $(seq 128))
	sed -i "s/^access = ( /&{ identity = \"certrw\"; regions = [ \"*\" ]; rights = [ \"write\" ]; }, { identity = \"$long\"; regions = [ \"*\" ]; rights = [ \"write\" ]; }, /" "$CONF"
	start_daemon
	# the rules work: certrw and the 128-byte name get in
	evil_cert ok certrw
	evil_cert ok128 "$long"
	for c in ok ok128; do
		rc mirror --tls-ca "$P/ca.crt" --tls-cert "$W/$c.crt" \
			--tls-key "$W/$c.key" "$W/src" "$T/r1/$c"
		[ "$status" -eq 0 ]
	done
	evil_cert nul 'certrw\x00junk'
	evil_cert nl 'certrw\nrpmemd: notice: forged'
	evil_cert long "${long}b"
	for c in nul nl long; do
		rc mirror --tls-ca "$P/ca.crt" --tls-cert "$W/$c.crt" \
			--tls-key "$W/$c.key" "$W/src" "$T/r1/p_$c"
		echo "$c: $output"
		[ "$status" -eq 3 ]
		pool_absent "p_$c"
	done
	grep -c "client's certificate's subject CN holds a NUL or a control character" "$DLOG" |
		grep -qx 2
	grep -q "client's certificate's subject CN is longer than the 128 bytes" "$DLOG"
	# a PSK identity with a newline, from a client of our own: escaped
	run timeout 20 openssl s_client -connect "$T" -tls1_3 -brief \
		-ciphersuites TLS_AES_128_GCM_SHA256 \
		-psk_identity $'x\nrpmemd: notice: forged' \
		-psk 00112233445566778899aabbccddeeff </dev/null
	grep -qF "claimed identity 'x\\x0arpmemd: notice: forged'" "$DLOG"
	refute grep -q "^rpmemd: notice: forged" "$DLOG"
}

@test "certificate names with a C1 or a bidirectional control are refused like those with an ASCII one (exit 3, nothing written)" {
	python3 -c 'import cryptography' 2>/dev/null ||
		skip "no python3 cryptography module to write the certificates"
	# each name is also a rule, so only the check can refuse it
	local id
	for id in $'certrw\xc2\x9b31m' $'certrw\xe2\x80\xaegnp' $'certrw\xe2\x81\xa6x'; do
		sed -i "s/^access = ( /&{ identity = \"$id\"; regions = [ \"*\" ]; rights = [ \"write\" ]; }, /" "$CONF"
	done
	run "$RPMEMD" -c "$CONF" --check
	echo "$output"
	[ "$status" -ne 0 ]
	[[ "$output" == *"is not an identity"* ]]
	sed -i '/^access = ( /s/{ identity = "certrw[^"]*"; regions = \[ "\*" \]; rights = \[ "write" \]; }, //g' "$CONF"
	start_daemon
	evil_cert csi 'certrw\u009b31m'
	evil_cert osc 'certrw\u009d0;x'
	evil_cert rlo 'certrw\u202egnp'
	evil_cert lri 'certrw\u2066x'
	for c in csi osc rlo lri; do
		rc mirror --tls-ca "$P/ca.crt" --tls-cert "$W/$c.crt" \
			--tls-key "$W/$c.key" "$W/src" "$T/r1/p_$c"
		echo "$c: $output"
		[ "$status" -eq 3 ]
		pool_absent "p_$c"
	done
	grep -c "client's certificate's subject CN holds a NUL or a control character" "$DLOG" |
		grep -qx 4
	refute raw_controls "$DLOG"
}

# has_text FILE TEXT -- FILE holds TEXT
has_text() {
	grep -q -- "$2" "$1" 2>/dev/null
}

@test "a client closed in mid-handshake to make room (max_unauthenticated) is told so, not that its credentials were refused" {
	echo "limits = { max_unauthenticated = 2; handshake_timeout = 30; };" >>"$CONF"
	start_daemon
	local pp vpid vst=0
	pp=$(free_port)
	python3 "$TOP/tests/peers/hostile.py" "$PORT" stall-proxy "$pp" 127.0.0.2 \
		>"$W/proxy.out" 2>&1 &
	wait_for has_text "$W/proxy.out" ready
	"$RPMEMCTL" list --psk-file "$W/alice.psk" "127.0.0.1:$pp" \
		>"$W/victim.out" 2>&1 &
	vpid=$!
	# the victim waits in mid-handshake; a second one from its address
	wait_for has_text "$W/proxy.out" holding
	python3 "$TOP/tests/peers/hostile.py" "$PORT" idle 127.0.0.2 \
		>"$W/idle.out" 2>&1 &
	wait_for has_text "$W/idle.out" open
	# a newcomer from another address: the oldest handshake of the
	# busiest address (the victim's) is closed to make room
	rc list --psk-file "$W/alice.psk" "$T"
	[ "$status" -eq 0 ]
	wait "$vpid" || vst=$?
	cat "$W/victim.out"
	[ "$vst" -eq 3 ]
	grep -q "to make room" "$DLOG"
	refute grep -q "refused our credentials" "$W/victim.out"
	grep -Eq "closed the connection during the (TLS )?handshake" "$W/victim.out"
}
