#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# targets.sh -- several targets: mirror to 1, 2 and 3 rpmemd instances on
# loopback, and the persist latency of a replica with k = 1 of 3 targets
#
# Starts three rpmemd instances (dir regions in /dev/shm). Each of ROUNDS
# rounds times `rpmemctl mirror FILE T1 [T2 [T3]]` of a random SIZE_MIB
# file into new pools, and runs tests/replica_lat (COUNT persists of 4
# KiB through rpmemctl_replica_persist) over one target, over three with
# k = 1 and over three with k = 3. Prints the medians and the ratios to
# one target (issue goals: a mirror to 3 <= 1.3x one where the link is
# not the bound; a k=1-of-3 persist within 1.1x of one target).
#
# Separate links are emulated by a per-target rate limit (--bwlimit
# LINK, each target's transfer thread its own limiter): the same mirror
# to 1 and 3 targets, where the host's CPU is not what bounds a
# transfer, shows how far the transfers overlap.
#
# Usage: tests/bench/targets.sh [SIZE_MIB (256)] [ROUNDS (5)] [COUNT (5000)]
#        LINK=RATE (default 64M) for the emulated links
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
B=${RPMEM_BUILD:-$top/build}
SIZE=${1:-256}
ROUNDS=${2:-5}
COUNT=${3:-5000}
LINK=${LINK:-64M}
W=$(mktemp -d /dev/shm/rpmem-targets.XXXXXX)
P0=$((21000 + RANDOM % 10000))

[ -x "$B/tests/replica_lat" ] || { echo "make $B/tests/replica_lat first" >&2; exit 77; }
. "$(dirname "$0")/lib.sh"

DP=()
cleanup() {
	kill "${DP[@]}" 2>/dev/null || true
	wait 2>/dev/null || true
	rm -rf "$W"
}
trap cleanup EXIT
export XDG_CONFIG_HOME=$W/xdg

bench_daemons 3 || { echo "rpmemd did not start" >&2; exit 1; }
head -c $((SIZE << 20)) /dev/urandom >"$W/src"
head -c $((64 << 20)) /dev/urandom >"$W/rep"

# targets N POOL -- the first N targets' pool POOL
targets() {
	local i
	for i in $(seq 0 $(($1 - 1))); do echo "${T[$i]}/bench/$2"; done
}

for n in 1 2 3; do : >"$W/m$n"; : >"$W/l$n"; done
for k in 1 31 33; do : >"$W/p$k"; done
for r in $(seq "$ROUNDS"); do
	for n in 1 2 3; do
		t0=$(now)
		# shellcheck disable=SC2046
		"$B/rpmemctl" -q mirror "$W/src" $(targets "$n" "m$r$n")
		awk -v a="$t0" -v b="$(now)" 'BEGIN {print b - a}' >>"$W/m$n"
		for i in $(seq 0 $((n - 1))); do
			cmp "$W/src" "$W/d$i/m$r$n"
			rm -f "$W/d$i/m$r$n"*
		done
	done
	for n in 1 3; do
		t0=$(now)
		# shellcheck disable=SC2046
		"$B/rpmemctl" -q mirror --bwlimit "$LINK" "$W/src" \
			$(targets "$n" "l$r$n")
		awk -v a="$t0" -v b="$(now)" 'BEGIN {print b - a}' >>"$W/l$n"
		for i in $(seq 0 $((n - 1))); do
			cmp "$W/src" "$W/d$i/l$r$n"
			rm -f "$W/d$i/l$r$n"*
		done
	done
	lat() { "$B/tests/replica_lat" "$W/rep" "$COUNT" 4096 "$@" |
		sed -n 's/^median_us=\([0-9.]*\).*/\1/p'; }
	# shellcheck disable=SC2046
	lat 1 $(targets 1 "p$r") >>"$W/p1"
	# shellcheck disable=SC2046
	lat 1 $(targets 3 "q$r") >>"$W/p31"
	# shellcheck disable=SC2046
	lat 3 $(targets 3 "s$r") >>"$W/p33"
	echo "round $r: mirror $(tail -1 "$W/m1") $(tail -1 "$W/m2")" \
	     "$(tail -1 "$W/m3") s; persist $(tail -1 "$W/p1")" \
	     "$(tail -1 "$W/p31") $(tail -1 "$W/p33") us" >&2
done

m1=$(median <"$W/m1")
echo "Several targets, loopback, $(nproc) cores, median of $ROUNDS rounds."
echo
echo "| mirror of $SIZE MiB | time | / one target |"
echo "|---|---|---|"
for n in 1 2 3; do
	m=$(median <"$W/m$n")
	echo "| $n target(s) | $m s | $(ratio "$m" "$m1") |"
done
echo
l1=$(median <"$W/l1")
echo "| mirror of $SIZE MiB, links of $LINK/s each | time | / one target |"
echo "|---|---|---|"
for n in 1 3; do
	m=$(median <"$W/l$n")
	echo "| $n target(s) | $m s | $(ratio "$m" "$l1") |"
done
echo
p1=$(median <"$W/p1")
echo "| 4 KiB persist ($COUNT) | median | / one target |"
echo "|---|---|---|"
echo "| 1 target | $p1 us | 1.00 |"
echo "| k = 1 of 3 | $(median <"$W/p31") us | $(ratio "$(median <"$W/p31")" "$p1") |"
echo "| k = 3 of 3 | $(median <"$W/p33") us | $(ratio "$(median <"$W/p33")" "$p1") |"
