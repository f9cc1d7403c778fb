/* SPDX-License-Identifier: BSD-3-Clause */
/* rdma.c -- RDMA data plane over librpma (target listener and initiator) */

/*
 * Design (docs/RDMA.md has the long form):
 *
 * - This is the only file that includes <librpma.h>; librpma 1.2.0 is
 *   discontinued upstream, so nothing else may depend on it.
 *
 * - Target: one rpmem_rdma_srv per daemon owns an rpma_peer (protection
 *   domain) and an rpma_ep listening on addr:port, plus one listener
 *   thread that accepts connection requests. rpmem_rdma_expose registers
 *   ONLY the pool range and makes a single-use 16-byte random token. The
 *   initiator sends "RPMT" + token as connection private data; an
 *   unknown, wrong or already used token is rejected (rpma_conn_req_delete
 *   sends a REJECT). An accepted connection gets its own thread that
 *   serves GPSPM flush requests (send/recv) and connection events, so a
 *   slow persist in one session never blocks another one or the listener.
 *
 * - Persistence: APM (rpma_flush PERSISTENT, a read-after-write) is used
 *   only when the target declared direct write to PMem (cfg->apm), the
 *   mapping is PMem, the pool mapping itself is registered, and the MR
 *   descriptor carries FLUSH_TYPE_PERSISTENT. Otherwise GPSPM: after its
 *   writes the initiator sends {seq, off, len} on the same RC queue pair
 *   (in-order placement: the writes are in memory before the receive
 *   completes), the target validates the range, calls cfg->persist and
 *   replies {seq, status}. The target always serves GPSPM, so an
 *   initiator can fall back to it.
 *
 * - Staging: when the pool mapping cannot be registered (an FS-DAX file
 *   on an RNIC without On-Demand Paging, e.g. Soft-RoCE), a DRAM buffer
 *   of the pool's size is registered instead, initialised from the pool.
 *   Writes land there; each GPSPM flush copies the flushed range into the
 *   pool mapping and persists it; reads come from the buffer, which
 *   mirrors the pool. APM is never offered in this mode.
 *
 * - Initiator: one connection per opened pool, a single CQ (send and
 *   receive completions), a queue depth QD (RPMEM_RDMA_QD, default 64).
 *   Every work request gets a sequence number as its wr_id; only every
 *   QD/4-th one (and every one whose buffer must be recycled or waited
 *   for) is signalled. Send-queue completions arrive in order, so one
 *   signalled completion retires everything posted before it. Writes
 *   from the attached local mapping are zero copy (the mapping is read
 *   when the transfer happens, i.e. up to the next flush); other sources
 *   are copied into a registered 4 MiB staging ring. Large requests are
 *   cut into 1 MiB pieces.
 *
 * - Waiting never blocks without a bound: completions are polled first,
 *   then the completion channel fd and the connection event fd are
 *   poll()ed with the remaining time (RPMEM_RDMA_TIMEOUT seconds, default
 *   30); rpma_cq_wait is only called when the fd is readable, and an
 *   RPMA_E_NO_COMPLETION after it is retried. An error completion, a
 *   LOST/CLOSED event or a timeout becomes a sticky error returned by
 *   that call and every later one.
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
#include "transport.h"
#include "util.h"
#include "wire.h"

#define RDMA_BLOB_VERSION 1
#define RDMA_MODE_GPSPM 0
#define RDMA_MODE_APM 1
#define RDMA_BLOB_F_STAGING 1u
#define RDMA_BLOB_F_INLINE 2u /* accepts RPFW requests (write + flush) */
#define RDMA_PORT_MAX 15
#define RDMA_DESC_MAX 64

/* connection private data: magic + token */
#define RDMA_PDATA_MAGIC 0x544d5052u /* "RPMT" */
#define RDMA_PDATA_LEN (4 + RPMEM_TOKEN_LEN)

/*
 * GPSPM messages. A flush request (RPFL) names a range to persist; a
 * write + flush request (RPFW) carries up to RDMA_INLINE_MAX bytes after
 * the same 24-byte head, which the target stores at off before persisting
 * off + len: a small persist is one send instead of a write and a send.
 */
#define RDMA_REQ_MAGIC 0x4c465052u  /* "RPFL" */
#define RDMA_REQW_MAGIC 0x57465052u /* "RPFW" */
#define RDMA_REP_MAGIC 0x52465052u  /* "RPFR" */
#define RDMA_REQ_LEN 24 /* magic u32, seq u32, off u64, len u64 */
#define RDMA_REP_LEN 16 /* magic u32, seq u32, status i32, 0 u32 */
#define RDMA_INLINE_MAX 4096
#define RDMA_MSG_SLOT 64			      /* a reply, a nop read */
#define RDMA_REQ_SLOT (RDMA_INLINE_MAX + RDMA_MSG_SLOT) /* a request */
#define RDMA_SEND_OFF 0
#define RDMA_PAGE_UP(n) (((n) + 4095u) & ~4095u) /* aligned_alloc sizes */
/* initiator: request slot, reply slot, 8-byte nop read target */
#define RDMA_CL_RECV_OFF RDMA_REQ_SLOT
#define RDMA_SCRATCH_OFF (RDMA_REQ_SLOT + RDMA_MSG_SLOT)
#define RDMA_CL_MSG_BUF RDMA_PAGE_UP(RDMA_SCRATCH_OFF + 8)
/* target: reply slot, then RDMA_SRV_RECVS request slots */
#define RDMA_SRV_RECVS 4 /* flush requests pre-posted per connection */
#define RDMA_SRV_RECV_OFF(i) (RDMA_MSG_SLOT + (i) * RDMA_REQ_SLOT)
#define RDMA_SRV_MSG_BUF RDMA_PAGE_UP(RDMA_SRV_RECV_OFF(RDMA_SRV_RECVS))

#define RDMA_CHUNK (1u << 20)
#define RDMA_RING_SIZE (4u << 20)
#define RDMA_READ_CHUNK_DEFAULT (64u << 10)
#define RDMA_READ_DEPTH_DEFAULT 4
#define RDMA_QD_DEFAULT 64
#define RDMA_QD_MIN 4
#define RDMA_QD_MAX 1024
#define RDMA_TIMEOUT_MS_DEFAULT 30000
#define RDMA_CLOSE_TIMEOUT_MS 5000
#define RDMA_RESOLVE_TIMEOUT_MS 5000

#define RDMA_RECV_WRID UINT64_MAX

/* --- logging ------------------------------------------------------------ */

