# shellcheck shell=bash
# SPDX-License-Identifier: BSD-3-Clause
# rdma-bench.sh -- rpmemctl over RDMA vs perftest on the same guests
#
# SUITE_BENCH_RUNS rounds (default 3). Each round first runs the perftest
# suite's measurements (its PERFTEST_RUNS, perftest_args and perftest_row
# are reused by sourcing suites/perftest.sh: ib_write_lat -s 4096 and -s
# 256, ib_write_bw -s 1048576), then, with the target's devdax namespace
# served by rpmemd as region "dd", first as GPSPM (flushes go through
# rpmemd), then with direct_pmem = true (APM: an RDMA read-after-write
# flush, the daemon's CPU is not involved):
#   rpmemctl bench --json --transport rdma -i 4096 -s 64M  (write + flush
#       latency; and 64 MiB in 1 MiB writes + one flush)
#   rpmemctl bench --json --transport rdma -i 256 -s 64M
#   rpmemctl mirror --json --transport rdma of a fresh 64 MiB file
#   tests/pobj_app loop:N persist:N (N = SUITE_BENCH_PRELOAD_N, default
#       500) under librpmem_preload.so, RPMEM_REPLICATE into dd/pl with
#       RPMEM_REPLICATE_TRANSPORT=rdma, PMEM_IS_PMEM_FORCE=1: a small
#       transaction (8 bytes, waits once at its commit) and a
#       pmemobj_persist of 8 bytes, per operation; beside the same
#       program without the library (loop:20000 persist:20000), once a
#       round
#   with SUITE_BENCH_PARTS naming threads: tests/pobj_app mt:T:N (T = 1
#       and SUITE_BENCH_THREADS, default 8; T threads of N/T transactions,
#       each on a record of its own) unreplicated, under the preload
#       library per commit and per drain (RPMEM_REPLICATE_DRAIN=every),
#       and tests/replica_lat -t T (64-byte rpmemctl_replica_persist
#       calls), all over rdma: tx/s and the p50, p99, p99.9 latencies
# SUITE_BENCH_PARTS (default "bench mirror preload") picks the rpmemctl,
# preload and threads parts; perftest always runs (it is the yardstick).
# The medians over the rounds are compared:
#   latency ratio = write+flush median / (ib_write_lat at the size + one
#     round trip): ib_write_lat reports a one-way write (half of its
#     ping-pong), so a round trip of the small flush messages is
#     2 x ib_write_lat -s 256, and the baseline is lat(size) + 2 x lat(256)
#     (3 x lat(256) at 256 B)
#   strict ratio = write+flush median / (2 x ib_write_lat at the size): the
#     round trip counted as one ib_write_lat only (the yardstick used
#     before 2026-11-21, kept for comparison)
#   bandwidth ratio = MiB/s / ib_write_bw -s 1M average (MB = 2^20 B)
#   preload ratio = (replicated - local) per operation / (2 x
#     ib_write_lat -s 256): the wait for the target against one ping-pong
#     round trip of a small message
# Figures: $RESULTS/rdma-bench.env, $RESULTS/rdma-bench.md (the table),
# raw output in $RESULTS/rdma-bench.*. Run by tests/bench/vm-bench.sh.

# shellcheck source=tests/vm/suites/perftest.sh
. "$RPMEM_SRC/tests/vm/suites/perftest.sh"

RB_RPMEMD=$RPMEM_BUILD/rpmemd
RB_CTL=$RPMEM_BUILD/rpmemctl
# its rpmemd allows plaintext from the other guest: so must rpmemctl
vm_plaintext_targets
RB_RUNS=${SUITE_BENCH_RUNS:-3}
RB_COUNT=${SUITE_BENCH_COUNT:-1000}
RB_MIB=64
RB_MODES=(gpspm apm)
RB_PARTS=${SUITE_BENCH_PARTS:-bench mirror preload}
RB_PL_N=${SUITE_BENCH_PRELOAD_N:-500}
RB_THREADS=${SUITE_BENCH_THREADS:-8}
RB_APP=$RPMEM_BUILD/tests/pobj_app
RB_PID=

