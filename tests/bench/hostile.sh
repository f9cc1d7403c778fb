#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# hostile.sh -- an honest 64 MiB mirror + verify, unloaded vs. with 1000 hostile connections
#
# The hostile connections (tests/bats/hostile.py flood) come from 16
# loopback addresses (127.0.0.2-17): a third idle, a third trickling a
# HELLO, a third sending garbage; each one the target closes is opened
# again at once. Prints the median of RUNS mirror + verify times of each
# case, the ratio (goal: <= 2) and rpmemd's RssAnon under the flood.
#
# Usage: tests/bench/hostile.sh [RUNS (3)] [HOSTILE (1000)]
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
B=${RPMEM_BUILD:-$top/build}
RUNS=${1:-3}
N=${2:-1000}
W=$(mktemp -d /dev/shm/rpmem-hostile.XXXXXX)
PORT=$((21000 + RANDOM % 10000))
T=127.0.0.1:$PORT

cleanup() {
	[ -n "${FPID:-}" ] && kill "$FPID" 2>/dev/null || true
	[ -n "${DPID:-}" ] && kill "$DPID" 2>/dev/null || true
	wait 2>/dev/null || true
	rm -rf "$W"
}
trap cleanup EXIT

ulimit -n 8192 2>/dev/null || ulimit -n "$(ulimit -Hn)"
if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt $((2 * N + 100)) ]; then
	echo "cannot open $N sockets on both ends (ulimit -n is $(ulimit -n))" >&2
	exit 77
fi

. "$(dirname "$0")/lib.sh"
bench_daemon r1 r1 notice
head -c 64M /dev/urandom >"$W/src"
"$B/rpmemctl" -q mirror "$W/src" "$T/r1/p1"

# one_run -- seconds of one mirror + verify
one_run() {
	local t0 t1
	t0=$(date +%s.%N)
	"$B/rpmemctl" -q mirror "$W/src" "$T/r1/p1" >/dev/null
	"$B/rpmemctl" -q verify "$W/src" "$T/r1/p1" >/dev/null
	t1=$(date +%s.%N)
	echo "$t1 - $t0" | bc -l
}

# median -- of the numbers on stdin
median() {
	sort -g | awk '{ v[NR] = $1 } END { printf "%.3f\n", v[int((NR + 1) / 2)] }'
}

quiet=$(for _ in $(seq "$RUNS"); do one_run; done | median)

srcs=$(for i in $(seq 2 17); do echo "127.0.0.$i"; done)
# shellcheck disable=SC2086
python3 "$top/tests/bats/hostile.py" "$PORT" flood "$N" $srcs >"$W/flood" &
FPID=$!
for _ in $(seq 600); do
	grep -q "^open $N" "$W/flood" && break
	sleep 0.1
done
grep -q "^open $N" "$W/flood" || { echo "the flood did not start" >&2; exit 1; }
loaded=$(for _ in $(seq "$RUNS"); do one_run; done | median)
rss=$(awk '/^RssAnon:/ { print $2 }' "/proc/$DPID/status")

echo "| case | mirror + verify of 64 MiB, median of $RUNS |"
echo "| --- | --- |"
echo "| unloaded | ${quiet} s |"
echo "| with $N hostile connections | ${loaded} s |"
echo
echo "ratio: $(echo "$loaded / $quiet" | bc -l | xargs printf '%.2f') (goal <= 2)"
echo "rpmemd RssAnon under the flood: $rss KiB"
