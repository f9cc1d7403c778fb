/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdma_initiator_queue.c -- the initiator's work-request queue: sticky
 * errors, completions, bounded waits, the staging ring, the pipelined
 * writes posted on it (direct, or below a GPSPM batch)
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

/*
 * cl_set_err -- the first error makes the transport unusable; its reason
 * is the RDMA error just logged (rdma_err)
 */
void cl_set_err(struct rdma_client *c, int err)
{
	if (!c->err) {
		c->err = err;
		rdma_take_err(c->why, sizeof(c->why));
	}
}

/* cl_fail_once -- a failure that leaves the transport usable: its reason */
int cl_fail_once(struct rdma_client *c, int err)
{
	if (!c->err)
		rdma_take_err(c->why, sizeof(c->why));
	return err;
}

/* cl_fail -- a failing librpma call makes the transport unusable */
int cl_fail(struct rdma_client *c, const char *what, int ret)
{
	if (!c->err)
		rdma_fail(what, ret);
	cl_set_err(c, ret == RPMA_E_NOMEM ? -ENOMEM : -EIO);
	return c->err;
}

/* cl_retire -- free ring space (and copy out reads) of completed requests */
static void cl_retire(struct rdma_client *c)
{
	while (c->fifo_n) {
		struct rdma_stage *s = &c->fifo[c->fifo_first];

		if (s->seq > c->done)
			break;
		if (s->copy_dst)
			memcpy(s->copy_dst, c->ring + s->roff, s->len);
		c->ring_tail = s->end;
		c->fifo_first = (c->fifo_first + 1) % c->fifo_cap;
		c->fifo_n--;
	}
	if (!c->fifo_n)
		c->ring_head = c->ring_tail = 0;
}

/*
 * cl_reply -- the reply in receive slot i: batches: the next request in
 * order answered (a failure is sticky: later requests were refused), the
 * receive posted again; one request at a time: kept for gp_finish
 */
static void cl_reply(struct rdma_client *c, unsigned i, uint32_t byte_len)
{
	const uint8_t *p = c->msg + RDMA_CL_RECV_OFF(i);
	uint32_t seq;
	int32_t status;
	int ret;

	if (byte_len < RDMA_REP_LEN || le32_get(p) != RDMA_REP_MAGIC) {
		rdma_err("rdma: malformed flush reply from %s:%s (%u bytes)",
			 c->host, c->port, byte_len);
		cl_set_err(c, -EPROTO);
		return;
	}
	seq = le32_get(p + 4);
	status = (int32_t)le32_get(p + 8);
	if (!c->batch_ok) {
		c->reply_seq = seq;
		c->reply_status = status;
		c->reply_ready = 1;
		return;
	}
	if (seq != (uint32_t)(c->gb_acked + 1) || c->gb_acked >= c->gb_sent) {
		rdma_err("rdma: flush reply %u from %s:%s, expected %u",
			 seq, c->host, c->port, (uint32_t)(c->gb_acked + 1));
		cl_set_err(c, -EPROTO);
		return;
	}
	c->gb_acked++;
	if (status) {
		rdma_err("rdma: target %s:%s failed to persist a batch: %s",
			 c->host, c->port, strerror(status < 0 ? -status : EIO));
		cl_set_err(c, status < 0 ? status : -EIO);
		return;
	}
	ret = rpma_recv(c->conn, c->msg_mr, RDMA_CL_RECV_OFF(i), RDMA_MSG_SLOT,
			(void *)(uintptr_t)RDMA_RECV_WRID(i));
	if (ret)
		cl_fail(c, "rpma_recv", ret);
}