rb_log()
{
	echo "$RESULTS/$VM_SUITE.rpmemd.log"
}

# --- target ---------------------------------------------------------------

rb_start()
{
	echo "=== rpmemd -c $1.conf ($(date +%T))" >>"$(rb_log)"
	"$RB_RPMEMD" -c "$RB_TMP/$1.conf" >>"$(rb_log)" 2>&1 &
	RB_PID=$!
	vm_retry 300 0.2 "$RB_CTL" -q list 127.0.0.1 >/dev/null 2>&1
}

rb_stop()
{
	local rc=0

	[ -n "$RB_PID" ] || return 0
	kill -TERM "$RB_PID" 2>/dev/null
	wait "$RB_PID" || rc=$?
	RB_PID=
	return "$rc"
}

# rb_target_perftest ROUND -- the perftest servers of one round
rb_target_perftest()
{
	local run name tool size iters port rc

	for run in "${PERFTEST_RUNS[@]}"; do
		read -r name tool size iters port <<<"$run"
		rc=0
		# shellcheck disable=SC2046
		if ! vm_start_server "$port" $((PERFTEST_TIMEOUT * 2 + 30)) \
			"$RESULTS/rdma-bench.pt.$1.$name.server.txt" \
			"$tool" $(perftest_args "$size" "$iters" "$port"); then
			tap_not_ok "round $1: $tool -s $size server did not listen"
			vm_signal "pt-$1-$name"
			continue
		fi
		vm_signal "pt-$1-$name"
		wait "$VM_SERVER_PID" || rc=$?
		[ "$rc" -eq 0 ] ||
			tap_not_ok "round $1: $tool -s $size server exited with $rc"
	done
}

target_main()
{
	local mode apm r

	RB_TMP=$(mktemp -d /tmp/rdma-bench.XXXXXX)
	for mode in "${RB_MODES[@]}"; do
		apm=false
		[ "$mode" = apm ] && apm=true
		cat >"$RB_TMP/$mode.conf" <<EOF
listen = ["127.0.0.1", "$TARGET_IP"];
allow_insecure_remote = true;
regions = ( { name = "dd"; type = "devdax"; path = "$DEVDAX"; direct_pmem = $apm; } );
EOF
	done
	daxio -z -o "$DEVDAX" -l 4096 >>"$(vm_log)" 2>&1
	for ((r = 1; r <= RB_RUNS; r++)); do
		rb_target_perftest "$r"
		for mode in "${RB_MODES[@]}"; do
			rb_start "$mode" ||
				tap_not_ok "round $r: rpmemd ($mode) did not start"
			vm_signal "up-$r-$mode"
			vm_wait "done-$r-$mode" 1200 ||
				tap_not_ok "round $r: initiator did not finish $mode"
			rb_stop || tap_not_ok "round $r: rpmemd ($mode) stopped with an error"
		done
	done
	tap_ok "rpmemd served $RB_RUNS rounds of GPSPM and APM benchmarks"
	daxio -z -o "$DEVDAX" -l 4096 >>"$(vm_log)" 2>&1
	rm -rf "$RB_TMP"
}

# --- initiator ------------------------------------------------------------

rb_median()
{
	sort -g | awk '{ a[NR] = $1 } END { if (NR) print a[int((NR + 1) / 2)] }'
}

# rb_x2 V -- twice V (the strict latency baseline)
rb_x2()
{
	awk -v a="$1" 'BEGIN { if (a != "") print 2 * a }'
}

# rb_base V RTT1 -- V + 2 x RTT1: a one-way write plus one round trip
rb_base()
{
	awk -v a="$1" -v b="$2" \
		'BEGIN { if (a != "" && b != "") print a + 2 * b }'
}

rb_ratio()
{
	awk -v a="$1" -v b="$2" \
		'BEGIN { if (a != "" && b > 0) printf "%.2f", a / b; else print "n/a" }'
}

# rb_val KEY VALUE -- one measurement of a round
rb_val()
{
	echo "$2" >>"$RB_W/$1"
	echo "$1=$2" >>"$RESULTS/rdma-bench.runs"
}

# rb_med KEY -- the median of a measurement over the rounds
rb_med()
{
	rb_median <"$RB_W/$1" 2>/dev/null
}

