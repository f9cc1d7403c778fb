#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# sessions.sh -- rpmemd's memory: idle, and with COUNT concurrent sessions
#
# Goals (issue 11): an idle rpmemd under 8 MiB of anonymous memory, and
# under 64 MiB with 1,024 concurrent sessions, plaintext and TLS (PSK).
#
#   For each round and each of plaintext and TLS, a fresh loopback rpmemd
#   (max_sessions = COUNT + 16) and tests/sessclient: COUNT sessions, one
#   after the other, each opening (creating) its own 1 MiB pool, writing
#   256 KiB + FLUSH, a HASH of the pool in 4 KiB blocks (checked), LIST and
#   STATUS, and staying open. The daemon's /proc/PID/status is read:
#     idle      after start-up, before any connection
#     open      with all COUNT sessions open (after their work)
#     closed    after they all closed (threads reaped)
#     reopen    COUNT sessions again (pools exist now), all open
#   RssAnon (the goals' measure), VmRSS and Threads; medians of ROUNDS.
#
# Usage: tests/bench/sessions.sh [COUNT (1024)] [ROUNDS (3)]
# Needs make build/tests/sessclient (make bench builds it).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
B=${RPMEM_BUILD:-$top/build}
COUNT=${1:-1024}
ROUNDS=${2:-3}
[ -x "$B/tests/sessclient" ] || {
	echo "make $B/tests/sessclient first" >&2
	exit 77
}
W=$(mktemp -d /dev/shm/rpmem-sessions-bench.XXXXXX)
PORT=$((21000 + RANDOM % 9000))
T=127.0.0.1:$PORT
. "$top/tests/bench/lib.sh"

cleanup() {
	for p in ${CPID:-} ${DPID:-}; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$W"
}
trap cleanup EXIT

# one socket and one pool mapping per session, on both ends
[ "$(ulimit -n)" -ge $((COUNT * 2 + 256)) ] ||
	ulimit -n $((COUNT * 2 + 256))

"$B/rpmemctl" -q psk-gen -i bench "$W/bench.psk"
cp "$W/bench.psk" "$W/server.psk"
chmod 600 "$W/server.psk"

# field PID NAME -- a /proc/PID/status field in KiB (or the count)
field() { awk -v f="$2:" '$1 == f {print $2}' "/proc/$1/status"; }

# sample KIND STATE -- RssAnon, VmRSS and Threads of the daemon now
sample() {
	echo "$(field "$DPID" RssAnon) $(field "$DPID" VmRSS) $(field "$DPID" Threads)" \
		>>"$W/$1.$2"
}

# settle THREADS -- wait (up to 10 s) until the daemon is down to THREADS
settle() {
	for _ in $(seq 200); do
		[ "$(field "$DPID" Threads)" -le "$1" ] && return 0
		sleep 0.05
	done
	echo "rpmemd still has $(field "$DPID" Threads) threads" >&2
}

# wave KIND STATE -- COUNT sessions open, sampled as STATE, closed again
wave() {
	local args=(127.0.0.1 "$PORT" bench "$COUNT")
	[ "$1" = tls ] && args+=("$W/bench.psk")
	coproc SC { "$B/tests/sessclient" "${args[@]}"; }
	CPID=$SC_PID
	local line
	read -r line <&"${SC[0]}" || {
		echo "sessclient failed ($1)" >&2
		tail -5 "$W/rpmemd.log" >&2
		exit 1
	}
	[ "$line" = "open $COUNT" ] || exit 1
	sleep 0.5
	sample "$1" "$2"
	echo >&"${SC[1]}"
	read -r line <&"${SC[0]}"
	[ "$line" = closed ] || exit 1
	echo >&"${SC[1]}"
	wait "$CPID" || true
	CPID=
}

TLS_CONF="tls = { psk_file = \"$W/server.psk\"; };
access = ( { identity = \"bench\"; regions = [ \"*\" ]; rights = [ \"write\" ]; } );
limits = { max_sessions_per_identity = $((COUNT + 16)); };"

for r in $(seq "$ROUNDS"); do
	for kind in plain tls; do
		conf="max_sessions = $((COUNT + 16));"
		[ $kind = tls ] && conf="$conf
$TLS_CONF"
		rm -rf "$W/pools"
		bench_daemon pools bench warning "$conf"
		sleep 0.5
		sample $kind idle
		idle_threads=$(field "$DPID" Threads)
		wave $kind open
		settle "$idle_threads"
		sleep 0.5
		sample $kind closed
		wave $kind reopen
		settle "$idle_threads"
		kill "$DPID"
		wait "$DPID" || true
		DPID=
		if grep -qiE "error|warn" "$W/rpmemd.log"; then
			echo "rpmemd complained:" >&2
			grep -iE "error|warn" "$W/rpmemd.log" | head -5 >&2
		fi
		echo "round $r $kind: idle $(tail -1 "$W/$kind.idle"), open $(tail -1 "$W/$kind.open"), closed $(tail -1 "$W/$kind.closed"), reopen $(tail -1 "$W/$kind.reopen") (RssAnon VmRSS KiB, threads)" >&2
	done
done

# med KIND STATE COLUMN -- the median of a column of the samples
med() { awk -v c="$3" '{print $c}' "$W/$1.$2" | median; }
# mib KIB -- KiB as MiB with one decimal
mib() { awk -v k="$1" 'BEGIN {printf "%.1f", k / 1024}'; }

echo
echo "rpmemd, $COUNT concurrent sessions on loopback, medians of $ROUNDS rounds, $(nproc) cores."
echo
echo "| daemon | state | RssAnon MiB | VmRSS MiB | threads | goal |"
echo "|---|---|---|---|---|---|"
for kind in plain tls; do
	for st in idle open closed reopen; do
		goal=
		case $st in
		idle) goal="< 8 MiB" ;;
		open | reopen) [ "$COUNT" -ge 1024 ] && goal="< 64 MiB" ;;
		esac
		echo "| $kind | $st | $(mib "$(med $kind $st 1)") | $(mib "$(med $kind $st 2)") | $(med $kind $st 3) | $goal |"
	done
done
