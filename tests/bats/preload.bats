#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# preload.bats -- unmodified libpmemobj applications replicated by LD_PRELOAD

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
	[ -z "${SUID_DIR:-}" ] || rm -rf "$SUID_DIR"
	[ -z "${APID:-}" ] || kill -KILL "$APID" 2>/dev/null || true
	[ -z "${PROXY:-}" ] || kill "$PROXY" 2>/dev/null || true
	teardown_daemon
}

# replica_get I -- slot I of the target's pool file, opened by libpmemobj
# (recovery included) on a copy, without the preload library
replica_get() {
	cp "$REP" "$W/copy.obj"
	"$APP" "$W/copy.obj" "get:$1"
}

# marked_extents -- the extents marked in $POOL.rpmemlog: the bits of the
# bitmap after its 4 KiB header (lib/client/sync/dirtylog.c)
marked_extents() {
	python3 -c 'import sys
d = open(sys.argv[1], "rb").read()[4096:]
print(sum(bin(b).count("1") for b in d))' "$POOL.rpmemlog"
}

# pool_field F -- field F of the target's pool app (rpmemctl list --json)
pool_field() {
	rc list --json "$T/r1"
	[ "$status" -eq 0 ]
	json ".pools[] | select(.name==\"app\") | .$1"
}

@test "an unmodified libpmemobj application under LD_PRELOAD leaves a byte-identical, consistent replica when it exits" {
	app set:0:alpha put:1:beta
	[ "$status" -eq 0 ]
	cmp "$POOL" "$REP"
	[ "$(pool_field state)" = consistent ]
	[ "$(pool_field source)" = "$(hostname):$POOL" ]
	[ "$(replica_get 0)" = alpha ]
	[ "$(replica_get 1)" = beta ]
}

@test "a user's rpmemctl.conf with an entry for the target (as every remote target needs) is used, not taken for an error" {
	mkdir -p "$XDG_CONFIG_HOME/rpmem"
	printf 'targets = ( { host = "127.0.0.1"; plaintext = true; } );\n' \
		>"$XDG_CONFIG_HOME/rpmem/rpmemctl.conf"
	app set:0:conf
	[ "$status" -eq 0 ]
	[[ "$output" != *"Operation not permitted"* ]]
	cmp "$POOL" "$REP"
	[ "$(replica_get 0)" = conf ]
	# the wildcard entry of an operator's file too
	printf 'targets = ( { host = "*"; plaintext = true; } );\n' \
		>"$XDG_CONFIG_HOME/rpmem/rpmemctl.conf"
	app set:1:wild
	[ "$status" -eq 0 ]
	[ "$(replica_get 1)" = wild ]
}

@test "pmempool create obj under LD_PRELOAD creates the replica, which passes pmempool check on the target" {
	run env LD_PRELOAD="$PRELOAD" pmempool create obj --size 16M \
		--layout rpmem "$POOL"
	[ "$status" -eq 0 ]
	cmp "$POOL" "$REP"
	[ "$(pool_field state)" = consistent ]
	run pmempool check -v "$REP"
	[ "$status" -eq 0 ]
	[[ "$output" == *consistent* ]]
}

@test "a transaction and a pmemobj_persist (msync path) are on the target when they return: after SIGKILL the replica holds them, stays syncing (live) and opens with libpmemobj" {
	app set:0:committed put:1:persisted kill
	[ "$status" -eq 137 ]
	[ "$(pool_field state)" = syncing ]
	[ "$(pool_field source)" = "$(hostname):$POOL (live)" ]
	[ "$(replica_get 0)" = committed ]
	[ "$(replica_get 1)" = persisted ]
	run pmempool check "$W/copy.obj"
	[ "$status" -eq 0 ]
}

@test "on persistent memory (flush, drain, pmem_memcpy path) the same holds after SIGKILL" {
	export PMEM_IS_PMEM_FORCE=1
	app set:0:committed put:1:persisted kill
	[ "$status" -eq 137 ]
	[ "$(pool_field state)" = syncing ]
	[ "$(replica_get 0)" = committed ]
	[ "$(replica_get 1)" = persisted ]
}

@test "a pmemobj_persist has been flushed on the target when it returns: the paused application's value is in the replica and counted as a flush" {
	app_start put:0:first pause put:1:second pause
	app_paused 1
	local flushes
	flushes=$(pool_field flushes)
	app_continue
	app_paused 2
	[ "$(pool_field flushes)" -gt "$flushes" ]
	[ "$(replica_get 1)" = second ]
	app_continue
	app_finish
	[ "$ASTATUS" -eq 0 ]
}

