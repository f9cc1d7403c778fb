# shellcheck shell=bash
# SPDX-License-Identifier: BSD-3-Clause
# failover.sh -- several targets, quorum, failover and failback between
# the two guests, over RDMA into devdax and fsdax
#
# Target: two rpmemd. A (port 7636, RDMA 7637) has a devdax region "dd"
# on $DEVDAX and an fsdax region "fs" on $FSDAX_DIR/a; B (port 7646, RDMA
# 7647) an fsdax region "fs" on $FSDAX_DIR/b. The target acts on the
# initiator's request markers (req-NAME, answered by rep-NAME).
#
# 1. Three targets, quorum 2: tests/pobj_app on the initiator under the
#    preload library replicates one pool file to A/dd/app, A/fs/app and
#    B/fs/app (RPMEM_REPLICATE_TRANSPORT=rdma; the daemons' status must
#    show three RDMA sessions). B is killed with SIGKILL while the
#    application is paused; it goes on (2 of 3 hold), B is restarted, and
#    the next flush (put:2, a rewrite of slot 2, inside the extents
#    already marked) reconnects and resyncs B from its dirty log: what B's
#    rpmemd counted written since its restart (list --json) is at least
#    the bytes of the extents B's log (app.obj.rpmemlog.2) marked while it
#    was away, and at most that plus what A's fs/app received for the same
#    flush (A's count); verify finds the three copies identical.
# 2. Failover and failback: the initiator syncs a file to A/fs/ha over
#    RDMA; "the primary dies"; the target guest promotes its copy into a
#    local file (promote --to, from its own rpmemd), writes two blocks and
#    syncs the file to its rpmemd (history ahead); the initiator pulls
#    back (history behind): two blocks move, by the sync's JSON and by
#    the daemon's read counter in its log; verify.
# 3. A syncing copy: an RDMA sync into A/fs/hb paced by --bwlimit is
#    killed with SIGKILL once the pool is syncing with an undo journal;
#    on the target, promote is refused (exit 4) and the copy stays a
#    secondary; promote --force rolls it back to the previous image.
# 4. The same through the resource agent ocf/rpmem, as Pacemaker would
#    run its actions on two nodes: node "ini" (this initiator; its copy
#    A/fs/db, its primary file in $FO_W) and node "tgt" (the target
#    guest; its copy B/fs/db, its primary file on $FSDAX_DIR). ini is
#    promoted and written, the write reaches tgt's copy (notify); ini is
#    lost (rpmemd A killed, ini's state gone); tgt is promoted (its file
#    equals ini's last image) and written; A returns, ini starts, and
#    tgt's notify resyncs A with only what differs (A's bytes_written);
#    failback: tgt demoted, ini promoted with tgt's writes; verify of the
#    file against both copies.

FO_RPMEMD=$RPMEM_BUILD/rpmemd
FO_CTL=$RPMEM_BUILD/rpmemctl
FO_APP=$RPMEM_BUILD/tests/pobj_app
FO_PRELOAD=$RPMEM_BUILD/librpmem_preload.so
FO_W=/tmp/failover.work
FO_T=/tmp/failover.target
FO_POOL_SIZE=$((16 << 20))
FO_PID_a=
FO_PID_b=
vm_plaintext_targets

# fo_is DESC GOT WANT -- ok if GOT equals WANT
fo_is()
{
	if [ "$2" = "$3" ]; then
		tap_ok "$1"
	else
		echo "### $1: got '$2', expected '$3'" >>"$(vm_log)"
		tap_not_ok "$1 (got '$2', expected '$3')"
	fi
}

# fo_rlog N -- the log of rpmemd N (a or b), in $RESULTS
fo_rlog()
{
	echo "$RESULTS/$VM_SUITE.rpmemd-$1.log"
}

