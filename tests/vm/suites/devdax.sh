# shellcheck shell=bash
# SPDX-License-Identifier: BSD-3-Clause
# devdax.sh -- rpmemd serving a devdax region end to end, and regions_auto
#
# Target: build/rpmemd on $TARGET_IP with a devdax region on $DEVDAX
# ("dd"), an fsdax region on $FSDAX_DIR ("fs") and a dir region ("dir").
# Initiator (over TCP): mirror, verify, sync, sync --pull, a PMDK obj pool,
# the one-writer rule, create and remove. The target then stops rpmemd and
# reads the obj pool back with daxio at the offset rpmemd logged (and, if
# built, pmem_probe checks the pool table independently); runs a second
# config with regions_auto = true; restarts the main daemon (pools
# survive), kills it with SIGKILL in the middle of a mirror (the pool
# stays syncing, the next sync completes it); then atomic syncs into an
# existing devdax pool (its undo journal in the region's undo_dir): kill -9
# of rpmemctl and of rpmemd mid-sync, LIST says pending, rollback gives
# the old image byte for byte, the next sync the new one, and an undo_dir
# gone under rpmemd refuses the sync, the pool left as it was; finally
# shows that a device with a foreign signature is refused while the other
# regions are served (the last image read back with daxio first). The
# device is left blank.
#
# Needs: make (rpmemd, rpmemctl, build/tests/hold_pool); make pmem-probe
# for the pool table checks (skipped without it).

DD_RPMEMD=$RPMEM_BUILD/rpmemd
DD_CTL=$RPMEM_BUILD/rpmemctl
# its rpmemd allows plaintext from the other guest: so must rpmemctl
vm_plaintext_targets
DD_PROBE=$RPMEM_BUILD/tests/pmem_probe
DD_HOLD=$RPMEM_BUILD/tests/hold_pool
DD_AUTO_PORT=7640
DD_T=$TARGET_IP
DD_MIB=$((1024 * 1024))
DD_AT_MIB=32	 # the pool of the atomic syncs
DD_AT_BW=1M	 # their pace: a sync would take 32 s, killed within 1 or 2

# dd_log -- where rpmemd's own log goes (both daemons)
dd_log()
{
	echo "$RESULTS/$VM_SUITE.rpmemd.log"
}

# dd_is NAME GOT WANT -- ok if GOT equals WANT
dd_is()
{
	if [ "$2" = "$3" ]; then
		tap_ok "$1"
	else
		echo "### $1: got '$2', expected '$3'" >>"$(vm_log)"
		tap_not_ok "$1 (got '$2', expected '$3')"
	fi
}

# dd_json_check DESC JQ-FILTER CMD... -- ok if CMD's JSON satisfies FILTER
dd_json_check()
{
	local desc=$1 filter=$2 out

	shift 2
	echo "### $desc: $* | jq -e '$filter'" >>"$(vm_log)"
	out=$("$@" 2>>"$(vm_log)")
	echo "$out" >>"$(vm_log)"
	if jq -e "$filter" <<<"$out" >/dev/null 2>&1; then
		tap_ok "$desc"
	else
		tap_not_ok "$desc (see $VM_SUITE.$VM_ROLE.log)"
	fi
}

# dd_pool T/REGION/POOL FIELD -- a field of the pool as LIST shows it
dd_pool()
{
	"$DD_CTL" list --json "$1" 2>/dev/null | jq -r ".pools[0].$2"
}

# --- target ---------------------------------------------------------------