@test "libpmem2: the memcpy, persist and flush/drain functions of a map of a configured file are on the target when they return" {
	head -c 4M /dev/zero >"$POOL"
	run env LD_PRELOAD="$PRELOAD" "$BUILD/tests/pmem2_app" "$POOL" \
		memcpy:4096:copied store:8192:persisted flush:12288:drained kill
	[ "$status" -eq 137 ]
	[ "$(pool_field state)" = syncing ]
	[ "$(dd if="$REP" bs=1 skip=4096 count=6 2>/dev/null)" = copied ]
	[ "$(dd if="$REP" bs=1 skip=8192 count=9 2>/dev/null)" = persisted ]
	[ "$(dd if="$REP" bs=1 skip=12288 count=7 2>/dev/null)" = drained ]
}

@test "an application's own SIGBUS handler (sigaction or signal) reads back as its own and gets the SIGBUS it is sent; the writes are on the target" {
	head -c 4M /dev/zero >"$POOL"
	run env LD_PRELOAD="$PRELOAD" "$BUILD/tests/pmem2_app" "$POOL" \
		sigbus raise-bus store:4096:first sigbus-signal raise-bus \
		store:8192:second kill
	[ "$status" -eq 137 ]
	[ "$(grep -c '^sigbus own$' <<<"$output")" -eq 2 ]
	[ "$(grep -c '^SIGBUS sent$' <<<"$output")" -eq 2 ]
	[ "$(dd if="$REP" bs=1 skip=4096 count=5 2>/dev/null)" = first ]
	[ "$(dd if="$REP" bs=1 skip=8192 count=6 2>/dev/null)" = second ]
}

@test "SIGBUS under the preload library behaves as without it: sysv_signal resets at delivery, sigset holds and releases, signal reads back (the same output both ways)" {
	head -c 4M /dev/zero >"$POOL"
	steps=(sigbus-sysv raise-bus sigbus-state sigbus-signal sigbus-hold
		raise-bus sigbus-sigset sigbus-state raise-bus
		store:4096:after)
	run env -u LD_PRELOAD "$BUILD/tests/pmem2_app" "$POOL" "${steps[@]}"
	[ "$status" -eq 0 ]
	plain=$output
	[ "$(grep -c '^SIGBUS sent$' <<<"$plain")" -eq 3 ]
	[[ "$plain" == *"sigbus default"*"sigset was hold"* ]]
	head -c 4M /dev/zero >"$POOL"
	run env LD_PRELOAD="$PRELOAD" "$BUILD/tests/pmem2_app" "$POOL" \
		"${steps[@]}"
	[ "$status" -eq 0 ]
	[ "$output" = "$plain" ]
	[ "$(pool_field state)" = consistent ]
	[ "$(dd if="$REP" bs=1 skip=4096 count=5 2>/dev/null)" = after ]
}

@test "the library's SIGBUS guard stays under the application's own handler: a flush of a page the file no longer has fails the replication (fail-stop), the application's handler never sees the fault" {
	for how in sigbus sigbus-signal; do
		head -c 4M /dev/zero >"$POOL"
		run env LD_PRELOAD="$PRELOAD" "$BUILD/tests/pmem2_app" "$POOL" \
			"$how" store:1048576:abc truncate:4096 \
			flushonly:1048576:3
		[ "$status" -eq 134 ]
		[[ "$output" == *"sigbus own"* ]]
		[[ "$output" == *"no longer backed by its file (it shrank)"* ]]
		[[ "$output" != *"SIGBUS fault"* ]]
	done
}

@test "a replicated write makes no sigaction call: the library's SIGBUS handler is not checked per write (strace)" {
	command -v strace >/dev/null ||
		skip "strace is missing (packaging/install-deps.sh installs it)"
	head -c 4M /dev/zero >"$POOL"
	run env LD_PRELOAD="$PRELOAD" strace -f -qq -e trace=rt_sigaction \
		-o "$W/sa.trace" "$BUILD/tests/pmem2_app" "$POOL" commits:300
	[ "$status" -eq 0 ]
	[[ "$output" == *"commits 300 "* ]]
	# the handler's install; before, one call per replicated write
	[ "$(grep -c SIGBUS "$W/sa.trace")" -lt 10 ]
	[ "$(pool_field state)" = consistent ]
	cmp "$POOL" "$REP"
}

@test "a transaction's reply is looked for with the read that takes it: no poll first (strace of the application)" {
	command -v strace >/dev/null ||
		skip "strace is missing (packaging/install-deps.sh installs it)"
	run env LD_PRELOAD="$PRELOAD" strace -f -qq -e trace=poll,recvfrom \
		-o "$W/app.trace" "$APP" "$POOL" mt:1:300
	[ "$status" -eq 0 ]
	[[ "$output" == *"mt 1 300 "* ]]
	# the replies were read: a recv each at least
	[ "$(grep -c 'recvfrom(' "$W/app.trace")" -ge 300 ]
	# before, a poll without waiting (the socket and no wake fd) came
	# before every reply's recv
	[ "$(grep -c '{fd=-1}\], 2, 0)' "$W/app.trace")" -lt 30 ]
	[ "$(pool_field state)" = consistent ]
	cmp "$POOL" "$REP"
}