static pthread_once_t rdma_log_once = PTHREAD_ONCE_INIT;
/* the last message librpma logged in this thread, for our error messages */
static __thread char rdma_last[256];
static __thread int rdma_last_errno;

/* rdma_log_fn -- librpma's messages go to our log (debug level) */
__attribute__((format(printf, 5, 6))) static void
rdma_log_fn(enum rpma_log_level level, const char *file, const int line,
	    const char *func, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	int saved = errno;

	(void)file, (void)line;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	msg[strcspn(msg, "\n")] = '\0';
	if (level <= RPMA_LOG_LEVEL_WARNING) {
		rpmem_strlcpy(rdma_last, msg, sizeof(rdma_last));
		rdma_last_errno = saved;
	}
	DBG("librpma: %s%s%s", func ? func : "", func ? ": " : "", msg);
	errno = saved;
}

/* rdma_log_setup -- route librpma's log through ours, once per process */
static void rdma_log_setup(void)
{
	enum rpma_log_level lvl = RPMA_LOG_LEVEL_WARNING;

	if (rpmem_log_get_prio() >= LOG_DEBUG)
		lvl = RPMA_LOG_LEVEL_NOTICE;
	(void)rpma_log_set_function(rdma_log_fn);
	(void)rpma_log_set_threshold(RPMA_LOG_THRESHOLD, lvl);
	(void)rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_DISABLED);
}

static void rdma_init(void)
{
	(void)pthread_once(&rdma_log_once, rdma_log_setup);
	rdma_last[0] = '\0';
	rdma_last_errno = 0;
}

/* rdma_fail -- log a failing librpma call with its name and the detail */
static void rdma_fail(const char *what, int ret)
{
	if (rdma_last[0])
		ERR("%s: %s (%s)", what, rpma_err_2str(ret), rdma_last);
	else
		ERR("%s: %s", what, rpma_err_2str(ret));
	rdma_last[0] = '\0';
}

/* rdma_errno -- a librpma error code as -errno */
static int rdma_errno(int ret)
{
	switch (ret) {
	case 0:
		return 0;
	case RPMA_E_NOMEM:
		return -ENOMEM;
	case RPMA_E_INVAL:
		return -EINVAL;
	case RPMA_E_NOSUPP:
		return -ENOTSUP;
	case RPMA_E_AGAIN:
		return -EAGAIN;
	default:
		return -EIO;
	}
}

/*
 * rdma_memlock_limited -- 1 if a failed registration looks like the
 * RLIMIT_MEMLOCK limit (pinning refused with ENOMEM/EPERM/EAGAIN while a
 * finite limit is set); fills the limit
 */
static int rdma_memlock_limited(int saved_errno, unsigned long long *lim)
{
	int e = saved_errno ? saved_errno : rdma_last_errno;

	if (!rpmem_memlock_limit(lim))
		return 0;
	if (e == ENOMEM || e == EPERM || e == EAGAIN)
		return 1;
	return strstr(rdma_last, "Cannot allocate memory") ||
	       strstr(rdma_last, "Operation not permitted");
}

/* rdma_reg_failed -- log a failed rpma_mr_reg, with the memlock advice */
static int rdma_reg_failed(const char *what, size_t len, int ret,
			   int saved_errno)
{
	unsigned long long lim;
	char sz[32];

	if (rdma_memlock_limited(saved_errno, &lim)) {
		ERR("%s: cannot register %s for RDMA: %s (%s); this process's locked-memory limit is %llu bytes: raise RLIMIT_MEMLOCK (ulimit -l, or LimitMEMLOCK=infinity in the systemd unit that runs it: rpmemd.service on a target)",
		    what, rpmem_fmt_size(len, sz, sizeof(sz)),
		    rpma_err_2str(ret), rdma_last[0] ? rdma_last : "no detail",
		    lim);
		rdma_last[0] = '\0';
		return -ENOMEM;
	}
	rdma_fail(what, ret);
	return rdma_errno(ret);
}

/* rdma_env_uint -- an unsigned environment setting within [lo, hi] */
static unsigned rdma_env_uint(const char *name, unsigned def, unsigned lo,
			      unsigned hi)
{
	const char *s = getenv(name);
	char *end;
	unsigned long v;

	if (!s || !*s)
		return def;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < lo || v > hi) {
		WARN("rdma: ignoring %s=%s (expected %u..%u)", name, s, lo, hi);
		return def;
	}
	return (unsigned)v;
}

/* rdma_poll1 -- poll one fd for input; 1 ready, 0 timeout, -errno */
static int rdma_poll1(int fd, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int r;

	do
		r = poll(&p, 1, timeout_ms);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	return r > 0;
}

/*
 * rdma_wait_closed -- after rpma_conn_disconnect, consume connection
 * events until CLOSED/LOST or the timeout
 */
static void rdma_wait_closed(struct rpma_conn *conn, int ev_fd)
{
	uint64_t end = rpmem_now_ns() + RDMA_CLOSE_TIMEOUT_MS * 1000000ull;
	enum rpma_conn_event ev;

	for (;;) {
		uint64_t now = rpmem_now_ns();
		int r;

		if (now >= end) {
			DBG("rdma: no CLOSED event within %d ms",
			    RDMA_CLOSE_TIMEOUT_MS);
			return;
		}
		r = rdma_poll1(ev_fd, (int)((end - now) / 1000000 + 1));
		if (r < 0)
			return;
		if (!r)
			continue;
		r = rpma_conn_next_event(conn, &ev);
		if (r == RPMA_E_NO_EVENT || r == RPMA_E_UNKNOWN)
			continue;
		if (r || ev == RPMA_CONN_CLOSED || ev == RPMA_CONN_LOST)
			return;
	}
}

/* --- blob ----------------------------------------------------------------- */

/*
 * Blob v1 (all little-endian): u16 version | u8 mode (0 GPSPM, 1 APM) |
 * u8 flags (bit 0: staging) | u16 port length + port (<= 15 digits) |
 * 16-byte token | u64 pool size | u16 descriptor length (<= 64) +
 * descriptor. Nothing may follow.
 */
struct rdma_blob {
	unsigned mode;
	unsigned flags;
	char port[RDMA_PORT_MAX + 1];
	uint8_t token[RPMEM_TOKEN_LEN];
	uint64_t size;
	uint16_t desc_len;
	uint8_t desc[RDMA_DESC_MAX];
};