# fo_ra NODE ACTION [VAR=VALUE...] -- the resource agent's ACTION for
# NODE (ini on the initiator, tgt on the target), its parameters as
# Pacemaker passes them; returns the agent's exit code
fo_ra()
{
	local node=$1 action=$2 tgt file peers

	shift 2
	if [ "$node" = ini ]; then
		tgt=$TARGET_IP:7636/fs/db file=$FO_W/db.obj
		peers="tgt=$TARGET_IP:7646/fs/db"
	else
		tgt=127.0.0.1:7646/fs/db file=$FSDAX_DIR/db.primary
		peers="ini=127.0.0.1:7636/fs/db"
	fi
	echo "=== ocf/rpmem $action ($node) $*" >>"$RESULTS/$VM_SUITE.ha-$node.log"
	env OCF_ROOT=/usr/lib/ocf OCF_RESOURCE_INSTANCE=db \
		OCF_RESKEY_target="$tgt" OCF_RESKEY_file="$file" \
		OCF_RESKEY_peers="$peers" OCF_RESKEY_rpmemctl="$FO_CTL" \
		OCF_RESKEY_state="/tmp/$VM_SUITE.ra-$node.state" \
		HA_LOGFILE="$RESULTS/$VM_SUITE.ha-$node.log" \
		HA_DEBUGLOG="$RESULTS/$VM_SUITE.ha-$node.log" \
		HA_LOGFACILITY=none "$@" \
		sh "$RPMEM_SRC/ocf/rpmem" "$action" \
		>>"$RESULTS/$VM_SUITE.ha-$node.log" 2>&1
}

# fo_ra_is DESC WANT NODE ACTION [VAR=VALUE...] -- ok if the agent's
# ACTION exits WANT
fo_ra_is()
{
	local desc=$1 want=$2 rc=0

	shift 2
	fo_ra "$@" || rc=$?
	fo_is "$desc" "$rc" "$want"
}

# --- target ---------------------------------------------------------------

# fo_conf N PORT REGIONS -- $FO_T/N.conf
fo_conf()
{
	cat >"$FO_T/$1.conf" <<EOF
port = $2;
listen = ["127.0.0.1", "$TARGET_IP"];
allow_insecure_remote = true;
log = { level = "info"; };
limits = { rdma_staging_max = "40M"; };
regions = ( $3 );
EOF
	cat "$FO_T/$1.conf" >>"$(vm_log)"
}

# fo_start N -- start rpmemd N, wait until it answers; pid in FO_PID_N
fo_start()
{
	local port=7636

	[ "$1" = b ] && port=7646
	echo "=== rpmemd -c $1.conf ($(date +%T))" >>"$(fo_rlog "$1")"
	"$FO_RPMEMD" -c "$FO_T/$1.conf" >>"$(fo_rlog "$1")" 2>&1 &
	if [ "$1" = a ]; then
		FO_PID_a=$!
	else
		FO_PID_b=$!
	fi
	vm_retry 300 0.2 "$FO_CTL" -q list "127.0.0.1:$port" >/dev/null 2>&1
}

# fo_req_killb -- SIGKILL rpmemd B (the application is paused)
fo_req_killb()
{
	kill -KILL "$FO_PID_b"
	wait "$FO_PID_b" 2>/dev/null
	fo_is "rpmemd B killed with SIGKILL mid-run" \
		"$(kill -0 "$FO_PID_b" 2>/dev/null && echo alive || echo gone)" gone
}

# fo_req_startb -- start rpmemd B again
fo_req_startb()
{
	if fo_start b; then
		tap_ok "rpmemd B restarts"
	else
		tap_not_ok "rpmemd B restarts"
	fi
}

# fo_req_promote -- failover: the copy A/fs/ha becomes a local primary
# file, written here and synced to the local rpmemd
fo_req_promote()
{
	local f=$FSDAX_DIR/ha.primary t=127.0.0.1:7636/fs/ha out

	rm -f "$f" "$f".rpmem*
	out=$("$FO_CTL" promote --json --to "$f" "$t" 2>>"$(vm_log)")
	echo "promote: $out" >>"$(vm_log)"
	fo_is "promote --to FILE on the target: the copy becomes the primary file" \
		"$(jq -r .role <<<"$out")" primary
	tap_check "the promoted file is the initiator's last synced image" \
		cmp "$f" "$RESULTS/$VM_SUITE.ha.bin"
	# the new primary writes two 4 KiB blocks
	head -c 4096 /dev/urandom |
		dd of="$f" bs=4096 seek=256 conv=notrunc status=none
	head -c 4096 /dev/urandom |
		dd of="$f" bs=4096 seek=1280 conv=notrunc status=none
	out=$("$FO_CTL" sync --json "$f" "$t" 2>>"$(vm_log)")
	echo "sync: $out" >>"$(vm_log)"
	fo_is "the primary's writes sync forward to the local rpmemd (history ahead)" \
		"$(jq -r .history <<<"$out")" ahead
	cp "$f" "$RESULTS/$VM_SUITE.primary.bin"
}

