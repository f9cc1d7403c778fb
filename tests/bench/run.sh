#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# run.sh -- loopback benchmarks as ratios against peers measured in the same run
#
#   mirror of SIZE_MIB vs nc piping the same file over loopback
#   sync with 1% of 4 KiB blocks changed vs rsync --inplace --no-whole-file
#   (--ignore-times, so rsync cannot skip the file on a same-second mtime)
#   sync of a BIG_MIB pool (4096) with 0.1% changed in 8 clustered runs
#   vs rsync the same way (BIG_MIB=0 skips it; 2048 if /dev/shm cannot
#   hold three copies of 4 GiB)
#   block hashing vs memcpy of the same buffer
#
# Usage: [BIG_MIB=N] tests/bench/run.sh [SIZE_MIB (1024)] [RUNS (5)]
# Files live in /dev/shm (memory, like PMem) so that neither side waits
# for a disk; results go to stdout as a markdown table.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/bench/lib.sh
. "$top/tests/bench/lib.sh"
B=${RPMEM_BUILD:-$top/build}
SIZE=${1:-1024}
RUNS=${2:-5}
W=$(mktemp -d /dev/shm/rpmem-bench.XXXXXX)
PORT=$((21000 + RANDOM % 10000))
NCPORT=$((PORT + 1))
RSPORT=$((PORT + 2))
T=127.0.0.1:$PORT

cleanup() {
	[ -n "${DPID:-}" ] && kill "$DPID" 2>/dev/null || true
	[ -n "${RSPID:-}" ] && kill "$RSPID" 2>/dev/null || true
	wait 2>/dev/null || true
	rm -rf "$W"
}
trap cleanup EXIT


mkdir -p "$W/rsync"
bench_daemon region bench warning
cat >"$W/rsyncd.conf" <<CONF
use chroot = no
uid = $(id -u)
gid = $(id -g)
[bench]
path = $W/rsync
read only = no
CONF
rsync --daemon --no-detach --port="$RSPORT" --address=127.0.0.1 \
	--config="$W/rsyncd.conf" &
RSPID=$!
sleep 0.5

echo "preparing a $SIZE MiB pool file" >&2
head -c $((SIZE << 20)) /dev/urandom >"$W/src"

# --- 1. mirror vs nc ----------------------------------------------------
: >"$W/t_nc"
: >"$W/t_mirror"
for r in $(seq "$RUNS"); do
	rm -f "$W/ncout"
	nc -l 127.0.0.1 "$NCPORT" >"$W/ncout" &
	ncl=$!
	sleep 0.2
	t0=$(now)
	nc -N 127.0.0.1 "$NCPORT" <"$W/src"
	wait "$ncl"
	t1=$(now)
	echo "$t1 - $t0" | bc -l >>"$W/t_nc"
	cmp "$W/src" "$W/ncout"
	rm -f "$W/ncout"

	"$B/rpmemctl" remove "$T/bench/m" >/dev/null 2>&1 || true
	"$B/rpmemctl" create "$T/bench/m" "${SIZE}M" >/dev/null
	t0=$(now)
	"$B/rpmemctl" mirror -q "$W/src" "$T/bench/m"
	t1=$(now)
	echo "$t1 - $t0" | bc -l >>"$W/t_mirror"
	cmp "$W/src" "$W/region/m"
	echo "run $r: nc $(tail -1 "$W/t_nc") s, mirror $(tail -1 "$W/t_mirror") s" >&2
done
nc_t=$(median <"$W/t_nc")
mi_t=$(median <"$W/t_mirror")

# --- 2. sync with 1% of 4 KiB blocks changed vs rsync ---------------------
nblocks=$((SIZE * 256))
nchanged=$((nblocks / 100))
cp "$W/src" "$W/rsync/src"
: >"$W/t_rsync"
: >"$W/t_sync"
: >"$W/sync_bytes"
: >"$W/rsync_bytes"
for r in $(seq "$RUNS"); do
	# change 1% of the 4 KiB blocks, scattered (a fresh random set each run)
	python3 - "$W/src" "$nblocks" "$nchanged" "$r" <<'PY'
import os, random, sys
path, nblocks, n, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
random.seed(seed)
with open(path, "r+b") as f:
    for b in random.sample(range(nblocks), n):
        f.seek(b * 4096)
        f.write(os.urandom(4096))
PY
	t0=$(now)
	rsync --inplace --no-whole-file --ignore-times --stats "$W/src" \
		"rsync://127.0.0.1:$RSPORT/bench/src" >"$W/rsync.out"
	t1=$(now)
	echo "$t1 - $t0" | bc -l >>"$W/t_rsync"
	grep 'Total bytes sent' "$W/rsync.out" | tr -dc '0-9\n' >>"$W/rsync_bytes"
	cmp "$W/src" "$W/rsync/src"

	t0=$(now)
	"$B/rpmemctl" sync --json "$W/src" "$T/bench/m" >"$W/sync.json"
	t1=$(now)
	echo "$t1 - $t0" | bc -l >>"$W/t_sync"
	jq -r .bytes_transferred "$W/sync.json" >>"$W/sync_bytes"
	cmp "$W/src" "$W/region/m"
	echo "run $r: rsync $(tail -1 "$W/t_rsync") s, sync $(tail -1 "$W/t_sync") s" >&2
