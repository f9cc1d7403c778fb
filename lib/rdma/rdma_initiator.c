/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdma_initiator.c -- the RDMA data plane of an initiator (librpmemctl):
 * connect, close, the operations table (the queue and the operations:
 * rdma_initiator_queue.c, rdma_initiator_io.c)
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
	/* batched writes not flushed yet reach the target as RDMA writes do */
	if (!c->apm && c->batch_ok && !c->err &&
	    (c->gb_len || c->gb_acked < c->gb_sent))
		(void)gb_settle(c);
	rpmem_log_to(&c->log, LOG_INFO, "rdma: closing the connection to %s:%s (%s): %" PRIu64 " flushes awaited, %" PRIu64 " barriers not awaited, %" PRIu64 " completion events",
		     c->host, c->port, c->apm ? "APM" : "GPSPM", c->awaited,
		     c->barriers, c->events);
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
	.flush_collect = rdma_flush_done,
	.wait_fd = rdma_wait_fd,
	.flush_serial = rdma_flush_serial,
	.barrier = rdma_barrier,
	.persist = rdma_persist,
	.close = rdma_close,
	.errmsg = rdma_errmsg,
	.wait_edge = 1,	   /* the completion channel's event */
	.reads_bypass = 1, /* one-sided: rpmemd sees no READ */
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
	ret = rpma_conn_cfg_set_sq_size(cfg, c->qd + RDMA_SLOTS + 8);
	if (!ret)
		ret = rpma_conn_cfg_set_rq_size(cfg, RDMA_SLOTS);
	if (!ret)
		ret = rpma_conn_cfg_set_cq_size(cfg, c->qd + 2 * RDMA_SLOTS + 12);
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
	/* the receives for flush replies are posted before connecting */
	for (unsigned i = 0; i < (c->batch_ok ? RDMA_SLOTS : 1u); i++) {
		ret = rpma_conn_req_recv(req, c->msg_mr, RDMA_CL_RECV_OFF(i),
					 RDMA_MSG_SLOT,
					 (void *)(uintptr_t)RDMA_RECV_WRID(i));
		if (ret) {
			rdma_fail("rpma_conn_req_recv", ret);
			ret = rdma_errno(ret);
			goto err_req;
		}
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

	/* GPSPM barriers need not wait where the target takes batches */
	c->batch_ok = !!(b.flags & RDMA_BLOB_F_BATCH) &&
		      !getenv("RPMEM_RDMA_NO_BATCH");
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

	rpmem_log_to(&c->log, LOG_INFO, "rdma: connected to %s:%s (%s), %s persistence%s%s, queue depth %u",
		     host, c->port, ibv_get_device_name(ibv->device),
		     c->apm ? "APM" : "GPSPM",
		     (b.flags & RDMA_BLOB_F_STAGING) ?
			     " via a target staging buffer" : "",
		     !c->apm && c->batch_ok ? ", batched requests" : "",
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
