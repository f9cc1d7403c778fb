#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# hostile.sh -- an honest 64 MiB TLS mirror + verify: unloaded, beside two
# CPU-burning processes (no network), and with 1000 hostile connections
#
# The daemon requires TLS (PSK) and its limits hold the whole flood
# (max_unauthenticated = HOSTILE + 64, 64 per address). The hostile
# connections (tests/peers/hostile.py flood --tls) come from 64 loopback
# addresses (127.0.0.2-65): a quarter silent, a quarter trickling a
# ClientHello a byte a second, a quarter sending garbage, a quarter TLS
# clients without credentials the target accepts; each one the target
# closes is opened again at once. The CPU-only control is two busy loops.
# The three cases are interleaved in each of RUNS rounds (the flood is
# started and stopped in its round); prints the medians, each loaded
# case's ratio to the unloaded one (the goal: the flood costs no more
# than the control), rpmemd's CPU time in the flooded runs and its
# RssAnon under the flood.
#
# Usage: tests/bench/hostile.sh [RUNS (5)] [HOSTILE (1000)]
#        LIMITS=default tests/bench/hostile.sh ...  (the default limits:
#        most of the flood is refused at once and reconnects)
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/bench/lib.sh
. "$top/tests/bench/lib.sh"
B=${RPMEM_BUILD:-$top/build}
RUNS=${1:-5}
N=${2:-1000}
W=$(mktemp -d /dev/shm/rpmem-hostile.XXXXXX)
PORT=$((21000 + RANDOM % 10000))
T=127.0.0.1:$PORT
LOAD=

cleanup() {
	for p in $LOAD ${DPID:-}; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$W"
}
trap cleanup EXIT

ulimit -n 8192 2>/dev/null || ulimit -n "$(ulimit -Hn)"
if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt $((2 * N + 100)) ]; then
	echo "cannot open $N sockets on both ends (ulimit -n is $(ulimit -n))" >&2
	exit 77
fi

"$B/rpmemctl" -q psk-gen -i bench "$W/bench.psk"
bench_daemon r1 r1 notice "tls = { psk_file = \"$W/bench.psk\"; };
access = ( { identity = \"bench\"; regions = [ \"*\" ]; rights = [ \"write\", \"admin\" ]; } );
$([ "${LIMITS:-}" = default ] || echo "limits = { max_unauthenticated = $((N + 64)); max_unauthenticated_per_address = 64; };")"
head -c 64M /dev/urandom >"$W/src"
"$B/rpmemctl" -q mirror --psk-file "$W/bench.psk" "$W/src" "$T/r1/warm"

# one_run -- seconds of one mirror (into a new pool: all 64 MiB cross)
# + verify; the pool is removed after the clock stops
one_run() {
	local t0 t1
	t0=$(now)
	"$B/rpmemctl" -q mirror --psk-file "$W/bench.psk" "$W/src" "$T/r1/p1"
	"$B/rpmemctl" -q verify --psk-file "$W/bench.psk" "$W/src" "$T/r1/p1"
	t1=$(now)
	"$B/rpmemctl" -q remove --psk-file "$W/bench.psk" "$T/r1/p1"
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", b - a }'
}

# cpu_ticks PID -- the process's user + system time, in clock ticks
cpu_ticks() {
	awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"
}

# threads -- rpmemd's thread count
threads() { awk '/^Threads:/ { print $2 }' "/proc/$DPID/status"; }

# unload -- stop the load processes; after a flood, wait until rpmemd
# let its connections go (at most 30 s)
unload() {
	# shellcheck disable=SC2086
	kill $LOAD 2>/dev/null || true
	wait $LOAD 2>/dev/null || true
	LOAD=
	for _ in $(seq 300); do
		[ "$(threads)" -le "$base_threads" ] && return
		sleep 0.1
	done
}

# cpu_case -- one run beside two busy loops
cpu_case() {
	for _ in 1 2; do
		sh -c 'while :; do :; done' &
		LOAD="$LOAD $!"
	done
	one_run >>"$W/cpu"
	unload
}

# flood_case -- one run with N hostile connections open
flood_case() {
	local c0 srcs
	srcs=$(for i in $(seq 2 65); do echo "127.0.0.$i"; done)
	# shellcheck disable=SC2086
	python3 "$top/tests/peers/hostile.py" "$PORT" flood --tls "$N" $srcs \
		>"$W/flood" &
	LOAD=$!
	for _ in $(seq 600); do
		grep -q "^open $N" "$W/flood" && break
		sleep 0.1
	done
	grep -q "^open $N" "$W/flood" || { echo "the flood did not start" >&2; exit 1; }
	c0=$(cpu_ticks "$DPID")
	one_run >>"$W/flood.t"
	echo $(($(cpu_ticks "$DPID") - c0)) >>"$W/flood.cpu"
	awk '/^RssAnon:/ { print $2 }' "/proc/$DPID/status" >>"$W/flood.rss"
	unload
}

base_threads=$(threads)
for _ in $(seq "$RUNS"); do
	one_run >>"$W/quiet"
	cpu_case
	flood_case
done

q=$(median <"$W/quiet")
c=$(median <"$W/cpu")
f=$(median <"$W/flood.t")
hz=$(getconf CLK_TCK)
fcpu=$(median <"$W/flood.cpu" | awk -v hz="$hz" '{ printf "%.2f", $1 / hz }')
echo "| case (TLS, 64 MiB mirror + verify, median of $RUNS) | time | ratio to unloaded |"
echo "| --- | --- | --- |"
echo "| unloaded | $q s | 1.00 |"
echo "| two busy loops, no network | $c s | $(ratio "$c" "$q") |"
echo "| $N hostile connections | $f s | $(ratio "$f" "$q") |"
echo
echo "all runs (s): unloaded $(paste -sd' ' "$W/quiet"); busy loops $(paste -sd' ' "$W/cpu"); hostile $(paste -sd' ' "$W/flood.t")"
echo "rpmemd CPU during a flooded run: median $fcpu s; RssAnon under the flood: $(median <"$W/flood.rss") KiB"
