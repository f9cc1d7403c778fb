# shellcheck shell=bash
# SPDX-License-Identifier: BSD-3-Clause
# faults.sh -- RLIMIT_MEMLOCK on either side and a silent partition, over Soft-RoCE
#
# Target: build/rpmemd on 127.0.0.1 and $TARGET_IP (RDMA listener on
# 7637) with a devdax region "dd" on $DEVDAX. The guests run as root with
# CAP_IPC_LOCK, which lets ib_umem_get pin past RLIMIT_MEMLOCK, so a
# limited process is started as
#   setpriv --inh-caps=-ipc_lock --bounding-set=-ipc_lock \
#           prlimit --memlock=N:N CMD
# (the capability leaves the bounding set, so exec cannot give it back).
#
# 1. rpmemd under a 64 KiB limit: an RDMA open fails with exit 4 and the
#    locked-memory advice (LimitMEMLOCK) on the client and in the log;
#    the daemon lives on and serves the same pool over tcp; --transport
#    auto falls back to tcp (rpmemd logs it) and the mirror verifies.
# 2. rpmemctl under a limit, rpmemd unlimited again. 64 KiB: the 4 MiB
#    staging ring cannot be registered; --transport rdma fails at once
#    with exit 4 (rdma unusable here), the error naming this process's
#    limit and LimitMEMLOCK, and the hint --transport tcp; -v adds the
#    library's line; --transport auto falls back to tcp and verifies. 6 MiB: the ring fits, the 8 MiB file
#    mapping does not: the mirror runs over rdma through the ring and
#    verifies.
# 3. A silent partition during a 128 MiB RDMA mirror: the target drops
#    every packet on eth0 both ways with tc (clsact + matchall drop; the
#    link stays up, nothing is closed). The client must exit 3 with
#    "no completion ... within 30 s" within 75 s (measured; stderr lines are
#    stamped; a client still running at 135 s gets its stacks dumped into
#    the log and is killed). With the link still cut, rpmemd must drop
#    the vanished client by itself (keepalive, TCP_USER_TIMEOUT) and
#    free the pool within 180 s of the cut (measured). After the link is
#    restored rpmemd is the same live process, the pool is syncing
#    (generation 0) without a writer, and a new RDMA mirror brings it to
#    consistent (generation 1) and verifies.
#
# Needs: make; setpriv, prlimit and tc in the guests (the host's /).

FT_RPMEMD=$RPMEM_BUILD/rpmemd
FT_CTL=$RPMEM_BUILD/rpmemctl
# its rpmemd allows plaintext from the other guest: so must rpmemctl
vm_plaintext_targets
FT_SYNC=$RESULTS/.sync
FT_MIB=$((1024 * 1024))
FT_SMALL=65536
FT_RING_OK=$((6 * FT_MIB))
FT_BOUND=75
FT_FREE_BOUND=180
FT_CUT_T0=
FT_PID=

ft_log()
{
	echo "$RESULTS/$VM_SUITE.rpmemd.log"
}

# ft_is DESC GOT WANT -- ok if GOT equals WANT
ft_is()
{
	if [ "$2" = "$3" ]; then
		tap_ok "$1"
	else
		echo "### $1: got '$2', expected '$3'" >>"$(vm_log)"
		tap_not_ok "$1 (got '$2', expected '$3')"
	fi
}

# ft_limited BYTES CMD... -- CMD without CAP_IPC_LOCK, RLIMIT_MEMLOCK BYTES,
# for at most 120 s
ft_limited()
{
	local lim=$1

	shift
	timeout 120 setpriv --inh-caps=-ipc_lock --bounding-set=-ipc_lock -- \
		prlimit --memlock="$lim:$lim" -- "$@"
}

# ft_now -- seconds since the epoch, to the millisecond
ft_now()
{
	echo "${EPOCHREALTIME%???}"
}

# ft_since T0 -- seconds since T0 (ft_now), one decimal
ft_since()
{
	awk -v a="$1" -v b="$(ft_now)" 'BEGIN { printf "%.1f", b - a }'
}

# --- target ---------------------------------------------------------------