# rb_perftest ROUND -- the perftest clients of one round
rb_perftest()
{
	local run name tool size iters port out row f

	for run in "${PERFTEST_RUNS[@]}"; do
		read -r name tool size iters port <<<"$run"
		out=$RESULTS/rdma-bench.pt.$1.$name.client.txt
		if ! vm_wait "pt-$1-$name"; then
			tap_not_ok "round $1: $tool -s $size: no server"
			continue
		fi
		# shellcheck disable=SC2046
		if ! vm_retry 5 1 timeout "$PERFTEST_TIMEOUT" "$tool" \
			$(perftest_args "$size" "$iters" "$port") "$TARGET_IP" \
			>"$out" 2>&1 ||
		   ! row=$(perftest_row "$out" "$size" "$iters"); then
			tap_not_ok "round $1: $tool -s $size (see ${out##*/})"
			continue
		fi
		read -r -a f <<<"$row"
		case "$tool" in
		ib_write_lat) rb_val "pt_$name" "${f[4]}" ;; # typical
		ib_write_bw) rb_val "pt_$name" "${f[3]}" ;;  # average
		esac
	done
}

# rb_bench ROUND MODE IO -- one rpmemctl bench run
rb_bench()
{
	local out=$RESULTS/rdma-bench.$1.$2.$3.json

	if timeout 600 "$RB_CTL" bench --json --transport rdma -i "$3" \
		-c "$RB_COUNT" -s "${RB_MIB}M" "$TARGET_IP/dd/bench" \
		>"$out" 2>>"$(vm_log)" &&
	   jq -e '.transport == "rdma"' "$out" >/dev/null; then
		rb_val "$2_lat_$3" "$(jq -r .lat_median_us "$out")"
		rb_val "$2_bw" "$(jq -r .bw_mib_s "$out")"
	else
		tap_not_ok "round $1: bench $2 -i $3 (see ${out##*/})"
	fi
}

# rb_mirror ROUND MODE -- one mirror of a fresh RB_MIB file
rb_mirror()
{
	local out=$RESULTS/rdma-bench.$1.$2.mirror.json

	head -c $((RB_MIB << 20)) /dev/urandom >"$RB_W/m.bin"
	if timeout 600 "$RB_CTL" mirror --json --transport rdma \
		"$RB_W/m.bin" "$TARGET_IP/dd/m" >"$out" 2>>"$(vm_log)" &&
	   jq -e '.transport == "rdma"' "$out" >/dev/null; then
		rb_val "$2_mirror" "$(jq -r .bw_mib_s "$out")"
	else
		tap_not_ok "round $1: mirror $2 (see ${out##*/})"
	fi
	"$RB_CTL" -q remove "$TARGET_IP/dd/m" 2>>"$(vm_log)"
}

# rb_part NAME -- NAME is in SUITE_BENCH_PARTS
rb_part()
{
	[[ " $RB_PARTS " == *" $1 "* ]]
}

# rb_pobj OUT KEY N ENV... -- pobj_app loop:N persist:N on the local pool
# with ENV; ns per operation as KEY_tx and KEY_persist, in us
rb_pobj()
{
	local out=$1 key=$2 n=$3 tx pe

	shift 3
	if env PMEM_IS_PMEM_FORCE=1 "$@" "$RB_APP" "$RB_W/pl.obj" "loop:$n" \
		"persist:$n" >"$out" 2>&1; then
		tx=$(awk '$1 == "loop" {printf "%.1f", $3 / 1000}' "$out")
		pe=$(awk '$1 == "persist" {printf "%.1f", $3 / 1000}' "$out")
	fi
	if [ -n "$tx" ] && [ -n "$pe" ]; then
		rb_val "${key}_tx" "$tx"
		rb_val "${key}_persist" "$pe"
	else
		tap_not_ok "pobj_app $key (see ${out##*/})"
	fi
}

