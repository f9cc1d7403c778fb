#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# run-bats.sh -- run the BATS suites against a loopback rpmemd and count results
#
# The last line is "bats: N passed, N failed, N skipped". Besides the
# "not ok" lines, a run counts as failed when bats exits non-zero with no
# failing test, prints no TAP plan, or reports fewer tests than it planned
# (it died half-way): the tests it never reported are counted as failures.
# Arguments, if any, are the .bats files to run instead of every suite.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
out=$(mktemp)
trap 'rm -f "$out"' EXIT
if [ $# -eq 0 ]; then
	set -- "$top"/tests/bats/*.bats
fi
bats --tap "$@" 2>&1 | tee "$out"
rc=${PIPESTATUS[0]}
# a skipped test says why (TAP "# skip REASON") and is not a pass
skip=$(grep -Eci '^ok .* # skip' "$out")
ok=$(grep -c '^ok ' "$out")
fail=$(grep -c '^not ok ' "$out")
pass=$((ok - skip))
plan=$(sed -n 's/^1\.\.\([0-9][0-9]*\)$/\1/p' "$out" | head -n 1)
if [ -z "$plan" ]; then
	echo "not ok - bats printed no plan (exit $rc)"
	fail=$((fail + 1))
elif [ $((ok + fail)) -lt "$plan" ]; then
	missing=$((plan - ok - fail))
	echo "not ok - $missing of $plan planned test(s) never reported (exit $rc)"
	fail=$((fail + missing))
elif [ "$rc" -ne 0 ] && [ "$fail" -eq 0 ]; then
	echo "not ok - bats exited with status $rc and no failed test"
	fail=1
fi
echo "bats: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