@test "rpmemd waits for a session's next request in the recv that reads it: no poll per request (strace of the daemon)" {
	command -v strace >/dev/null ||
		skip "strace is missing (packaging/install-deps.sh installs it)"
	strace -f -qq -p "$DPID" -e trace=poll,recvfrom -o "$W/d.trace" &
	local sp=$!
	wait_for grep -q "^TracerPid:[[:space:]]*[1-9]" "/proc/$DPID/status"
	app mt:1:300
	[ "$status" -eq 0 ]
	[[ "$output" == *"mt 1 300 "* ]]
	wait_for closed 1
	kill -INT "$sp"
	wait "$sp" || true
	[ "$(grep -c 'recvfrom(' "$W/d.trace")" -ge 300 ]
	# before, every request was awaited by a poll (100 ms: the idle
	# trim's), then read
	[ "$(grep -c 'poll(' "$W/d.trace")" -lt 30 ]
	[ "$(pool_field state)" = consistent ]
	cmp "$POOL" "$REP"
}

@test "libpmem2: one drain after flushes to two replicated files sends both files' FLUSHes before it awaits a reply (their round trips overlap), on the one session the two pools share; both files are on their targets when it returns" {
	head -c 4M /dev/zero >"$POOL"
	head -c 4M /dev/zero >"$W/two"
	# a FLUSH's reply held until another file's FLUSH comes (or 0.3 s)
	python3 "$TOP/tests/peers/flush_proxy.py" 0 "$PORT" 0.3 \
		>"$W/proxy.out" 2>&1 3>&- &
	PROXY=$!
	local pp
	wait_for grep -q "^PORT " "$W/proxy.out"
	pp=$(sed -n 's/^PORT //p' "$W/proxy.out")
	export RPMEM_REPLICATE="$POOL=127.0.0.1:$pp/r1/app,$W/two=127.0.0.1:$pp/r1/two"
	run env LD_PRELOAD="$PRELOAD" "$BUILD/tests/pmem2_app" "$POOL" \
		"also:$W/two" both:4096:first both:8192:second \
		both:12288:third kill
	cat "$W/proxy.out"
	[ "$status" -eq 137 ]
	# each of the three drains: its first FLUSH answered only once the
	# other file's had come (one drain after the other: never)
	[ "$(grep -c ' overlapped$' "$W/proxy.out")" -ge 3 ]
	# the two files' pools on one session: one connection
	[ "$(grep -c '^CONN ' "$W/proxy.out")" -eq 1 ]
	for f in "$REP" "$R1/two"; do
		[ "$(dd if="$f" bs=1 skip=4096 count=5 2>/dev/null)" = first ]
		[ "$(dd if="$f" bs=1 skip=8192 count=6 2>/dev/null)" = second ]
		[ "$(dd if="$f" bs=1 skip=12288 count=5 2>/dev/null)" = third ]
	done
}

@test "an application's global log function gets its own sessions' lines, never the preload library's; those go to the preload library's log" {
	head -c 4M /dev/zero >"$POOL"
	run env LD_PRELOAD="$PRELOAD" RPMEM_LOG_LEVEL=debug \
		"$BUILD/tests/log_app" "$POOL" 127.0.0.1 "$PORT"
	echo "$output"
	[ "$status" -eq 0 ]
	# the preload library replicated: its session existed
	[ "$(dd if="$REP" bs=1 count=5 2>/dev/null)" = hello ]
	# the application's session, once, in the application's log
	[ "$(grep -c "^app-log: 7 session [0-9]* with 127.0.0.1:$PORT " \
		<<<"$output")" -eq 1 ]
	# the preload library's session in its own log, not the application's
	[ "$(grep -c "^rpmem_preload: session [0-9]* with 127.0.0.1:$PORT " \
		<<<"$output")" -eq 1 ]
	# and nothing else reached the application's log
	[ "$(grep -c '^app-log:' <<<"$output")" -eq 1 ]
}

@test "the first mapping brings a replica that is behind up to date before the application goes on" {
	app set:0:first
	[ "$status" -eq 0 ]
	# changed without the library: the replica is behind
	"$APP" "$POOL" set:0:offline
	app_start pause
	app_paused 1
	[ "$(replica_get 0)" = offline ]
	[ "$(pool_field state)" = syncing ]
	app_continue
	app_finish
	[ "$ASTATUS" -eq 0 ]
	cmp "$POOL" "$REP"
	[ "$(pool_field state)" = consistent ]
}

