#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# retention.bats -- retention that survives one bad sync: the image a sync
# replaces is never pruned by it; a sync that cannot keep it within
# versions_quota or the free space is refused before it writes (unless
# versions_full = "prune"); a floor (versions_floor) that space never
# prunes; another region's use of a shared file system costs no version;
# a declared size larger than the pool is refused, one not declared is
# checked as the whole pool, two syncs under way share the quota; kill -9
# of rpmemd while the quota prunes, or at each point of a retention
# policy's fold, loses no version the policy did not prune (kill_round:
# one round of each kill matrix)

load helpers

# region_conf NAME PATH SETTINGS... -- append region NAME at PATH with
# versions = "all" and SETTINGS (rpmemd.conf text) to $CONF
region_conf() {
	local name=$1 path=$2
	shift 2
	sed -i "s|^regions = (|regions = (\n  { name = \"$name\"; type = \"dir\"; path = \"$path\"; versions = \"all\"; $* },|" "$CONF"
}

# restart -- the daemon again, with $CONF as it is now
restart() {
	stop_daemon
	start_daemon
}

# change FILE I -- a marker into FILE's block I*7 (one 4 KiB block)
change() {
	printf 'version-%04d' "$2" |
		dd of="$1" bs=1 seek=$(($2 * 7 * 4096 + 100)) conv=notrunc 2>/dev/null
}

# gens URI -- the generations of the versions of URI, "1,2,3"
gens() {
	"$RPMEMCTL" versions --json "$1" | jq -r '[.versions[].generation] | join(",")'
}

# gen URI -- the pool's generation and state, "2 consistent"
gen() {
	"$RPMEMCTL" list --json "$1" | jq -r '.pools[0] | "\(.generation) \(.state)"'
}

# unheld URI -- no session holds URI open for writing
unheld() {
	[ -z "$("$RPMEMCTL" list --json "$1" | jq -r '.pools[0].writer // empty')" ]
}

# small MIB -- a tmpfs of MIB MiB at $MNT
small() {
	[ "$(id -u)" -eq 0 ] || skip "mounting a small tmpfs needs root"
	MNT=$W/small
	mkdir -p "$MNT"
	mount -t tmpfs -o size="$1"m,mode=0755 tmpfs "$MNT" || skip "cannot mount a tmpfs here"
}

setup() {
	setup_env
	MNT=
}

teardown() {
	[ -z "${EPID:-}" ] || kill "$EPID" 2>/dev/null || true
	teardown_daemon
	[ -z "${MNT:-}" ] || umount "$MNT" 2>/dev/null || true
}

@test "a sync that says it will write more than its pool is refused before anything: no version of another pool pruned for it" {
	small 24
	mkdir "$MNT/s"
	region_conf s "$MNT/s" 'versions_full = "prune"; versions_floor = 1;'
	start_daemon
	# pool q: three versions of 4 MiB each (every block changed)
	mkfile "$W/q" 4
	rc -q mirror "$W/q" "$T/s/q"
	[ "$status" -eq 0 ]
	for i in 1 2 3; do
		mkfile "$W/q" 4
		rc -q sync "$W/q" "$T/s/q"
		[ "$status" -eq 0 ]
	done
	[ "$(gens "$T/s/q")" = 1,2,3 ]
	mkfile "$W/p" 1
	rc -q mirror "$W/p" "$T/s/p"
	[ "$status" -eq 0 ]
	# a writer of the 1 MiB pool p says its sync writes 16 MiB: more
	# than the region has free, less than free and q's versions
	run python3 "$TOP/tests/peers/hostile.py" "$PORT" says-less s p $((16 << 20))
	echo "$output"
	[[ "$output" == "ERROR "*"pool 'p' stays as it was: a sync cannot write $((16 << 20)) bytes of its $((1 << 20))"* ]]
	grep -q "a sync that says it will write $((16 << 20)) bytes of a $((1 << 20))-byte pool refused" "$DLOG"
	# nothing pruned, nothing written, no journal
	[ "$(gens "$T/s/q")" = 1,2,3 ]
	refute grep -q "version [0-9]* pruned" "$DLOG"
	[ "$(gen "$T/s/p")" = "1 consistent" ]
	cmp "$W/p" "$MNT/s/p"
	[ ! -e "$MNT/s/.rpmemd/p.undo" ]
}

