# SPDX-License-Identifier: BSD-3-Clause
# rdma-lib.sh -- the librpma data plane (lib/rdma/) between the guests, no daemon
#
# For each target mapping -- anonymous DRAM (GPSPM), the devdax namespace
# (APM), a file on the fsdax mount (registration fails on Soft-RoCE: DRAM
# staging + GPSPM) -- the target runs `rdma_selftest server`, which
# exposes the mapping and prints the transport blob; the blob travels to
# the initiator through the results directory; the initiator runs
# `rdma_selftest client`: staged and zero-copy writes, flushes, reads,
# range checks, write+flush latency and bandwidth. The target then
# compares the hash of its mapping (and, read back independently after
# the server exits, of the device or file) with the client's. On the
# DRAM server the initiator also checks that a replayed token, a wrong
# token and a truncated blob are refused with a clear error, not a hang.
# Last, a server is SIGKILLed under a connected initiator, whose next
# write + flush must fail in bounded time with an error that sticks.
#
# Settings: SUITE_RDMA_ITERS (latency samples, default 1000),
# SUITE_RDMA_SIZE (default 32M), SUITE_RDMA_READ_MATRIX (e.g. "1048576:64
# 65536:4": extra read-bandwidth runs on the DRAM server with
# RPMEM_RDMA_READ_CHUNK:RPMEM_RDMA_READ_DEPTH). Figures go to
# $RESULTS/rdma-lib.env; if the perftest suite ran first in the same run,
# ratios to it are printed.

RDMA_SELFTEST=$RPMEM_BUILD/tests/rdma_selftest
RDMA_ITERS=${SUITE_RDMA_ITERS:-1000}
RDMA_SIZE=${SUITE_RDMA_SIZE:-32M}
read -r -a RDMA_MATRIX <<<"${SUITE_RDMA_READ_MATRIX:-}"
# NAME PORT SERVER-ARGS...
RDMA_CONFIGS=(
	"dram 7701"
	"devdax 7702 --apm --file $DEVDAX"
	"fsdax 7703 --apm --file $FSDAX_DIR/rdma-selftest.pool"
)
# what each server must offer: "offer=... staging=..."
declare -A RDMA_OFFER=(
	[dram]="offer=gpspm staging=0"
	[devdax]="offer=apm staging=0"
	[fsdax]="offer=gpspm staging=1"
)

rdma_out()
{
	echo "$RESULTS/rdma-lib.$1"
}

# rdma_key FILE KEY -- the value of KEY=... in FILE
rdma_key()
{
	sed -n "s/^$2=//p" "$1" | tail -n 1
}

# rdma_blob NAME [K] -- the K-th blob the NAME server printed
rdma_blob()
{
	sed -n 's/^blob=//p' "$(rdma_out "$1").server.out" | sed -n "${2:-1}p"
}

# rdma_wait_line FILE REGEX SECONDS [PID] -- wait for a line in FILE
rdma_wait_line()
{
	vm_poll $(($3 * 5 + 1)) 0.2 "${4:-}" grep -qs "$2" "$1"
}

# rdma_file_hash NAME PATH -- hash the device or file outside the server
rdma_file_hash()
{
	local path=$2 copy=/tmp/rdma-lib.$1.copy

	case "$path" in
	/dev/dax*)
		daxio -i "$path" -o "$copy" -l "$RDMA_SIZE" >>"$(vm_log)" 2>&1 ||
			return 1
		path=$copy
		;;
	esac
	"$RDMA_SELFTEST" hash "$path" "$RDMA_SIZE"
	rm -f "$copy"
}