# dd_write_configs -- main.conf, main-auto.conf (+ regions_auto), auto.conf
dd_write_configs()
{
	mkdir -p "$DD_TMP/dir" "$DD_TMP/undo"
	cat >"$DD_TMP/main.conf" <<EOF
listen = ["127.0.0.1", "$TARGET_IP"];
allow_insecure_remote = true;
regions = (
	{ name = "dd"; type = "devdax"; path = "$DEVDAX";
	  undo_dir = "$DD_TMP/undo"; },
	{ name = "fs"; type = "fsdax"; path = "$FSDAX_DIR"; },
	{ name = "dir"; type = "dir"; path = "$DD_TMP/dir"; }
);
EOF
	{
		cat "$DD_TMP/main.conf"
		echo "regions_auto = true;"
	} >"$DD_TMP/main-auto.conf"
	cat >"$DD_TMP/auto.conf" <<EOF
port = $DD_AUTO_PORT;
regions_auto = true;
EOF
	cat "$DD_TMP"/*.conf >>"$(vm_log)"
}

# dd_start CONF [PORT] -- start rpmemd in the background, wait until it
# answers on 127.0.0.1:PORT; DD_PID
dd_start()
{
	echo "=== rpmemd -c $1 ($(date +%T))" >>"$(dd_log)"
	"$DD_RPMEMD" -c "$1" >>"$(dd_log)" 2>&1 &
	DD_PID=$!
	vm_retry 300 0.2 "$DD_CTL" -q list "127.0.0.1:${2:-7636}" \
		>/dev/null 2>&1
}

# dd_stop -- SIGTERM rpmemd and wait; its exit status
dd_stop()
{
	local rc=0

	kill -TERM "$DD_PID" 2>/dev/null
	wait "$DD_PID" || rc=$?
	DD_PID=
	return "$rc"
}

# dd_table -- the pool table as pmem_probe info shows it (rpmemd stopped)
dd_table()
{
	"$DD_PROBE" info "$DEVDAX" >"$DD_TMP/table.out" 2>>"$(vm_log)"
	cat "$DD_TMP/table.out" >>"$(vm_log)"
}

# dd_table_field POOL FIELD -- FIELD=value of "pool POOL ..." in table.out
dd_table_field()
{
	awk -v p="$1" -v f="$2=" '$1 == "pool" && $2 == p {
		for (i = 3; i <= NF; i++)
			if (index($i, f) == 1) print substr($i, length(f) + 1)
	}' "$DD_TMP/table.out"
}

# dd_bad_undo_dir DESC UNDO_DIR WANT -- rpmemd -n refuses the devdax
# region with undo_dir UNDO_DIR, saying WANT
dd_bad_undo_dir()
{
	printf 'regions = ( { name = "x"; type = "devdax"; path = "%s"; undo_dir = "%s"; } );\n' \
		"$DEVDAX" "$2" >"$DD_TMP/bad.conf"
	tap_check "rpmemd -n refuses $1" \
		sh -c "! '$DD_RPMEMD' -n -c '$DD_TMP/bad.conf' 2>'$DD_TMP/bad.err' &&
		       cat '$DD_TMP/bad.err' && grep -q 'undo_dir: .*$3' '$DD_TMP/bad.err'"
}

# dd_bad_undo_dirs -- an undo_dir that is missing, the device itself, on
# a read-only file system (the guest's root): refused at start
dd_bad_undo_dirs()
{
	dd_bad_undo_dir "an undo_dir that does not exist" "$DD_TMP/nowhere" \
		"No such file or directory (create it"
	dd_bad_undo_dir "an undo_dir on the device itself" "$DEVDAX" \
		"is not a directory: the journals need a file system"
	dd_bad_undo_dir "an undo_dir rpmemd cannot write" /usr/share \
		"is not writable"
}

dd_target_start()
{
	# start from a blank device, whatever an earlier suite left on it
	tap_check "blank the header block of $DEVDAX with daxio" \
		daxio -z -o "$DEVDAX" -l 4096
	dd_write_configs
	tap_check "rpmemd -n accepts devdax, fsdax and dir regions" \
		sh -c "'$DD_RPMEMD' -n -c '$DD_TMP/main.conf' | grep -qx 'configuration OK'"
	printf 'regions = ( { name = "x"; type = "devdax"; path = "%s"; } );\n' \
		"$DD_TMP/dir" >"$DD_TMP/bad.conf"
	tap_check "rpmemd -n refuses a devdax region on a directory" \
		sh -c "! '$DD_RPMEMD' -n -c '$DD_TMP/bad.conf' 2>'$DD_TMP/bad.err' &&
		       cat '$DD_TMP/bad.err' && grep -q 'is not a character device' '$DD_TMP/bad.err'"
	dd_bad_undo_dirs
	if ! dd_start "$DD_TMP/main.conf"; then
		tap_not_ok "rpmemd starts with a devdax region"
		return 1
	fi
	tap_ok "rpmemd starts with a devdax region"
	tap_check "a blank device gets a pool table" \
		grep -q "devdax $DEVDAX: formatted a pool table" "$(dd_log)"
}

# dd_logged_pool POOL -- "OFFSET SIZE" of POOL as rpmemd logged its creation
dd_logged_pool()
{
	sed -n "s|.*devdax $DEVDAX: created pool '$1' of \([0-9]*\) bytes at \([0-9]*\)\$|\2 \1|p" \
		"$(dd_log)" | tail -n 1
}

# dd_target_offline -- rpmemd stopped: daxio (and the pool table, read
# by pmem_probe) agree with what the initiator wrote
dd_target_offline()
{
	local off size rc=0

	dd_stop || rc=$?
	dd_is "rpmemd stops on SIGTERM with status 0" "$rc" 0
	read -r off size <<<"$(dd_logged_pool obj)"
	dd_is "rpmemd logged where pool obj lives, with the PMDK pool's size" \
		"$size" "$(stat -c %s "$RESULTS/$VM_SUITE.obj.pool" 2>/dev/null)"
	tap_check "daxio reads at offset $off exactly the obj pool the initiator mirrored" \
		sh -c "daxio -i '$DEVDAX' -o '$DD_TMP/obj.daxio' -k '$off' -l '$size' &&
		       cmp '$RESULTS/$VM_SUITE.obj.pool' '$DD_TMP/obj.daxio'"
	tap_check "pmempool check accepts the obj pool read from the device" \
		pmempool check "$DD_TMP/obj.daxio"

	if [ ! -x "$DD_PROBE" ]; then
		tap_skip "the pool table read by pmem_probe" \
			"$DD_PROBE not built (make pmem-probe)"
		return 0
	fi
	if ! tap_check "pmem_probe reads the pool table rpmemd wrote" dd_table; then
		return 1
	fi
	dd_is "table: pool obj is where rpmemd said" \
		"$(dd_table_field obj offset)/$(dd_table_field obj size)" \
		"$off/$size"
	dd_is "table: pool a is consistent, generation 2" \
		"$(dd_table_field a state)/$(dd_table_field a gen)" consistent/2
	dd_is "table: pool obj is consistent, generation 1" \
		"$(dd_table_field obj state)/$(dd_table_field obj gen)" \
		consistent/1
	dd_is "table: pool keep (created) is empty" \
		"$(dd_table_field keep state)" empty
	dd_is "table: pool gone (removed) is absent" \
		"$(dd_table_field gone state)" ""
}

# dd_target_auto -- regions_auto on its own, then beside explicit regions
dd_target_auto()
{
	local cmd=()

	tap_check "rpmemd -n accepts regions_auto = true" \
		sh -c "'$DD_RPMEMD' -n -c '$DD_TMP/auto.conf' | grep -qx 'configuration OK'"
	if ! dd_start "$DD_TMP/auto.conf" "$DD_AUTO_PORT"; then
		tap_not_ok "rpmemd starts with regions_auto = true"
		dd_stop
		return 1
	fi
	cmd=("$DD_CTL" list --json "127.0.0.1:$DD_AUTO_PORT")
	dd_json_check "regions_auto finds ${DEVDAX##*/}: devdax on $DEVDAX" \
		".regions | any(.name == \"${DEVDAX##*/}\" and .type == \"devdax\" and .path == \"$DEVDAX\")" \
		"${cmd[@]}"
	dd_json_check "regions_auto finds ${PMEM_DEV##*/}: fsdax on $FSDAX_DIR" \
		".regions | any(.name == \"${PMEM_DEV##*/}\" and .type == \"fsdax\" and .path == \"$FSDAX_DIR\")" \
		"${cmd[@]}"
	dd_json_check "regions_auto: exactly those two regions" \
		".regions | length == 2" "${cmd[@]}"
	dd_json_check "regions_auto: ${DEVDAX##*/} shows the pools of the table" \
		"[.pools[] | select(.region == \"${DEVDAX##*/}\") | .name] | sort == [\"a\", \"keep\", \"obj\"]" \
		"${cmd[@]}"
	dd_stop

	tap_check "rpmemd -n accepts regions_auto beside explicit regions" \
		sh -c "'$DD_RPMEMD' -n -c '$DD_TMP/main-auto.conf' | grep -qx 'configuration OK'"
	if ! dd_start "$DD_TMP/main-auto.conf"; then
		tap_not_ok "rpmemd restarts (regions_auto = true added)"
		return 1
	fi
	tap_ok "rpmemd restarts (regions_auto = true added)"
	dd_json_check "explicit regions win: dd, dir, fs and nothing discovered twice" \
		'[.regions[].name] | sort == ["dd", "dir", "fs"]' \
		"$DD_CTL" list --json 127.0.0.1
	tap_check "the discovered regions left out are logged" \
		grep -q "regions_auto: devdax $DEVDAX is not added as region '${DEVDAX##*/}': region 'dd'" \
		"$(dd_log)"
}

