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
#   rsync   rsync --no-whole-file --inplace --ignore-times of the same
#           change into a local copy (the delta algorithm, both ends on
#           this host)
# Prints the medians, the ratios B/A, B's sync100/mirror (of the
# medians, the median of each round's own ratio, and the fastest
# rounds'), rsync/B for each sync, and B's target write amplification
# of each sync: the bytes its daemon wrote on the target (the WRITEs it
# received, from its bytes_written counter, plus its undo journals and
# the blocks copied into a dense sync's new file, from its log) per
# byte changed. Checks both pools against the file at the end.
#
# Usage: [DIR=/var/tmp] tests/bench/atomic.sh A_BUILD_DIR B_BUILD_DIR
#        [SIZE_MIB (1024)] [ROUNDS (5)]
# e.g.: git worktree add /tmp/old <commit> && make -C /tmp/old &&
#       tests/bench/atomic.sh /tmp/old/build build
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/bench/lib.sh
. "$top/tests/bench/lib.sh"
[ $# -ge 2 ] || { sed -n '3,28p' "$0" >&2; exit 2; }
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

# amp PCT -- after B's sync of PCT% changed: what its daemon wrote on the
# target per byte changed, into $W/t as "B-ampPCT N"
amp() {
	local w j c changed
	w=$("$B/rpmemctl" list --json "$(target B)/bench/p" | jq -r '.pools[0].bytes_written')
	j=$(tail -c +"$LOGPOS" "$W/b.log" | { grep -o "undo journal of generation [0-9]* ([0-9]* blocks, [0-9]* bytes)" || true; } |
		sed 's/.*blocks, \([0-9]*\) bytes)/\1/' | paste -sd+ | bc)
	c=$(tail -c +"$LOGPOS" "$W/b.log" | { grep -o "([0-9]* bytes written, [0-9]* bytes copied" || true; } |
		sed 's/.*written, \([0-9]*\) bytes copied/\1/' | paste -sd+ | bc)
	changed=$(((SIZE << 20) * $1 / 100))
	echo "B-amp$1 $(ratio "$((w - WPOS + ${j:-0} + ${c:-0}))" "$changed")" >>"$W/t"
}

# mark -- where B's log and bytes_written counter are now (for amp)
mark() {
	LOGPOS=$(($(stat -c %s "$W/b.log") + 1))
	WPOS=$("$B/rpmemctl" list --json "$(target B)/bench/p" | jq -r '.pools[0].bytes_written')
}

# target V -- build V's daemon address
target() { [ "$1" = A ] && echo "127.0.0.1:$PA" || echo "127.0.0.1:$PB"; }

echo "preparing a $SIZE MiB pool" >&2
head -c $((SIZE << 20)) /dev/urandom >"$W/src"
for v in A B; do
	timed "$v" warm mirror -q "$W/src" "$(target $v)/bench/p"
	timed "$v" warm sync -q "$W/src" "$(target $v)/bench/p"
done
cp "$W/src" "$W/rsync-dst"
: >"$W/t"
# sync PCT V -- build V's sync after PCT% changed (B's amplification too)
sync_one() {
	[ "$2" = B ] && mark
	timed "$2" "sync$1" sync -q "$W/src" "$(target "$2")/bench/p"
	[ "$2" = B ] && amp "$1"
	return 0
}
for r in $(seq "$ROUNDS"); do
	order="A B"
	[ $((r % 2)) -eq 0 ] && order="B A"
	# the last round's mirrored pools go first, not just before the
	# mirrors: memory freed a moment before is taken back at once, while
	# this guest hands pages freed longer ago back to its host, and takes
	# them again at a host fault each; so a mirror that follows its own
	# remove would be favoured over a dense sync (whose new file takes
	# fresh pages too) by how the bench orders them, not by what it does
	for v in A B; do
		"$([ $v = A ] && echo "$A" || echo "$B")/rpmemctl" remove -q "$(target $v)/bench/m" 2>/dev/null || true
	done
	for pct in 1 100; do
		change "$pct"
		# on a disk, what the change (and the last rsync) left dirty is
		# written back now, not by whichever timed command comes next
		sync
		for v in $order; do sync_one "$pct" "$v"; done
		t0=$(now)
		rsync --no-whole-file --inplace --ignore-times "$W/src" "$W/rsync-dst"
		echo "R-sync$pct $(echo "$(now) - $t0" | bc -l)" >>"$W/t"
		sync
	done
	for v in $order; do
		timed "$v" mirror mirror -q "$W/src" "$(target $v)/bench/m"
	done
	# the round's own ratio: its sync100 and mirror ran seconds apart,
	# so they share what the host's page faults cost at that moment
	for v in A B; do
		echo "$v-pair $(ratio "$(grep "^$v-sync100 " "$W/t" | tail -1 | cut -d' ' -f2)" \
			"$(grep "^$v-mirror " "$W/t" | tail -1 | cut -d' ' -f2)")" >>"$W/t"
	done
	echo "round $r: $(tail -12 "$W/t" | tr '\n' ' ')" >&2
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
for w in sync1 sync100; do
	echo "| $w: rsync | $(med "R-$w") s | rsync / B = $(ratio "$(med "R-$w")" "$(med "B-$w")") | |"
done
echo
echo "B: sync100 / mirror = $(ratio "$(med B-sync100)" "$(med B-mirror)");" \
	"A: sync100 / mirror = $(ratio "$(med A-sync100)" "$(med A-mirror)")"
echo "the same, the median of each round's own ratio: B $(med B-pair), A $(med A-pair)"
least() { grep "^$1 " "$W/t" | cut -d' ' -f2 | sort -g | head -1; }
echo "the same, the fastest round of each: B $(ratio "$(least B-sync100)" "$(least B-mirror)"), A $(ratio "$(least A-sync100)" "$(least A-mirror)")"
echo "B: target bytes written per byte changed: sync1 $(med B-amp1), sync100 $(med B-amp100)"
