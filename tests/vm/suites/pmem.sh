# SPDX-License-Identifier: BSD-3-Clause
# pmem.sh -- PMem discovery and the devdax pool table on real namespaces
#
# Target only: runs build/tests/pmem_probe (make build/tests/pmem_probe)
# against the namespaces guest/setup.sh made, compares what it discovers
# with `ndctl list -N` and `daxctl list`, exercises the pool table on
# $DEVDAX, and checks with daxio that a pool written through the table is
# where the table says, byte for byte (and the other way round).

PMEM_PROBE=$RPMEM_BUILD/tests/pmem_probe

# pmem_json_ns MODE FIELD -- FIELD of the one namespace in MODE (ndctl);
# 0 if ndctl does not show it (no "align" on a legacy fsdax namespace)
pmem_json_ns()
{
	jq -r --arg m "$1" --arg f "$2" \
		'(if type == "array" then .[] else . end)
		 | select(.mode == $m) | .[$f] // 0' "$PMEM_TMP/ndctl.json"
}

# pmem_probe_ns MODE FIELD -- FIELD=value of the probe's ns line for MODE
# (FIELD ns: the namespace name, the line's second word)
pmem_probe_ns()
{
	awk -v m="mode=$1" -v f="$2=" '$1 == "ns" {
		hit = 0
		for (i = 2; i <= NF; i++) if ($i == m) hit = 1
		if (!hit) next
		if (f == "ns=") print $2
		for (i = 3; i <= NF; i++)
			if (index($i, f) == 1) print substr($i, length(f) + 1)
	}' "$PMEM_TMP/discover.out"
}

# pmem_pool_field FILE FIELD -- FIELD=value of the first "pool" line
pmem_pool_field()
{
	awk -v f="$2=" '$1 == "pool" {
		for (i = 3; i <= NF; i++)
			if (index($i, f) == 1) { print substr($i, length(f) + 1); exit }
	}' "$1"
}

# pmem_same DESC A B -- ok if A and B are equal and not empty
pmem_same()
{
	if [ -n "$2" ] && [ "$2" = "$3" ]; then
		tap_ok "$1 ($2)"
	else
		tap_not_ok "$1 (probe '$2', expected '$3')"
	fi
}

pmem_discovery()
{
	local n

	ndctl list -N >"$PMEM_TMP/ndctl.json"
	daxctl list >"$PMEM_TMP/daxctl.json"
	cat "$PMEM_TMP/ndctl.json" "$PMEM_TMP/daxctl.json" >>"$(vm_log)"
	if ! tap_check "pmem_probe discover runs" \
		sh -c "'$PMEM_PROBE' discover >'$PMEM_TMP/discover.out' && cat '$PMEM_TMP/discover.out'"; then
		return 1
	fi

	n=$(grep -c '^ns .*mode=fsdax' "$PMEM_TMP/discover.out")
	pmem_same "one fsdax namespace discovered" "$n" 1
	pmem_same "fsdax namespace is $PMEM_DEV" \
		"$(pmem_probe_ns fsdax dev)" "$PMEM_DEV"
	pmem_same "fsdax namespace is mounted with DAX on $FSDAX_DIR" \
		"$(pmem_probe_ns fsdax mount)" "$FSDAX_DIR"
	pmem_same "fsdax size matches ndctl list -N" \
		"$(pmem_probe_ns fsdax size)" "$(pmem_json_ns fsdax size)"
	pmem_same "fsdax alignment matches ndctl list -N" \
		"$(pmem_probe_ns fsdax align)" "$(pmem_json_ns fsdax align)"

	n=$(grep -c '^ns .*mode=devdax' "$PMEM_TMP/discover.out")
	pmem_same "one devdax namespace discovered" "$n" 1
	pmem_same "devdax namespace is $DEVDAX" \
		"$(pmem_probe_ns devdax dev)" "$DEVDAX"
	pmem_same "devdax namespace name matches ndctl list -N" \
		"$(pmem_probe_ns devdax ns)" "$(pmem_json_ns devdax dev)"
	pmem_same "devdax size matches ndctl list -N" \
		"$(pmem_probe_ns devdax size)" "$(pmem_json_ns devdax size)"
	pmem_same "devdax size matches daxctl list" \
		"$(pmem_probe_ns devdax size)" \
		"$(jq -r '(if type == "array" then .[] else . end)
			  | select(.chardev == "'"${DEVDAX##*/}"'") | .size' \
			  "$PMEM_TMP/daxctl.json")"
	pmem_same "devdax alignment matches ndctl list -N" \
		"$(pmem_probe_ns devdax align)" "$(pmem_json_ns devdax align)"

	tap_check "auto region ${PMEM_DEV##*/}: fsdax on $FSDAX_DIR" \
		grep -qx "region ${PMEM_DEV##*/} type=fsdax path=$FSDAX_DIR" \
		"$PMEM_TMP/discover.out"
	tap_check "auto region ${DEVDAX##*/}: devdax on $DEVDAX" \
		grep -qx "region ${DEVDAX##*/} type=devdax path=$DEVDAX" \
		"$PMEM_TMP/discover.out"
	pmem_same "exactly two auto regions" \
		"$(grep -c '^region ' "$PMEM_TMP/discover.out")" 2
	tap_check "$FSDAX_DIR is a DAX mount" "$PMEM_PROBE" is-dax "$FSDAX_DIR"
	tap_check "/tmp is not a DAX mount" \
		sh -c "! '$PMEM_PROBE' is-dax /tmp"
}

pmem_table()
{
	local line rc=0

	"$PMEM_PROBE" table "$DEVDAX" >"$PMEM_TMP/table.out" \
		2>>"$(vm_log)" || rc=$?
	cat "$PMEM_TMP/table.out" >>"$(vm_log)"
	while IFS= read -r line; do
		case "$line" in
		"ok "*) tap_ok "table: ${line#ok }" ;;
		"not ok "*) tap_not_ok "table: ${line#not ok }" ;;
		esac
	done <"$PMEM_TMP/table.out"
	pmem_same "pmem_probe table exit status" "$rc" 0
}

