#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# frozen.sh -- small transactions replicated to three targets with quorum
# 2: healthy, and with one target frozen (its rpmemd stopped with SIGSTOP,
# its connections open) just before the run
#
# Starts three rpmemd instances (dir regions in /dev/shm) and runs
# tests/pobj_app under the preload library on a pool replicated to the
# three, quorum 2. Each case brings the pool up, pauses, (freezes the
# third daemon), then runs COUNT transactions on one thread (mt:1:COUNT)
# three times: the first run's time is measured from the freeze; by the
# end of the second the frozen target has been kicked out (after
# RPMEM_REPLICATE_KICKOUT, 2000 ms here; the script checks that replicas
# shows it degraded), and the third run's latencies are all after it. A third case, pair, is the state after the
# kick-out without one: the two healthy targets alone, quorum 2 of 2
# (every drain waits for both, where healthy it waits for the faster two
# of three). Prints per case the first run's seconds and
# the second run's p50 and p99 (us), and the ratios frozen / healthy
# (issue goals: the first run within 2x healthy + 5 s, the p99 after the
# kick-out within 2x healthy).
#
# Usage: tests/bench/frozen.sh [COUNT (30000)] [ROUNDS (3)]
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
B=${RPMEM_BUILD:-$top/build}
COUNT=${1:-30000}
ROUNDS=${2:-3}
W=$(mktemp -d /dev/shm/rpmem-frozen.XXXXXX)
P0=$((21000 + RANDOM % 10000))

[ -x "$B/tests/pobj_app" ] || { echo "make $B/tests/pobj_app first" >&2; exit 77; }
. "$(dirname "$0")/lib.sh"

DP=()
cleanup() {
	kill -CONT "${DP[@]}" 2>/dev/null || true
	kill "${DP[@]}" 2>/dev/null || true
	wait 2>/dev/null || true
	rm -rf "$W"
}
trap cleanup EXIT
export XDG_CONFIG_HOME=$W/xdg

bench_daemons 3 || { echo "rpmemd did not start" >&2; exit 1; }
export PMEM_IS_PMEM_FORCE=0 RPMEM_REPLICATE_QUORUM=2 \
       RPMEM_REPLICATE_POLICY=degraded RPMEM_REPLICATE_KICKOUT=2000

# run CASE R -- one round of CASE (healthy or frozen) on pool pCASE-R:
# prints "SECONDS P50_US P99_US"
run() {
	local pool=$W/$1-$2.obj t0 t1
	local third=",${T[2]}/bench/$1$2"
	[ "$1" != pair ] || third=
	export RPMEM_REPLICATE="$pool=${T[0]}/bench/$1$2,${T[1]}/bench/$1$2$third"
	rm -f "$W/ctl"
	mkfifo "$W/ctl"
	LD_PRELOAD="$B/librpmem_preload.so" "$B/tests/pobj_app" "$pool" \
		set:0:up pause mt:1:"$COUNT" mt:1:"$COUNT" pause mt:1:"$COUNT" \
		<"$W/ctl" >"$W/out" 2>"$W/err" &
	local app=$!
	exec 5>"$W/ctl"
	until grep -q paused "$W/out"; do sleep 0.05; done
	[ "$1" != frozen ] || kill -STOP "${DP[2]}"
	t0=$(now)
	echo go >&5
	# the first run's end: its line printed
	until [ "$(grep -c '^mt ' "$W/out")" -ge 1 ]; do sleep 0.01; done
	t1=$(now)
	until [ "$(grep -c paused "$W/out")" -ge 2 ]; do sleep 0.05; done
	# frozen: kicked out by now (the first two runs outlast the
	# timeout); the third run is all after it
	local st
	st=$("$B/rpmemctl" replicas --json "$pool" || true)
	if [ "$1" = frozen ] &&
	   [ "$(jq -r '.replicas[2].link_state' <<<"$st")" != degraded ]; then
		echo "the frozen target was not kicked out" >&2
		kill "$app"
		exit 1
	fi
	echo go >&5
	exec 5>&-
	wait "$app"
	[ "$1" != frozen ] || kill -CONT "${DP[2]}"
	awk -v a="$t0" -v b="$t1" '/^mt / { n++; if (n == 3) { p50 = $5; p99 = $6 } }
		END { printf "%.2f %.0f %.0f\n", b - a, p50 / 1000, p99 / 1000 }' "$W/out"
}

for c in healthy frozen pair; do : >"$W/$c"; done
for r in $(seq "$ROUNDS"); do
	for c in healthy frozen pair; do
		run "$c" "$r" >>"$W/$c"
	done
done
for c in healthy frozen pair; do
	s=$(awk '{print $1}' "$W/$c" | median)
	p50=$(awk '{print $2}' "$W/$c" | median)
	p99=$(awk '{print $3}' "$W/$c" | median)
	eval "${c}_s=$s ${c}_p99=$p99"
	echo "$c: $COUNT transactions in $s s; after: p50 $p50 us, p99 $p99 us (median of $ROUNDS)"
done
# shellcheck disable=SC2154
echo "frozen / healthy: time $(ratio "$frozen_s" "$healthy_s")x" \
     "(goal <= 2x + 5 s: $(awk -v h="$healthy_s" -v f="$frozen_s" 'BEGIN {print (f <= 2 * h + 5) ? "met" : "missed"}')), p99 after the kick-out $(ratio "$frozen_p99" "$healthy_p99")x (goal <= 2x)"
