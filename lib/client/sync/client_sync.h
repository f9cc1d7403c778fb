/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * client_sync.h -- the sync layer of librpmemctl (lib/client/sync/): the
 * sync engine (its phases share sync_int.h), atomic syncs, the dirty log,
 * the local copy's hashes, versions and generations. It sees pool/,
 * session/ and base/ below it.
 */
#ifndef RPMEM_CLIENT_SYNC_H
#define RPMEM_CLIENT_SYNC_H

#include <stddef.h>
#include <stdint.h>

#include "client_history.h"
#include "client_pool.h"

/* --- atomic.c ----------------------------------------------------------- */

/*
 * client_pool_preserve -- PRESERVE the n ranges (any number; sent
 * RPMEM_MAX_PRESERVE_RANGES at a time) before they are written: their
 * old blocks kept in the target's undo journal. 0 at once if the target
 * has no RPMEM_CAP_UNDO or the pool was empty when opened.
 */
int client_pool_preserve(struct rpmemctl_pool *pool,
			 const struct rpmem_preserve_range *v, size_t n);
/*
 * client_pool_preserve_post -- PRESERVE of n <= RPMEM_MAX_PRESERVE_RANGES
 * ranges before the writes that follow: where the data plane is in band
 * (the target journals the ranges before it applies a later write,
 * whatever the reply says), sent and its reply awaited later by
 * client_pool_preserve_wait(*tok); else sent and awaited now (*tok 0:
 * nothing to wait for)
 */
int client_pool_preserve_post(struct rpmemctl_pool *pool,
			      const struct rpmem_preserve_range *v, size_t n,
			      uint32_t *tok);
/* client_pool_preserve_wait -- the reply of PRESERVE tok (0: none) */
int client_pool_preserve_wait(struct rpmemctl_pool *pool, uint32_t tok);

/* --- sync_cfg.c: the sync configuration and result objects ------------ */

#define CLIENT_SYNC_DEFAULT_BS RPMEMCTL_BLOCK_SIZE_DEFAULT
#define CLIENT_SYNC_MIN_BS RPMEMCTL_BLOCK_SIZE_MIN /* the fine block size */

/* a byte range of the data */
struct client_range {
	uint64_t off;
	uint64_t len;
};

/*
 * struct rpmemctl_sync_cfg -- what a sync does. Internal: the deprecated
 * rpmemctl_pool_sync fills one on its stack from the frozen
 * struct rpmemctl_sync_opts (source then points at the caller's string).
 */
struct rpmemctl_sync_cfg {
	enum rpmemctl_sync_mode mode;
	unsigned flags;	     /* RPMEMCTL_SYNC_* */
	uint32_t block_size; /* 0 = CLIENT_SYNC_DEFAULT_BS */
	const char *source;  /* source_buf or a caller's string; may be NULL */
	char *source_buf;    /* owned copy set by rpmemctl_sync_cfg_set_source */
	rpmemctl_progress_fn progress;
	void *progress_arg;
	rpmemctl_range_fn range;
	void *range_arg;
	int local_fd; /* the local copy's file, checked for changes; -1 none */
	struct rpmemctl_dirtylog *dirty_log; /* push: consulted, cleared */
	uint64_t bwlimit; /* bytes per second of pool data sent; 0 = none */
	/*
	 * set by a link (link.c) that marked the pool syncing itself, on
	 * this session: no other writer can have written since
	 */
	int syncing_ours;
	/*
	 * set by a link's stop: a push given a dirty log compares every
	 * block anyway (stores never flushed are not marked), then clears
	 * the log as usual
	 */
	int compare_all;
	/*
	 * set by a link's background resync (link_resync.c): extents, a
	 * bitmap in the dirty log's extents, or else ranges (sorted and
	 * apart), are what differs (its earlier passes on this session made
	 * the rest equal), sent instead of the log's marks; resync_pass: the
	 * pool is left syncing, no history is recorded and the log is kept
	 * (the source changes under the pass)
	 */
	const uint8_t *extents;
	const struct client_range *ranges;
	size_t nranges;
	int resync_pass;
	/* the local copy's hashes, shared with other syncs; NULL: none */
	struct rpmemctl_local_hashes *local_hashes;
	/* the local file whose history (FILE.rpmemgen) is compared; owned */
	char *history;
	/* a pull's commit hook: after the data, before the history */
	int (*commit)(void *arg);
	void *commit_arg;
};

/* the least bwlimit a sync takes, bytes per second */
#define CLIENT_BWLIMIT_MIN 4096

