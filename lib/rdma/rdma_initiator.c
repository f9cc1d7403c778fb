/* SPDX-License-Identifier: BSD-3-Clause */
/* rdma_initiator.c -- the RDMA data plane of an initiator (librpmemctl) */
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

/* a staging-ring allocation waiting for its work request to complete */
struct rdma_stage {
	uint64_t seq;   /* its work request */
	uint64_t end;   /* ring position after it */
	void *copy_dst; /* read: copy the ring bytes here on completion */
	uint64_t roff;  /* ring offset */
	size_t len;
};

struct rdma_client {
	struct rpmem_xport x; /* first: the transport interface */
	struct rpmem_log_sink log; /* its session's (fn NULL: the global) */
	char host[256];
	char port[RDMA_PORT_MAX + 1];
	uint64_t pool_size;
	int apm;
	unsigned qd;
	unsigned sig_every;
	unsigned read_chunk; /* bytes per RDMA READ */
	unsigned read_depth; /* RDMA READs in flight */
	int timeout_ms;
	int err;    /* sticky: 0 or -errno */
	int closed; /* CLOSED/LOST seen */
	char why[512]; /* the reason of the last failure (sticky once err) */

	struct rpma_peer *peer;
	struct rpma_conn *conn;
	struct rpma_cq *cq;
	int cq_fd;
	int ev_fd;
	struct rpma_mr_remote *rmr;

	uint64_t posted;   /* last sequence number posted */
	uint64_t done;     /* last sequence number known complete */
	uint64_t last_sig; /* last signalled sequence number posted */
	uint64_t last_zc;  /* last zero-copy write posted */
	uint64_t awaited;  /* flushes awaited (GPSPM barriers included) */
	uint64_t barriers; /* APM flushes posted and not awaited */

	void *base; /* attached local mapping (zero copy) */
	size_t base_len;
	struct rpma_mr_local *base_mr;

	uint8_t *ring; /* staging ring */
	struct rpma_mr_local *ring_mr;
	uint64_t ring_head, ring_tail; /* virtual positions */
	struct rdma_stage *fifo;
	unsigned fifo_cap, fifo_first, fifo_n;

	uint8_t *msg; /* GPSPM send + receive slots */
	struct rpma_mr_local *msg_mr;
	uint32_t flush_seq;
	int inline_ok; /* the target takes write + flush requests */
	uint32_t gp_out; /* GPSPM: the posted flush not finished yet, 0 none */
	uint64_t gp_seq; /* its send's work request */
	uint64_t gp_off, gp_len;
	int reply_ready;
	uint32_t reply_seq;
	int32_t reply_status;
};

/*
 * cl_set_err -- the first error makes the transport unusable; its reason
 * is the RDMA error just logged (rdma_err)
 */
static void cl_set_err(struct rdma_client *c, int err)
{
	if (!c->err) {
		c->err = err;
		rdma_take_err(c->why, sizeof(c->why));
	}
}

/* cl_fail_once -- a failure that leaves the transport usable: its reason */
static int cl_fail_once(struct rdma_client *c, int err)
{
	if (!c->err)
		rdma_take_err(c->why, sizeof(c->why));
	return err;
}

/* cl_fail -- a failing librpma call makes the transport unusable */
static int cl_fail(struct rdma_client *c, const char *what, int ret)
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

