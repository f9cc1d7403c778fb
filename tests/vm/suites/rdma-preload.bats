#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# rdma-preload.bats -- the preload library, atomic syncs and versions over
# RDMA; run on the initiator guest by suites/rdma-preload.sh (see there).
# Tests run in file order and share files in $W.

# the bed's polling helpers (vm_wait_for, vm_alive_until)
# shellcheck source=../guest/lib.sh
. "$(dirname "$BATS_TEST_FILENAME")/../guest/lib.sh"

setup_file()
{
	export W=/tmp/rdma-preload.work
	export T=$TARGET_IP
	export MIB=$((1024 * 1024))
	rm -rf "$W"
	mkdir -p "$W"
	echo 0 >"$W/seq"
}

teardown_file()
{
	rm -rf "$W"
}

setup()
{
	cd "$W" || return 1
	APP=$RPMEM_BUILD/tests/pobj_app
	PRELOAD=$RPMEM_BUILD/librpmem_preload.so
	SNAP=$RESULTS/rdma-preload.snap
	unset RPMEM_REPLICATE RPMEM_REPLICATE_TRANSPORT
	export PMEM_IS_PMEM_FORCE=0
}

teardown()
{
	[ -z "${APID:-}" ] || kill -KILL "$APID" 2>/dev/null || true
}

ctl()
{
	"$RPMEM_BUILD/rpmemctl" "$@"
}

# json_is FILTER CMD... -- CMD's JSON satisfies FILTER
json_is()
{
	local filter=$1 out

	shift
	out=$("$@") || {
		echo "exit $?: $out"
		return 1
	}
	echo "$out"
	jq -e "$filter" <<<"$out" >/dev/null
}

# rp_request CMD ARGS... -- the target runs rp_req_CMD (rdma-preload.sh);
# its output on ours
rp_request()
{
	local n sync=$RESULTS/.sync/rdma-preload

	n=$(($(cat "$W/seq") + 1))
	echo "$n" >"$W/seq"
	echo "$n $*" >"$sync.initiator.req.tmp"
	mv "$sync.initiator.req.tmp" "$sync.initiator.req"
	vm_wait_for -t 300 test -e "$sync.target.rep-$n" || {
		echo "the target did not answer '$*'"
		return 1
	}
	cat "$RESULTS/rdma-preload.rep-$n"
}

# up -- wait until rpmemd answers (after a restart on the target)
up()
{
	vm_wait_for -t 20 answers
}

# answers -- rpmemd on the target answers a LIST
answers()
{
	ctl -q list "$T" >/dev/null 2>&1
}

dlog()
{
	cat "$RESULTS/rdma-preload.rpmemd.log"
}

# since_apm -- rpmemd's log since it first started with apm.conf
since_apm()
{
	dlog | sed -n '/=== rpmemd -c apm.conf/,$p'
}

# opens REGION POOL -- the transport of each open of the pool, as rpmemd
# logged it ("session N: opened pool R/P (rw, STATE, generation G, X)")
opens()
{
	dlog | sed -n "s|.*: opened pool $1/$2 (.*, \\([a-z]*\\))\$|\\1|p" |
		tr '\n' ' '
}

# last_session REGION POOL -- rpmemd's log of the pool's last open, from
# "opened pool R/P" to "closed pool R/P"
last_session()
{
	dlog | awk -v o="opened pool $1/$2 (" -v c="closed pool $1/$2 (" '
		index($0, o) { b = ""; on = 1 }
		on { b = b $0 "\n" }
		on && index($0, c) { on = 0; last = b }
		END { printf "%s", last }'
}

# persistence REGION POOL -- "MODE FLUSHES" of the pool's last open, as
# rpmemd's RDMA listener logged it: "GPSPM", "GPSPM, staging buffer" or
# "APM", and the GPSPM flushes it served
persistence()
{
	last_session "$1" "$2" | sed -n \
		-e 's/.*rdma: session connected (\(.*\))$/\1/p' \
		-e 's/.*rdma: session disconnected .* after \([0-9]*\) GPSPM flushes.*/\1/p' |
		paste -sd ' '
}

# waits OUTPUT -- "MODE AWAITED BARRIERS EVENTS" of the client's RDMA
# connection as it logged them when closing it (RPMEM_LOG_LEVEL=info): APM
# or GPSPM, the flushes it waited for, the barriers it posted without
# waiting, the completion events it took (its wake-ups for completions)
waits()
{
	sed -n 's/.*rdma: closing the connection to .* (\([A-Z]*\)): \([0-9]*\) flushes awaited, \([0-9]*\) barriers not awaited, \([0-9]*\) completion events$/\1 \2 \3 \4/p' <<<"$1" |
		tail -1
}

