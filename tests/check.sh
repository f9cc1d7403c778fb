#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# check.sh -- run every suite (unit, asan, fuzz, bats, asan-bats, vm) and
# print one total line
#
# Each suite ends with "<name>: N passed, N failed[, N skipped]"; a suite
# that crashes or prints no such line counts as one failure. The VM bed's
# own checks (smoke, perftest: "vm-bed: ...") are shown apart; only their
# failures count.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
total_pass=0
total_fail=0
total_skip=0
status=0

run_suite() {
	name=$1
	shift
	log=$(mktemp)
	echo "=== $name: $*"
	"$@" 2>&1 | tee "$log"
	tally "$name" "$log"
	rm -f "$log"
}

# tally NAME LOG -- add the result line of suite NAME, found in LOG
tally() {
	name=$1
	log=$2
	line=$(grep -E "^$name: [0-9]+ passed, [0-9]+ failed" "$log" | tail -n 1)
	if [ -z "$line" ]; then
		echo "$name: no result line (suite crashed?)"
		total_fail=$((total_fail + 1))
		status=1
	else
		p=$(echo "$line" | sed -E 's/.*: ([0-9]+) passed.*/\1/')
		f=$(echo "$line" | sed -E 's/.* ([0-9]+) failed.*/\1/')
		k=0
		case "$line" in *skipped*)
			k=$(echo "$line" | sed -E 's/.* ([0-9]+) skipped.*/\1/') ;;
		esac
		total_pass=$((total_pass + p))
		total_fail=$((total_fail + f))
		total_skip=$((total_skip + k))
		[ "$f" -eq 0 ] || status=1
	fi
	bed=$(grep -E "^$name-bed: [0-9]+ passed, [0-9]+ failed" "$log" | tail -n 1)
	if [ -n "$bed" ]; then
		bf=$(echo "$bed" | sed -E 's/.* ([0-9]+) failed.*/\1/')
		total_fail=$((total_fail + bf))
		[ "$bf" -eq 0 ] || status=1
		bed_line=$bed
	fi
}

# vm_with_retry -- the VM bed; if its own checks (smoke, perftest, each
# guest's NIC: the guests' link, kernel RDMA) fail, the guests are booted
# once more and that run's lines count (both runs' output stays in the
# log). rpmem's own failures alone never cause a retry.
vm_with_retry() {
	vlog=$(mktemp)
	"$@" 2>&1 | tee "$vlog"
	bf=$(grep -E '^vm-bed: [0-9]+ passed, [0-9]+ failed' "$vlog" | tail -n 1 |
	     sed -E 's/.* ([0-9]+) failed.*/\1/')
	rm -f "$vlog"
	if [ "${bf:-0}" -gt 0 ]; then
		echo "vm: the test bed's own checks failed ($bf); booting the guests once more"
		"$@"
	fi
}

run_suite unit make --no-print-directory check-unit
# the unit tests again under ASan and UBSan, and each fuzz target for a
# fixed time (FUZZ_SECONDS, 45 s by default)
run_suite asan make --no-print-directory check-asan
run_suite fuzz make --no-print-directory check-fuzz
# the VM bed runs beside the BATS suites: a guest under emulation keeps
# one core busy at most, and the loopback suites wait on their peers more
# than they compute (side by side, about 13 minutes saved on 2 cores).
# Its output is shown once the BATS suites are done; what it needs is
# built first, so that no two makes build in the same tree at once.
vm_pid=
vm_log=$(mktemp)
if [ "${RPMEM_SKIP_VM:-0}" = 1 ]; then
	# only for quick local runs; CI never sets it
	echo "vm: skipped because RPMEM_SKIP_VM=1"
elif make --no-print-directory check-vm-deps >"$vm_log" 2>&1; then
	vm_with_retry make --no-print-directory check-vm >"$vm_log" 2>&1 &
	vm_pid=$!
else
	cat "$vm_log"
	echo "vm: 0 passed, 1 failed (build)" | tee -a "$vm_log"
fi
run_suite bats tests/run-bats.sh
# a fixed set of BATS files (SAN_BATS in tests/tests.mk) again against
# rpmemd and rpmemctl built with ASan and UBSan; a report from any of
# them, the background daemon's included, fails it (tests/san-bats.sh).
# Budget 5 minutes; measured 280 s on 2 cores (150 tests, after asan)
run_suite asan-bats make --no-print-directory check-bats-asan
if [ "${RPMEM_SKIP_VM:-0}" != 1 ]; then
	[ -z "$vm_pid" ] || wait "$vm_pid"
	echo "=== vm: make check-vm (beside the BATS suites)"
	cat "$vm_log"
	tally vm "$vm_log"
fi
rm -f "$vm_log"
[ -z "${bed_line:-}" ] || echo "test bed (not counted as passes): $bed_line"
echo "check: $total_pass passed, $total_fail failed, $total_skip skipped"
exit $status