done
rs_t=$(median <"$W/t_rsync")
sy_t=$(median <"$W/t_sync")
sy_b=$(median <"$W/sync_bytes")
rs_b=$(median <"$W/rsync_bytes")
changed=$((nchanged * 4096))

# --- 2b. big pool, 0.1% changed in 8 clustered runs vs rsync --------------
# the 1% files go first: the big case needs three copies in /dev/shm
rm -f "$W/rsync/src"
"$B/rpmemctl" remove "$T/bench/m" >/dev/null
BIG=${BIG_MIB:-4096}
if [ "$BIG" -gt 0 ]; then
	# three copies (source, pool, rsync's) and 1 GiB to spare
	avail=$(df -m --output=avail /dev/shm | tail -1 | tr -d ' ')
	if [ $((3 * BIG + 1024)) -gt "$avail" ] && [ "$BIG" -gt 2048 ]; then
		echo "only $avail MiB free in /dev/shm: the big case uses 2048 MiB, not $BIG" >&2
		BIG=2048
	fi
	echo "preparing a $BIG MiB pool file" >&2
	head -c $((BIG << 20)) /dev/urandom >"$W/src"
	"$B/rpmemctl" create "$T/bench/big" "${BIG}M" >/dev/null
	"$B/rpmemctl" mirror -q "$W/src" "$T/bench/big"
	cp "$W/src" "$W/rsync/src"
	bblocks=$((BIG * 256))
	bchanged=$((bblocks / 1000))
	: >"$W/t_brsync"
	: >"$W/t_bsync"
	: >"$W/bsync_bytes"
	for r in $(seq "$RUNS"); do
		# 0.1% of the 4 KiB blocks in 8 runs of contiguous blocks at
		# random places (a fresh set each run)
		python3 - "$W/src" "$bblocks" "$bchanged" "$r" <<'PY'
import os, random, sys
path, nblocks, n, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
random.seed(1000 + seed)
run = n // 8
with open(path, "r+b") as f:
    for start in random.sample(range(0, nblocks - run, run), 8):
        f.seek(start * 4096)
        f.write(os.urandom(run * 4096))
PY
		t0=$(now)
		rsync --inplace --no-whole-file --ignore-times --stats \
			"$W/src" "rsync://127.0.0.1:$RSPORT/bench/src" >"$W/rsync.out"
		t1=$(now)
		echo "$t1 - $t0" | bc -l >>"$W/t_brsync"
		cmp "$W/src" "$W/rsync/src"

		t0=$(now)
		"$B/rpmemctl" sync --json "$W/src" "$T/bench/big" >"$W/sync.json"
		t1=$(now)
		echo "$t1 - $t0" | bc -l >>"$W/t_bsync"
		jq -r .bytes_transferred "$W/sync.json" >>"$W/bsync_bytes"
		cmp "$W/src" "$W/region/big"
		echo "run $r ($BIG MiB, 0.1% clustered): rsync $(tail -1 "$W/t_brsync") s, sync $(tail -1 "$W/t_bsync") s" >&2
	done
	brs_t=$(median <"$W/t_brsync")
	bsy_t=$(median <"$W/t_bsync")
	bsy_b=$(median <"$W/bsync_bytes")
	bchanged_b=$(((bchanged / 8) * 8 * 4096))
	rm -f "$W/src" "$W/rsync/src"
	"$B/rpmemctl" remove "$T/bench/big" >/dev/null
fi

# --- 3. hashing vs memcpy -----------------------------------------------
"$B/tests/hashbench" 256 "$RUNS" >"$W/hash.out"
mc=$(sed -n 's/^memcpy_mib_s=//p' "$W/hash.out")
h2=$(sed -n 's/^hash64k_2threads_mib_s=\([0-9]*\).*/\1/p' "$W/hash.out")
h1=$(sed -n 's/^hash64k_1thread_mib_s=\([0-9]*\).*/\1/p' "$W/hash.out")

cat <<TABLE
Pool $SIZE MiB in /dev/shm, loopback, median of $RUNS runs, $(nproc) cores.

| measure | rpmem | peer | ratio (goal) |
|---|---|---|---|
| full mirror vs nc | $(mibs "$mi_t") MiB/s ($mi_t s) | nc $(mibs "$nc_t") MiB/s ($nc_t s) | $(ratio "$nc_t" "$mi_t") of nc (>= 0.9) |
| sync, 1% of 4 KiB blocks changed | $sy_t s | rsync $rs_t s | $(ratio "$rs_t" "$sy_t")x faster (>= 20x) |
| bytes moved by that sync | $sy_b B (changed: $changed B) | rsync sent $rs_b B | $(ratio "$sy_b" "$changed")x the changed bytes (<= 2x) |
$(if [ "$BIG" -gt 0 ]; then
	echo "| sync of $BIG MiB, 0.1% changed in 8 clustered runs | $bsy_t s, $bsy_b B moved (changed: $bchanged_b B) | rsync $brs_t s | $(ratio "$brs_t" "$bsy_t")x faster (>= 10x) |"
fi)
| block hashing (XXH3, 64 KiB blocks) vs memcpy | 1 thread $h1 MiB/s, 2 threads $h2 MiB/s | memcpy $mc MiB/s | $(ratio "$h1" "$mc") / $(ratio "$h2" "$mc") (>= 0.5) |
TABLE
