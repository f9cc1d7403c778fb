/* SPDX-License-Identifier: BSD-3-Clause */
/* mapcache.h -- the mappings of recently closed pool files, for reuse */
#ifndef RPMEMD_MAPCACHE_H
#define RPMEMD_MAPCACHE_H

#include <stdint.h>
#include <sys/types.h>

struct pmem2_map;

/*
 * rpmemd_map_cache_take -- the cached mapping of file dev/ino of size
 * bytes, or NULL (one of another size is unmapped); the entry is removed
 */
struct pmem2_map *rpmemd_map_cache_take(dev_t dev, ino_t ino, uint64_t size);

/* rpmemd_map_cache_put -- keep map for a later open; may evict (and unmap) */
void rpmemd_map_cache_put(dev_t dev, ino_t ino, uint64_t size,
			  struct pmem2_map *map);

/* rpmemd_map_cache_drop -- forget the mapping of file name in dirfd, if any */
void rpmemd_map_cache_drop(int dirfd, const char *name);

#endif
