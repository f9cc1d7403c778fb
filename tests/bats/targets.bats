#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# targets.bats -- several targets: the preload library over two rpmemd
# instances, k of n

load helpers
load pobj

setup() {
	setup_two
}

teardown() {
	teardown_two
}

# has_lines FILE N -- FILE holds at least N lines
has_lines() {
	[ "$(wc -l <"$1")" -ge "$2" ]
}

# get FILE I -- slot I of a target's pool file, opened by libpmemobj
get() {
	cp "$1" "$W/copy.obj"
	"$APP" "$W/copy.obj" "get:$2"
}

# state TARGET -- the state of pool app on TARGET (host:port)
state() {
	"$RPMEMCTL" list --json "$1/r1/app" | jq -er '.pools[0].state'
}

# gens TARGET -- the history of pool app on TARGET, ids joined by ","
gens() {
	"$RPMEMCTL" list --json "$1/r1/app" | jq -r '.pools[0].generations | join(",")'
}

@test "preload: two targets, each gets every persist and a clean exit leaves both byte-identical and consistent" {
	app set:0:both
	[ "$status" -eq 0 ]
	cmp "$POOL" "$R1/app"
	cmp "$POOL" "$R1B/app"
	[ "$(state "$T")" = consistent ]
	[ "$(state "$T2")" = consistent ]
	# one dirty log per target
	[ -f "$POOL.rpmemlog" ]
	[ -f "$POOL.rpmemlog.1" ]
	# one history for the file, both targets took it (the links' parallel
	# first pushes started one, not one each)
	local ids
	ids=$(sed -n 's/^ids=//p' "$POOL.rpmemgen")
	[ -n "$ids" ]
	[ "$(gens "$T")" = "$ids" ]
	[ "$(gens "$T2")" = "$ids" ]
	# and again: both carry the same newest id
	app set:1:again
	[ "$status" -eq 0 ]
	ids=$(sed -n 's/^ids=//p' "$POOL.rpmemgen")
	[ "$(gens "$T")" = "$ids" ]
	[ "$(gens "$T2")" = "$ids" ]
	cmp "$POOL" "$R1/app"
	cmp "$POOL" "$R1B/app"
}

@test "preload: quorum 1 of 2, one target stopped mid-run: the application goes on, the other holds every persist, the stopped one is resynced at the next start" {
	export RPMEM_REPLICATE_QUORUM=1 RPMEM_REPLICATE_RETRY=never
	app_start set:0:before pause set:1:after pause set:2:later
	app_paused 1
	stop_second
	app_continue
	app_paused 2
	# set:1 returned: the first target has it, the second never will
	[ "$(get "$R1/app" 1)" = after ]
	[ "$(get "$R1B/app" 0)" = before ]
	app_continue
	app_finish
	[ "$ASTATUS" -eq 0 ]
	grep -q "rpmem_preload: degraded: cannot replicate '$POOL' to $T2/r1/app" "$W/app.err"
	grep -q "at exit: the replica of '$POOL' on $T2/r1/app is behind" "$W/app.err"
	refute grep -q "fail-stop" "$W/app.err"
	cmp "$POOL" "$R1/app"
	[ "$(state "$T")" = consistent ]
	# back: the next start brings it up to date with its own log
	start_second
	[ "$(state "$T2")" = syncing ]
	RPMEM_LOG_LEVEL=info app get:2
	[ "$status" -eq 0 ]
	[[ "$output" == *"'$POOL' to $T2/r1/app: synced only the extents its dirty log marked"* ]]
	cmp "$POOL" "$R1/app"
	cmp "$POOL" "$R1B/app"
	[ "$(state "$T2")" = consistent ]
}

