/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdma_initiator_batch.c -- GPSPM with batch requests: barriers that do
 * not wait. Small writes travel inside numbered requests that the target
 * stores and persists in the order sent (docs/ARCHITECTURE.md, "Ordered
 * drains", GPSPM); a barrier adds nothing (the batch's order is the
 * order), a flush sends the open batch and waits for its answer, which
 * follows every earlier one; up to RDMA_SLOTS requests are in flight.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <librpma.h>

#include "log.h"
#include "util.h"
#include "wire.h"
#include "xport.h"
#include "rdma.h"
#include "rdma_int.h"
#include "rdma_initiator.h"

/* gb_slot -- the send buffer of request n */
static uint8_t *gb_slot(struct rdma_client *c, uint64_t n)
{
	return c->msg + RDMA_CL_REQ_OFF(n % RDMA_SLOTS);
}

/*
 * gb_open -- a batch open in the next request's slot: the request
 * RDMA_SLOTS before it answered and its send complete (waited for)
 */
static int gb_open(struct rdma_client *c)
{
	uint64_t n = c->gb_sent + 1;
	int ret;

	if (c->gb_len)
		return 0;
	if (n > RDMA_SLOTS) {
		ret = cl_wait(c, CL_WAIT_REPLY, n - RDMA_SLOTS);
		if (!ret)
			ret = cl_wait(c, CL_WAIT_SEQ,
				      c->gb_wr[n % RDMA_SLOTS]);
		if (ret)
			return ret;
	}
	c->gb_len = RDMA_REQB_LEN;
	c->gb_nent = 0;
	return 0;
}

/* gb_send -- send the open batch, if any, without waiting */
int gb_send(struct rdma_client *c)
{
	uint64_t n = c->gb_sent + 1, seq;
	uint8_t *p = gb_slot(c, n);
	int flags, ret;

	if (!c->gb_len)
		return 0;
	/*
	 * one send in RDMA_SLOTS / 2 signalled: the reply is what is
	 * awaited, and gb_open, reusing a slot RDMA_SLOTS requests later,
	 * finds a signalled send at or after the slot's own
	 */
	ret = cl_next(c, n % (RDMA_SLOTS / 2) == 0, &seq, &flags);
	if (ret)
		return ret;
	le32_put(p, RDMA_REQB_MAGIC);
	le32_put(p + 4, (uint32_t)n);
	le32_put(p + 8, c->gb_nent);
	le32_put(p + 12, 0);
	ret = rpma_send(c->conn, c->msg_mr, RDMA_CL_REQ_OFF(n % RDMA_SLOTS),
			c->gb_len, flags, (void *)(uintptr_t)seq);
	if (ret)
		return cl_fail(c, "rpma_send", ret);
	cl_posted(c, seq, flags);
	c->gb_wr[n % RDMA_SLOTS] = seq;
	c->gb_sent = n;
	c->gb_len = 0;
	return 0;
}

/* gb_add -- an entry (with len bytes of data, or none) in the open batch */
static int gb_add(struct rdma_client *c, uint64_t off, uint64_t len,
		  const void *data)
{
	uint32_t need = RDMA_ENT_LEN + (data ? (uint32_t)((len + 7) & ~7ull) : 0);
	uint8_t *p;
	int ret;

	if (c->gb_len && c->gb_len + need > RDMA_BATCH_MAX &&
	    (ret = gb_send(c)))
		return ret;
	if ((ret = gb_open(c)))
		return ret;
	p = gb_slot(c, c->gb_sent + 1) + c->gb_len;
	le64_put(p, off);
	le32_put(p + 8, (uint32_t)len);
	le32_put(p + 12, data ? RDMA_ENT_DATA : 0);
	if (data) {
		memcpy(p + RDMA_ENT_LEN, data, (size_t)len);
		memset(p + RDMA_ENT_LEN + len, 0, need - RDMA_ENT_LEN - len);
	}
	c->gb_len += need;
	c->gb_nent++;
	return 0;
}

/* gb_settle -- every request sent and answered (the open batch too) */
int gb_settle(struct rdma_client *c)
{
	int ret = gb_send(c);

	return ret ? ret : cl_wait(c, CL_WAIT_REPLY, c->gb_sent);
}

