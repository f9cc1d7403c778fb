#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# sync-dense.sh -- a sync in which many blocks changed against a mirror of the pool
#
# For each share of changed 4 KiB blocks (scattered at random, a fresh set
# each run), the same run times a `rpmemctl sync` of the changed file and
# a `rpmemctl mirror` of it into another pool; the ratio is sync over
# mirror (goal: <= 1.1 with every block changed). A sync's bytes
# transferred show whether it took the fine pass.
#
# Usage: tests/bench/sync-dense.sh [SIZE_MIB (512)] [RUNS (5)] [PERCENTS
#        ("100 50 10")]
# Files live in /dev/shm so that neither side waits for a disk.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
B=${RPMEM_BUILD:-$top/build}
SIZE=${1:-512}
RUNS=${2:-5}
PCTS=${3:-100 50 10}
W=$(mktemp -d /dev/shm/rpmem-syncd.XXXXXX)
PORT=$((21000 + RANDOM % 10000))
T=127.0.0.1:$PORT

cleanup() {
	[ -z "${DPID:-}" ] || kill "$DPID" 2>/dev/null || true
	wait 2>/dev/null || true
	rm -rf "$W"
}
trap cleanup EXIT

since() { echo "$(now) - $1" | bc -l; }

. "$(dirname "$0")/lib.sh"
bench_daemon region bench warning

echo "preparing a $SIZE MiB pool file" >&2
head -c $((SIZE << 20)) /dev/urandom >"$W/src"
"$B/rpmemctl" -q mirror "$W/src" "$T/bench/s"
"$B/rpmemctl" -q mirror "$W/src" "$T/bench/m"
nblocks=$((SIZE * 256))

# change PCT RUN -- rewrite PCT% of the 4 KiB blocks of src, scattered
change() {
	python3 - "$W/src" "$nblocks" "$1" "$2" <<'PY'
import os, random, sys
path, nblocks, pct, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
random.seed(seed)
with open(path, "r+b") as f:
    if pct >= 100:
        f.write(os.urandom(nblocks * 4096))
    else:
        for b in sorted(random.sample(range(nblocks), nblocks * pct // 100)):
            f.seek(b * 4096)
            f.write(os.urandom(4096))
PY
}

echo "Pool $SIZE MiB in /dev/shm, loopback, median of $RUNS runs, $(nproc) cores."
echo
echo "| 4 KiB blocks changed | sync | mirror | sync / mirror | bytes sent by sync |"
echo "|---|---|---|---|---|"
for pct in $PCTS; do
	: >"$W/t_sync"
	: >"$W/t_mirror"
	: >"$W/b_sync"
	for r in $(seq "$RUNS"); do
		change "$pct" "$r"
		t0=$(now)
		"$B/rpmemctl" sync --json "$W/src" "$T/bench/s" >"$W/sync.json"
		since "$t0" >>"$W/t_sync"
		jq -r .bytes_transferred "$W/sync.json" >>"$W/b_sync"
		cmp "$W/src" "$W/region/s"
		t0=$(now)
		"$B/rpmemctl" -q mirror "$W/src" "$T/bench/m"
		since "$t0" >>"$W/t_mirror"
		echo "$pct% run $r: sync $(tail -1 "$W/t_sync") s," \
		     "mirror $(tail -1 "$W/t_mirror") s" >&2
	done
	sy=$(median <"$W/t_sync")
	mi=$(median <"$W/t_mirror")
	echo "| $pct% | $sy s | $mi s | $(ratio "$sy" "$mi") | $(median <"$W/b_sync") B |"
done