@test "replicas: the replicating process's status names the target left behind, its bytes and time behind, in text, JSON and Prometheus; exit 1 while one lags" {
	export RPMEM_REPLICATE_QUORUM=1 RPMEM_REPLICATE_RETRY=never
	app_start set:0:before pause set:1:after pause
	app_paused 1
	rc replicas --json "$POOL"
	[ "$status" -eq 0 ]
	[ "$(json .running)" = true ]
	[ "$(json .pid)" -eq "$APID" ]
	[ "$(json .local)" = "$POOL" ]
	python3 "$TOP/tests/json/check.py" "$TOP/tests/json/schema.json" replicas <<<"$output"
	[ "$(json '.replicas[0].link_state')" = live ]
	[ "$(json '.replicas[1].target')" = "$T2" ]
	[ "$(json '.replicas[1].region')/$(json '.replicas[1].pool')" = r1/app ]
	[ "$(json '.replicas[1].lagging')" = false ]
	[ "$(json '.replicas[1].behind_bytes')" -eq 0 ]
	# an event stream of the replicas: now, then the change to come
	"$RPMEMCTL" replicas --follow --json --count 2 --timeout 60 "$POOL" \
		>"$W/follow.out" &
	local fpid=$!
	# its first line (both live) is out before the second target stops:
	# a follower that first reads after the change sees no change to come
	wait_for has_lines "$W/follow.out" 1
	[ "$(wc -l <"$W/follow.out")" -eq 1 ]
	stop_second
	app_continue
	app_paused 2
	wait "$fpid"
	[ "$(wc -l <"$W/follow.out")" -eq 2 ]
	[ "$(head -1 "$W/follow.out" | jq -r '.replicas[1].link_state')" = live ]
	[ "$(tail -1 "$W/follow.out" | jq -r '.replicas[1].link_state')" = degraded ]
	[ "$(tail -1 "$W/follow.out" | jq -r '.replicas[0].link_state')" = live ]
	rc replicas --follow --count 5 --timeout 1 "$POOL"
	[ "$status" -eq 1 ]
	grep -E " $T2/r1/app  degraded  behind " <<<"$output"
	# the second target holds nothing written since: the status says so
	rc replicas --json "$POOL"
	[ "$status" -eq 1 ]
	[ "$(json '.replicas[1].link_state')" = degraded ]
	[ "$(json '.replicas[1].behind_bytes')" -gt 0 ]
	[ "$(json '.replicas[1].lagging')" = true ]
	[ "$(json '.holding')" -eq 1 ]
	[ "$(json '.quorum')" -eq 1 ]
	[ "$(json '.replicas[0].behind_bytes')" -eq 0 ]
	[ "$(json '.replicas[0].behind_s')" -eq 0 ]
	# the time behind counts from when it was left behind: at least the
	# 2 s slept since (a lower bound only, never a timing). not a wait:
	# time passing is the subject
	sleep 2
	rc replicas --json "$POOL"
	[ "$(json '.replicas[1].behind_s')" -ge 2 ]
	[ "$(json '.replicas[0].behind_s')" -eq 0 ]
	# and the second daemon's copy is indeed behind: slot 1 never came
	[ "$(get "$R1B/app" 1)" != after ]
	rc replicas "$POOL"
	[ "$status" -eq 1 ]
	[[ "$output" == *"quorum:   1 of 2 (1 hold)"* ]]
	grep -E "^$T2/r1/app +degraded +[0-9.]+ [KMG]?i?B +[0-9]+ s +Outdated$" <<<"$output"
	rc replicas --prometheus "$POOL"
	[ "$status" -eq 1 ]
	python3 "$TOP/tests/bats/promparse.py" <<<"$output" >/dev/null
	grep -qx "rpmem_replica_holding{file=\"$POOL\",replica=\"$T2/r1/app\"} 0" <<<"$output"
	grep -qx "rpmem_replica_holding{file=\"$POOL\",replica=\"$T/r1/app\"} 1" <<<"$output"
	grep -qE "^rpmem_replica_behind_bytes\{file=\"$POOL\",replica=\"$T2/r1/app\"\} [1-9]" <<<"$output"
	grep -qE "^rpmem_replica_behind_seconds\{file=\"$POOL\",replica=\"$T2/r1/app\"\} ([2-9]|[1-9][0-9]+)$" <<<"$output"
	grep -qx "rpmem_replica_behind_seconds{file=\"$POOL\",replica=\"$T/r1/app\"} 0" <<<"$output"
	app_continue
	app_finish
	[ "$ASTATUS" -eq 0 ]
	# the process ended with a target behind: still exit 1, not running
	rc replicas --json "$POOL"
	[ "$status" -eq 1 ]
	[ "$(json .running)" = false ]
	# back up and resynced by the next run: every target holds
	start_second
	app get:1
	rc replicas --json "$POOL"
	[ "$status" -eq 0 ]
	[ "$(json '.replicas[1].behind_bytes')" -eq 0 ]
	cmp "$POOL" "$R1B/app"
}

