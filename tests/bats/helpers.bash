# SPDX-License-Identifier: BSD-3-Clause
# helpers.bash -- common set-up for the BATS suites: a real rpmemd on loopback

TOP=$(cd "$(dirname "${BATS_TEST_FILENAME}")/../.." && pwd)
BUILD=${RPMEM_BUILD:-$TOP/build}
# RPMEM_RPMEMD: the daemon to run instead (tests/san-bats.sh: with -S)
RPMEMD=${RPMEM_RPMEMD:-$BUILD/rpmemd}
RPMEMCTL=$BUILD/rpmemctl

# free_port -- a TCP port nobody listens on (loopback)
free_port() {
	local p
	while :; do
		# below the kernel's ephemeral range (32768-60999)
		p=$((20000 + RANDOM % 12000))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p"
			return
		fi
	done
}

# write_conf FILE PORT -- a config with regions r1 (dir) and small (dir, tmpfs-sized)
write_conf() {
	cat >"$1" <<CONF
listen = ["127.0.0.1"];
port = $2;
log = { level = "info"; target = "stderr"; };
max_sessions = 16;
regions = (
  { name = "r1"; type = "dir"; path = "$R1"; }
);
CONF
}

# poll SECONDS PID CMD... -- the one polling loop: CMD every 0.05 s until
# it succeeds (0); 1, saying what it awaited, after SECONDS or once the
# background process PID (none if empty) has exited without it. Use
# wait_for or alive_until, which call it.
poll() {
	# names of its own: CMD may set variables of the caller's
	local _p_secs=$1 _p_pid=$2 _p_n
	shift 2
	for ((_p_n = _p_secs * 20; _p_n > 0; _p_n--)); do
		"$@" && return 0
		if [ -n "$_p_pid" ] && ! kill -0 "$_p_pid" 2>/dev/null; then
			"$@" && return 0
			echo "gave up waiting for: $* (process $_p_pid exited)" >&2
			return 1
		fi
		sleep 0.05
	done
	"$@" && return 0
	echo "gave up waiting for: $* (after $_p_secs s)" >&2
	return 1
}

# alive_until [-t SECONDS] PID CMD... -- until CMD succeeds (0); 1 once the
# background process PID has exited without it, or after SECONDS (60)
alive_until() {
	local secs=60
	if [ "$1" = -t ]; then
		secs=$2
		shift 2
	fi
	poll "$secs" "$@"
}

