#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# rdma.bats -- rpmemctl against rpmemd over RDMA; run on the initiator guest
#
# Run by suites/rdma.sh (see there). Tests run in file order and share
# files in $W; the target acts on request markers (rd_request).

# the bed's polling helpers (vm_wait_for, vm_alive_until)
# shellcheck source=../guest/lib.sh
. "$(dirname "$BATS_TEST_FILENAME")/../guest/lib.sh"

setup_file()
{
	export W=/tmp/rdma.work
	export T=$TARGET_IP
	export MIB=$((1024 * 1024))
	rm -rf "$W"
	mkdir -p "$W"
	head -c $((16 * MIB)) /dev/urandom >"$W/a.bin"
	head -c $((8 * MIB)) /dev/urandom >"$W/c.bin"
}

teardown_file()
{
	# the initiator's /tmp is a small tmpfs that later suites need
	rm -rf "$W"
}

setup()
{
	cd "$W" || return 1
}

ctl()
{
	"$RPMEM_BUILD/rpmemctl" "$@"
}

# poke FILE OFFSET -- overwrite 100 bytes of FILE at OFFSET
poke()
{
	head -c 100 /dev/urandom |
		dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}

# json_is FILTER CMD... -- CMD's JSON satisfies FILTER
json_is()
{
	local filter=$1 out

	shift
	out=$("$@") || {
		echo "exit $?: $out"
		return 1
	}
	echo "$out"
	jq -e "$filter" <<<"$out" >/dev/null
}

# rd_request NAME [SECS] -- ask the target to act; wait for its reply
rd_request()
{
	: >"$RESULTS/.sync/rdma.initiator.req-$1"
	rd_wait "rep-$1" "${2:-300}"
}

# rd_wait NAME [SECS] -- wait for the target's marker NAME
rd_wait()
{
	vm_wait_for -t "${2:-300}" test -e "$RESULTS/.sync/rdma.target.$1"
}

# answers -- rpmemd on the target answers a LIST
answers()
{
	ctl -q list "$T" >/dev/null 2>&1
}

