#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# mirror.sh -- a mirror against iperf3 and nc moving the same file over loopback
#
#   existing pool  rpmemctl mirror into a pool that exists, vs
#                  iperf3 -F SRC to a receiver that discards it, and
#                  nc piping SRC into /dev/null
#   first mirror   rpmemctl mirror that creates the pool, vs
#                  iperf3 -F SRC to a receiver writing a new file
#                  (iperf3 -s -F NEW), and nc piping SRC into a new file
#
# Every time is the wall clock of the sending command (iperf3's includes
# its control connection and result exchange, as rpmemctl's includes its
# handshake). Runs are interleaved; medians; ratios are peer time over
# rpmemctl's (>= 1.0 means rpmemctl is as fast as the peer or faster).
#
# Usage: tests/bench/mirror.sh [SIZE_MIB (1024)] [RUNS (5)]
# Files live in /dev/shm so that neither side waits for a disk.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/bench/lib.sh
. "$top/tests/bench/lib.sh"
B=${RPMEM_BUILD:-$top/build}
SIZE=${1:-1024}
RUNS=${2:-5}
W=$(mktemp -d /dev/shm/rpmem-mirror.XXXXXX)
PORT=$((21000 + RANDOM % 10000))
IPORT=$((PORT + 1))
NCPORT=$((PORT + 2))
T=127.0.0.1:$PORT

command -v iperf3 >/dev/null || { echo "iperf3 is missing" >&2; exit 77; }

cleanup() {
	[ -z "${DPID:-}" ] || kill "$DPID" 2>/dev/null || true
	[ -z "${IPID:-}" ] || kill "$IPID" 2>/dev/null || true
	wait 2>/dev/null || true
	rm -rf "$W"
}
trap cleanup EXIT

# since T0 -- seconds from T0 to now
since() { echo "$(now) - $1" | bc -l; }
# wait_listen P -- until a socket listens on P, without connecting to it
wait_listen() {
	for _ in $(seq 200); do
		ss -Hltn "sport = :$1" | grep -q . && return 0
		sleep 0.02
	done
	return 1
}

bench_daemon region bench warning

echo "preparing a $SIZE MiB pool file" >&2
head -c $((SIZE << 20)) /dev/urandom >"$W/src"
"$B/rpmemctl" -q mirror "$W/src" "$T/bench/keep"

# iperf -- seconds of iperf3 sending SRC to a one-off server [-F FILE]
iperf() {
	rm -f "$W/iperf.new"
	iperf3 -s -1 -B 127.0.0.1 -p "$IPORT" "$@" >"$W/iperf-s.out" 2>&1 &
	IPID=$!
	wait_listen "$IPORT"
	local t0
	t0=$(now)
	iperf3 -c 127.0.0.1 -p "$IPORT" -F "$W/src" -n "$((SIZE << 20))" \
		>"$W/iperf-c.out"
	since "$t0"
	wait "$IPID"
	IPID=
}

# ncat -- seconds of nc sending SRC to a listener writing into OUT
ncat() {
	rm -f "$W/nc.new"
	nc -l 127.0.0.1 "$NCPORT" >"$1" &
	local l=$! t0
	wait_listen "$NCPORT"
	t0=$(now)
	nc -N 127.0.0.1 "$NCPORT" <"$W/src"
	wait "$l"
	since "$t0"
}

for f in ip_old ip_new nc_old nc_new mi_old mi_new; do : >"$W/t_$f"; done
for r in $(seq "$RUNS"); do
	iperf >>"$W/t_ip_old"
	iperf -F "$W/iperf.new" >>"$W/t_ip_new"
	# iperf3's receiver may drop the last few MiB that arrive after the
	# sender's end of test: it never writes more than was sent
	cmp -n "$(stat -c %s "$W/iperf.new")" "$W/src" "$W/iperf.new"
	rm -f "$W/iperf.new"
	ncat /dev/null >>"$W/t_nc_old"
	ncat "$W/nc.new" >>"$W/t_nc_new"
	cmp "$W/src" "$W/nc.new"
	rm -f "$W/nc.new"

	t0=$(now)
	"$B/rpmemctl" -q mirror "$W/src" "$T/bench/keep"
	since "$t0" >>"$W/t_mi_old"
	cmp "$W/src" "$W/region/keep"

	"$B/rpmemctl" -q remove "$T/bench/new" >/dev/null 2>&1 || true
	t0=$(now)
	"$B/rpmemctl" -q mirror "$W/src" "$T/bench/new"
	since "$t0" >>"$W/t_mi_new"
	cmp "$W/src" "$W/region/new"
	"$B/rpmemctl" -q remove "$T/bench/new"
	echo "run $r: existing pool $(tail -1 "$W/t_mi_old") s" \
	     "(iperf3 $(tail -1 "$W/t_ip_old"), nc $(tail -1 "$W/t_nc_old"));" \
	     "first mirror $(tail -1 "$W/t_mi_new") s" \
	     "(iperf3 $(tail -1 "$W/t_ip_new"), nc $(tail -1 "$W/t_nc_new"))" >&2
done
for f in ip_old ip_new nc_old nc_new mi_old mi_new; do
	eval "$f=\$(median <\"\$W/t_$f\")"
done

cat <<TABLE
Mirror of $SIZE MiB from /dev/shm, loopback, median of $RUNS runs, $(nproc) cores.

| case | rpmemctl mirror | iperf3 | ratio to iperf3 (goal) | nc | ratio to nc |
|---|---|---|---|---|---|
| into an existing pool (peers discard) | $(mibs "$mi_old") MiB/s ($mi_old s) | $(mibs "$ip_old") MiB/s ($ip_old s) | $(ratio "$ip_old" "$mi_old") (>= 0.95) | $(mibs "$nc_old") MiB/s ($nc_old s) | $(ratio "$nc_old" "$mi_old") |
| first mirror, creates the pool (peers write a new file) | $(mibs "$mi_new") MiB/s ($mi_new s) | $(mibs "$ip_new") MiB/s ($ip_new s) | $(ratio "$ip_new" "$mi_new") (>= 1.0) | $(mibs "$nc_new") MiB/s ($nc_new s) | $(ratio "$nc_new" "$mi_new") |
TABLE
