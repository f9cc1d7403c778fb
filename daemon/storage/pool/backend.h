/* SPDX-License-Identifier: BSD-3-Clause */
/* backend.h -- the storage interface that file and devdax regions implement */
#ifndef RPMEMD_BACKEND_H
#define RPMEMD_BACKEND_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "pool_int.h"
#include "store.h"

/*
 * Everything above this interface (the open table, statistics, state
 * changes, hash-cache commits, listing: store.c) is backend-agnostic. A
 * region gets its ops by type when it is opened (region.c): dir and
 * fsdax regions are pool files plus .rpmemd/ metadata (backend_file.c),
 * a devdax region is a pool table on the device (backend_devdax.c).
 * Names and sizes are validated before an op is called.
 */
struct rpmemd_backend_ops {
	const char *name; /* "file", "devdax" */
	/* a new pool of size bytes, state empty; the reason in err */
	int (*create)(struct rpmemd_region *r, const char *name,
		      uint64_t size, char *err, size_t errlen);
	/* remove a pool not open (and not syncing unless force) */
	int (*remove)(struct rpmemd_region *r, const char *name, int force,
		      char *err, size_t errlen);
	/* open (or share the open of) a pool; fills *out */
	int (*open)(struct rpmemd_region *r, const char *name, uint8_t mode,
		    uint32_t sid, const char *holder, struct rpmemd_pool **out,
		    char *err, size_t errlen);
	/* the open pool name of r, or NULL; set->lock held */
	struct rpmemd_pool *(*find_open)(struct rpmemd_region *r,
					 const char *name);
	/* release what open took (mapping, file) of a pool nobody has open */
	void (*release)(struct rpmemd_pool *p);
	/* make [off, off + len) of the mapping durable; len > 0 */
	int (*persist)(struct rpmemd_pool *p, uint64_t off, uint64_t len);
	/*
	 * persist *m, the pool's metadata with state (and source, if not
	 * empty) applied; *m gets the record as written; meta_lock held
	 */
	int (*write_meta)(struct rpmemd_pool *p, uint8_t state,
			  const char *source, struct rpmemd_meta *m);
	/*
	 * the pool file's stat now, for its hash cache (only a pool with
	 * one asks); -ESTALE if the name is another file now
	 */
	int (*stat)(struct rpmemd_pool *p, struct stat *st);
	/* append the first max pools after `after`, sorted (store.h) */
	int (*list_page)(struct rpmemd_region *r, const char *after,
			 uint32_t max, struct rpmem_pool_info **v,
			 uint32_t *n);
	/* the bytes pools can use in all (*size) and free (*avail) */
	int (*space)(struct rpmemd_region *r, uint64_t *size,
		     uint64_t *avail);
	/*
	 * the directory (a file system) that holds the pools' undo
	 * journals (undo.h): .rpmemd of a dir/fsdax region, the undo_dir
	 * of a devdax one; or -ENOTSUP: syncs into the region are not
	 * atomic (NULL: the same)
	 */
	int (*undo_dir)(const struct rpmemd_region *r);
};

extern const struct rpmemd_backend_ops rpmemd_backend_file;
extern const struct rpmemd_backend_ops rpmemd_backend_devdax;

/* what the store gives its backends (store.c) */

/* rpmemd_store_new -- a pool object of region r, not yet in the open table */
int rpmemd_store_new(struct rpmemd_region *r, const char *name,
		     const struct rpmemd_meta *m, struct rpmemd_pool **out,
		     char *err, size_t errlen);
/* rpmemd_store_insert -- put fresh pool np in the open table; set->lock */
void rpmemd_store_insert(struct rpmemd_pool *np);
/* rpmemd_store_attach -- add an open to p; set->lock held */
int rpmemd_store_attach(struct rpmemd_pool *p, uint8_t mode, uint32_t sid,
			const char *holder, char *err, size_t errlen);
/* rpmemd_store_free -- unmap and release a pool nobody has open */
void rpmemd_store_free(struct rpmemd_pool *p);
/*
 * rpmemd_store_busy -- -EBUSY with the reason in err if pool name of r is
 * open (a session may be writing to it), else 0
 */
