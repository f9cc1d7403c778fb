#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# integrity.bats -- pools stay truthful and the tools survive files that
# change under them (issue 9)

load helpers

SHIM=$BUILD/tests/truncate_shim.so

setup() { setup_daemon; }
teardown() { teardown_daemon; }

# pool_field POOL FIELD -- a field of POOL in 'rpmemctl list --json'
pool_field() {
	rc list --json "$T/r1"
	json ".pools[] | select(.name==\"$1\") | .$2"
}

# shim_run FILE TYPE SIZE ARGS... -- rpmemctl ARGS with FILE truncated to
# SIZE bytes just before the first frame of TYPE (12 WRITE, 16 HASH) goes
shim_run() {
	local file=$1 type=$2 size=$3
	shift 3
	run env LD_PRELOAD="$SHIM" RPMEM_SHIM_FILE="$file" \
		RPMEM_SHIM_TYPE="$type" RPMEM_SHIM_SIZE="$size" "$RPMEMCTL" "$@"
}

# raw_write_flush POOL -- a raw-protocol client: OPEN POOL rw, WRITE 4 KiB
# of 'X' at offset 0, FLUSH; prints the FLUSH reply as "TYPE CODE MESSAGE"
raw_write_flush() {
	python3 - "$PORT" "$1" "$TOP/tests/fuzz" <<'PY'
import struct, sys
sys.path.insert(0, sys.argv[3])
from proto_poke import Conn, T, s16, err_code
c = Conn(int(sys.argv[1]))
typ, o = c.req(T['OPEN'], s16('r1') + s16(sys.argv[2]) + b'\1\0')
assert typ == 'OPEN_OK', typ
h = struct.unpack_from('<I', o)[0]
c.send(T['WRITE'], struct.pack('<IQI', h, 0, 4096) + b'X' * 4096)
typ, p = c.req(T['FLUSH'], struct.pack('<IQQ', h, 0, 4096))
msg = p[6:].decode(errors='replace') if typ == 'ERROR' else ''
print(typ, err_code(p) if typ == 'ERROR' else 0, msg)
PY
}

# changed_and_syncing -- the last command failed because its local file
# changed under it (exit 5, the file named, no raw errno) and left p1
# syncing, with rpmemd still serving
changed_and_syncing() {
	echo "$output"
	[ "$status" -eq 5 ]
	[[ "$output" == *"'$W/src'"* ]]
	[[ "$output" == *"changed"* ]]
	[[ "$output" != *"Bad address"* ]]
	[ "$(pool_field p1 state)" = syncing ]
	kill -0 "$DPID"
}

# --- issue 9.1: a local file that changes under sync or verify ------------

@test "sync whose local file shrinks while it is sent exits 5 naming the file and leaves the pool syncing" {
	mkfile "$W/src" 32
	rc mirror "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	mkfile "$W/src" 32 # every block differs: the whole file is sent
	shim_run "$W/src" 12 $((8 << 20)) sync "$W/src" "$T/r1/p1"
	changed_and_syncing
}

@test "sync of scattered 4 KiB changes whose local file shrinks while they are sent together exits 5 and leaves the pool syncing" {
	mkfile "$W/src" 32
	rc mirror "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	# one byte in each of 40 coarse blocks, the last ones past 8 MiB: a
	# fine pass, its 4 KiB WRITEs gathered into one send
	for i in $(seq 0 39); do poke "$W/src" $((i * (800 << 10) + 4097)); done
	shim_run "$W/src" 12 $((8 << 20)) sync "$W/src" "$T/r1/p1"
	changed_and_syncing
}

@test "verify whose local file shrinks while it is hashed exits 5 naming the file, no signal, nothing changed on the target" {
	mkfile "$W/src" 32
	rc mirror "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	gen=$(pool_field p1 generation)
	shim_run "$W/src" 16 $((4 << 20)) verify "$W/src" "$T/r1/p1"
	echo "$output"
	[ "$status" -eq 5 ]
	[[ "$output" == *"'$W/src'"* ]]
	[[ "$output" == *"changed"* ]]
	[ "$(pool_field p1 state)" = consistent ]
	[ "$(pool_field p1 generation)" = "$gen" ]
}

