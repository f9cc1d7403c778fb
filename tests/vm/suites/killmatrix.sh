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
# about 8 s here, and the initiator waits for the target's end at most
# VM_WAIT_TIMEOUT: raise it to about 30 s a point for longer runs). One
# TAP line per run: ok when there was no mismatch and rpmemd's own log
# shows the pool opened for writing over rdma.
#
# Needs: make (rpmemd, rpmemctl); python3 and jq on the host.

KM_POINTS=${SUITE_KILL_POINTS:-2}
KM_SIZE=${SUITE_KILL_SIZE_MIB:-4}
KM_TOOL=$RPMEM_SRC/tests/tools/killmatrix.sh

# km_run NAME VAR=VALUE... -- one matrix with the given environment, its
# output in $RESULTS/killmatrix.NAME.out; a TAP line
km_run()
{
	local name=$1 out rc=0
	shift
	out=$RESULTS/killmatrix.${name//[ ,]/}.out
	env "$@" POINTS="$KM_POINTS" SIZE_MIB="$KM_SIZE" \
		HOST="$TARGET_IP" TRANSPORT=rdma BUILD="$RPMEM_BUILD" \
		"$KM_TOOL" >"$out" 2>&1 || rc=$?
	cat "$out" >>"$(vm_log)"
	local summary
	summary=$(grep '^summary:' "$out")
	if [ "$rc" -eq 0 ] && [[ "$summary" == *" 0 mismatches;"* ]] &&
	   ! [[ "$summary" == *" 0 opens of the pool over rdma"* ]]; then
		tap_ok "kill matrix over rdma, $name, $KM_POINTS points a case and killer: $summary"
	else
		tap_not_ok "kill matrix over rdma, $name (exit $rc): $(tail -5 "$out" | tr '\n' ' ')"
	fi
}

target_main()
{
	local d
	d=$(mktemp -d "$FSDAX_DIR/km.XXXXXX")
	km_run fsdax TYPE=fsdax DIR="$d"
	rm -rf "$d"
	d=$(mktemp -d /tmp/km.XXXXXX)
	km_run "devdax, GPSPM" TYPE=devdax DEVICE="$DEVDAX" DIR="$d"
	km_run "devdax, APM" TYPE=devdax APM=true DEVICE="$DEVDAX" DIR="$d"
	rm -rf "$d"
	# the device left blank, as the other suites expect it
	daxio -z -o "$DEVDAX" -l 4096 >>"$(vm_log)" 2>&1
}