static int rdma_blob_encode(const struct rdma_blob *b, void *buf, size_t cap,
			    size_t *len)
{
	struct wbuf w;

	wbuf_init(&w, buf, cap);
	wbuf_u16(&w, RDMA_BLOB_VERSION);
	wbuf_u8(&w, (uint8_t)b->mode);
	wbuf_u8(&w, (uint8_t)b->flags);
	wbuf_str(&w, b->port, RDMA_PORT_MAX);
	wbuf_bytes(&w, b->token, RPMEM_TOKEN_LEN);
	wbuf_u64(&w, b->size);
	wbuf_u16(&w, b->desc_len);
	wbuf_bytes(&w, b->desc, b->desc_len);
	if (w.err)
		return -ENOBUFS;
	*len = w.len;
	return 0;
}

/* rdma_blob_decode -- parse and validate a blob from the wire */
static int rdma_blob_decode(const void *buf, size_t len, uint64_t pool_size,
			    struct rdma_blob *b)
{
	struct rbuf r;
	uint16_t ver;

	rbuf_init(&r, buf, len);
	ver = rbuf_u16(&r);
	if (r.err || ver != RDMA_BLOB_VERSION) {
		ERR("rdma: transport parameters of version %u, expected %u",
		    ver, RDMA_BLOB_VERSION);
		return -EPROTO;
	}
	b->mode = rbuf_u8(&r);
	b->flags = rbuf_u8(&r);
	rbuf_str(&r, b->port, sizeof(b->port));
	rbuf_bytes(&r, b->token, RPMEM_TOKEN_LEN);
	b->size = rbuf_u64(&r);
	b->desc_len = rbuf_u16(&r);
	if (!r.err && b->desc_len > RDMA_DESC_MAX) {
		ERR("rdma: invalid transport parameters: descriptor of %u bytes (at most %u)",
		    b->desc_len, RDMA_DESC_MAX);
		return -EPROTO;
	}
	rbuf_bytes(&r, b->desc, b->desc_len);
	if (r.err || rbuf_left(&r)) {
		ERR("rdma: invalid transport parameters (%zu bytes, %s)", len,
		    r.err ? "truncated" : "trailing bytes");
		return -EPROTO;
	}
	if (b->mode != RDMA_MODE_GPSPM && b->mode != RDMA_MODE_APM) {
		ERR("rdma: unknown persistence mode %u", b->mode);
		return -EPROTO;
	}
	if (!b->port[0] || strspn(b->port, "0123456789") != strlen(b->port)) {
		ERR("rdma: invalid RDMA port '%s' in the transport parameters",
		    b->port);
		return -EPROTO;
	}
	if (b->size != pool_size) {
		ERR("rdma: the target exposes %" PRIu64 " bytes, the pool has %" PRIu64,
		    b->size, pool_size);
		return -EPROTO;
	}
	return 0;
}

/* --- initiator ------------------------------------------------------------ */

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

	struct rpma_peer *peer;
	struct rpma_conn *conn;
	struct rpma_cq *cq;
	int cq_fd;
	int ev_fd;
	struct rpma_mr_remote *rmr;

	uint64_t posted;   /* last sequence number posted */
	uint64_t done;     /* last sequence number known complete */
	uint64_t last_sig; /* last signalled sequence number posted */

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
	int reply_ready;
	uint32_t reply_seq;
	int32_t reply_status;
};

