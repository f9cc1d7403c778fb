#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# preload.sh -- what librpmem_preload costs a libpmemobj application
#
#   none        pobj_app without LD_PRELOAD
#   unrelated   under LD_PRELOAD, RPMEM_REPLICATE naming another file:
#               every pmem_* call goes through the library, none matches
#   replicated  under LD_PRELOAD, replicating the pool to a loopback rpmemd
#               (RPMEM_REPLICATE_DRAIN=commit, the default: a transaction
#               waits for the target once, at its commit)
#   every       the same with RPMEM_REPLICATE_DRAIN=every (each drain waits)
#   ping-pong   tests/pingpong 64: the round trip a wait costs at least
#
# Each mode runs N small transactions (8 bytes each, pobj_app loop:N) and
# N pmemobj_persist calls of 8 bytes (persist:N), on a 16 MiB pool in
# /dev/shm, once with PMEM_IS_PMEM_FORCE=1 (libpmemobj's flush/drain path)
# and once with 0 (its msync path). Runs are interleaved; medians.
#
# Then threads (group commit), PMEM_IS_PMEM_FORCE=1, 1 and THREADS
# threads, each doing independent small transactions on a record of its
# own (pobj_app mt:T:N) or, for the replica API, 64-byte persists on a
# part of the file of its own (tests/replica_lat -t T): transactions
# (persists) per second over all threads and each one's latency p50, p99,
# p99.9, for none, commit, every, persist (pmemobj_persist of the record
# under the preload library, pobj_app mtp:T:N) and replica; medians over
# the runs of each figure, with the ping-pong RTT of the same runs.
#
# With DELAY_MS, the link has a round trip of its own, as a network has:
# every connection to rpmemd, and the ping-pong's, goes through
# build/tests/delay_line (tests/tools/delay_line.c; this tree's build,
# whatever RPMEM_BUILD is), which delivers what the initiator sends
# DELAY_MS later (a delay line: messages sent together arrive together).
# On plain loopback a round trip is CPU on both ends, which the two cores
# also need for everything else; over the delay the wait is the link's.
#
# Usage: [DELAY_MS=ms] tests/bench/preload.sh [N_LOCAL (200000)]
#        [N_REPLICATED (5000)] [RUNS (5)] [THREADS (8)]
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
B=${RPMEM_BUILD:-$top/build}
NL=${1:-200000}
NR=${2:-5000}
RUNS=${3:-5}
THREADS=${4:-8}
W=$(mktemp -d /dev/shm/rpmem-preload-bench.XXXXXX)
PORT=$((21000 + RANDOM % 9000))
APP=$B/tests/pobj_app
LAT=$B/tests/replica_lat
[ -x "$LAT" ] && [ -x "$B/tests/pingpong" ] ||
	{ echo "make $LAT $B/tests/pingpong first" >&2; exit 77; }
PRELOAD=$B/librpmem_preload.so

cleanup() {
	[ -z "${DPID:-}" ] || kill "$DPID" 2>/dev/null || true
	for p in "${PROXIES[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$W"
}
trap cleanup EXIT

. "$(dirname "$0")/lib.sh"
# ratio A B -- A / B to three decimals (lib.sh's gives two)
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", a / b}'; }
bench_daemon r bench warning

# RP: the port the initiators connect to; PING: the ping-pong's ports
PROXIES=()
RP=$PORT
PING=()
# proxy LISTEN TARGET -- a delay line from LISTEN to TARGET, ready
proxy() {
	"$DL" "$1" "$2" "$DELAY_MS" \
		>"$W/proxy.$1" 2>&1 &
	PROXIES+=($!)
	for _ in $(seq 100); do
		grep -q ready "$W/proxy.$1" && return
		sleep 0.05
	done
	echo "delay_line on port $1 did not start" >&2
	exit 1
}
DL=$top/build/tests/delay_line
if [ -n "${DELAY_MS:-}" ]; then
	[ -x "$DL" ] || { echo "make $DL first" >&2; exit 77; }
	RP=$((PORT + 1))
	proxy "$RP" "$PORT"
	PING=($((PORT + 2)) $((PORT + 3)))
	proxy "${PING[1]}" "${PING[0]}"
