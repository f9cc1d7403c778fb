#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# ocf.bats -- the Pacemaker resource agent ocf/rpmem: ocf-tester, and a
# failover and failback driven through its actions as Pacemaker would,
# node A and node B being two rpmemd instances on loopback

load helpers
load pobj

setup() {
	command -v ocf-tester >/dev/null ||
		skip "ocf-tester (Debian package resource-agents) is not installed"
	setup_daemon
	start_second
	# the agent where ocf-tester's 'nobody' can read it
	ADIR=$(mktemp -d /tmp/rpmem-ocf.XXXXXX)
	chmod 755 "$ADIR"
	cp "$TOP/ocf/rpmem" "$ADIR/rpmem"
	chmod 755 "$ADIR/rpmem"
	AGENT=$ADIR/rpmem
	export OCF_ROOT=/usr/lib/ocf
	mkfile "$W/src" 8
	"$RPMEMCTL" -q mirror "$W/src" "$T/r1/db"
	"$RPMEMCTL" -q mirror "$W/src" "$T2/r1/db"
}

teardown() {
	[ -z "${DPID3:-}" ] || kill -TERM "$DPID3" 2>/dev/null || true
	[ -z "${SPID:-}" ] || kill "$SPID" 2>/dev/null || true
	[ -z "${APID:-}" ] || kill -KILL "$APID" 2>/dev/null || true
	rm -rf "${ADIR:-/nonexistent}"
	stop_second
	teardown_daemon
}

# on NODE ACTION [VAR=VALUE...] -- run the agent's ACTION for node a or b,
# as Pacemaker would (OCF_RESKEY_*), its exit code in $status
on() {
	local node=$1 action=$2
	shift 2
	local tgt=$T/r1/db file=$W/a.obj peers="b=$T2/r1/db"
	if [ "$node" = b ]; then
		tgt=$T2/r1/db file=$W/b.obj peers="a=$T/r1/db"
	fi
	run env OCF_ROOT=/usr/lib/ocf OCF_RESOURCE_INSTANCE=db \
		OCF_RESKEY_target="$tgt" OCF_RESKEY_file="$file" \
		OCF_RESKEY_peers="$peers" OCF_RESKEY_rpmemctl="$RPMEMCTL" \
		OCF_RESKEY_state="$W/state.$node" HA_LOGFILE="$W/ha.log" \
		HA_DEBUGLOG="$W/ha.log" HA_LOGFACILITY=none "$@" \
		"$AGENT" "$action"
}

# notify_started NODE PEER -- the post-start notification Pacemaker
# sends NODE's instance after PEER started
notify_started() {
	on "$1" notify OCF_RESKEY_CRM_meta_notify_type=post \
		OCF_RESKEY_CRM_meta_notify_operation=start \
		OCF_RESKEY_CRM_meta_notify_start_uname="$2"
}

@test "ocf: the agent's meta-data is valid against ra-api-1.dtd and names every action" {
	"$AGENT" meta-data >"$W/md.xml"
	(cd /usr/share/resource-agents && xmllint --noout --valid - <"$W/md.xml")
	for a in start stop promote demote monitor notify meta-data validate-all; do
		grep -q "<action name=\"$a\"" "$W/md.xml"
	done
}

@test "ocf: ocf-tester passes the agent against a live rpmemd (start, monitor, promote, demote, stop, each twice)" {
	run ocf-tester -n db -o target="$T/r1/db" -o file="$W/t.obj" \
		-o state="$W/state.t" -o rpmemctl="$RPMEMCTL" "$AGENT"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"passed all tests"* ]]
	# its promotions pulled the copy into the file
	cmp "$W/src" "$W/t.obj"
}

@test "ocf: validate-all and monitor refuse a bad configuration and report a missing copy" {
	on a validate-all OCF_RESKEY_target=nohost
	[ "$status" -eq 6 ]
	on a validate-all OCF_RESKEY_peers=b
	[ "$status" -eq 6 ]
	on a validate-all OCF_RESKEY_file=
	[ "$status" -eq 6 ]
	on a monitor OCF_RESKEY_target="$T/r1/none"
	[ "$status" -eq 7 ]
	on a start OCF_RESKEY_target="$T/r1/none"
	[ "$status" -eq 1 ]
	on a monitor OCF_RESKEY_rpmemctl=/nonexistent/rpmemctl
	[ "$status" -eq 5 ]
}

@test "ocf: failover and failback: B promoted when A is lost, written, A returns and receives only what differs, then A is promoted again with B's writes" {
	on a start
	[ "$status" -eq 0 ]
	on b start
	[ "$status" -eq 0 ]
	on a promote
	[ "$status" -eq 0 ]
	cmp "$W/src" "$W/a.obj"
	on a monitor
	[ "$status" -eq 8 ]
	on b monitor
	[ "$status" -eq 0 ]
	# the application writes the primary; B's copy follows
	poke "$W/a.obj" 4096
	notify_started a b
	[ "$status" -eq 0 ]
	cmp "$W/a.obj" "$R1B/db"

	# node A is lost (its state went with it); B, seeing only its own
	# copy, cannot tell A's loss from a partition (a primary going on
	# alone): refused by default. The writer here (the agent's syncs)
	# reaches every copy or fails, k = n = 2: B is promoted under
	# quorum 2, written
	stop_daemon
	rm -f "$W/state.a"
	on b promote
	[ "$status" -eq 1 ]
	[ ! -e "$W/b.obj" ]
	on b promote OCF_RESKEY_quorum=2
	[ "$status" -eq 0 ]
	cmp "$W/a.obj" "$W/b.obj"
	poke "$W/b.obj" $((3 << 20))
	poke "$W/b.obj" $((5 << 20))

	# A returns and is resynced by the primary: only what differs moves
	start_daemon
	on a start
	[ "$status" -eq 0 ]
	on a monitor
	[ "$status" -eq 0 ]
	before=$(written db)
	notify_started b a
	[ "$status" -eq 0 ]
	cmp "$W/b.obj" "$R1/db"
	moved=$(($(written db) - before))
	[ "$moved" -gt 0 ]
	[ "$moved" -lt $((1 << 20)) ]

	# failback: B demoted (its file synced to every copy), A promoted
	on b demote
	[ "$status" -eq 0 ]
	on a promote
	[ "$status" -eq 0 ]
	cmp "$W/b.obj" "$W/a.obj"
	run "$RPMEMCTL" verify "$W/a.obj" "$T/r1/db" "$T2/r1/db"
	[ "$status" -eq 0 ]
}