@test "a local file that shrinks and grows back during a sync still fails it (exit 5), the pool stays syncing" {
	mkfile "$W/src" 16
	rc mirror "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	mkfile "$W/src" 16
	# truncated to its own size at the first WRITE: nothing faults, but
	# the file was changed while it was sent
	shim_run "$W/src" 12 $((16 << 20)) sync "$W/src" "$T/r1/p1"
	echo "$output"
	[ "$status" -eq 5 ]
	[[ "$output" == *"'$W/src'"* ]]
	[ "$(pool_field p1 state)" = syncing ]
}

@test "a pool file truncated on the target while rpmemd hashes it fails that verify only; rpmemd serves the next client" {
	mkfile "$W/src" 32
	mkfile "$W/other" 4
	rc mirror "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	rc mirror "$W/other" "$T/r1/p2"
	[ "$status" -eq 0 ]
	shim_run "$R1/p1" 16 $((4 << 20)) verify "$W/src" "$T/r1/p1"
	echo "$output"
	[ "$status" -eq 4 ]
	[[ "$output" == *"pool file"*"changed on the target"* ]]
	kill -0 "$DPID"
	grep -qi "warn.*p1.*changed" "$DLOG"
	rc verify "$W/other" "$T/r1/p2"
	[ "$status" -eq 0 ]
}

# --- issue 9.2: bytes of a pool change only while it is syncing -----------

@test "WRITE and FLUSH on a consistent pool are refused and its bytes stay as they were" {
	mkfile "$W/src" 1
	rc mirror "$W/src" "$T/r1/p1"
	[ "$status" -eq 0 ]
	gen=$(pool_field p1 generation)
	run raw_write_flush p1
	echo "$output"
	[[ "$output" == "ERROR 9 "*"syncing"* ]]
	cmp "$W/src" "$R1/p1"
	[ "$(pool_field p1 state)" = consistent ]
	[ "$(pool_field p1 generation)" = "$gen" ]
}

@test "WRITE on a new (empty) pool is refused until it is marked syncing" {
	rc create "$T/r1/p1" 1M
	[ "$status" -eq 0 ]
	run raw_write_flush p1
	echo "$output"
	[[ "$output" == "ERROR 9 "*"syncing"* ]]
	cmp -n 4096 /dev/zero "$R1/p1"
}

# --- issue 9.3: CREATE never reuses a file that is not rpmemd's own --------

@test "CREATE over a hard link to a file outside the region leaves that file untouched" {
	mkdir "$W/outside"
	head -c 100000 /dev/urandom >"$W/outside/precious"
	cp "$W/outside/precious" "$W/precious.orig"
	ln "$W/outside/precious" "$R1/p3"
	rc create "$T/r1/p3" 4M
	echo "$output"
	[ "$status" -eq 0 ]
	cmp "$W/outside/precious" "$W/precious.orig"
	[ "$(stat -c %h "$W/outside/precious")" -eq 1 ]
	[ "$(stat -c %s "$R1/p3")" -eq $((4 << 20)) ]
	mkfile "$W/src" 4
	rc sync "$W/src" "$T/r1/p3"
	[ "$status" -eq 0 ]
	cmp "$W/outside/precious" "$W/precious.orig"
	grep -qi "warn.*p3.*2 links" "$DLOG"
}

@test "CREATE over an orphan file owned by another user makes a new file of its own" {
	[ "$(id -u)" -eq 0 ] || skip "needs root to own a file as another user"
	head -c 8192 /dev/urandom >"$R1/p4"
	chown 65534 "$R1/p4"
	rc create "$T/r1/p4" 1M
	[ "$status" -eq 0 ]
	[ "$(stat -c %u "$R1/p4")" -eq 0 ]
	cmp -n $((1 << 20)) /dev/zero "$R1/p4"
	grep -qi "warn.*p4.*owned by uid 65534" "$DLOG"
}

@test "CREATE still reuses an orphan file of its own (a crash between file and metadata)" {
	head -c 8192 /dev/urandom >"$R1/p5"
	ino=$(stat -c %i "$R1/p5")
	rc create "$T/r1/p5" 1M
	[ "$status" -eq 0 ]
	[ "$(stat -c %i "$R1/p5")" = "$ino" ]
	cmp -n $((1 << 20)) /dev/zero "$R1/p5"
}
