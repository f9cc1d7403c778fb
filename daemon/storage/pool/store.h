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