@test "ocf: split brain: both primaries written while apart; the second demotion is refused and logged, and nothing of either side's writes is overwritten" {
	on a start
	[ "$status" -eq 0 ]
	on b start
	[ "$status" -eq 0 ]
	on a promote
	[ "$status" -eq 0 ]
	notify_started a b
	[ "$status" -eq 0 ]
	# apart: B's copy is promoted while A still writes its primary
	stop_second
	poke "$W/a.obj" 8192
	start_second
	on b promote
	[ "$status" -eq 0 ]
	poke "$W/b.obj" 12288
	cp "$W/a.obj" "$W/a.before"
	cp "$W/b.obj" "$W/b.before"
	# rejoined: one primary is demoted, its file reaches every copy ...
	on b demote
	[ "$status" -eq 0 ]
	cmp "$W/b.obj" "$R1B/db"
	# ... and the other's demotion is refused: both were written
	on a demote
	[ "$status" -eq 1 ]
	grep -qi "split brain" "$W/ha.log"
	on a monitor
	[ "$status" -eq 8 ]
	cmp "$W/a.obj" "$W/a.before"
	cmp "$W/b.obj" "$W/b.before"
	cmp "$W/b.obj" "$R1/db"
}

# one_reason -- the agent's output ($output) has one ocf-exit-reason line,
# not one the target wrote, and neither it nor the log a raw control
one_reason() {
	printf '%s\n' "$output" >"$W/agent.out"
	cat "$W/agent.out"
	grep -c '^ocf-exit-reason:' "$W/agent.out" | grep -qx 1
	refute grep -q '^ocf-exit-reason:forged' "$W/agent.out"
	refute raw_controls "$W/agent.out"
	refute raw_controls "$W/ha.log"
}

@test "ocf: what a target says reaches the log and ocf-exit-reason on one line, without terminal controls" {
	# a hostile target: its error message quotes a pool name it turns
	# into ESC and C1 sequences and a newline (tests/peers/hostile.py)
	SP=$(free_port)
	python3 "$TOP/tests/peers/hostile.py" "$PORT" spoof "$SP" >"$W/spoof.out" 2>&1 &
	SPID=$!
	alive_until "$SPID" accepts "$SP"
	on a promote OCF_RESKEY_target="127.0.0.1:$SP/r1/QQQQQQQQQQQQQQQQ"
	[ "$status" -ne 0 ]
	one_reason
	grep -qF 'ocf-exit-reason:promote: ' "$W/agent.out"
	grep -qF '\x1b[2J' "$W/agent.out"
	# an rpmemctl that prints such text raw (an older one): the agent
	# itself keeps it to one line without controls
	cat >"$ADIR/rawctl" <<'SH'
#!/bin/sh
printf 'rpmemctl: promote: \033]0;x\007\302\233 refused\nocf-exit-reason:forged\n\342\200\256gnp\n' >&2
exit 4
SH
	chmod 755 "$ADIR/rawctl"
	on a promote OCF_RESKEY_rpmemctl="$ADIR/rawctl"
	[ "$status" -ne 0 ]
	one_reason
	grep -qF 'ocf-exit-reason:promote: rpmemctl: promote:  ]0;x ? refused; ocf-exit-reason:forged; ?gnp' "$W/agent.out"
}

# kill_daemon -- node A's rpmemd dies (SIGKILL)
kill_daemon() {
	kill -KILL "$DPID"
	wait "$DPID" || true
	DPID=
}

@test "ocf: rpmemd dies on the promoted node: monitor says failed promoted (9), demote puts the primary's writes on the peer (0), stop succeeds, and again once stopped" {
	on a start
	[ "$status" -eq 0 ]
	on b start
	[ "$status" -eq 0 ]
	on a promote
	[ "$status" -eq 0 ]
	poke "$W/a.obj" 4096
	kill_daemon
	on a monitor
	[ "$status" -eq 9 ]
	[[ "$output" == *"ocf-exit-reason:"*"unreachable"* ]]
	# demote does what it can: the peer's copy gets the primary's writes
	on a demote
	[ "$status" -eq 0 ]
	cmp "$W/a.obj" "$R1B/db"
	grep -q 'WARN.*local copy.*not synced' "$W/ha.log"
	[ "$(cat "$W/state.a")" = Unpromoted ]
	on a stop
	[ "$status" -eq 0 ]
	[ ! -e "$W/state.a" ]
	on a stop
	[ "$status" -eq 0 ]
	on a monitor
	[ "$status" -eq 7 ]
	# rpmemd restarted: the node starts again and its copy is promotable
	start_daemon
	on a start
	[ "$status" -eq 0 ]
	on a monitor
	[ "$status" -eq 0 ]
}

