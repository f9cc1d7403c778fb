/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * journal.h -- the journal layer of the storage (undo.c, store_undo.c,
 * undo_queue.c, store_swap.c, journal.c): atomic syncs, their undo
 * journals and dense syncs into a new file, on the pool layer (store.h).
 * What it asks of the history layer above it (versions, scrub records)
 * that layer registers (rpmemd_journal_set_history): the journal never
 * calls up by name (docs/ARCHITECTURE.md, "The storage layers")
 */
#ifndef RPMEMD_JOURNAL_H
#define RPMEMD_JOURNAL_H

#include <stddef.h>
#include <stdint.h>

#include "store.h"

struct rpmemd_undo_queue;

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

/*
 * rpmemd_journal_init -- register what the journal keeps beside a pool
 * with the pool layer (its keeper, backend.h); once, before pools open
 */
void rpmemd_journal_init(void);

/* rpmemd_journal_reclaim -- h->reclaim of the registered history */
int rpmemd_journal_reclaim(struct rpmemd_pool *p);

/*
 * The journal's state of a pool is its own (journal_int.h); what history
 * needs of it: its lock (undo_lock, store.h's order), and under it the
 * open journal (NULL: none) and whether a dense sync into a new file
 * is under way
 */
void rpmemd_journal_lock(struct rpmemd_pool *p);
void rpmemd_journal_unlock(struct rpmemd_pool *p);
struct rpmemd_undo *rpmemd_journal_undo(const struct rpmemd_pool *p);
int rpmemd_journal_swap(const struct rpmemd_pool *p);
/*
 * rpmemd_store_undo_renew -- a cut's new journal at the pool's (new)
 * generation in place of the open one, closed (not removed: kept as a
 * version first) and its reservation released; undo_lock and meta_lock
 * held. 0 or -errno (then no journal is open).
 */
int rpmemd_store_undo_renew(struct rpmemd_pool *p);

/* --- what session/ calls ------------------------------------------- */

/*
 * rpmemd_pool_swapping -- a dense sync is being written into a new file
 * (store_swap.c): no page of the file the pool maps was written yet but
 * by this sync
 */
int rpmemd_pool_swapping(const struct rpmemd_pool *p);

/*
 * rpmemd_store_swap_release -- after the commit's reply (and its scrub
 * record): the previous image it kept open (its last reference: it has no
 * name any more) closed, which frees its pages, by a thread of its own,
 * or here if wait
 */
void rpmemd_store_swap_release(struct rpmemd_pool *p, int wait);

/*
 * rpmemd_pool_set_state -- apply a state transition (rpmemd_meta_transition)
 * and record source (if not empty); persisted before it returns. *out
 * gets the new metadata. change: the bytes a sync that starts will write
 * (RPMEMD_CHANGE_UNDECLARED: it did not say; the pool's size bounds it),
 * for the room of its undo journal (rpmemd_store_undo_begin);
 * may_swap: the writer is a TCP session, so a dense sync may be written
 * into a new file (rpmemd_store_swap_begin).
 */
int rpmemd_pool_set_state(struct rpmemd_pool *p, uint8_t state,
			  const char *source, uint64_t change, int may_swap,
			  struct rpmemd_meta *out, char *err, size_t errlen);

/* a sync that said nothing of what it will write (an older client) */
#define RPMEMD_CHANGE_UNDECLARED UINT64_MAX

/*
 * rpmemd_pool_preserve -- before the n ranges of v are overwritten, keep
 * their blocks' contents (those not kept yet) in the pool's undo journal,
 * durably; 0 at once without a journal (no sync of a consistent pool in
 * progress). -ENOSPC (a full region) or another -errno: nothing may be
 * written (the pool stays recoverable).
 */
int rpmemd_pool_preserve(struct rpmemd_pool *p,
			 const struct rpmem_preserve_range *v, uint32_t n);

/*
 * rpmemd_pool_rollback -- an interrupted sync undone: every journaled
 * block restored (its hash-cache entries invalidated), the pool
 * consistent again at the journal's generation, the journal removed. The
 * writer's call. -EINVAL (and why in err) without a journal.
 */
int rpmemd_pool_rollback(struct rpmemd_pool *p, struct rpmemd_meta *out,
			 char *err, size_t errlen);

/*
 * rpmemd_pool_preserve_async -- a TCP writer's PRESERVE: the ranges are
 * queued for the pool's journal thread and the call returns at once; a
 * WRITE of them waits in rpmemd_pool_preserve until they are durable in
 * the journal (a queue that failed leaves them to the WRITE)
 */
int rpmemd_pool_preserve_async(struct rpmemd_pool *p,
			       const struct rpmem_preserve_range *v,
			       uint32_t n);

/* rpmemd_source_live -- source names a live replica (ends " (live)") */
int rpmemd_source_live(const char *source);

/* rpmemd_store_undo_dir -- the region's journal directory, or -ENOTSUP */
int rpmemd_store_undo_dir(const struct rpmemd_region *r);

/*
 * rpmemd_pool_read_prepare -- before p's data is read (READ, HASH, HASHV,
 * another open): a dense sync written into a new file (store_swap.c) has
 * the blocks it did not write yet copied there from the previous image,
 * so the mapping reads as the pool (the mix of a sync under way); 0 at
 * once otherwise
 */
int rpmemd_pool_read_prepare(struct rpmemd_pool *p);

