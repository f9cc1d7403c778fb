#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# killmatrix.sh -- kill -9 of rpmemctl or rpmemd at random points of a sync
#
# Starts its own rpmemd (a dir region in a new directory under DIR,
# default /dev/shm) with one pool of SIZE_MIB (default 16) MiB, mirrored
# from a random image. For each case of CASES (default "1 50 100
# mirror": a sync after 1%, 50% or 100% of the 4 KiB blocks changed, and
# a mirror into the existing pool) and each killer of KILLERS (default
# "rpmemctl rpmemd"), POINTS times (default 3): a sync to the other image
# paced with --bwlimit, kill -9 of the killer at a random point from just
# before the pool is marked syncing to past its commit (rpmemd is then
# restarted; the window, in time since rpmemctl's log says the pool is
# open, is measured on an unkilled sync of the case first, from the phase
# times -vv logs, so that it fits the link, loopback TCP or RDMA in a slow
# guest), then:
#   - the target's state must say which image it holds: consistent at
#     the old generation and the old image, consistent at the new one and
#     the new image, or syncing with a journal bound to the old
#     generation (pending) -- and, when the journal holds no block (the
#     dense path writes into a new file), the pool file is the old image;
#   - a pending pool is rolled back (every other time) and must be the old
#     image, or synced forward and must be the new one;
#   - a consistent pool verifies (rpmemctl verify) identical to the image
#     its generation names; the region's .rpmemd/ then holds no journal,
#     temporary or new file (only the pool's .meta, .hashes and .scrub),
#     and the pool file matches the state byte for byte.
# Prints one line per case and killer and a summary; exits 1 on any
# mismatch (each one is named on stderr), 2 on a usage or set-up error.
#
# Other regions and transports (the VM bed's killmatrix suite): with
# TYPE=fsdax the region is an fsdax one in a new directory under DIR;
# with TYPE=devdax it is the device DEVICE (a pool p an earlier run left
# in its table is removed first), its journals in a new directory under
# DIR (undo_dir), and the pool's bytes are checked by `rpmemctl verify
# --full` (the daemon hashes every block of its pool) instead of a
# compare of the file. HOST (default 127.0.0.1) is where rpmemd listens
# and rpmemctl connects, TRANSPORT (default tcp) the --transport of every
# sync and mirror: rdma over a Soft-RoCE device to its own address (a
# verify, which moves no data, takes the default: an fsdax pool staged
# for RDMA is read over tcp); APM=true registers the devdax region for
# APM (direct_pmem). PORT (default a random one from 20000) is rpmemd's:
# runs side by side need distinct ones.
#
# Usage: [POINTS=3] [SIZE_MIB=16] [CASES="1 50 100 mirror"]
#        [KILLERS="rpmemctl rpmemd"] [DIR=/dev/shm] [BUILD=build]
#        [TYPE=dir|fsdax|devdax] [DEVICE=/dev/daxX.Y] [HOST=127.0.0.1]
#        [TRANSPORT=tcp|rdma] [APM=true] [PACE=MiB/s] [PORT=N]
#        tests/tools/killmatrix.sh
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${BUILD:-$top/build}" && pwd) || exit 2
RPMEMD=${RPMEMD:-$BUILD/rpmemd}
RPMEMCTL=$BUILD/rpmemctl
POINTS=${POINTS:-3}
SIZE=${SIZE_MIB:-16}
CASES=${CASES:-1 50 100 mirror}
KILLERS=${KILLERS:-rpmemctl rpmemd}
TYPE=${TYPE:-dir}
HOST=${HOST:-127.0.0.1}
TRANSPORT=${TRANSPORT:-tcp}
W=$(mktemp -d "${DIR:-/dev/shm}/rpmem-kill.XXXXXX") || exit 2
R=$W/r
PORT=${PORT:-$((20000 + RANDOM % 12000))}
T=$HOST:$PORT/r/p
export XDG_CONFIG_HOME=$W/xdg
# a sync of the whole pool takes about 0.7 s at this pace
BW=${PACE:-$((SIZE * 3 / 2))}M
# --no-history: the two images are two files taking turns on one pool,
# which the generation histories would (rightly) refuse as a split brain;
# what is checked here is the atomicity of each transfer
XP=(--transport "$TRANSPORT" --no-history)
BAD=0
DPID=
case $TYPE in
dir | fsdax) REGION="{ name = \"r\"; type = \"$TYPE\"; path = \"$R\"; }" ;;
devdax)
	[ -c "${DEVICE:-}" ] || { echo "TYPE=devdax needs DEVICE" >&2; exit 2; }
	REGION="{ name = \"r\"; type = \"devdax\"; path = \"$DEVICE\"; undo_dir = \"$R\"; direct_pmem = ${APM:-false}; }" ;;
