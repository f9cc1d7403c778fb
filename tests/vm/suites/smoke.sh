# SPDX-License-Identifier: BSD-3-Clause
# smoke.sh -- prove the test bed: PMem namespaces, fsdax mount, RDMA between guests
#
# Target: checks the namespaces, daxctl and the DAX mount, then serves one
# rping and one ib_write_bw run. Initiator: pings the target, runs the rping
# and ib_write_bw clients.

SMOKE_RPING_PORT=7174
SMOKE_BW_PORT=18601
# -x GID instead of -R: see perftest_args in perftest.sh
SMOKE_BW_ARGS=(-F -d "$RDMA_DEV" -x "$RDMA_GID_INDEX" -s 1048576 -n 100
	-p "$SMOKE_BW_PORT")

# smoke_server NAME PORT CMD... -- serve one client, signal NAME once listening
smoke_server()
{
	local name=$1 port=$2 rc=0

	shift 2
	if ! vm_start_server "$port" 150 "$(vm_log)" "$@"; then
		tap_not_ok "$name server did not listen on port $port"
		vm_signal "$name"	# let the initiator fail fast
		return
	fi
	vm_signal "$name"
	wait "$VM_SERVER_PID" || rc=$?
	if [ "$rc" -eq 0 ]; then
		tap_ok "$name served one client"
	else
		tap_not_ok "$name server exited with $rc"
	fi
}

target_main()
{
	local ns

	ns=$(ndctl list -N)
	echo "$ns" >>"$(vm_log)"
	if [ "$(grep -c '"mode":"fsdax"' <<<"$ns")" -eq 1 ] &&
	   [ "$(grep -c '"mode":"devdax"' <<<"$ns")" -eq 1 ]; then
		tap_ok "ndctl list -N: one fsdax and one devdax namespace"
	else
		tap_not_ok "ndctl list -N: one fsdax and one devdax namespace"
	fi
	tap_check "daxctl list shows dax1.0" \
		sh -c 'daxctl list | tee /dev/stderr | grep -q "\"chardev\":\"dax1.0\""'
	tap_check "$DEVDAX is a character device" test -c "$DEVDAX"
	tap_check "$FSDAX_DIR is mounted with dax" \
		awk -v d="$FSDAX_DIR" '$2 == d && $4 ~ /(^|,)dax/ { f = 1; print }
			END { exit !f }' /proc/mounts
	tap_check "write and read back a file on $FSDAX_DIR" \
		sh -c "echo rpmem >'$FSDAX_DIR/probe' && grep -qx rpmem '$FSDAX_DIR/probe' && rm '$FSDAX_DIR/probe'"
	tap_check "rdma link shows $RDMA_DEV on eth0" \
		sh -c "rdma link show | grep -q '$RDMA_DEV.*netdev eth0'"

	smoke_server rping "$SMOKE_RPING_PORT" \
		rping -s -a "$TARGET_IP" -p "$SMOKE_RPING_PORT" -C 3 -v
	smoke_server ib_write_bw "$SMOKE_BW_PORT" \
		ib_write_bw "${SMOKE_BW_ARGS[@]}"
}

initiator_main()
{
	tap_check "ping the target over the qemu socket link" \
		vm_ping -c 2 -W 5 "$TARGET_IP"
	tap_check "rdma link shows $RDMA_DEV on eth0" \
		sh -c "rdma link show | grep -q '$RDMA_DEV.*netdev eth0'"

	if vm_wait rping; then
		tap_check "rping -c -a $TARGET_IP -C 3" \
			vm_retry 2 1 timeout 60 rping -c -a "$TARGET_IP" \
			-p "$SMOKE_RPING_PORT" -C 3 -v
	else
		tap_not_ok "rping: target server did not start"
	fi
	if vm_wait ib_write_bw; then
		tap_check "ib_write_bw -s 1048576 -n 100 $TARGET_IP" \
			vm_retry 2 1 timeout 60 ib_write_bw "${SMOKE_BW_ARGS[@]}" \
			"$TARGET_IP"
	else
		tap_not_ok "ib_write_bw: target server did not start"
	fi
}