# ft_start [LIMIT] -- start rpmemd (limited to LIMIT bytes of locked
# memory, without CAP_IPC_LOCK), wait until it answers
ft_start()
{
	echo "=== rpmemd ${1:+(memlock $1)} ($(date +%T))" >>"$(ft_log)"
	if [ -n "${1:-}" ]; then
		# not through ft_limited: $! must be rpmemd (setpriv and
		# prlimit exec it), not a subshell running a function
		setpriv --inh-caps=-ipc_lock --bounding-set=-ipc_lock -- \
			prlimit --memlock="$1:$1" -- \
			"$FT_RPMEMD" -c "$FT_TMP/main.conf" >>"$(ft_log)" 2>&1 &
	else
		"$FT_RPMEMD" -c "$FT_TMP/main.conf" >>"$(ft_log)" 2>&1 &
	fi
	FT_PID=$!
	vm_retry 100 0.1 "$FT_CTL" -q list 127.0.0.1 >/dev/null 2>&1
}

# ft_stop -- SIGTERM rpmemd and wait; its exit status
ft_stop()
{
	local rc=0

	[ -n "$FT_PID" ] || return 0
	kill -TERM "$FT_PID" 2>/dev/null
	wait "$FT_PID" || rc=$?
	FT_PID=
	return "$rc"
}

# ft_caps_limited PID LIMIT -- PID lacks CAP_IPC_LOCK, its limit is LIMIT
ft_caps_limited()
{
	local eff lim

	eff=$(awk '$1 == "CapEff:" { print $2 }' "/proc/$1/status")
	lim=$(awk '/^Max locked memory/ { print $4 " " $5 }' \
		"/proc/$1/limits")
	echo "pid $1: CapEff $eff, memlock $lim"
	# CAP_IPC_LOCK is bit 14
	[ $((0x$eff & (1 << 14))) -eq 0 ] && [ "$lim" = "$2 $2" ]
}

# ft_cut_on -- drop everything on eth0, both ways; the link stays up
ft_cut_on()
{
	tc qdisc add dev eth0 clsact &&
		tc filter add dev eth0 ingress matchall action drop &&
		tc filter add dev eth0 egress matchall action drop
}

ft_cut_off()
{
	tc qdisc del dev eth0 clsact
}

# ft_no_ping -- true if the peer does not answer ICMP echo
ft_no_ping()
{
	! vm_ping -c 2 -W 1 "$PEER_IP"
}

# ft_req_restart -- rpmemd again, without the limit
ft_req_restart()
{
	local rc=0

	ft_stop || rc=$?
	ft_is "the limited rpmemd stops on SIGTERM with status 0" "$rc" 0
	if ft_start; then
		tap_ok "rpmemd restarts without the limit"
	else
		tap_not_ok "rpmemd restarts without the limit"
	fi
	vm_signal rep-restart
}

# ft_part_mirroring -- an RDMA session writes dd/part, syncing: the
# session's region, pool, transport and access in $st
ft_part_mirroring()
{
	st=$("$FT_CTL" status --json 127.0.0.1 2>/dev/null |
	     jq -c '.sessions[] | select(.region == "dd" and
					 .pool == "part" and
					 .transport == "rdma")
		    | {region, pool, transport, access}' 2>/dev/null)
	[ -n "$st" ] &&
		[ "$("$FT_CTL" list --json 127.0.0.1/dd/part 2>/dev/null |
		     jq -r '.pools[0].state')" = syncing ]
}

# ft_req_cut -- once the RDMA mirror into dd/part is under way, cut eth0
ft_req_cut()
{
	local st=''

	vm_wait_for ft_part_mirroring 2>>"$(vm_log)" || st=''
	if [ -z "$st" ]; then
		vm_signal rep-cut-failed
		tap_not_ok "did not see the RDMA mirror into dd/part in progress"
		return
	fi
	# let RDMA writes flow for a moment: the cut lands mid-transfer
	# (not a wait: a point part way through the transfer)
	sleep 1
	FT_CUT_T0=$(ft_now)
	if ft_cut_on >>"$(vm_log)" 2>&1; then
		vm_signal rep-cut
		tap_ok "eth0 silently partitioned during the RDMA mirror ($st)"
	else
		vm_signal rep-cut-failed
		tap_not_ok "tc could not drop the traffic on eth0"
		return
	fi
	tap_check "nothing gets through the partition (ping fails)" \
		ft_no_ping
	"$FT_CTL" status --json 127.0.0.1 >>"$(vm_log)" 2>&1
	echo "### cut at $FT_CUT_T0" >>"$(vm_log)"
}