@test "ocf: stop of a promoted instance whose copies are all unreachable succeeds and keeps the primary file as it was" {
	on a start
	[ "$status" -eq 0 ]
	on a promote
	[ "$status" -eq 0 ]
	poke "$W/a.obj" 8192
	cp "$W/a.obj" "$W/a.before"
	kill_daemon
	stop_second
	on a stop
	[ "$status" -eq 0 ]
	[ ! -e "$W/state.a" ]
	cmp "$W/a.obj" "$W/a.before"
	grep -q 'ERROR.*no copy holds' "$W/ha.log"
}

@test "ocf: monitor of the promoted node notices its primary file moved away (9, failed promoted) and a demote overwrites no copy" {
	on a start
	[ "$status" -eq 0 ]
	on b start
	[ "$status" -eq 0 ]
	on a promote
	[ "$status" -eq 0 ]
	on a monitor
	[ "$status" -eq 8 ]
	mv "$W/a.obj" "$W/a.moved"
	on a monitor
	[ "$status" -eq 9 ]
	[[ "$output" == *"ocf-exit-reason:"*"a.obj"* ]]
	# a file of another kind in its place is no primary either
	mkdir "$W/a.obj"
	on a monitor
	[ "$status" -eq 9 ]
	rmdir "$W/a.obj"
	on a demote
	[ "$status" -eq 1 ]
	cmp "$W/src" "$R1/db"
	cmp "$W/src" "$R1B/db"
	on a stop
	[ "$status" -eq 0 ]
	on a monitor
	[ "$status" -eq 7 ]
}

@test "ocf: the post-start notify leaves a peer to the live writer replicating the primary: logged at info, no ERROR, and the peer's copy ends identical" {
	export RPMEM_REPLICATE="$W/app.obj=$T/r1/app,$T2/r1/app"
	export PMEM_IS_PMEM_FORCE=0
	POOL=$W/app.obj
	app set:0:first
	[ "$status" -eq 0 ]
	cmp "$POOL" "$R1B/app"
	local ab=(OCF_RESKEY_file="$POOL" OCF_RESKEY_target="$T/r1/app"
		OCF_RESKEY_peers="b=$T2/r1/app")
	on a start "${ab[@]}"
	[ "$status" -eq 0 ]
	on a promote "${ab[@]}"
	[ "$status" -eq 0 ]
	# the application replicates live to both copies
	app_start set:1:second pause set:2:third
	app_paused 1
	on a notify "${ab[@]}" OCF_RESKEY_CRM_meta_notify_type=post \
		OCF_RESKEY_CRM_meta_notify_operation=start \
		OCF_RESKEY_CRM_meta_notify_start_uname=b
	[ "$status" -eq 0 ]
	cat "$W/ha.log"
	refute grep -q ERROR "$W/ha.log"
	grep -q 'INFO.*is open by its application (a live writer)' "$W/ha.log"
	app_continue
	app_finish
	[ "$ASTATUS" -eq 0 ]
	cmp "$POOL" "$R1B/app"
	[ "$(get_slot "$R1B/app" 2)" = third ]
}

@test "ocf: the post-start notify finds the peer's copy held open for writing (a writer without libpmemobj's lock): info, no ERROR, the copy left to it" {
	on a start
	[ "$status" -eq 0 ]
	on a promote
	[ "$status" -eq 0 ]
	poke "$W/a.obj" 4096
	hold "$T2/r1/db" 60
	notify_started a b
	[ "$status" -eq 0 ]
	cat "$W/ha.log"
	refute grep -q ERROR "$W/ha.log"
	grep -q 'INFO.*is held by a live writer' "$W/ha.log"
	kill -USR1 "$HP"
	wait "$HP"
	# nothing was pushed beside the writer
	cmp "$W/src" "$R1B/db"
}

# get_slot FILE I -- slot I of a copy, opened by libpmemobj
get_slot() {
	cp "$1" "$W/copy.obj"
	"$APP" "$W/copy.obj" "get:$2"
}

@test "ocf: parameters are taken literally: a peer with glob characters is not expanded, a file name with a space and glob characters works" {
	# in a directory where '*/*/*' would match a valid-looking peer
	mkdir -p "$W/cwd/b=h/r"
	touch "$W/cwd/b=h/r/p"
	cd "$W/cwd"
	on a validate-all OCF_RESKEY_peers='*/*/*'
	[ "$status" -eq 6 ]
	[[ "$output" == *"peer '*/*/*' is not"* ]]
	on a validate-all OCF_RESKEY_peers="b=$T2/r1/db *"
	[ "$status" -eq 6 ]
	# the primary file's name, with a space and glob characters
	local f="$W/a [1] *.obj"
	touch "$W/a 1 x.obj"
	on a start OCF_RESKEY_file="$f"
	[ "$status" -eq 0 ]
	on a promote OCF_RESKEY_file="$f"
	[ "$status" -eq 0 ]
	cmp "$W/src" "$f"
	on a monitor OCF_RESKEY_file="$f"
	[ "$status" -eq 8 ]
	poke "$f" 4096
	on a demote OCF_RESKEY_file="$f"
	[ "$status" -eq 0 ]
	cmp "$f" "$R1/db"
	cmp "$f" "$R1B/db"
	[ ! -s "$W/a 1 x.obj" ]
}

