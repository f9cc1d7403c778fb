#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# sync-ab.sh -- two builds' clients, interleaved, syncing one pool
#
# Starts B's rpmemd on loopback with a pool of SIZE_MIB mirrored from a
# random file in /dev/shm, then for ROUNDS rounds runs, for client A and
# then client B: a sync with nothing changed, then a sync after 1% of the
# 4 KiB blocks changed at random places (a fresh set each time). Prints
# the median of each; the same daemon and pool for both, so the ratio is
# what the clients differ by. Checks the pool against the file at the end.
#
# Usage: tests/bench/sync-ab.sh A_BUILD_DIR B_BUILD_DIR [SIZE_MIB (1024)]
#        [ROUNDS (9)]
# e.g.: git worktree add /tmp/old <commit> && make -C /tmp/old &&
#       tests/bench/sync-ab.sh /tmp/old/build build
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/bench/lib.sh
. "$top/tests/bench/lib.sh"
[ $# -ge 2 ] || { sed -n '3,16p' "$0" >&2; exit 2; }
A=$(cd "$1" && pwd)
B=$(cd "$2" && pwd)
SIZE=${3:-1024}
ROUNDS=${4:-9}
W=$(mktemp -d /dev/shm/rpmem-bench.XXXXXX)
PORT=$((21000 + RANDOM % 10000))
T=127.0.0.1:$PORT

cleanup() {
	[ -n "${DPID:-}" ] && kill "$DPID" 2>/dev/null || true
	wait 2>/dev/null || true
	rm -rf "$W"
}
trap cleanup EXIT

bench_daemon region bench warning
echo "preparing a $SIZE MiB pool" >&2
head -c $((SIZE << 20)) /dev/urandom >"$W/src"
"$B/rpmemctl" create "$T/bench/m" "${SIZE}M" >/dev/null
"$B/rpmemctl" mirror -q "$W/src" "$T/bench/m"
# the target's hash cache is cold after a mirror: warm it
"$B/rpmemctl" sync -q "$W/src" "$T/bench/m"
nblocks=$((SIZE * 256))
: >"$W/t"
for r in $(seq "$ROUNDS"); do
	for v in A B; do
		bin=$A
		[ "$v" = B ] && bin=$B
		t0=$(now)
		"$bin/rpmemctl" sync -q "$W/src" "$T/bench/m"
		t1=$(now)
		echo "$v-unchanged $(echo "$t1 - $t0" | bc -l)" >>"$W/t"
		python3 - "$W/src" "$nblocks" "$((nblocks / 100))" <<'PY'
import os, random, sys
path, nblocks, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
with open(path, "r+b") as f:
    for b in random.sample(range(nblocks), n):
        f.seek(b * 4096)
        f.write(os.urandom(4096))
PY
		t0=$(now)
		"$bin/rpmemctl" sync -q "$W/src" "$T/bench/m"
		t1=$(now)
		echo "$v-1pct $(echo "$t1 - $t0" | bc -l)" >>"$W/t"
	done
done
cmp "$W/src" "$W/region/m"
echo "Pool $SIZE MiB in /dev/shm, loopback, median of $ROUNDS rounds, A = $1, B = $2."
echo
echo "| sync | A | B | B / A |"
echo "|---|---|---|---|"
for k in unchanged 1pct; do
	a=$(grep "^A-$k " "$W/t" | cut -d' ' -f2 | median)
	b=$(grep "^B-$k " "$W/t" | cut -d' ' -f2 | median)
	echo "| $k | $a s | $b s | $(ratio "$b" "$a") |"
done