static void cl_set_err(struct rdma_client *c, int err)
{
	if (!c->err)
		c->err = err;
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
			ERR("rdma: %s to %s:%s failed: %s (vendor error 0x%x)",
			    wc->wr_id == RDMA_RECV_WRID ? "flush reply" :
							  "RDMA request",
			    c->host, c->port, ibv_wc_status_str(wc->status),
			    wc->vendor_err);
		cl_set_err(c, conn ? -ECONNRESET : -EIO);
		return;
	}
	if (wc->wr_id == RDMA_RECV_WRID) {
		const uint8_t *p = c->msg + RDMA_CL_RECV_OFF;

		if (wc->byte_len < RDMA_REP_LEN ||
		    le32_get(p) != RDMA_REP_MAGIC) {
			ERR("rdma: malformed flush reply from %s:%s (%u bytes)",
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
		ERR("rdma: connection to %s:%s %s", c->host, c->port,
		    ev == RPMA_CONN_CLOSED ? "closed by the target" :
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
		struct pollfd p[2] = {
			{ .fd = c->cq_fd, .events = POLLIN },
			{ .fd = c->ev_fd, .events = POLLIN },
		};
		uint64_t now;
		int r;

		cl_drain(c);
		if (c->err)
			return c->err;
		if (what == CL_WAIT_SEQ ? c->done >= seq : c->reply_ready)
			return 0;
		now = rpmem_now_ns();
		if (now >= end) {
			ERR("rdma: no completion from %s:%s within %d s",
			    c->host, c->port, c->timeout_ms / 1000);
			cl_set_err(c, -ETIMEDOUT);
			return c->err;
		}
		r = poll(p, 2, (int)((end - now) / 1000000 + 1));
		if (r < 0 && errno != EINTR) {
			r = errno;
			ERR("rdma: poll: %s", strerror(r));
			cl_set_err(c, -r);
			return c->err;
		}
		if (r <= 0)
			continue;
		if (p[1].revents)
			cl_conn_event(c);
		if (p[0].revents) {
			r = rpma_cq_wait(c->cq);
			if (r && r != RPMA_E_NO_COMPLETION)
				return cl_fail(c, "rpma_cq_wait", r);
		}
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
		ERR("rdma: range %" PRIu64 "+%" PRIu64 " outside the pool (%" PRIu64 " bytes)",
		    off, len, c->pool_size);
		return 0;
	}
	return 1;
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

	if (c->err)
		return c->err;
	if (!cl_range_ok(c, off, len))
		return -EINVAL;
	zc = cl_in_base(c, src, len);
	while (len) {
		size_t n = len < RDMA_CHUNK ? len : RDMA_CHUNK;

		if (zc) {
			ret = cl_next(c, 0, &seq, &flags);
			if (ret)
				return ret;
			ret = rpma_write(c->conn, c->rmr, off, c->base_mr,
					 (size_t)(s - (const uint8_t *)c->base),
					 n, flags, (void *)(uintptr_t)seq);
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

	if (c->err)
		return c->err;
	if (!cl_range_ok(c, off, len))
		return -EINVAL;
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

/* cl_flush_apm -- read-after-write flush to the persistence domain */
static int cl_flush_apm(struct rdma_client *c, uint64_t off)
{
	uint64_t seq;
	int flags, ret;

	/* the RAW read is 8 bytes at off: keep it inside the region */
	if (off > c->pool_size - 8)
		off = c->pool_size - 8;
	ret = cl_next(c, 1, &seq, &flags);
	if (ret)
		return ret;
	ret = rpma_flush(c->conn, c->rmr, off, 8, RPMA_FLUSH_TYPE_PERSISTENT,
			 flags, (void *)(uintptr_t)seq);
	if (ret)
		return cl_fail(c, "rpma_flush", ret);
	cl_posted(c, seq, flags);
	return cl_wait(c, CL_WAIT_SEQ, seq);
}

/*
 * cl_flush_gpspm -- ask the target to persist the range and wait; with
 * data (len <= RDMA_INLINE_MAX bytes), the request carries them and the
 * target stores them at off first
 */
static int cl_flush_gpspm(struct rdma_client *c, uint64_t off, uint64_t len,
			  const void *data)
{
	uint8_t *p = c->msg + RDMA_SEND_OFF;
	uint32_t fseq = ++c->flush_seq;
	uint64_t seq;
	int flags, ret;

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
	ret = cl_wait(c, CL_WAIT_REPLY, 0);
	if (!ret) /* the send buffer is reused by the next flush */
		ret = cl_wait(c, CL_WAIT_SEQ, seq);
	if (ret)
		return ret;
	if (c->reply_seq != fseq) {
		ERR("rdma: flush reply %u from %s:%s, expected %u",
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
		ERR("rdma: target %s:%s failed to persist %" PRIu64 "+%" PRIu64 ": %s",
		    c->host, c->port, off, len, strerror(-c->reply_status));
		return c->reply_status < 0 ? c->reply_status : -EIO;
	}
	return 0;
}

/* rdma_flush -- every earlier write is persistent on the target */
static int rdma_flush(struct rpmem_xport *x, uint64_t off, uint64_t len)
{
	struct rdma_client *c = (struct rdma_client *)x;

	if (c->err)
		return c->err;
	if (!cl_range_ok(c, off, len))
		return -EINVAL;
	if (c->apm)
		return cl_flush_apm(c, off);
	return cl_flush_gpspm(c, off, len, NULL);
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

	if (c->err)
		return c->err;
	if (!cl_range_ok(c, off, len))
		return -EINVAL;
	if (!c->apm && c->inline_ok && len <= RDMA_INLINE_MAX)
		return cl_flush_gpspm(c, off, len, src);
	ret = rdma_write(x, off, src, len);
	return ret ? ret : rdma_flush(x, off, len);
}

/* rdma_attach -- register the local pool mapping for zero-copy I/O */
static int rdma_attach(struct rpmem_xport *x, void *base, size_t len)
{
	struct rdma_client *c = (struct rdma_client *)x;
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
		DBG("rdma: cannot register the local mapping (%s%s%s); copying through the staging buffer",
		    rpma_err_2str(ret), rdma_last[0] ? ": " : "", rdma_last);
		rdma_last[0] = '\0';
		return 0;
	}
	c->base_mr = mr;
	c->base = base;
	c->base_len = len;
	DBG("rdma: local mapping of %zu bytes registered (zero copy)", len);
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
}

static void rdma_close(struct rpmem_xport *x)
{
	if (x)
		cl_free((struct rdma_client *)x);
}

static const struct rpmem_xport_ops rdma_ops = {
	.name = "rdma",
	.attach = rdma_attach,
	.write = rdma_write,
	.read = rdma_read,
	.flush = rdma_flush,
	.persist = rdma_persist,
	.close = rdma_close,
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
			ERR("rdma: no answer from %s:%s within %d s",
			    c->host, c->port, c->timeout_ms / 1000);
			return -ETIMEDOUT;
		}
		ret = rdma_poll1(c->ev_fd, (int)((end - now) / 1000000 + 1));
		if (ret < 0) {
			ERR("rdma: poll: %s", strerror(-ret));
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
			c->closed = 1;
			ERR("rdma: %s:%s rejected the data connection: the session token is unknown, wrong or already used (or no RDMA listener on that port)",
			    c->host, c->port);
			return -ECONNREFUSED;
		case RPMA_CONN_UNREACHABLE:
			c->closed = 1;
			ERR("rdma: %s:%s is unreachable over RDMA", c->host,
			    c->port);
			return -EHOSTUNREACH;
		default:
			c->closed = 1;
			ERR("rdma: connecting to %s:%s: %s", c->host, c->port,
			    rpma_utils_conn_event_2str(ev));
			return -ECONNRESET;
		}
	}
}

/* cl_connect -- connection request with the token, then wait for it */
static int cl_connect(struct rdma_client *c, const struct rdma_blob *b)
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
		ERR("rdma: cannot reach %s:%s over RDMA", c->host, c->port);
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
	memcpy(pdata + 4, b->token, RPMEM_TOKEN_LEN);
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
		NOTICE("rdma: %s:%s offers APM but its region does not support persistent flushes; using GPSPM",
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

int rpmem_rdma_client_new(const char *host, const void *blob, size_t blob_len,
			  uint64_t pool_size, struct rpmem_xport **out)
{
	struct ibv_context *ibv = NULL;
	struct rdma_client *c;
	struct rdma_blob b;
	size_t rsize = 0;
	int ret;

	if (!host || !*host || !blob || !out || pool_size < 8)
		return -EINVAL;
	rdma_init();
	ret = rdma_blob_decode(blob, blob_len, pool_size, &b);
	if (ret)
		return ret;

	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->x.ops = &rdma_ops;
	c->x.type = RPMEM_XPORT_RDMA;
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
		DBG("rpma_utils_get_ibv_context(%s): %s (%s)", host,
		    rpma_err_2str(ret), rdma_last);
		ERR("rdma: no RDMA device reaches %s", host);
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

	ret = cl_connect(c, &b);
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
		ERR("rdma: %s:%s registered %zu bytes for a pool of %" PRIu64,
		    host, c->port, rsize, pool_size);
		ret = -EPROTO;
		goto err_free;
	}
	ret = cl_use_apm(c, &b);
	if (ret)
		goto err_free;
	c->inline_ok = !!(b.flags & RDMA_BLOB_F_INLINE) &&
		       !getenv("RPMEM_RDMA_NO_INLINE");

	INFO("rdma: connected to %s:%s (%s), %s persistence%s, queue depth %u",
	     host, c->port, ibv_get_device_name(ibv->device),
	     c->apm ? "APM" : "GPSPM",
	     (b.flags & RDMA_BLOB_F_STAGING) ? " via a target staging buffer" :
					       "",
	     c->qd);
	*out = &c->x;
	return 0;

err_free:
	cl_free(c);
	return ret;
}

int rpmem_rdma_usable(const char *addr)
{
	struct ibv_context *ibv = NULL;
	int ret;

	if (!addr || !*addr)
		return 0;
	rdma_init();
	ret = rpma_utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_LOCAL,
					 &ibv);
	rdma_last[0] = '\0';
	return ret == 0;
}

/* --- target --------------------------------------------------------------- */

enum expo_state {
	EXPO_WAITING,   /* token not used yet */
	EXPO_CONNECTED, /* a connection and its thread exist */
	EXPO_DONE,      /* the token was used; no new connection */
};

struct rpmem_rdma_expo {
	struct rpmem_rdma_srv *srv; /* NULL once the listener is gone */
	struct rpmem_rdma_expo *next;
	uint8_t token[RPMEM_TOKEN_LEN];
	enum expo_state state;
	struct rpmem_rdma_expo_cfg cfg;
	int apm;
	uint8_t *stage; /* DRAM staging copy, NULL if the pool is registered */
	struct rpma_mr_local *mr;
	uint8_t *msg;
	struct rpma_mr_local *msg_mr;
	struct rpma_conn *conn;
	struct rpma_cq *cq, *rcq;
	int stop_fd;
	pthread_t thread;
	int thread_started;
	int send_pending;
	uint64_t flushes;
	uint64_t inlined; /* of them, write + flush requests */
};

struct rpmem_rdma_srv {
	char addr[256];
	char port[RDMA_PORT_MAX + 1];
	struct rpma_peer *peer;
	struct rpma_ep *ep;
	struct rpma_conn_cfg *ccfg;
	int stop_fd;
	pthread_t thread;
	pthread_mutex_t lock;
	struct rpmem_rdma_expo *expos; /* under lock */
};

/* expo_stop_thread -- stop and join a connection thread, if any */
static void expo_stop_thread(struct rpmem_rdma_expo *e)
{
	if (!e->thread_started)
		return;
	(void)eventfd_write(e->stop_fd, 1);
	(void)pthread_join(e->thread, NULL);
	e->thread_started = 0;
}

/* expo_wait_send -- the previous reply's send completion (buffer reuse) */
static int expo_wait_send(struct rpmem_rdma_expo *e)
{
	struct ibv_wc wc;
	int fd, ret;

	(void)rpma_cq_get_fd(e->cq, &fd);
	while (e->send_pending) {
		ret = rpma_cq_get_wc(e->cq, 1, &wc, NULL);
		if (ret == RPMA_E_NO_COMPLETION) {
			ret = rdma_poll1(fd, RDMA_CLOSE_TIMEOUT_MS);
			if (ret <= 0) {
				ERR("rdma: flush reply not sent within %d ms",
				    RDMA_CLOSE_TIMEOUT_MS);
				return -ETIMEDOUT;
			}
			ret = rpma_cq_wait(e->cq);
			if (ret && ret != RPMA_E_NO_COMPLETION) {
				rdma_fail("rpma_cq_wait", ret);
				return -EIO;
			}
			continue;
		}
		if (ret) {
			rdma_fail("rpma_cq_get_wc", ret);
			return -EIO;
		}
		e->send_pending = 0;
		if (wc.status != IBV_WC_SUCCESS) {
			if (wc.status != IBV_WC_WR_FLUSH_ERR)
				ERR("rdma: flush reply send failed: %s",
				    ibv_wc_status_str(wc.status));
			return -ECONNRESET;
		}
	}
	return 0;
}

/*
 * expo_persist -- validate and persist one flushed range, first storing
 * the inline bytes of a write + flush request (data, or NULL); 0 or -errno
 */
static int expo_persist(struct rpmem_rdma_expo *e, uint64_t off, uint64_t len,
			const uint8_t *data)
{
	const struct rpmem_rdma_expo_cfg *cfg = &e->cfg;

	if (off > cfg->len || len > cfg->len - off) {
		WARN("rdma: flush request for %" PRIu64 "+%" PRIu64 " outside the pool (%zu bytes)",
		     off, len, cfg->len);
		return -EINVAL;
	}
	if (data && cfg->readonly) {
		WARN("rdma: write + flush request on a read-only session");
		return -EROFS;
	}
	if (!len)
		return 0;
	if (data) /* the staging copy, if any, stays the registered truth */
		memcpy((e->stage ? e->stage : (uint8_t *)cfg->addr) + off, data,
		       len);
	if (e->stage)
		memcpy((uint8_t *)cfg->addr + off, e->stage + off, len);
	return cfg->persist ? cfg->persist(cfg->arg, off, len) : 0;
}

/* expo_serve -- check and carry out one request; the reply's status */
static int expo_serve(struct rpmem_rdma_expo *e, const uint8_t *p,
		      uint32_t byte_len, uint32_t *seq)
{
	uint32_t magic = byte_len >= RDMA_REQ_LEN ? le32_get(p) : 0;
	uint64_t off, len;

	if (magic != RDMA_REQ_MAGIC && magic != RDMA_REQW_MAGIC) {
		WARN("rdma: malformed flush request (%u bytes)", byte_len);
		return -EPROTO;
	}
	*seq = le32_get(p + 4);
	off = le64_get(p + 8);
	len = le64_get(p + 16);
	e->flushes++;
	if (magic == RDMA_REQ_MAGIC)
		return expo_persist(e, off, len, NULL);
	if (len > RDMA_INLINE_MAX || byte_len != RDMA_REQ_LEN + len) {
		WARN("rdma: malformed write + flush request (%u bytes for %" PRIu64 " data bytes)",
		     byte_len, len);
		return -EPROTO;
	}
	e->inlined++;
	return expo_persist(e, off, len, p + RDMA_REQ_LEN);
}

/*
 * expo_request -- handle the request in receive slot `slot`: reply first,
 * then re-post the slot's receive (the initiator has one request in
 * flight and RDMA_SRV_RECVS receives are posted, so one is always ready)
 */
static int expo_request(struct rpmem_rdma_expo *e, unsigned slot,
			uint32_t byte_len)
{
	const uint8_t *p = e->msg + RDMA_SRV_RECV_OFF(slot);
	uint8_t *r = e->msg + RDMA_SEND_OFF;
	uint32_t seq = 0;
	int status, ret;

	status = expo_serve(e, p, byte_len, &seq);
	ret = expo_wait_send(e);
	if (ret)
		return ret;
	le32_put(r, RDMA_REP_MAGIC);
	le32_put(r + 4, seq);
	le32_put(r + 8, (uint32_t)status);
	le32_put(r + 12, 0);
	ret = rpma_send(e->conn, e->msg_mr, RDMA_SEND_OFF, RDMA_REP_LEN,
			RPMA_F_COMPLETION_ALWAYS, (void *)(uintptr_t)UINT32_MAX);
	if (ret) {
		rdma_fail("rpma_send", ret);
		return -EIO;
	}
	e->send_pending = 1;
	ret = rpma_recv(e->conn, e->msg_mr, RDMA_SRV_RECV_OFF(slot),
			RDMA_REQ_SLOT, (void *)(uintptr_t)(slot + 1));
	if (ret) {
		rdma_fail("rpma_recv", ret);
		return -EIO;
	}
	return 0;
}

/* expo_recv_all -- serve every received flush request; -errno to stop */
static int expo_recv_all(struct rpmem_rdma_expo *e)
{
	struct ibv_wc wc[RDMA_SRV_RECVS];
	int n, ret;

	ret = rpma_cq_wait(e->rcq);
	if (ret && ret != RPMA_E_NO_COMPLETION) {
		rdma_fail("rpma_cq_wait", ret);
		return -EIO;
	}
	for (;;) {
		n = 0;
		ret = rpma_cq_get_wc(e->rcq, RDMA_SRV_RECVS, wc, &n);
		if (ret == RPMA_E_NO_COMPLETION)
			return 0;
		if (ret) {
			rdma_fail("rpma_cq_get_wc", ret);
			return -EIO;
		}
		for (int i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				if (wc[i].status != IBV_WC_WR_FLUSH_ERR)
					ERR("rdma: flush request receive failed: %s",
					    ibv_wc_status_str(wc[i].status));
				return -ECONNRESET;
			}
			if (wc[i].wr_id < 1 || wc[i].wr_id > RDMA_SRV_RECVS)
				continue;
			ret = expo_request(e, (unsigned)wc[i].wr_id - 1,
					   wc[i].byte_len);
			if (ret)
				return ret;
		}
	}
}

/* expo_thread -- one accepted connection: GPSPM requests and events */
static void *expo_thread(void *arg)
{
	struct rpmem_rdma_expo *e = arg;
	enum rpma_conn_event ev;
	int ev_fd, rcq_fd, cq_fd, peer_closed = 0, ret;

	(void)rpma_conn_get_event_fd(e->conn, &ev_fd);
	(void)rpma_cq_get_fd(e->rcq, &rcq_fd);
	(void)rpma_cq_get_fd(e->cq, &cq_fd);
	for (;;) {
		struct pollfd p[4] = {
			{ .fd = e->stop_fd, .events = POLLIN },
			{ .fd = ev_fd, .events = POLLIN },
			{ .fd = rcq_fd, .events = POLLIN },
			{ .fd = cq_fd, .events = POLLIN },
		};

		ret = poll(p, 4, -1);
		if (ret < 0 && errno == EINTR)
			continue;
		if (ret < 0 || p[0].revents)
			break;
		if (p[1].revents) {
			ret = rpma_conn_next_event(e->conn, &ev);
			if (ret == RPMA_E_NO_EVENT || ret == RPMA_E_UNKNOWN)
				continue;
			if (ret) {
				rdma_fail("rpma_conn_next_event", ret);
				break;
			}
			if (ev == RPMA_CONN_ESTABLISHED) {
				INFO("rdma: session connected (%s%s)",
				     e->apm ? "APM" : "GPSPM",
				     e->stage ? ", staging buffer" : "");
				continue;
			}
			INFO("rdma: session disconnected (%s) after %" PRIu64 " GPSPM flushes (%" PRIu64 " with inline data)",
			     rpma_utils_conn_event_2str(ev), e->flushes,
			     e->inlined);
			peer_closed = 1;
			break;
		}
		if (p[2].revents && expo_recv_all(e))
			break;
		if (p[3].revents && e->send_pending) {
			(void)rpma_cq_wait(e->cq);
			if (expo_wait_send(e))
				break;
		} else if (p[3].revents) {
			(void)rpma_cq_wait(e->cq);
		}
	}
	if (!peer_closed) {
		ret = rpma_conn_disconnect(e->conn);
		if (ret)
			rdma_fail("rpma_conn_disconnect", ret);
		else
			rdma_wait_closed(e->conn, ev_fd);
	} else {
		(void)rpma_conn_disconnect(e->conn);
	}
	ret = rpma_conn_delete(&e->conn);
	if (ret)
		rdma_fail("rpma_conn_delete", ret);
	return NULL;
}

/* srv_find -- the waiting exposure with this token (constant time) */
static struct rpmem_rdma_expo *srv_find(struct rpmem_rdma_srv *s,
					const uint8_t *token)
{
	struct rpmem_rdma_expo *e, *found = NULL;

	for (e = s->expos; e; e = e->next) {
		unsigned diff = 0;

		for (int i = 0; i < RPMEM_TOKEN_LEN; i++)
			diff |= e->token[i] ^ token[i];
		if (!diff && e->state == EXPO_WAITING)
			found = e;
	}
	return found;
}

/* srv_accept -- take one connection request: accept a valid token only */
static void srv_accept(struct rpmem_rdma_srv *s)
{
	struct rpma_conn_req *req = NULL;
	struct rpma_conn_private_data pd = { 0 };
	struct rpmem_rdma_expo *e = NULL;
	const uint8_t *p;
	int ret;

	ret = rpma_ep_next_conn_req(s->ep, s->ccfg, &req);
	if (ret == RPMA_E_NO_EVENT)
		return;
	if (ret) {
		rdma_fail("rpma_ep_next_conn_req", ret);
		return;
	}
	ret = rpma_conn_req_get_private_data(req, &pd);
	p = pd.ptr;
	pthread_mutex_lock(&s->lock);
	if (!ret && p && pd.len >= RDMA_PDATA_LEN &&
	    le32_get(p) == RDMA_PDATA_MAGIC)
		e = srv_find(s, p + 4);
	if (!e) {
		pthread_mutex_unlock(&s->lock);
		WARN("rdma: rejected a connection on port %s: %s", s->port,
		     p && pd.len >= RDMA_PDATA_LEN &&
				     le32_get(p) == RDMA_PDATA_MAGIC ?
			     "unknown, wrong or already used session token" :
			     "no session token");
		(void)rpma_conn_req_delete(&req);
		return;
	}
	e->state = EXPO_DONE; /* single use, whatever happens next */
	for (unsigned i = 0; i < RDMA_SRV_RECVS; i++) {
		ret = rpma_conn_req_recv(req, e->msg_mr, RDMA_SRV_RECV_OFF(i),
					 RDMA_REQ_SLOT,
					 (void *)(uintptr_t)(i + 1));
		if (ret) {
			rdma_fail("rpma_conn_req_recv", ret);
			(void)rpma_conn_req_delete(&req);
			goto out;
		}
	}
	ret = rpma_conn_req_connect(&req, NULL, &e->conn);
	if (ret) {
		rdma_fail("rpma_conn_req_connect", ret);
		goto out;
	}
	ret = rpma_conn_get_cq(e->conn, &e->cq);
	if (!ret)
		ret = rpma_conn_get_rcq(e->conn, &e->rcq);
	if (!ret && !e->rcq)
		ret = RPMA_E_INVAL;
	if (ret) {
		rdma_fail("rpma_conn_get_rcq", ret);
		goto err_conn;
	}
	ret = pthread_create(&e->thread, NULL, expo_thread, e);
	if (ret) {
		ERR("rdma: pthread_create: %s", strerror(ret));
		goto err_conn;
	}
	e->thread_started = 1;
	e->state = EXPO_CONNECTED;
	DBG("rdma: accepted a session connection on port %s", s->port);
	goto out;

err_conn:
	(void)rpma_conn_disconnect(e->conn);
	(void)rpma_conn_delete(&e->conn);
out:
	pthread_mutex_unlock(&s->lock);
}

/* srv_thread -- the listener: connection requests until stopped */
static void *srv_thread(void *arg)
{
	struct rpmem_rdma_srv *s = arg;
	int ep_fd = -1;

	(void)rpma_ep_get_fd(s->ep, &ep_fd);
	for (;;) {
		struct pollfd p[2] = {
			{ .fd = s->stop_fd, .events = POLLIN },
			{ .fd = ep_fd, .events = POLLIN },
		};
		int r = poll(p, 2, -1);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			ERR("rdma: listener poll: %s", strerror(errno));
			break;
		}
		if (p[0].revents)
			break;
		if (p[1].revents)
			srv_accept(s);
	}
	return NULL;
}