# all_rdma REGION POOL -- rpmemd opened the pool, only ever over rdma
all_rdma()
{
	local o

	o=$(opens "$1" "$2")
	echo "opens of $1/$2: $o"
	[[ "$o" == *rdma* ]] && [[ "$o" != *tcp* ]]
}

# state REGION POOL -- "STATE PENDING RECOVERABLE_GENERATION", as listed
state()
{
	ctl list --json "$T/$1/$2" |
		jq -r '.pools[0] | "\(.state) \(.pending) \(.recoverable_generation)"'
}

# wait_closed REGION POOL -- until rpmemd has closed the sessions that
# had the pool open (a killed client's is noticed after a while)
wait_closed()
{
	vm_wait_for no_session "$1" "$2" && return 0
	echo "rpmemd still has $1/$2 open"
	return 1
}

# no_session REGION POOL -- rpmemd has no session with the pool open
no_session()
{
	[ "$(ctl status --json "$T" | jq "[.sessions[] |
		select(.region == \"$1\" and .pool == \"$2\")] | length")" = 0 ]
}

# pool_check FILE -- the target's copy passes pmempool check (on a copy
# in /tmp, $W/snap.obj: $RESULTS is 9p without shared mappings)
pool_check()
{
	cp "$1" "$W/snap.obj"
	if command -v pmempool >/dev/null; then
		pmempool check "$W/snap.obj" || return 1
	else
		echo "# pmempool is not installed: pobj_app's check only" >&3
	fi
}

# snap_check FILE LAST -- the target's copy passes pmempool check and
# pobj_app's check: counter >= LAST, no torn record
snap_check()
{
	local out counter

	pool_check "$1" || return 1
	out=$("$APP" "$W/snap.obj" check) || return 1
	echo "$out"
	counter=$(awk '$1 == "counter" {print $2}' <<<"$out")
	[[ "$out" != *torn* ]] && [ "${counter:-0}" -ge "$2" ]
}

# replicate REGION POOL [HOST] -- RPMEM_REPLICATE for $W/POOL.obj
replicate()
{
	export RPMEM_REPLICATE="$W/$2.obj=${3:-$T}/$1/$2"
}

# clean_run REGION POOL -- pobj_app commits 50 records and exits; the
# target's bytes equal the local pool, its check passes
clean_run()
{
	replicate "$1" "$2"
	run env LD_PRELOAD="$PRELOAD" "$APP" "$W/$2.obj" records:50
	tail -3 <<<"$output"
	[ "$status" -eq 0 ]
	all_rdma "$1" "$2"
	dlog | grep -F "closed pool $1/$2 (rw, rdma)"
	[ "$(state "$1" "$2")" = "consistent false null" ]
	rp_request snap "$1" "$2"
	cmp "$W/$2.obj" "$SNAP"
	snap_check "$SNAP" 50
}

# kill_loop REGION POOL N -- N runs of pobj_app committing records, each
# killed with SIGKILL at a random point: every record it printed as
# committed is in the target's bytes, none torn, pmempool check passes
kill_loop()
{
	local i last

	replicate "$1" "$2"
	for ((i = 1; i <= $3; i++)); do
		# the flush/drain path and the msync path in turn (RP_FORCE:
		# one of them)
		export PMEM_IS_PMEM_FORCE=${RP_FORCE:-$((i % 2))}
		LD_PRELOAD="$PRELOAD" "$APP" "$W/$2.obj" records:1000000 \
			>"$W/rec.out" 2>"$W/rec.err" &
		APID=$!
		vm_alive_until -t 120 "$APID" grep -q committed "$W/rec.out" || {
			kill -0 "$APID" 2>/dev/null || cat "$W/rec.err"
			return 1
		}
		# not a wait: a random point among the transactions
		sleep "0.$((RANDOM % 80 + 10))"
		kill -KILL "$APID"
		wait "$APID" || true
		APID=
		wait_closed "$1" "$2"
		last=$(awk '$1 == "committed" {n = $2} END {print n + 0}' \
			"$W/rec.out")
		echo "kill $i: $last records committed"
		# a region that keeps versions keeps a live writer's journal
		# (pending); the devdax one keeps none
		case "$1" in
		fs) [[ "$(state "$1" "$2")" == "syncing true "* ]] ;;
		*) [ "$(state "$1" "$2")" = "syncing false null" ] ;;
		esac
		rp_request snap "$1" "$2"
		# a devdax snapshot restarted rpmemd: the next run needs it
		up
		snap_check "$SNAP" "$last" ||
			{ echo "kill $i: committed $last"; return 1; }
		echo "# $1/$2 kill $i: $last committed, target: $(
			"$APP" "$W/snap.obj" check | head -1)" >&3
	done
	all_rdma "$1" "$2"
}

