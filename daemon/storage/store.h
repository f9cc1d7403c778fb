/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * store.h -- the pool store: pools in a region: create, remove, list,
 * shared open mappings
 */
#ifndef RPMEMD_STORE_H
#define RPMEMD_STORE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "hcache.h"
#include "meta.h"
#include "proto.h"
#include "region.h"

struct pmem2_map;

/*
 * The storage's lock order, the one place it is written: a thread holding
 * a lock takes only locks further down this list (never one above it).
 *
 *   r->lock, or r->dax->lock   a region's pool create, remove, open, list,
 *                              and a pool's last close (region.h, devdax.h)
 *   p->cut_lock                the writer, across each WRITE's application;
 *                              cut_cond waits on it (store_cut.c)
 *   p->undo_lock               the journal (p->undo, uq, swap); undo_cond
 *                              waits on it (store_undo.c, undo_queue.c,
 *                              store_swap.c); taken with r->lock held only
 *                              at the last close
 *   p->meta_lock               p->meta and its file
 *   reserve_lock               versions_quota's reservations (store_undo.c)
 *   r->ver_lock                a region's version files (versions*.c): the
 *                              journal's reclaim callback and a commit's
 *                              keep take it under undo_lock and meta_lock
 *   vc_reg.lock, then a chain's lk   open chains (versions_chain.c)
 *
 * Leaves, under which nothing is taken: set->lock (the open table, refs,
 * readers, writer: region.h), hc->lock (hcache.c), a devdax pool table's
 * lock (devdax.c), the map cache's. rpmemd_pool_get_meta takes meta_lock:
 * never call it with meta_lock or a lock below it held.
 */

/*
 * An open pool: one mapping per pool file however many sessions opened
 * it (a devdax pool is a range of the device's mapping: no mapping of
 * its own); one writer at a time, readers share. The mapping stays valid
 * while the opener holds its reference, so I/O needs no lock. Whatever
 * the region type, rpmemd_pool_persist makes a range durable.
 */
struct rpmemd_pool {
	struct rpmemd_region *region; /* a reference */
	char name[RPMEM_NAME_MAX + 1];
	dev_t dev; /* identity of the pool file in the open table */
	ino_t ino;
	struct rpmemd_dax *dax; /* devdax: identity is (dax, name) */
	struct pmem2_map *map;	/* NULL for devdax */
	int fd; /* the pool file, open read-write; -1 for devdax */
	uint8_t *addr;
	uint64_t size;
	int is_pmem; /* the mapping is PMem (store granularity below page) */
	int in_memory; /* the file lives in tmpfs or ramfs: no writeback */
	void (*persist)(const void *ptr, size_t size); /* files; NULL devdax */
	size_t pagesize;

	pthread_mutex_t meta_lock; /* meta, and its file */
	struct rpmemd_meta meta;

	/* protected by region->set->lock */
	unsigned refs;
	uint32_t writer_sid; /* session holding the write open, 0 = none */
	char writer[RPMEM_STR_MAX + 1];
	unsigned readers;
	struct rpmemd_pool *next;

	/* the 64 KiB block hashes (hcache.h); NULL: none (devdax, error) */
	struct rpmemd_hcache *hc;

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
	/* writable RDMA exposures of it (rpmemd cannot see their writes) */
	unsigned rdma_writers;

	/*
	 * versions pruned for the room of this pool's journals
	 * (versions_full = "prune"), not yet reported to its writer
	 * (rpmemd_versions_take_room); under region->ver_lock
	 */
	struct rpmemd_room_pruned {
		char pool[RPMEM_NAME_MAX + 1];
		uint64_t gen;
	} room[8];
	unsigned nroom, room_lost;
	/*
	 * bytes its sync under way reserves in region->ver_reserved for the
	 * version its commit keeps (store_undo.c's reserve lock)
	 */
	uint64_t ver_reserved;

	/* updated with atomics; kept between opens (region->stats) */
	uint64_t bytes_written;
	uint64_t flushes;
};

/*
 * rpmemd_pool_create -- a pool file of exactly size bytes (allocated, so a
 * full region fails here, not on a later write; in tmpfs only checked
 * against the free space, see allocate in backend_file.c), then its
 * metadata (state empty); in a devdax region, a zeroed extent of the
 * device and an entry of its pool table. A pool file without metadata (a
 * crash during create or remove) is invisible and reused if it is
 * rpmemd's own (a regular file, one link, our owner); another one (a hard
 * link, say) is unlinked and a new file created in its place, so no file
 * outside the region is ever truncated or written. Errors: -EINVAL (name,
 * size), -EEXIST, -ENOSPC, -errno; the reason in err[errlen].
 */
int rpmemd_pool_create(struct rpmemd_region *r, const char *name,
		       uint64_t size, char *err, size_t errlen);

