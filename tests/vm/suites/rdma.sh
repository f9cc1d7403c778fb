# shellcheck shell=bash
# SPDX-License-Identifier: BSD-3-Clause
# rdma.sh -- rpmemd and rpmemctl over the RDMA data plane, end to end
#
# Target: build/rpmemd listening on 127.0.0.1, $TARGET_IP (Soft-RoCE: an
# RDMA listener on port 7637) and $RD_NORDMA_IP (an address on lo: no RDMA
# device, tcp only), with a devdax region on $DEVDAX ("dd"), an fsdax
# region on $FSDAX_DIR ("fs": Soft-RoCE cannot register FS-DAX pages, so
# rw opens are served through a DRAM staging buffer, at most 24 MiB of
# them (limits.rdma_staging_max), and ro opens go over tcp) and a dir
# region ("dir"). A second configuration declares direct_pmem = true on
# the devdax region (APM). The initiator runs suites/rdma.bats: transfers
# with --transport rdma into each region type, status, auto, a PMDK pool,
# GPSPM and APM, the staging rules, and rpmemd killed with SIGKILL in the
# middle of a mirror. The bats tests
# ask the target to act (kill, switch configurations) through request
# markers (req-NAME in $RESULTS/.sync, answered by rep-NAME). At the end
# the target stops rpmemd and checks the replicas independently: daxio
# reads of the devdax pools and the fsdax pool files equal the initiator's
# files, pmempool check accepts the PMDK pools.
#
# The wrong-token, replayed-token and truncated-blob refusals are the
# rdma-lib suite's (rdma_selftest), not repeated here.
#
# Needs: make, make build/tests/pmem_probe.

RD_RPMEMD=$RPMEM_BUILD/rpmemd
RD_CTL=$RPMEM_BUILD/rpmemctl
# its rpmemd allows plaintext from the other guest: so must rpmemctl
vm_plaintext_targets
RD_PROBE=$RPMEM_BUILD/tests/pmem_probe
RD_NORDMA_IP=10.99.0.1
RD_SYNC=$RESULTS/.sync
RD_PID=

rd_log()
{
	echo "$RESULTS/$VM_SUITE.rpmemd.log"
}

# rd_is DESC GOT WANT -- ok if GOT equals WANT
rd_is()
{
	if [ "$2" = "$3" ]; then
		tap_ok "$1"
	else
		echo "### $1: got '$2', expected '$3'" >>"$(vm_log)"
		tap_not_ok "$1 (got '$2', expected '$3')"
	fi
}

# --- target ---------------------------------------------------------------

