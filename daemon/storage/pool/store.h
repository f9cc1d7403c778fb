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
 * A pool's cut_lock is history's and its undo_lock the journal's: each in
 * that layer's own state of the pool (in its folder, reached through its
 * keeper's slot), not in struct rpmemd_pool.
 *
 *   r->lock, or r->dax->lock   a region's pool create, remove, open, list,
 *                              and a pool's last close (region.h, devdax.h)
 *   cut_lock                   the writer, across each WRITE's application;
 *                              cut_cond waits on it (store_cut.c)
 *   undo_lock                  the journal (its undo, uq, swap); undo_cond
 *                              waits on it (store_undo.c, undo_queue.c,
 *                              store_swap.c; history through
 *                              rpmemd_journal_lock); taken with r->lock
 *                              held only at the last close
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
 * An open pool (pool_int.h has its fields, the storage's own): one
 * mapping per pool file however many sessions opened it; one writer at a
 * time, readers share. session/ sees it only through the calls below.
 */
struct rpmemd_pool;

/* what an open pool is, for the layers above the storage */
const char *rpmemd_pool_name(const struct rpmemd_pool *p);
uint64_t rpmemd_pool_size(const struct rpmemd_pool *p);
struct rpmemd_region *rpmemd_pool_region(const struct rpmemd_pool *p);
/* the mapping (valid while the opener holds its reference) */
uint8_t *rpmemd_pool_addr(const struct rpmemd_pool *p);
/* the pool file, open read-write; -1 for devdax */
int rpmemd_pool_fd(const struct rpmemd_pool *p);
/* the mapping is PMem (store granularity below page) */
int rpmemd_pool_is_pmem(const struct rpmemd_pool *p);
size_t rpmemd_pool_pagesize(const struct rpmemd_pool *p);
/* the session holding the write open, 0: none (read without a lock) */
uint32_t rpmemd_pool_writer_sid(const struct rpmemd_pool *p);
/* its block hashes (hcache.h), or NULL */
struct rpmemd_hcache *rpmemd_pool_hcache(const struct rpmemd_pool *p);

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
 * rpmemd_pool_shrunk -- the pool file is shorter than the pool now (it
 * was truncated behind rpmemd's back); 0 if unknown (devdax)
 */
int rpmemd_pool_shrunk(const struct rpmemd_pool *p);

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
 * rpmemd_pool_rdma_writer -- a writable RDMA exposure of p begins (+1) or
 * ends (-1): rpmemd cannot see its writes (no cut of a live pool, no
 * journal overlay while one is on)
 */
void rpmemd_pool_rdma_writer(struct rpmemd_pool *p, int delta);

/*
 * rpmemd_pools_open_count -- the pools open in the regions of rs, and how
 * many of them a writer holds
 */
void rpmemd_pools_open_count(struct rpmemd_regions *rs, unsigned *pools,
			     unsigned *writing);

/* rpmemd_pool_count -- account bytes written and flushes */
void rpmemd_pool_count(struct rpmemd_pool *p, uint64_t written,
		       uint64_t flushes);

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
