#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# xport.bats -- the transport interface is sealed (lib/common/xport.h,
# docs/design/sealed-transport.md): above the files that implement or
# choose a transport, nothing in lib/client or lib/preload asks which
# transport it runs on; what differs is an operation or a property of
# the ops table. librpma is used in lib/rdma only.

load helpers

# the files that implement or choose a data plane, wherever they sit
XPORT_FILES="tcp_initiator.c xport_open.c"

@test "nothing in lib/client or lib/preload but the transport files tests the transport type" {
	local ex=() f
	for f in $XPORT_FILES; do
		# the exclusions name files that exist
		[ -n "$(find "$TOP/lib/client" -name "$f")" ]
		ex+=(--exclude="$f")
	done
	run grep -rnE 'RPMEM_XPORT_(TCP|RDMA|AUTO)|xport->type|ops->name *[!=]=|cmp\([^;]*ops->name' \
		"${ex[@]}" "$TOP/lib/client" "$TOP/lib/preload"
	echo "$output"
	[ "$status" -eq 1 ]
	# the handle carries its operations only: no type to test
	run sed -n '/^struct rpmem_xport {/,/^};/p' "$TOP/lib/common/xport.h"
	echo "$output"
	[ "${#lines[@]}" -eq 3 ]
	[[ "${lines[1]}" == *"const struct rpmem_xport_ops *ops;"* ]]
}

@test "librpma is used only in lib/rdma" {
	run grep -rlE 'librpma\.h|\brpma_[a-z]' "$TOP/lib/client" \
		"$TOP/lib/common" "$TOP/lib/preload" "$TOP/cmd" "$TOP/daemon"
	echo "$output"
	[ "$status" -eq 1 ]
}
