/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pool_int.h -- the fields of an open pool: the storage's own (its three
 * layers), never session/'s, which sees the pool through store.h's calls.
 * The Makefile defines RPMEMD_STORAGE_INTERNAL for daemon/storage only.
 */
#ifndef RPMEMD_POOL_INT_H
#define RPMEMD_POOL_INT_H

#ifndef RPMEMD_STORAGE_INTERNAL
#error "pool_int.h is the storage's own: use store.h's calls"
#endif

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "store.h"

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
	struct rpmemd_room_pruned room[8];
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
#endif
