#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# bwlimit.sh -- measured mirror throughput against the bandwidth limit
#
#   rpmemctl mirror --bwlimit 50M, --bwlimit 100M (the client paces), and
#   an unlimited client against a daemon with bwlimit = "100M" (the
#   daemon paces), each a mirror of SIZE_MIB into an existing pool;
#   throughput = SIZE / wall time of the whole rpmemctl mirror (connect,
#   state changes and the final flush included); median of RUNS.
#   Rates are powers of 1024: 50M = 50 MiB/s.
#
# Usage: tests/bench/bwlimit.sh [SIZE_MIB (256)] [RUNS (3)]
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/bench/lib.sh
. "$top/tests/bench/lib.sh"
B=${RPMEM_BUILD:-$top/build}
SIZE=${1:-256}
RUNS=${2:-3}
W=$(mktemp -d /dev/shm/rpmem-bwlimit-bench.XXXXXX)
P1=$((21000 + RANDOM % 9000))
P2=$((P1 + 1))

cleanup() {
	for p in ${DPIDS:-}; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$W"
}
trap cleanup EXIT


# start PORT DIR EXTRA -- an rpmemd on loopback serving DIR as region r1
start() {
	mkdir -p "$2"
	cat >"$W/$1.conf" <<CONF
listen = ["127.0.0.1"];
port = $1;
log = { level = "notice"; target = "stderr"; };
regions = ( { name = "r1"; type = "dir"; path = "$2"; } );
$3
CONF
	"$B/rpmemd" -c "$W/$1.conf" 2>>"$W/rpmemd.log" &
	DPIDS="${DPIDS:-} $!"
	for _ in $(seq 100); do
		(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
		sleep 0.05
	done
	echo "rpmemd on port $1 did not start" >&2
	exit 1
}

start "$P1" "$W/r1" ""
start "$P2" "$W/r2" 'bwlimit = "100M";'
head -c "$((SIZE << 20))" /dev/urandom >"$W/src"
# the pools exist before the timed runs
"$B/rpmemctl" -q mirror "$W/src" "127.0.0.1:$P1/r1/p"
"$B/rpmemctl" -q mirror --bwlimit 1G "$W/src" "127.0.0.1:$P2/r1/p" ||
	true

# run LIMIT_MIB PORT ARGS... -- RUNS mirrors; prints the median MiB/s
run() {
	local port=$2
	shift 2
	for _ in $(seq "$RUNS"); do
		local t0 t1
		t0=$(now)
		"$B/rpmemctl" -q mirror "$@" "$W/src" "127.0.0.1:$port/r1/p"
		t1=$(now)
		awk -v s="$SIZE" -v a="$t0" -v b="$t1" \
			'BEGIN {printf "%.2f\n", s / (b - a)}'
	done | median
}

printf '%-32s %10s %14s %10s\n' "case" "limit" "measured" "error"
row() {
	local name=$1 limit=$2 got=$3
	printf '%-32s %7s MiB/s %8s MiB/s %9s%%\n' "$name" "$limit" "$got" \
		"$(awk -v l="$limit" -v g="$got" 'BEGIN {printf "%+.1f", (g - l) * 100 / l}')"
}
row "mirror --bwlimit 50M" 50 "$(run 50 "$P1" --bwlimit 50M)"
row "mirror --bwlimit 100M" 100 "$(run 100 "$P1" --bwlimit 100M)"
row "rpmemd bwlimit = \"100M\"" 100 "$(run 100 "$P2")"
echo "unlimited, for reference: $(run 0 "$P1") MiB/s (${SIZE} MiB, median of $RUNS)"
