#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# splitbrain.bats -- a crash failover is no split brain: a primary killed
# while replicating live resyncs from the promoted copy without a discard;
# a real split brain (writes on both sides) is still refused, its retries
# add no id, and it is reported (docs/ARCHITECTURE.md, "A crash is not a
# split brain")

load helpers
load pobj

setup() {
	setup_daemon
	POOL=$W/app.obj
	REP=$R1/app
	export RPMEM_REPLICATE="$POOL=$T/r1/app"
	export PMEM_IS_PMEM_FORCE=0
	unset RPMEM_REPLICATE_POLICY RPMEM_REPLICATE_RETRY
}

teardown() {
	[ -z "${APID:-}" ] || kill -KILL "$APID" 2>/dev/null || true
	teardown_daemon
}

# nids FILE -- how many ids FILE's history (FILE.rpmemgen) holds
nids() {
	sed -n 's/^ids=//p' "$1.rpmemgen" | tr ',' '\n' | grep -c .
}

# get FILE I -- slot I of a copy of FILE, read without the library
get() {
	cp "$1" "$W/copy.obj"
	"$APP" "$W/copy.obj" "get:$2"
}

# failover -- the copy promoted in place after the primary's crash
# (forced: a live copy is syncing), written there as the new primary
# (slot 0 "theirs"), demoted again for the failback; its image kept in
# $W/promoted.obj
failover() {
	rc promote -f "$T/r1/app"
	[ "$status" -eq 0 ]
	cp "$REP" "$W/promoted.obj"
	"$APP" "$W/promoted.obj" set:0:theirs
	cp "$W/promoted.obj" "$REP"
	rc demote "$T/r1/app"
	[ "$status" -eq 0 ]
}

@test "a primary killed while replicating live, its copy promoted and written: the old primary's push is refused as behind, not as a split brain, and it resyncs from the new primary without --discard-local" {
	app set:0:first put:1:acked kill
	[ "$status" -eq 137 ]
	failover
	rc sync "$POOL" "$T/r1/app"
	[ "$status" -eq 4 ]
	[[ "$output" == *"the target holds newer writes"* ]]
	[[ "$output" != *"split brain"* ]]
	cmp "$W/promoted.obj" "$REP"
	rc sync --pull "$POOL" "$T/r1/app"
	[ "$status" -eq 0 ]
	cmp "$POOL" "$REP"
	[ "$(get "$POOL" 0)" = theirs ]
	[ "$(get "$POOL" 1)" = acked ]
	# the failback is complete: the application runs on over the copy
	app set:2:again
	[ "$status" -eq 0 ]
	cmp "$POOL" "$REP"
}

@test "a primary killed while replicating live is restarted under the library after the failover: it is told to pull the new primary's writes, not that it is a split brain" {
	app set:0:first kill
	[ "$status" -eq 137 ]
	failover
	app set:0:ours
	[ "$status" -ne 0 ]
	[[ "$output" == *"the target holds newer writes"* ]]
	[[ "$output" != *"split brain"* ]]
	cmp "$W/promoted.obj" "$REP"
}

@test "a real split brain (the old primary ran degraded without its target, the copy was promoted and written) is still refused both ways, nothing is overwritten, and refused retries add no id" {
	app set:0:first kill
	[ "$status" -eq 137 ]
	# a partition: the old primary restarts and runs degraded, alone
	stop_daemon
	RPMEM_REPLICATE_POLICY=degraded RPMEM_REPLICATE_RETRY=never \
		app set:1:ours
	[ "$status" -eq 0 ]
	refute grep -q '^live=' "$POOL.rpmemgen"
	start_daemon
	failover
	cp "$POOL" "$W/ours.obj"
	rc sync "$POOL" "$T/r1/app"
	[ "$status" -eq 4 ]
	[[ "$output" == *"split brain"* ]]
	rc sync --pull "$POOL" "$T/r1/app"
	[ "$status" -eq 4 ]
	[[ "$output" == *"split brain"* ]]
	local n
	n=$(nids "$POOL")
	# the old primary is written again between retries: no id per retry
	"$APP" "$POOL" set:2:more
	rc sync "$POOL" "$T/r1/app"
	[ "$status" -eq 4 ]
	[ "$(nids "$POOL")" -eq "$n" ]
	"$APP" "$POOL" set:3:evenmore
	rc sync --pull "$POOL" "$T/r1/app"
	[ "$status" -eq 4 ]
	[ "$(nids "$POOL")" -eq "$n" ]
	cmp "$W/promoted.obj" "$REP"
	[ "$(get "$POOL" 1)" = ours ]
	[ "$(get "$POOL" 3)" = evenmore ]
	[ "$(get "$REP" 0)" = theirs ]
	# the application again, degraded: its start refused as a split
	# brain, and replicas says so (exit 4), not only its stderr
	RPMEM_REPLICATE_POLICY=degraded RPMEM_REPLICATE_RETRY=never \
		app set:4:again
	[ "$status" -eq 0 ]
	[[ "$output" == *"split brain"* ]]
	rc replicas "$POOL"
	[ "$status" -eq 4 ]
	[[ "$output" == *"split brain: "*" refused since its last completed sync"* ]]
	rc replicas --json "$POOL"
	[ "$status" -eq 4 ]
	[ "$(json .split_brains)" -ge 1 ]
	cmp "$W/promoted.obj" "$REP"
}