# rb_preload ROUND MODE -- small transactions and persists replicated by
# the preload library over rdma (it fails rather than use tcp); the local
# figures once a round
rb_preload()
{
	local out=$RESULTS/rdma-bench.$1.$2.preload

	[ -e "$RB_W/pl.obj" ] || "$RB_APP" "$RB_W/pl.obj" >/dev/null
	[ "$2" = "${RB_MODES[0]}" ] &&
		rb_pobj "$out.local.txt" local 20000
	rb_pobj "$out.txt" "$2_pl" "$RB_PL_N" LD_PRELOAD="$RPMEM_BUILD/librpmem_preload.so" \
		RPMEM_REPLICATE="$RB_W/pl.obj=$TARGET_IP/dd/pl" \
		RPMEM_REPLICATE_TRANSPORT=rdma
}

# rb_mt OUT KEY T N ENV... -- pobj_app mt:T:N (T threads of N small
# transactions, each on a record of its own) with ENV: KEY_tps, KEY_p50,
# KEY_p99, KEY_p999 (latencies in us)
rb_mt()
{
	local out=$1 key=$2 t=$3 n=$4 line

	shift 4
	env PMEM_IS_PMEM_FORCE=1 "$@" "$RB_APP" "$RB_W/mt.obj" "mt:$t:$n" \
		>"$out" 2>&1
	line=$(awk '$1 == "mt" {printf "%d %.1f %.1f %.1f", $4, $5 / 1000,
		$6 / 1000, $7 / 1000}' "$out")
	rb_mt_vals "$key" "$line" || tap_not_ok "pobj_app mt $key (see ${out##*/})"
}

# rb_mt_vals KEY "TPS P50 P99 P999" -- the four values, 1 if missing
rb_mt_vals()
{
	local tps p50 p99 p999
	read -r tps p50 p99 p999 <<<"$2"
	[ -n "$p999" ] || return 1
	rb_val "${1}_tps" "$tps"
	rb_val "${1}_p50" "$p50"
	rb_val "${1}_p99" "$p99"
	rb_val "${1}_p999" "$p999"
}

# rb_threads ROUND MODE -- 1 and RB_THREADS threads: unreplicated (once a
# round), the preload library per commit and per drain, and the replica
# API's 64-byte persists (tests/replica_lat), over rdma
rb_threads()
{
	local out=$RESULTS/rdma-bench.$1.$2.threads t n pl lat
	local rep=$RB_W/mt.obj=$TARGET_IP/dd/mt

	pl=$RPMEM_BUILD/librpmem_preload.so
	lat=$RPMEM_BUILD/tests/replica_lat
	[ -e "$RB_W/mt.obj" ] || "$RB_APP" "$RB_W/mt.obj" >/dev/null
	for t in 1 "$RB_THREADS"; do
		n=$((RB_PL_N / t))
		[ "$2" = "${RB_MODES[0]}" ] &&
			rb_mt "$out.none.$t" "none_$t" "$t" $((n * 20))
		rb_mt "$out.commit.$t" "${2}_commit_$t" "$t" "$n" \
			LD_PRELOAD="$pl" RPMEM_REPLICATE="$rep" \
			RPMEM_REPLICATE_TRANSPORT=rdma
		rb_mt "$out.every.$t" "${2}_every_$t" "$t" "$n" \
			LD_PRELOAD="$pl" RPMEM_REPLICATE="$rep" \
			RPMEM_REPLICATE_TRANSPORT=rdma RPMEM_REPLICATE_DRAIN=every
		[ -e "$RB_W/lat.obj" ] || truncate -s 16M "$RB_W/lat.obj"
		REPLICA_LAT_TRANSPORT=rdma "$lat" -t "$t" "$RB_W/lat.obj" "$n" 64 1 \
			"$TARGET_IP/dd/lat" >"$out.replica.$t" 2>&1
		rb_mt_vals "${2}_replica_$t" "$(sed 's/[a-z0-9_]*=//g' \
			"$out.replica.$t" | awk 'NF == 4 {printf "%d %s %s %s",
			$4, $1, $2, $3}')" ||
			tap_not_ok "replica_lat $2 $t (see ${out##*/}.replica.$t)"
	done
}

