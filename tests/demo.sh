#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# demo.sh -- the main job on an embedded default: a loopback rpmemd with a
# dir region; create a 64 MiB pool file, mirror, change blocks, sync,
# verify, status, stop.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
B=${RPMEM_BUILD:-$top/build}
W=$(mktemp -d /tmp/rpmem-demo.XXXXXX)
PORT=${RPMEM_DEMO_PORT:-17636}
T=127.0.0.1:$PORT

cleanup() {
	[ -n "${DPID:-}" ] && kill -TERM "$DPID" 2>/dev/null && wait "$DPID" || true
	rm -rf "$W"
}
trap cleanup EXIT

step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; "$@"; }

mkdir -p "$W/region"
cat >"$W/rpmemd.conf" <<CONF
listen = ["127.0.0.1"];
port = $PORT;
log = { level = "notice"; target = "stderr"; };
regions = ( { name = "demo"; type = "dir"; path = "$W/region"; } );
CONF

echo "== rpmemd on $T with dir region 'demo' in $W/region"
"$B/rpmemd" -c "$W/rpmemd.conf" 2>"$W/rpmemd.log" &
DPID=$!
for _ in $(seq 100); do
	(exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break
	sleep 0.05
done

echo "== a 64 MiB local pool file"
head -c $((64 << 20)) /dev/urandom >"$W/pool.bin"

step "$B/rpmemctl" mirror "$W/pool.bin" "$T/demo/pool1"
step cmp "$W/pool.bin" "$W/region/pool1"
echo "replica is byte-identical"

echo "== change 3 scattered 4 KiB blocks locally"
for off in 4096 $((20 << 20)) $((50 << 20)); do
	head -c 4096 /dev/urandom |
		dd of="$W/pool.bin" bs=4096 seek=$((off / 4096)) conv=notrunc status=none
done
step "$B/rpmemctl" sync --dry-run "$W/pool.bin" "$T/demo/pool1"
step "$B/rpmemctl" sync "$W/pool.bin" "$T/demo/pool1"
echo "only the 3 changed 4 KiB blocks moved"
step "$B/rpmemctl" verify "$W/pool.bin" "$T/demo/pool1"
echo "verify: identical"
step "$B/rpmemctl" status "$T"

echo
echo "== stopping rpmemd"
kill -TERM "$DPID"
wait "$DPID"
DPID=
echo "demo complete"