pmem_daxio()
{
	local off size out=$PMEM_TMP/write.out

	# 3 MiB + 123 bytes: not a multiple of the alignment
	head -c $((3 * 1024 * 1024 + 123)) /dev/urandom >"$PMEM_TMP/src.bin"
	if ! tap_check "write a pool through the table" \
		sh -c "'$PMEM_PROBE' write '$DEVDAX' daxio-a '$PMEM_TMP/src.bin' | tee '$out'"; then
		return 1
	fi
	off=$(pmem_pool_field "$out" offset)
	size=$(pmem_pool_field "$out" size)
	pmem_same "the pool has the size of its source" "$size" \
		"$(stat -c %s "$PMEM_TMP/src.bin")"
	pmem_same "the pool is consistent, generation 1" \
		"$(pmem_pool_field "$out" state)/$(pmem_pool_field "$out" gen)" \
		consistent/1
	tap_check "daxio reads the pool at offset $off identically" \
		sh -c "daxio -i '$DEVDAX' -o '$PMEM_TMP/daxio.bin' -k '$off' -l '$size' &&
		       cmp '$PMEM_TMP/src.bin' '$PMEM_TMP/daxio.bin'"

	# the other way: daxio writes the range, the table reads it back
	head -c "$size" /dev/urandom >"$PMEM_TMP/src2.bin"
	tap_check "the table reads back what daxio wrote at offset $off" \
		sh -c "daxio -i '$PMEM_TMP/src2.bin' -o '$DEVDAX' -s '$off' -l '$size' &&
		       '$PMEM_PROBE' read '$DEVDAX' daxio-a '$PMEM_TMP/back.bin' &&
		       cmp '$PMEM_TMP/src2.bin' '$PMEM_TMP/back.bin'"
	tap_check "the pool survives reopening the device" \
		sh -c "'$PMEM_PROBE' info '$DEVDAX' | grep -q '^pool daxio-a offset=$off size=$size .*state=consistent gen=1'"
	tap_check "remove the pool" "$PMEM_PROBE" remove "$DEVDAX" daxio-a
	tap_check "the table is empty again" \
		sh -c "'$PMEM_PROBE' info '$DEVDAX' | grep -q ' pools=0 '"
}

target_main()
{
	PMEM_TMP=$(mktemp -d /tmp/pmem.XXXXXX)
	if [ ! -x "$PMEM_PROBE" ]; then
		tap_not_ok "$PMEM_PROBE missing (make build/tests/pmem_probe)"
		return
	fi
	pmem_discovery
	pmem_table
	pmem_daxio
	rm -rf "$PMEM_TMP"
}