# syncing_now REGION POOL -- the pool is syncing; each look's time and
# state are added to $seen
syncing_now()
{
	st=$(state "$1" "$2")
	seen="$seen ${SECONDS}s:${st%% *}"
	[[ "$st" == syncing* ]]
}

# interrupt REGION POOL FILE STATE -- a sync of FILE over rdma at 1 MiB/s,
# kill -9 of rpmemctl once the pool is syncing; the pool's state is then
# STATE ("STATE PENDING RECOVERABLE_GENERATION")
interrupt()
{
	local pid st='' seen=''

	# not ctl: $! must be rpmemctl's pid, not a subshell's
	# shellcheck disable=SC2086 # INT_FLAGS: options, split on purpose
	"$RPMEM_BUILD/rpmemctl" sync ${INT_FLAGS:-} --json --transport rdma \
		--bwlimit 1M "$3" "$T/$1/$2" >"$W/int.json" 2>"$W/int.err" &
	pid=$!
	vm_wait_for -t 30 syncing_now "$1" "$2" || true
	# not a wait: a random point of the sync
	sleep "0.$((RANDOM % 40 + 10))"
	kill -0 "$pid" || { echo "the sync ended before the kill: $seen"; return 1; }
	kill -9 "$pid"
	wait "$pid" || true
	wait_closed "$1" "$2"
	st=$(state "$1" "$2")
	echo "states seen:$seen; after the kill: $st"
	cat "$W/int.json" "$W/int.err"
	[ "$st" = "$4" ]
}

@test "status: the target serves rdma" {
	json_is '.rdma == true' ctl status --json "$T"
}

@test "auto (the default): the preload library's replica into devdax goes over rdma (rpmemd's log), GPSPM; after a clean exit the target holds the pool byte for byte" {
	clean_run dd pl-dd
	# GPSPM: each commit's flush went through rpmemd
	local p
	p=$(persistence dd pl-dd)
	echo "rpmemd: $p"
	[[ "$p" == "GPSPM "* ]]
	[ "${p##* }" -ge 50 ]
}

@test "auto: the replica into fsdax goes over rdma through rpmemd's DRAM staging copy (GPSPM); the target holds the pool byte for byte" {
	clean_run fs pl-fs
	dlog | grep -E "pool fs/pl-fs: DRAM staging copy of 16 MiB"
	local p
	p=$(persistence fs pl-fs)
	echo "rpmemd: $p"
	[[ "$p" == "GPSPM, staging buffer "* ]]
	[ "${p##* }" -ge 50 ]
}

@test "auto to an address without an RDMA device: the replica goes over tcp (rpmemd's log), the target holds the pool" {
	replicate dd pl-nr "$RD_NORDMA_IP"
	run env LD_PRELOAD="$PRELOAD" "$APP" "$W/pl-nr.obj" records:5
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(opens dd pl-nr)" = "tcp " ]
	rp_request snap dd pl-nr
	cmp "$W/pl-nr.obj" "$SNAP"
}

@test "RPMEM_REPLICATE_TRANSPORT=tcp to the RDMA address: tcp; =rdma to the address without RDMA: the pool open fails with the reason" {
	export RPMEM_REPLICATE_TRANSPORT=tcp
	replicate dd pl-nr
	run env LD_PRELOAD="$PRELOAD" "$APP" "$W/pl-nr.obj" records:5
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(opens dd pl-nr)" = "tcp tcp " ]
	export RPMEM_REPLICATE_TRANSPORT=rdma
	replicate dd pl-nr "$RD_NORDMA_IP"
	cp "$W/pl-nr.obj" "$W/before"
	run env LD_PRELOAD="$PRELOAD" "$APP" "$W/pl-nr.obj" records:5
	echo "$output"
	[ "$status" -ne 0 ]
	[[ "$output" == *"rdma is not available on $RD_NORDMA_IP"* ]]
	[ "$(opens dd pl-nr)" = "tcp tcp " ]
	cmp "$W/pl-nr.obj" "$W/before"
}

@test "GPSPM, devdax: SIGKILLs of a libpmemobj application at random points; every record it printed as committed is on the target, none torn" {
	kill_loop dd pl-dd "${SUITE_RP_KILLS:-2}"
}