# dd_big_written -- dd/big is syncing with bytes written: its state and
# bytes_written in $st
dd_big_written()
{
	st=$("$DD_CTL" list --json 127.0.0.1/dd/big 2>/dev/null |
	     jq -c '.pools[0] | select(.state == "syncing" and
					.bytes_written > 0)
		    | {state, bytes_written}' 2>/dev/null)
	[ -n "$st" ]
}

# dd_target_kill -- SIGKILL rpmemd while the initiator mirrors into dd/big
dd_target_kill()
{
	local st=""

	vm_wait mirroring || return 1
	vm_wait_for dd_big_written || true
	if [ -n "$st" ]; then
		kill -KILL "$DD_PID"
		wait "$DD_PID" 2>/dev/null
		tap_ok "rpmemd killed with SIGKILL in the middle of a mirror ($st)"
	else
		tap_not_ok "did not see the mirror into dd/big in progress"
		dd_stop
	fi
	if dd_start "$DD_TMP/main-auto.conf"; then
		tap_ok "rpmemd restarts after SIGKILL"
	else
		tap_not_ok "rpmemd restarts after SIGKILL"
	fi
	vm_signal killed
}

# dd_journal -- the undo journal of pool at in the region's undo_dir
dd_journal()
{
	echo "$DD_TMP/undo/at.undo"
}

