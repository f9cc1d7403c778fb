/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdma_initiator_io.c -- the initiator's data-plane operations: attach,
 * write, read, APM and GPSPM flushes, barrier, persist
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>
#include <librpma.h>

#include "log.h"
#include "util.h"
#include "wire.h"
#include "xport.h"
#include "rdma.h"
#include "rdma_int.h"
#include "rdma_initiator.h"

/* gb_mode -- GPSPM through batch requests */
static int gb_mode(const struct rdma_client *c)
{
	return !c->apm && c->batch_ok;
}

/* rdma_write -- post pipelined writes; errors may surface at the flush */
int rdma_write(struct rpmem_xport *x, uint64_t off, const void *src,
	       size_t len)
{
	struct rdma_client *c = (struct rdma_client *)x;
	int ret = cl_enter(c, off, len);

	if (ret)
		return ret;
	return gb_mode(c) ? gb_write(c, off, src, len) :
			    cl_write_direct(c, off, src, len);
}

/*
 * rdma_read -- pipelined reads, into the attached mapping or bounced.
 * At most read_depth reads of read_chunk bytes are in flight: a READ's
 * response leaves the target as one burst that nothing paces, and
 * Soft-RoCE then loses and retries whole bursts (measured in the VM bed:
 * 1 MiB reads ~1 MiB/s, 64 KiB reads ~20 MiB/s, as fast as writes), so
 * reads use small pieces and a small window; writes use the whole queue.
 */
int rdma_read(struct rpmem_xport *x, uint64_t off, void *dst,
	      size_t len)
{
	struct rdma_client *c = (struct rdma_client *)x;
	uint64_t win[RDMA_QD_MAX];
	uint8_t *d = dst;
	int zc, ret, flags;
	uint64_t seq = 0, start;
	unsigned i = 0;

	ret = cl_enter(c, off, len);
	if (ret)
		return ret;
	/* batched writes are in the pool once their requests were answered */
	if (gb_mode(c) && (c->gb_len || c->gb_acked < c->gb_sent) &&
	    (ret = gb_settle(c)))
		return ret;
	zc = cl_in_base(c, dst, len);
	while (len) {
		size_t n = len < c->read_chunk ? len : c->read_chunk;

		if (i >= c->read_depth) {
			ret = cl_wait(c, CL_WAIT_SEQ,
				      win[(i - c->read_depth) % c->read_depth]);
			if (ret)
				return ret;
		}
		ret = zc ? cl_next(c, 1, &seq, &flags) :
			   cl_ring_next(c, n, 1, &start, &seq, &flags);
		if (ret)
			return ret;
		if (zc) {
			ret = rpma_read(c->conn, c->base_mr,
					(size_t)(d - (uint8_t *)c->base),
					c->rmr, off, n, flags,
					(void *)(uintptr_t)seq);
		} else {
			ret = rpma_read(c->conn, c->ring_mr,
					start % RDMA_RING_SIZE, c->rmr, off, n,
					flags, (void *)(uintptr_t)seq);
			if (!ret)
				cl_ring_push(c, start, n, seq, d);
		}
		if (ret)
			return cl_fail(c, "rpma_read", ret);
		cl_posted(c, seq, flags);
		win[i++ % c->read_depth] = seq;
		d += n;
		off += n;
		len -= n;
	}
	return seq ? cl_wait(c, CL_WAIT_SEQ, seq) : 0;
}

/*
 * cl_post_apm -- post a read-after-write flush to the persistence domain
 * behind every earlier write (signalled if force); fills its seq
 */
static int cl_post_apm(struct rdma_client *c, uint64_t off, int force,
		       uint64_t *seq)
{
	int flags, ret;

	/* the RAW read is 8 bytes at off: keep it inside the region */
	if (off > c->pool_size - 8)
		off = c->pool_size - 8;
	ret = cl_next(c, force, seq, &flags);
	if (ret)
		return ret;
	ret = rpma_flush(c->conn, c->rmr, off, 8, RPMA_FLUSH_TYPE_PERSISTENT,
			 flags, (void *)(uintptr_t)*seq);
	if (ret)
		return cl_fail(c, "rpma_flush", ret);
	cl_posted(c, *seq, flags);
	return 0;
}

/* cl_flush_apm -- read-after-write flush, awaited */
static int cl_flush_apm(struct rdma_client *c, uint64_t off)
{
	uint64_t seq;
	int ret = cl_post_apm(c, off, 1, &seq);

	c->awaited++;
	return ret ? ret : cl_wait(c, CL_WAIT_SEQ, seq);
}

/*
 * gp_finish -- the posted GPSPM flush, if any, finished: its reply awaited
 * (the send slot and the reply slot free again) and its status returned
 */
