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

@test "an application's replica into a pool of another size is refused, naming both sizes, and leaves the pool alone" {
	rc create "$T/r1/app" 1M
	[ "$status" -eq 0 ]
	run "$BUILD/tests/replica_example" "$W/app.pool" "$T/r1/app"
	[ "$status" -eq 1 ]
	[[ "$output" == *"1 MiB"* ]]
	[[ "$output" == *"4 MiB"* ]]
	[ "$(stat -c %s "$R1/app")" -eq $((1 << 20)) ]
	rc list --json "$T/r1"
	[ "$(json '.pools[] | select(.name=="app") | .state')" = empty ]
}

@test "an application's replica waits out a writer that lets go, as rpmemctl does" {
	rc create "$T/r1/app" 4M
	[ "$status" -eq 0 ]
	hold "$T/r1/app" 1
	local hp=$HP
	run "$BUILD/tests/replica_example" "$W/app.pool" "$T/r1/app"
	wait "$hp"
	[ "$status" -eq 0 ]
	cmp "$W/app.pool" "$R1/app"
}
