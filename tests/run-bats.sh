#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# run-bats.sh -- run the BATS suites against a loopback rpmemd and count results
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
out=$(mktemp)
bats --tap "$top"/tests/bats/*.bats 2>&1 | tee "$out"
# a skipped test says why (TAP "# skip REASON") and is not a pass
skip=$(grep -Eci '^ok .* # skip' "$out")
pass=$(($(grep -c '^ok ' "$out") - skip))
fail=$(grep -c '^not ok ' "$out")
rm -f "$out"
echo "bats: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
