#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# dirtylog.sh -- resync after the target was away: the dirty log's extents vs a full hashed sync
#
# A sparse pool of SIZE_GIB (4) GiB in /dev/shm and its replica in a
# loopback rpmemd (region in /dev/shm too). For each N (MiB): the replica
# API opens the pool (its sync binds POOL.rpmemlog), rpmemd stops, N MiB
# are persisted locally in 1 MiB pieces spread over the pool, rpmemd
# starts again, and we time
#   dirty   rpmemctl sync (the log: only the N marked extents, no hashing)
# then do the same writes again and time
#   full    rpmemctl sync --no-dirty-log (hash every block on both sides)
# Wall time of the whole command (connect included), and the pool data
# bytes the daemon received (list --json bytes_written).
#
# Usage: tests/bench/dirtylog.sh [N_MIB... (16 64 256)]; SIZE_GIB=1 for a
# machine whose /dev/shm cannot hold the pool's worst case.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/bench/lib.sh
. "$top/tests/bench/lib.sh"
B=${RPMEM_BUILD:-$top/build}
SIZE_GIB=${SIZE_GIB:-4}
NS=("$@")
[ ${#NS[@]} -gt 0 ] || NS=(16 64 256)
W=$(mktemp -d /dev/shm/rpmem-dirtylog-bench.XXXXXX)
PORT=$((21000 + RANDOM % 9000))
T=127.0.0.1:$PORT/r1/p1
export XDG_CONFIG_HOME=$W/xdg

cleanup() {
	[ -z "${DPID:-}" ] || kill "$DPID" 2>/dev/null || true
	wait 2>/dev/null || true
	rm -rf "$W"
}
trap cleanup EXIT

mkdir -p "$W/r"
cat >"$W/rpmemd.conf" <<CONF
listen = ["127.0.0.1"];
port = $PORT;
log = { level = "warning"; target = "stderr"; };
regions = ( { name = "r1"; type = "dir"; path = "$W/r"; } );
CONF

start() {
	"$B/rpmemd" -c "$W/rpmemd.conf" 2>>"$W/rpmemd.log" &
	DPID=$!
	for _ in $(seq 100); do
		(exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && return 0
		sleep 0.05
	done
	echo "rpmemd did not start" >&2
	exit 1
}
stop() {
	kill "$DPID"
	wait "$DPID" || true
	DPID=
}
written() {
	"$B/rpmemctl" list --json "$T" | jq -r '.pools[0].bytes_written'
}

# away N -- open the replica, stop rpmemd, persist N MiB locally, start
away() {
	local n=$1 stride i args=() wp
	stride=$(((SIZE_GIB << 30) / n))
	for i in $(seq 0 $((n - 1))); do
		args+=("$((i * stride)):1048576")
	done
	rm -f "$W/go" "$W/wout"
	mkfifo "$W/go"
	"$B/tests/dirty_writer" "$W/pool" "$T" "${args[@]}" <"$W/go" \
		>"$W/wout" 2>/dev/null &
	wp=$!
	exec 4>"$W/go"
	until grep -qs open "$W/wout"; do
		kill -0 "$wp" || { echo "dirty_writer failed" >&2; exit 1; }
		sleep 0.1
	done
	stop
	echo go >&4
	exec 4>&-
	wait "$wp"
	start
}

# timed ARGS... -- seconds of rpmemctl sync ARGS, then the bytes moved
timed() {
	local t0 t1
	t0=$(now)
	"$B/rpmemctl" sync -q "$@" "$W/pool" "$T" >&2
	t1=$(now)
	awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f", b - a}'
	printf ' %d\n' "$(($(written) >> 20))"
}

truncate -s "${SIZE_GIB}G" "$W/pool"
start
"$B/rpmemctl" sync -q --no-dirty-log "$W/pool" "$T" # sparse: moves nothing
printf 'pool %d GiB (sparse, /dev/shm), loopback TCP, 1 MiB extents\n' \
	"$SIZE_GIB"
printf '%8s  %10s  %10s  %10s  %10s  %8s\n' "N (MiB)" "dirty (s)" \
	"moved MiB" "full (s)" "moved MiB" "speed-up"
for n in "${NS[@]}"; do
	away "$n"
	read -r td md < <(timed)
	away "$n"
	read -r tf mf < <(timed --no-dirty-log)
	printf '%8d  %10s  %10d  %10s  %10d  %7.1fx\n' "$n" "$td" "$md" \
		"$tf" "$mf" "$(awk -v a="$tf" -v b="$td" 'BEGIN {print a / b}')"
done
