#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# twofiles.sh -- what a commit over two replicated files costs against
# one over a single file, under the preload library
#
# build/tests/pmem2_app (an unmodified libpmem2 program) makes N commits of 8
# bytes each: plain stores, the map's flush function, one drain. "one":
# a single replicated file; "two": the same into two replicated files
# (both flushed, then one drain). Both files go to one rpmemd on
# loopback (TCP), on the one connection the preload library's links to a
# target share (a build before that: a connection each). With OTHER_BUILD, the
# same runs with that build's librpmem_preload.so too (A/B: OTHER is A,
# this build B), interleaved; the ping-pong round trip (tests/pingpong
# 64) of the same rounds. Medians over the rounds of each run's median.
# With DELAY_MS, the files' connections go through
# build/tests/delay_line (tests/tools/delay_line.c, this tree's build),
# which holds what the initiator sends for
# that long (a link whose latency, not the CPU, is the bound); the RTT is
# not the ping-pong's (which does not go through the proxy): two/one is
# the figure to read.
#
# Usage: [OTHER_BUILD=DIR] [DELAY_MS=ms] tests/bench/twofiles.sh [N (3000)]
#        [RUNS (5)]
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
B=${RPMEM_BUILD:-$top/build}
N=${1:-3000}
RUNS=${2:-5}
W=$(mktemp -d /dev/shm/rpmem-twofiles.XXXXXX)
PORT=$((21000 + RANDOM % 9000))
APP=$B/tests/pmem2_app
[ -x "$APP" ] && [ -x "$B/tests/pingpong" ] ||
	{ echo "make $APP $B/tests/pingpong first" >&2; exit 77; }

cleanup() {
	[ -z "${DPID:-}" ] || kill "$DPID" 2>/dev/null || true
	[ -z "${PROXY:-}" ] || kill "$PROXY" 2>/dev/null || true
	wait 2>/dev/null || true
	rm -rf "$W"
}
trap cleanup EXIT

. "$(dirname "$0")/lib.sh"
bench_daemon r bench warning
TP=$PORT
if [ -n "${DELAY_MS:-}" ]; then
	TP=$((PORT + 1))
	DL=$top/build/tests/delay_line
	[ -x "$DL" ] || { echo "make $DL first" >&2; exit 77; }
	"$DL" "$TP" "$PORT" "$DELAY_MS" \
		>"$W/proxy.out" 2>&1 &
	PROXY=$!
	for _ in $(seq 100); do
		grep -q ready "$W/proxy.out" && break
		sleep 0.05
	done
fi

BUILDS=(B)
declare -A PRE=([B]=$B/librpmem_preload.so)
if [ -n "${OTHER_BUILD:-}" ]; then
	BUILDS=(A B)
	PRE[A]=$OTHER_BUILD/librpmem_preload.so
fi

# run BUILD FILES -- the median commit (us) of one run
run() {
	local a=$W/$1.a b=$W/$1.b rep
	rep="$a=127.0.0.1:$TP/bench/$1a"
	[ "$2" = two ] && rep="$rep,$b=127.0.0.1:$TP/bench/$1b"
	[ -e "$a" ] || head -c 4M /dev/zero >"$a"
	[ -e "$b" ] || head -c 4M /dev/zero >"$b"
	local also=()
	[ "$2" = two ] && also=("also:$b")
	env LD_PRELOAD="${PRE[$1]}" RPMEM_REPLICATE="$rep" \
		"$APP" "$a" "${also[@]}" "commits:$N" |
		sed -n 's/^commits .*median_us=\([0-9.]*\).*/\1/p'
}

echo "two files: $RUNS rounds of $N commits (8 bytes, flush, drain)" \
     "per run, files in /dev/shm, rpmemd on loopback (TCP)" \
     "${DELAY_MS:+through a ${DELAY_MS} ms delay}"
for _ in $(seq "$RUNS"); do
	for b in "${BUILDS[@]}"; do
		run "$b" one >>"$W/$b.one"
		run "$b" two >>"$W/$b.two"
	done
	"$B/tests/pingpong" 64 "$N" |
		sed -n 's/^median_us=\([0-9.]*\).*/\1/p' >>"$W/rtt"
done
rtt=$(median <"$W/rtt")
printf '%-6s %10s %10s %10s %10s\n' build one_us two_us two/one two/rtt
for b in "${BUILDS[@]}"; do
	one=$(median <"$W/$b.one")
	two=$(median <"$W/$b.two")
	printf '%-6s %10s %10s %10s %10s\n' "$b" "$one" "$two" \
		"$(ratio "$two" "$one")" "$(ratio "$two" "$rtt")"
done
echo "ping-pong RTT median: $rtt us"
