/* SPDX-License-Identifier: BSD-3-Clause */
/* sync_dense.c -- a dense push: the probe and the sample, blocks sent whole */
#include <errno.h>

#include "sync_int.h"

/* sample_next -- the next request of the sample */
static int sample_next(void *arg, struct client_hreq *r, unsigned slot)
{
	struct sync_ctx *c = arg;
	unsigned k = c->sample_next;
	(void)slot;
	if (k >= c->sample_n)
		return 0;
	r->rv = &c->sample_rv[k];
	r->nr = 1;
	r->count = r->rv->count;
	r->bs = SYNC_FINE_BS;
	r->dst = c->sample_rh + (size_t)k * SAMPLE_FINE;
	c->sample_next++;
	return 1;
}

/* sample_sent -- hash the request's 4 KiB blocks locally */
static void sample_sent(void *arg, struct client_hreq *r, unsigned slot)
{
	struct sync_ctx *c = arg;
	uint64_t off = r->rv->offset;
	uint64_t len = (uint64_t)r->count * SYNC_FINE_BS;
	(void)slot;
	if (len > c->size - off)
		len = c->size - off;
	if (!c->local_err)
		c->local_err = sync_local_hash_range(
			c, off, len, SYNC_FINE_BS,
			c->sample_lh + (r->dst - c->sample_rh));
}

/*
 * sample_dense -- 1 if more than a fifth of the 4 KiB blocks differ in
 * the first WHOLE_SAMPLE_BYTES of WHOLE_SAMPLES differing coarse blocks
 * spread over them (one HASH request each, all in flight), else 0, or
 * -errno. The candidates are nc coarse blocks, idx[j] (j itself if idx
 * is NULL) with the hashes lhs[j] and rhs[j], ndiffer of them differing.
 */
static int sample_dense(struct sync_ctx *c, const uint64_t *idx, uint64_t nc,
			uint64_t ndiffer, const uint64_t *lhs,
			const uint64_t *rhs)
{
	static const struct client_hash_ops ops = { .next = sample_next,
						    .sent = sample_sent };
	uint64_t step = ndiffer / WHOLE_SAMPLES, seen = 0;
	uint64_t total = 0, differ = 0;

	if (!step)
		step = 1; /* fewer differing blocks than samples: all of them */
	c->sample_n = c->sample_next = 0;
	for (uint64_t j = 0; j < nc && c->sample_n < WHOLE_SAMPLES; j++) {
		if (lhs[j] == rhs[j] || seen++ % step)
			continue;
		uint64_t off = (idx ? idx[j] : j) * c->bs;
		uint64_t len = sync_block_len(c, off, c->bs);
		if (len > WHOLE_SAMPLE_BYTES)
			len = WHOLE_SAMPLE_BYTES;
		c->sample_rv[c->sample_n++] = (struct rpmem_hash_range){
			off, (uint32_t)((len + SYNC_FINE_BS - 1) / SYNC_FINE_BS)
		};
	}
	int ret = client_hash_pipeline(c->p, WHOLE_SAMPLES, &ops, c,
				       &c->st.bytes_transferred);
	if (ret)
		return ret;
	if (c->local_err)
		return sync_local_fault(c, c->local_err);
	for (unsigned k = 0; k < c->sample_n; k++) {
		const uint64_t *lh = c->sample_lh + (size_t)k * SAMPLE_FINE;
		const uint64_t *rh = c->sample_rh + (size_t)k * SAMPLE_FINE;
		for (uint32_t i = 0; i < c->sample_rv[k].count; i++)
			differ += lh[i] != rh[i];
		total += c->sample_rv[k].count;
	}
	return differ * 5 > total;
}

/*
 * sync_whole_coarse -- the differing coarse blocks are the ranges to write
 * when the sync is a push, more than WHOLE_PCT percent of them differ and
 * the sample says many of their bytes do (sample_dense); 1 when so, 0
 * when the fine pass decides, or -errno
 */
int sync_whole_coarse(struct sync_ctx *c)
{
	if (c->o->mode != RPMEMCTL_SYNC_PUSH ||
	    (c->o->flags & RPMEMCTL_SYNC_DRY_RUN) ||
	    c->st.blocks_differ * 100 <= c->nblocks * WHOLE_PCT ||
	    c->bs == SYNC_FINE_BS)
		return 0;
	int ret = sample_dense(c, NULL, c->nblocks, c->st.blocks_differ,
			       c->lh, c->rh);
	if (ret <= 0)
		return ret;
	ret = sync_diff_coarse(c);
	return ret ? ret : 1;
}

