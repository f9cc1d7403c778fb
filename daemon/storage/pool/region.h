/* SPDX-License-Identifier: BSD-3-Clause */
/* region.h -- the target's regions: directories that hold pools */
#ifndef RPMEMD_REGION_H
#define RPMEMD_REGION_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "proto.h"

struct rpmemd_backend_ops;
struct rpmemd_devdax;
struct rpmemd_pool;
struct rpmemd_regions;

/*
 * An open devdax device: its pool table and the lock that serializes
 * pool create, remove, open and list on it. Shared by the region objects
 * that name the device (a region renamed by a reload keeps the device
 * open while the old name still has open pools: it is locked with flock
 * and cannot be opened twice).
 */
struct rpmemd_dax {
	struct rpmemd_devdax *dd;
	pthread_mutex_t lock;
	unsigned refs; /* protected by set->lock */
};

/* counters a pool keeps between opens, for the daemon's lifetime */
struct rpmemd_pool_stats {
	struct rpmemd_pool_stats *next;
	char name[RPMEM_NAME_MAX + 1];
	uint64_t bytes_written;
	uint64_t flushes;
};

/*
 * A region is a directory (type dir, or fsdax on a -o dax mount) or a
 * device DAX (type devdax). In a directory, pool files live by name and
 * their metadata in its .rpmemd directory; on a device, a pool table at
 * its start carves it into pools (devdax.h). Regions are reference-counted: every open pool and every request in
 * progress holds one, so a region dropped from the configuration by a
 * reload stays usable until the last user lets it go.
 */
struct rpmemd_region {
	struct rpmemd_regions *set;
	struct rpmemd_region_cfg cfg; /* name, type, path, direct_pmem */
	const struct rpmemd_backend_ops *ops; /* by type (backend.h) */
	int dirfd;		      /* the region directory; -1 for devdax */
	int metafd;		      /* its .rpmemd directory; -1 for devdax */
	struct rpmemd_dax *dax;	      /* devdax only, else NULL */
	int undofd; /* devdax: its undo journals' directory, or -1: none */
	char undo_path[RPMEM_STR_MAX + 1]; /* that directory's path */
	uint32_t align;		      /* pool sizes are multiples of this */
	pthread_mutex_t lock; /* serializes pool create, remove, open, list
			       * (of a directory; dax->lock for a device) */
	pthread_mutex_t ver_lock; /* its version files (versions.c) */
	/*
	 * bytes the versions that the syncs under way will keep may take
	 * beyond the floor: each sync's, checked against versions_quota
	 * with the others' (store_undo.c's reserve lock)
	 */
	uint64_t ver_reserved;
	/* protected by set->lock */
	unsigned refs;
	int retired; /* no longer in the configuration */
	struct rpmemd_region *next; /* retired list */
	struct rpmemd_pool_stats *stats; /* of its pools, see store.c */
};

/* the set of regions and of the pools open in them */
struct rpmemd_regions {
	pthread_mutex_t lock;
	struct rpmemd_region **v; /* active, in configuration order */
	unsigned n;
	struct rpmemd_region *retired; /* still referenced */
	struct rpmemd_pool *open;      /* open pools, see store.c */
};

/* rpmemd_regions_new -- an empty set; fills *out */
int rpmemd_regions_new(struct rpmemd_regions **out);

/*
 * rpmemd_regions_delete -- close every region; no pool may be open and
 * no reference held.
 */
void rpmemd_regions_delete(struct rpmemd_regions **set);

/*
 * rpmemd_regions_apply -- make the active regions those of cfg: new ones
 * are opened, unchanged ones (same name, type, path, direct_pmem, undo_dir) are
 * kept, the others are retired and closed when their last reference goes.
 * A devdax region or one found by regions_auto that cannot be opened (a
 * device holding something else, in use, ...) is logged and left out:
 * the others are served. Otherwise all or nothing: if a new directory
 * region cannot be opened, nothing changes and -errno is returned with
 * the reason in err[errlen].
 */
int rpmemd_regions_apply(struct rpmemd_regions *set,
			 const struct rpmemd_config *cfg, char *err,
			 size_t errlen);

/*
 * rpmemd_regions_check -- region_check of cfg's regions without opening
 * them (rpmemd -n): a directory region's directory and its .rpmemd (if
 * there is one yet), a devdax region's undo_dir, each owned by rpmemd's
 * user and writable by nobody else. What it finds is logged, as errors
 * (region_check "strict": their number is returned) or as warnings
 * ("warn": 0 is returned).
 */
int rpmemd_regions_check(const struct rpmemd_config *cfg);

/* rpmemd_region_get -- a reference to the active region name, or -ENODEV */
int rpmemd_region_get(struct rpmemd_regions *set, const char *name,
		      struct rpmemd_region **out);
/* rpmemd_region_ref -- one more reference to a region already held */
void rpmemd_region_ref(struct rpmemd_region *r);
/* rpmemd_region_put -- drop a reference; closes a retired region */
void rpmemd_region_put(struct rpmemd_region **r);

/*
 * rpmemd_regions_get_all -- references to every active region in *out
 * (an array of *n; release with rpmemd_regions_put_all).
 */
int rpmemd_regions_get_all(struct rpmemd_regions *set,
			   struct rpmemd_region ***out, unsigned *n);
void rpmemd_regions_put_all(struct rpmemd_region ***v, unsigned n);

/* rpmemd_region_info -- name, type, path, size, free space, caps */
int rpmemd_region_info(struct rpmemd_region *r, struct rpmem_region_info *ri);

/* rpmemd_region_free_space -- bytes available to the daemon (devdax:
 * unreserved bytes of the device) */
int rpmemd_region_free_space(struct rpmemd_region *r, uint64_t *avail);

#endif
