#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# pmdk_examples.bats -- PMDK's own example programs, as Debian's
# libpmemobj-dev ships them, built here against Debian's libpmemobj and run
# unmodified under the preload library: SIGKILLed at random points, the
# target's copy of the pool passes pmempool check and holds every insert
# the program acknowledged

load helpers

PRELOAD=$BUILD/librpmem_preload.so
EXAMPLES=${PMDK_EXAMPLES:-/usr/share/doc/libpmemobj-dev/examples}

setup_file() {
	export EX=$BATS_FILE_TMPDIR/ex
	[ -d "$EXAMPLES/map" ] && [ -d "$EXAMPLES/queue" ] || return 0
	mkdir -p "$EX"
	"$TOP/tests/tools/build_pmdk_examples.sh" "$EXAMPLES" "$EX"
}

setup() {
	[ -d "$EXAMPLES/map" ] && [ -d "$EXAMPLES/queue" ] ||
		skip "PMDK's examples are not in $EXAMPLES (libpmemobj-dev)"
	[ -x "$EX/mapcli" ]
	[ -x "$EX/queue_ex" ]
	setup_daemon
	export PMEM_IS_PMEM_FORCE=0
	unset RPMEM_REPLICATE_POLICY RPMEM_REPLICATE_RETRY RPMEM_REPLICATE_DRAIN
}

teardown() {
	[ -z "${APID:-}" ] || kill -KILL "$APID" 2>/dev/null || true
	[ -z "${FEED:-}" ] || kill "$FEED" 2>/dev/null || true
	[ -z "${DRIVER:-}" ] || kill "$DRIVER" 2>/dev/null || true
	teardown_daemon
}

# use_pool NAME -- $POOL is $W/NAME.obj, replicated to r1/NAME ($REP)
use_pool() {
	POOL=$W/$1.obj
	REP=$R1/$1
	: >"$W/acked"
}

# preloaded CMD... -- CMD under the preload library replicating $POOL
# (exec: in the background, $! is CMD itself)
preloaded() {
	exec env LD_PRELOAD="$PRELOAD" \
		RPMEM_REPLICATE="$POOL=$T/r1/${REP##*/}" "$@"
}

# new_pool LAYOUT MIB -- $POOL created by pmempool under the preload library
# (the map example would make 160 MiB itself: every bring-up after a crash,
# which compares the whole file, would take five times longer)
new_pool() {
	(preloaded pmempool create obj --layout "$1" --size "$2M" "$POOL")
}

# lines_at_least FILE RE N -- at least N whole lines of FILE match RE
lines_at_least() {
	[ "$(grep -cx -- "$2" "$1" || true)" -ge "$3" ]
}

# driver_killed -- the queue driver has exited; if not, SIGKILL its
# running queue_ex (again) and say no
driver_killed() {
	kill -0 "$DRIVER" 2>/dev/null || return 0
	kill -KILL "$(cat "$W/qpid")" 2>/dev/null || true
	return 1
}

# map_round KIND N -- mapcli KIND on $POOL under the preload library, fed
# "i KEY" and "c KEY" for N fresh random keys: the "1" that the check
# prints (line-buffered by stdbuf) says the insert before it returned.
# SIGKILLed once it has acknowledged a random number of them (it never
# runs out of input: the test holds the FIFO open); the acknowledged keys
# are appended to $W/acked
map_round() {
	local n=$2 want got st
	od -An -tu8 -N $((8 * n)) /dev/urandom | tr -s ' ' '\n' |
		sed '/^$/d' >"$W/keys"
	awk '{print "i " $1; print "c " $1}' "$W/keys" >"$W/cmds"
	rm -f "$W/in"
	mkfifo "$W/in"
	exec 6<>"$W/in"
	preloaded stdbuf -oL "$EX/mapcli" "$1" "$POOL" <&6 >"$W/out" \
		2>"$W/err" 3>&- &
	APID=$!
	cat "$W/cmds" >&6 3>&- &
	FEED=$!
	want=$((RANDOM % (n - 1) + 1))
	alive_until -t 300 "$APID" lines_at_least "$W/out" '[01]' "$want" ||
		true
	kill -KILL "$APID" 2>/dev/null || true
	st=0
	wait "$APID" || st=$?
	APID=
	kill "$FEED" 2>/dev/null || true
	wait "$FEED" || true
	FEED=
	exec 6>&-
	[ "$st" -eq 137 ] ||
		{ echo "mapcli exited $st:"; cat "$W/err"; return 1; }
	# every check it printed found the key it had just inserted (other
	# lines: hashmap_atomic's recovery at open)
	got=$(grep -cx '[01]' "$W/out" || true)
	[ "$(grep -cx 0 "$W/out")" -eq 0 ] ||
		{ echo "mapcli did not find its own keys:"; cat "$W/out"; return 1; }
	head -n "$got" "$W/keys" >>"$W/acked"
	echo "$got"
}