static void cl_wc(struct rdma_client *c, const struct ibv_wc *wc)
{
	if (wc->status != IBV_WC_SUCCESS) {
		int conn = wc->status == IBV_WC_WR_FLUSH_ERR ||
			   wc->status == IBV_WC_RETRY_EXC_ERR ||
			   wc->status == IBV_WC_RNR_RETRY_EXC_ERR;

		if (!c->err)
			rdma_err("rdma: %s to %s:%s failed: %s (vendor error 0x%x)",
				 RDMA_IS_RECV_WRID(wc->wr_id) ? "flush reply" :
								"RDMA request",
				 c->host, c->port,
				 ibv_wc_status_str(wc->status), wc->vendor_err);
		cl_set_err(c, conn ? -ECONNRESET : -EIO);
		return;
	}
	if (RDMA_IS_RECV_WRID(wc->wr_id)) {
		cl_reply(c, (unsigned)(UINT64_MAX - wc->wr_id), wc->byte_len);
		return;
	}
	if (wc->wr_id > c->done)
		c->done = wc->wr_id;
}

/*
 * cl_drain -- consume every available completion without blocking; how
 * many were taken
 */
unsigned cl_drain(struct rdma_client *c)
{
	struct ibv_wc wc[RDMA_WC_BATCH];
	unsigned got = 0;
	int n, ret;

	for (;;) {
		n = 0;
		ret = rpma_cq_get_wc(c->cq, (int)ARRAY_SIZE(wc), wc, &n);
		if (ret == RPMA_E_NO_COMPLETION)
			break;
		if (ret) {
			cl_fail(c, "rpma_cq_get_wc", ret);
			break;
		}
		for (int i = 0; i < n; i++)
			cl_wc(c, &wc[i]);
		got += (unsigned)n;
		if (n < (int)ARRAY_SIZE(wc))
			break;
	}
	cl_retire(c);
	return got;
}

/* cl_conn_event -- a connection event after ESTABLISHED is always fatal */
static void cl_conn_event(struct rdma_client *c)
{
	enum rpma_conn_event ev;
	int ret = rpma_conn_next_event(c->conn, &ev);

	if (ret == RPMA_E_NO_EVENT || ret == RPMA_E_UNKNOWN)
		return;
	if (ret) {
		cl_fail(c, "rpma_conn_next_event", ret);
		return;
	}
	if (ev == RPMA_CONN_CLOSED || ev == RPMA_CONN_LOST)
		c->closed = 1;
	if (!c->err)
		rdma_err("rdma: connection to %s:%s %s", c->host, c->port,
			 ev == RPMA_CONN_CLOSED ?
				 "closed by the target" :
				 rpma_utils_conn_event_2str(ev));
	cl_set_err(c, -ECONNRESET);
}

/* cl_posted -- work request seq was posted with these completion flags */
void cl_posted(struct rdma_client *c, uint64_t seq, int flags)
{
	c->posted = seq;
	if (flags == RPMA_F_COMPLETION_ALWAYS)
		c->last_sig = seq;
}

/*
 * cl_nop -- a signalled 8-byte read of the region into the scratch slot:
 * its completion proves that everything posted before it completed
 */
static int cl_nop(struct rdma_client *c)
{
	uint64_t seq = c->posted + 1;
	int ret;

	ret = rpma_read(c->conn, c->msg_mr, RDMA_SCRATCH_OFF, c->rmr, 0, 8,
			RPMA_F_COMPLETION_ALWAYS, (void *)(uintptr_t)seq);
	if (ret)
		return cl_fail(c, "rpma_read", ret);
	cl_posted(c, seq, RPMA_F_COMPLETION_ALWAYS);
	return 0;
}

/*
 * cl_events -- wait at most timeout_ms for a completion or connection
 * event and take what came (the completion channel re-armed); 0, or the
 * transport's failure (poll's or the completion channel's)
 */
static int cl_events(struct rdma_client *c, int timeout_ms)
{
	struct pollfd p[] = {
		{ .fd = c->cq_fd, .events = POLLIN },
		{ .fd = c->ev_fd, .events = POLLIN },
	};
	int r = poll(p, ARRAY_SIZE(p), timeout_ms);

	if (r < 0 && errno != EINTR) {
		r = errno;
		rdma_err("rdma: poll: %s", strerror(r));
		cl_set_err(c, -r);
		return c->err;
	}
	if (r <= 0)
		return 0;
	if (p[1].revents)
		cl_conn_event(c);
	if (p[0].revents) {
		c->events++;
		r = rpma_cq_wait(c->cq);
		if (r && r != RPMA_E_NO_COMPLETION)
			return cl_fail(c, "rpma_cq_wait", r);
	}
	return 0;
}