# ft_part_free -- rpmemd has no session on dd/part and no writer of it
ft_part_free()
{
	"$FT_CTL" status --json 127.0.0.1 2>/dev/null |
		jq -e '([.sessions[] | select(.region == "dd" and
					      .pool == "part")] | length == 0)
		       and ([.pools[] | select(.name == "part" and
						 .writer == "")] | length == 1)' \
		>/dev/null
}

# ft_req_heal -- with the link still cut, rpmemd must drop the vanished
# client by itself (keepalive, TCP_USER_TIMEOUT) and free the pool; then
# restore eth0; rpmemd must be the same, live process
ft_req_heal()
{
	local free=1 left

	# until FT_FREE_BOUND seconds after the cut
	left=$((FT_FREE_BOUND - $(ft_since "$FT_CUT_T0" | cut -d. -f1)))
	[ "$left" -gt 0 ] || left=0
	vm_poll $((left * 2 + 1)) 0.5 "" ft_part_free 2>>"$(vm_log)" ||
		free=0
	{
		echo "### $(ft_since "$FT_CUT_T0") s after the cut, still cut"
		ss -tnoi state all "( sport = :7636 )"
		"$FT_CTL" status --json 127.0.0.1
	} >>"$(vm_log)" 2>&1
	if [ "$free" -eq 1 ]; then
		tap_ok "with the link still cut, rpmemd dropped the vanished client and freed dd/part $(ft_since "$FT_CUT_T0") s after the cut"
	else
		tap_not_ok "rpmemd still holds dd/part for the vanished client $FT_FREE_BOUND s after the cut"
	fi
	tap_check "the partition is lifted" ft_cut_off
	tap_check "rpmemd lived through the partition (pid $FT_PID)" \
		kill -0 "$FT_PID"
	vm_signal rep-heal
}

# ft_serve -- act on the initiator's requests until it is done
ft_serve()
{
	vm_serve ft_requests
}

# ft_requests -- act on the requests the initiator made since the last look
ft_requests()
{
	local req

	for req in restart cut heal; do
		if [ -e "$FT_SYNC/$VM_SUITE.initiator.req-$req" ]; then
			rm -f "$FT_SYNC/$VM_SUITE.initiator.req-$req"
			"ft_req_$req"
		fi
	done
}

target_main()
{
	local t

	FT_TMP=$(mktemp -d /tmp/faults.XXXXXX)
	for t in "$FT_RPMEMD" "$FT_CTL" setpriv prlimit tc; do
		if ! command -v "$t" >/dev/null; then
			tap_not_ok "$t missing"
			vm_signal up
			return
		fi
	done
	tap_check "blank the header block of $DEVDAX with daxio" \
		daxio -z -o "$DEVDAX" -l 4096
	cat >"$FT_TMP/main.conf" <<EOF
listen = ["127.0.0.1", "$TARGET_IP"];
allow_insecure_remote = true;
regions = ( { name = "dd"; type = "devdax"; path = "$DEVDAX"; } );
EOF
	if ft_start "$FT_SMALL"; then
		tap_ok "rpmemd starts without CAP_IPC_LOCK, RLIMIT_MEMLOCK $FT_SMALL"
	else
		tap_not_ok "rpmemd starts without CAP_IPC_LOCK, RLIMIT_MEMLOCK $FT_SMALL"
	fi
	tap_check "rpmemd runs without CAP_IPC_LOCK under the $FT_SMALL-byte limit" \
		ft_caps_limited "$FT_PID" "$FT_SMALL"
	tap_check "the limited rpmemd still listens for RDMA on $TARGET_IP:7637" \
		grep -q "rdma: listening on $TARGET_IP:7637" "$(ft_log)"
	vm_signal up
	ft_serve
}

target_post()
{
	local rc=0

	[ -n "$FT_TMP" ] || return
	ft_cut_off 2>/dev/null
	ft_stop || rc=$?
	ft_is "rpmemd stops on SIGTERM with status 0" "$rc" 0
	rm -rf "$FT_TMP"
	daxio -z -o "$DEVDAX" -l 4096 >>"$(vm_log)" 2>&1
}

# --- initiator ------------------------------------------------------------

ctl()
{
	"$FT_CTL" "$@"
}

