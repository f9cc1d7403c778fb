/* SPDX-License-Identifier: BSD-3-Clause */
/* mapcache.c -- the mappings of recently closed pool files, for reuse */
#include <fcntl.h>
#include <libpmem2.h>
#include <pthread.h>
#include <sys/stat.h>

#include "mapcache.h"

/*
 * The mapping cache: the mappings of a few recently closed pool files, so
 * that the next open of the same pool (the next sync or verify) finds its
 * pages already mapped instead of faulting in every page again. Keyed by
 * the file's device and inode: a cached mapping holds the file open, so
 * no other file can get that inode number while the entry exists. Entries
 * are dropped when the pool is removed, evicted least recently used, and
 * bounded in number and bytes.
 */
#define MAP_CACHE_MAX 8
#define MAP_CACHE_BYTES (32ull << 30)

static struct map_cache_entry {
	dev_t dev;
	ino_t ino;
	uint64_t size;
	struct pmem2_map *map; /* NULL = free slot */
	uint64_t used;
} map_cache[MAP_CACHE_MAX];
static pthread_mutex_t map_cache_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t map_cache_clock;

struct pmem2_map *rpmemd_map_cache_take(dev_t dev, ino_t ino, uint64_t size)
{
	struct pmem2_map *map = NULL;
	pthread_mutex_lock(&map_cache_lock);
	for (unsigned i = 0; i < MAP_CACHE_MAX; i++) {
		struct map_cache_entry *e = &map_cache[i];
		if (e->map && e->dev == dev && e->ino == ino) {
			if (e->size == size)
				map = e->map;
			else
				pmem2_map_delete(&e->map);
			e->map = NULL;
			break;
		}
	}
	pthread_mutex_unlock(&map_cache_lock);
	return map;
}

void rpmemd_map_cache_put(dev_t dev, ino_t ino, uint64_t size,
			  struct pmem2_map *map)
{
	struct pmem2_map *evict = NULL;
	uint64_t total = size;
	struct map_cache_entry *slot = NULL, *lru = NULL;

	if (size > MAP_CACHE_BYTES) {
		pmem2_map_delete(&map);
		return;
	}
	pthread_mutex_lock(&map_cache_lock);
	for (unsigned i = 0; i < MAP_CACHE_MAX; i++) {
		struct map_cache_entry *e = &map_cache[i];
		if (!e->map) {
			slot = slot ? slot : e;
			continue;
		}
		total += e->size;
		if (!lru || e->used < lru->used)
			lru = e;
	}
	if (!slot || total > MAP_CACHE_BYTES) {
		evict = lru->map;
		slot = lru;
	}
	*slot = (struct map_cache_entry){ dev, ino, size, map,
					  ++map_cache_clock };
	pthread_mutex_unlock(&map_cache_lock);
	if (evict)
		pmem2_map_delete(&evict);
}

void rpmemd_map_cache_drop(int dirfd, const char *name)
{
	struct stat st;
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW))
		return;
	struct pmem2_map *map = rpmemd_map_cache_take(
		st.st_dev, st.st_ino, (uint64_t)st.st_size);
	if (map)
		pmem2_map_delete(&map);
}