/*
 * cl_wait -- until sequence number seq completed (CL_WAIT_SEQ) or a flush
 * reply arrived (CL_WAIT_REPLY; with batches: request seq answered);
 * bounded by the timeout
 */
int cl_wait(struct rdma_client *c, int what, uint64_t seq)
{
	uint64_t end = rpmem_now_ns() + (uint64_t)c->timeout_ms * 1000000ull;

	/* only signalled requests complete visibly: make sure one follows */
	if (what == CL_WAIT_SEQ && seq > c->last_sig && seq > c->done &&
	    c->posted - c->done < c->qd) {
		int ret = cl_nop(c);

		if (ret)
			return ret;
	}
	for (;;) {
		uint64_t now;

		cl_drain(c);
		if (c->err)
			return c->err;
		if (what == CL_WAIT_SEQ	   ? c->done >= seq :
		    c->batch_ok		   ? c->gb_acked >= seq :
					     c->reply_ready)
			return 0;
		now = rpmem_now_ns();
		if (now >= end) {
			rdma_err("rdma: no completion from %s:%s within %d s",
				 c->host, c->port, c->timeout_ms / 1000);
			cl_set_err(c, -ETIMEDOUT);
			return c->err;
		}
		if (cl_events(c, (int)((end - now) / 1000000 + 1)))
			return c->err;
	}
}

/*
 * cl_next -- reserve a send-queue slot for the next work request; fills
 * its sequence number and completion flags (force: always signalled)
 */
int cl_next(struct rdma_client *c, int force, uint64_t *seq, int *flags)
{
	int ret;

	if (c->posted - c->done >= c->qd) {
		ret = cl_wait(c, CL_WAIT_SEQ, c->posted - c->qd + 1);
		if (ret)
			return ret;
	}
	*seq = c->posted + 1;
	*flags = (force || *seq % c->sig_every == 0) ?
			 RPMA_F_COMPLETION_ALWAYS :
			 RPMA_F_COMPLETION_ON_ERROR;
	return 0;
}

/* cl_ring_alloc -- n contiguous bytes of the staging ring; fills roff */
static int cl_ring_alloc(struct rdma_client *c, size_t n, uint64_t *start)
{
	for (;;) {
		uint64_t p = c->ring_head % RDMA_RING_SIZE;
		uint64_t pad = p + n > RDMA_RING_SIZE ? RDMA_RING_SIZE - p : 0;
		int ret;

		if (c->fifo_n < c->fifo_cap &&
		    c->ring_head + pad + n - c->ring_tail <= RDMA_RING_SIZE) {
			*start = c->ring_head + pad;
			return 0;
		}
		/* wait for the oldest allocation to complete */
		ret = cl_wait(c, CL_WAIT_SEQ, c->fifo[c->fifo_first].seq);
		if (ret)
			return ret;
	}
}

/*
 * cl_ring_next -- n bytes of the staging ring at *start and a send-queue
 * slot for the work request that uses them (cl_next's seq and flags),
 * with no wait between the two: a wait may post a signalled read that
 * takes the next sequence number (cl_nop), and may retire and rewind the
 * ring
 */
int cl_ring_next(struct rdma_client *c, size_t n, int force,
		 uint64_t *start, uint64_t *seq, int *flags)
{
	for (;;) {
		int ret = cl_ring_alloc(c, n, start);

		if (ret)
			return ret;
		if (c->posted - c->done < c->qd)
			return cl_next(c, force, seq, flags); /* no wait */
		ret = cl_wait(c, CL_WAIT_SEQ, c->posted - c->qd + 1);
		if (ret)
			return ret;
	}
}