# rb_report_threads -- the threads table, after the preload one
rb_report_threads()
{
	local t key md=$RESULTS/rdma-bench.md

	rb_part threads || return 0
	{
		echo
		echo "Threads (pobj_app mt:T:N, PMEM_IS_PMEM_FORCE=1, over rdma; replica: replica_lat 64-byte persists; $RB_PL_N operations a run over all threads): tx/s over all threads, latency per operation in us, medians of the rounds."
		echo
		echo "| mode | threads | tx/s | p50 | p99 | p99.9 | p99/p50 |"
		echo "|---|---|---|---|---|---|---|"
	} >>"$md"
	for key in none "${RB_MODES[@]/%/_commit}" "${RB_MODES[@]/%/_every}" \
		"${RB_MODES[@]/%/_replica}"; do
		for t in 1 "$RB_THREADS"; do
			local tps p50 p99 p999
			tps=$(rb_med "${key}_${t}_tps")
			p50=$(rb_med "${key}_${t}_p50")
			p99=$(rb_med "${key}_${t}_p99")
			p999=$(rb_med "${key}_${t}_p999")
			echo "${key}_${t}_tps=$tps" >>"$RESULTS/rdma-bench.env"
			echo "| $key | $t | $tps | $p50 | $p99 | $p999 | $(rb_ratio "$p99" "$p50") |" >>"$md"
		done
	done
}

# rb_sub A B -- A - B
rb_sub()
{
	awk -v a="$1" -v b="$2" \
		'BEGIN { if (a != "" && b != "") printf "%.1f", a - b }'
}

# rb_report_preload -- the preload table, after the rpmemctl one
rb_report_preload()
{
	local mode tx pe ltx lpe rtt md=$RESULTS/rdma-bench.md

	rb_part preload || return 0
	ltx=$(rb_med local_tx)
	lpe=$(rb_med local_persist)
	rtt=$(rb_x2 "$(rb_med pt_lat_256)")
	{
		echo
		echo "The preload library (pobj_app, PMEM_IS_PMEM_FORCE=1, RPMEM_REPLICATE_TRANSPORT=rdma, $RB_PL_N operations a run); without it: tx $ltx us, persist $lpe us; ping-pong round trip 2 x ib_write_lat -s 256 = $rtt us."
		echo
		echo "| flush | small tx (us) | (tx - local) / RTT | persist (us) | (persist - local) / RTT |"
		echo "|---|---|---|---|---|"
	} >>"$md"
	for mode in "${RB_MODES[@]}"; do
		tx=$(rb_med "${mode}_pl_tx")
		pe=$(rb_med "${mode}_pl_persist")
		{
			echo "${mode}_preload_tx_median_us=$tx"
			echo "${mode}_preload_persist_median_us=$pe"
			echo "${mode}_preload_tx_rtt_ratio=$(rb_ratio "$(rb_sub "$tx" "$ltx")" "$rtt")"
			echo "${mode}_preload_persist_rtt_ratio=$(rb_ratio "$(rb_sub "$pe" "$lpe")" "$rtt")"
		} >>"$RESULTS/rdma-bench.env"
		echo "| ${mode^^} | $tx | $(rb_ratio "$(rb_sub "$tx" "$ltx")" "$rtt") | $pe | $(rb_ratio "$(rb_sub "$pe" "$lpe")" "$rtt") |" >>"$md"
	done
	echo "local_tx_median_us=$ltx" >>"$RESULTS/rdma-bench.env"
	echo "local_persist_median_us=$lpe" >>"$RESULTS/rdma-bench.env"
}