@test "versions_quota and a sync that changed every block (the source encrypted): refused before it writes, with the numbers (exit 4); nothing pruned, in any pool" {
	region_conf v "$W/v" 'versions_quota = "3M";'
	mkdir -p "$W/v"
	start_daemon
	mkfile "$W/p" 4
	rc -q mirror "$W/p" "$T/v/p"
	for i in 2 3; do
		change "$W/p" "$i"
		rc -q sync "$W/p" "$T/v/p"
		[ "$status" -eq 0 ]
	done
	cp "$W/p" "$W/p3"
	mkfile "$W/q" 1
	rc -q mirror "$W/q" "$T/v/q"
	change "$W/q" 2
	rc -q sync "$W/q" "$T/v/q"
	[ "$(gens "$T/v/p")" = 1,2 ]
	[ "$(gens "$T/v/q")" = 1 ]
	ls -l "$W/v/.rpmemd" >"$W/before"
	# every block of p changes: its version would take 4 MiB + the
	# journal's heads + the scrub record, more than the 3 MiB quota
	mkfile "$W/p" 4
	rc sync "$W/p" "$T/v/p"
	echo "$output"
	[ "$status" -eq 4 ]
	local ver=$((4096 + 1024 * (4096 + 32) + $(stat -c %s "$W/v/.rpmemd/p.scrub")))
	[[ "$output" == *"pool 'p' stays consistent, nothing was pruned: a sync of $((4 << 20)) bytes would keep the image it replaces as a version of up to $ver bytes"* ]]
	[[ "$output" == *"more than its versions_quota of $((3 << 20)) ("*" bytes free)"* ]]
	grep -q "region 'v': pool 'p' stays consistent, nothing was pruned" "$DLOG"
	# the pool, its versions and q's are as they were
	[ "$(gen "$T/v/p")" = "3 consistent" ]
	cmp "$W/p3" "$W/v/p"
	[ "$(gens "$T/v/p")" = 1,2 ]
	[ "$(gens "$T/v/q")" = 1 ]
	[ ! -e "$W/v/.rpmemd/p.undo" ]
	refute grep -q "version [0-9]* pruned" "$DLOG"
	# a sync that fits goes on
	cp "$W/p3" "$W/p"
	change "$W/p" 4
	rc -q sync "$W/p" "$T/v/p"
	[ "$status" -eq 0 ]
	[ "$(gens "$T/v/p")" = 1,2,3 ]
}

@test "versions_quota and a sync that says nothing of its size (an older client): checked as one of the whole pool, refused before it writes, with the numbers; nothing pruned, in any pool" {
	region_conf v "$W/v" 'versions_quota = "3M";'
	mkdir -p "$W/v"
	start_daemon
	mkfile "$W/p" 4
	rc -q mirror "$W/p" "$T/v/p"
	for i in 2 3; do
		change "$W/p" "$i"
		rc -q sync "$W/p" "$T/v/p"
		[ "$status" -eq 0 ]
	done
	mkfile "$W/q" 1
	rc -q mirror "$W/q" "$T/v/q"
	change "$W/q" 2
	rc -q sync "$W/q" "$T/v/q"
	[ "$(gens "$T/v/p")" = 1,2 ]
	[ "$(gens "$T/v/q")" = 1 ]
	# a client that says nothing of its size may write all 4 MiB of p:
	# its version would not fit the 3 MiB quota
	run python3 "$TOP/tests/peers/hostile.py" "$PORT" no-size v p
	echo "$output"
	local ver=$((4096 + 1024 * (4096 + 32) + $(stat -c %s "$W/v/.rpmemd/p.scrub")))
	[[ "$output" == "ERROR "*"pool 'p' stays consistent, nothing was pruned: a sync that does not say how much it will write (an older client, an import) may write all $((4 << 20)) bytes of it and would keep the image it replaces as a version of up to $ver bytes"* ]]
	[[ "$output" == *"more than its versions_quota of $((3 << 20)) ("* ]]
	grep -q "region 'v': pool 'p' stays consistent, nothing was pruned: a sync that does not say" "$DLOG"
	# the pool, its versions and q's are as they were
	[ "$(gen "$T/v/p")" = "3 consistent" ]
	cmp "$W/p" "$W/v/p"
	[ "$(gens "$T/v/p")" = 1,2 ]
	[ "$(gens "$T/v/q")" = 1 ]
	[ ! -e "$W/v/.rpmemd/p.undo" ]
	refute grep -q "version [0-9]* pruned" "$DLOG"
	# an import over p writes what its stream holds: it says nothing of
	# its size either, and is refused the same way (exit 4)
	mkfile "$W/p4" 4
	rc import --raw -f --discard-target "$W/p4" "$T/v/p"
	echo "$output"
	[ "$status" -eq 4 ]
	[[ "$output" == *"a sync that does not say how much it will write (an older client, an import) may write all $((4 << 20)) bytes of it"* ]]
	cmp "$W/p" "$W/v/p"
	[ "$(gens "$T/v/p")" = 1,2 ]
	# one whose whole pool fits goes through: q's 1 MiB
	run python3 "$TOP/tests/peers/hostile.py" "$PORT" no-size v q
	echo "$output"
	[ "$output" = OK ]
	[ "$(gen "$T/v/q")" = "3 consistent" ]
	[ "$(gens "$T/v/q")" = 1,2 ]
	[ "$(gens "$T/v/p")" = 1,2 ]
}