# st_session -- the target shows the mirror into dd/st on rdma (in $seen)
st_session()
{
	seen=$(ctl status --json "$T" | jq -c '.sessions[] |
		select(.region == "dd" and .pool == "st" and .transport == "rdma")')
	[ -n "$seen" ]
}

rpmemd_log()
{
	cat "$RESULTS/rdma.rpmemd.log"
}

@test "status: the target serves rdma" {
	json_is '.rdma == true' ctl status --json "$T"
}

@test "mirror --transport rdma into a devdax pool" {
	json_is '.transport == "rdma" and .identical and
		 .data_bytes == 16 * 1048576 and .generation == 1' \
		ctl mirror --json --transport rdma a.bin "$T/dd/a"
}

@test "verify --transport rdma: the devdax pool is identical" {
	ctl -q verify --transport rdma a.bin "$T/dd/a"
}

@test "GPSPM: the initiator persists the devdax pool through rpmemd" {
	poke a.bin $((3 * MIB))
	ctl -v sync --transport rdma a.bin "$T/dd/a" 2>"$W/gpspm.err"
	cat "$W/gpspm.err"
	grep -q "GPSPM persistence" "$W/gpspm.err"
	rpmemd_log | grep -q "registered in place (GPSPM)"
}

@test "verify finds changed blocks of the devdax pool (exit 1)" {
	poke a.bin 0
	poke a.bin $((5 * MIB + 7))
	poke a.bin $((16 * MIB - 100))
	run ctl -q verify --transport rdma a.bin "$T/dd/a"
	echo "$output"
	[ "$status" -eq 1 ]
}

@test "sync --transport rdma sends only the 3 changed blocks to the devdax pool" {
	json_is '.transport == "rdma" and .blocks_changed == 3 and
		 .data_bytes <= 3 * 65536 and .identical and .generation == 3' \
		ctl sync --json --transport rdma a.bin "$T/dd/a"
	ctl -q verify --transport rdma a.bin "$T/dd/a"
}

@test "sync --pull --transport rdma repairs a damaged copy of the devdax pool" {
	cp a.bin b.bin
	poke b.bin 12345
	poke b.bin $((9 * MIB))
	json_is '.transport == "rdma"' \
		ctl sync --json --pull --transport rdma b.bin "$T/dd/a"
	cmp a.bin b.bin
	rm -f p.bin
	ctl -q sync --pull --transport rdma p.bin "$T/dd/a"
	cmp a.bin p.bin
	cp a.bin "$RESULTS/rdma.a.bin"
}

@test "fsdax pool: mirror and sync over rdma (read-write), verify and pull read it over tcp" {
	cp c.bin fs.bin
	json_is '.transport == "rdma"' \
		ctl mirror --json --transport rdma fs.bin "$T/fs/rdma-c"
	json_is '.transport == "tcp" and .identical' \
		ctl verify --json --transport auto fs.bin "$T/fs/rdma-c"
	poke fs.bin 4097
	poke fs.bin $((7 * MIB))
	json_is '.transport == "rdma" and .blocks_changed == 2' \
		ctl sync --json --transport rdma fs.bin "$T/fs/rdma-c"
	json_is '.transport == "tcp" and .identical' \
		ctl verify --json fs.bin "$T/fs/rdma-c"
	rm -f fs.back
	json_is '.transport == "tcp"' \
		ctl sync --no-history --json --pull --transport auto fs.back "$T/fs/rdma-c"
	cmp fs.bin fs.back
}

@test "verify and sync --pull --transport rdma of an fsdax pool: exit 4, a read-only open is not served from a staging copy" {
	local msg="pool 'rdma-c' on an fsdax region needs a DRAM staging copy on this RNIC (no on-demand paging); read-only opens use tcp: --transport auto or tcp"

	run ctl -q verify --transport rdma fs.bin "$T/fs/rdma-c"
	echo "$output"
	[ "$status" -eq 4 ]
	[[ "$output" == *"$msg"* ]]
	rm -f fs.none
	run ctl -q sync --pull --transport rdma fs.none "$T/fs/rdma-c"
	echo "$output"
	[ "$status" -eq 4 ]
	[[ "$output" == *"$msg"* ]]
	# rpmemd says why an auto open of the pool went over tcp
	rpmemd_log | grep -F "pool fs/rdma-c: $msg; using tcp"
}

@test "pull from an fsdax pool after another session wrote it over tcp: the new bytes" {
	# the reader is not handed a staging copy made before the write
	json_is '.transport == "rdma"' \
		ctl mirror --json --transport rdma fs.bin "$T/fs/rdma-c"
	poke fs.bin 0
	poke fs.bin $((5 * MIB))
	json_is '.transport == "tcp" and .blocks_changed == 2' \
		ctl sync --json --transport tcp fs.bin "$T/fs/rdma-c"
	rm -f fs.back
	json_is '.transport == "tcp"' \
		ctl sync --no-history --json --pull --transport auto fs.back "$T/fs/rdma-c"
	cmp fs.bin fs.back
	cp fs.bin "$RESULTS/rdma.fs.bin"
}

@test "an rw open over rdma whose staging copy exceeds limits.rdma_staging_max: exit 4 naming the limit, auto uses tcp" {
	head -c $((32 * MIB)) /dev/urandom >fsbig.bin
	run ctl -q mirror --transport rdma fsbig.bin "$T/fs/rdma-big"
	echo "$output"
	[ "$status" -eq 4 ]
	[[ "$output" == *"pool 'rdma-big' on an fsdax region needs a DRAM staging copy of 32 MiB on this RNIC"* ]]
	[[ "$output" == *"exceeds limits.rdma_staging_max (24 MiB) in rpmemd.conf"* ]]
	json_is '.transport == "tcp" and .identical' \
		ctl mirror --json --transport auto fsbig.bin "$T/fs/rdma-big"
	rpmemd_log | grep -F "pool fs/rdma-big: pool 'rdma-big' on an fsdax region needs a DRAM staging copy of 32 MiB"
	rpmemd_log | grep -F "limits.rdma_staging_max (24 MiB) in rpmemd.conf; use --transport auto or tcp, or raise the limit; using tcp"
	cp fsbig.bin "$RESULTS/rdma.fsbig.bin"
}

@test "fsdax on Soft-RoCE: rpmemd serves the pool through a DRAM staging buffer (logged)" {
	rpmemd_log | grep "DRAM staging buffer of 8 MiB"
	rpmemd_log | grep -E "pool fs/rdma-c: DRAM staging copy of 8 MiB \(staging in use: (8|16) MiB of limits.rdma_staging_max 24 MiB\)"
}

@test "mirror, sync, verify and pull over rdma: dir pool" {
	cp c.bin dir.bin
	json_is '.transport == "rdma"' \
		ctl mirror --json --transport rdma dir.bin "$T/dir/c"
	ctl -q verify --transport rdma dir.bin "$T/dir/c"
	poke dir.bin 0
	json_is '.transport == "rdma" and .blocks_changed == 1' \
		ctl sync --json --transport rdma dir.bin "$T/dir/c"
	ctl -q verify --transport rdma dir.bin "$T/dir/c"
	rm -f dir.back
	ctl -q sync --pull --transport rdma dir.back "$T/dir/c"
	cmp dir.bin dir.back
}

@test "a byte of the dir pool flipped on the target: sync --pull over rdma refuses it (exit 7, the range named, the local file untouched, the target lists it damaged); --force delivers it" {
	rd_request flip
	# the local copy differs in the damaged block, so the pull reads it
	cp dir.bin dmg.back
	poke dmg.back $((3 * MIB + 1000))
	cp dmg.back dmg.before
	run ctl sync --pull --transport rdma dmg.back "$T/dir/c"
	echo "$output"
	[ "$status" -eq 7 ]
	[[ "$output" == *"pool 'c' is damaged at 0x300000 length 4096"* ]]
	cmp dmg.before dmg.back
	json_is '.pools[0].damaged_bytes == 4096' ctl list --json "$T/dir/c"
	run ctl sync --pull --force --transport rdma dmg.back "$T/dir/c"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"read as it is (--force): pool 'c' is damaged at 0x300000 length 4096"* ]]
	[ "$(cmp -l dir.bin dmg.back | wc -l)" -eq 1 ]
	cmp -l dir.bin dmg.back | grep -q "^$((3 * MIB + 6)) "
	# a sync of the good copy repairs it: clean again over rdma
	ctl -q sync --transport rdma dir.bin "$T/dir/c"
	json_is '.pools[0].damaged_bytes == 0' ctl list --json "$T/dir/c"
	rm -f dmg.clean
	ctl -q sync --pull --transport rdma dmg.clean "$T/dir/c"
	cmp dir.bin dmg.clean
}