# fo_req_promsync -- promote a copy left syncing by a killed sync
fo_req_promsync()
{
	local t=127.0.0.1:7636/fs/hb out rc=0

	out=$("$FO_CTL" promote "$t" 2>&1) || rc=$?
	echo "promote: $rc $out" >>"$(vm_log)"
	fo_is "promote of a syncing copy without --force: refused (exit 4)" \
		"$rc" 4
	fo_is "the refusal says --force rolls back to the last complete image" \
		"$(grep -c -- "--force rolls it back to generation" <<<"$out")" 1
	fo_is "the refused copy stays a secondary" \
		"$("$FO_CTL" list --json "$t" | jq -r '.pools[0].role')" secondary
	out=$("$FO_CTL" promote --force --json "$t" 2>>"$(vm_log)")
	echo "promote --force: $out" >>"$(vm_log)"
	fo_is "promote --force: rolled back, consistent, primary" \
		"$(jq -r '"\(.rolled_back) \(.state) \(.role)"' <<<"$out")" \
		"true consistent primary"
	tap_check "the promoted copy is the image before the killed sync" \
		cmp "$FSDAX_DIR/a/hb" "$RESULTS/$VM_SUITE.hb-old.bin"
	"$FO_CTL" demote "$t" >>"$(vm_log)" 2>&1
}

# fo_req_rastart -- the agent starts on node tgt
fo_req_rastart()
{
	rm -f "/tmp/$VM_SUITE.ra-tgt.state" "$FSDAX_DIR"/db.primary*
	fo_ra_is "ocf/rpmem start on node tgt" 0 tgt start
	fo_ra_is "ocf/rpmem monitor on node tgt: running, not promoted" 0 \
		tgt monitor
}

# fo_req_rakilla -- node ini is lost: SIGKILL rpmemd A, its copy's daemon
fo_req_rakilla()
{
	kill -KILL "$FO_PID_a"
	wait "$FO_PID_a" 2>/dev/null
	fo_is "rpmemd A (node ini's copy) killed with SIGKILL" \
		"$(kill -0 "$FO_PID_a" 2>/dev/null && echo alive || echo gone)" gone
}

# fo_req_rapromote -- failover: tgt promoted, its file written
fo_req_rapromote()
{
	local f=$FSDAX_DIR/db.primary

	# quorum 2 of 2: this writer (the agent's own syncs) stops rather
	# than go on without a copy, so tgt's copy alone holds every write;
	# unset, the agent must see every copy (a partition looks the same)
	fo_ra_is "failover: ocf/rpmem promote on node tgt" 0 tgt promote \
		OCF_RESKEY_quorum=2
	fo_ra_is "ocf/rpmem monitor on node tgt: promoted (8)" 8 tgt monitor
	tap_check "tgt's primary file is ini's last image (its write came by notify)" \
		cmp "$f" "$RESULTS/$VM_SUITE.db-ini.bin"
	head -c 4096 /dev/urandom |
		dd of="$f" bs=4096 seek=768 conv=notrunc status=none
	head -c 4096 /dev/urandom |
		dd of="$f" bs=4096 seek=1280 conv=notrunc status=none
	cp "$f" "$RESULTS/$VM_SUITE.db-tgt.bin"
}

# fo_req_rastarta -- rpmemd A (node ini's copy) comes back
fo_req_rastarta()
{
	if fo_start a; then
		tap_ok "rpmemd A restarts"
	else
		tap_not_ok "rpmemd A restarts"
	fi
}