@test "two pools syncing at once in one region: the first's version is reserved in the quota for its duration, the second is refused with the numbers; given back when the first ends" {
	region_conf v "$W/v" 'versions_quota = "3M";'
	mkdir -p "$W/v"
	start_daemon
	mkfile "$W/p" 2
	rc -q mirror "$W/p" "$T/v/p"
	mkfile "$W/q" 2
	rc -q mirror "$W/q" "$T/v/q"
	cp "$W/q" "$W/q1"
	# a sync of p that will write all its 2 MiB, under way
	python3 "$TOP/tests/peers/hostile.py" "$PORT" hold-sync v p $((2 << 20)) \
		>"$W/hold" 2>&1 3>&- &
	EPID=$!
	wait_for grep -q . "$W/hold"
	grep -qx syncing "$W/hold"
	# q's every block changes: alone its version fits the 3 MiB, beside
	# p's it does not
	mkfile "$W/q" 2
	rc sync "$W/q" "$T/v/q"
	echo "$output"
	[ "$status" -eq 4 ]
	[[ "$output" == *"pool 'q' stays consistent, nothing was pruned: a sync of $((2 << 20)) bytes would keep the image it replaces as a version of up to "*" bytes the versions of the syncs of other pools under way may take, region 'v' needs "*"more than its versions_quota of $((3 << 20))"* ]]
	[ "$(gen "$T/v/q")" = "1 consistent" ]
	cmp "$W/q1" "$W/v/q"
	# p's sync ends (its client gone, the pool left syncing): its
	# reservation is given back and q's sync goes through
	kill "$EPID"
	wait "$EPID" || true
	EPID=
	wait_for unheld "$T/v/p"
	rc sync "$W/q" "$T/v/q"
	echo "$output"
	[ "$status" -eq 0 ]
	cmp "$W/q" "$W/v/q"
	[ "$(gens "$T/v/q")" = 1 ]
}

