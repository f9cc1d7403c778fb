#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# persist.sh -- a TCP persist against a plain blocking TCP ping-pong of the same size
#
# Each round runs, back to back on the same loopback, tests/pingpong SIZE
# COUNT (a message of SIZE bytes, a 16-byte reply, TCP_NODELAY) and
# `rpmemctl bench -t tcp -i SIZE -c COUNT` (a write of SIZE bytes + flush
# to a pool of a dir region in /dev/shm). Prints the median over ROUNDS
# of each round's median round trip, and the ratio persist / ping-pong
# (goal: <= 1.2).
#
# Usage: tests/bench/persist.sh [ROUNDS (7)] [COUNT (20000)] [SIZES
#        ("256 4096")]
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
B=${RPMEM_BUILD:-$top/build}
ROUNDS=${1:-7}
COUNT=${2:-20000}
SIZES=${3:-256 4096}
W=$(mktemp -d /dev/shm/rpmem-persist.XXXXXX)
PORT=$((21000 + RANDOM % 10000))
T=127.0.0.1:$PORT

[ -x "$B/tests/pingpong" ] || { echo "make $B/tests/pingpong first" >&2; exit 77; }

cleanup() {
	[ -z "${DPID:-}" ] || kill "$DPID" 2>/dev/null || true
	wait 2>/dev/null || true
	rm -rf "$W"
}
trap cleanup EXIT


. "$(dirname "$0")/lib.sh"
bench_daemon region bench warning
"$B/rpmemctl" -q create "$T/bench/p" 64M

echo "TCP persist vs ping-pong, loopback, median of $ROUNDS rounds of $COUNT each, $(nproc) cores."
echo
echo "| size | ping-pong | persist | persist / ping-pong (goal <= 1.2) |"
echo "|---|---|---|---|"
for size in $SIZES; do
	: >"$W/pp"
	: >"$W/pe"
	for r in $(seq "$ROUNDS"); do
		"$B/tests/pingpong" "$size" "$COUNT" |
			sed -n 's/^median_us=\([0-9.]*\).*/\1/p' >>"$W/pp"
		"$B/rpmemctl" -q bench --json -t tcp -s 64M -i "$size" \
			-c "$COUNT" "$T/bench/p" | jq .lat_median_us >>"$W/pe"
		echo "$size B round $r: ping-pong $(tail -1 "$W/pp") us," \
		     "persist $(tail -1 "$W/pe") us" >&2
	done
	pp=$(median <"$W/pp")
	pe=$(median <"$W/pe")
	echo "| $size B | $pp us | $pe us | $(ratio "$pe" "$pp") |"
done