# fo_req_ranotify -- ini started again: tgt, the primary, resyncs its copy
fo_req_ranotify()
{
	local w0 w1

	w0=$("$FO_CTL" list --json 127.0.0.1:7636/fs/db | jq -er '.pools[0].bytes_written')
	fo_ra_is "ocf/rpmem notify (post-start of ini) on node tgt" 0 tgt \
		notify OCF_RESKEY_CRM_meta_notify_type=post \
		OCF_RESKEY_CRM_meta_notify_operation=start \
		OCF_RESKEY_CRM_meta_notify_start_uname=ini
	w1=$("$FO_CTL" list --json 127.0.0.1:7636/fs/db | jq -er '.pools[0].bytes_written')
	tap_diag "the resync of ini's copy: rpmemd A counted $((w1 - w0)) bytes written"
	fo_is "ini's copy received only what differs: 0 < A's count < 1 MiB of 8 MiB" \
		"$([ "$((w1 - w0))" -gt 0 ] && [ "$((w1 - w0))" -lt $((1 << 20)) ] &&
		   echo yes)" yes
	tap_check "ini's copy on A equals tgt's primary file" \
		cmp "$FSDAX_DIR/a/db" "$FSDAX_DIR/db.primary"
}

# fo_req_rademote -- failback, first half: tgt demoted
fo_req_rademote()
{
	fo_ra_is "failback: ocf/rpmem demote on node tgt" 0 tgt demote
	fo_ra_is "ocf/rpmem monitor on node tgt: running, not promoted" 0 \
		tgt monitor
	fo_ra tgt stop
}

# fo_serve -- act on the initiator's requests until it is done
fo_serve()
{
	vm_serve fo_requests
}

# fo_requests -- act on the requests the initiator made since the last look
fo_requests()
{
	local sync=$RESULTS/.sync req

	for req in killb startb promote promsync rastart rakilla \
		   rapromote rastarta ranotify rademote; do
		if [ -e "$sync/$VM_SUITE.initiator.req-$req" ]; then
			rm -f "$sync/$VM_SUITE.initiator.req-$req"
			"fo_req_$req"
			vm_signal "rep-$req"
		fi
	done
}