@test "versions_full = \"prune\": the sync goes through; the image it replaced is kept (the floor) and restores byte for byte, what gave way is logged" {
	region_conf v "$W/v" 'versions_quota = "3M"; versions_full = "prune";'
	mkdir -p "$W/v"
	start_daemon
	mkfile "$W/p" 4
	rc -q mirror "$W/p" "$T/v/p"
	for i in 2 3; do
		change "$W/p" "$i"
		rc -q sync "$W/p" "$T/v/p"
	done
	cp "$W/p" "$W/p3"
	mkfile "$W/q" 1
	rc -q mirror "$W/q" "$T/v/q"
	for i in 2 3; do
		change "$W/q" "$i"
		rc -q sync "$W/q" "$T/v/q"
	done
	cp "$W/q" "$W/q3"
	[ "$(gens "$T/v/q")" = 1,2 ]
	subscribe "$W/ev" "$T"
	mkfile "$W/p" 4
	rc sync "$W/p" "$T/v/p"
	echo "$output"
	[ "$status" -eq 0 ]
	cmp "$W/p" "$W/v/p"
	# the sync's own output says what gave way, a warning line each
	[[ "$output" == *"warning: $T/v/p: the target: version 1 of pool 'p' pruned (quota)"* ]]
	[[ "$output" == *"warning: $T/v/p: the target: version 2 of pool 'p' pruned (quota)"* ]]
	[[ "$output" == *"warning: $T/v/p: the target: version 1 of pool 'q' pruned (quota)"* ]]
	# and the events
	wait_for grep -q "version 1 of pool 'q' pruned (quota)" "$W/ev"
	grep -q "version 2 of pool 'p' pruned (quota)" "$W/ev"
	# p's version 3 (the image before the encryption) stays, over the
	# quota; every other version above the floors went; q keeps its newest
	[ "$(gens "$T/v/p")" = 3 ]
	[ "$(gens "$T/v/q")" = 2 ]
	rc sync --pull --at 3 "$W/o3" "$T/v/p"
	[ "$status" -eq 0 ]
	cmp "$W/o3" "$W/p3"
	grep -q "region 'v': pool 'p': version 1 pruned (quota: the region's versions exceeded versions_quota)" "$DLOG"
	grep -q "region 'v': pool 'q': version 1 pruned (quota" "$DLOG"
	grep -q "region 'v': its versions take [0-9]* bytes, more than versions_quota ($((3 << 20))): only the newest 1 of each pool are left" "$DLOG"
	refute grep -q "pool 'p': version 3 pruned" "$DLOG"
	# with --json, its warnings
	mkfile "$W/p" 4
	rc sync --json "$W/p" "$T/v/p"
	[ "$status" -eq 0 ]
	[ "$(jq -r '.warnings | join("|")' <<<"$(grep '^{' <<<"$output")")" = "version 3 of pool 'p' pruned (quota)" ]
}

@test "versions_floor: the newest N of each pool are never pruned for space, even over the quota; a sync that cannot keep them within it is refused" {
	region_conf v "$W/v" 'versions_quota = "20K"; versions_floor = 2; versions_full = "prune";'
	mkdir -p "$W/v"
	start_daemon
	mkfile "$W/p" 1
	rc -q mirror "$W/p" "$T/v/p"
	for i in 2 3 4 5; do
		change "$W/p" "$i"
		rc -q sync "$W/p" "$T/v/p"
		[ "$status" -eq 0 ]
		cp "$W/p" "$W/p$i"
	done
	# a one-block version of a 1 MiB pool takes 8224 + 8192 bytes: two
	# are over 20 KiB, and both stay
	[ "$(gens "$T/v/p")" = 3,4 ]
	rc sync --pull --at 3 "$W/o3" "$T/v/p"
	cmp "$W/o3" "$W/p3"
	grep -q "only the newest 2 of each pool are left" "$DLOG"
	# the default refuses the sync that would take the floor over it
	sed -i 's|versions_full = "prune";||' "$CONF"
	restart
	change "$W/p" 6
	rc sync "$W/p" "$T/v/p"
	[ "$status" -eq 4 ]
	[[ "$output" == *"with the newest 2 versions of each pool that space never prunes"* ]]
	[ "$(gens "$T/v/p")" = 3,4 ]
	[ "$(gen "$T/v/p")" = "5 consistent" ]
	# the bad configurations
	stop_daemon
	sed -i 's|versions_floor = 2;|versions_floor = 0;|' "$CONF"
	run "$RPMEMD" -n -c "$CONF"
	[ "$status" -ne 0 ]
	[[ "$output" == *"versions_floor: 0 is out of range 1..100000"* ]]
	sed -i 's|versions_floor = 0;|versions_full = "delete";|' "$CONF"
	run "$RPMEMD" -n -c "$CONF"
	[ "$status" -ne 0 ]
	[[ "$output" == *"versions_full: 'delete' is not one of refuse, prune"* ]]
}