@test "a clean exit without closing the pool still leaves the replica consistent, one generation on" {
	app set:0:one
	[ "$status" -eq 0 ]
	local gen
	gen=$(pool_field generation)
	app set:0:two exit
	[ "$status" -eq 0 ]
	cmp "$POOL" "$REP"
	[ "$(pool_field state)" = consistent ]
	[ "$(pool_field generation)" -eq $((gen + 1)) ]
}

@test "fail-stop: a target that goes away mid-run stops the application at its next persist, with the documented message" {
	app_start set:0:before pause set:1:after
	app_paused 1
	stop_daemon
	app_continue
	app_finish
	[ "$ASTATUS" -eq 134 ] # SIGABRT
	grep -q "rpmem_preload: fail-stop: cannot replicate '$POOL' to $T/r1/app: .*; aborting" "$W/app.err"
	start_daemon
	[ "$(pool_field state)" = syncing ]
	[ "$(replica_get 0)" = before ]
}

@test "fail-stop: an unreachable target makes the pool open fail: the application never runs unreplicated" {
	stop_daemon
	app set:0:never
	[ "$status" -ne 0 ]
	[[ "$output" == *"rpmem_preload: fail-stop: cannot start replicating '$POOL' to $T/r1/app"* ]]
	[[ "$output" != *never* ]]
	# nothing was replicated: no dirty log is left beside the pool
	[ ! -e "$POOL.rpmemlog" ]
}

@test "fail-stop: a target promoted and written as the primary meanwhile is not overwritten: the application does not start over it, saying why" {
	app set:0:first
	[ "$status" -eq 0 ]
	[ -s "$POOL.rpmemgen" ]
	rc promote "$T/r1/app"
	[ "$status" -eq 0 ]
	# the promoted copy is written in place on the target host
	cp "$REP" "$W/promoted.obj"
	"$APP" "$W/promoted.obj" set:0:theirs
	cp "$W/promoted.obj" "$REP"
	rc demote "$T/r1/app"
	app set:0:ours
	[ "$status" -ne 0 ]
	[[ "$output" == *"the target holds newer writes"* ]]
	[[ "$output" != *ours* ]]
	[ "$(replica_get 0)" = theirs ]
	# the pull the message names brings them, and the application runs
	rc sync --pull "$POOL" "$T/r1/app"
	[ "$status" -eq 0 ]
	app get:0
	[ "$status" -eq 0 ]
	[[ "$output" == *theirs* ]]
}

@test "degraded: a replica that cannot start says the target keeps its last image, not that it is syncing" {
	export RPMEM_REPLICATE_POLICY=degraded RPMEM_REPLICATE_RETRY=never
	app set:0:first
	[ "$status" -eq 0 ]
	[ "$(pool_field state)" = consistent ]
	stop_daemon
	app set:1:alone
	[ "$status" -eq 0 ]
	[[ "$output" == *"rpmem_preload: degraded: cannot start replicating '$POOL' to $T/r1/app"*"keeps the image it had"* ]]
	[[ "$output" != *"stays syncing until it is resynced"* ]]
	start_daemon
	[ "$(pool_field state)" = consistent ]
	[ "$(replica_get 1)" != alone ]
}

@test "degraded: the application finishes when the target goes away; the message says degraded and the replica stays syncing" {
	export RPMEM_REPLICATE_POLICY=degraded RPMEM_REPLICATE_RETRY=never
	app_start set:0:before pause set:1:after
	app_paused 1
	stop_daemon
	app_continue
	app_finish
	[ "$ASTATUS" -eq 0 ]
	grep -q "rpmem_preload: degraded: cannot replicate '$POOL' to $T/r1/app" "$W/app.err"
	grep -q "it stays syncing until the next start resyncs it" "$W/app.err"
	start_daemon
	[ "$(pool_field state)" = syncing ]
	[ "$(replica_get 0)" = before ]
	# the next start resyncs it
	app get:1
	[ "$status" -eq 0 ]
	cmp "$POOL" "$REP"
	[ "$(pool_field state)" = consistent ]
	[ "$(replica_get 1)" = after ]
}

