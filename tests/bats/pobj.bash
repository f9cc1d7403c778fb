# SPDX-License-Identifier: BSD-3-Clause
# pobj.bash -- tests/pobj_app (an unmodified libpmemobj program) run under
# the preload library on $POOL, for preload.bats and targets.bats: in the
# foreground (bats' run) or in the background, paused at its "pause" steps
# (its output in $W/app.out and $W/app.err)

PRELOAD=$BUILD/librpmem_preload.so
APP=$BUILD/tests/pobj_app

# app STEP... -- pobj_app on $POOL under the preload library (bats' run)
app() {
	run env LD_PRELOAD="$PRELOAD" "$APP" "$POOL" "$@"
}

# app_start STEP... -- the same in the background; each "pause" step
# waits for app_continue; output in $W/app.out and $W/app.err
app_start() {
	rm -f "$W/ctl"
	mkfifo "$W/ctl"
	LD_PRELOAD="$PRELOAD" "$APP" "$POOL" "$@" <"$W/ctl" >"$W/app.out" \
		2>"$W/app.err" &
	APID=$!
	exec 5>"$W/ctl"
}

# paused N -- the application has printed "paused" N times or more
paused() {
	[ "$(grep -c paused "$W/app.out")" -ge "$1" ]
}

# app_paused N -- wait until the application printed its Nth "paused"
app_paused() {
	alive_until "$APID" paused "$1" && return 0
	echo "the application did not pause:" >&2
	cat "$W/app.err" >&2
	return 1
}

app_continue() {
	echo go >&5
}

# app_finish -- close its input, wait; its exit status in $ASTATUS
app_finish() {
	exec 5>&-
	ASTATUS=0
	wait "$APID" || ASTATUS=$?
	APID=
}

# setup_two -- rpmemd and a second rpmemd (start_second), $POOL replicated
# by the preload library to app on both, with its defaults (no policy,
# retry or quorum set); for the files whose tests all start so
setup_two() {
	setup_daemon
	start_second
	POOL=$W/app.obj
	export RPMEM_REPLICATE="$POOL=$T/r1/app,$T2/r1/app"
	export PMEM_IS_PMEM_FORCE=0
	unset RPMEM_REPLICATE_POLICY RPMEM_REPLICATE_RETRY \
	      RPMEM_REPLICATE_QUORUM
}

# teardown_two -- the application (APID) killed, both daemons stopped
teardown_two() {
	[ -z "${APID:-}" ] || kill -KILL "$APID" 2>/dev/null || true
	stop_second
	teardown_daemon
}