# accepts PORT -- 127.0.0.1:PORT takes a connection
accepts() {
	(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# start_daemon -- rpmemd in the background; waits until it accepts
start_daemon() {
	"$RPMEMD" -c "$CONF" >>"$DLOG" 2>&1 &
	DPID=$!
	alive_until "$DPID" accepts "$PORT" && return 0
	echo "rpmemd did not start:" >&2
	cat "$DLOG" >&2
	return 1
}

stop_daemon() {
	if [ -n "${DPID:-}" ] && kill -0 "$DPID" 2>/dev/null; then
		kill -TERM "$DPID"
		wait "$DPID" || true
	fi
	DPID=
}

# start_second -- a second rpmemd: region r1 in $R1B, port $PORT2 ($T2)
start_second() {
	R1B=$W/r1b
	mkdir -p "$R1B"
	[ -n "${PORT2:-}" ] || PORT2=$(free_port)
	T2=127.0.0.1:$PORT2
	sed -e "s|port = $PORT;|port = $PORT2;|" \
	    -e "s|path = \"$R1\";|path = \"$R1B\";|" "$CONF" >"$W/rpmemd2.conf"
	"$RPMEMD" -c "$W/rpmemd2.conf" >>"$W/rpmemd2.log" 2>&1 &
	DPID2=$!
	alive_until "$DPID2" accepts "$PORT2" && return 0
	cat "$W/rpmemd2.log" >&2
	return 1
}

stop_second() {
	if [ -n "${DPID2:-}" ] && kill -0 "$DPID2" 2>/dev/null; then
		kill -TERM "$DPID2"
		wait "$DPID2" || true
	fi
	DPID2=
}

# setup_env -- a work dir, region r1, a free port and a config; no daemon yet
setup_env() {
	W=$BATS_TEST_TMPDIR
	R1=$W/r1
	mkdir -p "$R1"
	PORT=$(free_port)
	CONF=$W/rpmemd.conf
	DLOG=$W/rpmemd.log
	T=127.0.0.1:$PORT
	# no credentials from the user running the tests
	export XDG_CONFIG_HOME=$W/xdg
	write_conf "$CONF" "$PORT"
}

setup_daemon() {
	setup_env
	start_daemon
}

teardown_daemon() {
	stop_daemon
	if [ "${BATS_TEST_COMPLETED:-}" != 1 ] && [ -f "${DLOG:-}" ]; then
		echo "--- rpmemd log ---" >&3
		tail -n 30 "$DLOG" >&3
	fi
}

# rc -- run rpmemctl; sets $status and $output (bats' run)
rc() {
	run "$RPMEMCTL" "$@"
}

# mkfile PATH SIZE_MIB -- a file of random data
mkfile() {
	head -c "$(($2 << 20))" /dev/urandom >"$1"
}

# poke FILE OFFSET -- change one byte at OFFSET (to its complement)
poke() {
	local b
	b=$(dd if="$1" bs=1 skip="$2" count=1 2>/dev/null | od -An -tu1 | tr -d ' ')
	printf "$(printf '\\%03o' $((255 - b)))" |
		dd of="$1" bs=1 seek="$2" conv=notrunc 2>/dev/null
}

# flip_mapped FILE OFFSET -- change a byte through a shared mapping, as a
# program writing the pool file behind rpmemd's back would; in tmpfs that
# changes neither mtime nor ctime (as a bit rotting on the medium), so
# rpmemd's hash cache keeps the old byte's hash
flip_mapped() {
	python3 - "$1" "$2" <<'PY'
import mmap, sys
with open(sys.argv[1], "r+b") as f:
    m = mmap.mmap(f.fileno(), 0)
    off = int(sys.argv[2])
    m[off] = m[off] ^ 0xff
    m.close()
PY
}

# written POOL -- the bytes the daemon itself counted as written into pool
# r1/POOL since it started (list --json pools[].bytes_written): over TCP,
# as here, the payloads of the WRITEs it received into the pool (over RDMA
# it would be the flushed ranges, see rpmemd(8)). Leaves $output alone.
written() {
	"$RPMEMCTL" list --json "$T/r1/$1" | jq -er '.pools[0].bytes_written'
}

# json EXPR -- evaluate a jq expression on $output
json() {
	jq -r "$1" <<<"$output"
}

# refute CMD... -- fail the test if CMD succeeds. A bare "! CMD" in the
# middle of a test fails nothing: bash's set -e ignores a negated command
refute() {
	if "$@"; then
		echo "expected to fail: $*" >&2
		return 1
	fi
	return 0
}

# subscribe OUT ARGS... -- rpmemctl events --now --json ARGS in the
# background into OUT; returns once the current state has been printed
# (the 'exists -' marker), so everything after it is a live event
subscribe() {
	local out=$1
	shift
	"$RPMEMCTL" events --now --json "$@" >"$out" 2>"$out.err" &
	EPID=$!
	alive_until "$EPID" grep -q '"event":"exists","object":"-"' "$out" &&
		return 0
	cat "$out.err" >&2
	return 1
}

# hold POOL SECONDS [BYTES] [PSK_FILE] -- tests/hold_pool in the background
# (output in $W/hold.out, pid in HP); returns once it holds the pool, fails
# if it has not within 60 s or exited. kill -USR1 "$HP" ends its hold
# early, cleanly
hold() {
	"$BUILD/tests/hold_pool" "$@" >"$W/hold.out" 2>&1 3>&- &
	HP=$!
	alive_until "$HP" grep -q holding "$W/hold.out" && return 0
	cat "$W/hold.out" >&2
	return 1
}

# wait_for [-t SECONDS] CMD... -- until CMD succeeds; gives up (fails,
# saying what it waited for) after SECONDS (60): a bound for a loaded
# machine, not a timing.
# The one way a test waits: for the condition a sleep would stand for
# (a log line, a counter, a file), never for a length of time. A bare
# `sleep` stays only where time passing is the test's subject (a timeout
# let expire on purpose, a writer paced), with a comment saying so; use
# alive_until instead when a background process may die without the
# condition ever holding. A bare sleep carries a "# not a wait:" comment
# on its line or the line before (tests/bats/waits.bats checks it).
wait_for() {
	local secs=60
	if [ "$1" = -t ]; then
		secs=$2
		shift 2
	fi
	poll "$secs" "" "$@"
}

# regions_are N -- the daemon lists N regions (after a reload)
regions_are() {
	rc list --json "$T"
	[ "$(json '.regions | length')" -eq "$1" ]
}

# closed N -- rpmemd has logged the end of at least N sessions (a client's
# BYE has no reply: its session ends a moment after the client exits)
closed() {
	[ "$(grep -c '^rpmemd: info: session [0-9]* from .* closed: ' "$DLOG")" -ge "$1" ]
}

# raw_controls FILE -- FILE (- for stdin) holds a control character a
# terminal acts on, raw: a C0 one other than tab and newline, DEL, a C1
# control (UTF-8 C2 80-9F), or a bidirectional control (U+061C, U+200E,
# U+200F, U+202A-U+202E, U+2066-U+2069) or U+2028/U+2029
raw_controls() {
	LC_ALL=C grep -qaP '[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]|\xd8\x9c|\xe2\x80[\x8e\x8f\xa8-\xae]|\xe2\x81[\xa6-\xa9]' "$1"
}