@test "degraded: replication resumes with a resync when the target is back" {
	export RPMEM_REPLICATE_POLICY=degraded RPMEM_REPLICATE_RETRY=0
	app_start set:0:before pause set:1:unreplicated pause set:2:resumed \
		pace:10000 persist:until kill
	app_paused 1
	stop_daemon
	app_continue
	app_paused 2
	start_daemon
	app_continue
	# probed and resynced off the persists, which go on meanwhile
	wait_for grep -q "rpmem_preload: resynced: '$POOL' is replicated to $T/r1/app again" \
		"$W/app.err"
	app_continue
	app_finish
	[ "$ASTATUS" -eq 137 ]
	grep -q "rpmem_preload: degraded:" "$W/app.err"
	grep -q "rpmem_preload: resynced: '$POOL' is replicated to $T/r1/app again" "$W/app.err"
	[ "$(pool_field state)" = syncing ]
	[ "$(replica_get 1)" = unreplicated ]
	[ "$(replica_get 2)" = resumed ]
}

@test "degraded: the next start resyncs only the extents the dirty log marked while the target was away; the target's file then equals the local one" {
	export RPMEM_REPLICATE_POLICY=degraded RPMEM_REPLICATE_RETRY=never
	app set:0:first
	[ "$status" -eq 0 ]
	cmp "$POOL" "$REP"
	# the clean exit's sync cleared the log
	[ "$(marked_extents)" -eq 0 ]
	app_start pause set:1:away
	app_paused 1
	stop_daemon
	app_continue
	app_finish
	[ "$ASTATUS" -eq 0 ]
	local n
	n=$(marked_extents)
	[ "$n" -ge 1 ] && [ "$n" -lt 8 ] # of the 16 MiB pool's 16
	start_daemon
	[ "$(written app)" -eq 0 ]
	export RPMEM_LOG_LEVEL=info
	app_start pause
	app_paused 1
	grep -q "rpmem_preload: '$POOL': synced only the extents its dirty log marked" "$W/app.err"
	# the bring-up sent the marked extents (1 MiB each), nothing else;
	# pmemobj_open's own persists since then are a few hundred bytes
	local w
	w=$(written app)
	[ "$w" -ge $((n << 20)) ]
	[ "$w" -lt $(((n << 20) + 65536)) ]
	[ "$(replica_get 1)" = away ]
	app_continue
	app_finish
	[ "$ASTATUS" -eq 0 ]
	cmp "$POOL" "$REP"
	[ "$(pool_field state)" = consistent ]
	[ "$(marked_extents)" -eq 0 ]
}

@test "degraded: the resync when the target is back moves only the extents the dirty log marked meanwhile" {
	export RPMEM_REPLICATE_POLICY=degraded RPMEM_REPLICATE_RETRY=0
	export RPMEM_LOG_LEVEL=info
	app_start set:0:before pause set:1:unreplicated pause set:2:resumed \
		pace:10000 persist:until pause
	app_paused 1
	stop_daemon
	app_continue
	app_paused 2
	local n
	n=$(marked_extents)
	[ "$n" -ge 1 ]
	[ "$n" -lt 8 ]
	start_daemon
	[ "$(written app)" -eq 0 ]
	app_continue
	# probed and resynced off the persists, which go on meanwhile
	wait_for grep -q "rpmem_preload: resynced: '$POOL' is replicated to $T/r1/app again" \
		"$W/app.err"
	app_continue
	app_paused 3
	grep -q "rpmem_preload: '$POOL': synced only the extents its dirty log marked" "$W/app.err"
	# the resync sent the marked extents, then set:2 its few hundred
	# bytes and each persist of the counter its own (a cache line at most)
	local w k
	w=$(written app)
	k=$(awk '/^persist / { print $2 }' "$W/app.out")
	[ "$w" -ge $((n << 20)) ]
	[ "$w" -lt $(((n << 20) + 65536 + 64 * k)) ]
	app_continue
	app_finish
	[ "$ASTATUS" -eq 0 ]
	cmp "$POOL" "$REP"
	[ "$(pool_field state)" = consistent ]
	[ "$(replica_get 1)" = unreplicated ]
	[ "$(replica_get 2)" = resumed ]
}

@test "a process whose configured files are not the ones it maps replicates nothing" {
	export RPMEM_REPLICATE="$W/other.obj=$T/r1/other"
	app set:0:local
	[ "$status" -eq 0 ]
	rc list --json "$T/r1"
	[ "$(json '.pools | length')" -eq 0 ]
	[ ! -e "$W/other.obj" ]
}

@test "an invalid RPMEM_REPLICATE stops the process before it runs, saying why" {
	export RPMEM_REPLICATE="$POOL"
	app set:0:never
	[ "$status" -eq 134 ]
	[[ "$output" == *"rpmem_preload: RPMEM_REPLICATE: '$POOL' is not LOCAL_PATH=HOST[:PORT]/REGION/POOL; stopping"* ]]
	[ ! -e "$POOL" ]
}