# ft_run DESC CMD... -- run CMD; FT_RC, FT_OUT (stdout+stderr) for checks
ft_run()
{
	local desc=$1

	shift
	FT_RC=0
	FT_OUT=$("$@" 2>&1) || FT_RC=$?
	{
		echo "### $desc: $*"
		echo "$FT_OUT"
		echo "### exit $FT_RC"
	} >>"$(vm_log)"
}

# ft_json DESC FILTER CMD... -- ok if CMD exits 0 and its JSON fits FILTER
ft_json()
{
	local desc=$1 filter=$2 out rc=0

	shift 2
	out=$("$@" 2>>"$(vm_log)") || rc=$?
	echo "### $desc: $* | jq -e '$filter' (exit $rc)" >>"$(vm_log)"
	echo "$out" >>"$(vm_log)"
	if [ "$rc" -eq 0 ] && jq -e "$filter" <<<"$out" >/dev/null 2>&1; then
		tap_ok "$desc"
	else
		tap_not_ok "$desc (exit $rc, see $VM_SUITE.$VM_ROLE.log)"
	fi
}

# ft_has DESC TEXT -- ok if FT_OUT contains TEXT
ft_has()
{
	if [[ "$FT_OUT" == *"$2"* ]]; then
		tap_ok "$1"
	else
		tap_not_ok "$1 (no '$2' in: $(head -c 300 <<<"$FT_OUT"))"
	fi
}

# ft_like DESC ERE -- ok if a line of FT_OUT matches the extended regex ERE
ft_like()
{
	if grep -Eq -- "$2" <<<"$FT_OUT"; then
		tap_ok "$1"
	else
		tap_not_ok "$1 (no match for '$2', see $VM_SUITE.$VM_ROLE.log)"
	fi
}

# ft_request NAME [SECS] -- ask the target to act, wait for its answer
ft_request()
{
	vm_signal "req-$1"
	vm_wait "rep-$1" "${2:-300}"
}

# ft_memlock_target -- part 1: rpmemd under a 64 KiB limit
ft_memlock_target()
{
	ft_run "rdma open of a pool of the limited rpmemd" \
		ctl mirror --transport rdma m1.bin "$T/dd/ml"
	ft_is "mirror --transport rdma to the limited rpmemd: exit 4 (refused)" \
		"$FT_RC" 4
	ft_has "the client's error names the target's locked-memory limit" \
		"the target's locked-memory limit is $FT_SMALL bytes"
	ft_has "the client's error says how to fix it (LimitMEMLOCK)" \
		"LimitMEMLOCK=infinity in rpmemd.service"
	tap_check "rpmemd logs the failed registration with the advice" \
		grep -E "locked-memory limit is $FT_SMALL bytes.*LimitMEMLOCK" \
		"$RESULTS/$VM_SUITE.rpmemd.log"
	ft_json "the limited rpmemd lives on and still offers rdma" \
		'.rdma == true' ctl status --json "$T"
	ft_json "the next request: the same pool mirrored over tcp" \
		'.transport == "tcp" and .identical' \
		ctl mirror --json --transport tcp m1.bin "$T/dd/ml"
	tap_check "verify --transport tcp: identical" \
		ctl -q verify --transport tcp m1.bin "$T/dd/ml"
	ft_json "--transport auto to the limited rpmemd falls back to tcp" \
		'.transport == "tcp" and .identical' \
		ctl mirror --json --transport auto m2.bin "$T/dd/ml-auto"
	tap_check "rpmemd logs the auto fallback with the reason" \
		grep -E "pool dd/ml-auto: .*locked-memory limit.*; using tcp" \
		"$RESULTS/$VM_SUITE.rpmemd.log"
	tap_check "verify --transport auto: identical" \
		ctl -q verify --transport auto m2.bin "$T/dd/ml-auto"
}

