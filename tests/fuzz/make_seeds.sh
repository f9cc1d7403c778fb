#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# make_seeds.sh -- rebuild tests/fuzz/corpus/decode_fuzz from real traffic: a
# loopback rpmemd, rpmemctl's commands through capture_seeds.py, and an
# RDMA blob of each version (no RNIC needed). Run after a protocol change
# and commit the result: `tests/fuzz/make_seeds.sh` (after `make`).
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
B=${RPMEM_BUILD:-$top/build}
out=$top/tests/fuzz/corpus/decode_fuzz
w=$(mktemp -d)
trap 'kill $dpid $ppid 2>/dev/null || true; rm -rf "$w"' EXIT

port() { echo $((20000 + RANDOM % 12000)); }
dport=$(port)
pport=$(port)
rm -rf "$out" "$top/tests/fuzz/corpus/handshake_fuzz"
mkdir -p "$w/r1" "$out"
cat >"$w/rpmemd.conf" <<CONF
listen = ["127.0.0.1"];
port = $dport;
log = { level = "err"; target = "stderr"; };
regions = ( { name = "r1"; type = "dir"; path = "$w/r1"; versions = "all"; } );
CONF
"$B/rpmemd" -c "$w/rpmemd.conf" &
dpid=$!
"$top/tests/fuzz/capture_seeds.py" "$pport" "$dport" "$out" &
ppid=$!
sleep 1
T=127.0.0.1:$pport
export XDG_CONFIG_HOME=$w/xdg
c() { "$B/rpmemctl" "$@" >/dev/null 2>&1 || true; }
head -c 4M /dev/urandom >"$w/src"
c create "$T/r1/p0" 1M
c mirror "$w/src" "$T/r1/p1"
for off in 70000 300000 1100000 2500000 3900000; do
	printf 'changed' | dd of="$w/src" bs=1 seek=$off conv=notrunc 2>/dev/null
done
c sync "$w/src" "$T/r1/p1"
c sync --block-size 4K "$w/src" "$T/r1/p1"
c sync --pull "$w/src" "$T/r1/p1"
c verify "$w/src" "$T/r1/p1"
c scrub "$T/r1/p1"
c versions "$T/r1/p1"
c sync --pull --at 1 "$w/v1" "$T/r1/p1"
c versions --prune 2 "$T/r1/p1"
c verify "$w/src" "$T/r1/nope"
c list "$T"
c list "$T/r1"
c status "$T"
c events --now --count 3 --timeout 2 "$T" &
sleep 0.3
c remove "$T/r1/p0"
wait %% 2>/dev/null || true
c kick "$T" 999
c create "$T/r1/bad..name" 1M
# OPEN_OK's RDMA blobs, v1 and v2 (lib/rdma/rdma_int.h), for a 1 MiB pool
python3 - "$out" <<'PY'
import struct, sys, os, hashlib
for ver in (1, 2):
    port = b"7637"
    blob = (struct.pack("<HBB", ver, 0, 1) + struct.pack("<H", len(port)) +
            port + bytes(range(16)) + struct.pack("<Q", 1 << 20) +
            struct.pack("<H", 20) + bytes(range(20)))
    data = bytes([25]) + blob
    name = "rdma_blob-" + hashlib.sha1(data).hexdigest()[:12]
    open(os.path.join(sys.argv[1], name), "wb").write(data)
PY
# handshake_fuzz: a real PSK ClientHello of rpmemctl (input kind 4)
hout=$top/tests/fuzz/corpus/handshake_fuzz
mkdir -p "$hout"
"$B/rpmemctl" psk-gen -i fuzz "$w/fuzz.psk" >/dev/null
hport=$(port)
python3 - "$hport" "$hout" <<'PY' &
import hashlib, os, socket, sys
ls = socket.socket()
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("127.0.0.1", int(sys.argv[1])))
ls.listen(1)
c, _ = ls.accept()
c.settimeout(3)
hello = c.recv(16384)
data = bytes([4]) + hello
name = "clienthello-" + hashlib.sha1(data).hexdigest()[:12]
open(os.path.join(sys.argv[2], name), "wb").write(data)
PY
hpid=$!
sleep 0.5
"$B/rpmemctl" list --psk-file "$w/fuzz.psk" "127.0.0.1:$hport" \
	>/dev/null 2>&1 || true
wait "$hpid"
echo "make_seeds.sh: $(ls "$out" | wc -l) seeds in $out," \
	"$(ls "$hout" | wc -l) in $hout"
