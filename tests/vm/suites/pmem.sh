# SPDX-License-Identifier: BSD-3-Clause
# pmem.sh -- PMem discovery and the devdax pool table on real namespaces
#
# Target only: runs build/tests/pmem_probe (make build/tests/pmem_probe)
# against the namespaces guest/setup.sh made, compares what it discovers
# with `ndctl list -N` and `daxctl list`, exercises the pool table on
# $DEVDAX, and checks with daxio that a pool written through the table is
# where the table says, byte for byte (and the other way round). Then
# runs rpmemd (regions_auto, on loopback) and checks that `rpmemctl status`
# and `rpmemctl list` report the namespaces as `ndctl list -RNv` does, and
# which regions lie on them, also after a SIGHUP reload.

PMEM_PROBE=$RPMEM_BUILD/tests/pmem_probe
PMEM_RPMEMD=$RPMEM_BUILD/rpmemd
PMEM_CTL=$RPMEM_BUILD/rpmemctl
PMEM_PORT=7645
PMEM_T=127.0.0.1:$PMEM_PORT

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

# pmem_expect -- what ndctl says each namespace is, in the fields of
# `rpmemctl status --json`, into expect.json: an array sorted by name
# (the NUMA node of the namespace, else of its region, else -1; -v shows
# numa_node and moves a devdax namespace's chardev into its daxregion)
pmem_expect()
{
	local raw=$RESULTS/$VM_SUITE.ndctl-RNv.json

	{
		echo "### ndctl list -R -N -v (also in ${raw##*/})"
		{ ndctl list -R -N -v >"$raw"; } 2>&1
		cat "$raw"
	} >>"$(vm_log)"
	# regions hold their namespaces, at whatever depth ndctl nests them
	jq -s '[.. | objects | select(.namespaces? | type == "array")
		| .dev as $r | (.numa_node // -1) as $rn
		| .namespaces[]
		| { name: .dev, nd_region: $r, mode: .mode, size: .size,
		    align: (.align // 0),
		    device: ("/dev/" + (.blockdev // .chardev
				       // .daxregion.devices[0].chardev)),
		    numa_node: (.numa_node // $rn) }]
		| sort_by(.name)' "$raw" >"$PMEM_TMP/expect.json"
	cat "$PMEM_TMP/expect.json" >>"$(vm_log)"
}

# pmem_got FILE -- the same fields of the namespaces in a status reply
pmem_got()
{
	jq '[.namespaces[] | { name, nd_region, mode, size, align, device,
			       numa_node }] | sort_by(.name)' "$1"
}

# pmem_ex MODE FIELD -- FIELD of the namespace in MODE as ndctl says
pmem_ex()
{
	jq -r --arg m "$1" --arg f "$2" \
		'.[] | select(.mode == $m) | .[$f]' "$PMEM_TMP/expect.json"
}

# pmem_st FILE MODE FIELD -- FIELD of the namespace in MODE in a status
# reply (an array joined with commas)
pmem_st()
{
	jq -r --arg m "$2" --arg f "$3" '.namespaces[] | select(.mode == $m)
		| .[$f] | if type == "array" then join(",") else . end' "$1"
}

# pmem_ls REGION FIELD -- FIELD of REGION's namespace in list.json
pmem_ls()
{
	jq -r --arg r "$1" --arg f "$2" \
		'.regions[] | select(.name == $r) | .namespace
		 | if . == null then "null" else .[$f] end' "$PMEM_TMP/list.json"
}

# pmem_status_check TAG -- status --json against ndctl (TAG in the names)
pmem_status_check()
{
	local st=$PMEM_TMP/status.$1.json m

	if ! tap_check "$1: rpmemctl status --json" \
		sh -c "'$PMEM_CTL' status --json '$PMEM_T' >'$st' && cat '$st'"; then
		return 1
	fi
	pmem_same "$1: status reports as many namespaces as ndctl list -N" \
		"$(jq '.namespaces | length' "$st")" \
		"$(jq length "$PMEM_TMP/expect.json")"
	pmem_same "$1: status namespaces equal ndctl's (name, ndctl region, mode, size, align, device, NUMA node)" \
		"$(pmem_got "$st" | jq -c .)" \
		"$(jq -c . "$PMEM_TMP/expect.json")"
	for m in fsdax devdax; do
		pmem_same "$1: $m namespace name" "$(pmem_st "$st" $m name)" \
			"$(pmem_ex $m name)"
		pmem_same "$1: $m device" "$(pmem_st "$st" $m device)" \
			"$(pmem_ex $m device)"
		pmem_same "$1: $m size" "$(pmem_st "$st" $m size)" \
			"$(pmem_ex $m size)"
		pmem_same "$1: $m NUMA node" "$(pmem_st "$st" $m numa_node)" \
			"$(pmem_ex $m numa_node)"
	done
	pmem_same "$1: fsdax namespace is mounted with DAX on $FSDAX_DIR" \
		"$(pmem_st "$st" fsdax mount)" "$FSDAX_DIR"
	pmem_same "$1: devdax namespace has no mount" \
		"x$(pmem_st "$st" devdax mount)" x
	pmem_same "$1: region ${PMEM_DEV##*/} lies on the fsdax namespace" \
		"$(pmem_st "$st" fsdax region_names)" "${PMEM_DEV##*/}"
	pmem_same "$1: region ${DEVDAX##*/} lies on the devdax namespace" \
		"$(pmem_st "$st" devdax region_names)" "${DEVDAX##*/}"
}

# pmem_list_check -- list --json and the human tables
pmem_list_check()
{
	local dd=${DEVDAX##*/} fs=${PMEM_DEV##*/}

	if tap_check "rpmemctl list --json" \
		sh -c "'$PMEM_CTL' list --json '$PMEM_T' >'$PMEM_TMP/list.json' && cat '$PMEM_TMP/list.json'"; then
		pmem_same "list: region $dd is on $DEVDAX, devdax" \
			"$(pmem_ls "$dd" device)/$(pmem_ls "$dd" mode)" \
			"$DEVDAX/devdax"
		pmem_same "list: region $dd is on the devdax namespace's NUMA node" \
			"$(pmem_ls "$dd" numa_node)" "$(pmem_ex devdax numa_node)"
		pmem_same "list: region $dd names the devdax namespace" \
			"$(pmem_ls "$dd" name)" "$(pmem_ex devdax name)"
		pmem_same "list: region $fs is on $PMEM_DEV, fsdax" \
			"$(pmem_ls "$fs" device)/$(pmem_ls "$fs" mode)" \
			"$PMEM_DEV/fsdax"
		pmem_same "list: region $fs is on the fsdax namespace's NUMA node" \
			"$(pmem_ls "$fs" numa_node)" "$(pmem_ex fsdax numa_node)"
		pmem_same "list: region plain (on tmpfs) is on no namespace" \
			"$(pmem_ls plain name)" null
	fi
	tap_check "list: the regions table has DEVICE, MODE and NUMA columns" \
		sh -c "'$PMEM_CTL' list '$PMEM_T' >'$PMEM_TMP/list.txt' &&
		       cat '$PMEM_TMP/list.txt' && head -n 1 '$PMEM_TMP/list.txt' |
		       grep -Eq '^REGION +TYPE +SIZE +FREE +DEVICE +MODE +NUMA +PATH\$'"
	tap_check "status: the namespaces table shows both namespaces" \
		sh -c "'$PMEM_CTL' status '$PMEM_T' >'$PMEM_TMP/status.txt' &&
		       cat '$PMEM_TMP/status.txt' &&
		       grep -q '^pmem: *2 namespaces\$' '$PMEM_TMP/status.txt' &&
		       grep -Eq '^$(pmem_ex devdax name) +$(pmem_ex devdax nd_region) +devdax +$DEVDAX .* $dd +-\$' '$PMEM_TMP/status.txt' &&
		       grep -Eq '^$(pmem_ex fsdax name) +$(pmem_ex fsdax nd_region) +fsdax +$PMEM_DEV .* $fs +$FSDAX_DIR\$' '$PMEM_TMP/status.txt'"
}

# pmem_rpmemd -- rpmemd with regions_auto and a plain directory region:
# what status and list report about the namespaces, before and after a
# SIGHUP reload
pmem_rpmemd()
{
	local pid rc=0 dlog=$RESULTS/$VM_SUITE.rpmemd.log

	pmem_expect
	pmem_same "ndctl list -RNv shows two namespaces" \
		"$(jq length "$PMEM_TMP/expect.json")" 2
	mkdir -p "$PMEM_TMP/plain"
	printf '%s\n' 'listen = ["127.0.0.1"];' "port = $PMEM_PORT;" \
		'regions_auto = true;' \
		"regions = ( { name = \"plain\"; type = \"dir\"; path = \"$PMEM_TMP/plain\"; } );" \
		>"$PMEM_TMP/rpmemd.conf"
	cat "$PMEM_TMP/rpmemd.conf" >>"$(vm_log)"
	"$PMEM_RPMEMD" -c "$PMEM_TMP/rpmemd.conf" >>"$dlog" 2>&1 &
	pid=$!
	if ! vm_retry 300 0.2 "$PMEM_CTL" -q list "$PMEM_T" >/dev/null 2>&1; then
		tap_not_ok "rpmemd starts with regions_auto (see $VM_SUITE.rpmemd.log)"
		kill "$pid" 2>/dev/null
		wait "$pid"
		return 1
	fi
	tap_ok "rpmemd starts with regions_auto"

	pmem_status_check start
	pmem_list_check

	kill -HUP "$pid"
	vm_retry 300 0.2 grep -q "reload done" "$dlog" ||
		tap_not_ok "rpmemd logged no 'reload done' within 60 s of SIGHUP"
	pmem_same "rpmemd discovered the namespaces again on SIGHUP" \
		"$(grep -c 'pmem: 2 active namespaces' "$dlog")" 2
	pmem_status_check reload

	kill -TERM "$pid"
	wait "$pid" || rc=$?
	pmem_same "rpmemd stops on SIGTERM with status 0" "$rc" 0
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
	pmem_rpmemd
	rm -rf "$PMEM_TMP"
}