target_main()
{
	local t

	for t in "$FO_RPMEMD" "$FO_CTL"; do
		if [ ! -x "$t" ]; then
			tap_not_ok "$t missing (make)"
			vm_signal up
			return
		fi
	done
	rm -rf "$FO_T"
	mkdir -p "$FO_T" "$FSDAX_DIR/a" "$FSDAX_DIR/b"
	tap_check "blank the header block of $DEVDAX with daxio" \
		daxio -z -o "$DEVDAX" -l 4096
	fo_conf a 7636 "{ name = \"dd\"; type = \"devdax\"; path = \"$DEVDAX\"; },
	{ name = \"fs\"; type = \"fsdax\"; path = \"$FSDAX_DIR/a\"; }"
	fo_conf b 7646 "{ name = \"fs\"; type = \"fsdax\"; path = \"$FSDAX_DIR/b\"; }"
	for t in a b; do
		if fo_start $t; then
			tap_ok "rpmemd $t starts"
		else
			tap_not_ok "rpmemd $t starts"
		fi
	done
	tap_check "both listen for RDMA on $TARGET_IP (7637, 7647)" \
		sh -c "grep -q 'rdma: listening on $TARGET_IP:7637' '$(fo_rlog a)' &&
		       grep -q 'rdma: listening on $TARGET_IP:7647' '$(fo_rlog b)'"
	vm_signal up
	fo_serve
}

target_post()
{
	local t

	[ -d "$FO_T" ] || return
	tap_check "the fsdax copies app on A and B equal the initiator's pool file" \
		sh -c "cmp '$FSDAX_DIR/a/app' '$RESULTS/$VM_SUITE.app.bin' &&
		       cmp '$FSDAX_DIR/b/app' '$RESULTS/$VM_SUITE.app.bin'"
	kill -TERM "$FO_PID_a" "$FO_PID_b"
	wait "$FO_PID_a" "$FO_PID_b"
	tap_check "no RDMA errors in the daemons' logs" \
		sh -c "! grep -hE 'error: rdma|error: rpma' '$(fo_rlog a)' '$(fo_rlog b)'"
	rm -rf "$FO_T" "$FSDAX_DIR/a" "$FSDAX_DIR/b" "$FSDAX_DIR"/ha.primary* \
		"$FSDAX_DIR"/db.primary* "$RESULTS/$VM_SUITE".*.bin \
		"/tmp/$VM_SUITE".ra-*.state
	daxio -z -o "$DEVDAX" -l 4096 >>"$(vm_log)" 2>&1
}

# --- initiator ------------------------------------------------------------

# fo_ask NAME -- have the target do NAME, wait until it did
fo_ask()
{
	vm_signal "req-$1"
	vm_wait "rep-$1"
}

# fo_app_start STEP... -- pobj_app on $FO_W/app.obj under the preload
# library in the background, paused at its "pause" steps
fo_app_start()
{
	rm -f "$FO_W/ctl"
	mkfifo "$FO_W/ctl"
	LD_PRELOAD=$FO_PRELOAD "$FO_APP" "$FO_W/app.obj" "$@" \
		<"$FO_W/ctl" >"$FO_W/app.out" 2>"$FO_W/app.err" &
	FO_APID=$!
	exec 5>"$FO_W/ctl"
}

# fo_app_paused N -- until the application printed its Nth "paused"
fo_app_paused()
{
	vm_alive_until -t 120 "$FO_APID" fo_paused_ge "$1" 2>>"$(vm_log)" &&
		return 0
	cat "$FO_W/app.err" >>"$(vm_log)"
	return 1
}

# fo_paused_ge N -- the application printed "paused" at least N times
fo_paused_ge()
{
	[ "$(grep -c paused "$FO_W/app.out")" -ge "$1" ]
}

# fo_sessions PORT -- "region/pool:transport" of the daemon's sessions
fo_sessions()
{
	"$FO_CTL" status --json "$TARGET_IP:$1" |
		jq -r '[.sessions[] | select((.pool // "") != "")
			| "\(.region)/\(.pool):\(.transport)"]
		       | sort | join(",")'
}

# fo_writers PORT -- "REGION/POOL,...;N": the daemon's pools that have a
# writer, and how many distinct writers (sessions) they have
fo_writers()
{
	"$FO_CTL" list --json "$TARGET_IP:$1" |
		jq -r '[.pools[] | select((.writer // "") != "")]
		       | "\([.[] | "\(.region)/\(.name)"] | sort | join(","));\([.[].writer] | unique | length)"'
}

# fo_written PORT REGION POOL -- bytes_written the daemon counted
fo_written()
{
	"$FO_CTL" list --json "$TARGET_IP:$1/$2/$3" |
		jq -er '.pools[0].bytes_written'
}

# fo_logged LOG -- the bytes of the extents a dirty log marks (header:
# extent_shift at byte 12, nextents at 24; the bitmap after 4 KiB)
fo_logged()
{
	local shift n bits=0 b

	shift=$(od -An -tu4 -j12 -N4 "$1" | tr -d ' ')
	n=$(od -An -tu8 -j24 -N8 "$1" | tr -d ' ')
	for b in $(od -An -tu1 -v -j4096 -N$(((n + 7) / 8)) "$1"); do
		while [ "$b" -gt 0 ]; do
			bits=$((bits + (b & 1)))
			b=$((b >> 1))
		done
	done
	echo $((bits << shift))
}

