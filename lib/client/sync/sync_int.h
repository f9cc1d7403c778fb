/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sync_int.h -- what the files of a sync share: its context, the tuning
 * of the two-level compare, and the calls between its phases.
 *
 *   sync_engine.c  the driver: arguments, the phases in order, the result
 *   sync_dirty.c   a push whose dirty log may stand in for the compare
 *   sync_dense.c   a dense push: the probe and the sample, blocks sent whole
 *   sync_coarse.c  the coarse pass: both copies hashed in coarse blocks
 *   sync_fine.c    the fine pass: 4 KiB hashes inside differing coarse blocks
 *   sync_move.c    the differing ranges moved: push, pull, mirror, bwlimit
 *   sync_ctx.c     what the phases share: ranges, progress, the local copy
 */
#ifndef RPMEM_SYNC_INT_H
#define RPMEM_SYNC_INT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "client_sync.h"

/*
 * Blocks are compared at two levels: coarse blocks (64 KiB by default)
 * over the whole pool, then 4 KiB fine blocks inside each differing
 * coarse block, so a scattered change costs about the changed bytes.
 * Every phase goes through the pool calls (write, read, flush, hash,
 * set_state) and works over any data plane. The compare phases keep
 * several hash requests in flight; no data moves until they are all
 * answered, so hash replies and data frames never wait on each other.
 */
#define SYNC_FINE_BS CLIENT_SYNC_MIN_BS
#define COARSE_WINDOW 4	/* coarse HASH requests in flight */
/*
 * The fine pass asks for the 4 KiB hashes of the runs of differing coarse
 * blocks. A target with RPMEM_CAP_HASHV gets HASHV requests of up to
 * RPMEM_MAX_HASHV_RANGES runs and FINE_BATCH fine blocks each, a few in
 * flight; we hash each request's ranges locally right after sending it,
 * while the target hashes them too: a 1% change of a 1 GiB pool takes ~10
 * requests. An older target gets one HASH request per run (up to FINE_MAX
 * blocks), more of them in flight.
 */
#define FINE_BATCH 4096u    /* fine blocks per HASHV request (16 MiB) */
_Static_assert((uint64_t)FINE_BATCH * SYNC_FINE_BS <= RPMEM_MAX_HASH_BYTES,
	       "a fine HASHV request stays within the target's hashing cap");
#define FINE_WINDOW_V 4	    /* HASHV requests in flight */
#define FINE_MAX 1024u	    /* fine blocks per HASH request (4 MiB) */
#define FINE_WINDOW 32	    /* HASH requests in flight */
_Static_assert(FINE_WINDOW <= CLIENT_HASH_WINDOW_MAX &&
	       FINE_WINDOW_V <= CLIENT_HASH_WINDOW_MAX &&
	       COARSE_WINDOW <= CLIENT_HASH_WINDOW_MAX,
	       "the hash pipeline holds every window");
/*
 * A push whose coarse compare found more than WHOLE_PCT percent of the
 * coarse blocks differing, and in which more than a fifth of the 4 KiB
 * blocks of a sample of them differ too, writes the differing coarse
 * blocks whole, without the fine pass: hashing them again in 4 KiB blocks
 * on both ends and writing many short ranges then costs more than the
 * bytes it saves (tests/bench/sync-dense.sh, 512 MiB, scattered 4 KiB
 * changes: with 25%, 50% or 100% of them changed every coarse block
 * differs and the fine pass took 1.5-2.4x a mirror, writing them whole
 * 1.2-1.6x; with 10%, 81% of the coarse blocks differ and the fine pass
 * stays). The sample, WHOLE_SAMPLES coarse blocks spread over the
 * differing ones, at most WHOLE_SAMPLE_BYTES of each (256 4 KiB blocks),
 * keeps one changed byte per coarse block on the fine pass; a fifth, not
 * a quarter, so that 25% changed is reliably dense (a quarter made it a
 * coin toss) while 10% (12% of the blocks of a differing coarse one)
 * stays far below.
 */
