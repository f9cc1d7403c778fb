#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# pmdk.bats -- a real PMDK pool mirrored is a valid PMDK pool on the target

load helpers

setup() { setup_daemon; }
teardown() { teardown_daemon; }

@test "a pmempool obj pool mirrored to rpmemd passes pmempool check on the target" {
	command -v pmempool || {
		echo "pmempool missing: run packaging/install-deps.sh" >&2
		return 1
	}
	PMEM_IS_PMEM_FORCE=0 pmempool create obj --size 32M --layout rpmem "$W/pool.obj"
	rc mirror "$W/pool.obj" "$T/r1/pool.obj"
	[ "$status" -eq 0 ]
	cmp "$W/pool.obj" "$R1/pool.obj"
	run pmempool check -v "$R1/pool.obj"
	[ "$status" -eq 0 ]
	[[ "$output" == *consistent* ]]
	run pmempool info "$R1/pool.obj"
	[ "$status" -eq 0 ]
	[[ "$output" == *rpmem* ]]
}

@test "the replicated-persist example keeps the replica identical to the local pool" {
	"$BUILD/tests/replica_example" "$W/app.pool" "$T/r1/app"
	cmp "$W/app.pool" "$R1/app"
	rc verify "$W/app.pool" "$T/r1/app"
	[ "$status" -eq 0 ]
}