# rb_report_ctl -- the rpmemctl table, if its parts ran (rb_report's
# perftest medians p4, p256 and pbw in scope)
rb_report_ctl()
{
	local mode l4 l256 bw mi md=$RESULTS/rdma-bench.md

	rb_part bench || rb_part mirror || return 0
	{
		echo
		echo "| flush | 4 KiB write+flush (us) | / (lat 4 KiB + 2 x lat 256 B) | strict: / (2 x lat 4 KiB) | 256 B write+flush (us) | / (3 x lat 256 B) | strict: / (2 x lat 256 B) | bench 64 MiB, 1 MiB writes (MiB/s) | / ib_write_bw | mirror 64 MiB (MiB/s) | / ib_write_bw |"
		echo "|---|---|---|---|---|---|---|---|---|---|---|"
	} >>"$md"
	for mode in "${RB_MODES[@]}"; do
		l4=$(rb_med "${mode}_lat_4096")
		l256=$(rb_med "${mode}_lat_256")
		bw=$(rb_med "${mode}_bw")
		mi=$(rb_med "${mode}_mirror")
		{
			echo "${mode}_lat_4096_median_us=$l4"
			echo "${mode}_lat_256_median_us=$l256"
			echo "${mode}_bench_bw_MiBps=$bw"
			echo "${mode}_mirror_MiBps=$mi"
			echo "${mode}_lat_4096_ratio=$(rb_ratio "$l4" "$(rb_base "$p4" "$p256")")"
			echo "${mode}_lat_256_ratio=$(rb_ratio "$l256" "$(rb_base "$p256" "$p256")")"
			echo "${mode}_lat_4096_strict_ratio=$(rb_ratio "$l4" "$(rb_x2 "$p4")")"
			echo "${mode}_lat_256_strict_ratio=$(rb_ratio "$l256" "$(rb_x2 "$p256")")"
			echo "${mode}_bench_bw_ratio=$(rb_ratio "$bw" "$pbw")"
			echo "${mode}_mirror_bw_ratio=$(rb_ratio "$mi" "$pbw")"
		} >>"$RESULTS/rdma-bench.env"
		echo "| ${mode^^} | $l4 | $(rb_ratio "$l4" "$(rb_base "$p4" "$p256")") | $(rb_ratio "$l4" "$(rb_x2 "$p4")") | $l256 | $(rb_ratio "$l256" "$(rb_base "$p256" "$p256")") | $(rb_ratio "$l256" "$(rb_x2 "$p256")") | $bw | $(rb_ratio "$bw" "$pbw") | $mi | $(rb_ratio "$mi" "$pbw") |" >>"$md"
	done
}

# rb_report -- medians, ratios, the tables
rb_report()
{
	local p4 p256 pbw md=$RESULTS/rdma-bench.md

	p4=$(rb_med pt_lat_4096)
	p256=$(rb_med pt_lat_256)
	pbw=$(rb_med pt_bw_1m)
	{
		echo "perftest_lat_4096_typical_us=$p4"
		echo "perftest_lat_256_typical_us=$p256"
		echo "perftest_bw_1m_avg_MiBps=$pbw"
	} >>"$RESULTS/rdma-bench.env"
	echo "Medians of $RB_RUNS rounds; perftest in the same rounds: ib_write_lat -s 4096 typical $p4 us, -s 256 typical $p256 us; ib_write_bw -s 1048576 average $pbw MiB/s." >"$md"
	rb_report_ctl
	rb_report_preload
	rb_report_threads
	rb_diag_env
}

# rb_diag_env -- every figure as a TAP comment
rb_diag_env()
{
	local l
	while IFS= read -r l; do
		tap_diag "$l"
	done <"$RESULTS/rdma-bench.env"
}

initiator_main()
{
	local mode r

	RB_W=$(mktemp -d /tmp/rdma-bench.XXXXXX)
	: >"$RESULTS/rdma-bench.env"
	: >"$RESULTS/rdma-bench.runs"
	for ((r = 1; r <= RB_RUNS; r++)); do
		rb_perftest "$r"
		for mode in "${RB_MODES[@]}"; do
			if ! vm_wait "up-$r-$mode" 600; then
				tap_not_ok "round $r: target did not start rpmemd ($mode)"
				continue
			fi
			vm_retry 50 0.2 "$RB_CTL" -q list "$TARGET_IP" \
				>/dev/null 2>&1
			if rb_part bench; then
				rb_bench "$r" "$mode" 4096
				rb_bench "$r" "$mode" 256
			fi
			rb_part mirror && rb_mirror "$r" "$mode"
			rb_part preload && rb_preload "$r" "$mode"
			rb_part threads && rb_threads "$r" "$mode"
			vm_signal "done-$r-$mode"
		done
	done
	rb_report
	tap_ok "$RB_RUNS rounds of perftest and, over rdma, $RB_PARTS"
	rm -rf "$RB_W"
}