*) echo "unknown TYPE '$TYPE'" >&2; exit 2 ;;
esac
# another address than loopback: plaintext, as a test bed's (both ends)
INSECURE=
if [ "$HOST" != 127.0.0.1 ]; then
	INSECURE="allow_insecure_remote = true;"
	mkdir -p "$XDG_CONFIG_HOME/rpmem"
	echo "targets = ( { host = \"$HOST\"; plaintext = true; } );" \
		>"$XDG_CONFIG_HOME/rpmem/rpmemctl.conf"
fi

cleanup() {
	[ -n "$DPID" ] && kill "$DPID" 2>/dev/null
	wait 2>/dev/null
	[ "$BAD" -eq 0 ] && rm -rf "$W"
}
trap cleanup EXIT

mkdir -p "$R"
cat >"$W/d.conf" <<CONF
listen = ["$HOST"];
port = $PORT;
$INSECURE
log = { level = "info"; target = "stderr"; };
regions = ( $REGION );
CONF

# start -- rpmemd in the background, once it accepts
start() {
	"$RPMEMD" -c "$W/d.conf" >>"$W/d.log" 2>&1 &
	DPID=$!
	local i
	for ((i = 0; i < 200; i++)); do
		(exec 3<>"/dev/tcp/$HOST/$PORT") 2>/dev/null && return 0
		sleep 0.05
	done
	echo "rpmemd did not start (log: $W/d.log)" >&2
	exit 2
}

# bad WHAT -- a mismatch, named
bad() {
	echo "MISMATCH: $*" >&2
	BAD=$((BAD + 1))
}

# state -- "STATE PENDING GENERATION UNDO_BYTES WRITER" of the pool,
# WRITER "-" when no session has it open for writing
state() {
	"$RPMEMCTL" list --json "$T" 2>/dev/null |
		jq -r '.pools[0] | "\(.state) \(.pending) \(.generation) \(.undo_bytes // 0) \(if (.writer // "") == "" then "-" else "busy" end)"'
}

# change SRC DST PCT -- DST: SRC with PCT% of its 4 KiB blocks changed
change() {
	cp "$1" "$2"
	python3 - "$2" "$3" <<'PY'
import random, sys
path, pct = sys.argv[1], float(sys.argv[2])
with open(path, "r+b") as f:
    nb = f.seek(0, 2) // 4096
    for b in sorted(random.sample(range(nb), max(1, int(nb * pct / 100)))):
        o = b * 4096 + random.randrange(4096)
        f.seek(o)
        c = f.read(1)[0]
        f.seek(o)
        f.write(bytes([c ^ 0xff]))
PY
}

# next_image CASE -- NEW: OLD with the blocks CASE changes (a mirror: all)
next_image() {
	local pct=$1
	[ "$1" != mirror ] || pct=100
	change "$OLD" "$NEW" "$pct"
}

# now_new -- the pool committed NEW: its generation is the next one, and
# the next change starts from it
now_new() {
	GEN=$((GEN + 1))
	local t=$OLD
	OLD=$NEW
	NEW=$t
}

# leftovers -- files in .rpmemd/ (devdax: in the undo_dir) that are not
# the pool's own
leftovers() {
	local f d=$R/.rpmemd
	[ "$TYPE" = devdax ] && d=$R
	for f in "$d"/* "$d"/.[!.]*; do
		[ -e "$f" ] || continue
		case ${f##*/} in
		p.meta | p.hashes | p.scrub) ;;
		*) echo "${f##*/}" ;;
		esac
	done
}

# holds IMAGE -- the pool's bytes are IMAGE's: its file compared, or on
# devdax (no file) every block hashed by the daemon from the device
holds() {
	if [ "$TYPE" = devdax ]; then
		"$RPMEMCTL" verify -q --full "$1" "$T" >/dev/null 2>&1
	else
		cmp -s "$1" "$R/p"
	fi
}

