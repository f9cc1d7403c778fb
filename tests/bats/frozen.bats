#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# frozen.bats -- a frozen target (rpmemd stopped with SIGSTOP, its
# connections open) is kicked out: the application goes on with k of n,
# the target shows as degraded and behind, and is resynced once it
# answers, by a thread of its own: the application's transactions never
# wait for the resync, the copy is Inconsistent (never promotable) until
# it caught up, a crash of the application mid-resync leaves it behind

load helpers
load pobj

setup() {
	setup_daemon
	start_second
	POOL=$W/app.obj
	# three targets, the third on the daemon that freezes
	export RPMEM_REPLICATE="$POOL=$T/r1/app,$T/r1/app2,$T2/r1/app"
	export RPMEM_REPLICATE_QUORUM=2 RPMEM_REPLICATE_RETRY=0 \
	       RPMEM_REPLICATE_KICKOUT=2000 RPMEM_LOG_LEVEL=info
	export PMEM_IS_PMEM_FORCE=0
	unset RPMEM_REPLICATE_POLICY RPMEM_REPLICATE_KICKOUT_BYTES
}

teardown() {
	# never leave a stopped daemon behind
	[ -z "${DPID2:-}" ] || kill -CONT "$DPID2" 2>/dev/null || true
	[ -z "${APID:-}" ] || kill -KILL "$APID" 2>/dev/null || true
	stop_second
	teardown_daemon
}

# ends_identical -- the application exits 0, never fail-stopped, and the
# three copies equal its file, the returning one consistent again
ends_identical() {
	app_finish
	[ "$ASTATUS" -eq 0 ]
	refute grep -q "fail-stop" "$W/app.err"
	cmp "$POOL" "$R1/app"
	cmp "$POOL" "$R1/app2"
	cmp "$POOL" "$R1B/app"
	[ "$(state "$T2" app)" = consistent ]
}

# exits_behind -- the application, its input closed, exits 0 within 40 s
# (a bound for a loaded machine, not a timing), having said at its exit
# that the replica on the second daemon is behind
exits_behind() {
	exited_within 40
	ASTATUS=0
	wait "$APID" || ASTATUS=$?
	APID=
	[ "$ASTATUS" -eq 0 ]
	grep -q "at exit: the replica of '$POOL' on $T2/r1/app is behind (degraded)" \
		"$W/app.err"
}

# freeze, thaw -- the second daemon stopped (SIGSTOP) and continued
freeze() {
	kill -STOP "$DPID2"
}
thaw() {
	kill -CONT "$DPID2"
}

# holding N -- the replicating process's status says N targets hold
holding() {
	[ "$("$RPMEMCTL" replicas --json "$POOL" | jq -r .holding)" -eq "$1" ]
}

# gone -- the application has exited
gone() {
	! kill -0 "$APID" 2>/dev/null
}

# exited_within SECONDS -- the application exits within SECONDS
exited_within() {
	wait_for -t "$1" gone && return 0
	echo "the application has not exited" >&2
	return 1
}

# state TARGET POOL -- the state of POOL on TARGET (host:port)
state() {
	"$RPMEMCTL" list --json "$1/r1/$2" | jq -er '.pools[0].state'
}