/* gb_note_direct -- [off, off + len) was RDMA-written: persist it later */
static void gb_note_direct(struct rdma_client *c, uint64_t off, uint64_t len)
{
	unsigned n = c->gb_ndir;

	if (n && off <= c->gb_dir[n - 1].off + c->gb_dir[n - 1].len &&
	    off + len >= c->gb_dir[n - 1].off) {
		uint64_t lo = off < c->gb_dir[n - 1].off ? off :
							    c->gb_dir[n - 1].off;
		uint64_t e1 = c->gb_dir[n - 1].off + c->gb_dir[n - 1].len;
		uint64_t hi = off + len > e1 ? off + len : e1;

		c->gb_dir[n - 1].off = lo;
		c->gb_dir[n - 1].len = hi - lo;
		return;
	}
	if (n == ARRAY_SIZE(c->gb_dir)) { /* full: one range over all */
		uint64_t lo = off, hi = off + len;

		for (unsigned i = 0; i < n; i++) {
			if (c->gb_dir[i].off < lo)
				lo = c->gb_dir[i].off;
			if (c->gb_dir[i].off + c->gb_dir[i].len > hi)
				hi = c->gb_dir[i].off + c->gb_dir[i].len;
		}
		c->gb_dir[0].off = lo;
		c->gb_dir[0].len = hi - lo;
		c->gb_ndir = 1;
		return;
	}
	c->gb_dir[n].off = off;
	c->gb_dir[n].len = len;
	c->gb_ndir = n + 1;
}

/*
 * gb_write -- a write: up to RDMA_BATCH_DATA_MAX bytes copied into the
 * open batch; a larger one is an RDMA write into the pool once every
 * earlier request has been applied (it lands without the target's CPU, so
 * it must not overtake a barrier's ranges, nor an older batched write to
 * the same bytes), its range persisted by the next request
 */
int gb_write(struct rdma_client *c, uint64_t off, const void *src,
	     size_t len)
{
	int ret;

	if (len <= RDMA_BATCH_DATA_MAX)
		return len ? gb_add(c, off, len, src) : 0;
	if (c->gb_len || c->gb_acked < c->gb_sent) {
		ret = gb_settle(c);
		if (ret)
			return ret;
	}
	ret = cl_write_direct(c, off, src, len);
	if (!ret)
		gb_note_direct(c, off, len);
	return ret;
}

/* gb_post -- the ranges RDMA-written named, the batch sent; *tok its number */
int gb_post(struct rdma_client *c, uint64_t *tok)
{
	int ret = 0;

	for (unsigned i = 0; i < c->gb_ndir && !ret; i++) {
		uint64_t off = c->gb_dir[i].off, end = off + c->gb_dir[i].len;

		/* an entry's length is 32 bits: a large range in pieces */
		for (; off < end && !ret; off += RDMA_ENT_RANGE_MAX)
			ret = gb_add(c, off,
				     end - off < RDMA_ENT_RANGE_MAX ?
					     end - off : RDMA_ENT_RANGE_MAX,
				     NULL);
	}
	if (ret)
		return ret;
	c->gb_ndir = 0;
	ret = gb_send(c);
	if (ret)
		return ret;
	c->gb_fence = c->gb_sent;
	*tok = c->gb_sent;
	return 0;
}

/* gb_flush -- everything written so far is persistent on the target */
int gb_flush(struct rdma_client *c)
{
	uint64_t tok;
	int ret = gb_post(c, &tok);

	c->awaited++;
	return ret ? ret : cl_wait(c, CL_WAIT_REPLY, tok);
}

/*
 * gb_barrier -- everything written so far is applied before anything
 * later, without waiting and without a send: the open batch's entries
 * are applied in order, so the barrier is where it stands in it; the
 * batch goes out with the next flush (a commit), when it is full, or at
 * a read or the close, as the TCP session holds frames that await no
 * reply. After an RDMA write from the local mapping it waits (the RNIC
 * may fetch the source after the application stored into it again, as
 * with APM)
 */
int gb_barrier(struct rdma_client *c)
{
	if (c->gb_ndir)
		return gb_flush(c);
	c->barriers++;
	return 0;
}

/* gb_done -- 1 once request tok was answered (wait: until it was), 0, -errno */
int gb_done(struct rdma_client *c, uint64_t tok, int wait)
{
	int ret;

	if (c->gb_acked >= tok)
		return 1;
	if (!wait) {
		cl_poll_events(c);
		return c->err ? c->err : c->gb_acked >= tok;
	}
	ret = cl_wait(c, CL_WAIT_REPLY, tok);
	return ret ? ret : 1;
}