# quiet -- until the killed writer's session is gone: rpmemd still reads
# what the client sent before it died (a WRITE in the socket's buffer);
# QUIET is then the pool's state (as state prints it)
quiet() {
	local i w
	for ((i = 0; i < 200; i++)); do
		QUIET=$(state)
		read -r _ _ _ _ w <<<"$QUIET"
		[ "$w" = - ] && return 0
		sleep 0.05
	done
	bad "the pool still has a writer (or no state) 10 s after the kill"
}

# settle CASE -- after a kill: check what the state says, roll back or go
# forward, check again; OLD/NEW/GEN follow what the pool holds
settle() {
	local st gen pend undo
	quiet
	read -r st pend gen undo _ <<<"$QUIET"
	if [ "$st" = consistent ] && [ "$gen" = "$GEN" ]; then
		holds "$OLD" || bad "$1: consistent at $gen but not the old image"
		verify "$1" "$OLD"
		N_OLD=$((N_OLD + 1))
	elif [ "$st" = consistent ] && [ "$gen" = $((GEN + 1)) ]; then
		holds "$NEW" || bad "$1: consistent at $gen but not the new image"
		verify "$1" "$NEW"
		N_NEW=$((N_NEW + 1))
		now_new
	elif [ "$st" = syncing ] && [ "$pend" = true ] && [ "$gen" = "$GEN" ]; then
		N_PEND=$((N_PEND + 1))
		# a journal of no block: nothing in the pool file was overwritten
		if [ "$undo" -le 4096 ] && [ "$TYPE" != devdax ] &&
		   ! cmp -s "$OLD" "$R/p"; then
			bad "$1: pending with an empty journal but the pool file is not the old image"
		fi
		if [ $((RANDOM % 2)) -eq 0 ]; then
			"$RPMEMCTL" rollback -q "$T" >/dev/null 2>&1 ||
				bad "$1: rollback failed"
			holds "$OLD" || bad "$1: rolled back, not the old image"
			N_BACK=$((N_BACK + 1))
		else
			forward "$1"
		fi
	else
		bad "$1: state '$st pending $pend generation $gen' (old generation $GEN)"
		return
	fi
	[ -z "$(leftovers)" ] || bad "$1: left in .rpmemd: $(leftovers | tr '\n' ' ')"
	read -r st pend gen undo _ <<<"$(state)"
	[ "$st $pend" = "consistent false" ] || bad "$1: $st after settling"
}

# verify CASE IMAGE -- the target verifies identical to IMAGE (its first
# open after a crash also removes what the crash left: a stale journal);
# the pool file is compared again after that open (on devdax the caller's
# holds, a verify --full, was itself the first open: not hashed twice)
verify() {
	local out
	out=$("$RPMEMCTL" verify -q "$2" "$T" 2>&1) ||
		bad "$1: the target does not verify identical to the image its state names: $(echo "$out" | head -3 | tr '\n' ' ')"
	[ "$TYPE" = devdax ] || holds "$2" ||
		bad "$1: verified, but the pool's bytes differ"
}

# forward CASE -- the interrupted sync completed by the next one
forward() {
	"$RPMEMCTL" sync -q "${XP[@]}" "$NEW" "$T" >/dev/null 2>&1 ||
		bad "$1: the next sync failed"
	holds "$NEW" || bad "$1: synced forward, not the new image"
	now_new
	N_FWD=$((N_FWD + 1))
}