# dd_target_atomic -- the target's side of the atomic syncs into dd/at:
# the journal where it belongs, kill -9 of rpmemd mid-sync, undo_dir gone
dd_target_atomic()
{
	local rc=0

	vm_wait ctl-killed || return 1
	tap_check "rpmemctl killed: the journal of dd/at is in the undo_dir, with records" \
		sh -c "ls -l '$DD_TMP/undo'; [ \$(stat -c %s '$(dd_journal)') -gt 4096 ]"
	vm_signal journal-seen
	vm_wait rolled-back || return 1
	tap_check "after the rollback the journal is gone" \
		test ! -e "$(dd_journal)"
	# the initiator's next sync (which starts a journal of its own)
	# waits for this look
	vm_signal rollback-seen
	vm_wait syncing2 || return 1
	kill -KILL "$DD_PID"
	wait "$DD_PID" 2>/dev/null
	tap_ok "rpmemd killed with SIGKILL in the middle of a sync into dd/at"
	tap_check "the killed rpmemd left the journal of dd/at" \
		test -s "$(dd_journal)"
	if dd_start "$DD_TMP/main-auto.conf"; then
		tap_ok "rpmemd restarts after SIGKILL"
	else
		tap_not_ok "rpmemd restarts after SIGKILL"
	fi
	vm_signal rpmemd-killed
	vm_wait forward || return 1
	tap_check "the next open of dd/at found the journal of the killed rpmemd" \
		grep -q "region 'dd': pool 'at': an interrupted sync: [0-9]* blocks of generation 1 kept in its undo journal" \
		"$(dd_log)"
	tap_check "and rolled back from it" \
		grep -q "region 'dd': pool 'at': rolled back to generation 1" \
		"$(dd_log)"
	tap_check "the committed sync removed the journal" \
		test ! -e "$(dd_journal)"
	rmdir "$DD_TMP/undo" || rc=$?
	dd_is "the undo_dir removed under rpmemd" "$rc" 0
	vm_signal undo-gone
	vm_wait refused
	mkdir -p "$DD_TMP/undo"
}

# dd_target_final -- rpmemd stopped: dd/at on the device is the image of
# its last sync, read with daxio
dd_target_final()
{
	local off size

	read -r off size <<<"$(dd_logged_pool at)"
	tap_check "daxio reads at offset $off the image the last sync into dd/at sent" \
		sh -c "daxio -i '$DEVDAX' -o '$DD_TMP/at.daxio' -k '$off' -l '$size' &&
		       cmp '$RESULTS/$VM_SUITE.at.final' '$DD_TMP/at.daxio'"
	rm -f "$RESULTS/$VM_SUITE.at.final"
}

