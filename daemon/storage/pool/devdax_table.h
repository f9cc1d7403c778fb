/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * devdax_table.h -- the pool table on a devdax device, for devdax.c: the
 * device object both files share, the records in force (one per slot
 * pair), loading or formatting the table, writing a record, and the
 * allocation derived from the records. The on-media layout and its
 * crash-consistency argument are in devdax_table.c.
 */
#ifndef RPMEMD_DEVDAX_TABLE_H
#define RPMEMD_DEVDAX_TABLE_H

#include <limits.h>
#include <pthread.h>
#include <stdint.h>

#include <libpmem2.h>

#include "devdax.h"
#include "meta.h"
#include "proto.h"

/* a decoded slot */
struct dd_rec {
	uint64_t seq;
	int in_use;
	char name[RPMEM_NAME_MAX + 1];
	uint64_t offset;
	struct rpmemd_meta meta;
};

/* a slot pair: cur = slot (0/1) holding the record in force, -1 none */
struct dd_entry {
	int cur;
	struct dd_rec rec;
};

/* the device: its mapping (devdax.c) and its table (devdax_table.c) */
struct rpmemd_devdax {
	char path[PATH_MAX];
	int fd;
	struct pmem2_source *src;
	struct pmem2_map *map;
	uint8_t *base;
	uint64_t map_size;
	uint64_t src_align;
	int granularity;
	pmem2_persist_fn persist;
	pmem2_memcpy_fn memcpy_fn;
	pmem2_memset_fn memset_fn;

	uint8_t uuid[16];
	uint64_t dev_size;
	uint64_t align;
	uint64_t table_size;
	uint32_t max_pools;
	uint64_t seed;

	struct dd_entry *ent; /* max_pools */
	uint32_t npools;
	pthread_mutex_t lock;
};

/* dd_ent_used -- the pair holds a pool */
static inline int dd_ent_used(const struct dd_entry *e)
{
	return e->cur >= 0 && e->rec.in_use;
}

/* dd_round_up -- v rounded up to a (a power of two); 0 on overflow */
uint64_t dd_round_up(uint64_t v, uint64_t a);
/* dd_rec_extent -- the bytes a record reserves: its size, aligned */
uint64_t dd_rec_extent(const struct rpmemd_devdax *dd,
		       const struct dd_rec *r);

/*
 * dd_table_attach -- the table of the mapped device: load it, or format
 * it as opts->format allows; fills dd->ent and dd->npools. The errors of
 * rpmemd_devdax_open.
 */
int dd_table_attach(struct rpmemd_devdax *dd,
		    const struct rpmemd_devdax_opts *opts);

/* dd_slot_put -- write r as the next record of pair i (the other slot) */
void dd_slot_put(struct rpmemd_devdax *dd, uint32_t i, struct dd_rec *r);
/* dd_slot_erase -- zero slot s (0/1) of pair i */
void dd_slot_erase(struct rpmemd_devdax *dd, uint32_t i, int s);

/* dd_cmp_off, dd_cmp_name -- qsort orders of struct dd_entry pointers */
int dd_cmp_off(const void *a, const void *b);
int dd_cmp_name(const void *a, const void *b);
/* dd_used_sorted -- the pools in a new array sorted by cmp; NULL if none */
int dd_used_sorted(struct rpmemd_devdax *dd,
		   int (*cmp)(const void *, const void *),
		   struct dd_entry ***out);

/* dd_space -- unreserved bytes and the largest free extent */
int dd_space(struct rpmemd_devdax *dd, uint64_t *free_b, uint64_t *largest);
/* dd_alloc -- first fit of an extent of ext bytes; -ENOSPC */
int dd_alloc(struct rpmemd_devdax *dd, uint64_t ext, uint64_t *off);

#endif