# session_counts -- "FLUSHES BARRIERS" of the application's session, from
# the line rpmemd logs when it closes (its own counters)
session_counts() {
	local line
	line=$(grep "(pobj_app librpmemctl" "$DLOG" | tail -n 1)
	local id=${line#*session }
	id=${id%% *}
	grep "session $id from .* closed:" "$DLOG" |
		sed -E 's/.* ([0-9]+) flushes, ([0-9]+) barriers\)$/\1 \2/'
}

@test "commit mode (the default): a transaction's drains inside libpmemobj are barriers; the target counts one awaited FLUSH per transaction" {
	app loop:200
	[ "$status" -eq 0 ]
	cmp "$POOL" "$REP"
	local c
	c=($(session_counts))
	echo "# flushes ${c[0]}, barriers ${c[1]} for 200 transactions" >&3
	# a transaction drains four times, all barriers, and waits once
	# at its commit; opening and creating the pool take a few dozen
	# FLUSHes (838 in all with RPMEM_REPLICATE_DRAIN=every)
	[ "${c[1]}" -ge 600 ]
	[ "${c[0]}" -ge 200 ]
	[ "${c[0]}" -lt 300 ]
}

@test "RPMEM_REPLICATE_DRAIN=every: every drain waits for the target, no barrier" {
	RPMEM_REPLICATE_DRAIN=every app loop:200
	[ "$status" -eq 0 ]
	cmp "$POOL" "$REP"
	local c
	c=($(session_counts))
	echo "# flushes ${c[0]}, barriers ${c[1]} for 200 transactions" >&3
	[ "${c[1]}" -eq 0 ]
	[ "${c[0]}" -ge 800 ]
}

@test "a pmemobj_persist outside a transaction still waits: one FLUSH each, no barrier" {
	app persist:100
	[ "$status" -eq 0 ]
	local c
	c=($(session_counts))
	[ "${c[1]}" -lt 10 ]
	[ "${c[0]}" -ge 100 ]
}

@test "a bad RPMEM_REPLICATE_DRAIN stops the process before it runs, saying why" {
	RPMEM_REPLICATE_DRAIN=sometimes app set:0:x
	[ "$status" -ne 0 ]
	[[ "$output" == *"RPMEM_REPLICATE_DRAIN: 'sometimes' is neither 'commit' nor 'every'"* ]]
}

@test "RPMEM_REPLICATE_SPIN: without a spin and with the longest the replica is the same; a bad value stops the process, saying why" {
	RPMEM_REPLICATE_SPIN=0 app loop:50
	[ "$status" -eq 0 ]
	cmp "$POOL" "$REP"
	RPMEM_REPLICATE_SPIN=10000 app loop:50
	[ "$status" -eq 0 ]
	cmp "$POOL" "$REP"
	RPMEM_REPLICATE_SPIN=fast app set:0:x
	[ "$status" -ne 0 ]
	[[ "$output" == *"RPMEM_REPLICATE_SPIN: 'fast' is not a number of microseconds (0 to 10000)"* ]]
}

# slow_link MS -- a proxy to rpmemd that holds what the application sends
# for MS ms (tests/tools/delay_line.c); RPMEM_REPLICATE goes through it
slow_link() {
	local pp
	pp=$(free_port)
	"$BUILD/tests/delay_line" "$pp" "$PORT" "$1" \
		>"$W/proxy.out" 2>&1 3>&- &
	PROXY=$!
	wait_for grep -q ready "$W/proxy.out"
	export RPMEM_REPLICATE="$POOL=127.0.0.1:$pp/r1/app"
}

@test "over a slow link a commit returns only once the target has the transaction; a flush without a drain is not waited for" {
	# the replica first, at full speed: the start below sends little
	app set:0:first
	[ "$status" -eq 0 ]
	slow_link 700
	# libpmemobj's flush/drain path (on msync, a flush drains too)
	export PMEM_IS_PMEM_FORCE=1
	app_start set:1:committed store:2:flushed pause kill
	app_paused 1
	# at the pause: the store was flushed, not drained, so the link
	# still holds it (what makes the next check meaningful); the
	# transaction before it returned, so it is on the target
	[ "$(replica_get 2)" != flushed ]
	[ "$(replica_get 1)" = committed ]
	app_continue
	app_finish
}

# kill_round I [PID] -- run transactions under the library, SIGKILL them
# (or PID, e.g. the daemon's) at a random point, then check_copy I
kill_round() {
	LD_PRELOAD="$PRELOAD" "$APP" "$POOL" records:100000 \
		>"$W/rec.out" 2>"$W/rec.err" &
	APID=$!
	# a target kill lands among transactions, after the start's resync
	if [ -n "${2:-}" ]; then
		alive_until "$APID" grep -q "^committed [1-9]" "$W/rec.out" ||
			true
	fi
	# not a wait: a random point for the kill
	sleep "0.$((RANDOM % 150 + 50))"
	kill -KILL "${2:-$APID}"
	wait "${2:-$APID}" || true
	kill -KILL "$APID" 2>/dev/null || true
	wait "$APID" || true
	APID=
	check_copy "$1"
}

# check_copy I -- 0 if every record printed as committed is on the
# target, none is torn and pmempool check passes, else 1 with the reason
# in $WHY
check_copy() {
	local out counter
	LAST=$(awk '$1 == "committed" {n = $2} END {print n + 0}' "$W/rec.out")
	cp "$REP" "$W/copy.obj"
	if ! pmempool check "$W/copy.obj" >"$W/check.out" 2>&1; then
		WHY="kill $1: pmempool check: $(cat "$W/check.out" "$W/rec.err")"
		return 1
	fi
	if ! out=$("$APP" "$W/copy.obj" check 2>&1); then
		WHY="kill $1: the copy does not open: $out"
		return 1
	fi
	counter=$(awk '$1 == "counter" {print $2}' <<<"$out")
	if [[ "$out" == *torn* ]]; then
		WHY="kill $1: $out"
		return 1
	fi
	if [ "$counter" -lt "$LAST" ]; then
		WHY="kill $1: committed $LAST, target $counter"
		return 1
	fi
}

# daemon_kill_round I -- kill_round I killing rpmemd (a target crash) and
# starting it again
daemon_kill_round() {
	local dpid=$DPID ret=0
	DPID=
	kill_round "$1" "$dpid" || ret=1
	start_daemon
	return $ret
}

@test "commit mode: 100 SIGKILLs at random points of a run of transactions; every record printed as committed is on the target, none torn, pmempool check passes" {
	app records:1
	[ "$status" -eq 0 ]
	local i
	for i in $(seq 100); do
		kill_round "$i" || { echo "$WHY"; false; }
	done
	echo "# 100 kills; the last run had committed $LAST records" >&3
}

@test "commit mode: 30 SIGKILLs of rpmemd (a target crash) at random points of a run of transactions leave the target a committed, untorn image" {
	app records:1
	[ "$status" -eq 0 ]
	local i
	for i in $(seq 30); do
		daemon_kill_round "$i" || { echo "$WHY"; false; }
	done
	echo "# 30 target kills; the last run had committed $LAST records" >&3
}

@test "the same check fails against a target that breaks the barriers' order (build/tests/rpmemd-reorder: a crash persisting part of a transaction's data and not the undo log before it)" {
	stop_daemon
	RPMEMD=$BUILD/tests/rpmemd-reorder
	start_daemon
	app records:1
	[ "$status" -eq 0 ]
	stop_daemon
	local i found=
	for i in $(seq 16); do
		RPMEMD_REORDER_CRASH_AT=$((RANDOM % 50 + 10)) start_daemon
		LD_PRELOAD="$PRELOAD" "$APP" "$POOL" records:100000 \
			>"$W/rec.out" 2>"$W/rec.err" || true
		wait "$DPID" || true
		DPID=
		grep -q "reorder: crashing at this FLUSH" "$DLOG"
		if ! check_copy "$i"; then
			found=$WHY
			break
		fi
	done
	[ -n "$found" ]
	echo "# found after $i target crashes: ${found%%$'\n'*}" >&3
}

@test "group commit: 8 threads of transactions share round trips: the target sees fewer FLUSHes than transactions, and every record is on it at exit" {
	app mt:8:500 mtcheck
	[ "$status" -eq 0 ]
	[[ "$output" == *"mt 8 500 "* ]]
	[[ "$output" != *torn* ]]
	cmp "$POOL" "$REP"
	cp "$REP" "$W/copy.obj"
	run "$APP" "$W/copy.obj" mtcheck
	[ "$(grep -c ' 500$' <<<"$output")" -eq 8 ]
	# the session that carried them (the largest flush count): one
	# FLUSH per commit without group commit, 4000 or more
	local flushes
	flushes=$(sed -n 's/.*closed: .* \([0-9]*\) flushes, .*/\1/p' "$DLOG" |
		sort -n | tail -1)
	echo "# 4000 transactions in 8 threads: $flushes FLUSHes" >&3
	[ "$flushes" -gt 0 ]
	[ "$flushes" -lt 4000 ]
}

@test "group commit: 20 SIGKILLs of 8 threads of transactions; every record a thread printed as committed is on the target, none torn, pmempool check passes" {
	app mt:1:1
	[ "$status" -eq 0 ]
	local i t last got total=0
	for i in $(seq 20); do
		LD_PRELOAD="$PRELOAD" "$APP" "$POOL" mtrec:8:100000 \
			>"$W/rec.out" 2>"$W/rec.err" &
		APID=$!
		# some commits printed (the bring-up comes first), then a kill
		alive_until "$APID" grep -q committed "$W/rec.out" || true
		# not a wait: a random point for the kill
		sleep "0.$((RANDOM % 300))"
		kill -KILL "$APID"
		wait "$APID" || true
		APID=
		cp "$REP" "$W/copy.obj"
		pmempool check "$W/copy.obj" >"$W/check.out" 2>&1 ||
			{ cat "$W/check.out" "$W/rec.err"; false; }
		run "$APP" "$W/copy.obj" mtcheck
		[ "$status" -eq 0 ]
		[[ "$output" != *torn* ]] || { echo "kill $i: $output"; false; }
		for t in $(seq 0 7); do
			last=$(awk -v t="$t" '$1 == "committed" && $2 == t \
				{n = $3} END {print n + 0}' "$W/rec.out")
			got=$(awk -v t="$t" '$1 == "thread" && $2 == t \
				{print $3}' <<<"$output")
			[ "$got" -ge "$last" ] || { echo "kill $i: thread" \
				"$t committed $last, target $got"; false; }
		done
		total=$((total + $(grep -c committed "$W/rec.out")))
	done
	echo "# 20 kills after $total commits printed in all" >&3
	[ "$total" -gt 0 ]
}

# secure_run NAME -- $SUID_DIR/NAME FILE written, FILE $SUID_DIR/NAME.bin
# configured to replicate to r1/NAME (no client configuration)
secure_run() {
	run env RPMEM_REPLICATE="$SUID_DIR/$1.bin=$T/r1/$1" \
		XDG_CONFIG_HOME="$SUID_DIR/xdg" HOME="$SUID_DIR" \
		"$SUID_DIR/$1" "$SUID_DIR/$1.bin" written
	echo "$output"
}

@test "in a set-uid program (secure execution) the library replicates nothing and says so once; the same program not set-uid replicates" {
	[ "$(id -u)" -eq 0 ] || skip "making a set-uid copy of another user needs root"
	SUID_DIR=$(mktemp -d /tmp/rpmem-suid.XXXXXX)
	chmod 755 "$SUID_DIR"
	local n
	for n in plain suid; do
		cp "$BUILD/tests/secure_app" "$SUID_DIR/$n"
		head -c 1M /dev/zero >"$SUID_DIR/$n.bin"
	done
	# not set-uid: replicated (the test would see a replica)
	secure_run plain
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "secure 0" ]
	cmp "$SUID_DIR/plain.bin" "$R1/plain"
	# set-uid nobody, started by root: the kernel sets AT_SECURE
	chown nobody "$SUID_DIR" "$SUID_DIR/suid" "$SUID_DIR/suid.bin"
	chmod 4755 "$SUID_DIR/suid"
	secure_run suid
	[ "$status" -eq 0 ]
	grep -qx "secure 1" <<<"$output"
	[ "$(grep -c 'rpmem_preload' <<<"$output")" -eq 1 ]
	grep -q "rpmem_preload: a set-uid or set-gid program (secure execution): its environment is not trusted; nothing is replicated" <<<"$output"
	# the program ran as without the library; the target got nothing
	[ "$(head -c 7 "$SUID_DIR/suid.bin")" = written ]
	[ ! -e "$R1/suid" ]
	refute grep -q "pool r1/suid" "$DLOG"
}