# dd_target_foreign -- a device with a foreign signature is not served
dd_target_foreign()
{
	local rc=0

	dd_stop || rc=$?
	dd_is "rpmemd stops on SIGTERM with status 0" "$rc" 0
	dd_target_final
	tap_check "save the header block, write a foreign signature" \
		sh -c "daxio -i '$DEVDAX' -o '$DD_TMP/hdr.bin' -l 4096 &&
		       printf 'XFSB' >'$DD_TMP/xfsb' &&
		       daxio -i '$DD_TMP/xfsb' -o '$DEVDAX' -l 4"
	if dd_start "$DD_TMP/main.conf"; then
		tap_ok "rpmemd starts although the devdax region is unusable"
	else
		tap_not_ok "rpmemd starts although the devdax region is unusable"
	fi
	tap_check "the log says why the devdax region is not served" \
		grep -q "region 'dd': cannot use $DEVDAX: it holds data that is not an rpmemd pool table (a foreign signature); it is left untouched; the region is not served" \
		"$(dd_log)"
	dd_json_check "the other regions are served" \
		'[.regions[].name] | sort == ["dir", "fs"]' \
		"$DD_CTL" list --json 127.0.0.1
	tap_check "the foreign signature is left untouched" \
		sh -c "daxio -i '$DEVDAX' -o '$DD_TMP/sig' -l 4 && cmp '$DD_TMP/sig' '$DD_TMP/xfsb'"
	dd_stop
	tap_check "restore the header block with daxio" \
		daxio -i "$DD_TMP/hdr.bin" -o "$DEVDAX" -l 4096
	if dd_start "$DD_TMP/main.conf"; then
		dd_json_check "rpmemd serves the devdax region again, pools intact" \
			'([.regions[].name] | sort == ["dd", "dir", "fs"])
			 and any(.pools[]; .region == "dd" and .name == "big"
				 and .state == "consistent" and .generation == 1)' \
			"$DD_CTL" list --json 127.0.0.1
		dd_stop
	else
		tap_not_ok "rpmemd starts after the header block is restored"
	fi
	# leave a blank device to the next suite
	daxio -z -o "$DEVDAX" -l 4096 >>"$(vm_log)" 2>&1
}

target_main()
{
	DD_TMP=$(mktemp -d /tmp/devdax.XXXXXX)
	DD_PID=
	local t
	for t in "$DD_RPMEMD" "$DD_CTL"; do
		if [ ! -x "$t" ]; then
			tap_not_ok "$t missing (make)"
			return
		fi
	done
	if ! dd_target_start; then
		vm_abort "rpmemd did not start"
		return
	fi
	vm_signal up
	if vm_wait phase1; then
		dd_target_offline
		dd_target_auto
	fi
	vm_signal restarted
	dd_target_kill
	vm_wait kill-done
	dd_target_atomic
	vm_wait atomic-done
	dd_target_foreign
	[ -n "$DD_PID" ] && dd_stop
	rm -rf "$DD_TMP"
}

# --- initiator ------------------------------------------------------------

# dd_ctl DESC WANT-RC rpmemctl-ARGS... -- ok if rpmemctl exits WANT-RC
dd_ctl()
{
	local desc=$1 want=$2 rc=0

	shift 2
	echo "### $desc: rpmemctl $*" >>"$(vm_log)"
	"$DD_CTL" "$@" >>"$(vm_log)" 2>&1 || rc=$?
	if [ "$rc" -eq "$want" ]; then
		tap_ok "$desc"
	else
		tap_not_ok "$desc (rpmemctl exit $rc, expected $want)"
	fi
}

# dd_poke FILE OFFSET -- overwrite 100 bytes of FILE at OFFSET
dd_poke()
{
	head -c 100 /dev/urandom |
		dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}

