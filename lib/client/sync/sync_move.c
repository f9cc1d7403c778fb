/* SPDX-License-Identifier: BSD-3-Clause */
/* sync_move.c -- the differing ranges moved: push, pull, mirror, bwlimit */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "util.h"
#include "sync_int.h"

/*
 * pace_chunk -- how much pool data one WRITE carries under the limit:
 * about 50 ms worth (at least 4 KiB, at most RPMEM_MAX_IO), so the data
 * flows evenly and no frame crawls
 */
static size_t pace_chunk(const struct sync_ctx *c)
{
	uint64_t n = c->o->bwlimit / 20;
	if (!c->o->bwlimit || n > RPMEM_MAX_IO)
		return RPMEM_MAX_IO;
	return n < 4096 ? 4096 : (size_t)n;
}

/* move -- a WRITE of the local copy's bytes, or a READ into them (pull) */
static int move(struct sync_ctx *c, int push_dir, uint64_t off, size_t n)
{
	return push_dir ? rpmemctl_pool_write(c->p, c->local + off, off, n) :
			  rpmemctl_pool_read(c->p, c->local + off, off, n);
}

/*
 * paced_move -- move under the sync's bwlimit: each chunk goes (or a
 * pull's is read) when the bytes before it have had their time at the
 * rate (one clock from the first chunk: the average holds, no burst)
 */
static int paced_move(struct sync_ctx *c, int push_dir, uint64_t off,
		      uint64_t len)
{
	uint64_t rate = c->o->bwlimit;

	if (!rate)
		return move(c, push_dir, off, len);
	size_t chunk = pace_chunk(c);
	while (len) {
		size_t n = len < chunk ? (size_t)len : chunk;
		uint64_t now = rpmem_now_ns();
		if (!c->pace_t0)
			c->pace_t0 = now;
		uint64_t due = c->pace_t0 +
			       (uint64_t)((unsigned __int128)c->pace_bytes *
					  1000000000u / rate);
		if (due > now) {
			struct timespec ts = {
				.tv_sec = (time_t)((due - now) / 1000000000u),
				.tv_nsec = (long)((due - now) % 1000000000u)
			};
			while (nanosleep(&ts, &ts) && errno == EINTR)
				;
		}
		int ret = move(c, push_dir, off, n);
		if (ret)
			return ret;
		c->pace_bytes += n;
		off += n;
		len -= n;
	}
	return 0;
}

/*
 * ranges handed to the transport at once by push_gathered: one PRESERVE
 * request's worth
 */
#define GATHER_RANGES RPMEM_MAX_PRESERVE_RANGES
/* a mirror's writes are preserved this much at a time */
#define MIRROR_PRESERVE (64ull << 20)

/* diff_ranges -- the n differing ranges from i, as PRESERVE ranges */
static void diff_ranges(const struct sync_ctx *c, size_t i, size_t n,
			struct rpmem_preserve_range *v)
{
	for (size_t k = 0; k < n; k++)
		v[k] = (struct rpmem_preserve_range){ c->diff.v[i + k].off,
						      c->diff.v[i + k].len };
}

/*
 * preserve_diff -- PRESERVE the n differing ranges from i before they are
 * written: the target keeps their old blocks in its undo journal, so an
 * interrupted sync can be rolled back (one round trip per batch)
 */
static int preserve_diff(struct sync_ctx *c, size_t i, size_t n)
{
	struct rpmem_preserve_range v[GATHER_RANGES];

	diff_ranges(c, i, n, v);
	return client_pool_preserve(c->p, v, n);
}

/*
 * preserve_sent -- preserve_diff, where the data plane is in band
 * (client_pool_preserve_post) with the batch's reply taken after the
 * next batch went (*prev: the request whose reply is due), so that
 * reading and sending a batch overlaps the target's handling of the one
 * before; else answered before the batch's writes
 */