# start_third -- a third rpmemd: region r1 in $R1C, port $PORT3 ($T3)
start_third() {
	R1C=$W/r1c
	mkdir -p "$R1C"
	[ -n "${PORT3:-}" ] || PORT3=$(free_port)
	T3=127.0.0.1:$PORT3
	sed -e "s|port = $PORT;|port = $PORT3;|" \
	    -e "s|path = \"$R1\";|path = \"$R1C\";|" "$CONF" >"$W/rpmemd3.conf"
	"$RPMEMD" -c "$W/rpmemd3.conf" >>"$W/rpmemd3.log" 2>&1 &
	DPID3=$!
	alive_until "$DPID3" accepts "$PORT3" && return 0
	cat "$W/rpmemd3.log" >&2
	return 1
}

# on3 NODE ACTION [VAR=VALUE...] -- the agent's ACTION for node a, b or c
# of pool app on three daemons, each a peer of the others; the promotion
# scores it sets are appended to $W/scores ("NODE ARGS", by a
# crm_master/crm_attribute of the test's)
on3() {
	local node=$1 action=$2 tgt
	shift 2
	case $node in
	a) tgt=$T/r1/app ;;
	b) tgt=$T2/r1/app ;;
	c) tgt=$T3/r1/app ;;
	esac
	run env OCF_ROOT=/usr/lib/ocf OCF_RESOURCE_INSTANCE=app \
		OCF_RESKEY_target="$tgt" OCF_RESKEY_file="$W/$node.obj" \
		OCF_RESKEY_peers="a=$T/r1/app b=$T2/r1/app c=$T3/r1/app" \
		OCF_RESKEY_rpmemctl="$RPMEMCTL" SCORE_NODE="$node" \
		SCORES="$W/scores" HA_SBIN_DIR="$W/sbin" \
		OCF_RESKEY_state="$W/state3.$node" HA_LOGFILE="$W/ha.log" \
		HA_DEBUGLOG="$W/ha.log" HA_LOGFACILITY=none "$@" \
		"$AGENT" "$action"
}

# score NODE -- the last promotion score the agent set for NODE ("" if
# deleted or never set)
score() {
	local l
	l=$(grep "^$1 " "$W/scores" | tail -1)
	case "$l" in
	*"-v "*) echo "${l##*-v }" | cut -d' ' -f1 ;;
	esac
}

# get_copy FILE I -- slot I of a pool file, opened by libpmemobj
get_copy() {
	cp "$1" "$W/copy.obj"
	"$APP" "$W/copy.obj" "get:$2"
}

@test "ocf: stale copy: one of three copies cut off mid-run, then the primary killed: the stale copy is Outdated (no score, promote refused unless forced), an UpToDate live copy is promoted and holds every acknowledged write" {
	start_third
	mkdir -p "$W/sbin"
	for b in crm_master crm_attribute; do
		printf '#!/bin/sh\necho "$SCORE_NODE $*" >>"$SCORES"\n' >"$W/sbin/$b"
		chmod +x "$W/sbin/$b"
	done
	: >"$W/scores"
	POOL=$W/app.obj
	export RPMEM_REPLICATE="$POOL=$T/r1/app,$T2/r1/app,$T3/r1/app"
	export RPMEM_REPLICATE_QUORUM=2 RPMEM_REPLICATE_RETRY=never
	export PMEM_IS_PMEM_FORCE=0
	app_start set:0:zero pause set:1:one pause set:2:two pause
	app_paused 1
	# c is cut off mid-run: its daemon killed; the application goes on
	# with a and b (2 of 3), every transaction acknowledged by both
	kill -KILL "$DPID3"
	wait "$DPID3" || true
	app_continue
	app_paused 2
	app_continue
	app_paused 3
	rc replicas --json "$POOL"
	[ "$(json '.replicas[2].disk')" = Outdated ]
	[ "$(json '.replicas[0].disk')" = UpToDate ]
	# the primary dies; c's daemon comes back with its stale copy
	kill -KILL "$APID"
	wait "$APID" || true
	APID=
	DPID3=
	start_third
	# every copy is a live copy without its writer: Consistent to its
	# target; a and b took a new generation id when c was left behind
	for t in "$T" "$T2" "$T3"; do
		rc list --json "$t/r1/app"
		[ "$(json '.pools[0].state')" = syncing ]
		[ "$(json '.pools[0].disk')" = Consistent ]
	done
	local ga gc
	ga=$("$RPMEMCTL" list --json "$T/r1/app" | jq -r '.pools[0].generations | join(",")')
	gc=$("$RPMEMCTL" list --json "$T3/r1/app" | jq -r '.pools[0].generations | join(",")')
	[ "$("$RPMEMCTL" list --json "$T2/r1/app" | jq -r '.pools[0].generations | join(",")')" = "$ga" ]
	[ "${ga#*,}" = "$gc" ]
	# Pacemaker starts and monitors every node: scores from disk states
	for n in a b c; do
		on3 $n start
		[ "$status" -eq 0 ]
		on3 $n monitor
		[ "$status" -eq 0 ]
	done
	cat "$W/scores"
	[ "$(score a)" = 100 ]
	[ "$(score b)" = 100 ]
	[ -z "$(score c)" ]
	grep -q "app/c.*Outdated\|r1/app is Outdated" "$W/ha.log"
	# the stale copy is not promoted, even when asked, unless forced
	on3 c promote
	[ "$status" -eq 1 ]
	[[ "$output" == *"ocf-exit-reason:"*"is Outdated"* ]]
	[ ! -e "$W/c.obj" ]
	# the UpToDate copy is: its file holds every acknowledged write
	on3 a promote
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(get_copy "$W/a.obj" 0)" = zero ]
	[ "$(get_copy "$W/a.obj" 1)" = one ]
	[ "$(get_copy "$W/a.obj" 2)" = two ]
	cmp "$W/a.obj" "$R1/app"
	on3 a monitor
	[ "$status" -eq 8 ]
	# forced, the stale copy is promoted with what it has
	on3 c promote OCF_RESKEY_force_promote=true
	[ "$status" -eq 0 ]
	[ "$(get_copy "$W/c.obj" 0)" = zero ]
	[ "$(get_copy "$W/c.obj" 1)" != one ]
}