static void cl_wc(struct rdma_client *c, const struct ibv_wc *wc)
{
	if (wc->status != IBV_WC_SUCCESS) {
		int conn = wc->status == IBV_WC_WR_FLUSH_ERR ||
			   wc->status == IBV_WC_RETRY_EXC_ERR ||
			   wc->status == IBV_WC_RNR_RETRY_EXC_ERR;

		if (!c->err)
			rdma_err("rdma: %s to %s:%s failed: %s (vendor error 0x%x)",
				 wc->wr_id == RDMA_RECV_WRID ? "flush reply" :
							       "RDMA request",
				 c->host, c->port,
				 ibv_wc_status_str(wc->status), wc->vendor_err);
		cl_set_err(c, conn ? -ECONNRESET : -EIO);
		return;
	}
	if (wc->wr_id == RDMA_RECV_WRID) {
		const uint8_t *p = c->msg + RDMA_CL_RECV_OFF;

		if (wc->byte_len < RDMA_REP_LEN ||
		    le32_get(p) != RDMA_REP_MAGIC) {
			rdma_err("rdma: malformed flush reply from %s:%s (%u bytes)",
				 c->host, c->port, wc->byte_len);
			cl_set_err(c, -EPROTO);
			return;
		}
		c->reply_seq = le32_get(p + 4);
		c->reply_status = (int32_t)le32_get(p + 8);
		c->reply_ready = 1;
		return;
	}
	if (wc->wr_id > c->done)
		c->done = wc->wr_id;
}

/* cl_drain -- consume every available completion without blocking */
static void cl_drain(struct rdma_client *c)
{
	struct ibv_wc wc[16];
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
		if (n < (int)ARRAY_SIZE(wc))
			break;
	}
	cl_retire(c);
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

#define CL_WAIT_SEQ 0
#define CL_WAIT_REPLY 1

static void cl_posted(struct rdma_client *c, uint64_t seq, int flags)
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
	struct pollfd p[2] = {
		{ .fd = c->cq_fd, .events = POLLIN },
		{ .fd = c->ev_fd, .events = POLLIN },
	};
	int r = poll(p, 2, timeout_ms);

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
		r = rpma_cq_wait(c->cq);
		if (r && r != RPMA_E_NO_COMPLETION)
			return cl_fail(c, "rpma_cq_wait", r);
	}
	return 0;
}

/*
 * cl_wait -- until sequence number seq completed (CL_WAIT_SEQ) or a flush
 * reply arrived (CL_WAIT_REPLY); bounded by the timeout
 */
static int cl_wait(struct rdma_client *c, int what, uint64_t seq)
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
		if (what == CL_WAIT_SEQ ? c->done >= seq : c->reply_ready)
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
static int cl_next(struct rdma_client *c, int force, uint64_t *seq, int *flags)
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

