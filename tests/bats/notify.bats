#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# notify.bats -- rpmemd under Type=notify: what it tells systemd through
# NOTIFY_SOCKET (a socket this suite reads, as systemd would)

load helpers

setup() {
	setup_env
	NSOCK=$W/notify.sock
	NLOG=$W/notify.log
	: >"$NLOG"
	python3 "$TOP/tests/peers/notify_listen.py" "$NSOCK" "$NLOG" "$PORT" &
	LPID=$!
	alive_until "$LPID" test -S "$NSOCK"
}

teardown() {
	teardown_daemon
	[ -z "${LPID:-}" ] || kill "$LPID" 2>/dev/null || true
	if [ "${BATS_TEST_COMPLETED:-}" != 1 ] && [ -f "${NLOG:-}" ]; then
		echo "--- notifications ---" >&3
		cat "$NLOG" >&3
	fi
}

# start_notified [WATCHDOG_USEC] -- rpmemd as systemd starts a Type=notify
# service (with the watchdog if given: WATCHDOG_PID is rpmemd's own pid);
# returns once READY=1 arrived
start_notified() {
	if [ -n "${1:-}" ]; then
		NOTIFY_SOCKET=$NSOCK WATCHDOG_USEC=$1 sh -c \
			'WATCHDOG_PID=$$ exec "$0" -c "$1"' "$RPMEMD" "$CONF" \
			>>"$DLOG" 2>&1 &
	else
		NOTIFY_SOCKET=$NSOCK "$RPMEMD" -c "$CONF" >>"$DLOG" 2>&1 &
	fi
	DPID=$!
	wait_note 'READY=1'
}

# wait_note ERE [COUNT] -- wait until COUNT (default 1) notification
# lines match ERE; fails after 60 s or once rpmemd died
wait_note() {
	alive_until "$DPID" notes "$1" "${2:-1}"
}

# notes ERE COUNT -- at least COUNT notification lines match ERE
notes() {
	[ "$(grep -cE -- "$1" "$NLOG")" -ge "$2" ]
}

# notes_after LINE ERE -- a notification line from LINE on matches ERE
notes_after() {
	tail -n +"$1" "$NLOG" | grep -qE -- "$2"
}

@test "READY=1 comes once the port accepts connections, with a STATUS= of an idle daemon" {
	start_notified
	run grep -E 'READY=1' "$NLOG"
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == *"STATUS=0 sessions, 0 pools open; 0 writing"* ]]
	[[ "$output" == *"[port accepts]" ]]
	# the daemon serves right away
	rc list --json "$T"
	[ "$status" -eq 0 ]
	[ "$(json '.regions[0].name')" = r1 ]
}

@test "STATUS= counts the sessions past HELLO, the open pools and those open for writing" {
	start_notified 1000000
	rc create "$T/r1/p1" 1M
	[ "$status" -eq 0 ]
	"$BUILD/tests/hold_pool" "$T/r1/p1" 3 >"$W/hold.out" 2>&1 &
	local hp=$!
	wait_note 'STATUS=1 session, 1 pool open; 1 writing'
	wait "$hp"
	grep -q holding "$W/hold.out"
	# once the holder left, the counts go back to zero
	local held
	held=$(grep -n 'STATUS=1 session, 1 pool open; 1 writing' "$NLOG" |
		head -n 1 | cut -d: -f1)
	wait_for notes_after "$held" 'STATUS=0 sessions, 0 pools open; 0 writing'
}

@test "SIGHUP is RELOADING=1, then READY=1 once the new configuration is in force" {
	start_notified
	mkdir -p "$W/r2"
	sed -i "s|^regions = (|regions = (\n  { name = \"r2\"; type = \"dir\"; path = \"$W/r2\"; },|" "$CONF"
	kill -HUP "$DPID"
	wait_note 'READY=1' 2
	# in this order: READY, RELOADING, READY
	run grep -oE 'READY=1|RELOADING=1' "$NLOG"
	[ "${lines[*]}" = "READY=1 RELOADING=1 READY=1" ]
	grep -q 'RELOADING=1.*MONOTONIC_USEC=[0-9]' "$NLOG"
	# READY=1 came after the reload was done: r2 is served
	rc list --json "$T"
	[ "$status" -eq 0 ]
	[ "$(json '.regions | length')" -eq 2 ]
	grep -q 'reload done: 2 region' "$DLOG"
}

@test "with WATCHDOG_USEC, WATCHDOG=1 comes again and again, every half interval, not sooner" {
	start_notified 1000000
	wait_note '^[0-9.]+ WATCHDOG=1$' 4
	grep -q 'systemd watchdog: 1000 ms; alive every 500 ms' "$DLOG"
	# three periods between the first and the fourth: 1.5 s as rpmemd
	# sends them. The times are the listener's, which a loaded machine
	# can wake late for the first, so the bound is 1.3 s: still more than
	# any period under 433 ms would give
	run sh -c "grep -E '^[0-9.]+ WATCHDOG=1\$' '$NLOG' | awk 'NR == 1 { a = \$1 } NR == 4 { print \$1 - a }'"
	echo "first to fourth WATCHDOG=1: $output s"
	awk -v d="$output" 'BEGIN { exit !(d >= 1.3) }'
}

@test "a WATCHDOG_PID of another process keeps the watchdog off" {
	NOTIFY_SOCKET=$NSOCK WATCHDOG_USEC=1000000 WATCHDOG_PID=1 \
		"$RPMEMD" -c "$CONF" >>"$DLOG" 2>&1 &
	DPID=$!
	wait_note 'READY=1'
	refute grep -q 'systemd watchdog' "$DLOG"
	# a second of service: a watchdog of 1 s would have been kept twice
	rc create "$T/r1/p1" 1M
	"$BUILD/tests/hold_pool" "$T/r1/p1" 1 >"$W/hold.out" 2>&1
	stop_daemon
	wait_note 'STOPPING=1'
	refute grep -q 'WATCHDOG=1' "$NLOG"
}

@test "SIGTERM is STOPPING=1, then rpmemd exits 0" {
	start_notified 1000000
	kill -TERM "$DPID"
	wait "$DPID"
	DPID=
	wait_note 'STOPPING=1'
	grep -q 'STOPPING=1 | STATUS=stopping: 0 sessions to close' "$NLOG"
	# nothing after STOPPING=1 says READY again
	run sh -c "sed -n '/STOPPING=1/,\$p' '$NLOG' | grep -c 'READY=1'"
	[ "$output" -eq 0 ]
}

@test "a NOTIFY_SOCKET nobody listens on is logged once and rpmemd serves anyway" {
	kill "$LPID"
	wait "$LPID" || true
	LPID=
	rm -f "$NSOCK"
	NOTIFY_SOCKET=$NSOCK "$RPMEMD" -c "$CONF" >>"$DLOG" 2>&1 &
	DPID=$!
	alive_until "$DPID" grep -q 'ready:' "$DLOG"
	rc list --json "$T"
	[ "$status" -eq 0 ]
	[ "$(grep -c 'sd_notify to $NOTIFY_SOCKET failed' "$DLOG")" -eq 1 ]
}