static int preserve_sent(struct sync_ctx *c, size_t i, size_t n,
			 uint32_t *prev)
{
	struct rpmem_preserve_range v[GATHER_RANGES];
	uint32_t id;

	diff_ranges(c, i, n, v);
	int ret = client_pool_preserve_post(c->p, v, n, &id);
	if (ret)
		return ret;
	ret = client_pool_preserve_wait(c->p, *prev);
	*prev = id;
	return ret;
}
/*
 * With the local file named and a transport that gathers short writes
 * (TCP), push_gathered reads ranges up to GATHER_SHORT with pread into a
 * buffer of GATHER_BUF bytes instead of sending them from the mapping:
 * the coarse pass read the file, not the mapping, so every scattered
 * 4 KiB block sent from it would cost a page fault, and its page tables
 * a teardown at the end (a 1 GiB sync with 1% changed spent more on that
 * than on sending).
 */
#define GATHER_SHORT (64u << 10)
#define GATHER_BUF (1u << 20)
/*
 * push_gathered -- the differing ranges to the target, GATHER_RANGES at a
 * time, so that the transport can send many short ones (a fine pass's
 * 4 KiB blocks) together; counted and reported as progress per batch
 */
static int push_gathered(struct sync_ctx *c, uint64_t *moved)
{
	struct rpmem_xrange xr[GATHER_RANGES];
	/*
	 * a transport that gathers (TCP) copies anyway; RDMA writes from the
	 * registered mapping without a copy. Without a buffer, everything
	 * goes from the mapping.
	 */
	const struct rpmem_xport *x = c->p->xport;
	uint8_t *buf = NULL;
	if (c->watch && x && x->ops->write_ranges)
		buf = malloc(GATHER_BUF);
	int ret = 0;
	uint32_t prev = 0; /* a PRESERVE whose reply is due (preserve_sent) */

	for (size_t i = 0; i < c->diff.n && !ret;) {
		size_t n = 0, used = 0;
		uint64_t bytes = 0;
		for (; i < c->diff.n && n < GATHER_RANGES; i++, n++) {
			const struct range *d = &c->diff.v[i];
			xr[n] = (struct rpmem_xrange){ d->off, d->len, NULL };
			if (buf && d->len <= GATHER_SHORT) {
				if (used + d->len > GATHER_BUF)
					break;
				ret = rpmem_pread_full(c->o->local_fd,
						       buf + used,
						       (size_t)d->len, d->off);
				if (ret)
					break;
				xr[n].src = buf + used;
				used += d->len;
			}
			bytes += d->len;
		}
		if (ret) {
			ret = sync_local_fault(c, ret);
			break;
		}
		ret = preserve_sent(c, i - n, n, &prev);
		if (!ret)
			ret = client_pool_write_ranges(c->p, c->local, xr, n);
		if (ret)
			break;
		*moved += bytes;
		c->st.data_bytes += bytes;
		c->st.bytes_transferred += bytes;
		sync_progress(c, *moved, c->st.bytes_differ, 0);
	}
	free(buf);
	/* the last reply (after a failure too: the stream stays in step) */
	int err = client_pool_preserve_wait(c->p, prev);
	return ret ? ret : err;
}

/*
 * move_ranges -- the differing ranges, to the target (push) or into the
 * local buffer (pull), counted and reported as progress; *moved bytes
 */
static int move_ranges(struct sync_ctx *c, int push_dir, uint64_t *moved)
{
	if (push_dir && !c->o->bwlimit)
		return push_gathered(c, moved);
	for (size_t i = 0; i < c->diff.n; i++) {
		const struct range *r = &c->diff.v[i];
		size_t left = c->diff.n - i;
		int ret = 0;
		if (push_dir && i % GATHER_RANGES == 0)
			ret = preserve_diff(c, i, left < GATHER_RANGES ?
							  left :
							  GATHER_RANGES);
		if (!ret)
			ret = paced_move(c, push_dir, r->off, r->len);
		if (ret)
			return ret;
		*moved += r->len;
		c->st.data_bytes += r->len;
		c->st.bytes_transferred += r->len;
		sync_progress(c, *moved, c->st.bytes_differ, 0);
	}
	return 0;
}

/* flushes of a push whose dirty log stood in: one per range up to this */
#define FLUSH_EACH_MAX 64

/*
 * flush_sent -- make what a push wrote persistent. After an interrupted
 * sync, data already in the target's mapping may not be persistent yet:
 * the whole pool then, unless the dirty log stood in for the compare
 * (every write since its generation is marked, so it was sent again):
 * then each range sent (their span if there are many). Into a consistent
 * pool, the span of the ranges sent.
 */