int rpmem_rdma_srv_new(const char *addr, const char *port,
		       struct rpmem_rdma_srv **out)
{
	struct ibv_context *ibv = NULL;
	struct rpmem_rdma_srv *s;
	int ret;

	if (!addr || !*addr || !port || !*port || !out ||
	    strlen(port) > RDMA_PORT_MAX ||
	    strspn(port, "0123456789") != strlen(port))
		return -EINVAL;
	rdma_init();
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	rpmem_strlcpy(s->addr, addr, sizeof(s->addr));
	rpmem_strlcpy(s->port, port, sizeof(s->port));

	ret = rpma_utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_LOCAL,
					 &ibv);
	if (ret) {
		DBG("rpma_utils_get_ibv_context(%s): %s (%s)", addr,
		    rpma_err_2str(ret), rdma_last);
		ERR("rdma: no RDMA device serves the local address %s", addr);
		ret = -ENODEV;
		goto err_free;
	}
	ret = rpma_peer_new(ibv, &s->peer);
	if (ret) {
		rdma_fail("rpma_peer_new", ret);
		ret = rdma_errno(ret);
		goto err_free;
	}
	ret = rpma_ep_listen(s->peer, addr, port, &s->ep);
	if (ret) {
		rdma_fail("rpma_ep_listen", ret);
		ERR("rdma: cannot listen on %s:%s", addr, port);
		ret = ret == RPMA_E_PROVIDER ? -EADDRINUSE : rdma_errno(ret);
		goto err_peer;
	}
	ret = rpma_conn_cfg_new(&s->ccfg);
	if (ret) {
		rdma_fail("rpma_conn_cfg_new", ret);
		ret = rdma_errno(ret);
		goto err_ep;
	}
	ret = rpma_conn_cfg_set_sq_size(s->ccfg, 4);
	if (!ret)
		ret = rpma_conn_cfg_set_cq_size(s->ccfg, 4);
	if (!ret)
		ret = rpma_conn_cfg_set_rq_size(s->ccfg, RDMA_SRV_RECVS);
	if (!ret)
		ret = rpma_conn_cfg_set_rcq_size(s->ccfg, RDMA_SRV_RECVS);
	if (!ret)
		ret = rpma_conn_cfg_set_timeout(s->ccfg, RDMA_RESOLVE_TIMEOUT_MS);
	if (ret) {
		rdma_fail("rpma_conn_cfg_set", ret);
		ret = rdma_errno(ret);
		goto err_cfg;
	}
	s->stop_fd = eventfd(0, EFD_CLOEXEC);
	if (s->stop_fd < 0) {
		ret = -errno;
		ERR("rdma: eventfd: %s", strerror(errno));
		goto err_cfg;
	}
	pthread_mutex_init(&s->lock, NULL);
	ret = pthread_create(&s->thread, NULL, srv_thread, s);
	if (ret) {
		ERR("rdma: pthread_create: %s", strerror(ret));
		ret = -ret;
		goto err_mutex;
	}
	INFO("rdma: listening on %s:%s (%s)", addr, port,
	     ibv_get_device_name(ibv->device));
	*out = s;
	return 0;