@test "versions_min_age: versions kept within it are never pruned for space; a sync that would need them is refused" {
	region_conf v "$W/v" 'versions_quota = "40K"; versions_min_age = "1h";'
	mkdir -p "$W/v"
	start_daemon
	mkfile "$W/p" 1
	rc -q mirror "$W/p" "$T/v/p"
	for i in 2 3; do
		change "$W/p" "$i"
		rc -q sync "$W/p" "$T/v/p"
		[ "$status" -eq 0 ]
	done
	# two one-block versions (16416 bytes each) fit in 40 KiB, a third
	# does not, and both are younger than an hour: refused
	change "$W/p" 4
	rc sync "$W/p" "$T/v/p"
	[ "$status" -eq 4 ]
	[[ "$output" == *"(versions_floor, and those kept within versions_min_age: 32832 bytes) region 'v' needs 49248 bytes, more than its versions_quota of 40960"* ]]
	[ "$(gens "$T/v/p")" = 1,2 ]
	[ "$(gen "$T/v/p")" = "3 consistent" ]
	# let through, they all stay, over the quota
	sed -i 's|versions_min_age = "1h";|versions_min_age = "1h"; versions_full = "prune";|' "$CONF"
	restart
	rc -q sync "$W/p" "$T/v/p"
	[ "$status" -eq 0 ]
	[ "$(gens "$T/v/p")" = 1,2,3 ]
	grep -q "only the newest 1 of each pool are left, which space never prunes (versions_floor), and those kept within versions_min_age" "$DLOG"
	refute grep -q "version [0-9]* pruned" "$DLOG"
	# without it, the quota prunes the oldest
	sed -i 's|versions_min_age = "1h";||' "$CONF"
	restart
	change "$W/p" 5
	rc -q sync "$W/p" "$T/v/p"
	[ "$(gens "$T/v/p")" = 3,4 ]
	stop_daemon
	sed -i 's|versions_quota = "40K";|versions_quota = "40K"; versions_min_age = "7x";|' "$CONF"
	run "$RPMEMD" -n -c "$CONF"
	[ "$status" -ne 0 ]
	[[ "$output" == *"versions_min_age: '7x' is not an age like \"7d\""* ]]
}

@test "two regions on one file system: the other region filling it costs this region no version; the sync is refused with the numbers" {
	small 16
	mkdir "$MNT/a" "$MNT/b"
	region_conf sa "$MNT/a"
	sed -i "s|^regions = (|regions = (\n  { name = \"sb\"; type = \"dir\"; path = \"$MNT/b\"; },|" "$CONF"
	start_daemon
	mkfile "$W/a" 2
	rc -q mirror "$W/a" "$T/sa/a"
	mkfile "$W/a" 2
	rc -q sync "$W/a" "$T/sa/a"
	change "$W/a" 3
	rc -q sync "$W/a" "$T/sa/a"
	[ "$status" -eq 0 ]
	cp "$W/a" "$W/a3"
	[ "$(gens "$T/sa/a")" = 1,2 ]
	# a writer of region sb fills the file system
	mkfile "$W/b" 10
	rc -q mirror "$W/b" "$T/sb/b"
	[ "$status" -eq 0 ]
	mkfile "$W/a" 2
	rc sync "$W/a" "$T/sa/a"
	echo "$output"
	[ "$status" -eq 4 ]
	[[ "$output" == *"needs up to $((4096 + 512 * 4128)) bytes for its undo journal, region 'sa' ($MNT/a) has "*" bytes free and 0 bytes of versions that could give way"*"nothing was pruned"* ]]
	# sa's versions all there and restorable; the pool as it was
	[ "$(gens "$T/sa/a")" = 1,2 ]
	refute grep -q "version [0-9]* pruned" "$DLOG"
	[ "$(gen "$T/sa/a")" = "3 consistent" ]
	cmp "$W/a3" "$MNT/a/a"
	# once sb gives the room back, the same sync goes through
	rc -q remove --force "$T/sb/b"
	rc -q sync "$W/a" "$T/sa/a"
	[ "$status" -eq 0 ]
	[ "$(gens "$T/sa/a")" = 1,2,3 ]
	rc sync --pull --at 3 "$W/o3" "$T/sa/a"
	cmp "$W/o3" "$W/a3"
}

