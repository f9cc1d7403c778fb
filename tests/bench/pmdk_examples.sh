#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# pmdk_examples.sh -- what replication costs PMDK's own map example (Debian's
# libpmemobj-dev examples, built by tests/tools/build_pmdk_examples.sh),
# run unmodified under librpmem_preload
#
#   none     mapcli without LD_PRELOAD
#   commit   under LD_PRELOAD, replicating to a loopback rpmemd
#            (RPMEM_REPLICATE_DRAIN=commit, the default)
#   every    the same with RPMEM_REPLICATE_DRAIN=every
#
# For each back end, each run inserts N random keys ("i KEY" lines, then
# "q") and is compared with a run that inserts nothing (opening and
# closing the pool): microseconds per insert and, from the line rpmemd
# logs when the session closes, FLUSHes (awaited round trips) and
# BARRIERs per insert. Pools of 32 MiB in /dev/shm, the target's region
# too; libpmemobj's flush/drain path (PMEM_IS_PMEM_FORCE=1). Medians of
# RUNS runs; the ping-pong RTT (tests/pingpong 64) for scale.
#
# Usage: tests/bench/pmdk_examples.sh [N (300)] [RUNS (3)] [BACK_END...]
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
B=${RPMEM_BUILD:-$top/build}
N=${1:-300}
RUNS=${2:-3}
shift 2 2>/dev/null || shift $#
KINDS=${*:-btree rbtree hashmap_tx hashmap_atomic}
EXAMPLES=${PMDK_EXAMPLES:-/usr/share/doc/libpmemobj-dev/examples}
W=$(mktemp -d /dev/shm/rpmem-pmdk-bench.XXXXXX)
PORT=$((21000 + RANDOM % 9000))
PRELOAD=$B/librpmem_preload.so
export PMEM_IS_PMEM_FORCE=1

cleanup() {
	[ -z "${DPID:-}" ] || kill "$DPID" 2>/dev/null || true
	wait 2>/dev/null || true
	rm -rf "$W"
}
trap cleanup EXIT

. "$(dirname "$0")/lib.sh"
mkdir "$W/ex"
"$top/tests/tools/build_pmdk_examples.sh" "$EXAMPLES" "$W/ex"
bench_daemon r bench info

# counts -- "FLUSHES BARRIERS" of the last mapcli session (rpmemd's log)
counts() {
	local line id
	line=$(grep "(mapcli librpmemctl" "$W/rpmemd.log" | tail -n 1)
	id=${line#*session }
	id=${id%% *}
	grep "session $id from .* closed:" "$W/rpmemd.log" |
		sed -E 's/.* ([0-9]+) flushes, ([0-9]+) barriers\)$/\1 \2/'
}

# run MODE KIND K -- "USEC FLUSHES BARRIERS" of mapcli KIND inserting K keys
run() {
	local pool=$W/$1.$2 env=() t0 t1
	case $1 in
	commit) env=(LD_PRELOAD="$PRELOAD"
		     RPMEM_REPLICATE="$pool=127.0.0.1:$PORT/bench/c$2") ;;
	every)	env=(LD_PRELOAD="$PRELOAD" RPMEM_REPLICATE_DRAIN=every
		     RPMEM_REPLICATE="$pool=127.0.0.1:$PORT/bench/e$2") ;;
	esac
	if [ ! -e "$pool" ]; then
		env "${env[@]}" pmempool create obj --layout map --size 32M \
			"$pool"
		echo q | env "${env[@]}" "$W/ex/mapcli" "$2" "$pool"
	fi
	od -An -tu8 -N $((8 * $3 + 8)) /dev/urandom | tr -s ' ' '\n' |
		sed '/^$/d' | head -n "$3" | sed 's/^/i /' >"$W/cmds"
	echo q >>"$W/cmds"
	t0=$(date +%s%N)
	env "${env[@]}" "$W/ex/mapcli" "$2" "$pool" <"$W/cmds" >/dev/null
	t1=$(date +%s%N)
	if [ "$1" = none ]; then
		echo "$(((t1 - t0) / 1000)) 0 0"
	else
		echo "$(((t1 - t0) / 1000)) $(counts)"
	fi
}

# per_insert MODE KIND -- "USEC FLUSHES BARRIERS" per insert, one run
per_insert() {
	local b r
	b=($(run "$1" "$2" 0))
	r=($(run "$1" "$2" "$N"))
	awk -v n="$N" -v t=$((r[0] - b[0])) -v f=$((r[1] - b[1])) \
		-v b=$((r[2] - b[2])) \
		'BEGIN {printf "%.1f %.2f %.2f\n", t / n, f / n, b / n}'
}

echo "PMDK map example: $RUNS runs of $N inserts per back end and mode," \
     "pools in /dev/shm, rpmemd on loopback (TCP)"
printf "%-15s %-7s %10s %8s %9s\n" back-end mode us/insert flushes barriers
for kind in $KINDS; do
	for mode in none commit every; do
		: >"$W/res"
		for _ in $(seq "$RUNS"); do
			per_insert "$mode" "$kind" >>"$W/res"
		done
		printf "%-15s %-7s %10s %8s %9s\n" "$kind" "$mode" \
			"$(cut -d' ' -f1 "$W/res" | median)" \
			"$(cut -d' ' -f2 "$W/res" | median)" \
			"$(cut -d' ' -f3 "$W/res" | median)"
	done
done
echo "ping-pong RTT (64 B): $("$B/tests/pingpong" 64 2000 |
	sed -n 's/^median_us=\([0-9.]*\).*/\1/p') us"