static int gp_finish(struct rdma_client *c)
{
	uint32_t fseq = c->gp_out;
	int ret;

	if (!fseq)
		return 0;
	c->gp_out = 0;
	ret = cl_wait(c, CL_WAIT_REPLY, 0);
	if (!ret) /* the send buffer is reused by the next flush */
		ret = cl_wait(c, CL_WAIT_SEQ, c->gp_seq);
	if (ret)
		return ret;
	if (c->reply_seq != fseq) {
		rdma_err("rdma: flush reply %u from %s:%s, expected %u",
			 c->reply_seq, c->host, c->port, fseq);
		cl_set_err(c, -EPROTO);
		return c->err;
	}
	c->reply_ready = 0;
	ret = rpma_recv(c->conn, c->msg_mr, RDMA_CL_RECV_OFF(0), RDMA_MSG_SLOT,
			(void *)(uintptr_t)RDMA_RECV_WRID(0));
	if (ret)
		return cl_fail(c, "rpma_recv", ret);
	if (c->reply_status) {
		rdma_err("rdma: target %s:%s failed to persist %" PRIu64 "+%" PRIu64 ": %s",
			 c->host, c->port, c->gp_off, c->gp_len,
			 strerror(-c->reply_status));
		return cl_fail_once(c, c->reply_status < 0 ? c->reply_status :
							     -EIO);
	}
	return 0;
}

/*
 * gp_post -- ask the target to persist the range, its reply awaited by
 * gp_finish (one request at a time: an earlier one is finished first);
 * with data (len <= RDMA_INLINE_MAX bytes), the request carries them and
 * the target stores them at off first
 */
static int gp_post(struct rdma_client *c, uint64_t off, uint64_t len,
		   const void *data)
{
	uint8_t *p = c->msg + RDMA_CL_REQ_OFF(0);
	uint64_t seq;
	int flags, ret = gp_finish(c);

	if (ret)
		return ret;
	uint32_t fseq = ++c->flush_seq;
	if (!fseq) /* 0 means none outstanding */
		fseq = ++c->flush_seq;
	c->awaited++;
	ret = cl_next(c, 1, &seq, &flags);
	if (ret)
		return ret;
	le32_put(p, data ? RDMA_REQW_MAGIC : RDMA_REQ_MAGIC);
	le32_put(p + 4, fseq);
	le64_put(p + 8, off);
	le64_put(p + 16, len);
	if (data)
		memcpy(p + RDMA_REQ_LEN, data, (size_t)len);
	c->reply_ready = 0;
	ret = rpma_send(c->conn, c->msg_mr, RDMA_CL_REQ_OFF(0),
			RDMA_REQ_LEN + (data ? (size_t)len : 0), flags,
			(void *)(uintptr_t)seq);
	if (ret)
		return cl_fail(c, "rpma_send", ret);
	cl_posted(c, seq, flags);
	c->gp_out = fseq;
	c->gp_seq = seq;
	c->gp_off = off;
	c->gp_len = len;
	return 0;
}

/* cl_flush_gpspm -- ask the target to persist the range and wait */
static int cl_flush_gpspm(struct rdma_client *c, uint64_t off, uint64_t len,
			  const void *data)
{
	int ret = gp_post(c, off, len, data);
	return ret ? ret : gp_finish(c);
}

/* rdma_flush -- every earlier write is persistent on the target */
int rdma_flush(struct rpmem_xport *x, uint64_t off, uint64_t len)
{
	struct rdma_client *c = (struct rdma_client *)x;
	int ret;

	ret = cl_enter(c, off, len);
	if (ret)
		return ret;
	if (c->apm)
		return cl_flush_apm(c, off);
	if (c->batch_ok)
		return gb_flush(c);
	return cl_flush_gpspm(c, off, len, NULL);
}

/*
 * rdma_flush_post -- rdma_flush's first half: the flush posted, *tok what
 * rdma_flush_done awaits (APM: its read's work request; GPSPM: its
 * request's number, one at a time)
 */
int rdma_flush_post(struct rpmem_xport *x, uint64_t off, uint64_t len,
		    uint64_t *tok)
{
	struct rdma_client *c = (struct rdma_client *)x;
	int ret;

	ret = cl_enter(c, off, len);
	if (ret)
		return ret;
	if (c->apm) {
		c->awaited++;
		return cl_post_apm(c, off, 1, tok);
	}
	if (c->batch_ok) {
		c->awaited++;
		return gb_post(c, tok);
	}
	ret = gp_post(c, off, len, NULL);
	*tok = c->gp_out;
	return ret;
}

/*
 * rdma_flush_done -- 1 once the posted flush tok completed (wait: until it
 * did; a GPSPM one that a later request finished already did), 0 if not
 * yet, or the failure
 */
