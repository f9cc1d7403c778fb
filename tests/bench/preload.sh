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
# Usage: tests/bench/preload.sh [N_LOCAL (200000)] [N_REPLICATED (5000)]
#        [RUNS (5)]
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
B=${RPMEM_BUILD:-$top/build}
NL=${1:-200000}
NR=${2:-5000}
RUNS=${3:-5}
W=$(mktemp -d /dev/shm/rpmem-preload-bench.XXXXXX)
PORT=$((21000 + RANDOM % 9000))
APP=$B/tests/pobj_app
PRELOAD=$B/librpmem_preload.so

cleanup() {
	[ -z "${DPID:-}" ] || kill "$DPID" 2>/dev/null || true
	wait 2>/dev/null || true
	rm -rf "$W"
}
trap cleanup EXIT

. "$(dirname "$0")/lib.sh"
# ratio A B -- A / B to three decimals (lib.sh's gives two)
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", a / b}'; }
bench_daemon r bench warning

# run MODE FORCE N -- "TX_NS PERSIST_NS" of one run
run() {
	local pool=$W/pool.$1.$2 env=()
	case $1 in
	unrelated)
		env=(LD_PRELOAD="$PRELOAD"
		     RPMEM_REPLICATE="$W/unrelated=127.0.0.1:$PORT/bench/x") ;;
	replicated)
		env=(LD_PRELOAD="$PRELOAD"
		     RPMEM_REPLICATE="$pool=127.0.0.1:$PORT/bench/p$2") ;;
	every)
		env=(LD_PRELOAD="$PRELOAD" RPMEM_REPLICATE_DRAIN=every
		     RPMEM_REPLICATE="$pool=127.0.0.1:$PORT/bench/e$2") ;;
	esac
	[ -e "$pool" ] || PMEM_IS_PMEM_FORCE=$2 "$APP" "$pool" >/dev/null
	env PMEM_IS_PMEM_FORCE="$2" "${env[@]}" "$APP" "$pool" "loop:$3" \
		"persist:$3" | awk '{v[$1] = $3} END {print v["loop"], v["persist"]}'
}

echo "preload cost: $RUNS runs, $NL local / $NR replicated operations" \
     "per run, pool in /dev/shm, rpmemd on loopback (TCP)"
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
		"$B/tests/pingpong" 64 "$NR" |
			sed -n 's/^median_us=\([0-9.]*\).*/\1/p' >>"$W/rtt.$force"
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