# under_strace K -- rpmemd under strace, killed (SIGKILL) at its K-th
# unlinkat (not run); the unlinkat calls in $W/st
under_strace() {
	strace -f -qq -o "$W/st" -e trace=unlinkat \
		-e inject=unlinkat:signal=KILL:when="$1" \
		"$RPMEMD" -c "$CONF" >>"$DLOG" 2>&1 &
	DPID=$!
	alive_until "$DPID" accepts "$PORT"
}

# the test build of rpmemd that dies where RPMEMD_CRASH_AT says
CRASHD=$BUILD/tests/rpmemd-crash

# crash_at POINT -- the test build of rpmemd, set to die (SIGKILL) at
# POINT (daemon/storage/pool/crashpoint.h)
crash_at() {
	RPMEMD=$CRASHD RPMEMD_CRASH_AT=$1 start_daemon
}

# kill_round BASE DIR START CMD... -- one round of a kill matrix: DIR
# reset to a copy of BASE, rpmemd started by START (a command that starts
# it set to die at this round's point: "under_strace K", "crash_at P"),
# rpmemctl CMD run ($status, $output), rpmemd waited for until it died
# there (REACHED=1) or ended if it never reached its point (REACHED=),
# then the product's rpmemd started again
kill_round() {
	local base=$1 dir=$2 start=$3
	shift 3
	rm -rf "$dir"
	cp -a "$base" "$dir"
	$start
	rc "$@"
	echo "kill at $start: $1 exit $status"
	alive_until "$DPID" false || true
	REACHED=1
	if kill -0 "$DPID" 2>/dev/null; then
		REACHED=
		# the daemon under strace, or the daemon itself
		pkill -9 -P "$DPID" 2>/dev/null || true
		kill -9 "$DPID" 2>/dev/null || true
	fi
	wait "$DPID" || true
	DPID=
	start_daemon
}