int rdma_flush_done(struct rpmem_xport *x, uint64_t tok, int wait)
{
	struct rdma_client *c = (struct rdma_client *)x;
	rdma_sink = &c->log;
	int ret;

	if (c->err)
		return c->err;
	if (gb_mode(c))
		return gb_done(c, tok, wait);
	if (c->apm && !wait) {
		cl_poll_events(c);
		return c->err ? c->err : c->done >= tok;
	}
	if (c->apm) {
		ret = cl_wait(c, CL_WAIT_SEQ, tok);
		return ret ? ret : 1;
	}
	if (c->gp_out != (uint32_t)tok)
		return 1;
	if (!wait) {
		cl_poll_events(c);
		if (c->err)
			return c->err;
		if (!c->reply_ready)
			return 0;
	}
	ret = gp_finish(c);
	return ret ? ret : 1;
}

/*
 * rdma_flush_serial -- GPSPM without batches has one request out at a
 * time; APM and batches do not
 */
int rdma_flush_serial(struct rpmem_xport *x)
{
	struct rdma_client *c = (struct rdma_client *)x;

	return !c->apm && !c->batch_ok;
}

/* rdma_wait_fd -- readable when a completion may have come */
int rdma_wait_fd(struct rpmem_xport *x)
{
	return ((struct rdma_client *)x)->cq_fd;
}

/*
 * rdma_barrier -- [off, off + len) persistent on the target before any
 * later write is placed, without waiting (docs/ARCHITECTURE.md, "Ordered
 * drains"). APM: nothing is posted: the RC QP places the writes in
 * order, and the order into the persistence domain rests on the platform
 * that direct_pmem declares, not on a read; the next awaited flush posts
 * the read that proves everything before it persistent. GPSPM with
 * batches: the open batch is sent (rdma_initiator_batch.c). Either waits
 * when a zero-copy write may still be in flight (the application may
 * store into its source once we return); GPSPM without batches always
 * waits (one send slot, and the target's reply is what orders).
 */
int rdma_barrier(struct rpmem_xport *x, uint64_t off, uint64_t len)
{
	struct rdma_client *c = (struct rdma_client *)x;
	int ret;

	ret = cl_enter(c, off, len);
	if (ret)
		return ret;
	if (gb_mode(c))
		return gb_barrier(c);
	if (!c->apm)
		return cl_flush_gpspm(c, off, len, NULL);
	if (c->last_zc > c->done)
		cl_drain(c);
	if (c->last_zc > c->done)
		return cl_flush_apm(c, off);
	c->barriers++;
	return 0;
}

/*
 * rdma_persist -- write and flush; with GPSPM, a small range travels
 * inside the flush request (one send instead of a write and a send)
 */
int rdma_persist(struct rpmem_xport *x, uint64_t off, const void *src,
		 size_t len)
{
	struct rdma_client *c = (struct rdma_client *)x;
	int ret;

	ret = cl_enter(c, off, len);
	if (ret)
		return ret;
	if (gb_mode(c)) {
		ret = gb_write(c, off, src, len);
		return ret ? ret : gb_flush(c);
	}
	if (!c->apm && c->inline_ok && len <= RDMA_INLINE_MAX)
		return cl_flush_gpspm(c, off, len, src);
	ret = rdma_write(x, off, src, len);
	return ret ? ret : rdma_flush(x, off, len);
}

/* rdma_attach -- register the local pool mapping for zero-copy I/O */
int rdma_attach(struct rpmem_xport *x, void *base, size_t len)
{
	struct rdma_client *c = (struct rdma_client *)x;
	rdma_sink = &c->log;
	struct rpma_mr_local *mr = NULL;
	int ret;

	if (c->err)
		return c->err;
	if (c->base_mr) {
		/* nothing in flight may still use the old registration */
		if (c->posted > c->done) {
			ret = cl_wait(c, CL_WAIT_SEQ, c->posted);
			if (ret)
				return ret;
		}
		(void)rpma_mr_dereg(&c->base_mr);
		c->base = NULL;
		c->base_len = 0;
	}
	if (!base || !len)
		return 0;
	ret = rpma_mr_reg(c->peer, base, len,
			  RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_READ_DST, &mr);
	if (ret) {
		rpmem_log_to(&c->log, LOG_DEBUG, "rdma: cannot register the local mapping (%s%s%s); copying through the staging buffer",
			     rpma_err_2str(ret), rdma_last[0] ? ": " : "",
			     rdma_last);
		rdma_last[0] = '\0';
		return 0;
	}
	c->base_mr = mr;
	c->base = base;
	c->base_len = len;
	rpmem_log_to(&c->log, LOG_DEBUG,
		     "rdma: local mapping of %zu bytes registered (zero copy)",
		     len);
	return 0;
}