# us -- US: the time now in microseconds (no process started, so that
# the kills' timing is not that of a fork)
us() {
	local t=$EPOCHREALTIME
	US=$((10#${t/./}))
}

# launch CASE -- CASE's sync (or mirror) started in the background, CPID,
# its -vv log readable on fd LOG (a fifo: no process between them)
launch() {
	local verb=sync
	[ "$1" != mirror ] || verb=mirror
	"$RPMEMCTL" "$verb" -vv "${XP[@]}" --bwlimit "$BW" "$NEW" "$T" \
		>/dev/null 2>"$W/log" &
	CPID=$!
	exec {LOG}<"$W/log"
}

# opened -- LINE and US: the log read up to the line that says the pool
# is open (connection, TLS and RDMA set-up done: the times that vary most
# between runs are behind it), 1 if the log ended first
opened() {
	while IFS= read -r -u "$LOG" LINE; do
		us
		[[ "$LINE" != *": pool '"*", transport "* ]] || return 0
	done
	return 1
}

# finish -- the log read to its end (the command's exit), CPID awaited
finish() {
	while read -r -u "$LOG" _; do :; done
	exec {LOG}<&-
	wait "$CPID" 2>/dev/null
}

# calibrate CASE -- WIN_FROM and WIN_TO (microseconds after the pool is
# open): from just before SET_STATE syncing to the end of SET_STATE
# consistent of one unkilled sync of CASE (which the pool then holds),
# widened by a tenth of that span and 5 ms on each side
calibrate() {
	local t0 from='' to='' ms
	next_image "$1"
	launch "$1"
	if opened; then
		t0=$US
		while IFS= read -r -u "$LOG" LINE; do
			us
			case $LINE in
			*"SET_STATE syncing in "*)
				# the phase's own time: it began just before
				ms=${LINE##*SET_STATE syncing in }
				ms=${ms%% ms*}
				from=$((US - t0 - 10#${ms%.*} * 1000 - 10#${ms#*.} * 100)) ;;
			*"SET_STATE consistent in "*) to=$((US - t0)) ;;
			esac
		done
	fi
	finish
	if [ -z "$from" ] || [ -z "$to" ] || [ "$to" -lt "$from" ]; then
		echo "calibration of case $1: no phase times (from '$from' to '$to')" >&2
		exit 2
	fi
	local m=$(((to - from) / 10 + 5000))
	WIN_FROM=$((from > m ? from - m : 0))
	WIN_TO=$((to + m))
	now_new
	holds "$OLD" || bad "$1: the calibration's sync did not give the new image"
}

# point CASE KILLER -- one sync (or mirror) killed at a random point of
# the case's window after its pool is open (the log read meanwhile)
point() {
	local at end left
	at=$((WIN_FROM + (RANDOM * 32768 + RANDOM) % (WIN_TO - WIN_FROM + 1)))
	launch "$1"
	if opened; then
		end=$((US + at))
		while us && [ "$US" -lt "$end" ]; do
			left=$((end - US))
			printf -v left '%d.%06d' $((left / 1000000)) $((left % 1000000))
			IFS= read -rt "$left" -u "$LOG" LINE
			# 1 the log ended (the command exited), > 128 timed out
			[ $? -ne 1 ] || break
		done
	fi
	if [ "$2" = rpmemctl ]; then
		kill -9 "$CPID" 2>/dev/null
	else
		kill -9 "$DPID"
		wait "$DPID" 2>/dev/null
		start
	fi
	finish
	settle "$1/$2"
}

mkfifo "$W/log"
start
head -c $((SIZE << 20)) /dev/urandom >"$W/a"
# a pool an earlier run left (a devdax region's table) goes first
"$RPMEMCTL" remove -q "$T" >/dev/null 2>&1
"$RPMEMCTL" mirror -q "${XP[@]}" "$W/a" "$T" ||
	{ echo "the first mirror failed" >&2; exit 2; }
OLD=$W/a
NEW=$W/b
read -r _ _ GEN _ <<<"$(state)"
N_OLD=0 N_NEW=0 N_PEND=0 N_BACK=0 N_FWD=0
for c in $CASES; do
	for k in $KILLERS; do
		before=$BAD
		calibrate "$c"
		for _ in $(seq "$POINTS"); do
			next_image "$c"
			point "$c" "$k"
		done
		echo "case $c, kill -9 of $k: $POINTS points from $((WIN_FROM / 1000)) to $((WIN_TO / 1000)) ms, $((BAD - before)) mismatches"
	done
done
SWAPS=$(grep -c "written into a new file" "$W/d.log")
SESS=$(grep -c "opened pool r/p (rw, .*, $TRANSPORT)" "$W/d.log")
echo "summary: $N_OLD old image, $N_NEW new image, $N_PEND pending ($N_BACK rolled back, $N_FWD synced forward); $BAD mismatches; $SWAPS syncs written into a new file; $SESS opens of the pool over $TRANSPORT ($TYPE); ${SECONDS} s"
[ "$BAD" -eq 0 ] || { echo "kept: $W" >&2; exit 1; }
