# shellcheck shell=bash
# SPDX-License-Identifier: BSD-3-Clause
# rdma-preload.sh -- the preload library, atomic syncs and versions over RDMA
#
# Target: rpmemd as in suites/rdma.sh (its helpers are reused by sourcing
# it), with a devdax region "dd" and an fsdax region "fs" that keeps
# versions; gpspm.conf has no direct_pmem, apm.conf declares direct_pmem
# = true on both (Soft-RoCE registers the devdax pool in place: APM; it
# cannot register FS-DAX pages, so the fsdax pool is served through a DRAM
# staging buffer, GPSPM only, whatever the configuration says). The
# initiator runs suites/rdma-preload.bats: tests/pobj_app under
# librpmem_preload.so with RPMEM_REPLICATE (transport auto) into both
# regions under both configurations, clean exits and SIGKILLs; an
# rpmemctl sync over RDMA into fsdax killed with kill -9 (rolled back, and
# completed); a version restored; the same kill into devdax (not atomic:
# syncing without pending). Which transport a session used is read from
# rpmemd's log ("opened pool R/P (..., rdma)"), and its persistence from
# the RDMA listener's ("session connected (APM)", "after N GPSPM
# flushes"), never from the client.
#
# Requests (the bats file's rp_request): the initiator writes
# "SEQ CMD ARGS" into req, the target runs rp_req_CMD ARGS and signals
# rep-SEQ; its output is in $RESULTS/rdma-preload.rep-SEQ:
#   snap REGION POOL  the pool's bytes as the target holds them, copied to
#                     $RESULTS/rdma-preload.snap (devdax: rpmemd stopped,
#                     the pool table read with pmem_probe, the pool with
#                     daxio, rpmemd started again)
#   conf NAME [reorder]  restart rpmemd with NAME.conf (reorder: the test
#                     build that persists GPSPM requests out of order)
#
# SUITE_RP_KILLS: SIGKILLs per kill test (default 2; 50 gives 100 over
# GPSPM, devdax and fsdax, and 100 over the APM configuration).
#
# Needs: make, make build/tests/pmem_probe build/tests/pobj_app
# build/tests/rpmemd-rdma-reorder (make examples).

# shellcheck source=tests/vm/suites/rdma.sh
. "$RPMEM_SRC/tests/vm/suites/rdma.sh"

RP_CONF=gpspm