# ft_memlock_initiator -- part 2: rpmemctl under a limit
ft_memlock_initiator()
{
	ft_run "rpmemctl under a 64 KiB limit, rdma" \
		ft_limited "$FT_SMALL" "$FT_CTL" mirror --transport rdma \
		m3.bin "$T/dd/mi"
	tap_diag "rpmemctl with 64 KiB of locked memory, --transport rdma: exit $FT_RC: $(tail -n 1 <<<"$FT_OUT")"
	if [ "$FT_RC" -eq 4 ]; then
		tap_ok "rpmemctl under a 64 KiB limit, rdma: fails at once (exit 4: rdma unusable), no hang"
	else
		tap_not_ok "rpmemctl under a 64 KiB limit, rdma: exit $FT_RC, expected 4"
	fi
	ft_has "its error says the rdma data plane could not be set up" \
		"cannot connect the rdma data plane to $T"
	ft_has "without -v: the error names this process's locked-memory limit" \
		"this process's locked-memory limit is $FT_SMALL bytes"
	ft_has "without -v: the advice (LimitMEMLOCK) and the way out (--transport tcp)" \
		"LimitMEMLOCK=infinity in the systemd unit that runs it"
	ft_has "without -v: the hint to use tcp" "try --transport tcp"
	ft_run "rpmemctl -v under a 64 KiB limit, rdma" \
		ft_limited "$FT_SMALL" "$FT_CTL" -v mirror --transport rdma \
		m3.bin "$T/dd/mi"
	# the first registration to fail names its size: the GPSPM batch
	# buffers (132 KiB) come before the 4 MiB staging ring
	ft_like "with -v: registering the initiator's RDMA memory failed, its size named" \
		"cannot register [0-9]+ (KiB|MiB) for RDMA"
	ft_has "with -v: the library line names the initiator's locked-memory limit" \
		"this process's locked-memory limit is $FT_SMALL bytes: raise RLIMIT_MEMLOCK"
	ft_has "with -v: the advice to raise RLIMIT_MEMLOCK" \
		"raise RLIMIT_MEMLOCK"
	ft_json "rpmemctl under a 64 KiB limit, --transport auto: falls back to tcp" \
		'.transport == "tcp" and .identical' \
		ft_limited "$FT_SMALL" "$FT_CTL" mirror --json \
		--transport auto m3.bin "$T/dd/mi"
	tap_check "verify --transport rdma (unlimited): identical" \
		ctl -q verify --transport rdma m3.bin "$T/dd/mi"
	ft_run "rpmemctl under a 6 MiB limit, rdma" \
		ft_limited "$FT_RING_OK" "$FT_CTL" -vv mirror --json \
		--transport rdma m4.bin "$T/dd/ms"
	ft_is "rpmemctl under a 6 MiB limit: the rdma mirror succeeds" \
		"$FT_RC" 0
	if grep '^{' <<<"$FT_OUT" |
	   jq -e '.transport == "rdma" and .identical' >/dev/null 2>&1; then
		tap_ok "it runs over rdma and reports identical"
	else
		tap_not_ok "it runs over rdma and reports identical"
	fi
	ft_like "the 8 MiB mapping cannot be registered (ENOMEM); it copies through the staging ring" \
		'cannot register the local mapping \(.*Cannot allocate memory.*\); copying through the staging buffer'
	tap_check "verify --transport rdma: identical" \
		ctl -q verify --transport rdma m4.bin "$T/dd/ms"
}

# ft_stamp T0 -- prefix each line with the seconds since T0
ft_stamp()
{
	local line

	while IFS= read -r line; do
		echo "[$(ft_since "$1")] $line"
	done
}

# ft_cut_answered -- the target said it cut eth0, or that it could not
ft_cut_answered()
{
	[ -e "$FT_SYNC/$VM_SUITE.target.rep-cut" ] ||
		[ -e "$FT_SYNC/$VM_SUITE.target.rep-cut-failed" ]
}

# ft_exited PID -- the process PID is gone
ft_exited()
{
	! kill -0 "$1" 2>/dev/null
}

