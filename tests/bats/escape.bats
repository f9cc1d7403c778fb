#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# escape.bats -- a hostile target (tests/peers/hostile.py spoof: a relay
# that puts ESC sequences, C1 and bidi controls and newlines into what
# rpmemd answers) reaches no terminal through rpmemctl's human output:
# messages, -v, list, status, versions show its text escaped; --json
# writes them as \u escapes

load helpers

# M -- the marker hostile.py spoof replaces (16 bytes) and the escaped
# forms of what it puts there
M=QQQQQQQQQQQQQQQQ
ESC_M='\x1b[2J\x1b]0;x\x07\u{009b}\u{202e}\x0a'
ESC_CLIENT='\x1b[2J\u{009d}\u{2066}\x0d'
ESC_SERVER='\x1b]0;x\x07\u{009b}.'

setup() {
	setup_env
	mkdir -p "$W/$M"
	cat >"$CONF" <<CONF
listen = ["127.0.0.1"];
port = $PORT;
log = { level = "info"; target = "stderr"; };
max_sessions = 16;
regions = (
  { name = "r1"; type = "dir"; path = "$R1"; versions = "all"; },
  { name = "r2"; type = "dir"; path = "$W/$M"; }
);
CONF
	start_daemon
	# the pool's source names a file with the marker
	mkfile "$W/$M.img" 1
	rc -q mirror "$W/$M.img" "$T/r1/p1"
	[ "$status" -eq 0 ]
	SP=$(free_port)
	python3 "$TOP/tests/peers/hostile.py" "$PORT" spoof "$SP" >"$W/spoof.out" 2>&1 &
	SPID=$!
	alive_until "$SPID" accepts "$SP"
	S=127.0.0.1:$SP
}

teardown() {
	[ -z "${SPID:-}" ] || kill "$SPID" 2>/dev/null || true
	[ -z "${WPID:-}" ] || kill "$WPID" 2>/dev/null || true
	teardown_daemon
}

# spoofed ARGS... -- rpmemctl ARGS through the hostile target; stdout and
# stderr both in $W/out (and $output), $status its exit code
spoofed() {
	run "$RPMEMCTL" "$@"
	printf '%s\n' "$output" >"$W/out"
	cat "$W/out"
}

# shows TEXT -- the output holds TEXT as it is (no pattern)
shows() {
	grep -qF -- "$1" "$W/out"
}

@test "the hostile target's own check: its markers reach a client that does not escape, raw" {
	python3 - "$SP" "$TOP" >"$W/raw" <<'PY'
import os, sys
sys.path.insert(0, os.path.join(sys.argv[2], "tests", "peers"))
import rpmem_wire as w
s = w.connect(int(sys.argv[1]))
s.sendall(w.frame(w.HELLO, 1, w.hello_payload("t")))
t, _, p = w.recv_frame(s)
sys.stdout.buffer.write(p)
PY
	raw_controls "$W/raw"
	grep -qaF $'\x1b]0;x\x07\xc2\x9b' "$W/raw"
}

@test "an error message quoting the hostile target shows its controls escaped" {
	spoofed verify "$W/$M.img" "$S/r1/$M"
	[ "$status" -ne 0 ]
	shows "$ESC_M"
	refute raw_controls "$W/out"
}

@test "-v shows the hostile target's server string escaped" {
	spoofed -v list "$S"
	[ "$status" -eq 0 ]
	shows "$ESC_SERVER"
	refute raw_controls "$W/out"
}

@test "list shows the hostile target's region PATH escaped, list --json as \\u escapes" {
	spoofed list "$S"
	[ "$status" -eq 0 ]
	shows "$ESC_M"
	refute raw_controls "$W/out"
	spoofed list --json "$S"
	[ "$status" -eq 0 ]
	refute raw_controls "$W/out"
	shows '\u001b[2J\u001b]0;x\u0007\u009b\u202e\n'
	# the JSON reader gets the target's text itself
	[ "$(json '.regions[] | select(.name == "r2") | .path |
		endswith("/\u001b[2J\u001b]0;x\u0007\u009b\u202e\n")')" = true ]
}

@test "status shows the hostile target's server, a pool's writer and source escaped" {
	python3 "$TOP/tests/peers/hostile.py" "$PORT" idle-writer p1 >"$W/writer.out" 2>&1 &
	WPID=$!
	wait_for grep -q session "$W/writer.out"
	spoofed status "$S"
	[ "$status" -eq 0 ]
	shows "server:   $ESC_SERVER"
	shows "($ESC_CLIENT)"
	shows ":$W/$ESC_M.img"
	refute raw_controls "$W/out"
	spoofed status --json "$S"
	[ "$status" -eq 0 ]
	refute raw_controls "$W/out"
	shows '\u009d\u2066\r'
}

@test "versions shows the hostile target's SOURCE escaped" {
	poke "$W/$M.img" 8192
	rc -q sync "$W/$M.img" "$T/r1/p1"
	[ "$status" -eq 0 ]
	spoofed versions "$S/r1/p1"
	[ "$status" -eq 0 ]
	shows "$W/$ESC_M.img"
	refute raw_controls "$W/out"
	spoofed versions --json "$S/r1/p1"
	[ "$status" -eq 0 ]
	refute raw_controls "$W/out"
}