@test "a copy promoted in place and written under the preload library carries the pool's history on: the copy it replicates to holds the promotion id, and the old primary is refused there as behind, not as unrelated" {
	app set:0:first
	[ "$status" -eq 0 ]
	rc sync "$POOL" "$T/r1/c"
	[ "$status" -eq 0 ]
	rc promote --json "$T/r1/app"
	[ "$status" -eq 0 ]
	local prom
	prom=$(json '.generations[0]')
	# the target host's application writes the promoted copy in place,
	# replicating it to c
	run env LD_PRELOAD="$PRELOAD" RPMEM_REPLICATE="$REP=$T/r1/c" \
		"$APP" "$REP" set:0:theirs
	[ "$status" -eq 0 ]
	cmp "$REP" "$R1/c"
	[[ ",$("$RPMEMCTL" list --json "$T/r1/c" | jq -r '.pools[0].generations | join(",")')," == *",$prom,"* ]]
	cp "$R1/c" "$W/held_c"
	# the old primary never saw those writes
	rc sync "$POOL" "$T/r1/c"
	[ "$status" -eq 4 ]
	[[ "$output" == *"holds newer writes"* ]]
	cmp "$W/held_c" "$R1/c"
	cp "$R1/c" "$W/copy.obj"
	[ "$("$APP" "$W/copy.obj" get:0)" = theirs ]
}