@test "status --json shows transport rdma for a session during an RDMA mirror" {
	head -c $((32 * MIB)) /dev/urandom >st.bin
	# paced to last about 16 s: status must find it whatever the link's
	# speed and however slowly each status runs
	ctl -q mirror --transport rdma --bwlimit 2M st.bin "$T/dd/st" &
	local pid=$! seen=''
	vm_alive_until -t 30 "$pid" st_session || true
	echo "seen: $seen"
	wait "$pid"
	[ -n "$seen" ]
	ctl -q verify --transport rdma st.bin "$T/dd/st"
}

@test "list counts the bytes flushed over rdma as bytes written" {
	json_is '.pools[0] | .bytes_written >= 32 * 1048576 and .flushes >= 1' \
		ctl list --json "$T/dd/st"
}

@test "--transport auto picks rdma" {
	json_is '.transport == "rdma"' \
		ctl verify --json --transport auto a.bin "$T/dd/a"
	json_is '.transport == "rdma"' \
		ctl sync --json a.bin "$T/dd/a"
}

@test "--transport auto to an address without an RDMA device uses tcp" {
	json_is '.transport == "tcp"' \
		ctl verify --json --transport auto a.bin "$RD_NORDMA_IP/dd/a"
}

@test "--transport rdma to an address without an RDMA device: exit 4 with the reason" {
	run ctl -q verify --transport rdma a.bin "$RD_NORDMA_IP/dd/a"
	echo "$output"
	[ "$status" -eq 4 ]
	[[ "$output" == *"rdma is not available on $RD_NORDMA_IP"* ]]
	[[ "$output" == *"try --transport tcp"* ]]
}