rdma_target_one()
{
	local name=$1 port=$2 out err pid rc hash chash a file='' prev=''

	shift 2
	for a in "$@"; do
		[ "$prev" = --file ] && file=$a
		prev=$a
	done
	out=$(rdma_out "$name").server.out
	err=$(rdma_out "$name").server.err
	[ -n "$file" ] && [ "${file#/dev/}" = "$file" ] && rm -f "$file"
	[ "$name" = dram ] && set -- "$@" --sessions $((1 + ${#RDMA_MATRIX[@]}))
	# a token that outlives the hand-over of its blob to the other guest
	# on a loaded host (the 10 s default is tls.sh's to test)
	RPMEM_RDMA_TOKEN_TTL=300 \
		"$RDMA_SELFTEST" server "$TARGET_IP" "$port" "$RDMA_SIZE" "$@" \
		>"$out" 2>"$err" &
	pid=$!
	if rdma_wait_line "$out" '^blob=' 120 "$pid"; then
		tap_ok "$name: server exposes $RDMA_SIZE on $TARGET_IP:$port"
	else
		tap_not_ok "$name: server did not expose (see ${err##*/})"
	fi
	vm_signal "${name}_ready"
	if grep -q "^${RDMA_OFFER[$name]} " "$out"; then
		tap_ok "$name: blob offers '${RDMA_OFFER[$name]}'"
	else
		tap_not_ok "$name: blob offers '$(grep '^offer=' "$out")', expected '${RDMA_OFFER[$name]}'"
	fi
	if [ "$name" = fsdax ]; then
		if grep -q 'DRAM staging buffer' "$err"; then
			tap_ok "fsdax: registration refused, DRAM staging used and logged"
		else
			tap_not_ok "fsdax: no staging message in ${err##*/}"
		fi
	fi
	vm_wait "${name}_done" 1200 ||
		tap_not_ok "$name: initiator did not finish"

	chash=$(rdma_key "$(rdma_out "$name").client.out" hash)
	kill -USR1 "$pid" 2>/dev/null
	if rdma_wait_line "$out" '^hash=' 60 "$pid"; then
		hash=$(rdma_key "$out" hash)
	fi
	if [ -n "$chash" ] && [ "$hash" = "$chash" ]; then
		tap_ok "$name: target mapping hash matches the initiator ($hash)"
	else
		tap_not_ok "$name: target mapping hash '$hash', initiator '$chash'"
	fi

	kill -TERM "$pid" 2>/dev/null
	rc=0
	wait "$pid" || rc=$?
	if [ "$rc" -eq 0 ] && grep -qx 'server=exit' "$out"; then
		tap_ok "$name: server unexposes and shuts down cleanly"
	else
		tap_not_ok "$name: server exit status $rc (see ${err##*/})"
	fi
	if [ -n "$file" ]; then
		hash=$(rdma_file_hash "$name" "$file" 2>>"$(vm_log)" |
			sed -n 's/^hash=//p')
		if [ -n "$chash" ] && [ "$hash" = "$chash" ]; then
			tap_ok "$name: $file read back independently matches"
		else
			tap_not_ok "$name: $file hash '$hash', initiator '$chash'"
		fi
	fi
}

# rdma_target_kill -- SIGKILL a server under a connected initiator
rdma_target_kill()
{
	local out err pid cout

	out=$(rdma_out kill).server.out
	err=$(rdma_out kill).server.err
	cout=$(rdma_out kill).client.out
	RPMEM_RDMA_TOKEN_TTL=300 \
		"$RDMA_SELFTEST" server "$TARGET_IP" 7704 4M >"$out" 2>"$err" &
	pid=$!
	rdma_wait_line "$out" '^blob=' 120 "$pid" ||
		tap_not_ok "kill: server did not expose (see ${err##*/})"
	vm_signal kill_ready
	if rdma_wait_line "$cout" '^phase1=' 300; then
		kill -KILL "$pid"
		wait "$pid" 2>/dev/null
		tap_ok "kill: server killed (SIGKILL) under a connected initiator"
	else
		tap_not_ok "kill: initiator never connected"
		kill -KILL "$pid"
		wait "$pid" 2>/dev/null
	fi
	: >"$(rdma_out kill).go"
	vm_wait kill_done 300 || tap_not_ok "kill: initiator did not finish"
}

target_main()
{
	local cfg

	if [ ! -x "$RDMA_SELFTEST" ]; then
		tap_not_ok "$RDMA_SELFTEST not built (make rdma-selftest)"
		return
	fi
	for cfg in "${RDMA_CONFIGS[@]}"; do
		# shellcheck disable=SC2086
		rdma_target_one $cfg
	done
	rdma_target_kill
}

# rdma_negative DESC EXPECT BLOB ARGS... -- a refused client, quickly
rdma_negative()
{
	local desc=$1 expect=$2 blob=$3 t0 rc=0 f
	local log

	shift 3
	f=$(rdma_out neg).client.out
	log=$(rdma_out neg).client.err
	t0=$SECONDS
	echo "### $desc" >>"$log"
	timeout 120 "$RDMA_SELFTEST" client "$TARGET_IP" "$blob" --quick "$@" \
		>"$f" 2>>"$log" || rc=$?
	if [ "$rc" -eq 3 ] && tail -n 3 "$log" | grep -q "$expect"; then
		tap_ok "$desc: refused in $((SECONDS - t0)) s with '$expect'"
	else
		tap_not_ok "$desc: exit $rc after $((SECONDS - t0)) s (see ${log##*/})"
	fi
}

# rdma_read_matrix -- read bandwidth for each SUITE_RDMA_READ_MATRIX entry
rdma_read_matrix()
{
	local k=2 m out v

	for m in "${RDMA_MATRIX[@]}"; do
		out=$(rdma_out "read.$m").client.out
		RPMEM_RDMA_READ_CHUNK=${m%%:*} RPMEM_RDMA_READ_DEPTH=${m##*:} \
			timeout 600 "$RDMA_SELFTEST" client "$TARGET_IP" \
			"$(rdma_blob dram "$k")" --read-only >"$out" 2>&1
		v="$(rdma_key "$out" rd_bw_bounce_MiBps) $(rdma_key "$out" rd_bw_MiBps) $(rdma_key "$out" read_same)"
		echo "read_${m/:/x}_MiBps=$v" >>"$RESULTS/rdma-lib.env"
		tap_diag "read chunk:depth $m: bounce, zero-copy MiB/s, same: $v"
		k=$((k + 1))
	done
}

rdma_ratio()
{
	awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'
}

rdma_initiator_one()
{
	local name=$1 out err blob rc=0 k v pt

	out=$(rdma_out "$name").client.out
	err=$(rdma_out "$name").client.err
	if ! vm_wait "${name}_ready" 300; then
		tap_not_ok "$name: target server did not start"
		return
	fi
	blob=$(rdma_blob "$name")
	if [ -z "$blob" ]; then
		tap_not_ok "$name: no blob from the target"
		vm_signal "${name}_done"
		return
	fi
	timeout 1100 "$RDMA_SELFTEST" client "$TARGET_IP" "$blob" \
		--iters "$RDMA_ITERS" >"$out" 2>"$err" || rc=$?
	if [ "$rc" -eq 0 ] && grep -qx 'result=ok' "$out"; then
		tap_ok "$name: client writes, flushes and reads back $RDMA_SIZE"
	else
		tap_not_ok "$name: client exit $rc: $(grep -E '^(error|result)=' "$out" | tr '\n' ' ')"
	fi
	for k in staged_write_read zero_copy_write zero_copy_read persist_write range_check; do
		if grep -qx "$k=ok.*" "$out"; then
			tap_ok "$name: $k"
		else
			tap_not_ok "$name: $k: '$(rdma_key "$out" "$k")'"
		fi
	done
	case "$name" in
	devdax) pt=APM ;;
	*) pt=GPSPM ;;
	esac
	if grep -q "persistence" "$err" && grep -q "$pt persistence" "$err"; then
		tap_ok "$name: initiator uses $pt"
	else
		tap_not_ok "$name: initiator does not use $pt ($(grep -o '[A-Z]* persistence' "$err"))"
	fi

	if [ "$name" = dram ]; then
		rdma_negative "dram: replayed (used) token" "rejected" "$blob"
		rdma_negative "dram: wrong token" "rejected" "$blob" --bad-token
		rdma_negative "dram: truncated blob" "invalid transport" \
			"${blob:0:40}"
		rdma_read_matrix
	fi
	vm_signal "${name}_done"

	for k in lat_4096_us lat_256_us bw_1m_MiBps bw_1m_staged_MiBps \
		 rd_bw_MiBps staged_write_ms connect_ms; do
		v=$(rdma_key "$out" "$k")
		[ -n "$v" ] || continue
		echo "${name}_$k=$v" >>"$RESULTS/rdma-lib.env"
		tap_diag "$name $k=$v"
	done
	if [ -r "$RESULTS/perftest.env" ]; then
		# perftest's ib_write_lat is one-way (half a round trip)
		v=$(sed -n 's/^write_lat_4096_typical_us=//p' "$RESULTS/perftest.env")
		[ -n "$v" ] && tap_diag "$name write+flush 4K / ib_write_lat 4K typical: $(rdma_ratio "$(rdma_key "$out" lat_4096_us)" "$v")"
		v=$(sed -n 's/^write_lat_256_typical_us=//p' "$RESULTS/perftest.env")
		[ -n "$v" ] && tap_diag "$name write+flush 256 / ib_write_lat 256 typical: $(rdma_ratio "$(rdma_key "$out" lat_256_us)" "$v")"
		v=$(sed -n 's/^write_bw_1m_avg_MBps=//p' "$RESULTS/perftest.env")
		[ -n "$v" ] && tap_diag "$name bw 1M / ib_write_bw 1M avg: $(rdma_ratio "$(rdma_key "$out" bw_1m_MiBps)" "$v")"
	fi
}

# rdma_initiator_kill -- the initiator sees the dead target, bounded
rdma_initiator_kill()
{
	local out rc=0

	out=$(rdma_out kill).client.out
	if vm_wait kill_ready 300; then
		timeout 300 "$RDMA_SELFTEST" client "$TARGET_IP" \
			"$(rdma_blob kill)" --kill-test "$(rdma_out kill).go" \
			>"$out" 2>"$(rdma_out kill).client.err" || rc=$?
		if [ "$rc" -eq 0 ] && grep -qx 'sticky=ok' "$out" &&
		   grep -qx 'closed=ok' "$out"; then
			tap_ok "kill: next write+flush fails ($(rdma_key "$out" after_kill)), the error sticks, close returns"
		else
			tap_not_ok "kill: exit $rc: $(tr '\n' ' ' <"$out")"
		fi
	else
		tap_not_ok "kill: target server did not start"
	fi
	vm_signal kill_done
}

initiator_main()
{
	local cfg

	[ -x "$RDMA_SELFTEST" ] || return
	for cfg in "${RDMA_CONFIGS[@]}"; do
		# shellcheck disable=SC2086
		rdma_initiator_one $cfg
	done
	rdma_initiator_kill
}