dd_initiator_transfers()
{
	local list=$DD_T/dd/a out

	dd_json_check "LIST shows dd as a devdax region on $DEVDAX with its size and free space" \
		".regions | any(.name == \"dd\" and .type == \"devdax\" and .path == \"$DEVDAX\" and .size > 200 * $DD_MIB and .free == .size)" \
		"$DD_CTL" list --json "$DD_T"

	head -c $((16 * DD_MIB)) /dev/urandom >a.bin
	dd_ctl "mirror a 16 MiB file into a devdax pool" 0 \
		-q mirror --transport tcp a.bin "$DD_T/dd/a"
	dd_ctl "verify: the devdax pool is identical" 0 \
		-q verify --transport tcp a.bin "$DD_T/dd/a"
	dd_json_check "LIST: dd/a is consistent, generation 1, 16 MiB, counters" \
		".pools[0] | .state == \"consistent\" and .generation == 1 and .size == 16 * $DD_MIB and .bytes_written >= 16 * $DD_MIB and .flushes >= 1 and .writer == \"\"" \
		"$DD_CTL" list --json "$list"
	dd_json_check "LIST: the devdax region's free space shrank by the pool" \
		".regions[] | select(.name == \"dd\") | .size - .free == 16 * $DD_MIB" \
		"$DD_CTL" list --json "$DD_T/dd"

	dd_poke a.bin 0
	dd_poke a.bin $((5 * DD_MIB + 7))
	dd_poke a.bin $((16 * DD_MIB - 100))
	dd_ctl "verify finds the changed blocks (exit 1)" 1 \
		-q verify --transport tcp a.bin "$DD_T/dd/a"
	dd_json_check "sync sends only the 3 changed blocks" \
		".blocks_changed == 3 and .data_bytes <= 3 * 65536 and .identical" \
		"$DD_CTL" sync --json --transport tcp a.bin "$DD_T/dd/a"
	dd_ctl "verify after sync" 0 \
		-q verify --transport tcp a.bin "$DD_T/dd/a"
	dd_is "LIST: dd/a is at generation 2" \
		"$(dd_pool "$list" state)/$(dd_pool "$list" generation)" \
		consistent/2

	cp a.bin b.bin
	dd_poke b.bin 12345
	dd_poke b.bin $((9 * DD_MIB))
	dd_ctl "sync --pull repairs a damaged local copy" 0 \
		-q sync --pull --transport tcp b.bin "$DD_T/dd/a"
	tap_check "the repaired copy is identical" cmp a.bin b.bin

	rm -f obj.pool obj.back
	tap_check "pmempool create obj --size 16M" \
		pmempool create obj --size 16M obj.pool
	dd_ctl "mirror a PMDK obj pool into a devdax pool" 0 \
		-q mirror --transport tcp obj.pool "$DD_T/dd/obj"
	dd_ctl "sync --pull the obj pool into a fresh file" 0 \
		-q sync --pull --transport tcp obj.back "$DD_T/dd/obj"
	tap_check "pmempool check accepts the pool read back" \
		pmempool check obj.back
	tap_check "the pool read back is identical" cmp obj.pool obj.back
	cp obj.pool "$RESULTS/$VM_SUITE.obj.pool"

	head -c $((4 * DD_MIB)) /dev/urandom >c.bin
	dd_ctl "mirror into the fsdax region" 0 \
		-q mirror --transport tcp c.bin "$DD_T/fs/c"
	dd_ctl "verify the fsdax pool" 0 \
		-q verify --transport tcp c.bin "$DD_T/fs/c"
	dd_ctl "mirror into the dir region" 0 \
		-q mirror --transport tcp c.bin "$DD_T/dir/c"
	dd_ctl "verify the dir pool" 0 \
		-q verify --transport tcp c.bin "$DD_T/dir/c"
}

dd_initiator_writers()
{
	local hpid

	dd_ctl "create a devdax pool" 0 -q create "$DD_T/dd/keep" 8M
	dd_ctl "create a second devdax pool" 0 -q create "$DD_T/dd/gone" 4M
	dd_ctl "create refuses an existing name (exit 4)" 4 \
		-q create "$DD_T/dd/gone" 4M
	dd_ctl "create refuses a pool larger than the free space (exit 4)" 4 \
		-q create "$DD_T/dd/huge" 1G
	dd_ctl "remove a devdax pool" 0 -q remove "$DD_T/dd/gone"
	dd_ctl "remove of a missing pool is refused (exit 4)" 4 \
		-q remove "$DD_T/dd/gone"

	"$DD_HOLD" "$DD_T/dd/keep" 120 >hold.out 2>>"$(vm_log)" &
	hpid=$!
	vm_alive_until "$hpid" grep -qs holding hold.out ||
		tap_not_ok "hold_pool did not hold dd/keep within 60 s"
	dd_json_check "LIST names the writer holding a devdax pool" \
		'.pools[0].writer | test("session")' \
		"$DD_CTL" list --json "$DD_T/dd/keep"
	tap_check "a second writer of the devdax pool is refused as busy" \
		sh -c "! '$DD_HOLD' '$DD_T/dd/keep' 1 >/dev/null 2>hold2.err; cat hold2.err; grep -q 'open for writing by session' hold2.err"
	tap_check "remove refuses the open devdax pool, naming the writer" \
		sh -c "! '$DD_CTL' -q remove '$DD_T/dd/keep' 2>hold.err; cat hold.err; grep -q 'open for writing by' hold.err"
	kill "$hpid" 2>/dev/null
	wait "$hpid" 2>/dev/null
}