static void cl_ring_push(struct rdma_client *c, uint64_t start, size_t n,
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
static int cl_enter(struct rdma_client *c, uint64_t off, uint64_t len)
{
	rdma_sink = &c->log;
	if (c->err)
		return c->err;
	if (!cl_range_ok(c, off, len))
		return cl_fail_once(c, -EINVAL);
	return 0;
}

/* cl_in_base -- 1 if [p, p + len) lies inside the attached mapping */
static int cl_in_base(struct rdma_client *c, const void *p, size_t len)
{
	uintptr_t a = (uintptr_t)p, b = (uintptr_t)c->base;

	return c->base_mr && a >= b && a - b <= c->base_len &&
	       len <= c->base_len - (a - b);
}

/* rdma_write -- post pipelined writes; errors may surface at the flush */
static int rdma_write(struct rpmem_xport *x, uint64_t off, const void *src,
		      size_t len)
{
	struct rdma_client *c = (struct rdma_client *)x;
	const uint8_t *s = src;
	int zc, ret, flags;
	uint64_t seq, start;

	ret = cl_enter(c, off, len);
	if (ret)
		return ret;
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
			/* waits may retire (and rewind) the ring: alloc last */
			ret = cl_next(c, 1, &seq, &flags);
			if (!ret)
				ret = cl_ring_alloc(c, n, &start);
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

/*
 * rdma_read -- pipelined reads, into the attached mapping or bounced.
 * At most read_depth reads of read_chunk bytes are in flight: a READ's
 * response leaves the target as one burst that nothing paces, and
 * Soft-RoCE then loses and retries whole bursts (measured in the VM bed:
 * 1 MiB reads ~1 MiB/s, 64 KiB reads ~20 MiB/s, as fast as writes), so
 * reads use small pieces and a small window; writes use the whole queue.
 */
static int rdma_read(struct rpmem_xport *x, uint64_t off, void *dst,
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
	zc = cl_in_base(c, dst, len);
	while (len) {
		size_t n = len < c->read_chunk ? len : c->read_chunk;

		if (i >= c->read_depth) {
			ret = cl_wait(c, CL_WAIT_SEQ,
				      win[(i - c->read_depth) % c->read_depth]);
			if (ret)
				return ret;
		}
		ret = cl_next(c, 1, &seq, &flags);
		if (ret)
			return ret;
		if (zc) {
			ret = rpma_read(c->conn, c->base_mr,
					(size_t)(d - (uint8_t *)c->base),
					c->rmr, off, n, flags,
					(void *)(uintptr_t)seq);
		} else {
			ret = cl_ring_alloc(c, n, &start);
			if (ret)
				return ret;
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
	ret = rpma_recv(c->conn, c->msg_mr, RDMA_CL_RECV_OFF, RDMA_MSG_SLOT,
			(void *)(uintptr_t)RDMA_RECV_WRID);
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
	uint8_t *p = c->msg + RDMA_SEND_OFF;
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
	ret = rpma_send(c->conn, c->msg_mr, RDMA_SEND_OFF,
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

/*
 * cl_poll_events -- the completion and connection events that came,
 * taken without blocking, and every completion drained
 */
static void cl_poll_events(struct rdma_client *c)
{
	(void)cl_events(c, 0);
	cl_drain(c);
}

/* rdma_flush -- every earlier write is persistent on the target */
static int rdma_flush(struct rpmem_xport *x, uint64_t off, uint64_t len)
{
	struct rdma_client *c = (struct rdma_client *)x;
	int ret;

	ret = cl_enter(c, off, len);
	if (ret)
		return ret;
	if (c->apm)
		return cl_flush_apm(c, off);
	return cl_flush_gpspm(c, off, len, NULL);
}

/*
 * rdma_flush_post -- rdma_flush's first half: the flush posted, *tok what
 * rdma_flush_done awaits (APM: its read's work request; GPSPM: its
 * request's number, one at a time)
 */
static int rdma_flush_post(struct rpmem_xport *x, uint64_t off, uint64_t len,
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
	ret = gp_post(c, off, len, NULL);
	*tok = c->gp_out;
	return ret;
}

/*
 * rdma_flush_done -- 1 once the posted flush tok completed (wait: until it
 * did; a GPSPM one that a later request finished already did), 0 if not
 * yet, or the failure
 */
static int rdma_flush_done(struct rpmem_xport *x, uint64_t tok, int wait)
{
	struct rdma_client *c = (struct rdma_client *)x;
	rdma_sink = &c->log;
	int ret;

	if (c->err)
		return c->err;
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

/* rdma_flush_serial -- GPSPM has one request out at a time; APM does not */
static int rdma_flush_serial(struct rpmem_xport *x)
{
	return !((struct rdma_client *)x)->apm;
}

/* rdma_wait_fd -- readable when a completion may have come */
static int rdma_wait_fd(struct rpmem_xport *x)
{
	return ((struct rdma_client *)x)->cq_fd;
}

/*
 * rdma_barrier -- [off, off + len) persistent on the target before any
 * later write is placed. APM: the read-after-write flush is posted behind
 * the writes and not awaited (the RC QP executes in order; its error, if
 * any, surfaces at the next wait: docs/ARCHITECTURE.md, "Ordered drains"
 * over RDMA). It waits when a zero-copy write is still in flight (the
 * application may store into its source once we return), and always with
 * GPSPM (one send slot, and the target's reply is what orders).
 */
static int rdma_barrier(struct rpmem_xport *x, uint64_t off, uint64_t len)
{
	struct rdma_client *c = (struct rdma_client *)x;
	int ret;
	uint64_t seq;

	ret = cl_enter(c, off, len);
	if (ret)
		return ret;
	if (!c->apm)
		return cl_flush_gpspm(c, off, len, NULL);
	if (c->last_zc > c->done)
		cl_drain(c);
	if (c->last_zc > c->done)
		return cl_flush_apm(c, off);
	c->barriers++;
	return cl_post_apm(c, off, 0, &seq);
}

/*
 * rdma_persist -- write and flush; with GPSPM, a small range travels
 * inside the flush request (one send instead of a write and a send)
 */
static int rdma_persist(struct rpmem_xport *x, uint64_t off, const void *src,
			size_t len)
{
	struct rdma_client *c = (struct rdma_client *)x;
	int ret;

	ret = cl_enter(c, off, len);
	if (ret)
		return ret;
	if (!c->apm && c->inline_ok && len <= RDMA_INLINE_MAX)
		return cl_flush_gpspm(c, off, len, src);
	ret = rdma_write(x, off, src, len);
	return ret ? ret : rdma_flush(x, off, len);
}

/* rdma_attach -- register the local pool mapping for zero-copy I/O */
static int rdma_attach(struct rpmem_xport *x, void *base, size_t len)
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

/* cl_free -- release everything of a (possibly partly built) client */
static void cl_free(struct rdma_client *c)
{
	if (c->conn) {
		if (!c->closed) {
			int ret = rpma_conn_disconnect(c->conn);

			if (ret)
				rdma_fail("rpma_conn_disconnect", ret);
			else
				rdma_wait_closed(c->conn, c->ev_fd);
		}
		(void)rpma_conn_delete(&c->conn);
	}
	(void)rpma_mr_remote_delete(&c->rmr);
	(void)rpma_mr_dereg(&c->base_mr);
	(void)rpma_mr_dereg(&c->ring_mr);
	(void)rpma_mr_dereg(&c->msg_mr);
	if (c->peer) {
		int ret = rpma_peer_delete(&c->peer);

		if (ret)
			rdma_fail("rpma_peer_delete", ret);
	}
	free(c->fifo);
	free(c->ring);
	free(c->msg);
	free(c);
	rdma_take_err(NULL, 0); /* what tearing down logged is no one's cause */
}

/* rdma_close -- log the flushes awaited and not, disconnect, release */
static void rdma_close(struct rpmem_xport *x)
{
	struct rdma_client *c = (struct rdma_client *)x;

	if (!x)
		return;
	rdma_sink = &c->log;
	rpmem_log_to(&c->log, LOG_INFO, "rdma: closing the connection to %s:%s (%s): %" PRIu64 " flushes awaited, %" PRIu64 " barriers not awaited",
		     c->host, c->port, c->apm ? "APM" : "GPSPM", c->awaited,
		     c->barriers);
	cl_free(c);
	rdma_sink = NULL;
}

/* rdma_errmsg -- the reason of the last failure, "" if none */
static const char *rdma_errmsg(struct rpmem_xport *x)
{
	return ((struct rdma_client *)x)->why;
}

static const struct rpmem_xport_ops rdma_ops = {
	.name = "rdma",
	.attach = rdma_attach,
	.write = rdma_write,
	.read = rdma_read,
	.flush = rdma_flush,
	.flush_post = rdma_flush_post,
	.flush_done = rdma_flush_done,
	.wait_fd = rdma_wait_fd,
	.flush_serial = rdma_flush_serial,
	.barrier = rdma_barrier,
	.persist = rdma_persist,
	.close = rdma_close,
	.errmsg = rdma_errmsg,
};

/* cl_establish -- wait for ESTABLISHED; anything else is a clear error */
static int cl_establish(struct rdma_client *c)
{
	uint64_t end = rpmem_now_ns() + (uint64_t)c->timeout_ms * 1000000ull;
	enum rpma_conn_event ev;
	int ret;

	for (;;) {
		uint64_t now = rpmem_now_ns();

		if (now >= end) {
			rdma_err("rdma: no answer from %s:%s within %d s",
				 c->host, c->port, c->timeout_ms / 1000);
			return -ETIMEDOUT;
		}
		ret = rdma_poll1(c->ev_fd, (int)((end - now) / 1000000 + 1));
		if (ret < 0) {
			rdma_err("rdma: poll: %s", strerror(-ret));
			return ret;
		}
		if (!ret)
			continue;
		ret = rpma_conn_next_event(c->conn, &ev);
		if (ret == RPMA_E_NO_EVENT || ret == RPMA_E_UNKNOWN)
			continue;
		if (ret) {
			rdma_fail("rpma_conn_next_event", ret);
			return -EIO;
		}
		switch (ev) {
		case RPMA_CONN_ESTABLISHED:
			return 0;
		case RPMA_CONN_REJECTED:
			/*
			 * rdma_cm's REJECT: the target's listener refused the
			 * token (unknown, wrong, used or expired) or nothing
			 * listens on that port. The control connection works,
			 * so this is the target refusing, not a daemon that
			 * is down: -EKEYREJECTED, not -ECONNREFUSED.
			 */
			c->closed = 1;
			rdma_err("rdma: %s:%s rejected the data connection: the session token is unknown, wrong, already used or expired (or no RDMA listener on port %s)",
				 c->host, c->port, c->port);
			return -EKEYREJECTED;
		case RPMA_CONN_UNREACHABLE:
			c->closed = 1;
			rdma_err("rdma: %s:%s is unreachable over RDMA", c->host,
				 c->port);
			return -EHOSTUNREACH;
		default:
			c->closed = 1;
			rdma_err("rdma: connecting to %s:%s: %s", c->host, c->port,
				 rpma_utils_conn_event_2str(ev));
			return -ECONNRESET;
		}
	}
}

/* cl_connect -- connection request with the token, then wait for it */
static int cl_connect(struct rdma_client *c, const uint8_t *token)
{
	struct rpma_conn_cfg *cfg = NULL;
	struct rpma_conn_req *req = NULL;
	struct rpma_conn_private_data pd;
	uint8_t pdata[RDMA_PDATA_LEN];
	int ret;

	ret = rpma_conn_cfg_new(&cfg);
	if (ret) {
		rdma_fail("rpma_conn_cfg_new", ret);
		return rdma_errno(ret);
	}
	ret = rpma_conn_cfg_set_sq_size(cfg, c->qd + 8);
	if (!ret)
		ret = rpma_conn_cfg_set_rq_size(cfg, 4);
	if (!ret)
		ret = rpma_conn_cfg_set_cq_size(cfg, c->qd + 12);
	if (!ret)
		ret = rpma_conn_cfg_set_timeout(cfg, RDMA_RESOLVE_TIMEOUT_MS);
	if (ret) {
		rdma_fail("rpma_conn_cfg_set", ret);
		ret = rdma_errno(ret);
		goto err_cfg;
	}
	ret = rpma_conn_req_new(c->peer, c->host, c->port, cfg, &req);
	if (ret) {
		rdma_fail("rpma_conn_req_new", ret);
		rdma_err("rdma: cannot reach %s:%s over RDMA", c->host, c->port);
		ret = ret == RPMA_E_PROVIDER ? -EHOSTUNREACH : rdma_errno(ret);
		goto err_cfg;
	}
	/* the receive for the first flush reply is posted before connecting */
	ret = rpma_conn_req_recv(req, c->msg_mr, RDMA_CL_RECV_OFF, RDMA_MSG_SLOT,
				 (void *)(uintptr_t)RDMA_RECV_WRID);
	if (ret) {
		rdma_fail("rpma_conn_req_recv", ret);
		ret = rdma_errno(ret);
		goto err_req;
	}
	le32_put(pdata, RDMA_PDATA_MAGIC);
	memcpy(pdata + 4, token, RPMEM_TOKEN_LEN);
	pd.ptr = pdata;
	pd.len = sizeof(pdata);
	ret = rpma_conn_req_connect(&req, &pd, &c->conn); /* consumes req */
	if (ret) {
		rdma_fail("rpma_conn_req_connect", ret);
		ret = rdma_errno(ret);
		goto err_cfg;
	}
	(void)rpma_conn_cfg_delete(&cfg);
	return 0;

err_req:
	(void)rpma_conn_req_delete(&req);
err_cfg:
	(void)rpma_conn_cfg_delete(&cfg);
	return ret;
}

/* cl_use_apm -- APM only if the target offers it and the MR supports it */
static int cl_use_apm(struct rdma_client *c, const struct rdma_blob *b)
{
	struct rpma_peer_cfg *pcfg = NULL;
	int ft = 0, ret;

	if (b->mode != RDMA_MODE_APM)
		return 0;
	ret = rpma_mr_remote_get_flush_type(c->rmr, &ft);
	if (ret || !(ft & RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT)) {
		rpmem_log_to(&c->log, LOG_NOTICE, "rdma: %s:%s offers APM but its region does not support persistent flushes; using GPSPM",
			     c->host, c->port);
		return 0;
	}
	ret = rpma_peer_cfg_new(&pcfg);
	if (ret) {
		rdma_fail("rpma_peer_cfg_new", ret);
		return rdma_errno(ret);
	}
	ret = rpma_peer_cfg_set_direct_write_to_pmem(pcfg, true);
	if (!ret)
		ret = rpma_conn_apply_remote_peer_cfg(c->conn, pcfg);
	(void)rpma_peer_cfg_delete(&pcfg);
	if (ret) {
		rdma_fail("rpma_conn_apply_remote_peer_cfg", ret);
		return rdma_errno(ret);
	}
	c->apm = 1;
	return 0;
}

/*
 * cl_token -- the token to present: a v1 blob's own, or the one a v2
 * blob's nonce derives from the TLS session that carried it
 */
static int cl_token(const struct rdma_blob *b, struct rpmem_tls *tls,
		    uint8_t *token)
{
	if (b->version == RDMA_BLOB_VERSION) {
		/* a target that does not bind tokens (plaintext, or older) */
		memcpy(token, b->token, RPMEM_TOKEN_LEN);
		return 0;
	}
	if (!tls) {
		rdma_err("rdma: the target bound the session token to a TLS session, but this control connection has none");
		return -EPROTO;
	}
	return rdma_token_bind(tls, b->token, token);
}

int rpmem_rdma_client_new(const char *host, struct rpmem_tls *tls,
			  const void *blob, size_t blob_len,
			  uint64_t pool_size, const struct rpmem_log_sink *log,
			  struct rpmem_xport **out, char *errbuf,
			  size_t errlen)
{
	struct ibv_context *ibv = NULL;
	struct rdma_client *c;
	struct rdma_blob b;
	uint8_t token[RPMEM_TOKEN_LEN];
	size_t rsize = 0;
	int ret;

	if (errbuf && errlen)
		errbuf[0] = '\0';
	if (!host || !*host || !blob || !out || pool_size < 8)
		return -EINVAL;
	rdma_sink = log;
	rdma_init();
	ret = rdma_blob_decode(blob, blob_len, pool_size, &b);
	if (!ret)
		ret = cl_token(&b, tls, token);
	if (ret) {
		rdma_take_err(errbuf, errlen);
		return ret;
	}

	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->x.ops = &rdma_ops;
	c->x.type = RPMEM_XPORT_RDMA;
	if (log)
		c->log = *log;
	rdma_sink = &c->log;
	rpmem_strlcpy(c->host, host, sizeof(c->host));
	rpmem_strlcpy(c->port, b.port, sizeof(c->port));
	c->pool_size = pool_size;
	c->qd = rdma_env_uint("RPMEM_RDMA_QD", RDMA_QD_DEFAULT, RDMA_QD_MIN,
			      RDMA_QD_MAX);
	c->sig_every = c->qd / 4 ? c->qd / 4 : 1;
	c->read_chunk = rdma_env_uint("RPMEM_RDMA_READ_CHUNK",
				      RDMA_READ_CHUNK_DEFAULT, 4096,
				      RDMA_CHUNK);
	c->read_depth = rdma_env_uint("RPMEM_RDMA_READ_DEPTH",
				      RDMA_READ_DEPTH_DEFAULT, 1, c->qd);
	c->timeout_ms = (int)rdma_env_uint("RPMEM_RDMA_TIMEOUT",
					   RDMA_TIMEOUT_MS_DEFAULT / 1000, 1,
					   3600) * 1000;
	c->cq_fd = c->ev_fd = -1;

	ret = rpma_utils_get_ibv_context(host, RPMA_UTIL_IBV_CONTEXT_REMOTE,
					 &ibv);
	if (ret) {
		rpmem_log_to(&c->log, LOG_DEBUG,
			     "rpma_utils_get_ibv_context(%s): %s (%s)", host,
			     rpma_err_2str(ret), rdma_last);
		rdma_err("rdma: no RDMA device reaches %s", host);
		ret = -ENODEV;
		goto err_free;
	}
	ret = rpma_peer_new(ibv, &c->peer);
	if (ret) {
		rdma_fail("rpma_peer_new", ret);
		ret = rdma_errno(ret);
		goto err_free;
	}
	c->fifo_cap = c->qd + 1;
	c->fifo = calloc(c->fifo_cap, sizeof(*c->fifo));
	c->msg = aligned_alloc(4096, RDMA_CL_MSG_BUF);
	c->ring = aligned_alloc(4096, RDMA_RING_SIZE);
	if (!c->fifo || !c->msg || !c->ring) {
		ret = -ENOMEM;
		goto err_free;
	}
	memset(c->msg, 0, RDMA_CL_MSG_BUF);
	ret = rpma_mr_reg(c->peer, c->msg, RDMA_CL_MSG_BUF,
			  RPMA_MR_USAGE_SEND | RPMA_MR_USAGE_RECV, &c->msg_mr);
	if (ret) {
		ret = rdma_reg_failed("rpma_mr_reg", RDMA_CL_MSG_BUF, ret,
				      errno);
		goto err_free;
	}
	ret = rpma_mr_reg(c->peer, c->ring, RDMA_RING_SIZE,
			  RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_READ_DST,
			  &c->ring_mr);
	if (ret) {
		ret = rdma_reg_failed("rpma_mr_reg", RDMA_RING_SIZE, ret, errno);
		goto err_free;
	}

	ret = cl_connect(c, token);
	explicit_bzero(token, sizeof(token));
	if (ret)
		goto err_free;
	ret = rpma_conn_get_event_fd(c->conn, &c->ev_fd);
	if (!ret)
		ret = rpma_conn_get_cq(c->conn, &c->cq);
	if (!ret)
		ret = rpma_cq_get_fd(c->cq, &c->cq_fd);
	if (ret) {
		rdma_fail("rpma_conn_get_cq", ret);
		ret = rdma_errno(ret);
		goto err_free;
	}
	ret = cl_establish(c);
	if (ret)
		goto err_free;

	ret = rpma_mr_remote_from_descriptor(b.desc, b.desc_len, &c->rmr);
	if (ret) {
		rdma_fail("rpma_mr_remote_from_descriptor", ret);
		ret = -EPROTO;
		goto err_free;
	}
	ret = rpma_mr_remote_get_size(c->rmr, &rsize);
	if (ret || rsize != pool_size) {
		rdma_err("rdma: %s:%s registered %zu bytes for a pool of %" PRIu64,
			 host, c->port, rsize, pool_size);
		ret = -EPROTO;
		goto err_free;
	}
	ret = cl_use_apm(c, &b);
	if (ret)
		goto err_free;
	c->inline_ok = !!(b.flags & RDMA_BLOB_F_INLINE) &&
		       !getenv("RPMEM_RDMA_NO_INLINE");

	rpmem_log_to(&c->log, LOG_INFO, "rdma: connected to %s:%s (%s), %s persistence%s, queue depth %u",
		     host, c->port, ibv_get_device_name(ibv->device),
		     c->apm ? "APM" : "GPSPM",
		     (b.flags & RDMA_BLOB_F_STAGING) ?
			     " via a target staging buffer" : "",
		     c->qd);
	*out = &c->x;
	return 0;

err_free:
	explicit_bzero(token, sizeof(token));
	/* the first error logged on the way is the cause */
	rdma_take_err(errbuf, errlen);
	cl_free(c);
	rdma_sink = NULL; /* c is gone */
	return ret;
}