# rd_write_configs -- gpspm.conf and apm.conf (replaces rdma.sh's)
rd_write_configs()
{
	local apm

	for apm in false true; do
		cat >"$RD_TMP/$([ $apm = true ] && echo apm || echo gpspm).conf" <<EOF
listen = ["127.0.0.1", "$TARGET_IP", "$RD_NORDMA_IP"];
allow_insecure_remote = true;
limits = { rdma_staging_max = "64M"; };
regions = (
	{ name = "dd"; type = "devdax"; path = "$DEVDAX"; direct_pmem = $apm; },
	{ name = "fs"; type = "fsdax"; path = "$FSDAX_DIR"; direct_pmem = $apm;
	  versions = "all"; }
);
EOF
	done
	cat "$RD_TMP"/*.conf >>"$(vm_log)"
}

# rp_req_conf NAME [reorder] -- rpmemd restarted with NAME.conf; reorder:
# the test build that persists GPSPM requests out of order
# (build/tests/rpmemd-rdma-reorder, lib/rdma/rdma_reorder.h) instead
rp_req_conf()
{
	rd_stop || echo "rpmemd exited $? on SIGTERM"
	RP_CONF=$1
	RD_RPMEMD=$RPMEM_BUILD/rpmemd
	[ "${2:-}" = reorder ] && RD_RPMEMD=$RPMEM_BUILD/tests/rpmemd-rdma-reorder
	rd_start "$1" && echo "$RD_RPMEMD runs $1.conf"
}

# rp_req_snap REGION POOL -- the pool's bytes into $RESULTS/rdma-preload.snap
rp_req_snap()
{
	local snap=$RESULTS/$VM_SUITE.snap off size

	rm -f "$snap"
	if [ "$1" = fs ]; then
		cp "$FSDAX_DIR/$2" "$snap"
		return
	fi
	# pmem_probe needs the device to itself (rpmemd flocks it)
	rd_stop || echo "rpmemd exited $? on SIGTERM"
	if "$RD_PROBE" info "$DEVDAX" >"$RD_TMP/table.out"; then
		off=$(rd_table_field "$2" offset)
		size=$(rd_table_field "$2" size)
		if [ -n "$off" ] && [ -n "$size" ]; then
			daxio -i "$DEVDAX" -o "$snap" -k "$off" -l "$size"
		else
			echo "no pool $2 in the table:"
			cat "$RD_TMP/table.out"
		fi
	fi
	rd_start "$RP_CONF" || echo "rpmemd did not start again"
}

# rp_serve -- act on the initiator's requests until it is done
rp_serve()
{
	vm_serve rp_request
}

# rp_request -- act on the initiator's request, if it left one
rp_request()
{
	local req=$RD_SYNC/$VM_SUITE.initiator.req seq cmd args

	[ -e "$req" ] || return 0
	read -r seq cmd args <"$req"
	rm -f "$req"
	case $cmd in
	conf | snap)
		# shellcheck disable=SC2086
		"rp_req_$cmd" $args >"$RESULTS/$VM_SUITE.rep-$seq" 2>&1 ;;
	*)	echo "unknown request '$cmd'" >"$RESULTS/$VM_SUITE.rep-$seq" ;;
	esac
	vm_signal "rep-$seq"
}

target_main()
{
	local t

	RD_TMP=$(mktemp -d /tmp/rdma-preload.XXXXXX)
	for t in "$RD_RPMEMD" "$RD_CTL" "$RD_PROBE"; do
		if [ ! -x "$t" ]; then
			tap_not_ok "$t missing (make && make build/tests/pmem_probe)"
			vm_signal up
			return
		fi
	done
	ip addr add "$RD_NORDMA_IP/32" dev lo
	tap_check "blank the header block of $DEVDAX with daxio" \
		daxio -z -o "$DEVDAX" -l 4096
	rd_write_configs
	if rd_start gpspm; then
		tap_ok "rpmemd starts with devdax and fsdax regions (GPSPM)"
	else
		tap_not_ok "rpmemd starts with devdax and fsdax regions (GPSPM)"
	fi
	tap_check "rpmemd listens for RDMA on $TARGET_IP:7637" \
		grep -q "rdma: listening on $TARGET_IP:7637" "$(rd_log)"
	vm_signal up
	rp_serve
}

target_post()
{
	local rc=0

	[ -n "$RD_TMP" ] || return
	rd_stop || rc=$?
	rd_is "rpmemd stops on SIGTERM with status 0" "$rc" 0
	tap_check "no RDMA errors in rpmemd's log" \
		sh -c "! grep -E 'error: rdma|error: rpma' '$(rd_log)'"
	rm -rf "$RESULTS/$VM_SUITE".snap "$FSDAX_DIR"/pl-* "$FSDAX_DIR"/at-* \
		"$FSDAX_DIR"/.rpmemd/pl-* "$FSDAX_DIR"/.rpmemd/at-* "$RD_TMP"
	ip addr del "$RD_NORDMA_IP/32" dev lo 2>/dev/null
	daxio -z -o "$DEVDAX" -l 4096 >>"$(vm_log)" 2>&1
}

initiator_main()
{
	if ! vm_wait up; then
		tap_not_ok "the target's rpmemd did not come up"
		return
	fi
	ip route add "$RD_NORDMA_IP/32" via "$TARGET_IP"
	export RD_NORDMA_IP
	tap_bats "$RPMEM_SRC/tests/vm/suites/rdma-preload.bats"
	ip route del "$RD_NORDMA_IP/32" 2>/dev/null
}