@test "GPSPM, fsdax: the same" {
	kill_loop fs pl-fs "${SUITE_RP_KILLS:-2}"
}

@test "GPSPM, devdax: libpmemobj's drains inside a transaction wait for nothing: the transaction's writes travel in one batch request with its commit, which alone waits; rpmemd applied every range; the target holds the pool" {
	local n=500 w mode awaited barriers events reqs ranges wakes
	replicate dd pl-gb
	run env LD_PRELOAD="$PRELOAD" RPMEM_LOG_LEVEL=info \
		PMEM_IS_PMEM_FORCE=1 "$APP" "$W/pl-gb.obj" loop:$n
	grep -v "^rpmem" <<<"$output"
	[ "$status" -eq 0 ]
	w=$(waits "$output")
	echo "client: mode, flushes awaited, barriers not awaited, completion events: $w"
	read -r mode awaited barriers events <<<"$w"
	# rpmemd: "after N GPSPM flushes (M with inline data, B batches; W
	# wake-ups)"
	read -r ranges reqs wakes < <(last_session dd pl-gb | sed -n \
		's/.*rdma: session disconnected .* after \([0-9]*\) GPSPM flushes .*, \([0-9]*\) batches; \([0-9]*\) wake-ups)$/\1 \2 \3/p')
	echo "# GPSPM loop:$n: $(awk '$1 == "loop" {print $3 / 1000}' \
		<<<"$output") us per transaction, $awaited flushes awaited, $barriers barriers not awaited, $events completion events; rpmemd: ${reqs:-?} requests, ${ranges:-?} ranges, ${wakes:-?} wake-ups" >&3
	[ "$mode" = GPSPM ]
	# one wait per commit (and a few at open and close); before, every
	# barrier waited: about five per transaction
	[ "$awaited" -le $((n + n / 2)) ]
	[ "$barriers" -ge $((3 * n)) ]
	# one request per commit, carrying the ranges of every drain
	[ -n "$reqs" ] && [ "$reqs" -le $((n + n / 2)) ]
	[ "${ranges:-0}" -ge $((3 * n)) ]
	# about one wake-up per request on each end: the replies' send
	# completions wake neither (each woke rpmemd, and the requests' the
	# client: about two a request on each end)
	[ -n "$wakes" ] && [ "$wakes" -le $((reqs + reqs / 4 + 8)) ]
	[ "$events" -le $((awaited + awaited / 2 + 8)) ]
	all_rdma dd pl-gb
	rp_request snap dd pl-gb
	up
	cmp "$W/pl-gb.obj" "$SNAP"
	pool_check "$SNAP"
}

@test "GPSPM: a target that answers batches before it persists them and persists them out of order (the test build rpmemd-rdma-reorder) fails the SIGKILL check" {
	[ -x "$RPMEM_BUILD/tests/rpmemd-rdma-reorder" ]
	rp_request conf gpspm reorder
	up
	# the flush/drain path: a transaction's drains in one batch
	RP_FORCE=1 run kill_loop dd pl-ro 10
	echo "$output"
	rp_request conf gpspm
	up
	dlog | grep -F "TEST BUILD: GPSPM requests answered before they are persisted"
	[ "$status" -ne 0 ]
	# the check itself failed (a torn record or one missing), not the run
	[[ "$output" == *"kill "*": committed "* ]]
}

@test "APM: rpmemd restarted with direct_pmem = true; the devdax replica is registered for APM, the fsdax one is staged (GPSPM only)" {
	rp_request conf apm
	up
	clean_run dd pl-dd
	since_apm | grep -A5 "registered in place (APM and GPSPM)" |
		grep "opened pool dd/pl-dd (rw, .*, rdma)"
	# APM: 50 commits persisted with RDMA flushes, none through rpmemd
	[ "$(persistence dd pl-dd)" = "APM 0" ]
	clean_run fs pl-fs
	since_apm | grep -A5 "serving it through a DRAM staging buffer of 16 MiB (GPSPM only)" |
		grep "opened pool fs/pl-fs (rw, .*, rdma)"
	local p
	p=$(persistence fs pl-fs)
	echo "rpmemd: $p"
	[[ "$p" == "GPSPM, staging buffer "* ]]
	[ "${p##* }" -ge 50 ]
}