/* --- between the journal's files ------------------------------------- */

/* store_undo.c */

/*
 * rpmemd_store_undo_open -- at the first open of a pool: its journal of an
 * interrupted sync (kept if bound to its generation and it is syncing),
 * a stale one removed
 */
void rpmemd_store_undo_open(struct rpmemd_pool *p);
/*
 * rpmemd_store_undo_begin -- a sync marks consistent pool p syncing (with
 * source): start its journal, bound to the current generation (not for a
 * live replica's " (live)" source); 0 or -errno with err filled. A sync
 * that says it will write change bytes (0: not said) is refused up front
 * (-ENOSPC) when the region cannot hold their journal even with all its
 * versions pruned; the oldest versions are pruned while they are in the
 * way.
 */
int rpmemd_store_undo_begin(struct rpmemd_pool *p, const char *source,
			    uint64_t change,
			    char *err, size_t errlen);
/* --- store_swap.c: a dense sync written into a new file ---------------- */

/*
 * rpmemd_store_swap_begin -- right after a sync of change bytes started p's
 * journal (empty): if the sync is dense (at least half the pool), the
 * region a dir region without versions, the writer p's only opener and
 * the region has room for a second copy, the pool's mapping now maps a
 * new file <region>/.rpmemd/<pool>.next (p->fd too) and the pool file is
 * left as the previous image; else nothing (the journal is used).
 * undo_lock and meta_lock held.
 */
void rpmemd_store_swap_begin(struct rpmemd_pool *p, uint64_t change);
/*
 * rpmemd_store_swap_prepare -- before a WRITE of the n ranges: blocks they
 * cover in part get the rest from the previous image; all are marked as
 * held by the new file. undo_lock held, the journal's swap set.
 */
int rpmemd_store_swap_prepare(struct rpmemd_pool *p,
			      const struct rpmem_preserve_range *v, uint32_t n);
/*
 * rpmemd_store_swap_commit -- before the metadata says N + 1: the new file
 * complete (filled), durable and renamed <pool>.done; -errno (err filled)
 * leaves the sync as it was. undo_lock and meta_lock held.
 */
int rpmemd_store_swap_commit(struct rpmemd_pool *p, char *err, size_t errlen);
/* rpmemd_store_swap_uncommit -- the metadata write failed: .done is .next */
void rpmemd_store_swap_uncommit(struct rpmemd_pool *p);
/*
 * rpmemd_store_swap_done -- the metadata says N + 1: <pool>.done renamed
 * over the pool file, which p now is (fd, dev and inode)
 */
void rpmemd_store_swap_done(struct rpmemd_pool *p);
/*
 * rpmemd_store_swap_abort -- a rollback, or the last close of a pool whose
 * dense sync did not commit: the pool file mapped again, the written
 * blocks' hashes forgotten, the new file removed. undo_lock held.
 */
int rpmemd_store_swap_abort(struct rpmemd_pool *p);
/*
 * rpmemd_store_swap_shared -- p's dense sync writes a new file and other
 * sessions have p open (their mapping, an RDMA reader's registration, is
 * of the new file: a rollback would leave them reading it)
 */
int rpmemd_store_swap_shared(struct rpmemd_pool *p);
/*
 * rpmemd_store_swap_recover -- before a pool that is not open is opened
 * (metadata m): a <pool>.next is removed (a sync cut short: the pool file
 * is the previous image); a <pool>.done is renamed over the pool file if
 * m committed it (consistent), else removed. r->lock held.
 */
void rpmemd_store_swap_recover(struct rpmemd_region *r, const char *name,
			       const struct rpmemd_meta *m);

/*
 * rpmemd_store_undo_keep -- the commit (p's metadata before it: was): the
 * journal kept as a version if the region keeps versions, else removed
 */
void rpmemd_store_undo_keep(struct rpmemd_pool *p,
			    const struct rpmemd_meta *was);
/* rpmemd_store_undo_end -- the commit: the journal closed and removed */
void rpmemd_store_undo_end(struct rpmemd_pool *p);
/*
 * rpmemd_store_undo_unreserve -- give back what p's sync reserved of the
 * region's versions_quota (its journal ended, or the pool is closed)
 */
void rpmemd_store_undo_unreserve(struct rpmemd_pool *p);
/* undo_queue.c: the journal thread (undo_lock held unless said) */

/* rpmemd_undo_queue_holds -- [off, off + len) is queued or in flight */
int rpmemd_undo_queue_holds(const struct rpmemd_undo_queue *q, uint64_t off,
			    uint64_t len);
/*
 * rpmemd_undo_queue_err -- an fdatasync of the thread failed: journaled
 * blocks may not be durable, no write may rely on them
 */
int rpmemd_undo_queue_err(const struct rpmemd_undo_queue *q);
/* rpmemd_undo_queue_drain -- drop what is queued, wait for the chunk in flight */
void rpmemd_undo_queue_drain(struct rpmemd_pool *p);
/* rpmemd_undo_queue_stop -- end the thread (undo_lock not held) */
void rpmemd_undo_queue_stop(struct rpmemd_pool *p);

/* rpmemd_store_undo_info -- LIST: a pending journal's generation, size */
void rpmemd_store_undo_info(struct rpmemd_region *r, const char *name,
			    const struct rpmemd_meta *m,
			    struct rpmem_pool_info *pi);

#endif