fi
# pingpong N -- the median round trip (us) of N ping-pongs over the link
pingpong() {
	"$B/tests/pingpong" 64 "$1" "${PING[@]}" |
		sed -n 's/^median_us=\([0-9.]*\).*/\1/p'
}

# run MODE FORCE N -- "TX_NS PERSIST_NS" of one run
run() {
	local pool=$W/pool.$1.$2 env=()
	case $1 in
	unrelated)
		env=(LD_PRELOAD="$PRELOAD"
		     RPMEM_REPLICATE="$W/unrelated=127.0.0.1:$RP/bench/x") ;;
	replicated)
		env=(LD_PRELOAD="$PRELOAD"
		     RPMEM_REPLICATE="$pool=127.0.0.1:$RP/bench/p$2") ;;
	every)
		env=(LD_PRELOAD="$PRELOAD" RPMEM_REPLICATE_DRAIN=every
		     RPMEM_REPLICATE="$pool=127.0.0.1:$RP/bench/e$2") ;;
	esac
	[ -e "$pool" ] || PMEM_IS_PMEM_FORCE=$2 "$APP" "$pool" >/dev/null
	env PMEM_IS_PMEM_FORCE="$2" "${env[@]}" "$APP" "$pool" "loop:$3" \
		"persist:$3" | awk '{v[$1] = $3} END {print v["loop"], v["persist"]}'
}

echo "preload cost: $RUNS runs, $NL local / $NR replicated operations" \
     "per run, pool in /dev/shm, rpmemd on loopback (TCP)" \
     "${DELAY_MS:+through a ${DELAY_MS} ms delay}"
for force in 1 0; do
	for mode in none unrelated replicated every; do
		: >"$W/$mode.$force"
	done
	: >"$W/rtt.$force"
	for _ in $(seq "$RUNS"); do
		for mode in none unrelated replicated every; do
			n=$NL
			case $mode in replicated|every) n=$NR ;; esac
			run $mode $force $n >>"$W/$mode.$force"
		done
		pingpong "$NR" >>"$W/rtt.$force"
	done
	path="flush/drain (PMEM_IS_PMEM_FORCE=1)"
	[ "$force" = 0 ] && path="msync (PMEM_IS_PMEM_FORCE=0)"
	echo
	echo "libpmemobj $path, ns per operation (median):"
	printf "  %-11s %10s %10s\n" mode tx persist
	for mode in none unrelated replicated every; do
		tx=$(cut -d' ' -f1 "$W/$mode.$force" | median)
		pe=$(cut -d' ' -f2 "$W/$mode.$force" | median)
		eval "tx_$mode=$tx pe_$mode=$pe"
		printf "  %-11s %10s %10s\n" "$mode" "$tx" "$pe"
	done
	echo "  unrelated/none:  tx $(ratio "$tx_unrelated" "$tx_none")," \
	     "persist $(ratio "$pe_unrelated" "$pe_none")"
	echo "  replicated cost: tx +$((tx_replicated - tx_none)) ns," \
	     "persist +$((pe_replicated - pe_none)) ns"
	rtt=$(awk '{printf "%.0f\n", $1 * 1000}' "$W/rtt.$force" | median)
	echo "  ping-pong RTT (64 B): $rtt ns"
	echo "  (replicated tx - tx) / RTT: commit" \
	     "$(ratio $((tx_replicated - tx_none)) "$rtt") (goal <= 1.3)," \
	     "every $(ratio $((tx_every - tx_none)) "$rtt")"
	echo "  replicated persist / RTT: $(ratio "$pe_replicated" "$rtt")" \
	     "(goal <= 1.2)"
done