@test "APM, devdax: libpmemobj's drains inside a transaction are RDMA flushes posted without waiting, only the commit waits (fewer waits than drains); the target holds the pool" {
	local n=500 w mode awaited barriers events
	# its own pool: loop: bumps the counter without records
	replicate dd pl-lp
	run env LD_PRELOAD="$PRELOAD" RPMEM_LOG_LEVEL=info \
		PMEM_IS_PMEM_FORCE=1 "$APP" "$W/pl-lp.obj" loop:$n
	grep -v "^rpmem" <<<"$output"
	[ "$status" -eq 0 ]
	w=$(waits "$output")
	echo "client: mode, flushes awaited, barriers not awaited, completion events: $w"
	read -r mode awaited barriers events <<<"$w"
	echo "# APM loop:$n: $(awk '$1 == "loop" {print $3 / 1000}' \
		<<<"$output") us per transaction, $awaited flushes awaited, $barriers barriers not awaited, $events completion events" >&3
	[ "$mode" = APM ]
	# one wait per commit (and a few at open and close), at least three
	# of a transaction's four drains not awaited
	[ "$awaited" -le $((n + n / 2)) ]
	[ "$barriers" -ge $((3 * n)) ]
	# about one wake-up per awaited flush: the writes' completions are
	# signalled one in several (each small one woke the client before)
	[ "$events" -le $((awaited + awaited / 2 + 8)) ]
	# rpmemd served no flush: every one was an RDMA read
	[ "$(persistence dd pl-lp)" = "APM 0" ]
	all_rdma dd pl-lp
	rp_request snap dd pl-lp
	cmp "$W/pl-lp.obj" "$SNAP"
	pool_check "$SNAP"
}

@test "APM, devdax: SIGKILLs; every committed record on the target, none torn" {
	kill_loop dd pl-dd "${SUITE_RP_KILLS:-2}"
}

@test "APM configuration, fsdax (staged, GPSPM): SIGKILLs; every committed record on the target, none torn" {
	kill_loop fs pl-fs "${SUITE_RP_KILLS:-2}"
	rp_request conf gpspm
	up
}

@test "atomic sync over rdma into fsdax, rpmemctl killed mid-way: pending; rollback gives the old image byte for byte, the next sync the new one" {
	head -c $((16 * MIB)) /dev/urandom >old
	head -c $((16 * MIB)) /dev/urandom >new
	json_is '.transport == "rdma"' \
		ctl mirror --json --transport rdma old "$T/fs/at-p"
	interrupt fs at-p new "syncing true 1"
	rp_request snap fs at-p
	! cmp -s new "$SNAP" || false
	json_is '.state == "consistent" and .generation == 1' \
		ctl rollback --json "$T/fs/at-p"
	rp_request snap fs at-p
	cmp old "$SNAP"
	[ "$(state fs at-p)" = "consistent false null" ]
	interrupt fs at-p new "syncing true 1"
	json_is '.transport == "rdma" and .identical and .generation == 2' \
		ctl sync --json --transport rdma new "$T/fs/at-p"
	rp_request snap fs at-p
	cmp new "$SNAP"
	[ "$(state fs at-p)" = "consistent false null" ]
	# mirror, sync (killed), rollback (no data: tcp), sync (killed), sync
	[ "$(opens fs at-p)" = "rdma rdma tcp rdma rdma " ]
}

@test "a version kept by a sync over rdma is restored byte for byte (pull --at reads it with READ_AT on the control connection, whatever the data plane)" {
	json_is '[.versions[].generation] == [1]' ctl versions --json "$T/fs/at-p"
	rm -f v1
	ctl -q sync --pull --at 1 v1 "$T/fs/at-p"
	cmp old v1
	ctl -q verify --at 1 old "$T/fs/at-p"
}

@test "devdax keeps no journal: an interrupted sync over rdma leaves the pool syncing without pending, rollback refuses, the next sync completes" {
	json_is '.transport == "rdma"' \
		ctl mirror --json --transport rdma old "$T/dd/at-d"
	# old and new are two files: the pool's history is old's
	INT_FLAGS=--no-history interrupt dd at-d new "syncing false null"
	run ctl rollback "$T/dd/at-d"
	echo "$output"
	[ "$status" -eq 4 ]
	[[ "$output" == *"with no undo journal"* ]]
	rp_request snap dd at-d
	up
	! cmp -s new "$SNAP" || false
	echo "# devdax, interrupted: the pool equals the old image: $(
		cmp -s old "$SNAP" && echo yes || echo 'no, a mix')" >&3
	json_is '.transport == "rdma" and .identical' \
		ctl sync --no-history --json --transport rdma new "$T/dd/at-d"
	rp_request snap dd at-d
	up
	cmp new "$SNAP"
	[ "$(state dd at-d)" = "consistent false null" ]
}
