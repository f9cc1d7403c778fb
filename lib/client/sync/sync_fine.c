/* SPDX-License-Identifier: BSD-3-Clause */
/* sync_fine.c -- the fine pass: 4 KiB hashes inside differing coarse blocks */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sync_int.h"

/*
 * With HASH requests only, a run of differing coarse blocks bridges gaps
 * of identical ones up to this many bytes: hashing a few identical 64 KiB
 * blocks again costs less than a HASH request (a round trip and the
 * target's per-request work) of its own; the bridged blocks compare equal
 * and move no data. A HASHV range costs 12 bytes: no bridging then.
 */
#define FINE_GAP_BYTES (192u << 10)

/*
 * next_run -- find the next run of differing coarse blocks (with gaps of
 * up to gap_max identical ones bridged) into run_off, run_end; 0 if none
 */
static int next_run(struct sync_ctx *c)
{
	while (c->scan < c->nblocks && c->lh[c->scan] == c->rh[c->scan])
		c->scan++;
	if (c->scan >= c->nblocks)
		return 0;
	c->run_off = c->scan * c->bs;
	uint64_t last = c->scan; /* the run's last differing block */
	for (; c->scan < c->nblocks && c->scan - last <= c->gap_max + 1;
	     c->scan++)
		if (c->lh[c->scan] != c->rh[c->scan])
			last = c->scan;
	c->scan = last + 1;
	c->run_end = c->scan * c->bs;
	if (c->run_end > c->size)
		c->run_end = c->size;
	return 1;
}

/*
 * fine_next -- the next request: up to fine_nr runs or pieces of runs,
 * fine_count fine blocks in all
 */
static int fine_next(void *arg, struct client_hreq *r, unsigned slot)
{
	struct sync_ctx *c = arg;
	r->rv = c->fine_rv + (size_t)slot * c->fine_nr;
	r->nr = 0;
	r->bs = SYNC_FINE_BS;
	r->count = 0;
	r->dst = c->fine_rh + (size_t)slot * c->fine_count;
	while (r->nr < c->fine_nr && r->count < c->fine_count) {
		if (c->run_off >= c->run_end && !next_run(c))
			break;
		uint64_t len = c->run_end - c->run_off;
		uint64_t room = (uint64_t)(c->fine_count - r->count) *
				SYNC_FINE_BS;
		if (len > room)
			len = room;
		uint32_t n = (uint32_t)((len + SYNC_FINE_BS - 1) /
					SYNC_FINE_BS);
		r->rv[r->nr++] = (struct rpmem_hash_range){ c->run_off, n };
		r->count += n;
		c->run_off += len;
	}
	return r->nr != 0;
}

/* fine_sent -- hash the request's ranges locally while the target does */
static void fine_sent(void *arg, struct client_hreq *r, unsigned slot)
{
	struct sync_ctx *c = arg;
	uint64_t *lh = c->fine_lh + (size_t)slot * c->fine_count;
	for (uint32_t k = 0; k < r->nr && !c->local_err; k++) {
		uint64_t roff = r->rv[k].offset;
		uint64_t len = (uint64_t)r->rv[k].count * SYNC_FINE_BS;
		if (len > c->size - roff)
			len = c->size - roff;
		/* the coarse pass kept them: nothing to read again */
		if (c->fl)
			memcpy(lh, c->fl + roff / SYNC_FINE_BS,
			       r->rv[k].count * sizeof(*lh));
		else
			c->local_err = sync_local_hash_range(c, roff, len,
							SYNC_FINE_BS, lh);
		lh += r->rv[k].count;
	}
}

/* fine_done -- record the 4 KiB blocks whose hashes differ */
static int fine_done(void *arg, struct client_hreq *r, unsigned slot)
{
	struct sync_ctx *c = arg;
	const uint64_t *lh = c->fine_lh + (size_t)slot * c->fine_count;
	const uint64_t *rh = r->dst;
	if (c->local_err)
		return sync_local_fault(c, c->local_err);
	for (uint32_t k = 0; k < r->nr; k++) {
		uint64_t roff = r->rv[k].offset;
		uint32_t n = r->rv[k].count;
		for (uint32_t i = 0; i < n; i++) {
			if (lh[i] == rh[i])
				continue;
			uint64_t off = roff + (uint64_t)i * SYNC_FINE_BS;
			if (sync_diff_add(c, off, sync_block_len(c, off,
								 SYNC_FINE_BS)))
				return -ENOMEM;
		}
		lh += n;
		rh += n;
	}
	return 0;
}

/* sync_compare_fine -- 4 KiB hashes inside the differing coarse blocks */
int sync_compare_fine(struct sync_ctx *c)
{
	if (!c->st.blocks_differ)
		return 0;
	if (c->bs == SYNC_FINE_BS) {
		/* the coarse blocks are the fine blocks */
		return sync_diff_coarse(c);
	}
	unsigned window;
	if (c->s->caps & RPMEM_CAP_HASHV) {
		window = FINE_WINDOW_V;
		c->fine_nr = RPMEM_MAX_HASHV_RANGES;
		c->fine_count = FINE_BATCH;
		c->gap_max = 0;
	} else {
		window = FINE_WINDOW;
		c->fine_nr = 1;
		c->fine_count = FINE_MAX;
		c->gap_max = FINE_GAP_BYTES / c->bs;
	}
	c->fine_rv = malloc(window * c->fine_nr * sizeof(*c->fine_rv));
	c->fine_rh = malloc(window * c->fine_count * sizeof(*c->fine_rh));
	c->fine_lh = malloc(window * c->fine_count * sizeof(*c->fine_lh));
	if (!c->fine_rv || !c->fine_rh || !c->fine_lh) {
		client_seterr(c->s, "out of memory");
		return -ENOMEM;
	}
	static const struct client_hash_ops ops = {
		.next = fine_next, .sent = fine_sent, .done = fine_done
	};
	return client_hash_pipeline(c->p, window, &ops, c,
				    &c->st.bytes_transferred);
}