# mt MODE T N -- "TPS P50 P99 P999" (ns) of T threads of N operations each
mt() {
	local pool=$W/mt.$1 env=()
	case $1 in
	replica)
		[ -e "$pool" ] || truncate -s 16M "$pool"
		"$LAT" -t "$2" "$pool" "$3" 64 1 "127.0.0.1:$RP/bench/mt" |
			sed 's/[a-z0-9_]*=//g' |
			awk '{printf "%.0f %.0f %.0f %.0f\n", $4, $1 * 1000,
			      $2 * 1000, $3 * 1000}'
		return ;;
	commit)
		env=(LD_PRELOAD="$PRELOAD"
		     RPMEM_REPLICATE="$pool=127.0.0.1:$RP/bench/mc") ;;
	every)
		env=(LD_PRELOAD="$PRELOAD" RPMEM_REPLICATE_DRAIN=every
		     RPMEM_REPLICATE="$pool=127.0.0.1:$RP/bench/me") ;;
	persist)
		env=(LD_PRELOAD="$PRELOAD"
		     RPMEM_REPLICATE="$pool=127.0.0.1:$RP/bench/mp") ;;
	esac
	local step=mt
	[ "$1" = persist ] && step=mtp
	[ -e "$pool" ] || PMEM_IS_PMEM_FORCE=1 "$APP" "$pool" >/dev/null
	env PMEM_IS_PMEM_FORCE=1 "${env[@]}" "$APP" "$pool" "$step:$2:$3" |
		awk -v s="$step" '$1 == s {print $4, $5, $6, $7}'
}

# col FILE I -- the median of column I of FILE
col() { cut -d' ' -f"$2" "$1" | median; }

echo
echo "threads (group commit), libpmemobj flush/drain (PMEM_IS_PMEM_FORCE=1):"
echo "T threads of independent small transactions (persist: 16 B"
echo "pmemobj_persist calls; replica: 64 B rpmemctl_replica_persist calls)"
modes="none commit every persist replica"
for t in 1 "$THREADS"; do
	for mode in $modes; do
		: >"$W/mt.$mode.$t"
	done
done
: >"$W/rtt.mt"
for _ in $(seq "$RUNS"); do
	for t in 1 "$THREADS"; do
		for mode in $modes; do
			n=$NR
			[ "$mode" = none ] && n=$((NL / 4))
			[ "$t" = 1 ] || n=$((n / t))
			mt "$mode" "$t" "$n" >>"$W/mt.$mode.$t"
		done
	done
	pingpong "$NR" >>"$W/rtt.mt"
done
printf "  %-8s %7s %10s %9s %9s %9s %8s\n" mode threads tx/s p50_us \
       p99_us p99.9_us p99/p50
for mode in $modes; do
	for t in 1 "$THREADS"; do
		f=$W/mt.$mode.$t
		tps=$(col "$f" 1)
		eval "tps_${mode}_$t=$tps"
		awk -v m="$mode" -v t="$t" -v tps="$tps" -v a="$(col "$f" 2)" \
		    -v b="$(col "$f" 3)" -v c="$(col "$f" 4)" 'BEGIN {
			printf "  %-8s %7s %10.0f %9.1f %9.1f %9.1f %8.2f\n",
			       m, t, tps, a / 1000, b / 1000, c / 1000, b / a }'
	done
done
rtt=$(median <"$W/rtt.mt")
echo "  ping-pong RTT (64 B): $rtt us"
awk -v a="$(col "$W/mt.commit.1" 2)" -v n="$(col "$W/mt.none.1" 2)" \
    -v p="$(col "$W/mt.persist.1" 2)" -v r="$rtt" 'BEGIN {
	printf "  1 thread, p50: (commit tx - tx) / RTT %.2f (goal <= 1.3), " \
	       "persist / RTT %.2f (goal <= 1.2)\n", (a - n) / 1000 / r,
	       p / 1000 / r }'
for mode in commit every persist replica; do
	eval "a=\$tps_${mode}_$THREADS b=\$tps_${mode}_1"
	echo "  $mode: $THREADS threads / 1 thread: $(ratio "$a" "$b")" \
	     "(goal >= 4)"
done