@test "replicas: no status file, a forged one, usage errors" {
	rc replicas "$W/none"
	[ "$status" -eq 5 ]
	[[ "$output" == *"'$W/none' has no replica status"* ]]
	printf 'rpmem-replicas 1\npid 1\nreplica 0 live 0 0 x\nreplica 5 live 0 0 y\n' >"$W/f.rpmemstat"
	rc replicas "$W/f"
	[ "$status" -eq 5 ]
	[[ "$output" == *"not a replica status file"* ]]
	printf 'garbage\n' >"$W/g.rpmemstat"
	rc replicas "$W/g"
	[ "$status" -eq 5 ]
	rc replicas --json --prometheus "$W/f"
	[ "$status" -eq 2 ]
	rc replicas
	[ "$status" -eq 2 ]
	# an IPv6 target, as the library writes it: its parts, the port given
	printf 'rpmem-replicas 1\npid 1\nupdated 1\nquorum 1 1 1\nreplica 0 live 0 0 [::1]:7000/r1/p\n' >"$W/v6.rpmemstat"
	rc replicas --json "$W/v6"
	[ "$status" -eq 0 ]
	[ "$(json '.replicas[0].target')" = "[::1]:7000" ]
	[ "$(json '.replicas[0].region')/$(json '.replicas[0].pool')" = r1/p ]
	rc replicas --count 2 "$W/f"
	[ "$status" -eq 2 ]
	rc replicas --follow --prometheus "$W/f"
	[ "$status" -eq 2 ]
	rc replicas --follow --count x "$W/f"
	[ "$status" -eq 2 ]
}

@test "replicas: a torn or forged status file is an error naming its line, never a report" {
	head='rpmem-replicas 1\npid 1\nupdated 1\nquorum 1 1 1\n'
	# torn in the middle of the target: once read as the pool "po"
	printf "${head}replica 0 live 0 0 127.0.0.1:7000/r1/po" >"$W/t.rpmemstat"
	rc replicas --json "$W/t"
	[ "$status" -eq 5 ]
	[[ "$output" == *"not a replica status file: line 5 cut short (no newline: a torn file)"* ]]
	refute grep -q '"replicas"' <<<"$output"
	# a state no link has, a negative pid (kill(-1, 0) once said "running"),
	# a field too many: each named by its line
	printf "${head}replica 0 evil 0 0 127.0.0.1:7000/r1/p\n" >"$W/s.rpmemstat"
	rc replicas "$W/s"
	[ "$status" -eq 5 ]
	[[ "$output" == *"line 5 not 'replica I STATE"* ]]
	printf 'rpmem-replicas 1\npid -1\nupdated 1\nquorum 0 0 0\n' >"$W/p.rpmemstat"
	rc replicas --json "$W/p"
	[ "$status" -eq 5 ]
	[[ "$output" == *"line 2 not 'pid PID' (PID > 0)"* ]]
	printf "${head}replica 0 live 0 0 127.0.0.1:7000/r1/p x\n" >"$W/x.rpmemstat"
	rc replicas "$W/x"
	[ "$status" -eq 5 ]
	[[ "$output" == *"line 5 not 'replica I STATE"* ]]
	# the same file whole reads
	printf "${head}replica 0 live 0 0 127.0.0.1:7000/r1/p\n" >"$W/w.rpmemstat"
	rc replicas --json "$W/w"
	[ "$status" -eq 0 ]
	[ "$(json '.replicas[0].pool')" = p ]
}

