# SPDX-License-Identifier: BSD-3-Clause
# example.sh -- template suite: peer sync, a target-side check after the initiator, bats
#
# Target: listens with nc and stores what arrives on the fsdax mount;
# after the initiator is done (target_post) checks the file. Initiator:
# runs suites/example.bats, whose tests send the data and look at the
# variables every suite gets. Copy this file to start an rpmemd suite.

EXAMPLE_PORT=7777

target_main()
{
	timeout 120 nc -l "$EXAMPLE_PORT" >"$FSDAX_DIR/example.dat" &
	vm_alive_until $! vm_listening "$EXAMPLE_PORT" || return 1
	vm_signal listening
	# target_main may return at once: the harness keeps the target up
	# until initiator_main has finished, then calls target_post
}

target_post()
{
	tap_check "data from the initiator landed on $FSDAX_DIR" \
		grep -qx "hello from $INITIATOR_IP" "$FSDAX_DIR/example.dat"
	rm -f "$FSDAX_DIR/example.dat"
}

initiator_main()
{
	vm_wait listening || {
		tap_not_ok "target did not start listening"
		return
	}
	export EXAMPLE_PORT
	tap_bats "$RPMEM_SRC/tests/vm/suites/example.bats"
}
