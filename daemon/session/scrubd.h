/* SPDX-License-Identifier: BSD-3-Clause */
/* scrubd.h -- scheduled scrubs of the regions with scrub_interval */
#ifndef RPMEMD_SCRUBD_H
#define RPMEMD_SCRUBD_H

struct rpmemd_sessions;
struct rpmemd_scrubd;

/*
 * rpmemd_scrubd_start -- a thread that scrubs every consistent pool of
 * each region with scrub_interval (read from the region's configuration
 * at each look, so a reload applies) that often, the first time one
 * interval after the daemon started; each batch of 64 MiB in one of the
 * daemon's hashing slots, what it finds kept as a SCRUB's is (the pool's
 * list of damaged pieces, its hash cache), an event and a log line per
 * pool. 0 or -errno.
 */
int rpmemd_scrubd_start(struct rpmemd_sessions *set,
			struct rpmemd_scrubd **out);

/* rpmemd_scrubd_stop -- end the thread (a scrub stops between batches) */
void rpmemd_scrubd_stop(struct rpmemd_scrubd **d);

#endif