@test "a frozen target (SIGSTOP) is kicked out: transactions go on with quorum 2 of 3 past the 32 replies a link may owe, it shows degraded and behind, and once continued it is resynced from the dirty log, every copy byte-identical" {
	app_start set:0:first pause loop:until pause loop:until pause
	app_paused 1
	freeze
	app_continue
	# transactions go on until the kick-out (its FLUSH unanswered for
	# 2 s, or a send blocked): liveness, not timing; before the kick-out
	# the application waited 60 s at the 32nd transaction (wait_for
	# gives up after 60 s)
	wait_for grep -q "degraded: cannot replicate '$POOL' to $T2/r1/app: kicked out: " \
		"$W/app.err" || { cat "$W/app.err"; false; }
	# at most 32 went through before it: 64 done means the loop went on
	wait_for grep -q '^looping 64$' "$W/app.out"
	app_continue
	wait_for paused 2
	# more transactions than a link may owe replies (32) went through
	[ "$(awk '/^loop / { print $2; exit }' "$W/app.out")" -gt 32 ]
	# the status file (replicas, its events) names it behind
	rc replicas --json "$POOL"
	[ "$status" -eq 1 ] || { echo "$status $output"; false; }
	[ "$(json .holding)" -eq 2 ]
	[ "$(json '.replicas[2].link_state')" = degraded ]
	[ "$(json '.replicas[2].lagging')" = true ]
	[ "$(json '.replicas[2].behind_bytes')" -gt 0 ]
	[ "$(json '.replicas[0].link_state')" = live ]
	[ "$(json '.replicas[1].link_state')" = live ]
	rc replicas --follow --count 1 --timeout 5 "$POOL"
	grep -E " $T2/r1/app  degraded  behind " <<<"$output"
	# the two that hold have every transaction: their daemon's counts
	local a b
	a=$("$RPMEMCTL" list --json "$T/r1/app" | jq -er '.pools[0].bytes_written')
	b=$("$RPMEMCTL" list --json "$T/r1/app2" | jq -er '.pools[0].bytes_written')
	[ "$a" -gt 0 ] && [ "$b" -gt 0 ]
	# continued: the transactions go on while the probe finds it back
	# and the next call resyncs it from its dirty log
	thaw
	app_continue
	wait_for holding 3
	grep -q "resynced: '$POOL' is replicated to $T2/r1/app again" \
		"$W/app.err"
	grep -q "'$POOL' to $T2/r1/app: synced only the extents its dirty log marked" \
		"$W/app.err"
	app_continue
	app_paused 3
	app_continue
	ends_identical
}

@test "a target frozen at the application's exit does not hold the exit: the copy stays behind, and the next start resyncs it byte-identical" {
	app_start set:0:first pause loop:20 set:1:second
	app_paused 1
	freeze
	app_continue
	exec 5>&-
	# liveness: before, the exit waited 60 s for the frozen target's
	# FLUSH replies; now at most the kick-out's 2 s (bounded at 40 s, a
	# bound for a loaded machine, not a timing)
	exits_behind
	cmp "$POOL" "$R1/app"
	cmp "$POOL" "$R1/app2"
	rc replicas --json "$POOL"
	[ "$status" -eq 1 ]
	[ "$(json '.replicas[2].link_state')" = degraded ]
	thaw
	# the daemon ends the dropped session once it reads its end
	wait_for holding_free
	app get:1
	[ "$status" -eq 0 ]
	grep -qx second <<<"$output"
	cmp "$POOL" "$R1B/app"
	[ "$(state "$T2" app)" = consistent ]
}

# paused_within SECONDS -- the application printed its first "paused"
# within SECONDS
paused_within() {
	wait_for -t "$1" paused 1 && return 0
	echo "the application has not paused:" >&2
	cat "$W/app.err" >&2
	return 1
}

@test "a target frozen before the application starts does not hold its start where k < n: the start waits at most the kick-out time for it, goes on with the two that answered, shows it behind, and resyncs it byte-identical once continued" {
	freeze
	app_start set:0:first loop:100 pause loop:until pause set:1:last
	# liveness: before, the first mapping waited 60 s for the frozen
	# target's handshake; now the kick-out's 2 s after the two others
	# answered (bounded at 40 s, a bound for a loaded machine)
	paused_within 40
	grep -q "loop 100 " "$W/app.out"
	grep -q "degraded: cannot start replicating '$POOL' to $T2/r1/app: kicked out at the start: no answer to a probe for " \
		"$W/app.err" || { cat "$W/app.err"; false; }
	# the status file names it behind; the two others hold
	rc replicas --json "$POOL"
	[ "$status" -eq 1 ] || { echo "$status $output"; false; }
	[ "$(json .holding)" -eq 2 ]
	[ "$(json '.replicas[2].link_state')" = degraded ]
	[ "$(json '.replicas[2].lagging')" = true ]
	[ "$(json '.replicas[2].behind_bytes')" -gt 0 ]
	[ "$(json '.replicas[0].link_state')" = live ]
	[ "$(json '.replicas[1].link_state')" = live ]
	# the two that hold have the transactions: their daemon's counts
	[ "$("$RPMEMCTL" list --json "$T/r1/app" |
		jq -er '.pools[0].bytes_written')" -gt 0 ]
	# continued: the start's probe answers, the transactions go on
	# while the link reconnects and resyncs
	thaw
	app_continue
	wait_for holding 3
	grep -q "resynced: '$POOL' is replicated to $T2/r1/app again" \
		"$W/app.err"
	app_continue
	app_paused 2
	ends_identical
}