# rd_write_configs -- main.conf (GPSPM everywhere), apm.conf (direct_pmem)
rd_write_configs()
{
	local apm

	mkdir -p "$RD_TMP/dir"
	for apm in false true; do
		cat >"$RD_TMP/$([ $apm = true ] && echo apm || echo main).conf" <<EOF
listen = ["127.0.0.1", "$TARGET_IP", "$RD_NORDMA_IP"];
allow_insecure_remote = true;
limits = { rdma_staging_max = "24M"; };
regions = (
	{ name = "dd"; type = "devdax"; path = "$DEVDAX"; direct_pmem = $apm; },
	{ name = "fs"; type = "fsdax"; path = "$FSDAX_DIR"; },
	{ name = "dir"; type = "dir"; path = "$RD_TMP/dir"; }
);
EOF
	done
	cat "$RD_TMP"/*.conf >>"$(vm_log)"
}

# rd_start NAME -- start rpmemd with NAME.conf, wait until it answers
rd_start()
{
	echo "=== rpmemd -c $1.conf ($(date +%T))" >>"$(rd_log)"
	"$RD_RPMEMD" -c "$RD_TMP/$1.conf" >>"$(rd_log)" 2>&1 &
	RD_PID=$!
	vm_retry 300 0.2 "$RD_CTL" -q list 127.0.0.1 >/dev/null 2>&1
}

# rd_stop -- SIGTERM rpmemd and wait; its exit status
rd_stop()
{
	local rc=0

	[ -n "$RD_PID" ] || return 0
	kill -TERM "$RD_PID" 2>/dev/null
	wait "$RD_PID" || rc=$?
	RD_PID=
	return "$rc"
}

# rd_restart NAME -- stop rpmemd, start it with NAME.conf
rd_restart()
{
	local rc=0

	rd_stop || rc=$?
	rd_is "rpmemd stops on SIGTERM with status 0" "$rc" 0
	if rd_start "$1"; then
		tap_ok "rpmemd starts with $1.conf"
	else
		tap_not_ok "rpmemd starts with $1.conf"
	fi
}

# rd_big_mirroring -- an RDMA session writes dd/big, syncing: the
# session's region, pool, transport and access in $st
rd_big_mirroring()
{
	st=$("$RD_CTL" status --json 127.0.0.1 2>/dev/null |
	     jq -c '.sessions[] | select(.region == "dd" and
					 .pool == "big" and
					 .transport == "rdma")
		    | {region, pool, transport, access}' 2>/dev/null)
	[ -n "$st" ] &&
		[ "$("$RD_CTL" list --json 127.0.0.1/dd/big 2>/dev/null |
		     jq -r '.pools[0].state')" = syncing ]
}

# rd_req_kill -- SIGKILL rpmemd while the initiator mirrors into dd/big
# over RDMA (SIGSTOP first, as soon as the pool is syncing, so that the
# mirror cannot finish before the kill), then start it again
rd_req_kill()
{
	local st=''

	vm_wait_for rd_big_mirroring 2>>"$(vm_log)" || st=''
	if [ -n "$st" ]; then
		# stopped, it cannot answer the flush: the mirror is caught
		# with its RDMA writes landing or landed, not yet persisted
		kill -STOP "$RD_PID"
		# not a wait: RDMA writes land in the stopped target a moment
		sleep 1
		kill -KILL "$RD_PID"
		wait "$RD_PID" 2>/dev/null
		RD_PID=
		vm_signal rep-killed
		tap_ok "rpmemd killed with SIGKILL during an RDMA mirror ($st)"
	else
		vm_signal rep-killed
		tap_not_ok "did not see the RDMA mirror into dd/big in progress"
		rd_stop
	fi
	if rd_start main; then
		tap_ok "rpmemd restarts after SIGKILL"
	else
		tap_not_ok "rpmemd restarts after SIGKILL"
	fi
	vm_signal rep-kill
}

# rd_req_apm -- restart with direct_pmem = true on the devdax region
rd_req_apm()
{
	rd_restart apm
	vm_signal rep-apm
}

# rd_req_flip -- flip one byte of the dir pool c (3 MiB + 5) behind
# rpmemd's back, as a media error would: its scrub record still holds the
# piece's old hash
rd_req_flip()
{
	local f=$RD_TMP/dir/c off=$((3 * 1048576 + 5)) b

	b=$(od -An -tu1 -j "$off" -N1 "$f" | tr -d ' ')
	printf "\\$(printf %o $((b ^ 255)))" |
		dd of="$f" bs=1 seek="$off" conv=notrunc status=none
	vm_signal rep-flip
}

# rd_req_main -- back to the main configuration
rd_req_main()
{
	rd_restart main
	vm_signal rep-main
}

# rd_serve -- act on the initiator's requests until it is done
rd_serve()
{
	vm_serve rd_requests
}

# rd_requests -- act on the requests the initiator made since the last look
rd_requests()
{
	local req

	for req in kill apm main flip; do
		if [ -e "$RD_SYNC/$VM_SUITE.initiator.req-$req" ]; then
			rm -f "$RD_SYNC/$VM_SUITE.initiator.req-$req"
			"rd_req_$req"
		fi
	done
}

# rd_table_field POOL FIELD -- FIELD=value of "pool POOL ..." in table.out
rd_table_field()
{
	awk -v p="$1" -v f="$2=" '$1 == "pool" && $2 == p {
		for (i = 3; i <= NF; i++)
			if (index($i, f) == 1) print substr($i, length(f) + 1)
	}' "$RD_TMP/table.out"
}

# rd_daxio_cmp POOL FILE -- the devdax pool POOL read with daxio is FILE
rd_daxio_cmp()
{
	local off size

	off=$(rd_table_field "$1" offset)
	size=$(rd_table_field "$1" size)
	[ -n "$off" ] && [ -n "$size" ] || return 1
	daxio -i "$DEVDAX" -o "$RD_TMP/$1.daxio" -k "$off" -l "$size" &&
		cmp "$2" "$RD_TMP/$1.daxio"
}

# rd_target_check -- rpmemd stopped: the replicas, read independently
rd_target_check()
{
	local rc=0 f

	rd_stop || rc=$?
	rd_is "rpmemd stops on SIGTERM with status 0" "$rc" 0
	tap_check "pmem_probe reads the pool table" \
		sh -c "'$RD_PROBE' info '$DEVDAX' >'$RD_TMP/table.out' &&
		       cat '$RD_TMP/table.out'"
	for f in a:GPSPM apm:APM big:GPSPM; do
		if [ -r "$RESULTS/$VM_SUITE.${f%%:*}.bin" ]; then
			tap_check "daxio: devdax pool ${f%%:*} (${f#*:}) is byte-identical to the initiator's file" \
				rd_daxio_cmp "${f%%:*}" "$RESULTS/$VM_SUITE.${f%%:*}.bin"
		else
			tap_not_ok "the initiator left no copy of ${f%%:*}"
		fi
	done
	tap_check "pmempool check accepts the PMDK pool mirrored into the dir region" \
		pmempool check "$RD_TMP/dir/obj"
	for f in c:fs big:fsbig; do
		if [ -r "$RESULTS/$VM_SUITE.${f#*:}.bin" ]; then
			tap_check "fsdax pool rdma-${f%%:*} holds the initiator's last write" \
				cmp "$FSDAX_DIR/rdma-${f%%:*}" "$RESULTS/$VM_SUITE.${f#*:}.bin"
		else
			tap_not_ok "the initiator left no copy of fsdax pool rdma-${f%%:*}"
		fi
	done
	tap_check "pmempool check accepts the PMDK pool mirrored into the fsdax region" \
		pmempool check "$FSDAX_DIR/rdma-obj"
	tap_check "pmempool check accepts the PMDK pool in the devdax region (read with daxio)" \
		sh -c "daxio -i '$DEVDAX' -o '$RD_TMP/obj.daxio' \
			-k '$(rd_table_field obj offset)' \
			-l '$(rd_table_field obj size)' &&
		       pmempool check '$RD_TMP/obj.daxio'"
}

target_main()
{
	local t

	RD_TMP=$(mktemp -d /tmp/rdma.XXXXXX)
	for t in "$RD_RPMEMD" "$RD_CTL" "$RD_PROBE"; do
		if [ ! -x "$t" ]; then
			tap_not_ok "$t missing (make && make build/tests/pmem_probe)"
			vm_signal up
			return
		fi
	done
	ip addr add "$RD_NORDMA_IP/32" dev lo
	# start from a blank device, whatever an earlier suite left on it
	tap_check "blank the header block of $DEVDAX with daxio" \
		daxio -z -o "$DEVDAX" -l 4096
	rd_write_configs
	if rd_start main; then
		tap_ok "rpmemd starts with devdax, fsdax and dir regions"
	else
		tap_not_ok "rpmemd starts with devdax, fsdax and dir regions"
	fi
	tap_check "rpmemd listens for RDMA on $TARGET_IP:7637" \
		grep -q "rdma: listening on $TARGET_IP:7637" "$(rd_log)"
	tap_check "no RDMA listener on $RD_NORDMA_IP (on lo) nor on 127.0.0.1" \
		sh -c "grep 'no RDMA device serves $RD_NORDMA_IP' '$(rd_log)' &&
		       ! grep 'rdma: listening on 127.0.0.1' '$(rd_log)'"
	vm_signal up
	rd_serve
}

target_post()
{
	[ -n "$RD_TMP" ] || return
	rd_target_check
	tap_check "no RDMA errors in rpmemd's log" \
		sh -c "! grep -E 'error: rdma|error: rpma' '$(rd_log)'"
	rm -f "$RESULTS/$VM_SUITE".*.bin "$FSDAX_DIR"/rdma-* \
		"$FSDAX_DIR"/.rpmemd/rdma-* 2>/dev/null
	rm -rf "$RD_TMP"
	ip addr del "$RD_NORDMA_IP/32" dev lo 2>/dev/null
	# leave a blank device to the next suite
	daxio -z -o "$DEVDAX" -l 4096 >>"$(vm_log)" 2>&1
}

# --- initiator ------------------------------------------------------------

initiator_main()
{
	if ! vm_wait up; then
		tap_not_ok "the target's rpmemd did not come up"
		return
	fi
	ip route add "$RD_NORDMA_IP/32" via "$TARGET_IP"
	export RD_NORDMA_IP
	tap_bats "$RPMEM_SRC/tests/vm/suites/rdma.bats"
	ip route del "$RD_NORDMA_IP/32" 2>/dev/null
}