@test "preload: every target by default (k = n): one stopped mid-run stops the application under fail-stop, naming the target" {
	app_start set:0:before pause set:1:after
	app_paused 1
	stop_second
	app_continue
	app_finish
	[ "$ASTATUS" -eq 134 ]
	grep -q "rpmem_preload: fail-stop: cannot replicate '$POOL': only 1 of 2 targets hold the data (2 needed); $T2/r1/app:" "$W/app.err"
}

@test "preload: below k under the degraded policy: the application goes on locally, the target that holds has every persist, the one stopped is resynced at the next start" {
	export RPMEM_REPLICATE_POLICY=degraded RPMEM_REPLICATE_RETRY=never
	app_start set:0:before pause set:1:after pause set:2:later
	app_paused 1
	stop_second
	app_continue
	app_paused 2
	# 1 of 2 hold, 2 needed: no abort, and the first daemon has set:1
	[ "$(get "$R1/app" 1)" = after ]
	[ "$(get "$R1B/app" 1)" != after ]
	app_continue
	app_finish
	[ "$ASTATUS" -eq 0 ]
	grep -q "rpmem_preload: degraded: cannot replicate '$POOL' to $T2/r1/app" "$W/app.err"
	refute grep -q "fail-stop" "$W/app.err"
	cmp "$POOL" "$R1/app"
	start_second
	[ "$(state "$T2")" = syncing ]
	app get:2
	[ "$status" -eq 0 ]
	[ "$output" = later ]
	cmp "$POOL" "$R1B/app"
	[ "$(state "$T2")" = consistent ]
}

# client_conf TEXT -- the user's rpmemctl.conf (XDG_CONFIG_HOME is $W/xdg)
client_conf() {
	mkdir -p "$XDG_CONFIG_HOME/rpmem"
	printf '%s\n' "$1" >"$XDG_CONFIG_HOME/rpmem/rpmemctl.conf"
}

@test "preload: the quorum from the client configuration (replicate.quorum in rpmemctl.conf): 1 of 2, one target stopped mid-run, the application goes on; RPMEM_REPLICATE_QUORUM overrides it" {
	client_conf 'replicate = { quorum = 1; };'
	export RPMEM_REPLICATE_RETRY=never
	app_start set:0:before pause set:1:after
	app_paused 1
	stop_second
	app_continue
	app_finish
	[ "$ASTATUS" -eq 0 ]
	grep -q "rpmem_preload: degraded: cannot replicate '$POOL' to $T2/r1/app" "$W/app.err"
	refute grep -q "fail-stop" "$W/app.err"
	[ "$(get "$R1/app" 1)" = after ]
	cmp "$POOL" "$R1/app"
	# with the second still down, the file's 1 of 2 lets the next run
	# start; the variable wins over it: 2 of 2 needed, the start refused
	app set:2:y
	[ "$status" -eq 0 ]
	RPMEM_REPLICATE_QUORUM=2 app set:2:x
	[ "$status" -ne 0 ]
	[[ "$output" == *"fail-stop: cannot start replicating '$POOL'"*"only 1 of 2 targets hold the data (2 needed)"* ]]
	[ "$(get "$R1/app" 2)" = y ]
}

@test "preload: a replicate.quorum in rpmemctl.conf that is too large, not a number, or a malformed file stops the process before it runs, naming the file" {
	local conf=$XDG_CONFIG_HOME/rpmem/rpmemctl.conf
	client_conf 'replicate = { quorum = 3; };'
	app set:0:x
	[ "$status" -ne 0 ]
	[[ "$output" == *"$conf: replicate.quorum: 3 is more than the 2 targets of '$POOL'"* ]]
	client_conf 'replicate = { quorum = "all"; };'
	app set:0:x
	[ "$status" -ne 0 ]
	[[ "$output" == *"$conf:1: replicate.quorum must be an integer"* ]]
	client_conf 'replicate = { quorum = ; };'
	app set:0:x
	[ "$status" -ne 0 ]
	[[ "$output" == *"$conf:1: "* ]]
	[ ! -e "$R1/app" ]
	[ ! -e "$R1B/app" ]
	# the variable, when set, is used, the file's too large value not
	client_conf 'replicate = { quorum = 3; };'
	RPMEM_REPLICATE_QUORUM=2 app set:0:x
	[ "$status" -eq 0 ]
	cmp "$POOL" "$R1/app"
	cmp "$POOL" "$R1B/app"
}

