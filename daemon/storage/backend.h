/* SPDX-License-Identifier: BSD-3-Clause */
/* backend.h -- the storage interface that file and devdax regions implement */
#ifndef RPMEMD_BACKEND_H
#define RPMEMD_BACKEND_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

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

/* store_undo.c */

/*
 * rpmemd_store_undo_open -- at the first open of a pool: its journal of an
 * interrupted sync (kept if bound to its generation and it is syncing),
 * a stale one removed
 */
void rpmemd_store_undo_open(struct rpmemd_pool *p);
/*
 * rpmemd_store_undo_begin -- a sync marks consistent pool p syncing (with
 * source): start its journal, bound to the current generation (not for a
 * live replica's " (live)" source); 0 or -errno with err filled. A sync
 * that says it will write change bytes (0: not said) is refused up front
 * (-ENOSPC) when the region cannot hold their journal even with all its
 * versions pruned; the oldest versions are pruned while they are in the
 * way.
 */
int rpmemd_store_undo_begin(struct rpmemd_pool *p, const char *source,
			    uint64_t change,
			    char *err, size_t errlen);
/* --- store_swap.c: a dense sync written into a new file ---------------- */

/*
 * rpmemd_store_swap_begin -- right after a sync of change bytes started p's
 * journal (empty): if the sync is dense (at least half the pool), the
 * region a dir region without versions, the writer p's only opener and
 * the region has room for a second copy, the pool's mapping now maps a
 * new file <region>/.rpmemd/<pool>.next (p->fd too) and the pool file is
 * left as the previous image; else nothing (the journal is used).
 * undo_lock and meta_lock held.
 */
void rpmemd_store_swap_begin(struct rpmemd_pool *p, uint64_t change);
/*
 * rpmemd_store_swap_prepare -- before a WRITE of the n ranges: blocks they
 * cover in part get the rest from the previous image; all are marked as
 * held by the new file. undo_lock held, p->swap set.
 */
int rpmemd_store_swap_prepare(struct rpmemd_pool *p,
			      const struct rpmem_preserve_range *v, uint32_t n);
/*
 * rpmemd_store_swap_commit -- before the metadata says N + 1: the new file
 * complete (filled), durable and renamed <pool>.done; -errno (err filled)
 * leaves the sync as it was. undo_lock and meta_lock held.
 */
int rpmemd_store_swap_commit(struct rpmemd_pool *p, char *err, size_t errlen);
/* rpmemd_store_swap_uncommit -- the metadata write failed: .done is .next */
void rpmemd_store_swap_uncommit(struct rpmemd_pool *p);
/*
 * rpmemd_store_swap_done -- the metadata says N + 1: <pool>.done renamed
 * over the pool file, which p now is (fd, dev and inode)
 */
void rpmemd_store_swap_done(struct rpmemd_pool *p);
/*
 * rpmemd_store_swap_abort -- a rollback, or the last close of a pool whose
 * dense sync did not commit: the pool file mapped again, the written
 * blocks' hashes forgotten, the new file removed. undo_lock held.
 */
int rpmemd_store_swap_abort(struct rpmemd_pool *p);
/*
 * rpmemd_store_swap_shared -- p's dense sync writes a new file and other
 * sessions have p open (their mapping, an RDMA reader's registration, is
 * of the new file: a rollback would leave them reading it)
 */
int rpmemd_store_swap_shared(struct rpmemd_pool *p);
/*
 * rpmemd_store_swap_recover -- before a pool that is not open is opened
 * (metadata m): a <pool>.next is removed (a sync cut short: the pool file
 * is the previous image); a <pool>.done is renamed over the pool file if
 * m committed it (consistent), else removed. r->lock held.
 */
void rpmemd_store_swap_recover(struct rpmemd_region *r, const char *name,
			       const struct rpmemd_meta *m);

/*
 * rpmemd_store_undo_keep -- the commit (p's metadata before it: was): the
 * journal kept as a version if the region keeps versions, else removed
 */
void rpmemd_store_undo_keep(struct rpmemd_pool *p,
			    const struct rpmemd_meta *was);
/* rpmemd_store_undo_end -- the commit: the journal closed and removed */
void rpmemd_store_undo_end(struct rpmemd_pool *p);
/*
 * rpmemd_store_undo_unreserve -- give back what p's sync reserved of the
 * region's versions_quota (its journal ended, or the pool is closed)
 */
void rpmemd_store_undo_unreserve(struct rpmemd_pool *p);
/* undo_queue.c: the journal thread (undo_lock held unless said) */

/* rpmemd_undo_queue_holds -- [off, off + len) is queued or in flight */
int rpmemd_undo_queue_holds(const struct rpmemd_undo_queue *q, uint64_t off,
			    uint64_t len);
/*
 * rpmemd_undo_queue_err -- an fdatasync of the thread failed: journaled
 * blocks may not be durable, no write may rely on them
 */
int rpmemd_undo_queue_err(const struct rpmemd_undo_queue *q);
/* rpmemd_undo_queue_drain -- drop what is queued, wait for the chunk in flight */
void rpmemd_undo_queue_drain(struct rpmemd_pool *p);
/* rpmemd_undo_queue_stop -- end the thread (undo_lock not held) */
void rpmemd_undo_queue_stop(struct rpmemd_pool *p);

/* rpmemd_store_undo_info -- LIST: a pending journal's generation, size */
void rpmemd_store_undo_info(struct rpmemd_region *r, const char *name,
			    const struct rpmemd_meta *m,
			    struct rpmem_pool_info *pi);

#endif