err_mutex:
	pthread_mutex_destroy(&s->lock);
	close(s->stop_fd);
err_cfg:
	(void)rpma_conn_cfg_delete(&s->ccfg);
err_ep:
	(void)rpma_ep_shutdown(&s->ep);
err_peer:
	(void)rpma_peer_delete(&s->peer);
err_free:
	free(s);
	return ret;
}

void rpmem_rdma_srv_delete(struct rpmem_rdma_srv **sp)
{
	struct rpmem_rdma_srv *s;
	struct rpmem_rdma_expo *e;
	int ret;

	if (!sp || !*sp)
		return;
	s = *sp;
	(void)eventfd_write(s->stop_fd, 1);
	(void)pthread_join(s->thread, NULL);
	pthread_mutex_lock(&s->lock);
	if (s->expos)
		ERR("rdma: listener deleted while pools are still exposed; unexpose them first");
	while ((e = s->expos)) {
		/* disconnect; the owner still has to unexpose (and free) it */
		s->expos = e->next;
		e->next = NULL;
		e->srv = NULL;
		expo_stop_thread(e);
	}
	pthread_mutex_unlock(&s->lock);
	(void)rpma_ep_shutdown(&s->ep);
	(void)rpma_conn_cfg_delete(&s->ccfg);
	ret = rpma_peer_delete(&s->peer);
	if (ret)
		rdma_fail("rpma_peer_delete", ret); /* leaked: MRs remain */
	pthread_mutex_destroy(&s->lock);
	close(s->stop_fd);
	free(s);
	*sp = NULL;
}