# split [nowrite] -- $W/f (8 MiB) synced to r1/$P (p unless set), then
# both written while apart: the target promoted and written in place (4
# KiB at 1 MiB; with nowrite only promoted) and demoted again, f written
# at 5 MiB; both kept in held_l and held_t
split() {
	P=${P:-p}
	mkfile "$W/f" 8
	rc sync "$W/f" "$T/r1/$P"
	[ "$status" -eq 0 ]
	rc promote "$T/r1/$P"
	[ "$status" -eq 0 ]
	if [ "${1:-}" != nowrite ]; then
		head -c 4096 /dev/urandom |
			dd of="$R1/$P" bs=4096 seek=256 conv=notrunc 2>/dev/null
	fi
	rc demote "$T/r1/$P"
	[ "$status" -eq 0 ]
	poke "$W/f" $((5 << 20))
	cp "$W/f" "$W/held_l"
	cp "$R1/$P" "$W/held_t"
}

# runs -- how many times the handler ran (it appends to $W/handler.runs)
runs() {
	[ -f "$W/handler.runs" ] && wc -l <"$W/handler.runs" || echo 0
}

@test "a split brain is reported once: rpmemd logs it, an event says split-brain, the handler runs with the file, the pool and both histories in its environment; a refused retry reports nothing again and overwrites nothing" {
	split
	subscribe "$W/ev" --timeout 120 "$T"
	export RPMEM_SPLIT_BRAIN_HANDLER="env | grep '^RPMEM_SB_' | sort >'$W/handler.env'; echo ran >>'$W/handler.runs'"
	rc sync "$W/f" "$T/r1/p"
	[ "$status" -eq 4 ]
	[[ "$output" == *"split brain"* ]]
	wait_for grep -q ran "$W/handler.runs"
	wait_for grep -q '"action":"split-brain"' "$W/ev"
	grep -q "RPMEM_SB_FILE=$W/f$" "$W/handler.env"
	grep -q "RPMEM_SB_TARGET=$T$" "$W/handler.env"
	grep -q "RPMEM_SB_POOL=r1/p$" "$W/handler.env"
	grep -q "RPMEM_SB_REFUSED=push$" "$W/handler.env"
	grep -q "RPMEM_SB_LOCAL_HISTORY=$(sed -n 's/^ids=//p' "$W/f.rpmemgen")$" "$W/handler.env"
	local tg
	tg=$("$RPMEMCTL" list --json "$T/r1/p" | jq -r '.pools[0].generations | join(",")')
	grep -q "RPMEM_SB_TARGET_HISTORY=$tg$" "$W/handler.env"
	# rpmemd's own log names the pool, the refused push and both sides
	grep -q "^rpmemd: warning: session [0-9]*: pool r1/p: split brain: 127.0.0.1:[0-9]* (.*) was refused a push: .*its history $(sed -n 's/^ids=//p' "$W/f.rpmemgen").*the pool's $tg" "$DLOG"
	local ev
	ev=$(grep '"action":"split-brain"' "$W/ev")
	[ "$(jq -r .pool <<<"$ev")" = p ]
	[[ "$(jq -r .text <<<"$ev")" == "split-brain role:secondary refused:push local:"* ]]
	# retries, both ways: refused, nothing reported again
	rc sync "$W/f" "$T/r1/p"
	[ "$status" -eq 4 ]
	rc sync --pull "$W/f" "$T/r1/p"
	[ "$status" -eq 4 ]
	[ "$(grep -c 'split brain' "$DLOG")" -eq 1 ]
	[ "$(grep -c '"action":"split-brain"' "$W/ev")" -eq 1 ]
	# the handler starts with the report (the log's line above), once
	[ "$(runs)" -eq 1 ]
	[ "$(sed -n 's/^split=//p' "$W/f.rpmemgen" | tr ',' '\n' | grep -c .)" -eq 1 ]
	cmp "$W/f" "$W/held_l"
	cmp "$R1/p" "$W/held_t"
	kill "$EPID"
}

