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

/* the most layers above the pool that keep state beside it (backend.h) */
#define RPMEMD_KEEPERS_MAX 4

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

	/* writable RDMA exposures of it (rpmemd cannot see their writes) */
	unsigned rdma_writers;

	/*
	 * what each layer above keeps of this pool (the journal's, history's
	 * state), in the slot its keeper was given (backend.h), of a type the
	 * pool layer never sees: made by the keeper's attach hook in
	 * rpmemd_store_new, let go by its detach hook in rpmemd_store_free
	 */
	void *kept[RPMEMD_KEEPERS_MAX];

	/* updated with atomics; kept between opens (region->stats) */
	uint64_t bytes_written;
	uint64_t flushes;
};
#endif