/* expo_register -- register the pool, or a DRAM staging copy of it */
static int expo_register(struct rpmem_rdma_srv *s, struct rpmem_rdma_expo *e)
{
	const struct rpmem_rdma_expo_cfg *cfg = &e->cfg;
	/* a read-only open registers the pool for remote reads only */
	int usage = RPMA_MR_USAGE_READ_SRC |
		    (cfg->readonly ? 0 : RPMA_MR_USAGE_WRITE_DST);
	unsigned long long lim;
	char sz[32];
	int ret, saved;

	e->apm = cfg->apm && cfg->is_pmem && !cfg->readonly;
	ret = rpma_mr_reg(s->peer, cfg->addr, cfg->len,
			  usage | (e->apm ? RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT :
					    RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY),
			  &e->mr);
	saved = errno;
	if (!ret) {
		INFO("rdma: pool of %s registered in place (%s)",
		     rpmem_fmt_size(cfg->len, sz, sizeof(sz)),
		     e->apm ? "APM and GPSPM" : "GPSPM");
		return 0;
	}
	if (rdma_memlock_limited(saved, &lim))
		return rdma_reg_failed("rpma_mr_reg", cfg->len, ret, saved);

	INFO("rdma: cannot register the pool mapping (%s%s%s); serving it through a DRAM staging buffer of %s (GPSPM only)",
	     rpma_err_2str(ret), rdma_last[0] ? ": " : "", rdma_last,
	     rpmem_fmt_size(cfg->len, sz, sizeof(sz)));
	rdma_last[0] = '\0';
	e->apm = 0;
	e->stage = mmap(NULL, cfg->len, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (e->stage == MAP_FAILED) {
		e->stage = NULL;
		ERR("rdma: cannot allocate a staging buffer of %s: %s",
		    rpmem_fmt_size(cfg->len, sz, sizeof(sz)), strerror(errno));
		return -ENOMEM;
	}
	memcpy(e->stage, cfg->addr, cfg->len);
	ret = rpma_mr_reg(s->peer, e->stage, cfg->len,
			  usage | RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY, &e->mr);
	if (ret) {
		ret = rdma_reg_failed("rpma_mr_reg", cfg->len, ret, errno);
		munmap(e->stage, cfg->len);
		e->stage = NULL;
		return ret;
	}
	return 0;
}

int rpmem_rdma_expose(struct rpmem_rdma_srv *srv,
		      const struct rpmem_rdma_expo_cfg *cfg, void *blob,
		      size_t *blob_len, struct rpmem_rdma_expo **out)
{
	struct rpmem_rdma_expo *e;
	struct rdma_blob b = { 0 };
	size_t dsize = 0;
	int ret;

	if (!srv || !cfg || !cfg->addr || cfg->len < 8 || !blob ||
	    !blob_len || !out)
		return -EINVAL;
	rdma_init();
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->srv = srv;
	e->cfg = *cfg;
	e->state = EXPO_WAITING;
	ret = rpmem_random(e->token, sizeof(e->token));
	if (ret) {
		ERR("rdma: getrandom: %s", strerror(-ret));
		goto err_free;
	}
	e->stop_fd = eventfd(0, EFD_CLOEXEC);
	if (e->stop_fd < 0) {
		ret = -errno;
		ERR("rdma: eventfd: %s", strerror(errno));
		goto err_free;
	}
	e->msg = aligned_alloc(4096, RDMA_SRV_MSG_BUF);
	if (!e->msg) {
		ret = -ENOMEM;
		goto err_fd;
	}
	memset(e->msg, 0, RDMA_SRV_MSG_BUF);
	ret = rpma_mr_reg(srv->peer, e->msg, RDMA_SRV_MSG_BUF,
			  RPMA_MR_USAGE_SEND | RPMA_MR_USAGE_RECV, &e->msg_mr);
	if (ret) {
		ret = rdma_reg_failed("rpma_mr_reg", RDMA_SRV_MSG_BUF, ret,
				      errno);
		goto err_msg;
	}
	ret = expo_register(srv, e);
	if (ret)
		goto err_msg_mr;
	ret = rpma_mr_get_descriptor_size(e->mr, &dsize);
	if (!ret && dsize > RDMA_DESC_MAX)
		ret = RPMA_E_NOSUPP;
	if (!ret)
		ret = rpma_mr_get_descriptor(e->mr, b.desc);
	if (ret) {
		rdma_fail("rpma_mr_get_descriptor", ret);
		ret = rdma_errno(ret);
		goto err_mr;
	}
	b.mode = e->apm ? RDMA_MODE_APM : RDMA_MODE_GPSPM;
	b.flags = RDMA_BLOB_F_INLINE | (e->stage ? RDMA_BLOB_F_STAGING : 0);
	rpmem_strlcpy(b.port, srv->port, sizeof(b.port));
	memcpy(b.token, e->token, sizeof(b.token));
	b.size = cfg->len;
	b.desc_len = (uint16_t)dsize;
	ret = rdma_blob_encode(&b, blob, *blob_len, blob_len);
	if (ret) {
		ERR("rdma: transport parameters do not fit in %zu bytes",
		    *blob_len);
		goto err_mr;
	}
	pthread_mutex_lock(&srv->lock);
	e->next = srv->expos;
	srv->expos = e;
	pthread_mutex_unlock(&srv->lock);
	*out = e;
	return 0;

err_mr:
	(void)rpma_mr_dereg(&e->mr);
	if (e->stage)
		munmap(e->stage, cfg->len);
err_msg_mr:
	(void)rpma_mr_dereg(&e->msg_mr);
err_msg:
	free(e->msg);
err_fd:
	close(e->stop_fd);
err_free:
	free(e);
	return ret;
}

void rpmem_rdma_unexpose(struct rpmem_rdma_expo **ep)
{
	struct rpmem_rdma_expo *e, **pp;
	struct rpmem_rdma_srv *s;
	int ret;

	if (!ep || !*ep)
		return;
	e = *ep;
	s = e->srv;
	if (s) {
		/* the listener holds the lock while it accepts */
		pthread_mutex_lock(&s->lock);
		for (pp = &s->expos; *pp; pp = &(*pp)->next) {
			if (*pp == e) {
				*pp = e->next;
				break;
			}
		}
		pthread_mutex_unlock(&s->lock);
	}
	expo_stop_thread(e); /* disconnects and waits for CLOSED */
	ret = rpma_mr_dereg(&e->mr);
	if (ret)
		rdma_fail("rpma_mr_dereg", ret);
	if (e->stage)
		munmap(e->stage, e->cfg.len);
	(void)rpma_mr_dereg(&e->msg_mr);
	free(e->msg);
	close(e->stop_fd);
	explicit_bzero(e->token, sizeof(e->token));
	free(e);
	*ep = NULL;
}