# ft_hang_dump PID -- where a hung rpmemctl waits (kernel stacks, gdb)
ft_hang_dump()
{
	local t

	echo "### rpmemctl $1 still running: stacks"
	for t in /proc/"$1"/task/*; do
		echo "--- $t: $(cat "$t/comm" 2>/dev/null) $(cat "$t/wchan" 2>/dev/null)"
		cat "$t/stack" 2>/dev/null
	done
	gdb -q -batch -p "$1" -ex 'thread apply all bt' 2>&1
	ss -tanp 2>&1
}

# ft_partition -- part 3: a silent partition during an RDMA mirror
ft_partition()
{
	local pid cpid rc t_start t0 tcut dt tb

	head -c $((128 * FT_MIB)) /dev/urandom >big.bin
	if [ "$(stat -c %s big.bin)" -ne $((128 * FT_MIB)) ]; then
		tap_not_ok "no room for the 128 MiB file in $PWD: $(df -h . | tail -n 1)"
		return
	fi
	t_start=$(ft_now)
	{
		"$FT_CTL" -v mirror --transport rdma big.bin "$T/dd/part" \
			2>&1 >/dev/null &
		echo "$!" >big.pid
		wait "$!"
		echo "exit $?"
	} | ft_stamp "$t_start" >big.err &
	pid=$!
	vm_signal req-cut
	vm_wait_for -t 300 ft_cut_answered 2>>"$(vm_log)" || true
	t0=$(ft_now)
	cpid=$(cat big.pid)
	if [ ! -e "$FT_SYNC/$VM_SUITE.target.rep-cut" ]; then
		tap_not_ok "the target did not cut the link mid-mirror"
		wait "$pid"
		return
	fi
	tcut=$(ft_since "$t_start")
	# a hang is what this looks for: dump where, then end it
	if ! vm_wait_for -t $((FT_BOUND + 60)) ft_exited "$cpid" \
	     2>>"$(vm_log)"; then
		ft_hang_dump "$cpid" >>"$(vm_log)"
		kill -KILL "$cpid"
	fi
	dt=$(ft_since "$t0")
	wait "$pid"
	rc=$(sed -n 's/^\[[0-9.]*\] exit //p' big.err)
	{
		echo "### partition: mirror exit $rc $dt s after the cut ($tcut s after the start)"
		cat big.err
	} >>"$(vm_log)"
	tap_diag "partition: the mirror exited $rc $dt s after the cut; its stderr, in seconds since it started (the cut: $tcut s): $(tr '\n' ' ' <big.err)"
	ft_is "the mirror fails with exit 3 (connection) after the partition" \
		"$rc" 3
	if awk -v d="$dt" -v b="$FT_BOUND" 'BEGIN { exit !(d < b) }'; then
		tap_ok "the mirror gave up within $FT_BOUND s ($dt s)"
	else
		tap_not_ok "the mirror took $dt s to give up (bound $FT_BOUND s)"
	fi
	FT_OUT=$(cat big.err)
	ft_like "the error says the rdma write timed out, naming the pool and the target" \
		"write on pool 'part' in region 'dd' \\(rdma\\) failed: no completion from [0-9.]+:7637 within [0-9]+ s"
	if ! ft_request heal $((FT_FREE_BOUND + 120)); then
		tap_not_ok "the target did not lift the partition"
		return
	fi
	tb=$(ft_now)
	ft_json "rpmemd answers after the partition" '.rdma == true' \
		vm_retry 60 1 "$FT_CTL" status --json "$T"
	ft_json "the interrupted pool is not consistent (syncing), no writer" \
		'.pools[0] | .state == "syncing" and .generation == 0 and
		 .writer == ""' \
		ctl list --json "$T/dd/part"
	ft_run "mirror after the partition" \
		ctl mirror --json --transport rdma big.bin "$T/dd/part"
	tap_diag "after the heal: a new mirror finished $(ft_since "$tb") s after the link came back"
	ft_is "a new mirror over rdma after the partition succeeds" "$FT_RC" 0
	if jq -e '.transport == "rdma" and .identical' <<<"$FT_OUT" \
		>/dev/null 2>&1; then
		tap_ok "it ran over rdma and reports identical"
	else
		tap_not_ok "its JSON: $(tail -c 300 <<<"$FT_OUT")"
	fi
	ft_json "the pool is consistent again (generation 1)" \
		'.pools[0] | .state == "consistent" and .generation == 1' \
		ctl list --json "$T/dd/part"
	tap_check "verify --transport rdma: identical" \
		ctl -q verify --transport rdma big.bin "$T/dd/part"
}

initiator_main()
{
	T=$TARGET_IP
	mkdir -p /tmp/faults.work
	cd /tmp/faults.work || return
	if ! vm_wait up; then
		tap_not_ok "the target's rpmemd did not come up"
		return
	fi
	for f in m1 m2 m3 m4; do
		head -c $((8 * FT_MIB)) /dev/urandom >"$f.bin"
	done
	ft_memlock_target
	if ft_request restart; then
		ft_memlock_initiator
		ft_partition
	else
		tap_not_ok "the target did not restart rpmemd"
	fi
	cd /tmp || return
	rm -rf /tmp/faults.work
}