@test "ocf: quorum: a Consistent copy is promoted only when n - k + 1 copies are seen and none is newer: with its peer down, refused by default (k = 1, every copy must be seen) and under quorum 1, promoted under quorum 2 (fail-stop k = n)" {
	# both copies consistent and equal (setup's mirrors)
	stop_second
	on a start
	[ "$status" -eq 0 ]
	on a promote OCF_RESKEY_quorum=1
	[ "$status" -eq 1 ]
	[[ "$output" == *"ocf-exit-reason:"*"is Consistent: only 1 of 2 copies seen (quorum 1 needs 2)"* ]]
	[ ! -e "$W/a.obj" ]
	on a promote
	[ "$status" -eq 1 ]
	[[ "$output" == *"ocf-exit-reason:"*"is Consistent: only 1 of 2 copies seen (quorum 1 needs 2)"* ]]
	[ ! -e "$W/a.obj" ]
	on a promote OCF_RESKEY_quorum=2
	[ "$status" -eq 0 ]
	cmp "$W/src" "$W/a.obj"
}

# score_stubs -- crm_master and crm_attribute of the test's in $W/sbin,
# appending "NODE ARGS" to $W/scores
score_stubs() {
	mkdir -p "$W/sbin"
	for b in crm_master crm_attribute; do
		printf '#!/bin/sh\necho "$SCORE_NODE $*" >>"$SCORES"\n' >"$W/sbin/$b"
		chmod +x "$W/sbin/$b"
	done
	: >"$W/scores"
}

@test "ocf: partition under the degraded policy: the primary writes alone while its secondary is cut off; the secondary gets no score and its promotion is refused by default, so no acknowledged write is lost" {
	score_stubs
	POOL=$W/app.obj
	export RPMEM_REPLICATE="$POOL=$T/r1/app,$T2/r1/app"
	export RPMEM_REPLICATE_POLICY=degraded RPMEM_REPLICATE_RETRY=never
	export PMEM_IS_PMEM_FORCE=0
	app_start set:0:zero pause set:1:one pause
	app_paused 1
	# the partition: b's copy cannot be reached from a; the primary
	# goes on alone (degraded), its write acknowledged
	kill -KILL "$DPID2"
	wait "$DPID2" || true
	app_continue
	app_paused 2
	kill -KILL "$APID"
	wait "$APID" || true
	APID=
	[ "$(get_copy "$POOL" 1)" = one ]
	# seen from b: a unreachable, b's own copy back
	stop_daemon
	start_second
	# b, cut off from a, is monitored: no score, promote refused
	local peers="a=$T/r1/app b=$T2/r1/app"
	on b start OCF_RESKEY_target="$T2/r1/app" OCF_RESKEY_peers="$peers" \
		SCORE_NODE=b SCORES="$W/scores" HA_SBIN_DIR="$W/sbin"
	[ "$status" -eq 0 ]
	on b monitor OCF_RESKEY_target="$T2/r1/app" OCF_RESKEY_peers="$peers" \
		SCORE_NODE=b SCORES="$W/scores" HA_SBIN_DIR="$W/sbin"
	[ "$status" -eq 0 ]
	cat "$W/scores"
	[ -z "$(score b)" ]
	on b promote OCF_RESKEY_target="$T2/r1/app" OCF_RESKEY_peers="$peers"
	[ "$status" -eq 1 ]
	[[ "$output" == *"ocf-exit-reason:"*"only 1 of 2 copies seen"* ]]
	[ ! -e "$W/b.obj" ]
}