# fo_targets -- three targets, quorum 2, the killed one resynced
fo_targets()
{
	local a=$TARGET_IP:7636 b=$TARGET_IP:7646 w w0 a0 a1 logged rc=0

	export RPMEM_REPLICATE="$FO_W/app.obj=$a/dd/app,$a/fs/app,$b/fs/app"
	export RPMEM_REPLICATE_QUORUM=2 RPMEM_REPLICATE_RETRY=0 \
	       RPMEM_REPLICATE_TRANSPORT=rdma PMEM_IS_PMEM_FORCE=0 \
	       RPMEM_LOG_LEVEL=info
	tap_check "pobj_app creates a pool replicated to three targets" \
		env LD_PRELOAD="$FO_PRELOAD" "$FO_APP" "$FO_W/app.obj" set:0:first
	fo_app_start set:1:before pause set:2:degraded pause put:2:back \
		loop:until pause set:4:last
	if ! fo_app_paused 1; then
		tap_not_ok "the application runs with three targets"
		kill -KILL "$FO_APID" 2>/dev/null
		exec 5>&-
		return
	fi
	# the preload library's links to A share one session: its list
	# names one writer for both pools, its status that session (with
	# the pool opened last) over RDMA
	fo_is "rpmemd A serves dd/app and fs/app on one session of the application, over RDMA (its list and status)" \
		"$(fo_writers 7636);$(fo_sessions 7636)" \
		"dd/app,fs/app;1;fs/app:rdma"
	fo_is "rpmemd B serves fs/app over RDMA (its status)" \
		"$(fo_sessions 7646)" "fs/app:rdma"
	fo_ask killb
	echo go >&5
	fo_is "the application goes on with 2 of 3 targets" \
		"$(fo_app_paused 2 && echo paused)" paused
	logged=$(fo_logged "$FO_W/app.obj.rpmemlog.2")
	fo_ask startb
	w0=$(fo_written 7646 fs app)
	a0=$(fo_written 7636 fs app)
	echo go >&5
	# the reconnect waits for a probe of B, off the persists: the
	# transactions go on until a call after it resyncs B (bounded: 120 s)
	vm_wait_for -t 120 grep -q \
		"resynced: '$FO_W/app.obj' is replicated to $b/fs/app again" \
		"$FO_W/app.err" 2>>"$(vm_log)" || true
	echo go >&5
	fo_is "the application goes on once B is back" \
		"$(fo_app_paused 3 && echo paused)" paused
	# the link noticed the kill at set:2's drain or at put:2's (a drain
	# waits for k replies only), then a call after the probe found B
	# back resynced it
	tap_check "the preload library says B is degraded, not fail-stop" \
		sh -c "grep -q 'degraded: cannot replicate .* to $b/fs/app' '$FO_W/app.err' &&
		       ! grep -q fail-stop '$FO_W/app.err'"
	tap_check "the next flush resynced B (resynced: ... again)" \
		grep "resynced: '$FO_W/app.obj' is replicated to $b/fs/app again" \
			"$FO_W/app.err"
	w=$(($(fo_written 7646 fs app) - ${w0:-0}))
	a1=$(fo_written 7636 fs app)
	tap_diag "B's log marked $logged bytes; rpmemd B counted $w written for the resync, A $((a1 - a0)) for the same flush (pool $FO_POOL_SIZE)"
	# B's count: its logged extents, then the writes after its resync,
	# as A (which held all along) took them: no more
	fo_is "B received its logged extents and no more: logged <= B's count <= logged + A's (the daemons' counters)" \
		"$([ "${logged:-0}" -gt 0 ] && [ "$logged" -lt "$FO_POOL_SIZE" ] &&
		   [ "$w" -ge "$logged" ] &&
		   [ "$w" -le "$((logged + a1 - a0))" ] && echo yes)" yes
	fo_is "B serves fs/app over RDMA again (its status)" \
		"$(fo_sessions 7646)" "fs/app:rdma"
	echo go >&5
	exec 5>&-
	wait "$FO_APID" || rc=$?
	cat "$FO_W/app.err" >>"$(vm_log)"
	fo_is "the application exits 0" "$rc" 0
	unset RPMEM_REPLICATE RPMEM_LOG_LEVEL
	tap_check "verify: the three copies are byte-identical to the file" \
		"$FO_CTL" verify --full "$FO_W/app.obj" "$a/dd/app" "$a/fs/app" \
			"$b/fs/app"
	cp "$FO_W/app.obj" "$RESULTS/$VM_SUITE.app.bin"
}

# fo_closed -- the number of sessions rpmemd A logged as closed
fo_closed()
{
	grep -c ' closed: .* bytes written, ' "$(fo_rlog a)"
}

