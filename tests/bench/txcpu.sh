#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# txcpu.sh -- the CPU a replicated libpmemobj transaction costs, per build
#
# One rpmemd on loopback, a pool in /dev/shm; for
# each build given (a build directory with librpmem_preload.so, default
# build/), in interleaved rounds: pobj_app mt:1:N1 and mt:8:N8 (the
# transactions of preload.sh's group commit part, commit mode) under that
# build's preload library. Per transaction: the application's CPU (user +
# system while its threads ran, as pobj_app prints it), rpmemd's over the
# whole run, the replica's start and final sync included (/proc/PID/stat,
# utime + stime, in clock ticks: coarse, hence many transactions), and the
# rate, p50 and p99 / p50 pobj_app prints, and the FLUSHes rpmemd
# answered per transaction (counted by rpmemd: its log's line for the
# session's close; fewer than one when drains share rounds). Medians over
# the rounds. This tree's
# build (or RPMEM_BUILD) runs rpmemd and tests/pobj_app for every build.
#
# Usage: tests/bench/txcpu.sh [ROUNDS (7)] [N1 (8000)] [N8 (1000)]
#        [BUILD...]
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
ROUNDS=${1:-7}
N1=${2:-8000}
N8=${3:-1000}
shift $(($# < 3 ? $# : 3))
BUILDS=("$@")
[ ${#BUILDS[@]} -gt 0 ] || BUILDS=("$top/build")
B=${RPMEM_BUILD:-$top/build}
APP=$B/tests/pobj_app
[ -x "$APP" ] || { echo "make $APP first" >&2; exit 77; }
W=$(mktemp -d /dev/shm/rpmem-txcpu.XXXXXX)
PORT=$((21000 + RANDOM % 9000))
cleanup() {
	[ -z "${DPID:-}" ] || kill "$DPID" 2>/dev/null || true
	wait 2>/dev/null || true
	rm -rf "$W"
}
trap cleanup EXIT
. "$(dirname "$0")/lib.sh"
bench_daemon r bench info
tick=$(getconf CLK_TCK)
pool=$W/pool
PMEM_IS_PMEM_FORCE=1 "$APP" "$pool" >/dev/null

# ticks -- rpmemd's CPU so far (utime + stime), in clock ticks
ticks() {
	local st
	read -r -a st <"/proc/$DPID/stat"
	echo $((st[13] + st[14]))
}

# closes -- sessions rpmemd has logged as closed so far
closes() { grep -c ' closed: ' "$W/rpmemd.log" || true; }

# flushes C -- the most FLUSHes of the sessions closed after the first C
# (the one that carried the run), once one is logged (within 5 s)
flushes() {
	for _ in $(seq 100); do
		[ "$(closes)" -gt "$1" ] && break
		sleep 0.05
	done
	grep ' closed: ' "$W/rpmemd.log" | tail -n +$(($1 + 1)) |
		sed -n 's/.* \([0-9]*\) flushes, .*/\1/p' | sort -n | tail -1
}

# one BUILD T N -- pobj_app's line (its CPU per transaction last), then
# rpmemd's ticks before and after, and the run's FLUSHes
one() {
	local d0 d1 c0 out
	d0=$(ticks)
	c0=$(closes)
	out=$(env PMEM_IS_PMEM_FORCE=1 LD_PRELOAD="$1/librpmem_preload.so" \
		RPMEM_REPLICATE="$pool=127.0.0.1:$PORT/bench/p" \
		"$APP" "$pool" "mt:$2:$3")
	d1=$(ticks)
	echo "$out $d0 $d1 $(flushes "$c0")"
}

# name BUILD -- how the table calls a build: its tree's folder
name() { basename "$(dirname "$1")"; }

for b in "${BUILDS[@]}"; do
	for t in 1 8; do
		: >"$W/res.$(name "$b").$t"
	done
done
for _ in $(seq "$ROUNDS"); do
	for b in "${BUILDS[@]}"; do
		label=$(name "$b")
		for t in 1 8; do
			n=$N1
			[ "$t" = 1 ] || n=$N8
			line=$(one "$b" "$t" "$n")
			# mt T N TPS P50 P99 P999 CPU_NS D0 D1 FLUSHES
			set -- $line
			au=$(awk -v c="$8" 'BEGIN {printf "%.1f", c / 1000}')
			du=$(awk -v d=$((${10} - $9)) -v k="$tick" \
				-v n=$((t * n)) \
				'BEGIN {printf "%.1f", d / k * 1e6 / n}')
			echo "$4 $(awk -v p="$5" 'BEGIN {printf "%.1f", p / 1000}') $au $du" \
			     "$(awk -v a="$6" -v b="$5" 'BEGIN {printf "%.2f", a / b}')" \
			     "$(awk -v f="${11}" -v n=$((t * n)) 'BEGIN {printf "%.2f", f / n}')" \
				>>"$W/res.$label.$t"
		done
	done
done

echo "txcpu: pobj_app mt:1:$N1 and mt:8:$N8 (commit mode) against one rpmemd on loopback, $ROUNDS interleaved rounds, medians"
printf '  %-20s %3s %9s %8s %10s %10s %8s %10s\n' build threads tx/s p50_us \
	app_us/tx rpmemd_us/tx p99/p50 flushes/tx
for b in "${BUILDS[@]}"; do
	label=$(name "$b")
	for t in 1 8; do
		f=$W/res.$label.$t
		printf '  %-20s %3s %9s %8s %10s %10s %8s %10s\n' "$label" "$t" \
			"$(cut -d' ' -f1 "$f" | median)" \
			"$(cut -d' ' -f2 "$f" | median)" \
			"$(cut -d' ' -f3 "$f" | median)" \
			"$(cut -d' ' -f4 "$f" | median)" \
			"$(cut -d' ' -f5 "$f" | median)" \
			"$(cut -d' ' -f6 "$f" | median)"
	done
done