@test "preload: a quorum larger than a file's targets, or not a number, stops the process before it runs" {
	RPMEM_REPLICATE_QUORUM=3 app set:0:x
	[ "$status" -ne 0 ]
	[[ "$output" == *"RPMEM_REPLICATE_QUORUM: 3 is more than the 2 targets of '$POOL'"* ]]
	RPMEM_REPLICATE_QUORUM=all app set:0:x
	[ "$status" -ne 0 ]
	[[ "$output" == *"RPMEM_REPLICATE_QUORUM: 'all' is not a number"* ]]
	[ ! -e "$R1/app" ]
	[ ! -e "$R1B/app" ]
}

# --- rpmemctl mirror|sync|verify FILE TARGET... ---------------------------

# three targets: two pools of the first rpmemd, one of the second
three() {
	A=$T/r1/a
	B=$T/r1/b
	C=$T2/r1/c
}

@test "mirror to three targets: each pool file equals the local one, one summary per target" {
	three
	mkfile "$W/src" 8
	rc mirror "$W/src" "$A" "$B" "$C"
	[ "$status" -eq 0 ]
	cmp "$W/src" "$R1/a"
	cmp "$W/src" "$R1/b"
	cmp "$W/src" "$R1B/c"
	[ "$(grep -c "^mirrored '$W/src' to " <<<"$output")" -eq 3 ]
	[[ "$output" == *"to $A:"* && "$output" == *"to $B:"* && "$output" == *"to $C:"* ]]
	[ "$(written a)" -eq $((8 << 20)) ]
	[ "$(written b)" -eq $((8 << 20)) ]
}

@test "sync to three targets sends each only what differs; verify of three says identical, then names the one that differs (exit 1)" {
	three
	mkfile "$W/src" 8
	rc mirror "$W/src" "$A" "$B" "$C"
	[ "$status" -eq 0 ]
	poke "$W/src" 4096
	poke "$W/src" $((5 << 20))
	rc sync --json "$W/src" "$A" "$B" "$C"
	[ "$status" -eq 0 ]
	# one object per target
	[ "$(jq -s 'length' <<<"$output")" -eq 3 ]
	[ "$(jq -s '[.[].pool] | sort | join(",")' -r <<<"$output")" = a,b,c ]
	[ "$(jq -s '[.[].blocks_changed] | unique | join(",")' -r <<<"$output")" = 2 ]
	cmp "$W/src" "$R1/a"
	cmp "$W/src" "$R1/b"
	cmp "$W/src" "$R1B/c"
	[ "$(written a)" -lt $(((8 << 20) + (1 << 20))) ]
	rc verify "$W/src" "$A" "$B" "$C"
	[ "$status" -eq 0 ]
	[ "$(grep -c "are identical" <<<"$output")" -eq 3 ]
	# the copy on b changes behind the daemon's back
	poke "$R1/b" 8192
	rc verify --full "$W/src" "$A" "$B" "$C"
	[ "$status" -eq 1 ]
	[[ "$output" == *"'$W/src' and $B differ"* ]]
	[ "$(grep -c "are identical" <<<"$output")" -eq 2 ]
}

@test "sync to three targets with one down: the other two are updated, the exit code is the worst (3), the message names the one down" {
	three
	mkfile "$W/src" 4
	rc mirror "$W/src" "$A" "$B" "$C"
	[ "$status" -eq 0 ]
	stop_second
	poke "$W/src" 100
	rc sync "$W/src" "$A" "$B" "$C"
	[ "$status" -eq 3 ]
	[[ "$output" == *"cannot connect to $T2"* ]]
	cmp "$W/src" "$R1/a"
	cmp "$W/src" "$R1/b"
	refute cmp -s "$W/src" "$R1B/c"
	[ "$(grep -c "^synced '$W/src' to " <<<"$output")" -eq 2 ]
}