@test "ocf: the crashed primary returns: its rpmemd was cut off, the application went on with the peer, then crashed; its own copy is Outdated but its primary file's history is the newest of all: scored and promoted, holding every write" {
	score_stubs
	POOL=$W/app.obj
	export RPMEM_REPLICATE="$POOL=$T/r1/app,$T2/r1/app"
	export RPMEM_REPLICATE_POLICY=degraded RPMEM_REPLICATE_RETRY=never
	export PMEM_IS_PMEM_FORCE=0
	app_start set:0:zero pause set:1:one pause set:2:two pause
	app_paused 1
	# a's own rpmemd dies; the application goes on with b
	kill -KILL "$DPID"
	wait "$DPID" || true
	DPID=
	app_continue
	app_paused 2
	app_continue
	app_paused 3
	kill -KILL "$APID"
	wait "$APID" || true
	APID=
	start_daemon
	local peers="a=$T/r1/app b=$T2/r1/app"
	local -a env=(OCF_RESKEY_target="$T/r1/app" OCF_RESKEY_file="$POOL"
		OCF_RESKEY_peers="$peers" SCORE_NODE=a SCORES="$W/scores"
		HA_SBIN_DIR="$W/sbin")
	# a's copy is behind b's (Outdated)
	local ga gb
	ga=$("$RPMEMCTL" list --json "$T/r1/app" | jq -r '.pools[0].generations | join(",")')
	gb=$("$RPMEMCTL" list --json "$T2/r1/app" | jq -r '.pools[0].generations | join(",")')
	[ "$ga" != "$gb" ]
	on a start "${env[@]}"
	[ "$status" -eq 0 ]
	on a monitor "${env[@]}"
	[ "$status" -eq 0 ]
	cat "$W/scores"
	[ "$(score a)" = 100 ]
	grep -q "is Outdated, but the primary file" "$W/ha.log"
	# a file that lacks the peer's newest id is not (its history's newest
	# id dropped): no score, promote refused
	cp "$POOL.rpmemgen" "$W/gen.saved"
	sed -i '2s/^ids=[0-9a-f]*,/ids=/' "$POOL.rpmemgen"
	on a monitor "${env[@]}"
	[ "$status" -eq 0 ]
	[ -z "$(score a)" ]
	on a promote "${env[@]}"
	[ "$status" -eq 1 ]
	[[ "$output" == *"ocf-exit-reason:"*"is Outdated"* ]]
	cp "$W/gen.saved" "$POOL.rpmemgen"
	on a monitor "${env[@]}"
	[ "$(score a)" = 100 ]
	on a promote "${env[@]}"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(cat "$W/state.a")" = Promoted ]
	[ "$(get_copy "$POOL" 0)" = zero ]
	[ "$(get_copy "$POOL" 1)" = one ]
	[ "$(get_copy "$POOL" 2)" = two ]
	on a monitor "${env[@]}"
	[ "$status" -eq 8 ]
	# the application restarted on it resyncs both copies, refused by none
	app set:3:three
	echo "$output"
	[ "$status" -eq 0 ]
	cmp "$POOL" "$R1/app"
	cmp "$POOL" "$R1B/app"
}

@test "ocf: a peer whose rpmemd hangs (SIGSTOP) counts as unreachable: monitor and promote end within their timeouts (run under them, as Pacemaker would) and the copy is promoted under quorum 2 (fail-stop, k = n)" {
	on a start
	[ "$status" -eq 0 ]
	kill -STOP "$DPID2"
	# Pacemaker kills an action past its timeout (monitor 20 s)
	on a monitor OCF_RESKEY_peer_timeout=2 timeout -s KILL 20
	local st=$status
	on a promote OCF_RESKEY_peer_timeout=2 OCF_RESKEY_quorum=2 timeout -s KILL 60
	local sp=$status
	kill -CONT "$DPID2"
	[ "$st" -eq 0 ]
	[ "$sp" -eq 0 ]
	cmp "$W/src" "$W/a.obj"
}

@test "ocf: the agent's pushes (post-start notify, demote) to a copy promoted and written elsewhere are refused: its bytes unchanged, the refusal logged" {
	on a start
	[ "$status" -eq 0 ]
	on b start
	[ "$status" -eq 0 ]
	on a promote
	[ "$status" -eq 0 ]
	notify_started a b
	[ "$status" -eq 0 ]
	cmp "$W/a.obj" "$R1B/db"
	# A is cut off (its state kept: it still takes itself for the
	# primary); B is promoted (quorum 2: A's copy is not seen), written,
	# and its writes reach its copy
	stop_daemon
	on b promote OCF_RESKEY_quorum=2
	[ "$status" -eq 0 ]
	poke "$W/b.obj" $((2 << 20))
	on b demote
	[ "$status" -eq 0 ]
	cmp "$W/b.obj" "$R1B/db"
	cp "$R1B/db" "$W/b.copy"
	# A returns: its notify of B's start pushes A's file, which never saw
	# B's writes, to B's copy: refused, logged, the copy as it was
	start_daemon
	: >"$W/ha.log"
	notify_started a b
	[ "$status" -eq 0 ]
	cat "$W/ha.log"
	grep -q "ERROR.*sync of $W/a.obj to b (.*) refused" "$W/ha.log"
	cmp "$R1B/db" "$W/b.copy"
	# and its demotion: its own copy takes the file (the same history),
	# B's copy refuses it and keeps B's writes
	: >"$W/ha.log"
	on a demote
	cat "$W/ha.log"
	grep -q "ERROR.*sync of $W/a.obj to b (.*) refused" "$W/ha.log"
	cmp "$R1B/db" "$W/b.copy"
	cmp "$R1/db" "$W/a.obj"
}

# fence_stub RC -- a fence-peer handler in $W/fence.sh that appends
# "ACTION TARGET committed=N" (N: the transactions the application had
# logged as committed when it ran) to $W/fence.log and exits with RC
fence_stub() {
	echo "$1" >"$W/fence.rc"
	cat >"$W/fence.sh" <<EOF
#!/bin/sh
echo "\$RPMEM_FENCE_ACTION \$RPMEM_FENCE_TARGET committed=\$(grep -c '^committed' '$W/app.out')" >>'$W/fence.log'
exit \$(cat '$W/fence.rc')
EOF
	chmod +x "$W/fence.sh"
	: >"$W/fence.log"
	export RPMEM_FENCE_PEER_HANDLER="$W/fence.sh"
}

# fence_logged ACTION TARGET N -- the handler ran ACTION for TARGET N times
# or more
fence_logged() {
	[ "$(grep -c "^$1 $2 " "$W/fence.log")" -ge "$3" ]
}

