/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * journal.h -- the journal layer's face upward: what it asks of the
 * history layer above it (versions, scrub records), which registers it
 * (rpmemd_journal_set_history); the journal never calls up by name
 * (docs/ARCHITECTURE.md, "The storage layers")
 */
#ifndef RPMEMD_JOURNAL_H
#define RPMEMD_JOURNAL_H

#include <stdint.h>

#include "store.h"

/* the space of a region's versions */
struct rpmemd_vspace {
	uint64_t all;	 /* bytes of every version file */
	uint64_t floor;	 /* of the newest versions_floor of each pool */
	uint64_t leaves; /* of the pool's oldest in its floor: a commit of
			  * it moves that one out */
};

/* what the journal asks of the history layer */
struct rpmemd_journal_history {
	/*
	 * reclaim -- the reclaim callback: p's journal needs room; 0 if a
	 * version was pruned for it, -ENOENT if none may be
	 */
	int (*reclaim)(struct rpmemd_pool *p);
	/* space -- the bytes of region r's versions (rpmemd_vspace) */
	void (*space)(struct rpmemd_region *r, const char *pool,
		      struct rpmemd_vspace *s);
	/*
	 * keep -- at p's commit (its metadata before it: was), its journal
	 * kept as version was->generation; 0 or -errno
	 */
	int (*keep)(struct rpmemd_pool *p, const struct rpmemd_meta *was);
	/*
	 * record_bytes -- the bytes of p's scrub record, kept beside its
	 * version at the commit
	 */
	uint64_t (*record_bytes)(const struct rpmemd_pool *p);
	/*
	 * image_check -- p's image is generation gen's as its scrub record
	 * says: 0, -ENOENT (no record), -EILSEQ (*n pieces differ, the
	 * first at [*off, *off + *len)), -errno
	 */
	int (*image_check)(struct rpmemd_pool *p, uint64_t gen,
			   unsigned nthreads, uint64_t *off, uint64_t *len,
			   uint64_t *n);
};

/*
 * rpmemd_journal_set_history -- the history layer registers h (static,
 * for the daemon's life); before it, a journal ends at its commit, and
 * nothing gives way to its room
 */
void rpmemd_journal_set_history(const struct rpmemd_journal_history *h);

/* rpmemd_journal_reclaim -- h->reclaim of the registered history */
int rpmemd_journal_reclaim(struct rpmemd_pool *p);

#endif