/*
 * probe_next -- the probe's blocks: all in one HASHV request, or one HASH
 * request each for a target without RPMEM_CAP_HASHV
 */
static int probe_next(void *arg, struct client_hreq *r, unsigned slot)
{
	struct sync_ctx *c = arg;
	unsigned k = c->probe_next;
	(void)slot;
	if (k >= PROBE_BLOCKS)
		return 0;
	r->nr = c->s->caps & RPMEM_CAP_HASHV ? PROBE_BLOCKS : 1;
	r->rv = c->probe_rv + k;
	r->count = r->nr;
	r->bs = c->bs;
	r->dst = c->probe_rh + k;
	c->probe_next += r->nr;
	return 1;
}

/* probe_sent -- hash the request's blocks locally while the target does */
static void probe_sent(void *arg, struct client_hreq *r, unsigned slot)
{
	struct sync_ctx *c = arg;
	uint64_t *lh = c->probe_lh + (r->dst - c->probe_rh);
	(void)slot;
	for (uint32_t k = 0; k < r->nr && !c->local_err; k++) {
		uint64_t off = r->rv[k].offset;
		c->local_err = sync_local_hash_range(
			c, off, sync_block_len(c, off, c->bs), c->bs, lh + k);
	}
}

/*
 * probe_ranges -- every coarse block but those the probe found equal, as
 * the ranges to write; they count as differing, as a mirror's do
 */
static int probe_ranges(struct sync_ctx *c)
{
	uint64_t from = 0; /* the first block not yet added */

	for (unsigned k = 0; k <= PROBE_BLOCKS; k++) {
		uint64_t to = c->nblocks;
		if (k < PROBE_BLOCKS) {
			if (c->probe_lh[k] != c->probe_rh[k])
				continue;
			to = c->probe_idx[k];
		}
		if (to > from) {
			uint64_t off = from * c->bs;
			uint64_t end = to * c->bs < c->size ? to * c->bs :
							      c->size;
			if (sync_diff_add(c, off, end - off))
				return -ENOMEM;
			c->st.blocks_differ += to - from;
		}
		from = to + 1;
	}
	return 0;
}

/*
 * sync_probe_dense -- for a push, the dense probe (see PROBE_BLOCKS): 1 when
 * it found the pool dense and set the ranges to write, 0 when every block
 * is to be compared, or -errno
 */
int sync_probe_dense(struct sync_ctx *c)
{
	static const struct client_hash_ops ops = { .next = probe_next,
						    .sent = probe_sent };
	uint64_t stride = c->nblocks / PROBE_BLOCKS, differ = 0;

	if (c->o->mode != RPMEMCTL_SYNC_PUSH ||
	    (c->o->flags & RPMEMCTL_SYNC_DRY_RUN) ||
	    c->bs == SYNC_FINE_BS || c->nblocks < PROBE_MIN_BLOCKS ||
	    c->bs > RPMEM_MAX_HASH_BYTES / PROBE_BLOCKS)
		return 0;
	for (unsigned k = 0; k < PROBE_BLOCKS; k++) {
		/* a fixed odd multiplier spreads the places in the strata */
		uint64_t at = ((k + 1) * 0x9e3779b97f4a7c15ull >> 32) % stride;
		c->probe_idx[k] = k * stride + at;
		c->probe_rv[k] = (struct rpmem_hash_range){
			c->probe_idx[k] * c->bs, 1
		};
	}
	int ret = client_hash_pipeline(c->p, FINE_WINDOW, &ops, c,
				       &c->st.bytes_transferred);
	if (ret)
		return ret;
	if (c->local_err)
		return sync_local_fault(c, c->local_err);
	for (unsigned k = 0; k < PROBE_BLOCKS; k++)
		differ += c->probe_lh[k] != c->probe_rh[k];
	c->st.blocks_compared = PROBE_BLOCKS;
	if (differ * 100 <= PROBE_BLOCKS * WHOLE_PCT)
		return 0;
	ret = sample_dense(c, c->probe_idx, PROBE_BLOCKS, differ, c->probe_lh,
			   c->probe_rh);
	if (ret <= 0)
		return ret;
	ret = probe_ranges(c);
	return ret ? ret : 1;
}