int rpmemd_store_busy(struct rpmemd_region *r, const char *name, char *err,
		      size_t errlen);
/* rpmemd_store_syncing -- -EBUSY unless forced if the pool is in a sync */
int rpmemd_store_syncing(const struct rpmemd_meta *m, const char *name,
			 int force, char *err, size_t errlen);
/* rpmemd_store_stats_drop -- forget the counters of a removed or new pool */
void rpmemd_store_stats_drop(struct rpmemd_region *r, const char *name);
/* rpmemd_store_info -- fill one entry from the metadata and the open table */
void rpmemd_store_info(struct rpmemd_region *r, const char *name,
		       const struct rpmemd_meta *m, struct rpmem_pool_info *pi);

/* rpmemd_store_hc_commit -- make the hash cache clean (logs failures) */
void rpmemd_store_hc_commit(struct rpmemd_pool *p);


/*
 * What a layer above the pool keeps beside a pool (the journal: its undo
 * journal, a dense sync's files; history: versions, scrub records), told
 * of the pool's life by the pool layer, which never calls it by name.
 * Each layer registers one at startup (rpmemd_store_add_keeper); the
 * pool layer calls them in that order. A hook may be NULL. A layer's own
 * state of a pool lives in the pool's slot its registration gave it
 * (p->kept[slot], pool_int.h), of a type only that layer knows.
 */
struct rpmemd_keeper {
	/*
	 * attach -- p is a new pool object (rpmemd_store_new), no other
	 * hook called yet: the layer's state of it into *state (p->kept[]);
	 * -errno fails the open (the layers attached before are detached)
	 */
	int (*attach)(struct rpmemd_pool *p, void **state);
	/* detach -- p is freed, after every freed hook: its state goes */
	void (*detach)(void *state);
	/*
	 * found -- pool name (metadata m) of file region r is opened and not
	 * open yet: what a crash left of the layer's files is settled;
	 * r->lock held
	 */
	void (*found)(struct rpmemd_region *r, const char *name,
		      const struct rpmemd_meta *m);
	/* opened -- p is a new open pool, not in the open table yet */
	void (*opened)(struct rpmemd_pool *p);
	/* shared -- another open shares p's mapping (set->lock not held) */
	void (*shared)(struct rpmemd_pool *p);
	/* closing -- the last close of p; r->lock held */
	void (*closing)(struct rpmemd_pool *p);
	/* freed -- p is freed: the layer lets go of what it holds of p */
	void (*freed)(struct rpmemd_pool *p);
	/*
	 * removed -- pool name of r was removed (no metadata any more): the
	 * layer's files of it go too; r->lock (dax->lock) held
	 */
	void (*removed)(struct rpmemd_region *r, const char *name);
	/* info -- the layer's part of pool name's LIST entry pi */
	void (*info)(struct rpmemd_region *r, const char *name,
		     const struct rpmemd_meta *m, struct rpmem_pool_info *pi);
	/* listed -- its part of the n LIST entries v of r (sorted by name) */
	void (*listed)(struct rpmemd_region *r, struct rpmem_pool_info *v,
		       uint32_t n);
};

/*
 * rpmemd_store_add_keeper -- register k (static) once, before pools open:
 * its slot in every pool's kept[] (the same again for the same k), or -1
 * if RPMEMD_KEEPERS_MAX are registered
 */
int rpmemd_store_add_keeper(const struct rpmemd_keeper *k);

/* the keepers' hooks, in order of registration (store.c) */
void rpmemd_keepers_found(struct rpmemd_region *r, const char *name,
			  const struct rpmemd_meta *m);
void rpmemd_keepers_opened(struct rpmemd_pool *p);
void rpmemd_keepers_shared(struct rpmemd_pool *p);
void rpmemd_keepers_removed(struct rpmemd_region *r, const char *name);
void rpmemd_keepers_info(struct rpmemd_region *r, const char *name,
			 const struct rpmemd_meta *m,
			 struct rpmem_pool_info *pi);
void rpmemd_keepers_listed(struct rpmemd_region *r, struct rpmem_pool_info *v,
			   uint32_t n);

#endif
