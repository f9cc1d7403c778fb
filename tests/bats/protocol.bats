#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# protocol.bats -- malformed and hostile frames get precise errors; the daemon keeps serving

load helpers

setup() { setup_daemon; }
teardown() { teardown_daemon; }

@test "rpmemd answers malformed frames with errors and keeps serving (proto_poke, 500 random rounds)" {
	run python3 "$TOP/tests/fuzz/proto_poke.py" --port "$PORT" --region r1 --rounds 500 --seed 1
	echo "$output"
	[ "$status" -eq 0 ]
	kill -0 "$DPID"
	mkfile "$W/src" 1
	rc mirror "$W/src" "$T/r1/after"
	[ "$status" -eq 0 ]
}

@test "the Python test peers' wire module reads every message type and error code of lib/common/proto.h" {
	run python3 -c 'import sys; sys.path.insert(0, sys.argv[1])
import rpmem_wire as w
print(len(w.MSG), max(w.MSG.values()), len(w.ERR), max(w.ERR.values()))
assert w.HELLO == 1 and w.E_PROTO == 1 and w.MAGIC == 0x4D4D5052' "$TOP/tests/peers"
	echo "$output"
	[ "$status" -eq 0 ]
	# as many as the C enums declare (25 of types is reserved)
	local types errs
	types=$(grep -cE '^\s+RPMEM_MSG_[A-Z_]+ = [0-9]+' "$TOP/lib/common/proto.h")
	errs=$(grep -cE '^\s+RPMEM_E_[A-Z_]+ = [0-9]+' "$TOP/lib/common/proto.h")
	[ "$output" = "$((types - 1)) 38 $((errs - 1)) 17" ]
}

@test "the handshake fuzz target: 2,000 mutated PSK ClientHellos and random HELLO, ERROR and PSK-line inputs crash nothing and authenticate nothing" {
	run "$BUILD/tests/handshake_fuzz" 2000
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"nothing accepted, no crash"* ]]
}

@test "the decode fuzz target's corpus (real traffic of every message type): every accepted payload survives a round trip through its encoder" {
	local seeds=("$TOP"/tests/fuzz/corpus/decode_fuzz/*)
	[ "${#seeds[@]}" -gt 100 ]
	run "$BUILD/tests/decode_fuzz" "${seeds[@]}"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"${#seeds[@]} inputs"* ]]
	# the layouts of LIST_REPLY and STATUS_REPLY are seeded to both of
	# their decoders, one of which refuses each: the rest is accepted
	local acc=${output#*inputs, }
	acc=${acc%% accepted*}
	[ "$acc" -ge $((${#seeds[@]} - 6)) ]
}
