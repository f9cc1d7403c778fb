/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * history.h -- the history layer of the storage (versions, cuts, scrub
 * records, generations): the layers below it never call it by name; it
 * registers what they ask of it (docs/ARCHITECTURE.md, "The storage
 * layers")
 */
#ifndef RPMEMD_HISTORY_H
#define RPMEMD_HISTORY_H

#include <stdint.h>

#include "store.h"

/*
 * rpmemd_history_init -- the storage's layers registered: the journal's
 * keeper, then history's, with the pool layer (backend.h), and history's
 * callbacks with the journal (the reclaim callback, version space, keep,
 * image check); once, before any pool opens
 */
void rpmemd_history_init(void);

/*
 * rpmemd_pool_gen -- a GEN op on an open pool (store_gen.c): GET, PROMOTE
 * (refused while a writer holds the pool, or it is empty, or syncing
 * without RPMEM_GEN_FORCE: with it a journal is rolled back, *rolled =
 * 1, else the partial image is marked consistent), DEMOTE, ADOPT (a
 * consistent pool's history becomes the ids; a syncing one's with
 * RPMEMD_GEN_LIVE_WRITER, set by the session when the pool's writer
 * asks: a live writer's new id). Persisted before it
 * returns (a devdax pool keeps its newest RPMEMD_DEVDAX_HIST ids); *out
 * gets the metadata. -errno with why in err.
 */
#define RPMEMD_GEN_LIVE_WRITER (1u << 31) /* never on the wire */
int rpmemd_pool_gen(struct rpmemd_pool *p, const struct rpmem_msg_gen *g,
		    struct rpmemd_meta *out, int *rolled, char *err,
		    size_t errlen);

/*
 * rpmemd_pool_changed -- unix seconds of the pool's last change: its
 * last completed sync, or its file's mtime if later (a promoted copy
 * written in place)
 */
uint64_t rpmemd_pool_changed(struct rpmemd_pool *p,
			     const struct rpmemd_meta *m);

/*
 * rpmemd_pool_write_begin -- the writer's WRITE is about to change the
 * pool: no cut until rpmemd_pool_write_end
 */
void rpmemd_pool_write_begin(struct rpmemd_pool *p);

/* rpmemd_pool_write_end -- the WRITE is applied (or failed) */
void rpmemd_pool_write_end(struct rpmemd_pool *p);

/*
 * rpmemd_pool_drained -- the writer's FLUSH or BARRIER was applied: a
 * drain boundary of its stream, where a cut asked for is made
 */
void rpmemd_pool_drained(struct rpmemd_pool *p);

/*
 * rpmemd_pool_cut -- a version of the live pool p as it is at the next
 * drain boundary of its writer (at once without a writer, or if the
 * writer sends no FLUSH or BARRIER within wait_ms: at a request boundary,
 * still a crash image): the open live journal, if any, kept as a version,
 * the generation + 1, and a new journal so that every block the stream
 * overwrites from then on is copied aside first. *gen: the generation
 * the cut image has. -EINVAL (not a live pool), -EXDEV (written over
 * RDMA), -EBUSY (a WRITE of the writer did not arrive within wait_ms),
 * -errno; why in err.
 */
int rpmemd_pool_cut(struct rpmemd_pool *p, unsigned wait_ms, uint64_t *gen,
		    char *err, size_t errlen);

#endif