#define WHOLE_PCT 90
#define WHOLE_SAMPLES 16u
#define WHOLE_SAMPLE_BYTES (64u << 10)
#define SAMPLE_FINE (WHOLE_SAMPLE_BYTES / SYNC_FINE_BS)
_Static_assert(WHOLE_SAMPLES <= CLIENT_HASH_WINDOW_MAX,
	       "the sample's requests are all in flight at once");
/*
 * The dense probe. Before a push (not a dry run) of a pool of at least
 * PROBE_MIN_BLOCKS coarse blocks hashes it all, it compares PROBE_BLOCKS
 * of them: one in each of PROBE_BLOCKS equal strata of the pool, at a
 * fixed pseudo-random place inside it (so neither a hot head nor a
 * regular pattern fools it), in one HASHV request (a HASH each without
 * RPMEM_CAP_HASHV). If more than WHOLE_PCT percent of them differ and
 * the sample of their 4 KiB blocks is dense (sample_dense), the push
 * writes every coarse block but those the probe found equal, as a mirror
 * does, and nobody hashes the rest: the coarse compare (both ends hashing
 * the pool, a quarter of a dense push on loopback) was what such a push
 * cost above a mirror. Sending a block that did not change is always
 * correct, so a wrong guess costs at most a mirror. Otherwise the probe's
 * hashes are dropped and the push compares every block as before
 * (64 blocks of a 512 MiB pool: about 1% more hashing).
 */
#define PROBE_BLOCKS 64u
#define PROBE_MIN_BLOCKS 256u
_Static_assert(PROBE_BLOCKS <= RPMEM_MAX_HASHV_RANGES &&
	       PROBE_BLOCKS < PROBE_MIN_BLOCKS,
	       "the probe is one HASHV request and a part of the pool");

struct range {
	uint64_t off;
	uint64_t len;
};

/* a growing array of sorted, merged byte ranges; owns v */
struct ranges {
	struct range *v;
	size_t n;
	size_t cap;
};

struct sync_ctx {
	struct rpmemctl_pool *p;
	struct rpmemctl_session *s;
	const struct rpmemctl_sync_cfg *o;
	uint8_t *local;
	uint64_t size;
	uint32_t bs;
	uint64_t nblocks;
	struct rpmemctl_sync_result st;
	uint64_t t0;
	uint64_t t_phase; /* when the last phase ended (sync_phase) */
	uint64_t last_progress;

	/* coarse level: local and remote hashes (owned) */
	uint64_t *lh;
	uint64_t *rh;
	int tree;    /* tree hashes (RPMEM_HASH_TREE) at the coarse level */
	uint64_t *fl; /* tree: the local copy's 4 KiB hashes, or NULL (owned) */
	uint64_t next_coarse; /* next block to request */

	/* fine level */
	uint64_t scan;	  /* next coarse block to look at */
	uint64_t run_off; /* rest of the current differing run */
	uint64_t run_end;
	uint64_t gap_max;	    /* identical coarse blocks bridged */
	uint32_t fine_nr;	    /* ranges per request */
	uint32_t fine_count;	    /* fine blocks per request */
	struct rpmem_hash_range *fine_rv; /* fine_nr per slot (owned) */
	uint64_t *fine_rh;	    /* fine_count per slot (owned) */
	uint64_t *fine_lh;	    /* fine_count per slot (owned) */

	struct ranges diff;
	int dirty_standin; /* diff is the dirty log's extents, not compared */

	/* the dense probe: its coarse blocks and their hashes */
	uint64_t probe_idx[PROBE_BLOCKS];
	struct rpmem_hash_range probe_rv[PROBE_BLOCKS];
	uint64_t probe_lh[PROBE_BLOCKS];
	uint64_t probe_rh[PROBE_BLOCKS];
	unsigned probe_next; /* next probe block to request */

	/* sample_dense: its requests (one 4 KiB HASH each) and hashes */
	struct rpmem_hash_range sample_rv[WHOLE_SAMPLES];
	uint64_t sample_lh[WHOLE_SAMPLES * SAMPLE_FINE];
	uint64_t sample_rh[WHOLE_SAMPLES * SAMPLE_FINE];
	unsigned sample_n;    /* requests */
	unsigned sample_next; /* next to send */

