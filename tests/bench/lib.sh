# SPDX-License-Identifier: BSD-3-Clause
# lib.sh -- what the benchmark scripts share; sourced, not run
#
# Expects B (the build directory), W (a work directory), PORT and T
# (127.0.0.1:$PORT) to be set by the script.

# median -- the median of the numbers on stdin, one a line
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
# now -- seconds since the epoch, with nanoseconds
now() { date +%s.%N; }
# ratio A B -- A / B to two decimals
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }
# mibs SECONDS -- MiB/s of $SIZE MiB moved in SECONDS
mibs() { awk -v s="$SIZE" -v t="$1" 'BEGIN {printf "%.0f", s / t}'; }

# bench_daemon DIR REGION LEVEL [CONF] -- rpmemd on 127.0.0.1:$PORT with
# the dir region REGION in $W/DIR, logging at LEVEL to $W/rpmemd.log, and
# the lines CONF added to its configuration (max_sessions, tls, access);
# returns once it accepts connections (DPID is its pid). The user's own
# client credentials are kept out: the benchmarks speak plaintext on
# loopback unless CONF asks for TLS.
bench_daemon() {
	mkdir -p "$W/$1"
	cat >"$W/rpmemd.conf" <<CONF
listen = ["127.0.0.1"];
port = $PORT;
log = { level = "$3"; target = "stderr"; };
regions = ( { name = "$2"; type = "dir"; path = "$W/$1"; } );
${4:-}
CONF
	"$B/rpmemd" -c "$W/rpmemd.conf" 2>"$W/rpmemd.log" &
	DPID=$!
	wait_port "$PORT"
	export XDG_CONFIG_HOME=$W/xdg
}

# bench_daemons N -- N rpmemd on 127.0.0.1:$((P0 + I)), I from 0, each with
# the dir region bench in $W/dI, logging warnings to $W/dI.log; their pids
# are appended to DP, their addresses set in T; returns 1 if one does not
# accept connections
bench_daemons() {
	local i port
	T=()
	for i in $(seq 0 $(($1 - 1))); do
		port=$((P0 + i))
		mkdir -p "$W/d$i"
		cat >"$W/d$i.conf" <<CONF
listen = ["127.0.0.1"];
port = $port;
log = { level = "warning"; target = "stderr"; };
regions = ( { name = "bench"; type = "dir"; path = "$W/d$i"; } );
CONF
		"$B/rpmemd" -c "$W/d$i.conf" 2>"$W/d$i.log" &
		DP+=($!)
		T+=("127.0.0.1:$port")
		wait_port "$port" || return 1
	done
}

# wait_port PORT -- returns once 127.0.0.1:PORT accepts (1 after 5 s)
wait_port() {
	local _
	for _ in $(seq 100); do
		(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}
