#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# run.sh -- run cmocka test binaries with TAP output and sum the results
#
# usage: tests/unit/run.sh BINARY...
# Prints each binary's output, then exactly "unit: N passed, N failed" as
# the last line. Exits 1 if a test failed, a binary crashed or exited
# non-zero, or ran fewer tests than it planned. UNIT_WRAPPER (e.g.
# "valgrind -q --error-exitcode=99") is put in front of every binary.

set -u

passed=0
failed=0
log=$(mktemp) || exit 2
trap 'rm -f "$log"' EXIT

for bin in "$@"; do
	name=${bin##*/}
	echo "# unit test: $name"
	if [ ! -x "$bin" ]; then
		echo "not ok - $name: no such test binary"
		failed=$((failed + 1))
		continue
	fi
	# shellcheck disable=SC2086 # UNIT_WRAPPER is a command line
	CMOCKA_MESSAGE_OUTPUT=TAP ${UNIT_WRAPPER:-} "$bin" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}

	ok=$(grep -c '^ok ' "$log")
	nok=$(grep -c '^not ok ' "$log")
	plan=$(sed -n 's/^[[:space:]]*1\.\.\([0-9][0-9]*\).*/\1/p' "$log" |
		head -n 1)
	passed=$((passed + ok))
	failed=$((failed + nok))

	# tests the binary planned but never reported: it died on the way
	if [ -n "$plan" ] && [ $((ok + nok)) -lt "$plan" ]; then
		missing=$((plan - ok - nok))
		echo "not ok - $name: $missing test(s) never ran (exit $rc)"
		failed=$((failed + missing))
	elif [ "$rc" -ne 0 ] && [ "$nok" -eq 0 ]; then
		if [ "$rc" -gt 128 ]; then
			why="killed by signal $((rc - 128))"
		else
			why="exit status $rc"
		fi
		echo "not ok - $name: $why with no failed test"
		failed=$((failed + 1))
	fi
done

echo "unit: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
