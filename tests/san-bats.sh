#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# san-bats.sh -- run BATS files against an rpmemd and rpmemctl built with
# AddressSanitizer and UndefinedBehaviorSanitizer; any sanitizer report
# fails the run
#
# usage: san-bats.sh BUILD_DIR FILE.bats...  (make check-bats-asan)
#
# Every instrumented process (rpmemd in the background, rpmemctl, the test
# tools of BUILD_DIR/tests) writes its reports to its own file under a
# fresh log directory (log_path) instead of stderr, where a test expecting
# an error would swallow it and a daemon's would be lost. The first report
# ends the process (halt_on_error, exit code 99), and after the run each
# report file counts as one more failure and is printed. rpmemd runs with
# -S (no system call filter, daemon/confine.c): at exit LeakSanitizer
# stops the threads with a clone that is not a thread and ptrace, both of
# which the filter answers by killing rpmemd (seen: "Bad system call",
# status 159, and no report), and a report's symbolizer would need fork
# and execve, killed as well. The filter itself is tested by confine.bats
# on the normal build.
# The last line is "asan-bats: N passed, N failed, N skipped".
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "$1" && pwd) || exit 1
shift
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT

# rpmemd as the BATS helpers start it, always with -S (see above)
cat >"$logs/rpmemd" <<EOF
#!/bin/sh
exec "$build/rpmemd" -S "\$@"
EOF
chmod +x "$logs/rpmemd"
mkdir "$logs/reports"
san="halt_on_error=1:exitcode=99:log_path=$logs/reports/san"
export ASAN_OPTIONS="$san:abort_on_error=0:detect_leaks=1"
export UBSAN_OPTIONS="$san:print_stacktrace=1"
export RPMEM_BUILD=$build RPMEM_RPMEMD=$logs/rpmemd

"$top/tests/run-bats.sh" "$@" >"$logs/out" 2>&1
cat "$logs/out"
line=$(grep -E '^bats: [0-9]+ passed, [0-9]+ failed' "$logs/out" | tail -n 1)
pass=$(echo "$line" | sed -nE 's/.*: ([0-9]+) passed.*/\1/p')
fail=$(echo "$line" | sed -nE 's/.* ([0-9]+) failed.*/\1/p')
skip=$(echo "$line" | sed -nE 's/.* ([0-9]+) skipped.*/\1/p')
if [ -z "$pass" ]; then
	echo "not ok - run-bats.sh printed no result line"
	pass=0 fail=1 skip=0
fi
for r in "$logs"/reports/san*; do
	[ -e "$r" ] || continue
	echo "not ok - sanitizer report ${r##*/} (pid ${r##*.}):"
	sed 's/^/#   /' "$r"
	fail=$((fail + 1))
done
echo "asan-bats: $pass passed, $fail failed, ${skip:-0} skipped"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
