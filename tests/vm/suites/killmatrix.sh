# shellcheck shell=bash
# SPDX-License-Identifier: BSD-3-Clause
# killmatrix.sh -- kill -9 of rpmemctl and of rpmemd at random points of
# syncs over RDMA into fsdax and devdax
#
# Target only: runs tests/tools/killmatrix.sh (see its header) three
# times on the target guest, rpmemctl and rpmemd both there, over rdma to
# the guest's own address (Soft-RoCE loops it back): into an fsdax region
# (a new directory on $FSDAX_DIR; Soft-RoCE cannot register FS-DAX pages,
# so the pool is served through a staging buffer, GPSPM) and into a
# devdax region on $DEVDAX with its journals in an undo_dir (registered
# in place: once GPSPM, once APM with direct_pmem). Each case (a sync of
# 1%, 50%, 100% of the blocks changed, a mirror into the existing pool)
# and killer gets SUITE_KILL_POINTS points (default 2; a point takes
# about 6 s here, about 12 s a run with two side by side on a 2-core
# host, and the initiator waits for the target's end at most
# VM_WAIT_TIMEOUT, each guest runs at most VM_TIMEOUT: raise both for
# longer runs). SUITE_KILL_RUNS picks the runs and their points (default
# "fsdax devdax-gpspm devdax-apm"; "fsdax:100" gives that run 100
# points); SUITE_KILL_CASES and SUITE_KILL_KILLERS narrow every run to
# those cases and killers (killmatrix.sh's CASES and KILLERS), so a long
# matrix can be run in parts. With SUITE_KILL_PARALLEL=1 (for VM_SMP=2)
# the fsdax run goes beside the devdax ones, which share their device
# and stay in order.
# One TAP line per run: ok when there was no mismatch and rpmemd's own
# log shows the pool opened for writing over rdma.
#
# Needs: make (rpmemd, rpmemctl); python3 and jq on the host.

KM_POINTS=${SUITE_KILL_POINTS:-2}
KM_SIZE=${SUITE_KILL_SIZE_MIB:-4}
KM_RUNS=${SUITE_KILL_RUNS:-fsdax devdax-gpspm devdax-apm}
KM_TOOL=$RPMEM_SRC/tests/tools/killmatrix.sh

# km_run NAME POINTS PORT VAR=VALUE... -- one matrix with the given
# environment, its output in $RESULTS/killmatrix.NAME.out; a TAP line
km_run()
{
	local name=$1 points=$2 port=$3 out rc=0 part=()
	shift 3
	out=$RESULTS/killmatrix.${name//[ ,]/}.out
	# a part of the matrix; else the tool's own cases and killers
	[ -z "${SUITE_KILL_CASES:-}" ] || part+=(CASES="$SUITE_KILL_CASES")
	[ -z "${SUITE_KILL_KILLERS:-}" ] || part+=(KILLERS="$SUITE_KILL_KILLERS")
	env "$@" "${part[@]}" POINTS="$points" SIZE_MIB="$KM_SIZE" PORT="$port" \
		HOST="$TARGET_IP" TRANSPORT=rdma BUILD="$RPMEM_BUILD" \
		"$KM_TOOL" >"$out" 2>&1 || rc=$?
	cat "$out" >>"$(vm_log)"
	local summary
	summary=$(grep '^summary:' "$out")
	if [ "$rc" -eq 0 ] && [[ "$summary" == *" 0 mismatches;"* ]] &&
	   ! [[ "$summary" == *" 0 opens of the pool over rdma"* ]]; then
		tap_ok "kill matrix over rdma, $name, $points points a case and killer: $summary"
	else
		tap_not_ok "kill matrix over rdma, $name (exit $rc): $(tail -5 "$out" | tr '\n' ' ')"
	fi
}

# km_points RUN -- the points SUITE_KILL_RUNS gives RUN, empty if it
# names it not
km_points()
{
	local r
	for r in $KM_RUNS; do
		case $r in
		"$1") echo "$KM_POINTS" ;;
		"$1":*) echo "${r#*:}" ;;
		esac
	done
}

km_fsdax()
{
	local d n
	n=$(km_points fsdax)
	[ -n "$n" ] || return 0
	d=$(mktemp -d "$FSDAX_DIR/km.XXXXXX")
	km_run fsdax "$n" 21001 TYPE=fsdax DIR="$d"
	rm -rf "$d"
}

km_devdax()
{
	local d n m
	n=$(km_points devdax-gpspm)
	m=$(km_points devdax-apm)
	[ -n "$n$m" ] || return 0
	d=$(mktemp -d /tmp/km.XXXXXX)
	[ -z "$n" ] || km_run "devdax, GPSPM" "$n" 21002 \
		TYPE=devdax DEVICE="$DEVDAX" DIR="$d"
	[ -z "$m" ] || km_run "devdax, APM" "$m" 21003 \
		TYPE=devdax APM=true DEVICE="$DEVDAX" DIR="$d"
	rm -rf "$d"
	# the device left blank, as the other suites expect it
	daxio -z -o "$DEVDAX" -l 4096 >>"$(vm_log)" 2>&1
}

target_main()
{
	if [ "${SUITE_KILL_PARALLEL:-0}" = 1 ]; then
		km_fsdax &
		km_devdax
		wait
	else
		km_fsdax
		km_devdax
	fi
}