dd_initiator_kill()
{
	local mpid rc=0 list=$DD_T/dd/big

	head -c $((64 * DD_MIB)) /dev/urandom >big.bin
	# paced (16 s): still under way when the target's poll sees it
	"$DD_CTL" -q mirror --bwlimit 4M --transport tcp big.bin "$list" \
		>>"$(vm_log)" 2>&1 &
	mpid=$!
	vm_signal mirroring
	vm_wait killed
	wait "$mpid" || rc=$?
	dd_is "the mirror fails with 'connection lost' (exit 3)" "$rc" 3
	vm_retry 50 0.2 "$DD_CTL" -q list "$DD_T" >/dev/null 2>&1
	dd_is "after the restart dd/big is syncing" \
		"$(dd_pool "$list" state)" syncing
	dd_ctl "the next sync completes it" 0 \
		-q sync --transport tcp big.bin "$list"
	dd_is "dd/big is consistent, generation 1" \
		"$(dd_pool "$list" state)/$(dd_pool "$list" generation)" \
		consistent/1
	dd_ctl "verify dd/big" 0 -q verify --transport tcp big.bin "$list"
	dd_ctl "dd/a survived both restarts" 0 \
		-q verify --transport tcp a.bin "$DD_T/dd/a"
}

# dd_at_list -- "STATE PENDING RECOVERABLE_GENERATION GENERATION
# UNDO_BYTES" of dd/at, as LIST shows it
dd_at_list()
{
	"$DD_CTL" list --json "$DD_T/dd/at" 2>/dev/null |
		jq -r '.pools[0] | "\(.state) \(.pending) \(.recoverable_generation) \(.generation) \(.undo_bytes)"'
}

# dd_at_journaling -- the sync into dd/at is under way, pending,
# generation 1 recoverable, past the journal's header: "STATE/PENDING/
# RECOVERABLE/GENERATION" in $st, the journal's bytes in $u
dd_at_journaling()
{
	read -r st u <<<"$(dd_at_list | awk '{ print $1 "/" $2 "/" $3 "/" $4, $5 }')"
	[ "$st" = syncing/true/1/1 ] && [ "${u:-0}" -gt 4096 ]
}

# dd_at_state -- the same without UNDO_BYTES
dd_at_state()
{
	dd_at_list | cut -d' ' -f1-4
}

# dd_sync_bg -- a paced sync of new.bin into dd/at in the background
# (DD_SPID), once the target journals it (LIST: pending, bound to 1, a
# record past the journal's 4 KiB header) and writes it (a moment later;
# paced, the whole sync would take 32 s)
dd_sync_bg()
{
	local st u=0

	"$DD_CTL" -q sync --no-history --bwlimit "$DD_AT_BW" --transport tcp new.bin \
		"$DD_T/dd/at" >>"$(vm_log)" 2>&1 &
	DD_SPID=$!
	vm_wait_for dd_at_journaling || true
	echo "### dd/at: $st, $u bytes of journal" >>"$(vm_log)"
	dd_is "LIST: the sync into dd/at is under way, pending, generation 1 recoverable, journaling" \
		"$st $((u > 4096))" "syncing/true/1/1 1"
	# not a wait: a random point of the journaled writing
	sleep "0.$((RANDOM % 10))"
}

# dd_pull_is FILE DESC -- dd/at read back from the target is FILE
dd_pull_is()
{
	rm -f pulled.bin
	tap_check "$2" sh -c "'$DD_CTL' -q sync --pull --no-history --transport tcp pulled.bin '$DD_T/dd/at' && cmp '$1' pulled.bin"
}

# dd_roll_back -- rollback of dd/at gives back old.bin byte for byte
dd_roll_back()
{
	tap_check "rollback of dd/at returns to generation 1" \
		sh -c "'$DD_CTL' rollback '$DD_T/dd/at' | tee -a '$(vm_log)' | grep -q 'to generation 1'"
	dd_is "LIST: dd/at is consistent at generation 1, nothing pending" \
		"$(dd_at_state)" "consistent false null 1"
	dd_pull_is old.bin "dd/at reads back byte-identical to the old image"
}