@test "a PMDK obj pool mirrored over rdma into devdax, fsdax and dir pools" {
	rm -f obj.pool obj.back
	pmempool create obj --size 16M obj.pool
	ctl -q mirror --transport rdma obj.pool "$T/dd/obj"
	ctl -q mirror --transport rdma obj.pool "$T/fs/rdma-obj"
	ctl -q mirror --transport rdma obj.pool "$T/dir/obj"
	ctl -q sync --pull --transport rdma obj.back "$T/dd/obj"
	pmempool check obj.back
	cmp obj.pool obj.back
}

@test "kill -9 of rpmemd during an RDMA mirror: the client exits 3 promptly" {
	head -c $((64 * MIB)) /dev/urandom >big.bin
	cp big.bin "$RESULTS/rdma.big.bin"
	ctl -q mirror --transport rdma big.bin "$T/dd/big" 2>big.err &
	local pid=$! rc=0 t0
	: >"$RESULTS/.sync/rdma.initiator.req-kill"
	rd_wait rep-killed 300
	t0=$SECONDS
	wait "$pid" || rc=$?
	echo "exit $rc after $((SECONDS - t0)) s: $(cat big.err)"
	echo "# kill: the mirror exited $rc $((SECONDS - t0)) s after the kill" >&3
	[ "$rc" -eq 3 ]
	[ $((SECONDS - t0)) -le 35 ]
	rd_wait rep-kill 300
}

@test "after the restart the pool is syncing; the next sync over rdma completes it" {
	vm_wait_for -t 10 answers || true
	json_is '.pools[0].state == "syncing"' ctl list --json "$T/dd/big"
	json_is '.transport == "rdma" and .identical' \
		ctl sync --json --transport rdma big.bin "$T/dd/big"
	json_is '.pools[0] | .state == "consistent" and .generation == 1' \
		ctl list --json "$T/dd/big"
	ctl -q verify --transport rdma big.bin "$T/dd/big"
}

@test "APM: rpmemd restarts with direct_pmem = true on the devdax region" {
	rd_request apm
	vm_wait_for -t 10 answers || true
	ctl -q list "$T/dd"
}

@test "APM: mirror over rdma into the direct_pmem devdax pool uses APM" {
	head -c $((16 * MIB)) /dev/urandom >apm.bin
	ctl -v mirror --transport rdma apm.bin "$T/dd/apm" 2>apm.err
	cat apm.err
	grep -q "APM persistence" apm.err
	rpmemd_log | grep -q "registered in place (APM and GPSPM)"
}

@test "APM: sync, verify and pull give a byte-identical replica" {
	poke apm.bin 100
	poke apm.bin $((11 * MIB))
	json_is '.transport == "rdma" and .blocks_changed == 2' \
		ctl sync --json --transport rdma apm.bin "$T/dd/apm"
	ctl -q verify --transport rdma apm.bin "$T/dd/apm"
	rm -f apm.back
	ctl -q sync --pull --transport rdma apm.back "$T/dd/apm"
	cmp apm.bin apm.back
	cp apm.bin "$RESULTS/rdma.apm.bin"
}

@test "GPSPM and APM replicas are still identical after switching back" {
	rd_request main
	vm_wait_for -t 10 answers || true
	ctl -q verify --transport rdma a.bin "$T/dd/a"
	ctl -q verify --transport rdma apm.bin "$T/dd/apm"
}