@test "several targets: each push uses its own dirty log (LOCAL.rpmemlog, LOCAL.rpmemlog.1, ...)" {
	three
	mkfile "$W/src" 4
	rc mirror "$W/src" "$A" "$B"
	[ "$status" -eq 0 ]
	# no log: none used; one for the second target only: its alone
	rc sync --json "$W/src" "$A" "$B"
	[ "$status" -eq 0 ]
	[ "$(jq -rs '[.[] | .dirty_log // "none"] | join(",")' <<<"$output")" = none,none ]
	: >"$W/src.rpmemlog.1"
	rc sync --json "$W/src" "$A" "$B"
	[ "$status" -eq 0 ]
	[ "$(jq -rs '.[] | select(.pool=="b") | .dirty_log' <<<"$output")" = "$W/src.rpmemlog.1" ]
	[ "$(jq -rs '.[] | select(.pool=="a") | .dirty_log // "none"' <<<"$output")" = none ]
}

@test "several targets are refused where one is meant: --pull, --follow, --dirty-log; a bad target stops all before anything moves" {
	three
	mkfile "$W/src" 4
	rc sync --pull "$W/src" "$A" "$B"
	[ "$status" -eq 2 ]
	[[ "$output" == *"--pull takes one target (2 given)"* ]]
	rc sync --follow 1s "$W/src" "$A" "$B"
	[ "$status" -eq 2 ]
	[[ "$output" == *"--follow takes one target"* ]]
	rc sync --dirty-log "$W/log" "$W/src" "$A" "$B"
	[ "$status" -eq 2 ]
	[[ "$output" == *"--dirty-log takes one target"* ]]
	rc mirror "$W/src" "$A" "$T/r1"
	[ "$status" -eq 2 ]
	[ ! -e "$R1/a" ]
}

# rchar_of CMD... -- bytes the command (and what it ran) read, by the
# kernel's count (/proc/PID/io of a shell that reaped it)
rchar_of() {
	bash -c 'a=$(sed -n "s/^rchar: //p" /proc/$$/io)
"$@" >/dev/null 2>&1
b=$(sed -n "s/^rchar: //p" /proc/$$/io)
echo $((b - a))' rchar "$@"
}

@test "sync and verify to three targets read the local file once, by the kernel's count of bytes read, and still move every change" {
	three
	mkfile "$W/src" 16
	rc mirror "$W/src" "$A" "$B" "$C"
	[ "$status" -eq 0 ]
	poke "$W/src" 70000
	local r
	r=$(rchar_of "$RPMEMCTL" sync "$W/src" "$A" "$B" "$C")
	# once: 16 MiB, and each push's dense probe reads its 64 sample
	# blocks (4 MiB) itself: 28 MiB; three hashings would be 60 MiB
	[ "$r" -ge $((16 << 20)) ]
	[ "$r" -lt $((32 << 20)) ]
	cmp "$W/src" "$R1/a"
	cmp "$W/src" "$R1/b"
	cmp "$W/src" "$R1B/c"
	# a verify has no probe: 16 MiB and a little; unshared 48 MiB
	r=$(rchar_of "$RPMEMCTL" verify "$W/src" "$A" "$B" "$C")
	[ "$r" -ge $((16 << 20)) ]
	[ "$r" -lt $((20 << 20)) ]
	rc -v verify "$W/src" "$A" "$B" "$C"
	[ "$status" -eq 0 ]
	[[ "$output" == *"hashed 1 time(s) for 3 targets"* ]]
}

# kill_second -- SIGKILL the second rpmemd (no clean close of anything)
kill_second() {
	kill -KILL "$DPID2"
	wait "$DPID2" 2>/dev/null || true
	DPID2=
}

