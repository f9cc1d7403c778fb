#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# logflood.bats -- what a peer does at will (requests refused, WRITEs that
# fail) costs a few log lines a second, and the count of those left out

load helpers

HOSTILE="python3 $TOP/tests/peers/hostile.py"

teardown() { teardown_daemon; }

# at_most_per_sec T0 LINES -- LINES since T0 (date +%s) are at most what
# 5 a second and each second's count of those left out allow, over every
# second (of the daemon's monotonic clock) the run touched, and the
# session's opening and closing lines
at_most_per_sec() {
	local secs=$(($(date +%s) - $1 + 2))
	echo "$2 log lines over at most $secs s" >&3
	[ "$2" -le $((6 * secs + 4)) ]
}

# suppressed KIND -- the sum of the "... N more KIND suppressed" lines
suppressed() {
	sed -n "s/.*\.\.\. \([0-9]*\) more $1 suppressed.*/\1/p" "$DLOG" |
		awk '{ n += $1 } END { print n + 0 }'
}

@test "5000 requests refused by the access rules log a bounded number of lines, and count the rest" {
	setup_env
	"$RPMEMCTL" -q psk-gen -i monitor "$W/monitor.psk"
	cp "$W/monitor.psk" "$W/server.psk"
	cat >>"$CONF" <<CONF
tls = { psk_file = "$W/server.psk"; };
access = ( { identity = "monitor"; regions = [ "r1" ]; rights = [ "read" ]; } );
CONF
	start_daemon
	local before t0
	before=$(wc -l <"$DLOG")
	t0=$(date +%s)
	run "$BUILD/tests/sess_probe" 127.0.0.1 "$PORT" "$W/monitor.psk" deny r2 5000
	[ "$status" -eq 0 ]
	[[ "$output" == "refused 5000 of 5000: identity 'monitor' may not read region 'r2'"* ]]
	at_most_per_sec "$t0" $(($(wc -l <"$DLOG") - before))
	# one more, in a later second, logs the count left out of the last one
	# (not a wait: the sleep is the subject, the log's one-second window
	# let pass)
	sleep 1.1
	run "$BUILD/tests/sess_probe" 127.0.0.1 "$PORT" "$W/monitor.psk" deny r2 1
	[ "$status" -eq 0 ]
	local logged
	logged=$(grep -c "refused: identity 'monitor' may not read region 'r2'" "$DLOG")
	[ $((logged + $(suppressed "refused requests"))) -eq 5001 ]
}

@test "5000 WRITEs that fail log a bounded number of warnings, and count the rest" {
	setup_daemon
	local before t0
	before=$(wc -l <"$DLOG")
	t0=$(date +%s)
	run $HOSTILE "$PORT" bad-writes 5000
	[ "$output" = "refused 5000 of 5000" ]
	at_most_per_sec "$t0" $(($(wc -l <"$DLOG") - before))
	# not a wait: the subject, the log's one-second window let pass
	sleep 1.1
	run $HOSTILE "$PORT" bad-writes 1
	[ "$output" = "refused 1 of 1" ]
	local logged
	logged=$(grep -c "WRITE to unknown handle 999 (reported at the next FLUSH)" "$DLOG")
	[ $((logged + $(suppressed "failed WRITE warnings"))) -eq 5001 ]
}
