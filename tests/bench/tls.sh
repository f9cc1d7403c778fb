#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# tls.sh -- what TLS costs, as ratios against peers measured in the same run
#
#   mirror of SIZE_MIB into an existing pool: TLS (PSK) vs plaintext
#   the same over ssh: ssh -c aes128-gcm@openssh.com localhost 'cat > file'
#     (a private sshd on a loopback port, started and stopped here)
#   persist latency (rpmemctl bench, 4 KiB and 256 B): TLS vs plaintext
#
# Usage: tests/bench/tls.sh [SIZE_MIB (1024)] [RUNS (5)]
# Runs are interleaved (plaintext, TLS, ssh in each round); medians.
# Needs openssh-server for the ssh peer (packaging/install-deps.sh).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
B=${RPMEM_BUILD:-$top/build}
SIZE=${1:-1024}
RUNS=${2:-5}
W=$(mktemp -d /dev/shm/rpmem-tls-bench.XXXXXX)
P1=$((21000 + RANDOM % 9000))
P2=$((P1 + 1))
SSHP=$((P1 + 2))

cleanup() {
	for p in ${DPIDS:-} ${SSHPID:-}; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$W"
}
trap cleanup EXIT

now() { date +%s.%N; }
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }
mibs() { awk -v s="$SIZE" -v t="$1" 'BEGIN {printf "%.0f", s / t}'; }

mkdir -p "$W/plain" "$W/tls" "$W/ssh"
"$B/rpmemctl" -q psk-gen -i bench "$W/bench.psk"
cp "$W/bench.psk" "$W/server.psk"
for d in plain tls; do
	port=$P1
	[ $d = tls ] && port=$P2
	cat >"$W/$d.conf" <<CONF
listen = ["127.0.0.1"];
port = $port;
log = { level = "warning"; target = "stderr"; };
regions = ( { name = "bench"; type = "dir"; path = "$W/$d"; } );
CONF
	[ $d = tls ] && cat >>"$W/$d.conf" <<CONF
tls = { psk_file = "$W/server.psk"; };
access = ( { identity = "bench"; regions = [ "*" ]; rights = [ "write" ]; } );
CONF
	"$B/rpmemd" -c "$W/$d.conf" 2>"$W/$d.log" &
	DPIDS="${DPIDS:-} $!"
done

# a private sshd: host key, one authorized key, loopback only
SSHD=$(command -v sshd || echo /usr/sbin/sshd)
have_ssh=0
if [ -x "$SSHD" ]; then
	ssh-keygen -q -t ed25519 -N '' -f "$W/hostkey"
	ssh-keygen -q -t ed25519 -N '' -f "$W/userkey"
	cp "$W/userkey.pub" "$W/authorized_keys"
	chmod 600 "$W/authorized_keys"
	cat >"$W/sshd_config" <<CONF
Port $SSHP
ListenAddress 127.0.0.1
HostKey $W/hostkey
AuthorizedKeysFile $W/authorized_keys
PasswordAuthentication no
StrictModes no
PidFile $W/sshd.pid
CONF
	mkdir -p /run/sshd
	"$SSHD" -D -f "$W/sshd_config" -E "$W/sshd.log" &
	SSHPID=$!
	SSH=(ssh -p "$SSHP" -i "$W/userkey" -o BatchMode=yes
		-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null
		-c aes128-gcm@openssh.com -o LogLevel=ERROR 127.0.0.1)
	sleep 0.5
	"${SSH[@]}" true && have_ssh=1
fi
sleep 0.3

echo "preparing a $SIZE MiB pool file" >&2
head -c $((SIZE << 20)) /dev/urandom >"$W/src"
TP=127.0.0.1:$P1
TT=127.0.0.1:$P2
PSK=(--psk-file "$W/bench.psk")
"$B/rpmemctl" -q mirror "$W/src" "$TP/bench/m"
"$B/rpmemctl" -q mirror "${PSK[@]}" "$W/src" "$TT/bench/m"

: >"$W/t_plain"
: >"$W/t_tls"
: >"$W/t_ssh"
for r in $(seq "$RUNS"); do
	t0=$(now)
	"$B/rpmemctl" -q mirror "$W/src" "$TP/bench/m"
	t1=$(now)
	echo "$t1 - $t0" | bc -l >>"$W/t_plain"
	cmp "$W/src" "$W/plain/m"

	t0=$(now)
	"$B/rpmemctl" -q mirror "${PSK[@]}" "$W/src" "$TT/bench/m"
	t1=$(now)
	echo "$t1 - $t0" | bc -l >>"$W/t_tls"
	cmp "$W/src" "$W/tls/m"

	if [ $have_ssh = 1 ]; then
		t0=$(now)
		"${SSH[@]}" "cat > $W/ssh/m" <"$W/src"
		t1=$(now)
		echo "$t1 - $t0" | bc -l >>"$W/t_ssh"
		cmp "$W/src" "$W/ssh/m"
	fi
	echo "run $r: plain $(tail -1 "$W/t_plain") s, tls $(tail -1 "$W/t_tls") s, ssh $(tail -1 "$W/t_ssh" 2>/dev/null || echo -) s" >&2
done
pl_t=$(median <"$W/t_plain")
tl_t=$(median <"$W/t_tls")

# persist latency: rpmemctl bench --json, median of the runs' medians
lat() { # TARGET IO_SIZE [ARGS...]
	local t=$1 io=$2
	shift 2
	"$B/rpmemctl" bench -j -s 16M -i "$io" -c 2000 "$@" "$t/bench/lat" |
		jq -r .lat_median_us
}
for io in 4096 256; do
	: >"$W/l_plain_$io"
	: >"$W/l_tls_$io"
	for r in $(seq "$RUNS"); do
		lat "$TP" $io >>"$W/l_plain_$io"
		lat "$TT" $io "${PSK[@]}" >>"$W/l_tls_$io"
	done
done

echo
echo "Pool $SIZE MiB in /dev/shm, loopback, medians of $RUNS interleaved runs, $(nproc) cores."
echo
echo "| measure | TLS | peer | ratio (goal) |"
echo "|---|---|---|---|"
echo "| mirror into an existing pool | $(mibs "$tl_t") MiB/s ($tl_t s) | plaintext $(mibs "$pl_t") MiB/s ($pl_t s) | $(ratio "$pl_t" "$tl_t") of plaintext (>= 0.8) |"
if [ $have_ssh = 1 ]; then
	ss_t=$(median <"$W/t_ssh")
	echo "| the same vs ssh (aes128-gcm) cat > file | $(mibs "$tl_t") MiB/s | ssh $(mibs "$ss_t") MiB/s ($ss_t s) | $(ratio "$ss_t" "$tl_t")x ssh (>= 3x) |"
else
	echo "| the same vs ssh | - | sshd not installed | not measured |"
fi
for io in 4096 256; do
	a=$(median <"$W/l_tls_$io")
	b=$(median <"$W/l_plain_$io")
	echo "| persist latency, $io B | $a us | plaintext $b us | $(ratio "$a" "$b")x plaintext |"
done