@test "with k = n a target frozen at the start still holds the start (no target is left out of an all-targets quorum): the application has not started within the kick-out time" {
	export RPMEM_REPLICATE="$POOL=$T/r1/app,$T2/r1/app"
	unset RPMEM_REPLICATE_QUORUM
	freeze
	app_start set:0:first pause
	# not a wait: 4 s, twice the kick-out, let pass: the start still
	# waits for the target
	sleep 4
	! paused 1
	! grep -q "kicked out at the start" "$W/app.err"
	thaw
	app_paused 1
	app_continue
	app_finish
	[ "$ASTATUS" -eq 0 ]
	cmp "$POOL" "$R1/app"
	cmp "$POOL" "$R1B/app"
}

# holding_free -- the second daemon no longer lists a session on app
holding_free() {
	[ "$("$RPMEMCTL" status --json "$T2" |
		jq '[.sessions[] | select(.pool == "app")] | length')" -eq 0 ]
}

# logged_bytes LOG -- the bytes of the extents a dirty log marks (header:
# extent_shift at byte 12, nextents at 24; the bitmap after 4 KiB)
logged_bytes() {
	python3 - "$1" <<'PY'
import struct, sys
b = open(sys.argv[1], "rb").read()
shift, = struct.unpack_from("<I", b, 12)
n, = struct.unpack_from("<Q", b, 24)
bits = sum(bin(x).count("1") for x in b[4096:4096 + (n + 7) // 8])
print(bits << shift)
PY
}

# log_at_most LOG BYTES -- LOG marks at most BYTES
log_at_most() {
	[ "$(logged_bytes "$1")" -le "$2" ]
}

# filled_and_cleared -- fill:7 is done and the third target's log marks
# at most two extents of 1 MiB: those the transactions that follow keep
# writing (the root's counter, the lane's undo log), not the 7 MiB
filled_and_cleared() {
	grep -q "^filled" "$W/app.out" &&
		log_at_most "$POOL.rpmemlog.2" $((2 << 20))
}

# written_at TARGET POOL -- bytes_written of POOL on TARGET, as its
# daemon counted them (since it started)
written_at() {
	"$RPMEMCTL" list --json "$1/r1/$2" | jq -er '.pools[0].bytes_written'
}

@test "per-target dirty logs are cleared as the target acknowledges: after 7 MiB written, a target away while 4 MiB more are written receives about those 4 MiB on its return (its daemon's count), not everything since the start" {
	app set:0:first
	[ "$status" -eq 0 ]
	app_start fill:7 loop:until pause fill:4 pause loop:until pause \
		set:1:last
	# the 7 MiB are on every target: each log is cleared once its
	# target acknowledged them (before, it kept them until the exit)
	wait_for filled_and_cleared
	app_continue
	app_paused 1
	kill -KILL "$DPID2"
	wait "$DPID2" 2>/dev/null || true
	DPID2=
	app_continue
	app_paused 2
	grep -q "degraded: cannot replicate '$POOL' to $T2/r1/app" "$W/app.err"
	local missed
	missed=$(logged_bytes "$POOL.rpmemlog.2")
	[ "$missed" -ge $((4 << 20)) ]
	# back: its daemon counts from its restart
	start_second
	local w0 w1 a0 a1
	w0=$(written_at "$T2" app)
	a0=$(written_at "$T" app)
	app_continue
	wait_for grep -q "resynced: '$POOL' is replicated to $T2/r1/app again" \
		"$W/app.err"
	app_continue
	app_paused 3
	w1=$(written_at "$T2" app)
	a1=$(written_at "$T" app)
	echo "# its log marked $missed; it received $((w1 - w0)); a target" \
	     "that held all along received $((a1 - a0)) meanwhile" >&3
	grep -q "'$POOL' to $T2/r1/app: synced only the extents its dirty log marked" \
		"$W/app.err"
	# about what it missed: within 2x the 4 MiB, plus what the targets
	# that held received live meanwhile (the transactions after it)
	[ "$((w1 - w0))" -ge $((4 << 20)) ]
	[ "$((w1 - w0))" -le $(((8 << 20) + a1 - a0)) ]
	app_continue
	app_finish
	[ "$ASTATUS" -eq 0 ]
	cmp "$POOL" "$R1/app"
	cmp "$POOL" "$R1/app2"
	cmp "$POOL" "$R1B/app"
}

# kill_second -- SIGKILL the second rpmemd (no clean close of anything)
kill_second() {
	kill -KILL "$DPID2"
	wait "$DPID2" 2>/dev/null || true
	DPID2=
}

# start_slow -- the second rpmemd again, taking in 1 MiB of WRITE data a
# second (its bwlimit): the resync of the megabytes it missed lasts
# seconds, long enough to be seen and stopped part way
start_slow() {
	echo 'bwlimit = "1M";' >>"$CONF"
	start_second
}

# link_state I -- the replicating process's status: target I's link state
link_state() {
	"$RPMEMCTL" replicas --json "$POOL" | jq -r ".replicas[$1].link_state"
}

# resyncing -- the third target's link is resyncing
resyncing() {
	[ "$(link_state 2)" = resyncing ]
}

# committed -- the transactions the application says committed
committed() {
	grep -c '^committed ' "$W/app.out" || true
}

# committed_past N -- more than N transactions committed
committed_past() {
	[ "$(committed)" -gt "$1" ]
}

# pool_json TARGET POOL KEY -- KEY of POOL as TARGET's list shows it
pool_json() {
	"$RPMEMCTL" list --json "$1/r1/$2" | jq -er ".pools[0].$3"
}

# away_then_back -- the application writes 6 MiB while the third target
# is away (SIGKILL), then commits records until told; the third daemon
# returns slow, and its resync is seen running and writing: the daemon
# then stopped (SIGSTOP) part way through it
away_then_back() {
	app_start set:0:first pause fill:6 pause records:until pause \
		set:1:last
	app_paused 1
	kill_second
	app_continue
	app_paused 2
	grep -q "degraded: cannot replicate '$POOL' to $T2/r1/app" "$W/app.err"
	start_slow
	app_continue
	# the probe answers, a call starts the resync beside the application;
	# stopped once its data flows (its daemon counted a MiB of it)
	wait_for resyncing || { cat "$W/app.err"; false; }
	wait_for resync_wrote
	freeze
}

# resync_wrote -- the returning daemon took in a MiB since its restart
resync_wrote() {
	[ "$(written_at "$T2" app)" -ge $((1 << 20)) ]
}

@test "a returning target's resync runs beside the application: held stopped part way (SIGSTOP), the application commits hundreds of transactions meanwhile; it shows resyncing and Inconsistent, never UpToDate; continued, it catches up and every copy is byte-identical at the exit" {
	away_then_back
	# the resync is held; the transactions go on with the two that hold
	# (before, the resync ran inside a persist call, which waited for
	# the stopped daemon: no transaction committed for 60 s)
	local c0
	c0=$(committed)
	wait_for committed_past $((c0 + 300)) || { cat "$W/app.err"; false; }
	# the status file (replicas, its events): resyncing, Inconsistent,
	# with the bytes the resync has still to send; k hold
	rc replicas --json "$POOL"
	[ "$status" -eq 1 ] || { echo "$status $output"; false; }
	[ "$(json .holding)" -eq 2 ]
	[ "$(json '.replicas[2].link_state')" = resyncing ]
	[ "$(json '.replicas[2].disk')" = Inconsistent ]
	[ "$(json '.replicas[2].behind_bytes')" -gt 0 ]
	[ "$(json '.replicas[0].disk')" = UpToDate ]
	rc replicas --follow --count 1 --timeout 5 "$POOL"
	grep -E " $T2/r1/app  resyncing  behind .* Inconsistent$" <<<"$output"
	grep -q "resyncing: '$POOL' to $T2/r1/app in the background" \
		"$W/app.err"
	! grep -q "resynced: '$POOL' is replicated to $T2/r1/app again" \
		"$W/app.err"
	# continued: it catches up and rejoins while the records go on
	thaw
	wait_for holding 3 || { cat "$W/app.err"; false; }
	grep -q "resynced: '$POOL' is replicated to $T2/r1/app again" \
		"$W/app.err"
	# the returning daemon took in at least the 6 MiB it missed
	[ "$(written_at "$T2" app)" -ge $((6 << 20)) ]
	# writes after it rejoined reach it: it is live
	local c1
	c1=$(committed)
	wait_for committed_past $((c1 + 50))
	[ "$(link_state 2)" = live ]
	app_continue
	app_paused 3
	app_continue
	ends_identical
}

@test "kill -9 of the application mid-resync leaves the returning copy behind (syncing, Inconsistent, its history behind), never mixed and claimed current; the local file and the two other copies hold every committed transaction, and the next start resyncs it byte-identical" {
	away_then_back
	local c0
	c0=$(committed)
	wait_for committed_past $((c0 + 50))
	kill -KILL "$APID"
	wait "$APID" 2>/dev/null || true
	APID=
	local last
	last=$(awk '/^committed / { n = $2 } END { print n }' "$W/app.out")
	thaw
	# the daemon ends the resync's session once it reads its end
	wait_for holding_free
	# the returning copy: syncing under a plain source (a resync, not a
	# live copy), Inconsistent: no promotion takes it
	[ "$(state "$T2" app)" = syncing ]
	[ "$(pool_json "$T2" app disk)" = Inconsistent ]
	! pool_json "$T2" app source | grep -q "(live)"
	# its history lacks the id the copies that held took when it was
	# left behind (Outdated to any promotion that compares them)
	local newest
	newest=$(pool_json "$T" app 'generations[0]')
	! "$RPMEMCTL" list --json "$T2/r1/app" |
		jq -e --arg id "$newest" '.pools[0].generations | index($id)'
	# the two that held: live copies whose writer is gone, Consistent
	[ "$(pool_json "$T" app disk)" = Consistent ]
	[ "$(pool_json "$T" app2 disk)" = Consistent ]
	# each holds every committed transaction, untorn (their files, read
	# by libpmemobj without the preload library)
	local f
	for f in "$R1/app" "$R1/app2"; do
		cp "$f" "$W/copy.obj"
		run "$APP" "$W/copy.obj" check
		[ "$status" -eq 0 ]
		! grep -q torn <<<"$output"
		[ "$(awk '{ print $NF; exit }' <<<"$output")" -ge "$last" ]
	done
	# the local file too
	cp "$POOL" "$W/copy.obj"
	run "$APP" "$W/copy.obj" check
	[ "$status" -eq 0 ]
	! grep -q torn <<<"$output"
	# the next start resyncs it: every copy byte-identical at its exit
	app get:0
	[ "$status" -eq 0 ]
	cmp "$POOL" "$R1/app"
	cmp "$POOL" "$R1/app2"
	cmp "$POOL" "$R1B/app"
	[ "$(state "$T2" app)" = consistent ]
}


@test "a resync held stopped (SIGSTOP) at the application's exit does not hold the exit: it is cut short after the kick-out time without progress, the copy stays behind (syncing, Inconsistent), and the next start resyncs it byte-identical" {
	away_then_back
	app_continue
	app_paused 3
	exec 5>&-
	# liveness: the exit waits for a resync only while it moves data,
	# then at most the kick-out's 2 s (bounded at 40 s, a bound for a
	# loaded machine, not a timing)
	exits_behind
	rc replicas --json "$POOL"
	[ "$status" -eq 1 ]
	[ "$(json '.replicas[2].link_state')" = degraded ]
	cmp "$POOL" "$R1/app"
	cmp "$POOL" "$R1/app2"
	thaw
	wait_for holding_free
	[ "$(state "$T2" app)" = syncing ]
	[ "$(pool_json "$T2" app disk)" = Inconsistent ]
	app get:1
	[ "$status" -eq 0 ]
	grep -qx last <<<"$output"
	cmp "$POOL" "$R1B/app"
	[ "$(state "$T2" app)" = consistent ]
}