/*
 * struct rpmemctl_sync_result -- what a sync did. Internal, free to grow:
 * the deprecated rpmemctl_pool_sync copies the LIBRPMEMCTL_1 fields into
 * the caller's frozen struct rpmemctl_sync_stats one by one.
 */
struct rpmemctl_sync_result {
	uint64_t size;
	uint64_t block_size;
	uint64_t blocks_total;
	uint64_t blocks_differ;
	uint64_t bytes_differ;
	uint64_t bytes_transferred;
	uint64_t data_bytes;
	uint64_t generation;
	uint64_t elapsed_ns;
	uint64_t blocks_compared; /* coarse blocks whose hashes were compared */
	int dirty_only;		 /* sent only the dirty log's extents */
	int gen_cmp; /* enum rpmemctl_gen_cmp of the histories compared */
	char dirty_fallback[200]; /* why not, with a log; "" otherwise */
	char note[RPMEM_MSG_MAX + 1]; /* the target's notes (pool->note) */
};

/*
 * client_pool_gen_adopt -- GEN adopt: the pool's history becomes count
 * ids (generations.c)
 */
int client_pool_gen_adopt(struct rpmemctl_pool *p, const uint64_t *ids,
			  unsigned count);

/* --- dirtylog.c: the persistent dirty log -------------------------------- */

uint64_t client_dirtylog_extent(const struct rpmemctl_dirtylog *l);
uint64_t client_dirtylog_nextents(const struct rpmemctl_dirtylog *l);
int client_dirtylog_marked(const struct rpmemctl_dirtylog *l, uint64_t e);
uint64_t client_dirtylog_generation(const struct rpmemctl_dirtylog *l);
/* client_dirtylog_clean -- it has the clean mark, or we cleared it */
int client_dirtylog_clean(const struct rpmemctl_dirtylog *l);
/* client_dirtylog_bound -- relative to pool uuid at generation (intact) */
int client_dirtylog_bound(const struct rpmemctl_dirtylog *l,
			  const uint8_t uuid[16], uint64_t generation);
/*
 * client_dirtylog_take -- a background resync's extents: those marked since
 * its last take (all: every persistent mark too); -ENOMEM
 */
int64_t client_dirtylog_take(struct rpmemctl_dirtylog *l, uint8_t *out,
			     int all);
/* client_dirtylog_fresh -- extents marked since the last take */
uint64_t client_dirtylog_fresh(struct rpmemctl_dirtylog *l);
/* client_dirtylog_untrack -- the resync ended: no more fresh marks */
void client_dirtylog_untrack(struct rpmemctl_dirtylog *l);
/* client_dirtylog_bitmap_len -- bytes of a bitmap of the log's extents */
size_t client_dirtylog_bitmap_len(const struct rpmemctl_dirtylog *l);
/* client_dirtylog_clear -- clear the marks, keep the binding (dirtylog.c) */
int client_dirtylog_clear(struct rpmemctl_dirtylog *l);
/*
 * client_dirtylog_cut -- remember (in memory) the extents marked from now
 * on; client_dirtylog_clear_cut then keeps only those (dirtylog.c)
 */
int client_dirtylog_cut(struct rpmemctl_dirtylog *l);
/* client_dirtylog_clear_cut -- clear the marks made before the cut */
int client_dirtylog_clear_cut(struct rpmemctl_dirtylog *l, int recut);
/* client_dirtylog_reset -- bind to uuid, generation, then clear the marks */
int client_dirtylog_reset(struct rpmemctl_dirtylog *l, const uint8_t uuid[16],
			  uint64_t generation);

/* client_sync_mode_valid -- a known enum rpmemctl_sync_mode */
int client_sync_mode_valid(enum rpmemctl_sync_mode mode);
/* client_sync_flags_valid -- only known RPMEMCTL_SYNC_* flags */
int client_sync_flags_valid(unsigned flags);
/* client_sync_bs_valid -- a power of two from 4 KiB to 64 MiB (not 0) */
int client_sync_bs_valid(uint32_t bs);

/* --- local_hashes.c ------------------------------------------------------ */

struct stat;
/*
 * client_local_hashes_get -- lh (and fl, npieces 4 KiB hashes, if not
 * NULL) of the file st describes, len bytes in blocks of bs: from h if it
 * holds them, else computed by hash(arg) into lh and fl and kept; 0 or
 * hash's error
 */
int client_local_hashes_get(struct rpmemctl_local_hashes *h,
			    const struct stat *st, uint64_t len, uint32_t bs,
			    int tree, uint64_t *lh, uint64_t *fl,
			    uint64_t npieces, int (*hash)(void *), void *arg);

#endif
