/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * journal_int.h -- the journal's state of an open pool, the journal
 * layer's own: kept in the pool's slot its keeper was given (backend.h),
 * made and let go by its attach and detach hooks (journal.c). The layers
 * above ask through journal.h's calls.
 */
#ifndef RPMEMD_JOURNAL_INT_H
#define RPMEMD_JOURNAL_INT_H

#include <pthread.h>
#include <stdint.h>

#include "pool_int.h"

struct rpmemd_undo;
struct rpmemd_undo_queue;
struct rpmemd_swap;
struct rpmemd_old_image;
struct rpmemd_vspace;
struct rpmemd_journal_history;

struct rpmemd_pool_journal {
	/*
	 * the undo journal of an interrupted or running sync (undo.h,
	 * store_undo.c); NULL: none. Under undo_lock.
	 */
	pthread_mutex_t undo_lock;
	pthread_cond_t undo_cond; /* the journal thread did a chunk */
	struct rpmemd_undo *undo;
	struct rpmemd_undo_queue *uq; /* its thread (undo_queue.c), or NULL */
	/* a dense sync into a new file (store_swap.c), or NULL */
	struct rpmemd_swap *swap;
	/*
	 * the previous image of a committed dense sync, freed once the
	 * commit was answered (rpmemd_store_swap_release), or NULL
	 */
	struct rpmemd_old_image *old;
	/*
	 * bytes its sync under way reserves in region->ver_reserved for the
	 * version its commit keeps (store_undo.c's reserve lock)
	 */
	uint64_t ver_reserved;
};

/*
 * journal_history -- the history layer's callbacks (journal_history.c):
 * NULL until it registers them
 */
const struct rpmemd_journal_history *journal_history(void);
/*
 * journal_versions_space -- the space of r's versions, from the history
 * layer's callbacks (journal_history.c); none without history
 */
void journal_versions_space(struct rpmemd_region *r, const char *pool,
			    struct rpmemd_vspace *s);

/* the journal keeper's slot in a pool's kept[] (journal.c) */
extern int rpmemd_journal_slot;

/* journal_of -- the journal's state of open pool p */
static inline struct rpmemd_pool_journal *journal_of(const struct rpmemd_pool *p)
{
	return p->kept[rpmemd_journal_slot];
}

#endif
