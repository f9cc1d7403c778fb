#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# runner.bats -- tests/run-bats.sh counts a run that dies half-way as failed

load helpers

# fake_bats BODY -- a "bats" first on PATH that runs BODY (shell) instead
fake_bats() {
	mkdir -p "$BATS_TEST_TMPDIR/bin"
	printf '#!/bin/sh\n%s\n' "$1" >"$BATS_TEST_TMPDIR/bin/bats"
	chmod +x "$BATS_TEST_TMPDIR/bin/bats"
}

run_runner() {
	PATH=$BATS_TEST_TMPDIR/bin:$PATH run "$TOP/tests/run-bats.sh" x.bats
}

@test "run-bats.sh: a run that planned 3 tests and died after 1 counts the 2 missing as failed" {
	fake_bats 'echo 1..3; echo "ok 1 first"; kill -KILL $$'
	run_runner
	[ "$status" -ne 0 ]
	[[ "$output" == *"2 of 3 planned test(s) never reported"* ]]
	[ "${lines[-1]}" = "bats: 1 passed, 2 failed, 0 skipped" ]
}

@test "run-bats.sh: a bats that exits non-zero with every test ok is a failure" {
	fake_bats 'echo 1..1; echo "ok 1 first"; exit 1'
	run_runner
	[ "$status" -ne 0 ]
	[ "${lines[-1]}" = "bats: 1 passed, 1 failed, 0 skipped" ]
}

@test "run-bats.sh: no plan at all is a failure" {
	fake_bats 'echo "ok 1 first"'
	run_runner
	[ "$status" -ne 0 ]
	[ "${lines[-1]}" = "bats: 1 passed, 1 failed, 0 skipped" ]
}

@test "run-bats.sh: a complete run with a skip passes and counts the skip apart" {
	fake_bats 'echo 1..2; echo "ok 1 first"; echo "ok 2 second # skip no RNIC"'
	run_runner
	[ "$status" -eq 0 ]
	[ "${lines[-1]}" = "bats: 1 passed, 0 failed, 1 skipped" ]
}
