/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * history_int.h -- history's state of an open pool, the history layer's
 * own: kept in the pool's slot its keeper was given (backend.h), made
 * and let go by its attach and detach hooks (history.c)
 */
#ifndef RPMEMD_HISTORY_INT_H
#define RPMEMD_HISTORY_INT_H

#include <pthread.h>
#include <stdint.h>

#include "pool_int.h"
#include "versions.h"

/* the versions pruned for a pool's room kept to report (and counted) */
#define HISTORY_ROOM_MAX 8

struct rpmemd_pool_history {
	/*
	 * cuts of a live pool into versions (store_cut.c): cut_lock is held
	 * by the writer across each WRITE's application, so a cut sees none
	 * half applied; under it, whether a WRITE came since the writer's
	 * last FLUSH or BARRIER, the cuts asked for and those done
	 */
	pthread_mutex_t cut_lock;
	pthread_cond_t cut_cond;
	int since_drain;
	unsigned cut_want;
	uint64_t cuts;
	int cut_ret;
	uint64_t cut_gen;

	/*
	 * versions pruned for the room of this pool's journals
	 * (versions_full = "prune"), not yet reported to its writer
	 * (rpmemd_versions_take_room); under region->ver_lock
	 */
	struct rpmemd_room_pruned room[HISTORY_ROOM_MAX];
	unsigned nroom, room_lost;
};

/* the history keeper's slot in a pool's kept[] (history.c) */
extern int rpmemd_history_slot;

/* history_of -- history's state of open pool p */
static inline struct rpmemd_pool_history *history_of(const struct rpmemd_pool *p)
{
	return p->kept[rpmemd_history_slot];
}

#endif
