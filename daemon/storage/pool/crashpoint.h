/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * crashpoint.h -- named points where a test build of rpmemd
 * (build/tests/rpmemd-crash, compiled with -DRPMEMD_TEST_CRASH) dies by
 * SIGKILL when RPMEMD_CRASH_AT names the point, so that a kill lands
 * exactly there (tests/bats/versions.bats); the product compiles none
 */
#ifndef RPMEMD_CRASHPOINT_H
#define RPMEMD_CRASHPOINT_H

#ifdef RPMEMD_TEST_CRASH
#include <signal.h>
#include <stdlib.h>
#include <string.h>

/* crash_point -- die here if RPMEMD_CRASH_AT is at */
static inline void crash_point(const char *at)
{
	const char *e = getenv("RPMEMD_CRASH_AT");
	if (e && !strcmp(e, at))
		raise(SIGKILL);
}
#else
#define crash_point(at) ((void)0)
#endif

#endif
