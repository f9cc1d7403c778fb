#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# vm-bench.sh -- RDMA benchmark in the qemu test bed, as ratios to perftest
#
# Boots the two guests once and runs the rdma-bench suite: RUNS rounds of
# perftest (ib_write_lat -s 4096 / -s 256, ib_write_bw -s 1048576, as the
# perftest suite runs them) and rpmemctl bench / mirror over --transport
# rdma (GPSPM, then APM) and tests/pobj_app's small transactions and
# persists under librpmem_preload.so replicating over rdma, on the same
# guests; prints the tables of medians and ratios that
# tests/vm/suites/rdma-bench.sh wrote. Run as root after `make` and
# `make examples` (pobj_app).
#
# Usage: tests/bench/vm-bench.sh [RUNS (3)]
# Environment: as tests/vm/run.sh (VM_*, RPMEM_BUILD); SUITE_BENCH_COUNT
# (write + flush samples per bench run, default 1000);
# SUITE_BENCH_PARTS (default "bench mirror preload"); SUITE_BENCH_PRELOAD_N
# (operations per preload run, default 500).
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
export SUITE_BENCH_RUNS=${1:-${SUITE_BENCH_RUNS:-3}}
mkdir -p /tmp/rpmem-vm
export VM_RESULTS=${VM_RESULTS:-$(mktemp -d "/tmp/rpmem-vm/bench.$(date +%Y%m%d-%H%M%S).XXXX")}
t0=$SECONDS
"$top/tests/vm/run.sh" rdma-bench
rc=$?
res=$VM_RESULTS
echo
echo "vm-bench: $SUITE_BENCH_RUNS runs, $((SECONDS - t0)) s, results in $res"
if [ -r "$res/rdma-bench.md" ]; then
	cat "$res/rdma-bench.md"
else
	echo "vm-bench: no table (see $res)" >&2
	rc=1
fi
exit "$rc"