@test "ocf: fence-peer: the application fences a copy it goes on without before it acknowledges a write that copy lacks, and unfences it once resynced" {
	fence_stub 0
	POOL=$W/app.obj
	export RPMEM_REPLICATE="$POOL=$T/r1/app,$T2/r1/app"
	export RPMEM_REPLICATE_POLICY=degraded RPMEM_REPLICATE_RETRY=0
	export PMEM_IS_PMEM_FORCE=0 RPMEM_LOG_LEVEL=info
	app_start set:0:zero pause records:until
	app_paused 1
	# both copies hold every write: nothing fenced; both unfenced at the
	# first round (a writer before may have fenced one)
	cat "$W/fence.log"
	[ "$(grep -c '^fence ' "$W/fence.log")" -eq 0 ]
	wait_for grep -q "^unfence $T2/r1/app " "$W/fence.log"
	grep -q "^unfence $T/r1/app " "$W/fence.log"
	kill -KILL "$DPID2"
	wait "$DPID2" 2>/dev/null || true
	DPID2=
	app_continue
	wait_for grep -q "^committed 5$" "$W/app.out"
	cat "$W/fence.log"
	# fenced once, before the first write B lacks was acknowledged
	[ "$(grep -c '^fence ' "$W/fence.log")" -eq 1 ]
	grep -q "^fence $T2/r1/app committed=0$" "$W/fence.log"
	grep -q "fence-peer: $T2/r1/app fenced by" "$W/app.err"
	# B back: resynced by the application, then unfenced
	start_second
	wait_for fence_logged unfence "$T2/r1/app" 2
	grep -q "resynced: '$POOL' is replicated to $T2/r1/app again" \
		"$W/app.err"
	echo stop >&5
	app_finish
	[ "$ASTATUS" -eq 0 ]
	[ "$(grep -c '^fence ' "$W/fence.log")" -eq 1 ]
	cmp "$POOL" "$R1B/app"
}

@test "ocf: fence-peer: the application's only copy lost (one target, as in the two-node cluster): fenced before the next write is acknowledged, though no drain round is sent without it" {
	fence_stub 0
	POOL=$W/app.obj
	export RPMEM_REPLICATE="$POOL=$T2/r1/app"
	export RPMEM_REPLICATE_POLICY=degraded RPMEM_REPLICATE_RETRY=never
	export PMEM_IS_PMEM_FORCE=0
	app_start set:0:zero pause records:until
	app_paused 1
	[ "$(grep -c '^fence ' "$W/fence.log")" -eq 0 ]
	kill -KILL "$DPID2"
	wait "$DPID2" 2>/dev/null || true
	DPID2=
	app_continue
	wait_for grep -q "^committed 5$" "$W/app.out"
	echo stop >&5
	app_finish
	cat "$W/app.err" "$W/fence.log"
	[ "$ASTATUS" -eq 0 ]
	[ "$(grep -c '^fence ' "$W/fence.log")" -eq 1 ]
	grep -q "^fence $T2/r1/app committed=0$" "$W/fence.log"
}

@test "ocf: fence-peer: a handler that fails stops the application before it acknowledges a write the cut-off copy lacks; a copy down at the start is fenced before the first write" {
	fence_stub 1
	POOL=$W/app.obj
	export RPMEM_REPLICATE="$POOL=$T/r1/app,$T2/r1/app"
	export RPMEM_REPLICATE_POLICY=degraded RPMEM_REPLICATE_RETRY=never
	export PMEM_IS_PMEM_FORCE=0
	app_start set:0:zero pause records:until
	app_paused 1
	kill -KILL "$DPID2"
	wait "$DPID2" 2>/dev/null || true
	DPID2=
	app_continue
	alive_until "$APID" grep -q aborting "$W/app.err" || true
	app_finish
	cat "$W/app.err" "$W/fence.log"
	# aborted (SIGABRT), nothing acknowledged after the cut-off
	[ "$ASTATUS" -eq 134 ]
	refute grep -q '^committed' "$W/app.out"
	grep -q "^fence $T2/r1/app committed=0$" "$W/fence.log"
	grep -q "could not fence $T2/r1/app (exit status 1)" "$W/app.err"
	# B down from the start: fenced before the first write is acknowledged
	fence_stub 0
	rm -f "$POOL" "$POOL".rpmem*
	app_start records:3
	app_finish
	cat "$W/app.err" "$W/fence.log"
	[ "$ASTATUS" -eq 0 ]
	grep -q "^fence $T2/r1/app committed=0$" "$W/fence.log"
}

@test "ocf: fencing=resource-only: after the Promoted node's crash the surviving node's live copy, its peer unreachable, is scored and promoted with every acknowledged write; without fencing it gets no score" {
	score_stubs
	POOL=$W/app.obj
	# node a's application replicates a's file to b's copy, as in the
	# two-node cluster; then node a crashes (application and rpmemd)
	export RPMEM_REPLICATE="$POOL=$T2/r1/app"
	export RPMEM_REPLICATE_POLICY=degraded RPMEM_REPLICATE_RETRY=never
	export PMEM_IS_PMEM_FORCE=0
	app_start set:0:zero pause set:1:one pause
	app_paused 1
	app_continue
	app_paused 2
	kill -KILL "$APID"
	wait "$APID" || true
	APID=
	stop_daemon
	local peers="a=$T/r1/app b=$T2/r1/app"
	local b=(OCF_RESKEY_target="$T2/r1/app" OCF_RESKEY_peers="$peers"
		 SCORE_NODE=b SCORES="$W/scores" HA_SBIN_DIR="$W/sbin")
	on b start "${b[@]}"
	[ "$status" -eq 0 ]
	on b monitor "${b[@]}"
	[ "$status" -eq 0 ]
	cat "$W/scores"
	[ -z "$(score b)" ]
	on b monitor "${b[@]}" OCF_RESKEY_fencing=resource-only
	[ "$status" -eq 0 ]
	[ "$(score b)" = 100 ]
	on b promote "${b[@]}" OCF_RESKEY_fencing=resource-only
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(get_copy "$W/b.obj" 0)" = zero ]
	[ "$(get_copy "$W/b.obj" 1)" = one ]
	on b validate-all "${b[@]}" OCF_RESKEY_fencing=always
	[ "$status" -eq 6 ]
}

