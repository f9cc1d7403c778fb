#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# run.sh -- run libFuzzer targets for a bounded time each and count them
#
# usage: B=build FUZZ_SECONDS=45 tests/fuzz/run.sh TARGET...
# Each target starts from a copy of tests/fuzz/corpus/TARGET and runs for
# FUZZ_SECONDS; a crash, a sanitizer report or a leak fails it (its
# reproducer is left in $B/fuzz/). The last line is
# "fuzz: N passed, N failed".
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
B=${B:-build}
secs=${FUZZ_SECONDS:-45}
pass=0
fail=0
for t in "$@"; do
	corpus=$B/fuzz/corpus-$t
	mkdir -p "$corpus"
	if [ -d "$top/tests/fuzz/corpus/$t" ]; then
		cp -n "$top/tests/fuzz/corpus/$t"/* "$corpus"/ 2>/dev/null
	fi
	log=$B/fuzz/$t.log
	echo "# fuzz: $t for ${secs} s from $(ls "$corpus" | wc -l) inputs"
	if (cd "$B/fuzz" && "./$t" -max_total_time="$secs" -timeout=10 \
		-rss_limit_mb=2048 -print_final_stats=1 "corpus-$t") \
		>"$log" 2>&1; then
		echo "ok - $t: $(grep -E '^stat::number_of_executed_units' "$log" |
			awk '{print $2}') runs, $(grep -cE '^#[0-9]+.*NEW' "$log") new inputs"
		pass=$((pass + 1))
	else
		echo "not ok - $t: see $log"
		grep -E 'ERROR|SUMMARY|runtime error|abort' "$log" | head -n 20
		fail=$((fail + 1))
	fi
done
echo "fuzz: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