# written_at TARGET -- bytes_written of pool app on TARGET, as its daemon
# counted them
written_at() {
	"$RPMEMCTL" list --json "$1/r1/app" | jq -er '.pools[0].bytes_written'
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

@test "preload: three targets, quorum 2, one rpmemd killed (SIGKILL) mid-run and restarted: the others keep k, the returning one receives only its logged extents by its daemon's count, all three equal the file" {
	export RPMEM_REPLICATE="$POOL=$T/r1/app,$T/r1/app2,$T2/r1/app"
	export RPMEM_REPLICATE_QUORUM=2 RPMEM_REPLICATE_RETRY=0 \
	       RPMEM_LOG_LEVEL=info
	app set:0:first
	[ "$status" -eq 0 ]
	app_start set:1:before pause set:2:degraded pause put:2:back \
		loop:until pause set:4:last
	app_paused 1
	kill_second
	app_continue
	app_paused 2
	# two of three hold set:2, as their files show; the killed one not
	[ "$(get "$R1/app" 2)" = degraded ]
	[ "$(get "$R1/app2" 2)" = degraded ]
	[ "$(get "$R1B/app" 2)" != degraded ]
	# what the third target's log marks while it is away
	local logged
	logged=$(logged_bytes "$POOL.rpmemlog.2")
	[ "$logged" -gt 0 ]
	[ "$logged" -lt $((16 << 20)) ]
	# back: the daemon counts from its restart
	start_second
	[ "$(state "$T2")" = syncing ]
	local w0 w1 a0 a1
	w0=$(written_at "$T2")
	a0=$(written_at "$T")
	app_continue
	# the reconnect waits for a probe of the target, off the persists:
	# transactions go on until a call after it resyncs the target
	wait_for grep -q "resynced: '$POOL' is replicated to $T2/r1/app again" \
		"$W/app.err"
	app_continue
	app_paused 3
	# the link noticed the kill (at the drain of set:2 or of put:2: a
	# drain waits for k replies only), then resynced it
	grep -q "degraded: cannot replicate '$POOL' to $T2/r1/app" "$W/app.err"
	grep -q "resynced: '$POOL' is replicated to $T2/r1/app again" \
		"$W/app.err"
	refute grep -q "fail-stop" "$W/app.err"
	w1=$(written_at "$T2")
	a1=$(written_at "$T")
	echo "# logged $logged; put:2 wrote $((a1 - a0)) to a live target," \
	     "the returning one received $((w1 - w0))" >&3
	# it received its logged extents (put:2 rewrites slot 2, inside
	# them), and the writes after its resync, as a target that held all
	# along did (the first daemon's count): no more
	[ "$((w1 - w0))" -ge "$logged" ]
	[ "$((w1 - w0))" -le "$((logged + a1 - a0))" ]
	[ "$(get "$R1B/app" 2)" = back ]
	app_continue
	app_finish
	[ "$ASTATUS" -eq 0 ]
	cmp "$POOL" "$R1/app"
	cmp "$POOL" "$R1/app2"
	cmp "$POOL" "$R1B/app"
	[ "$(state "$T2")" = consistent ]
}

# inflight DAEMON POOL -- bytes_written of DAEMON's session that has POOL
# open, if that session has written some but not all 4 MiB; else nothing
inflight() {
	"$RPMEMCTL" status --json "$1" | jq -r --arg p "$2" \
		'.sessions[] | select(.pool == $p) | .bytes_written
		 | select(. > 0 and . < 4194304)'
}

# all_inflight -- each of a, b (on $T) and c (on $T2) is part way
# through; their bytes written then in $seen
all_inflight() {
	local a b c
	a=$(inflight "$T" a)
	b=$(inflight "$T" b)
	c=$(inflight "$T2" c)
	[ -n "$a" ] && [ -n "$b" ] && [ -n "$c" ] || return 1
	seen="$a $b $c"
}

@test "mirror to three targets runs the transfers in parallel: each daemon is seen mid-transfer at the same time (their own session counters)" {
	three
	mkfile "$W/src" 4
	# paced to 512 KiB/s per target: each transfer lasts 8 s, so a
	# mirror that sent one target after another could never be seen
	# with all three sessions part way through
	"$RPMEMCTL" -q mirror --bwlimit 512K "$W/src" "$A" "$B" "$C" &
	local mpid=$! seen=
	alive_until "$mpid" all_inflight || true
	echo "# part way at once: $seen" >&3
	local st=0
	wait "$mpid" || st=$?
	[ -n "$seen" ]
	[ "$st" -eq 0 ]
	cmp "$W/src" "$R1/a"
	cmp "$W/src" "$R1/b"
	cmp "$W/src" "$R1B/c"
}