@test "ocf: the node's own copy named in peers by one of its addresses is counted once, and a refused promotion drops the node's stale score" {
	score_stubs
	stop_second
	local a=(OCF_RESKEY_peers="self=localhost:$PORT/r1/db b=$T2/r1/db"
		 SCORE_NODE=a SCORES="$W/scores" HA_SBIN_DIR="$W/sbin")
	on a start "${a[@]}"
	[ "$status" -eq 0 ]
	on a promote "${a[@]}"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"ocf-exit-reason:"*"only 1 of 2 copies seen"* ]]
	[ ! -e "$W/a.obj" ]
	cat "$W/scores"
	[[ "$(grep '^a ' "$W/scores" | tail -1)" == *-D* ]]
}

@test "ocf: a node whose primary file holds writes its UpToDate copy lacks (a crashed primary's, a split brain) gets no promotion score: a promotion would be refused" {
	score_stubs
	local a=(SCORE_NODE=a SCORES="$W/scores" HA_SBIN_DIR="$W/sbin")
	on a start "${a[@]}"
	[ "$status" -eq 0 ]
	on a promote "${a[@]}"
	[ "$status" -eq 0 ]
	on a demote "${a[@]}"
	[ "$status" -eq 0 ]
	on a monitor "${a[@]}"
	[ "$status" -eq 0 ]
	[ "$(score a)" = 100 ]
	# the file took an id no copy has (written since, as by a primary
	# that crashed here while its copy was promoted elsewhere)
	sed -i 's/^ids=/ids=0123456789abcdef,/' "$W/a.obj.rpmemgen"
	on a monitor "${a[@]}"
	[ "$status" -eq 0 ]
	cat "$W/scores"
	[ -z "$(score a)" ]
	grep -q "holds writes this copy lacks (its history's generation 0123456789abcdef)" "$W/ha.log"
}

@test "ocf: rpmem-fence-peer places the constraint that forbids the Promoted role on the cut-off copy's node (its node looked up from the copy's address in corosync's node list), once, and removes it on unfence" {
	command -v cibadmin >/dev/null || skip "cibadmin (Debian package pacemaker-cli-utils) is not installed"
	cibadmin --empty >"$W/cib.xml"
	sed -i -e 's|<nodes/>|<nodes><node id="1" uname="node1"/><node id="2" uname="node2"/></nodes>|' \
	    -e 's|<resources/>|<resources><clone id="db-clone"><meta_attributes id="m"><nvpair id="p" name="promotable" value="true"/></meta_attributes><primitive id="db" class="ocf" provider="rpmem" type="rpmem"/></clone></resources>|' \
	    "$W/cib.xml"
	mkdir -p "$W/bin"
	printf '#!/bin/sh\nprintf "nodelist.node.0.name (str) = node1\\nnodelist.node.0.ring0_addr (str) = 192.0.2.10\\nnodelist.node.1.name (str) = node2\\nnodelist.node.1.ring0_addr (str) = 192.0.2.11\\n"\n' >"$W/bin/corosync-cmapctl"
	chmod +x "$W/bin/corosync-cmapctl"
	local fp=(env CIB_file="$W/cib.xml" PATH="$W/bin:$PATH"
		  RPMEM_FENCE_TARGET=192.0.2.11:7636/ha/db
		  RPMEM_FENCE_FILE=/var/lib/db/db.obj)
	run "${fp[@]}" RPMEM_FENCE_ACTION=fence "$TOP/ocf/rpmem-fence-peer" db-clone
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"fenced node2's copy 192.0.2.11:7636/ha/db"* ]]
	run "${fp[@]}" RPMEM_FENCE_ACTION=fence "$TOP/ocf/rpmem-fence-peer" db-clone
	[ "$status" -eq 0 ]
	grep -o '<rsc_location[^>]*>' "$W/cib.xml" >"$W/loc"
	cat "$W/loc"
	[ "$(wc -l <"$W/loc")" -eq 1 ]
	grep -q 'id="rpmem-fence-db-clone-node2" rsc="db-clone" role="Promoted" node="node2" score="-INFINITY"' "$W/loc"
	# an address no node has: not fenced, an error (the writer stops)
	run "${fp[@]}" RPMEM_FENCE_ACTION=fence RPMEM_FENCE_TARGET=192.0.2.99:7636/ha/db \
		"$TOP/ocf/rpmem-fence-peer" db-clone
	[ "$status" -eq 1 ]
	[[ "$output" == *"no corosync node has the address '192.0.2.99'"* ]]
	run "${fp[@]}" RPMEM_FENCE_ACTION=unfence "$TOP/ocf/rpmem-fence-peer" db-clone
	[ "$status" -eq 0 ]
	refute grep -q rsc_location "$W/cib.xml"
	run "${fp[@]}" RPMEM_FENCE_ACTION=unfence "$TOP/ocf/rpmem-fence-peer" db-clone
	[ "$status" -eq 0 ]
	[[ "$output" == *"nothing to remove"* ]]
	# a name that could break the XML is refused
	run "${fp[@]}" RPMEM_FENCE_ACTION=fence "$TOP/ocf/rpmem-fence-peer" 'db"x' node2
	[ "$status" -eq 2 ]
}
