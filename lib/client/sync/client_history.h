/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * client_history.h -- a local file's generation history, FILE.rpmemgen
 * (history.c). generations.c owns it: the syncs' checks and GEN build on
 * these calls, and history.c calls nothing of generations.c.
 */
#ifndef RPMEM_CLIENT_HISTORY_H
#define RPMEM_CLIENT_HISTORY_H

#include <stdint.h>

#include "librpmemctl.h"

/* --- history.c: a local file's generation history ------------------------ */

#define CLIENT_HIST_LIVE_MAX 16
struct client_history {
	struct rpmemctl_generations g;
	uint64_t size;	   /* the file's when the newest id last agreed */
	uint64_t mtime_ns; /* its mtime then */
	/*
	 * the pools (uuids) a live writer replicates the file to: every
	 * write made since it was recorded went to each of them before it
	 * was acknowledged (docs/ARCHITECTURE.md, "A crash is not a split
	 * brain")
	 */
	uint8_t live[CLIENT_HIST_LIVE_MAX][16];
	unsigned nlive;
	/* the newest id was made for local writes no copy holds yet */
	int local;
	/* split brains reported already (a tag per pair of newest ids) */
	uint64_t split[CLIENT_HIST_LIVE_MAX];
	unsigned nsplit;
};

/*
 * client_history_lock, client_history_unlock -- serialize the read,
 * new id and record of local histories among the process's syncs
 */
void client_history_lock(void);
void client_history_unlock(void);
/*
 * client_history_read -- file's history (FILE.rpmemgen) into *h; -ENOENT
 * if none, -EBADMSG if damaged
 */
int client_history_read(const char *file, struct client_history *h);
/*
 * client_history_writable -- FILE.rpmemgen can be written (its temporary
 * file created and removed): 0, else -errno
 */
int client_history_writable(const char *file);
/* client_history_written -- file changed since h was recorded: 1, else 0 */
int client_history_written(const char *file, const struct client_history *h);
/*
 * client_history_record -- h's ids become count of ids (a new id in
 * front if new_id, or if there are none), recorded with file's current
 * size and mtime, crash-safely
 */
int client_history_record(const char *file, struct client_history *h,
			  const uint64_t *ids, unsigned count, int new_id);
/* new_id of client_history_record: the new id is a promotion's */
#define CLIENT_HIST_PROMOTION 2
/* client_history_is_live -- uuid is one of h's live pools */
int client_history_is_live(const struct client_history *h,
			   const uint8_t uuid[16]);
/*
 * client_history_live -- under client_history_lock: uuid added to (on)
 * or dropped from (!on) file's live pools (every one if uuid is NULL),
 * the recorded size and mtime kept; 0 if file has no history
 */
int client_history_live(const char *file, const uint8_t uuid[16], int on);
/*
 * client_history_outdate -- under client_history_lock: a new id in front
 * of file's history for the copies a live writer goes on with after
 * leaving one behind (its recorded size, mtime and live pools kept); the
 * ids into *g. -ENOENT without a history
 */
int client_history_outdate(const char *file, struct rpmemctl_generations *g);
/*
 * client_history_split -- under client_history_lock: the split brain
 * tag is kept in file's history (the recorded size and mtime kept): 1 if
 * it is new (or there is no history), 0 if kept before, else -errno
 */
int client_history_split(const char *file, uint64_t tag);
/* client_history_epoch -- moves whenever a record drops the live pools */
unsigned client_history_epoch(void);

#endif
