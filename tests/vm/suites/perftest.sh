# SPDX-License-Identifier: BSD-3-Clause
# perftest.sh -- measure the raw RDMA (perftest) and TCP (nc) floor between the guests
#
# Writes $RESULTS/perftest.env (key=value, one per line) for benchmarks that
# report their own figures as ratios to these:
#   write_lat_4096_typical_us  write_lat_4096_avg_us  write_lat_4096_p99_us
#   write_lat_256_typical_us   write_lat_256_avg_us   write_lat_256_p99_us
#   write_bw_1m_avg_MBps       write_bw_1m_peak_MBps  (perftest MB = 2^20 B)
#   tcp_nc_32m_MBps            32 MiB through nc, initiator -> target
# Iterations: PERFTEST_LAT_ITERS (default 1000), PERFTEST_BW_ITERS (default
# 100), e.g. PERFTEST_LAT_ITERS=5000 tests/vm/run.sh perftest; each client
# attempt is limited to PERFTEST_TIMEOUT seconds (default 120).

PERFTEST_LAT_ITERS=${PERFTEST_LAT_ITERS:-1000}
PERFTEST_BW_ITERS=${PERFTEST_BW_ITERS:-100}
PERFTEST_TIMEOUT=${PERFTEST_TIMEOUT:-120}
PERFTEST_TCP_PORT=5201
PERFTEST_TCP_MIB=32

# the perftest runs, in order: NAME TOOL SIZE ITERS PORT (each run has its
# own port, so a late client can never reach the next run's server)
PERFTEST_RUNS=(
	"lat_4096 ib_write_lat 4096 $PERFTEST_LAT_ITERS 18611"
	"lat_256 ib_write_lat 256 $PERFTEST_LAT_ITERS 18612"
	"bw_1m ib_write_bw 1048576 $PERFTEST_BW_ITERS 18613"
)

# perftest_args SIZE ITERS PORT -- QP data exchanged over a TCP socket,
# not with -R: perftest -R makes two rdma_cm connections on one port, and a
# client that reaches the second before the server re-listens is rejected
# (RDMA_CM_EVENT_REJECTED, status 8), crashes, and leaves the server stuck
perftest_args()
{
	echo -F -d "$RDMA_DEV" -x "$RDMA_GID_INDEX" -s "$1" -n "$2" -p "$3"
}

target_main()
{
	local run name tool size iters port rc

	for run in "${PERFTEST_RUNS[@]}"; do
		read -r name tool size iters port <<<"$run"
		rc=0
		# shellcheck disable=SC2046
		if ! vm_start_server "$port" $((PERFTEST_TIMEOUT * 2 + 30)) \
			"$RESULTS/perftest.$name.server.txt" \
			$tool $(perftest_args "$size" "$iters" "$port"); then
			tap_not_ok "$tool -s $size server did not listen"
			vm_signal "$name"
			continue
		fi
		vm_signal "$name"
		wait "$VM_SERVER_PID" || rc=$?
		[ "$rc" -eq 0 ] || tap_not_ok "$tool -s $size server exited with $rc"
	done

	rm -f /tmp/nc.out
	timeout 120 nc -l "$PERFTEST_TCP_PORT" >/tmp/nc.out &
	VM_SERVER_PID=$!
	vm_alive_until "$VM_SERVER_PID" vm_listening "$PERFTEST_TCP_PORT" ||
		true
	vm_signal tcp
	rc=0
	wait "$VM_SERVER_PID" || rc=$?
	if [ "$rc" -eq 0 ] &&
	   [ "$(stat -c %s /tmp/nc.out)" -eq $((PERFTEST_TCP_MIB << 20)) ]; then
		tap_ok "nc received $PERFTEST_TCP_MIB MiB"
	else
		tap_not_ok "nc received $(stat -c %s /tmp/nc.out 2>/dev/null) bytes (exit $rc)"
	fi
	rm -f /tmp/nc.out
}

# perftest_row FILE SIZE ITERS -- the result row of a perftest output
perftest_row()
{
	awk -v s="$2" -v n="$3" '$1 == s && $2 == n && NF >= 5 { r = $0 }
		END { if (r == "") exit 1; print r }' "$1"
}

perftest_env()
{
	echo "$1=$2" >>"$RESULTS/perftest.env"
	tap_diag "$1=$2"
}

initiator_main()
{
	local run name tool size iters port out row t0 t1 f

	: >"$RESULTS/perftest.env"
	for run in "${PERFTEST_RUNS[@]}"; do
		read -r name tool size iters port <<<"$run"
		out=$RESULTS/perftest.$name.client.txt
		if ! vm_wait "$name"; then
			tap_not_ok "$tool -s $size: target server did not start"
			continue
		fi
		# shellcheck disable=SC2046
		if ! vm_retry 2 1 timeout "$PERFTEST_TIMEOUT" $tool \
			$(perftest_args "$size" "$iters" "$port") "$TARGET_IP" \
			>"$out" 2>&1; then
			tap_not_ok "$tool -s $size -n $iters (see ${out##*/})"
			continue
		fi
		if ! row=$(perftest_row "$out" "$size" "$iters"); then
			tap_not_ok "$tool -s $size -n $iters: no result row in ${out##*/}"
			continue
		fi
		read -r -a f <<<"$row"
		case "$tool" in
		ib_write_lat)
			# bytes iters min max typical avg stdev p99 p99.9
			perftest_env "write_${name}_typical_us" "${f[4]}"
			perftest_env "write_${name}_avg_us" "${f[5]}"
			perftest_env "write_${name}_p99_us" "${f[7]}"
			;;
		ib_write_bw)
			# bytes iters peak avg msgrate
			perftest_env "write_${name}_peak_MBps" "${f[2]}"
			perftest_env "write_${name}_avg_MBps" "${f[3]}"
			;;
		esac
		tap_ok "$tool -s $size -n $iters"
	done

	if vm_wait tcp; then
		t0=$(date +%s.%N)
		if vm_retry 5 1 sh -c "dd if=/dev/zero bs=1M count=$PERFTEST_TCP_MIB 2>/dev/null |
			timeout 120 nc -N '$TARGET_IP' '$PERFTEST_TCP_PORT'"; then
			t1=$(date +%s.%N)
			perftest_env tcp_nc_${PERFTEST_TCP_MIB}m_MBps \
				"$(awk -v a="$t0" -v b="$t1" -v m="$PERFTEST_TCP_MIB" \
					'BEGIN { printf "%.2f", m / (b - a) }')"
			tap_ok "nc sent $PERFTEST_TCP_MIB MiB to the target"
		else
			tap_not_ok "nc sent $PERFTEST_TCP_MIB MiB to the target"
		fi
	else
		tap_not_ok "nc: target listener did not start"
	fi
}
