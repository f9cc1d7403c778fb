#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# txcpu.sh -- the CPU a replicated libpmemobj transaction costs, per build
#
# For each build given (a build directory with rpmemd,
# librpmem_preload.so and tests/pobj_app; default build/), in interleaved
# rounds: that build's rpmemd on loopback (a dir region in /dev/shm,
# started for the round), and pobj_app mt:1:N1 and mt:8:N8 (the
# transactions of preload.sh's group commit part, commit mode) under that
# build's preload library, each on a 16 MiB pool of the build's own. Per
# transaction:
#   app_us     the application's CPU (user + system of all its threads,
#              the library's included, while the transactions ran, as
#              pobj_app prints it)
#   rpmemd_us  rpmemd's CPU over the whole run (/proc/PID/stat, utime +
#              stime in clock ticks: coarse, hence many transactions;
#              the session's open, first compare and close are included)
#   flushes    FLUSHes rpmemd answered (its own count, the session's
#              close line; fewer than one when drains share rounds)
# and tx/s, p50 and p99 / p50 as pobj_app prints them; medians over the
# rounds. "unreplicated" is this tree's pobj_app without the library, in
# the same rounds. Then one counting run of each build and thread count
# under `perf stat` (if perf is installed; its tracepoints cost CPU, so
# not in the timed runs): system calls (raw_syscalls:sys_enter) and
# context switches per transaction on each side, after those of a run
# of one transaction (start-up, pool open, first compare, close) are
# taken off.
#
# Usage: tests/bench/txcpu.sh [ROUNDS (7)] [N1 (20000)] [N8 (2500)]
#        [BUILD...]
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
ROUNDS=${1:-7}
N1=${2:-20000}
N8=${3:-2500}
shift $(($# < 3 ? $# : 3))
BUILDS=("$@")
[ ${#BUILDS[@]} -gt 0 ] || BUILDS=("$top/build")
for b in "${BUILDS[@]}"; do
	[ -x "$b/tests/pobj_app" ] && [ -x "$b/rpmemd" ] ||
		{ echo "make all examples in $b first" >&2; exit 77; }
done
APP=$top/build/tests/pobj_app
[ -x "$APP" ] || APP=${BUILDS[0]}/tests/pobj_app
TOPW=$(mktemp -d /dev/shm/rpmem-txcpu.XXXXXX)
cleanup() {
	[ -z "${DPID:-}" ] || kill "$DPID" 2>/dev/null || true
	wait 2>/dev/null || true
	rm -rf "$TOPW"
}
trap cleanup EXIT
. "$(dirname "$0")/lib.sh"
tick=$(getconf CLK_TCK)

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

# up I -- build I's rpmemd (B, W, PORT, DPID set for it)
up() {
	B=${BUILDS[$1]}
	W=$TOPW/b$1
	mkdir -p "$W"
	PORT=$((21000 + RANDOM % 9000))
	bench_daemon r bench info
	[ -e "$W/pool" ] && return
	# a new pool: copied to the target once, before any timed run
	PMEM_IS_PMEM_FORCE=1 "$B/tests/pobj_app" "$W/pool" >/dev/null
	app mt:1:1 >/dev/null
}

# down -- stop the rpmemd that up started
down() {
	kill "$DPID"
	wait "$DPID" 2>/dev/null || true
	DPID=
}

# app STEP [PREFIX...] -- pobj_app STEP under the build's library
app() {
	local step=$1
	shift
	env PMEM_IS_PMEM_FORCE=1 LD_PRELOAD="$B/librpmem_preload.so" \
		RPMEM_REPLICATE="$W/pool=127.0.0.1:$PORT/bench/p" \
		"$@" "$B/tests/pobj_app" "$W/pool" "$step"
}

# one T N -- pobj_app's line (its CPU per transaction last), then
# rpmemd's ticks before and after, and the run's FLUSHes
one() {
	local d0 d1 c0 out
	d0=$(ticks)
	c0=$(closes)
	out=$(app "mt:$1:$2")
	d1=$(ticks)
	echo "$out $d0 $d1 $(flushes "$c0")"
}

# name I -- how the table calls build I: its folder, its tree's if build/
name() {
	local b
	b=$(realpath "${BUILDS[$1]}")
	[ "$(basename "$b")" = build ] && b=$(dirname "$b")
	basename "$b"
}

# n_of T -- transactions per thread for T threads
n_of() { if [ "$1" = 1 ]; then echo "$N1"; else echo "$N8"; fi; }

for _ in $(seq "$ROUNDS"); do
	for i in "${!BUILDS[@]}"; do
		up "$i"
		for t in 1 8; do
			n=$(n_of "$t")
			line=$(one "$t" "$n")
			# mt T N TPS P50 P99 P999 CPU_NS D0 D1 FLUSHES
			set -- $line
			au=$(awk -v c="$8" 'BEGIN {printf "%.1f", c / 1000}')
			du=$(awk -v d=$((${10} - $9)) -v k="$tick" \
				-v n=$((t * n)) \
				'BEGIN {printf "%.1f", d / k * 1e6 / n}')
			echo "$4 $(awk -v p="$5" 'BEGIN {printf "%.1f", p / 1000}') $au $du" \
			     "$(awk -v a="$au" -v d="$du" 'BEGIN {printf "%.1f", a + d}')" \
			     "$(awk -v a="$6" -v b="$5" 'BEGIN {printf "%.2f", a / b}')" \
			     "$(awk -v f="${11}" -v n=$((t * n)) 'BEGIN {printf "%.2f", f / n}')" \
				>>"$TOPW/res.$i.$t"
		done
		down
	done
	for t in 1 8; do
		set -- $(PMEM_IS_PMEM_FORCE=1 "$APP" "$TOPW/b0/pool" \
			"mt:$t:$(n_of "$t")")
		awk -v c="$8" 'BEGIN {printf "%.1f\n", c / 1000}' \
			>>"$TOPW/local.$t"
	done
done

echo "txcpu: pobj_app mt:1:$N1 and mt:8:$N8 (commit mode) against rpmemd on loopback, $ROUNDS interleaved rounds, medians"
printf '  %-14s %3s %7s %7s %7s %9s %8s %7s %9s\n' build threads tx/s p50_us \
	app_us rpmemd_us total_us p99/p50 flushes
for i in "${!BUILDS[@]}"; do
	for t in 1 8; do
		f=$TOPW/res.$i.$t
		printf '  %-14s %3s %7s %7s %7s %9s %8s %7s %9s\n' "$(name "$i")" \
			"$t" "$(cut -d' ' -f1 "$f" | median)" \
			"$(cut -d' ' -f2 "$f" | median)" \
			"$(cut -d' ' -f3 "$f" | median)" \
			"$(cut -d' ' -f4 "$f" | median)" \
			"$(cut -d' ' -f5 "$f" | median)" \
			"$(cut -d' ' -f6 "$f" | median)" \
			"$(cut -d' ' -f7 "$f" | median)"
	done
done
for t in 1 8; do
	printf '  %-14s %3s %7s %7s %7s\n' unreplicated "$t" - - \
		"$(median <"$TOPW/local.$t")"
done

command -v perf >/dev/null || { echo "  (no perf: no system call counts)"; exit 0; }
EV=raw_syscalls:sys_enter,context-switches
# counts STEP -- the app's and rpmemd's system calls and context
# switches over a run of STEP: "APP_SC APP_CS D_SC D_CS"
counts() {
	perf stat -x, -e "$EV" -o "$W/d.stat" -p "$DPID" &
	local sp=$! c0
	sleep 0.5 # attached
	c0=$(closes)
	app "$1" perf stat -x, -e "$EV" -o "$W/a.stat" >/dev/null
	flushes "$c0" >/dev/null
	kill -INT "$sp"
	wait "$sp" || true
	for s in a d; do
		grep -v '^#' "$W/$s.stat" | grep . | cut -d, -f1 | tr '\n' ' '
	done
}
echo "system calls and context switches per transaction (perf stat, one counting run each, less a run of one transaction)"
printf '  %-14s %3s %9s %9s %9s %9s\n' build threads app_sc app_cs \
	rpmemd_sc rpmemd_cs
for i in "${!BUILDS[@]}"; do
	up "$i"
	set -- $(counts mt:1:1)
	e=("$@")
	for t in 1 8; do
		m=$((t * $(n_of "$t")))
		set -- $(counts "mt:$t:$(n_of "$t")")
		printf '  %-14s %3s' "$(name "$i")" "$t"
		for k in 0 1 2 3; do
			j=$((k + 1))
			awk -v a="${!j}" -v e="${e[$k]}" -v m="$m" \
				'BEGIN {printf " %9.2f", (a - e) / (m - 1)}'
		done
		echo
	done
	down
done