	/* generations.c: the local history and the target's, compared */
	struct client_history hist;
	struct rpmemctl_generations rgen;
	int hist_ok; /* compared and allowed: recorded after the sync */

	/* the local copy's file, when the caller named it (local_fd) */
	int watch;
	struct stat st0; /* as it was when the sync began */
	int local_err;	 /* a fault hashing the local copy (fine level) */
	/* bwlimit: data bytes sent since pace_t0 (0: not started) */
	uint64_t pace_t0;
	uint64_t pace_bytes;
};

/* sync_block_len -- length of the block of size bs at off, short at the end */
static inline uint64_t sync_block_len(const struct sync_ctx *c, uint64_t off,
				      uint64_t bs)
{
	return c->size - off < bs ? c->size - off : bs;
}

/* --- sync_ctx.c: differing ranges, progress, the local copy ------------- */

/* sync_ranges_add -- append [off, off + len), merged with an adjacent last */
int sync_ranges_add(struct ranges *r, uint64_t off, uint64_t len);
/* sync_diff_add -- [off, off + len) differs: into c->diff, counted */
int sync_diff_add(struct sync_ctx *c, uint64_t off, uint64_t len);
/* sync_progress -- report at most every PROGRESS_NS, or now if force */
void sync_progress(struct sync_ctx *c, uint64_t done, uint64_t total,
		   int force);
/* sync_local_hash_range -- the bs-block hashes of a local range, 1 thread */
int sync_local_hash_range(struct sync_ctx *c, uint64_t off, uint64_t len,
			  uint32_t bs, uint64_t *hashes);
/* sync_local_fault -- hashing the local copy faulted: say so, return err */
int sync_local_fault(struct sync_ctx *c, int err);
/* sync_local_check -- the local file is as when the sync began; -ESTALE */
int sync_local_check(struct sync_ctx *c, const char *what);
/* sync_phase -- log (debug) how long the phase that just ended took */
void sync_phase(struct sync_ctx *c, const char *what);

/* --- sync_engine.c: the driver ------------------------------------------ */

/* sync_compare -- the ranges that differ, into c->diff, phase by phase */
int sync_compare(struct sync_ctx *c);

/* --- sync_coarse.c: the coarse pass ------------------------------------- */

/* sync_compare_coarse -- both copies' coarse hashes, the differing counted */
int sync_compare_coarse(struct sync_ctx *c);
/* sync_diff_coarse -- every differing coarse block into c->diff; -ENOMEM */
int sync_diff_coarse(struct sync_ctx *c);

/* --- sync_fine.c: the fine pass ----------------------------------------- */

/* sync_compare_fine -- 4 KiB hashes inside the differing coarse blocks */
int sync_compare_fine(struct sync_ctx *c);

/* --- sync_dense.c: the dense probe and sample --------------------------- */

/* sync_probe_dense -- a dense push sets the ranges to write: 1, else 0 */
int sync_probe_dense(struct sync_ctx *c);
/* sync_whole_coarse -- a dense push writes the coarse blocks whole: 1 */
int sync_whole_coarse(struct sync_ctx *c);

/* --- sync_dirty.c: a push with a dirty log ------------------------------ */

/* sync_push_dirty -- only the dirty log's extents if it may stand in */
int sync_push_dirty(struct sync_ctx *c);

/* --- sync_move.c: the differing ranges moved ---------------------------- */

/* sync_push -- write the differing ranges between syncing and consistent */
int sync_push(struct sync_ctx *c);
/* sync_pull -- read the differing ranges into the local buffer */
int sync_pull(struct sync_ctx *c);
/* sync_mirror -- every byte, no hashing: syncing, writes, flush, consistent */
int sync_mirror(struct sync_ctx *c);

/*
 * sync_gen_check -- with a history configured: the local file's and the
 * target's histories compared; 0 to go on, -EUCLEAN (refused, why in
 * the pool's message) or another -errno (generations.c)
 */
int sync_gen_check(struct sync_ctx *c);
/*
 * sync_gen_done -- after the sync returned ret: if it succeeded and was
 * checked, both histories record it (the target adopts a push's); ret
 * or the recording's -errno
 */
int sync_gen_done(struct sync_ctx *c, int ret);

#endif