/*
 * rpmemd_pool_remove -- metadata first, then the file. An open pool is
 * never removed (-EBUSY): a session may be writing to its mapping. A
 * syncing pool (an interrupted or running sync; a resume is cheap) is
 * removed only with force; force overrides nothing else.
 */
int rpmemd_pool_remove(struct rpmemd_region *r, const char *name, int force,
		       char *err, size_t errlen);

/*
 * rpmemd_pool_open -- open pool name in mode (RPMEM_OPEN_RO/RW) for
 * session sid, described as holder in busy errors; fills *out. -ENOENT,
 * -EBUSY (another writer, named in err), -EIO (mapping, metadata).
 */
int rpmemd_pool_open(struct rpmemd_region *r, const char *name, uint8_t mode,
		     uint32_t sid, const char *holder,
		     struct rpmemd_pool **out, char *err, size_t errlen);

/* rpmemd_pool_close -- drop an open; the last one unmaps */
void rpmemd_pool_close(struct rpmemd_pool **pool, uint8_t mode, uint32_t sid);

/*
 * rpmemd_pool_persist -- make [off, off + len) persistent: CPU cache
 * flush on PMem (fsdax files, devdax), msync otherwise. The range must
 * be valid.
 */
int rpmemd_pool_persist(struct rpmemd_pool *p, uint64_t off, uint64_t len);
/*
 * rpmemd_pool_persist_guarded -- rpmemd_pool_persist under rpmem_guard_run:
 * a cache flush of poisoned PMem is -EHWPOISON (guard.h), not a SIGBUS
 */
int rpmemd_pool_persist_guarded(struct rpmemd_pool *p, uint64_t off,
				uint64_t len);

/*
 * rpmemd_pool_sparse -- the pool file (tmpfs) has pages not allocated yet
 * (created sparse, its first mirror cut short): a write through the
 * mapping could fault there on a full region (req_write writes through
 * the file instead)
 */
int rpmemd_pool_sparse(const struct rpmemd_pool *p);
/*
 * rpmemd_pool_swapping -- a dense sync is being written into a new file
 * (store_swap.c): no page of the file the pool maps was written yet but
 * by this sync
 */
int rpmemd_pool_swapping(const struct rpmemd_pool *p);

/*
 * rpmemd_pool_shrunk -- the pool file is shorter than the pool now (it
 * was truncated behind rpmemd's back); 0 if unknown (devdax)
 */
int rpmemd_pool_shrunk(const struct rpmemd_pool *p);

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
 * rpmemd_pool_check_file -- before hashes are taken from the cache: the
 * pool file's stat still matches the cache's record (else the cache is
 * dropped: the file changed behind rpmemd's back)
 */
void rpmemd_pool_check_file(struct rpmemd_pool *p);

/* rpmemd_pool_get_meta -- a copy of the open pool's metadata */
void rpmemd_pool_get_meta(struct rpmemd_pool *p, struct rpmemd_meta *m);

/*
 * rpmemd_pool_state -- the open pool's state (RPMEM_POOL_*). Its data may
 * change only while it is RPMEM_POOL_SYNCING: WRITE and FLUSH (and GPSPM
 * flushes) of a pool in another state are refused.
 */
uint8_t rpmemd_pool_state(struct rpmemd_pool *p);

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
 * rpmemd_pool_preserve_async -- a TCP writer's PRESERVE: the ranges are
 * queued for the pool's journal thread and the call returns at once; a
 * WRITE of them waits in rpmemd_pool_preserve until they are durable in
 * the journal (a queue that failed leaves them to the WRITE)
 */
int rpmemd_pool_preserve_async(struct rpmemd_pool *p,
			       const struct rpmem_preserve_range *v,
			       uint32_t n);

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

/* rpmemd_pool_count -- account bytes written and flushes */
static inline void rpmemd_pool_count(struct rpmemd_pool *p, uint64_t written,
				     uint64_t flushes)
{
	__atomic_add_fetch(&p->bytes_written, written, __ATOMIC_RELAXED);
	__atomic_add_fetch(&p->flushes, flushes, __ATOMIC_RELAXED);
}

/*
 * rpmemd_pool_list -- append the pools of region r, sorted by name, to
 * the array *v of *n entries (grown with realloc; the caller frees it).
 */
int rpmemd_pool_list(struct rpmemd_region *r, struct rpmem_pool_info **v,
		     uint32_t *n);

/*
 * rpmemd_pool_list_page -- as rpmemd_pool_list, but only the first max
 * pools whose names sort after `after` ("" = from the first); the
 * metadata of the others is not read
 */
int rpmemd_pool_list_page(struct rpmemd_region *r, const char *after,
			  uint32_t max, struct rpmem_pool_info **v,
			  uint32_t *n);

#endif