# dd_initiator_atomic -- atomic syncs into the existing devdax pool dd/at
dd_initiator_atomic()
{
	local rc=0

	head -c $((DD_AT_MIB * DD_MIB)) /dev/urandom >old.bin
	head -c $((DD_AT_MIB * DD_MIB)) /dev/urandom >new.bin
	dd_ctl "mirror the old image into dd/at" 0 \
		-q mirror --no-history --transport tcp old.bin "$DD_T/dd/at"

	dd_sync_bg
	kill -KILL "$DD_SPID"
	wait "$DD_SPID" 2>/dev/null
	# rpmemd lets go of the killed writer's pool before the rollback
	vm_retry 300 0.2 sh -c "'$DD_CTL' list --json '$DD_T/dd/at' |
		jq -e '.pools[0].writer == \"\"' >/dev/null"
	dd_is "rpmemctl killed: dd/at is syncing, its journal pending" \
		"$(dd_at_state)" "syncing true 1 1"
	vm_signal ctl-killed
	vm_wait journal-seen || return 1
	dd_roll_back
	vm_signal rolled-back
	vm_wait rollback-seen || return 1

	dd_sync_bg
	vm_signal syncing2
	vm_wait rpmemd-killed || return 1
	wait "$DD_SPID" || rc=$?
	dd_is "the sync cut by the killed rpmemd fails with 'connection lost' (exit 3)" \
		"$rc" 3
	vm_retry 50 0.2 "$DD_CTL" -q list "$DD_T" >/dev/null 2>&1
	dd_is "rpmemd restarted: dd/at is syncing, its journal pending" \
		"$(dd_at_state)" "syncing true 1 1"
	dd_roll_back
	dd_ctl "the next sync into dd/at completes" 0 \
		-q sync --no-history --transport tcp new.bin "$DD_T/dd/at"
	dd_is "LIST: dd/at is consistent at generation 2, nothing pending" \
		"$(dd_at_state)" "consistent false null 2"
	dd_pull_is new.bin "dd/at reads back byte-identical to the new image"
	cp new.bin "$RESULTS/$VM_SUITE.at.final"
	vm_signal forward

	vm_wait undo-gone || return 1
	tap_check "without its undo_dir a sync into dd/at is refused, saying why" \
		sh -c "! '$DD_CTL' -q sync --no-history --transport tcp old.bin '$DD_T/dd/at' 2>refused.err;
		       cat refused.err; grep -q \"pool 'at' stays consistent: cannot start its undo journal\" refused.err"
	dd_is "LIST: dd/at is still consistent at generation 2" \
		"$(dd_at_state)" "consistent false null 2"
	dd_pull_is new.bin "dd/at still holds the new image"
	vm_signal refused
}

# initiator_main -- the initiator's part in a work directory it removes
# after (its /tmp is a tmpfs in 1 GiB of RAM that later suites need)
initiator_main()
{
	local work

	work=$(mktemp -d /tmp/devdax.XXXXXX)
	if cd "$work"; then
		dd_initiator_main
		cd / || return
	fi
	rm -rf "$work"
}

dd_initiator_main()
{
	local list

	if ! vm_wait up; then
		tap_not_ok "the target's rpmemd did not come up"
		return
	fi
	dd_initiator_transfers
	dd_initiator_writers
	vm_signal phase1
	if ! vm_wait restarted; then
		tap_not_ok "the target did not restart rpmemd"
		return
	fi
	vm_retry 50 0.2 "$DD_CTL" -q list "$DD_T" >/dev/null 2>&1
	list=$("$DD_CTL" list --json "$DD_T/dd" 2>>"$(vm_log)")
	echo "$list" >>"$(vm_log)"
	dd_is "after a restart: the created pool is there, the removed one is not" \
		"$(jq -r '[.pools[].name] | sort | join(",")' <<<"$list")" \
		"a,keep,obj"
	dd_is "after a restart: dd/a is consistent, generation 2" \
		"$(jq -r '.pools[] | select(.name == "a")
			  | "\(.state)/\(.generation)"' <<<"$list")" \
		consistent/2
	dd_initiator_kill
	vm_signal kill-done
	rm -f big.bin b.bin c.bin
	dd_initiator_atomic
	vm_signal atomic-done
	rm -f "$RESULTS/$VM_SUITE.obj.pool"
}
