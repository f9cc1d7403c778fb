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
#        LINK=10gbit tests/bench/tls.sh ...   (as root)
# Runs are interleaved (plaintext, TLS, ssh in each round); medians.
# Needs openssh-server for the ssh peer (packaging/install-deps.sh).
#
# On loopback both ends share this machine's cores, so the cipher's cost
# is paid twice (encrypt, decrypt) out of the same CPU that moves the
# bytes: the report gives the ceiling that implies, from the plaintext
# rate P and `openssl speed`'s AES-128-GCM rate C measured in the same
# run: 1 / (1 + P / C). With LINK (a tc rate, e.g. 10gbit) the daemons
# and sshd run in a private network namespace behind a veth pair shaped
# to that rate in both directions, as two hosts on a real link would be.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/bench/lib.sh
. "$top/tests/bench/lib.sh"
B=${RPMEM_BUILD:-$top/build}
SIZE=${1:-1024}
RUNS=${2:-5}
LINK=${LINK:-}
W=$(mktemp -d /dev/shm/rpmem-tls-bench.XXXXXX)
P1=$((21000 + RANDOM % 9000))
P2=$((P1 + 1))
SSHP=$((P1 + 2))
HOST=127.0.0.1
NS=
IN_NS=()

cleanup() {
	for p in ${DPIDS:-} ${SSHPID:-}; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	if [ -n "$NS" ]; then
		ip netns del "$NS" 2>/dev/null || true
		ip link del "rpb$$" 2>/dev/null || true
	fi
	rm -rf "$W"
}
trap cleanup EXIT

# link_up -- the target side in network namespace $NS, 10.199.N.2, behind a
# veth pair whose both ends are shaped to $LINK
link_up() {
	local net=$((P1 % 200 + 20))
	NS=rpmem-bench-$$
	ip netns add "$NS"
	ip link add "rpb$$" type veth peer name "rpt$$"
	ip link set "rpt$$" netns "$NS"
	ip addr add "10.199.$net.1/24" dev "rpb$$"
	ip link set "rpb$$" up
	ip netns exec "$NS" ip addr add "10.199.$net.2/24" dev "rpt$$"
	ip netns exec "$NS" ip link set "rpt$$" up
	ip netns exec "$NS" ip link set lo up
	tc qdisc add dev "rpb$$" root tbf rate "$LINK" burst 4mb latency 20ms
	ip netns exec "$NS" tc qdisc add dev "rpt$$" root tbf rate "$LINK" \
		burst 4mb latency 20ms
	HOST=10.199.$net.2
	IN_NS=(ip netns exec "$NS")
}
if [ -n "$LINK" ]; then
	[ "$(id -u)" = 0 ] || { echo "tls.sh: LINK needs root (ip netns, tc)" >&2; exit 2; }
	link_up
fi


mkdir -p "$W/plain" "$W/tls" "$W/ssh"
"$B/rpmemctl" -q psk-gen -i bench "$W/bench.psk"
cp "$W/bench.psk" "$W/server.psk"
for d in plain tls; do
	port=$P1
	[ $d = tls ] && port=$P2
	cat >"$W/$d.conf" <<CONF
listen = ["$HOST"];
port = $port;
log = { level = "warning"; target = "stderr"; };
regions = ( { name = "bench"; type = "dir"; path = "$W/$d"; } );
CONF
	[ $d = tls ] && cat >>"$W/$d.conf" <<CONF
tls = { psk_file = "$W/server.psk"; };
access = ( { identity = "bench"; regions = [ "*" ]; rights = [ "write" ]; } );
CONF
	# the plaintext peer on the emulated link, for comparison only
	[ $d = plain ] && [ -n "$LINK" ] &&
		echo "allow_insecure_remote = true;" >>"$W/$d.conf"
	"${IN_NS[@]}" "$B/rpmemd" -c "$W/$d.conf" 2>"$W/$d.log" &
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
ListenAddress $HOST
HostKey $W/hostkey
AuthorizedKeysFile $W/authorized_keys
PasswordAuthentication no
StrictModes no
PidFile $W/sshd.pid
CONF
	mkdir -p /run/sshd
	"${IN_NS[@]}" "$SSHD" -D -f "$W/sshd_config" -E "$W/sshd.log" &
	SSHPID=$!
	SSH=(ssh -p "$SSHP" -i "$W/userkey" -o BatchMode=yes
		-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null
		-c aes128-gcm@openssh.com -o LogLevel=ERROR "$HOST")
	sleep 0.5
	"${SSH[@]}" true && have_ssh=1
fi
sleep 0.3

echo "preparing a $SIZE MiB pool file" >&2
head -c $((SIZE << 20)) /dev/urandom >"$W/src"
TP=$HOST:$P1
TT=$HOST:$P2
PSK=(--psk-file "$W/bench.psk")
# the plaintext target is not on loopback: rpmemctl needs the opt-in
PLAIN=(--plaintext)
"$B/rpmemctl" -q mirror "${PLAIN[@]}" "$W/src" "$TP/bench/m"
"$B/rpmemctl" -q mirror "${PSK[@]}" "$W/src" "$TT/bench/m"

: >"$W/t_plain"
: >"$W/t_tls"
: >"$W/t_ssh"
for r in $(seq "$RUNS"); do
	t0=$(now)
	"$B/rpmemctl" -q mirror "${PLAIN[@]}" "$W/src" "$TP/bench/m"
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

# the cipher's own rate on this machine, in MiB/s (16 KiB records)
cipher=$(openssl speed -elapsed -seconds 2 -bytes 16384 -evp aes-128-gcm \
	2>/dev/null | awk '/^AES-128-GCM/ {sub("k", "", $2);
		printf "%.0f", $2 * 1000 / 1048576}')

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
		lat "$TP" $io "${PLAIN[@]}" >>"$W/l_plain_$io"
		lat "$TT" $io "${PSK[@]}" >>"$W/l_tls_$io"
	done
done

echo
if [ -n "$LINK" ]; then
	where="a veth link shaped to $LINK (tc tbf) between two network namespaces"
else
	where="loopback"
fi
echo "Pool $SIZE MiB in /dev/shm, $where, medians of $RUNS interleaved runs, $(nproc) cores."
echo "AES-128-GCM (openssl speed, 16 KiB, one core): $cipher MiB/s."
echo
echo "| measure | TLS | peer | ratio (goal) |"
echo "|---|---|---|---|"
echo "| mirror into an existing pool | $(mibs "$tl_t") MiB/s ($tl_t s) | plaintext $(mibs "$pl_t") MiB/s ($pl_t s) | $(ratio "$pl_t" "$tl_t") of plaintext (>= 0.8) |"
if [ -z "$LINK" ] && [ -n "$cipher" ]; then
	ceil=$(awk -v p="$(mibs "$pl_t")" -v c="$cipher" \
		'BEGIN {printf "%.2f", 1 / (1 + p / c)}')
	echo "| the cipher's ceiling on shared cores, 1 / (1 + P / C) | | P $(mibs "$pl_t") MiB/s, C $cipher MiB/s | $ceil of plaintext; TLS reached $(ratio "$(ratio "$pl_t" "$tl_t")" "$ceil") of it |"
fi
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