# versions_ok G -- pool v/p at generation G: its versions a run of the
# newest, holding every one the quota keeps (G-2, G-1), each restoring
# byte for byte the image synced then ($W/sN)
versions_ok() {
	local g l
	[ "$(gen "$T/v/p")" = "$1 consistent" ]
	l=$(gens "$T/v/p")
	echo "generation $1, versions $l"
	[ "$l" = "$(($1 - 2)),$(($1 - 1))" ] ||
		[ "$l" = "$(($1 - 3)),$(($1 - 2)),$(($1 - 1))" ]
	for g in ${l//,/ }; do
		rc sync --pull --at "$g" "$W/o" "$T/v/p"
		[ "$status" -eq 0 ]
		cmp "$W/o" "$W/s$g"
	done
}

@test "kill -9 of rpmemd at each unlink of a sync's quota pruning: no version lost that the quota did not prune, none left half-removed" {
	command -v strace >/dev/null || skip "needs strace"
	mkdir -p "$W/v"
	# a one-block version of a 1 MiB pool takes 16416 bytes: 40 KiB keep 2
	region_conf v "$W/v" 'versions_quota = "40K";'
	start_daemon
	mkfile "$W/p" 1
	rc -q mirror "$W/p" "$T/v/p"
	cp "$W/p" "$W/s1"
	for i in 2 3 4; do
		change "$W/p" "$i"
		rc -q sync "$W/p" "$T/v/p"
		cp "$W/p" "$W/s$i"
	done
	[ "$(gens "$T/v/p")" = 2,3 ]
	stop_daemon
	cp -a "$W/v" "$W/base"
	local k hit=
	# the sync's session unlinks a dense sync's and a journal's leftovers
	# at its open (1, 2), then the quota prunes version 2: its journal (3),
	# its scrub record (4)
	for k in 1 2 3 4; do
		cp "$W/s4" "$W/p"
		change "$W/p" 5
		cp "$W/p" "$W/s5"
		kill_round "$W/base" "$W/v" "under_strace $k" sync "$W/p" "$T/v/p"
		grep -q "killed by SIGKILL" "$W/st"
		grep -v resumed "$W/st" | grep -B1 -m1 "killed by SIGKILL" || true
		# the killed call: "= ?", or unfinished as another thread died
		grep -q 'unlinkat([0-9]*, "p.v2.ver", 0\( <unfinished\|) *= ?\)' "$W/st" &&
			hit=${hit}v
		grep -q 'unlinkat([0-9]*, "p.scrub.v2", 0\( <unfinished\|) *= ?\)' "$W/st" &&
			hit=${hit}s
		# the sync committed (the pruning follows the commit, before
		# the reply) or never began (killed at its open)
		if [ "$k" -le 2 ]; then
			versions_ok 4
			rc -q sync "$W/p" "$T/v/p"
			[ "$status" -eq 0 ]
		fi
		versions_ok 5
		# the next commit finishes what the kill cut short
		cp "$W/p" "$W/s5"
		change "$W/p" 6
		cp "$W/p" "$W/s6"
		rc -q sync "$W/p" "$T/v/p"
		[ "$status" -eq 0 ]
		[ "$(gens "$T/v/p")" = 4,5 ]
		versions_ok 6
		# no scrub record without its version (a kill between the
		# commit and the new image's record leaves the next version
		# without one: issue 33 point 1)
		local f
		for f in "$W"/v/.rpmemd/p.scrub.v*; do
			[ -e "$f" ] || continue
			[ -e "$W/v/.rpmemd/p.v${f##*.scrub.v}.ver" ]
		done
		stop_daemon
	done
	# the kills fell on both unlinks of the pruning
	[[ "$hit" == *v* && "$hit" == *s* ]]
}

@test "kill -9 of rpmemd at each unlink of the pruning for a sync's journal (versions_full = \"prune\"): the pool untouched, no version lost but the one being pruned, none left half-removed" {
	command -v strace >/dev/null || skip "needs strace"
	small 14
	mkdir "$MNT/s"
	region_conf s "$MNT/s" 'versions_full = "prune";'
	start_daemon
	# each sync changes every block: a version of 4 MiB; 14 MiB hold the
	# pool and two of them, so a third sync's journal needs version 1's room
	local i k hit= f
	mkfile "$W/p" 4
	rc -q mirror "$W/p" "$T/s/p"
	cp "$W/p" "$W/s1"
	for i in 2 3; do
		mkfile "$W/p" 4
		rc -q sync "$W/p" "$T/s/p"
		[ "$status" -eq 0 ]
		cp "$W/p" "$W/s$i"
	done
	[ "$(gens "$T/s/p")" = 1,2 ]
	stop_daemon
	cp -a "$MNT/s" "$W/base"
	mkfile "$W/s4" 4
	for k in 3 4; do
		# s4 is another file than the one that made the pool (p):
		# without --no-history the sync is refused before it prunes
		kill_round "$W/base" "$MNT/s" "under_strace $k" \
			sync --no-history "$W/s4" "$T/s/p"
		grep -v resumed "$W/st" | grep -B1 -m1 "killed by SIGKILL" || true
		grep -q 'unlinkat([0-9]*, "p.v1.ver", 0\( <unfinished\|) *= ?\)' "$W/st" &&
			hit=${hit}v
		grep -q 'unlinkat([0-9]*, "p.scrub.v1", 0\( <unfinished\|) *= ?\)' "$W/st" &&
			hit=${hit}s
		# killed before the journal: the pool as it was, version 2 kept,
		# version 1 whole or gone
		[ "$(gen "$T/s/p")" = "3 consistent" ]
		cmp "$W/s3" "$MNT/s/p"
		[[ "$(gens "$T/s/p")" =~ ^(1,2|2)$ ]]
		for g in $(gens "$T/s/p" | tr , ' '); do
			rc sync --pull --at "$g" "$W/o" "$T/s/p"
			[ "$status" -eq 0 ]
			cmp "$W/o" "$W/s$g"
		done
		# the sync again: it goes through, what gave way said
		rc sync --no-history "$W/s4" "$T/s/p"
		[ "$status" -eq 0 ]
		cmp "$W/s4" "$MNT/s/p"
		[ "$(gens "$T/s/p")" = 2,3 ]
		for f in "$MNT"/s/.rpmemd/p.scrub.v*; do
			[ -e "$f" ] || continue
			[ -e "$MNT/s/.rpmemd/p.v${f##*.scrub.v}.ver" ]
		done
		stop_daemon
	done
	[[ "$hit" == *v* && "$hit" == *s* ]]
}

# last_sync URI T -- (rpmemd stopped) pool URI's image became current at
# unix time T, as its next version will say
last_sync() {
	sed -i "s/^last_sync=.*/last_sync=$2/" "$W/v/.rpmemd/$1.meta"
}

# restores_all G... -- each version G of v/p restores byte for byte sG
restores_all() {
	local g
	for g in "$@"; do
		rc sync --pull --at "$g" "$W/o" "$T/v/p"
		[ "$status" -eq 0 ] || { echo "$output"; return 1; }
		cmp "$W/o" "$W/s$g" || return 1
	done
}

@test "kill -9 of rpmemd at each point of a retention policy's fold (daily=3 prunes a middle version after a commit): no version lost that the policy did not prune, every one left restores byte for byte" {
	[ -x "$CRASHD" ] || skip "build/tests/rpmemd-crash not built (make examples)"
	mkdir -p "$W/v"
	region_conf v "$W/v"
	sed -i "s|path = \"$W/v\"; versions = \"all\";|path = \"$W/v\"; versions = \"daily=3\";|" "$CONF"
	start_daemon
	# images 1, 2 and 3 became current at 1:00 3 days ago, and at 2:00
	# and 3:00 2 days ago (UTC): versions 1 and 2 on different days, both
	# kept
	local day=$(($(date +%s) / 86400 * 86400)) i pt want
	mkfile "$W/p" 1
	rc -q mirror "$W/p" "$T/v/p"
	cp "$W/p" "$W/s1"
	for i in 2 3; do
		stop_daemon
		last_sync p $((day - (5 - i) * 86400 + (i - 1) * 3600))
		start_daemon
		change "$W/p" "$i"
		rc -q sync "$W/p" "$T/v/p"
		[ "$status" -eq 0 ]
		cp "$W/p" "$W/s$i"
	done
	[ "$(gens "$T/v/p")" = 1,2 ]
	stop_daemon
	last_sync p $((day - 2 * 86400 + 3 * 3600))
	cp -a "$W/v" "$W/base"
	change "$W/p" 4
	cp "$W/p" "$W/s4"
	# the commit of 4 keeps 3, on version 2's day: the policy prunes 2,
	# folding it into 1. Point: what the restart finds (a kill in the
	# sync's own journal, before its commit: the pool pending)
	for pt in undo-append-data:1,2 fold-appended:1,2,3 fold-synced:1,2,3 \
		  fold-trailer:1,3 prune-unlinked:1,3; do
		want=${pt#*:}
		pt=${pt%%:*}
		cp "$W/s4" "$W/p"
		kill_round "$W/base" "$W/v" "crash_at $pt" sync "$W/p" "$T/v/p"
		[ -n "$REACHED" ]
		[ "$status" -ne 0 ]
		[ "$(gens "$T/v/p")" = "$want" ] || { echo "$pt: $(gens "$T/v/p")"; false; }
		restores_all ${want//,/ }
		# the next commit: the policy's result, whatever the kill cut
		change "$W/p" 5
		rc -q sync "$W/p" "$T/v/p"
		[ "$status" -eq 0 ]
		cmp "$W/p" "$W/v/p"
		if [ "$pt" = undo-append-data ]; then
			# the pending sync completed: 3 kept, 2 pruned
			[ "$(gen "$T/v/p")" = "4 consistent" ]
			[ "$(gens "$T/v/p")" = 1,3 ]
		else
			[ "$(gen "$T/v/p")" = "5 consistent" ]
			[ "$(gens "$T/v/p")" = 1,3,4 ]
			restores_all 4
		fi
		restores_all 1 3
		[ ! -e "$W/v/.rpmemd/p.v2.ver" ]
		for f in "$W"/v/.rpmemd/p.scrub.v*; do
			[ -e "$f" ] || continue
			[ -e "$W/v/.rpmemd/p.v${f##*.scrub.v}.ver" ]
		done
		refute grep -q "cannot be restored any more" "$DLOG"
		stop_daemon
	done
	# the kills after the trailer left prunes the restart completed
	[ "$(grep -c "version 2 was being pruned when rpmemd stopped" "$DLOG")" -eq 2 ]
}