static int flush_sent(struct sync_ctx *c, int was_consistent)
{
	const struct ranges *d = &c->diff;
	int ret = 0;

	if (!was_consistent && !c->dirty_standin)
		return rpmemctl_pool_flush(c->p, 0, c->size);
	if (c->dirty_standin && d->n <= FLUSH_EACH_MAX) {
		for (size_t i = 0; i < d->n && !ret; i++)
			ret = rpmemctl_pool_flush(c->p, d->v[i].off,
						  d->v[i].len);
		return ret;
	}
	return rpmemctl_pool_flush(c->p, d->v[0].off,
				   d->v[d->n - 1].off + d->v[d->n - 1].len -
					   d->v[0].off);
}

/* sync_push -- write the differing ranges between syncing and consistent */
int sync_push(struct sync_ctx *c)
{
	struct rpmemctl_pool *p = c->p;
	int was_consistent = p->state == RPMEM_POOL_CONSISTENT;
	if (!c->diff.n && was_consistent)
		return 0; /* up to date: no state change, nothing written */
	const char *src = c->o->source;
	int ret = client_pool_set_syncing(p, src, c->st.bytes_differ);
	sync_phase(c, "SET_STATE syncing");
	if (ret)
		return ret;
	uint64_t moved = 0;
	ret = move_ranges(c, 1, &moved);
	sync_phase(c, "the transfer");
	if (ret)
		return ret;
	ret = flush_sent(c, was_consistent);
	sync_phase(c, "the flush");
	if (ret)
		return ret;
	sync_progress(c, moved, c->st.bytes_differ, 1);
	/* a resync's pass: the source changed under it, no consistent mark */
	if (c->o->resync_pass)
		return 0;
	/* what was sent is the file's content only if it did not change */
	if ((ret = sync_local_check(c, "sync")))
		return ret;
	ret = rpmemctl_pool_set_state(p, RPMEMCTL_POOL_CONSISTENT, src);
	sync_phase(c, "SET_STATE consistent");
	return ret;
}

/* sync_pull -- read the differing ranges into the local buffer */
int sync_pull(struct sync_ctx *c)
{
	uint64_t moved = 0;
	int ret = move_ranges(c, 0, &moved);
	if (ret)
		return ret;
	sync_progress(c, moved, c->st.bytes_differ, 1);
	return 0;
}

/* sync_mirror -- every byte, no hashing: syncing, writes, flush, consistent */
int sync_mirror(struct sync_ctx *c)
{
	struct rpmemctl_pool *p = c->p;
	c->st.blocks_differ = c->nblocks; /* treated as all different */
	c->st.bytes_differ = c->size;
	if (c->o->flags & RPMEMCTL_SYNC_DRY_RUN)
		return 0;
	int ret = client_pool_set_syncing(p, c->o->source, c->size);
	sync_phase(c, "SET_STATE syncing");
	if (ret)
		return ret;
	for (uint64_t off = 0; off < c->size; off += RPMEM_MAX_IO) {
		size_t n = (size_t)sync_block_len(c, off, RPMEM_MAX_IO);
		struct rpmem_preserve_range pr = {
			off, c->size - off < MIRROR_PRESERVE ? c->size - off :
							       MIRROR_PRESERVE
		};
		if (off % MIRROR_PRESERVE == 0 &&
		    (ret = client_pool_preserve(p, &pr, 1)))
			return ret;
		ret = paced_move(c, 1, off, n);
		if (ret)
			return ret;
		c->st.data_bytes += n;
		c->st.bytes_transferred += n;
		sync_progress(c, off + n, c->size, 0);
	}
	sync_phase(c, "the transfer");
	ret = rpmemctl_pool_flush(p, 0, c->size);
	sync_phase(c, "the flush");
	if (ret)
		return ret;
	sync_progress(c, c->size, c->size, 1);
	if ((ret = sync_local_check(c, "mirror")))
		return ret;
	ret = rpmemctl_pool_set_state(p, RPMEMCTL_POOL_CONSISTENT,
				      c->o->source);
	sync_phase(c, "SET_STATE consistent");
	return ret;
}