@test "promote and demote say so in events: action:promote / action:demote and the role, in lines and JSON" {
	mkfile "$W/f" 4
	rc sync "$W/f" "$T/r1/p"
	[ "$status" -eq 0 ]
	subscribe "$W/ev" --timeout 120 "$T"
	"$RPMEMCTL" events --now --timeout 120 "$T" >"$W/ev.txt" 2>&1 &
	local lpid=$!
	wait_for grep -q '^exists -' "$W/ev.txt"
	rc promote "$T/r1/p"
	[ "$status" -eq 0 ]
	rc demote "$T/r1/p"
	[ "$status" -eq 0 ]
	wait_for grep -q '"action":"demote"' "$W/ev"
	wait_for grep -q 'action:demote' "$W/ev.txt"
	[ "$(grep '"action":"promote"' "$W/ev" | jq -r .text)" = "promote role:primary disk:UpToDate" ]
	[ "$(grep '"action":"demote"' "$W/ev" | jq -r .text)" = "demote role:secondary disk:Consistent" ]
	grep -qE "^change pool name:r1/p state:consistent generation:[0-9]+ size:[0-9]+ session:[0-9]+ action:promote role:primary disk:UpToDate$" "$W/ev.txt"
	grep -qE "^change pool name:r1/p .* action:demote role:secondary disk:Consistent$" "$W/ev.txt"
	grep '"action":"promote"' "$W/ev" |
		python3 "$TOP/tests/json/check.py" "$TOP/tests/json/schema.json" events
	kill "$EPID" "$lpid"
}

@test "after-split-brain policies (opt-in): discard-zero-changes pushes over a copy only promoted, never over one written; discard-younger-primary pushes over the copy promoted after the split; the default refuses" {
	split nowrite
	# the target was promoted but not written: zero changes there
	rc sync "$W/f" "$T/r1/p"
	[ "$status" -eq 4 ]
	[[ "$output" == *"split brain"* ]]
	cmp "$R1/p" "$W/held_t"
	# the local copy was written: the policy never discards it
	RPMEM_AFTER_SB=discard-zero-changes rc sync --pull "$W/f" "$T/r1/p"
	[ "$status" -eq 4 ]
	cmp "$W/f" "$W/held_l"
	RPMEM_AFTER_SB=discard-zero-changes rc sync -v "$W/f" "$T/r1/p"
	[ "$status" -eq 0 ]
	[[ "$output" == *"resolved by the after-split-brain policy discard-zero-changes"* ]]
	cmp "$W/f" "$R1/p"
	rm -f "$W"/f*
	# both written: zero changes discards nothing, younger-primary
	# discards the target's (promoted after the split), from the
	# client's rpmemctl.conf
	P=q split
	RPMEM_AFTER_SB=discard-zero-changes rc sync "$W/f" "$T/r1/q"
	[ "$status" -eq 4 ]
	cmp "$R1/q" "$W/held_t"
	mkdir -p "$XDG_CONFIG_HOME/rpmem"
	printf 'replicate = { after_sb = "discard-younger-primary"; };\n' \
		>"$XDG_CONFIG_HOME/rpmem/rpmemctl.conf"
	rc sync --pull "$W/f" "$T/r1/q"
	[ "$status" -eq 4 ]
	cmp "$W/f" "$W/held_l"
	rc sync "$W/f" "$T/r1/q"
	[ "$status" -eq 0 ]
	cmp "$W/f" "$R1/q"
	# the histories agree again
	[ "$("$RPMEMCTL" list --json "$T/r1/q" | jq -r '.pools[0].generations | join(",")')" = "$(sed -n 's/^ids=//p' "$W/f.rpmemgen")" ]
}

# split_at [POOL] -- the split brain status --json gives pool POOL (p) on $T
split_at() {
	"$RPMEMCTL" status --json "$T" |
		jq -r --arg p "${1:-p}" '.pools[] | select(.name == $p) | .split_brain_at'
}

@test "status and list show a split brain on the target's side until it is resolved: kept across an rpmemd restart, gone after a pull that discards the local writes or a push that discards the target's" {
	split
	[ "$(split_at)" = null ]
	rc sync "$W/f" "$T/r1/p"
	[ "$status" -eq 4 ]
	local t
	t=$(split_at)
	[ "$t" -gt 0 ]
	rc status "$T"
	[ "$status" -eq 0 ]
	[[ "$output" == *"split brain"* ]]
	rc list "$T/r1/p"
	[[ "$output" == *"split brain"* ]]
	"$RPMEMCTL" status --prometheus "$T" |
		grep -q "^rpmem_pool_split_brain_seconds{.*pool=\"p\"} $t$"
	# the daemon keeps it with the pool's metadata, not in memory
	grep -q "^split=$t$" "$R1/.rpmemd/p.meta"
	stop_daemon
	start_daemon
	[ "$(split_at)" = "$t" ]
	# the operator keeps the target's copy: the mark goes
	rc sync --pull --discard-local "$W/f" "$T/r1/p"
	[ "$status" -eq 0 ]
	cmp "$W/f" "$W/held_t"
	[ "$(split_at)" = null ]
	refute grep -q '^split=' "$R1/.rpmemd/p.meta"
	# a second split brain, resolved the other way: the mark goes too
	P=q split
	rc sync "$W/f" "$T/r1/q"
	[ "$status" -eq 4 ]
	[ "$(split_at q)" -gt 0 ]
	rc sync --discard-target "$W/f" "$T/r1/q"
	[ "$status" -eq 0 ]
	cmp "$W/f" "$R1/q"
	[ "$(split_at q)" = null ]
	rc status "$T"
	[[ "$output" != *"split brain"* ]]
}
