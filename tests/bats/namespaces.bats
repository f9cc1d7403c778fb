#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# namespaces.bats -- PMem namespaces in status and list on a host without PMem
#
# The namespaces themselves (modes, sizes, devices, NUMA nodes, the regions
# on them) are checked against ndctl in the VM bed: tests/vm/suites/pmem.sh.

load helpers

setup() { setup_daemon; }
teardown() { teardown_daemon; }

# ndctl_count -- active namespaces as `ndctl list -N` shows them (it prints
# nothing for none, one object for one, an array for more)
ndctl_count() {
	ndctl list -N 2>/dev/null |
		jq -s '[.[] | if type == "array" then .[] else . end] | length'
}

# no_pmem -- skip a test that needs a host without PMem
no_pmem() {
	local n
	n=$(ndctl_count)
	[ "$n" -eq 0 ] || skip "this host has $n PMem namespace(s)"
}

@test "status --json reports as many namespaces as ndctl list -N" {
	rc status --json "$T"
	[ "$status" -eq 0 ]
	[ "$(json '.namespaces | type')" = array ]
	[ "$(json '.namespaces | length')" -eq "$(ndctl_count)" ]
}

@test "status --json without PMem: an empty namespaces array and no region on one" {
	no_pmem
	rc status --json "$T"
	[ "$status" -eq 0 ]
	[ "$(json '.namespaces')" = "[]" ]
	[ "$(json '.regions | length')" -eq 1 ]
	[ "$(json '.regions[0].name')" = r1 ]
	[ "$(json '.regions[0] | has("namespace")')" = true ]
	[ "$(json '.regions[0].namespace')" = null ]
}

@test "status without PMem says there are no namespaces and shows no table" {
	no_pmem
	rc status "$T"
	[ "$status" -eq 0 ]
	[[ "$output" == *"pmem:     no namespaces"* ]]
	[[ "$output" != *NAMESPACE* ]]
	[[ "$output" == *r1* ]]
	# -q drops informational lines, not the data
	rc -q status "$T"
	[ "$status" -eq 0 ]
	[[ "$output" == *"pmem:     no namespaces"* ]]
}

@test "list --json without PMem: every region has a null namespace" {
	no_pmem
	mkdir -p "$W/r2"
	cat >>"$CONF" <<CONF
regions_auto = true;
CONF
	sed -i "s|^regions = (|regions = (\n  { name = \"r2\"; type = \"dir\"; path = \"$W/r2\"; },|" "$CONF"
	kill -HUP "$DPID"
	wait_for grep -q "reload done: 2 region" "$DLOG"
	rc list --json "$T"
	[ "$status" -eq 0 ]
	[ "$(json '.regions | length')" -eq 2 ]
	[ "$(json '[.regions[].namespace] | map(select(. == null)) | length')" -eq 2 ]
	rc list --json "$T/r2"
	[ "$status" -eq 0 ]
	[ "$(json '.regions[0].name')" = r2 ]
	[ "$(json '.regions[0].namespace')" = null ]
}

@test "list without PMem keeps its columns: no DEVICE, MODE or NUMA" {
	no_pmem
	rc list "$T"
	[ "$status" -eq 0 ]
	[[ "$(head -n 1 <<<"$output")" =~ ^REGION\ +TYPE\ +SIZE\ +FREE\ +PATH$ ]]
	[[ "$output" != *DEVICE* ]]
	[[ "$output" != *NUMA* ]]
}

@test "rpmemd discovers the namespaces at start and again on SIGHUP" {
	grep -q "pmem: .* active namespace" "$DLOG"
	[ "$(grep -c "pmem: .* active namespace" "$DLOG")" -eq 1 ]
	kill -HUP "$DPID"
	wait_for grep -q "reload done" "$DLOG"
	[ "$(grep -c "pmem: .* active namespace" "$DLOG")" -eq 2 ]
	rc status --json "$T"
	[ "$status" -eq 0 ]
	[ "$(json '.namespaces | length')" -eq "$(ndctl_count)" ]
}