# fo_closed_gt N -- rpmemd A logged more than N sessions closed
fo_closed_gt()
{
	[ "$(fo_closed)" -gt "$1" ]
}

# fo_last_read N -- bytes the session rpmemd A logged as closed after N
# others read (its log; waits for the line)
fo_last_read()
{
	vm_wait_for -t 10 fo_closed_gt "$1" 2>>"$(vm_log)" || true
	sed -n 's/.* closed: .*(\([0-9]*\) bytes written, \([0-9]*\) read.*/\2/p' \
		"$(fo_rlog a)" | sed -n "$(($1 + 1))p"
}

# fo_failback -- sync, failover on the target, failback by a pull
fo_failback()
{
	local f=$FO_W/ha t=$TARGET_IP:7636/fs/ha out r n

	head -c $((8 << 20)) /dev/urandom >"$f"
	: >"$f.rpmemgen"
	out=$("$FO_CTL" sync --json --transport rdma "$f" "$t" 2>>"$(vm_log)")
	echo "sync: $out" >>"$(vm_log)"
	fo_is "sync over RDMA into the fsdax region (transport in its JSON)" \
		"$(jq -r .transport <<<"$out")" rdma
	fo_is "the target's history is the file's" \
		"$("$FO_CTL" list --json "$t" | jq -r '.pools[0].generations | join(",")')" \
		"$(sed -n 's/^ids=//p' "$f.rpmemgen")"
	cp "$f" "$RESULTS/$VM_SUITE.ha.bin"
	# the primary dies: it writes no more; the target takes over
	fo_ask promote
	out=$("$FO_CTL" sync --json "$f" "$t" 2>&1)
	r=$?
	echo "push after failover: $r $out" >>"$(vm_log)"
	fo_is "the old primary's push is refused: the target holds newer writes" \
		"$r:$(grep -c 'the target holds newer writes' <<<"$out")" 4:1
	n=$(fo_closed)
	out=$("$FO_CTL" sync --pull --json "$f" "$t" 2>>"$(vm_log)")
	echo "pull: $out" >>"$(vm_log)"
	fo_is "failback: the pull finds the target ahead and moves 2 blocks" \
		"$(jq -r '"\(.history) \(.blocks_changed)"' <<<"$out")" "behind 2"
	r=$(fo_last_read "$n")
	tap_diag "failback pull: transport $(jq -r .transport <<<"$out"), rpmemd A read ${r:-?} bytes"
	fo_is "rpmemd A read at most 2 comparison blocks (128 KiB) for it (its log)" \
		"$([ -n "$r" ] && [ "$r" -le 131072 ] && echo yes)" yes
	tap_check "the initiator's file is the promoted primary's" \
		cmp "$f" "$RESULTS/$VM_SUITE.primary.bin"
	tap_check "verify: the file and the target's copy are identical" \
		"$FO_CTL" verify --full "$f" "$t"
}

# fo_pending TARGET -- the pool TARGET is syncing with an undo journal
# (state and pending in $st)
fo_pending()
{
	st=$("$FO_CTL" list --json "$1" |
	     jq -r '.pools[0] | "\(.state) \(.pending)"')
	[ "$st" = "syncing true" ]
}

# fo_no_session POOL -- rpmemd on the target has no session on POOL
fo_no_session()
{
	"$FO_CTL" status --json "$TARGET_IP:7636" |
		jq -e "[.sessions[] | select(.pool == \"$1\")] | length == 0" \
		>/dev/null
}