# sessions_ended -- rpmemd has logged the end of every session it logged
# opened: the pool file is written by no one (a SIGKILLed writer's
# session ends once rpmemd has applied what the writer sent before it
# died; its log line comes after the pool's close)
sessions_ended() {
	[ "$(grep -c '^rpmemd: info: session [0-9]* from .* closed: ' "$DLOG")" -ge \
		"$(grep -c '^rpmemd: info: session [0-9]* from .*) opened$' "$DLOG")" ]
}

# keys_in KIND FILE -- the keys of $W/acked that mapcli KIND finds in a
# copy of FILE, one a line, sorted (libpmemobj's recovery, no preload
# library; mapcli answers each check with a line 1 or 0, in order)
keys_in() {
	cp "$2" "$W/found.obj"
	awk '{print "c " $1}' "$W/acked" |
		"$EX/mapcli" "$1" "$W/found.obj" >"$W/found" 2>&1
	grep -x '[01]' "$W/found" | paste - "$W/acked" |
		awk '$1 == 1 { print $2 }' | sort
}

# keys_found KIND FILE -- how many keys of $W/acked keys_in finds
keys_found() {
	keys_in "$1" "$2" | wc -l
}

# loss_report KIND -- what tells a replication loss from another one: the
# keys the local pool holds, the bytes and pages where the target's file
# differs from the local file, the preload library's and rpmemd's lines of
# the last session
loss_report() {
	local pages
	echo "the local pool holds $(keys_found "$1" "$POOL") of" \
		"$(wc -l <"$W/acked") keys"
	pages=$(cmp -l "$POOL" "$REP" | awk '{ p[int(($1 - 1) / 4096)]++ }
		END { for (i in p) printf "%x:%d\n", i, p[i] }' | sort | head -n 40)
	echo "the target's file differs from the local one in $(cmp -l \
		"$POOL" "$REP" | wc -l) bytes; page:bytes $(echo $pages)"
	echo "--- the preload library's stderr (RPMEM_LOG_LEVEL=info) ---"
	tail -n 40 "$W/err"
	echo "--- rpmemd, the last two sessions ---"
	grep -E 'session [0-9]+' "$DLOG" | tail -n 24
}

# map_replica_holds KIND -- once rpmemd has ended the killed writer's
# session, the target's file of $POOL, copied, passes pmempool check, and
# mapcli KIND (libpmemobj's recovery, no preload library) finds in it every
# key in $W/acked that the local file holds; a loss says where the copies
# differ (loss_report). The local file itself may lack acknowledged keys:
# PMDK's hashmap_tx example, SIGKILLed in the run whose inserts rebuilt
# its table, was seen to lose that run's inserts from its own file,
# without the preload library and without rpmemd too; that is said, and
# is not a replication loss, which this checks
map_replica_holds() {
	local total found here
	wait_for sessions_ended
	cp "$REP" "$W/copy.obj"
	pmempool check "$W/copy.obj" >"$W/check.out" 2>&1 ||
		{ cat "$W/check.out"; return 1; }
	total=$(wc -l <"$W/acked")
	keys_in "$1" "$W/copy.obj" >"$W/on_target"
	found=$(wc -l <"$W/on_target")
	[ "$found" -lt "$total" ] || return 0
	keys_in "$1" "$POOL" >"$W/on_local"
	here=$(wc -l <"$W/on_local")
	if [ "$here" -lt "$total" ] &&
	   [ -z "$(comm -23 "$W/on_local" "$W/on_target")" ]; then
		echo "# $1: the local pool itself lacks $((total - here)) of" \
			"$total acknowledged keys (lost before any replication);" \
			"the target holds every key the local pool holds" >&3
		return 0
	fi
	echo "the target lost $((total - found)) of $total keys"
	loss_report "$1"
	return 1
}

# map_kills KIND ROUNDS -- ROUNDS kill rounds of map_round KIND on one pool,
# alternately on libpmemobj's msync and flush/drain paths, each checked
# with map_replica_holds against every key acknowledged so far
map_kills() {
	local i got
	use_pool "$1"
	new_pool map 32
	for i in $(seq "$2"); do
		# libpmemobj's msync path, then its flush/drain path
		# (the preload library's info lines for loss_report)
		got=$(PMEM_IS_PMEM_FORCE=$((i % 2)) RPMEM_LOG_LEVEL=info \
			map_round "$1" 120) ||
			{ echo "round $i: $got"; return 1; }
		map_replica_holds "$1" ||
			{ echo "round $i ($got acknowledged)"; return 1; }
	done
	echo "# $1: $2 kills, $(wc -l <"$W/acked") keys acknowledged," \
		"all on the target" >&3
}

@test "map example, btree: 10 SIGKILLs mid-insert (commit mode); the target's pool passes pmempool check and holds every acknowledged key" {
	map_kills btree 10
}

@test "map example, rbtree: 10 SIGKILLs mid-insert (commit mode); the target's pool passes pmempool check and holds every acknowledged key" {
	map_kills rbtree 10
}

@test "map example, hashmap_tx: 10 SIGKILLs mid-insert (commit mode); the target's pool passes pmempool check and holds every acknowledged key" {
	map_kills hashmap_tx 10
}

@test "map example, hashmap_atomic (libpmemobj's atomic API, no transaction): 5 SIGKILLs mid-insert (commit mode); the target's pool passes pmempool check and holds every acknowledged key" {
	map_kills hashmap_atomic 5
}

@test "the check sees a replica that misses acknowledged keys: with the target gone, degraded mode goes on unreplicated and map_replica_holds names the loss" {
	use_pool btree
	new_pool map 32
	map_round btree 120 >/dev/null
	map_replica_holds btree
	stop_daemon
	export RPMEM_REPLICATE_POLICY=degraded
	map_round btree 120 >/dev/null
	[ "$(wc -l <"$W/err")" -ge 1 ] && grep -q degraded "$W/err"
	run map_replica_holds btree
	[ "$status" -eq 1 ]
	[[ "$output" == *"the target lost "* ]]
}

@test "map example, RPMEM_REPLICATE_DRAIN=every: 3 SIGKILLs mid-insert per back end; the target's pool holds every acknowledged key" {
	local kind
	export RPMEM_REPLICATE_DRAIN=every
	for kind in btree rbtree hashmap_tx; do
		map_kills "$kind" 3
	done
}

# queue_driver R -- enqueue items R-1, R-2... into $POOL, one queue_ex
# process each under the preload library, until one does not exit 0; the
# running one's pid in $W/qpid, each item whose process exited 0 appended
# to $W/acked, the last status in $W/qstatus
queue_driver() {
	local i st
	for i in $(seq 1000); do
		(preloaded "$EX/queue_ex" "$POOL" enqueue "$1-$i") \
			>/dev/null 2>>"$W/err" &
		echo $! >"$W/qpid.new"
		mv "$W/qpid.new" "$W/qpid"
		st=0
		wait $! || st=$?
		echo "$st" >"$W/qstatus"
		[ "$st" -eq 0 ] || return 0
		echo "$1-$i" >>"$W/acked"
	done
}

# queue_round R -- queue_driver R, SIGKILLing the running queue_ex at a
# random point of its life (the bring-up, its transaction, the final push
# at its exit) once a random number of items was acknowledged
queue_round() {
	local want
	want=$(($(wc -l <"$W/acked") + RANDOM % 4 + 1))
	rm -f "$W/qpid"
	queue_driver "$1" 3>&- &
	DRIVER=$!
	alive_until -t 300 "$DRIVER" lines_at_least "$W/acked" '.*' "$want" ||
		true
	# not a wait: a random point of the running queue_ex's life
	sleep "0.0$((RANDOM % 10))"
	# again if it hit one that had just exited
	wait_for driver_killed
	wait "$DRIVER"
	DRIVER=
	[ "$(cat "$W/qstatus")" -eq 137 ] ||
		{ echo "queue_ex exited $(cat "$W/qstatus"):"; cat "$W/err"; return 1; }
}

# queue_replica_holds -- once rpmemd has ended the killed writer's
# session, the target's file of $POOL, copied, passes pmempool check, and
# queue_ex shows in it every item in $W/acked
queue_replica_holds() {
	wait_for sessions_ended
	cp "$REP" "$W/copy.obj"
	pmempool check "$W/copy.obj" >"$W/check.out" 2>&1 ||
		{ cat "$W/check.out"; return 1; }
	"$EX/queue_ex" "$W/copy.obj" show >"$W/shown"
	sed -n 's/^[0-9]*: //p' "$W/shown" | sort >"$W/items"
	sort "$W/acked" | comm -23 - "$W/items" >"$W/lost"
	[ ! -s "$W/lost" ] ||
		{ echo "the target lost:"; cat "$W/lost"; return 1; }
}

@test "queue example: 5 SIGKILLs at random points of a process per enqueue (start, transaction, exit); the target's pool passes pmempool check and holds every item whose process exited 0" {
	local r
	use_pool queue
	new_pool queue 8
	(preloaded "$EX/queue_ex" "$POOL" new 1000)
	for r in $(seq 5); do
		queue_round "r$r"
		queue_replica_holds || { echo "round $r"; return 1; }
	done
	echo "# queue: 5 kills, $(wc -l <"$W/acked") items acknowledged," \
		"all on the target" >&3
}

# mapcli_counts -- "FLUSHES BARRIERS" of the last mapcli session, from the
# line rpmemd logs when it closes (its own counters)
mapcli_counts() {
	local line id
	line=$(grep "(mapcli librpmemctl" "$DLOG" | tail -n 1)
	id=${line#*session }
	id=${id%% *}
	grep "session $id from .* closed:" "$DLOG" |
		sed -E 's/.* ([0-9]+) flushes, ([0-9]+) barriers\)$/\1 \2/'
}

# insert_cmds N -- $W/cmds: N "i KEY" of fresh random keys, then "q"
insert_cmds() {
	od -An -tu8 -N $((8 * $1 + 8)) /dev/urandom | tr -s ' ' '\n' |
		sed '/^$/d' | head -n "$1" | sed 's/^/i /' >"$W/cmds"
	echo q >>"$W/cmds"
}

# map_run KIND N -- mapcli KIND inserts N fresh random keys into $POOL
# under the preload library and quits; prints "FLUSHES BARRIERS" (the
# daemon's counters of its session)
map_run() {
	insert_cmds "$2"
	(preloaded "$EX/mapcli" "$1" "$POOL" <"$W/cmds" >/dev/null)
	mapcli_counts
}

# per_insert KIND N -- "FLUSHES BARRIERS" per insert of map_run KIND N
# less those of a run that inserts nothing (opening and closing the pool;
# after a first run, which creates the map)
per_insert() {
	local b r
	map_run "$1" 0 >/dev/null
	b=($(map_run "$1" 0))
	r=($(map_run "$1" "$2"))
	awk -v n="$2" -v f=$((r[0] - b[0])) -v b=$((r[1] - b[1])) \
		'BEGIN {printf "%.2f %.2f\n", f / n, b / n}'
}

@test "map example: round trips per insert from the daemon's counters; commit mode waits about once per transactional insert, RPMEM_REPLICATE_DRAIN=every and the atomic API at every drain" {
	local kind c e
	# libpmemobj's flush/drain path, as on persistent memory (times:
	# tests/bench/pmdk_examples.sh)
	export PMEM_IS_PMEM_FORCE=1
	for kind in btree rbtree hashmap_tx; do
		use_pool "$kind"
		new_pool map 32
		c=($(per_insert "$kind" 200))
		e=($(RPMEM_REPLICATE_DRAIN=every per_insert "$kind" 200))
		echo "# $kind per insert: commit ${c[0]} flushes" \
			"${c[1]} barriers; every ${e[0]} flushes" \
			"${e[1]} barriers" >&3
		# one awaited FLUSH per insert's transaction, its inner
		# drains barriers
		awk -v f="${c[0]}" -v b="${c[1]}" \
			'BEGIN {exit !(f >= 0.95 && f < 1.2 && b >= 1)}'
		# every drain awaited, none a barrier: more round trips
		awk -v f="${e[0]}" -v b="${e[1]}" -v c="${c[0]}" \
			'BEGIN {exit !(b == 0 && f > c + 1)}'
	done
	# the atomic API has no commit: each of its persists waits, in
	# commit mode too
	use_pool hashmap_atomic
	new_pool map 32
	c=($(per_insert hashmap_atomic 100))
	echo "# hashmap_atomic per insert: commit ${c[0]} flushes" \
		"${c[1]} barriers" >&3
	awk -v f="${c[0]}" -v b="${c[1]}" 'BEGIN {exit !(f > 2 && b == 0)}'
}
