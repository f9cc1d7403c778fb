/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * replica_state.c -- what a replica's line of the status file says: it
 * holds the file's writes, it lags, its disk state, seconds behind (used
 * by rpmemctl replicas and its --prometheus metrics)
 */

#include <string.h>
#include <time.h>

#include "cmd.h"

/* cmd_replica_holds -- the replica holds every write the file had */
int cmd_replica_holds(const struct cmd_replica *p)
{
	return !strcmp(p->state, "live") || !strcmp(p->state, "synced");
}

/*
 * cmd_replica_lags -- p misses writes of the file: left behind (degraded,
 * failed) or written to while it did not hold; a link stopped cleanly
 * (down) or not yet pushed (open) with nothing missed does not lag
 */
int cmd_replica_lags(const struct cmd_replica *p)
{
	return p->behind_since_ns || !strcmp(p->state, "degraded") ||
	       !strcmp(p->state, "failed");
}

/*
 * cmd_replica_disk -- p's disk state as the primary sees it: UpToDate
 * while it holds every write (live, or synced: also what a clean stop
 * leaves), Outdated once left behind, Inconsistent while connected but
 * not yet brought up to date (a push or resync under way: its image
 * partly old, partly new), Consistent for a link down that missed
 * nothing (never connected)
 */
int cmd_replica_disk(const struct cmd_replica *p)
{
	if (!strcmp(p->state, "resyncing"))
		return RPMEMCTL_DISK_INCONSISTENT;
	if (cmd_replica_lags(p))
		return RPMEMCTL_DISK_OUTDATED;
	if (cmd_replica_holds(p))
		return RPMEMCTL_DISK_UPTODATE;
	if (!strcmp(p->state, "open"))
		return RPMEMCTL_DISK_INCONSISTENT;
	return RPMEMCTL_DISK_CONSISTENT;
}

/* cmd_replica_lag_s -- seconds p has been behind, as of now or the update */
uint64_t cmd_replica_lag_s(const struct cmd_replicas *r, const struct cmd_replica *p)
{
	struct timespec ts;
	uint64_t now;

	if (!p->behind_since_ns)
		return 0;
	clock_gettime(CLOCK_REALTIME, &ts);
	now = r->running ? (uint64_t)ts.tv_sec * 1000000000ull +
				   (uint64_t)ts.tv_nsec :
			   r->updated_ns;
	return now > p->behind_since_ns ?
		       (now - p->behind_since_ns) / 1000000000ull :
		       0;
}
