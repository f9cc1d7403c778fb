#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# atomic.sh -- what atomic syncs (the target's undo journal) cost
#
# Starts build A's rpmemd and build B's, each on loopback with a dir
# region in DIR (default /dev/shm: memory, like PMem; a disk directory
# such as /var/tmp shows what the journal's fdatasync costs there), both
# with a pool of SIZE_MIB mirrored from the same random file. Each of
# ROUNDS rounds (A and B alternately first) times, with A's client
# against A's daemon and B's against B's:
#   sync1   a sync after 1% of the 4 KiB blocks changed (a fresh set)
#   sync100 a sync after every 4 KiB block changed (one byte each)
#   mirror  a first mirror of the file into a new pool (create + mirror)
# Prints the medians, the ratios B/A and, for B, sync100/mirror, and the
# bytes B's daemon wrote into its undo journals per byte changed (from its
# log). Checks both pools against the file at the end.
#
# Usage: [DIR=/var/tmp] tests/bench/atomic.sh A_BUILD_DIR B_BUILD_DIR
#        [SIZE_MIB (1024)] [ROUNDS (5)]
# e.g.: git worktree add /tmp/old <commit> && make -C /tmp/old &&
#       tests/bench/atomic.sh /tmp/old/build build
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/bench/lib.sh
. "$top/tests/bench/lib.sh"
[ $# -ge 2 ] || { sed -n '3,21p' "$0" >&2; exit 2; }
A=$(cd "$1" && pwd)
B=$(cd "$2" && pwd)
SIZE=${3:-1024}
ROUNDS=${4:-5}
W=$(mktemp -d "${DIR:-/dev/shm}/rpmem-bench.XXXXXX")
PA=$((21000 + RANDOM % 10000))
PB=$((PA + 1))

cleanup() {
	kill "${DA:-}" "${DB:-}" 2>/dev/null || true
	wait 2>/dev/null || true
	rm -rf "$W"
}
trap cleanup EXIT

# daemon V PORT -- build V's rpmemd with region bench in $W/V
daemon() {
	local bin=$A
	[ "$1" = b ] && bin=$B
	mkdir -p "$W/$1"
	cat >"$W/$1.conf" <<CONF
listen = ["127.0.0.1"];
port = $2;
log = { level = "info"; target = "stderr"; };
regions = ( { name = "bench"; type = "dir"; path = "$W/$1"; } );
CONF
	"$bin/rpmemd" -c "$W/$1.conf" 2>"$W/$1.log" &
	for _ in $(seq 100); do
		(exec 3<>"/dev/tcp/127.0.0.1/$2") 2>/dev/null && break
		sleep 0.05
	done
}
export XDG_CONFIG_HOME=$W/xdg
daemon a "$PA"
DA=$!
daemon b "$PB"
DB=$!

# change PCT -- PCT% of the source's 4 KiB blocks changed, one byte each
change() {
	python3 - "$W/src" "$1" <<'PY'
import random, sys
path, pct = sys.argv[1], float(sys.argv[2])
with open(path, "r+b") as f:
    nb = f.seek(0, 2) // 4096
    blocks = range(nb) if pct >= 100 else random.sample(range(nb), int(nb * pct / 100))
    for b in sorted(blocks):
        o = b * 4096 + random.randrange(4096)
        f.seek(o)
        c = f.read(1)[0]
        f.seek(o)
        f.write(bytes([c ^ 0xff]))
PY
}

# timed V WHAT CMD... -- run build V's rpmemctl, its time into $W/t
timed() {
	local v=$1 what=$2 bin=$A
	shift 2
	[ "$v" = B ] && bin=$B
	local t0 t1
	t0=$(now)
	"$bin/rpmemctl" "$@"
	t1=$(now)
	echo "$v-$what $(echo "$t1 - $t0" | bc -l)" >>"$W/t"
}

# target V -- build V's daemon address
target() { [ "$1" = A ] && echo "127.0.0.1:$PA" || echo "127.0.0.1:$PB"; }

echo "preparing a $SIZE MiB pool" >&2
head -c $((SIZE << 20)) /dev/urandom >"$W/src"
for v in A B; do
	timed "$v" warm mirror -q "$W/src" "$(target $v)/bench/p"
	timed "$v" warm sync -q "$W/src" "$(target $v)/bench/p"
done
: >"$W/t"
for r in $(seq "$ROUNDS"); do
	order="A B"
	[ $((r % 2)) -eq 0 ] && order="B A"
	change 1
	for v in $order; do timed "$v" sync1 sync -q "$W/src" "$(target $v)/bench/p"; done
	change 100
	for v in $order; do timed "$v" sync100 sync -q "$W/src" "$(target $v)/bench/p"; done
	for v in $order; do
		"$([ $v = A ] && echo "$A" || echo "$B")/rpmemctl" remove -q "$(target $v)/bench/m" 2>/dev/null || true
		timed "$v" mirror mirror -q "$W/src" "$(target $v)/bench/m"
	done
	echo "round $r: $(tail -6 "$W/t" | tr '\n' ' ')" >&2
done
cmp "$W/src" "$W/a/p"
cmp "$W/src" "$W/b/p"
med() { grep "^$1 " "$W/t" | cut -d' ' -f2 | median; }
echo "| what | A (s) | B (s) | B/A |"
echo "|---|---|---|---|"
for w in sync1 sync100 mirror; do
	a=$(med "A-$w")
	b=$(med "B-$w")
	echo "| $w | $a | $b | $(ratio "$b" "$a") |"
done
echo
echo "B: sync100 / mirror = $(ratio "$(med B-sync100)" "$(med B-mirror)");" \
	"A: sync100 / mirror = $(ratio "$(med A-sync100)" "$(med A-mirror)")"
# the journal's bytes per synced byte: the last round's 100% sync
j=$(grep -o "undo journal of generation [0-9]* ([0-9]* blocks, [0-9]* bytes)" "$W/b.log" |
	sed 's/.*blocks, \([0-9]*\) bytes)/\1/' | tail -1)
echo "B: undo journal of the last 100% sync: ${j:-0} bytes for $((SIZE << 20)) bytes changed" \
	"($(ratio "${j:-0}" $((SIZE << 20))) journal bytes per pool byte written)"