void cl_ring_push(struct rdma_client *c, uint64_t start, size_t n,
		  uint64_t seq, void *copy_dst)
{
	struct rdma_stage *s =
		&c->fifo[(c->fifo_first + c->fifo_n) % c->fifo_cap];

	s->seq = seq;
	s->end = start + n;
	s->copy_dst = copy_dst;
	s->roff = start % RDMA_RING_SIZE;
	s->len = n;
	c->ring_head = s->end;
	c->fifo_n++;
}

static int cl_range_ok(struct rdma_client *c, uint64_t off, uint64_t len)
{
	if (off > c->pool_size || len > c->pool_size - off) {
		rdma_err("rdma: range %" PRIu64 "+%" PRIu64 " outside the pool (%" PRIu64 " bytes)",
			 off, len, c->pool_size);
		return 0;
	}
	return 1;
}

/*
 * cl_enter -- a call on [off, off + len) begins: the thread logs to the
 * client's session; 0, the transport's sticky failure, or -EINVAL for a
 * range outside the region
 */
int cl_enter(struct rdma_client *c, uint64_t off, uint64_t len)
{
	rdma_sink = &c->log;
	if (c->err)
		return c->err;
	if (!cl_range_ok(c, off, len))
		return cl_fail_once(c, -EINVAL);
	return 0;
}

/* cl_in_base -- 1 if [p, p + len) lies inside the attached mapping */
int cl_in_base(struct rdma_client *c, const void *p, size_t len)
{
	uintptr_t a = (uintptr_t)p, b = (uintptr_t)c->base;

	return c->base_mr && a >= b && a - b <= c->base_len &&
	       len <= c->base_len - (a - b);
}

/*
 * cl_poll_events -- the completions that came, taken without blocking:
 * from the CQ alone first (no system call); only if nothing came that
 * way, the completion and connection events (the channel re-armed) and
 * the CQ once more. A completion found before its event leaves the event
 * queued: the next look, or a wait's poll, takes it at once.
 */
void cl_poll_events(struct rdma_client *c)
{
	if (cl_drain(c) || c->err)
		return;
	(void)cl_events(c, 0);
	cl_drain(c);
}

/* cl_write_direct -- post pipelined writes; errors may surface later */
int cl_write_direct(struct rdma_client *c, uint64_t off, const void *src,
		    size_t len)
{
	const uint8_t *s = src;
	int zc, ret, flags;
	uint64_t seq, start;

	/* APM: a small write may be followed by an unawaited barrier */
	zc = cl_in_base(c, src, len) &&
	     !(c->apm && len <= RDMA_BARRIER_COPY_MAX);
	while (len) {
		size_t n = len < RDMA_CHUNK ? len : RDMA_CHUNK;

		if (zc) {
			ret = cl_next(c, 0, &seq, &flags);
			if (ret)
				return ret;
			ret = rpma_write(c->conn, c->rmr, off, c->base_mr,
					 (size_t)(s - (const uint8_t *)c->base),
					 n, flags, (void *)(uintptr_t)seq);
			if (!ret)
				c->last_zc = seq;
		} else {
			/*
			 * unsignalled but one in sig_every: the ring is freed
			 * by the next signalled completion, no wake-up each
			 */
			ret = cl_ring_next(c, n, 0, &start, &seq, &flags);
			if (ret)
				return ret;
			memcpy(c->ring + start % RDMA_RING_SIZE, s, n);
			ret = rpma_write(c->conn, c->rmr, off, c->ring_mr,
					 start % RDMA_RING_SIZE, n, flags,
					 (void *)(uintptr_t)seq);
			if (!ret)
				cl_ring_push(c, start, n, seq, NULL);
		}
		if (ret)
			return cl_fail(c, "rpma_write", ret);
		cl_posted(c, seq, flags);
		s += n;
		off += n;
		len -= n;
	}
	return 0;
}