# fo_syncing -- an RDMA sync killed mid-way; the target promotes that copy
fo_syncing()
{
	local f=$FO_W/hb t=$TARGET_IP:7636/fs/hb cpid st=

	head -c $((8 << 20)) /dev/urandom >"$f"
	tap_check "mirror hb over RDMA" \
		"$FO_CTL" mirror --transport rdma "$f" "$t"
	cp "$f" "$RESULTS/$VM_SUITE.hb-old.bin"
	head -c $((8 << 20)) /dev/urandom >"$f"
	# paced to 32 s: killed part way, well before its end
	"$FO_CTL" sync --transport rdma --bwlimit 256K "$f" "$t" \
		>>"$(vm_log)" 2>&1 &
	cpid=$!
	vm_wait_for -t 30 fo_pending "$t" 2>>"$(vm_log)" || true
	# not a wait: the kill lands part way, a second into the writing
	sleep 1
	kill -0 "$cpid" 2>/dev/null ||
		tap_not_ok "the paced sync of hb ended before it was killed"
	kill -KILL "$cpid"
	wait "$cpid" 2>/dev/null
	vm_wait_for -t 20 fo_no_session hb 2>>"$(vm_log)" || true
	fo_is "the killed sync left hb syncing with an undo journal" \
		"$("$FO_CTL" list --json "$t" | jq -r '.pools[0] | "\(.state) \(.pending)"')" \
		"syncing true"
	fo_ask promsync
}

# fo_agent -- failover and failback between the guests through ocf/rpmem
fo_agent()
{
	local a=$TARGET_IP:7636/fs/db b=$TARGET_IP:7646/fs/db f=$FO_W/db.obj

	if [ ! -r /usr/lib/ocf/lib/heartbeat/ocf-shellfuncs ]; then
		tap_skip "failover through ocf/rpmem" \
			"no /usr/lib/ocf/lib/heartbeat/ocf-shellfuncs (Debian package resource-agents)"
		return
	fi
	rm -f "/tmp/$VM_SUITE.ra-ini.state" "$f"*
	head -c $((8 << 20)) /dev/urandom >"$FO_W/db.src"
	tap_check "mirror db to both copies (A/fs/db, B/fs/db)" \
		"$FO_CTL" mirror "$FO_W/db.src" "$a" "$b"
	fo_ra_is "ocf/rpmem start on node ini" 0 ini start
	fo_ask rastart
	fo_ra_is "ocf/rpmem promote on node ini" 0 ini promote
	tap_check "ini's primary file is the copy" cmp "$f" "$FO_W/db.src"
	fo_ra_is "ocf/rpmem monitor on node ini: promoted (8)" 8 ini monitor
	# the application writes the primary; the notify brings it to tgt
	head -c 4096 /dev/urandom |
		dd of="$f" bs=4096 seek=1 conv=notrunc status=none
	fo_ra_is "ocf/rpmem notify (post-start of tgt) on node ini" 0 ini \
		notify OCF_RESKEY_CRM_meta_notify_type=post \
		OCF_RESKEY_CRM_meta_notify_operation=start \
		OCF_RESKEY_CRM_meta_notify_start_uname=tgt
	tap_check "verify: tgt's copy holds ini's write" \
		"$FO_CTL" verify --full "$f" "$b"
	cp "$f" "$RESULTS/$VM_SUITE.db-ini.bin"
	# node ini is lost, its state with it; tgt takes over and writes
	rm -f "/tmp/$VM_SUITE.ra-ini.state"
	fo_ask rakilla
	fo_ask rapromote
	# ini returns: its rpmemd, then the agent; the primary resyncs it
	fo_ask rastarta
	fo_ra_is "ocf/rpmem start on node ini (back)" 0 ini start
	fo_ra_is "ocf/rpmem monitor on node ini: running, not promoted" 0 \
		ini monitor
	fo_ask ranotify
	# failback: tgt demoted, ini promoted with tgt's writes
	fo_ask rademote
	fo_ra_is "failback: ocf/rpmem promote on node ini" 0 ini promote
	tap_check "ini's primary file has tgt's writes" \
		cmp "$f" "$RESULTS/$VM_SUITE.db-tgt.bin"
	tap_check "verify: ini's file and both copies are identical" \
		"$FO_CTL" verify --full "$f" "$a" "$b"
	fo_ra ini stop
}

initiator_main()
{
	if ! vm_wait up; then
		tap_not_ok "the target's rpmemd did not come up"
		return
	fi
	rm -rf "$FO_W"
	mkdir -p "$FO_W"
	fo_targets
	fo_failback
	fo_syncing
	fo_agent
	rm -rf "$FO_W"
}
