/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdma_target.c -- the RDMA data plane of a target (rpmemd only): the
 * listener and the exposed pool ranges
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
#include "rdma.h"
#include "rdma_int.h"

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
	int bound;	     /* the token is derived from a TLS session */
	unsigned ttl_s;	     /* RPMEM_RDMA_TOKEN_TTL */
	uint64_t expires_ns; /* a connection after this is refused */
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
	uint64_t replies; /* replies posted */
	uint64_t replied; /* of them, their send completed */
	int failed;	  /* a batch failed: later batches are refused */
	uint64_t flushes;
	uint64_t inlined; /* of them, write + flush requests */
	uint64_t batches; /* of them, batch requests */
	uint64_t wakeups; /* the connection thread's returns from poll */
#ifdef RPMEM_RDMA_TEST_REORDER
	struct reorder *ro; /* the test build's held request */
#endif
};

struct rpmem_rdma_srv {
	char addr[RPMEM_HOST_MAX];
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

static int expo_reap_sends(struct rpmem_rdma_expo *e);

/*
 * expo_wait_send -- until at most `out` replies are still being sent (a
 * reply slot is reused RDMA_SRV_RECVS replies later); bounded
 */
static int expo_wait_send(struct rpmem_rdma_expo *e, uint64_t out)
{
	int fd, ret;

	(void)rpma_cq_get_fd(e->cq, &fd);
	for (;;) {
		ret = expo_reap_sends(e);
		if (ret || e->replies - e->replied <= out)
			return ret;
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
	}
}

/*
 * expo_reap_sends -- take the reply completions that came, not waiting.
 * Replies are signalled one in RDMA_REP_SIG: one send queue completes in
 * order, so a signalled reply's completion is every earlier one's (its
 * work request id is its number); a failed one ends the session.
 */
static int expo_reap_sends(struct rpmem_rdma_expo *e)
{
	struct ibv_wc wc[RDMA_SRV_RECVS];
	int n, ret;

	while (e->replies > e->replied) {
		n = 0;
		ret = rpma_cq_get_wc(e->cq, RDMA_SRV_RECVS, wc, &n);
		if (ret == RPMA_E_NO_COMPLETION)
			return 0;
		if (ret) {
			rdma_fail("rpma_cq_get_wc", ret);
			return -EIO;
		}
		for (int i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				if (wc[i].status != IBV_WC_WR_FLUSH_ERR)
					ERR("rdma: flush reply send failed: %s",
					    ibv_wc_status_str(wc[i].status));
				return -ECONNRESET;
			}
			if (wc[i].wr_id >= e->replied)
				e->replied = wc[i].wr_id + 1;
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
	/* nothing reaches the mapping of a pool that may not change now */
	if ((data || e->stage) && cfg->may_write) {
		int ret = cfg->may_write(cfg->arg);
		if (ret)
			return ret;
	}
	if (data) /* the staging copy, if any, stays the registered truth */
		memcpy((e->stage ? e->stage : (uint8_t *)cfg->addr) + off, data,
		       len);
	if (e->stage)
		memcpy((uint8_t *)cfg->addr + off, e->stage + off, len);
	return cfg->persist ? cfg->persist(cfg->arg, off, len) : 0;
}

/*
 * expo_batch -- carry out a batch request's entries in order, each stored
 * and persisted before the next; the first failure stops it (and every
 * later batch of the session: the pool stays a prefix of the stream)
 */
static int expo_batch(struct rpmem_rdma_expo *e, const uint8_t *p,
		      uint32_t byte_len)
{
	uint32_t n = le32_get(p + 8), pos = RDMA_REQB_LEN;
	int ret = 0;

	e->batches++;
	if (e->failed)
		return e->failed;
	for (uint32_t i = 0; i < n && !ret; i++) {
		uint64_t off, len;
		uint32_t flags;
		const uint8_t *data = NULL;

		if (byte_len - pos < RDMA_ENT_LEN) {
			ret = -EPROTO;
			break;
		}
		off = le64_get(p + pos);
		len = le32_get(p + pos + 8);
		flags = le32_get(p + pos + 12);
		pos += RDMA_ENT_LEN;
		if (flags & RDMA_ENT_DATA) {
			uint64_t padded = (len + 7) & ~7ull;

			if (padded > byte_len - pos) {
				ret = -EPROTO;
				break;
			}
			data = p + pos;
			pos += (uint32_t)padded;
			e->inlined++;
		}
		e->flushes++;
		ret = expo_persist(e, off, len, data);
	}
	if (ret == -EPROTO)
		WARN("rdma: malformed batch request (%u bytes)", byte_len);
	if (ret)
		e->failed = ret;
	return ret;
}

/* expo_serve -- check and carry out one request; the reply's status */
static int expo_serve(struct rpmem_rdma_expo *e, const uint8_t *p,
		      uint32_t byte_len, uint32_t *seq)
{
	uint32_t magic = byte_len >= RDMA_REQB_LEN ? le32_get(p) : 0;
	uint64_t off, len;

	if (magic == RDMA_REQB_MAGIC) {
		*seq = le32_get(p + 4);
		return expo_batch(e, p, byte_len);
	}
	if (byte_len < RDMA_REQ_LEN ||
	    (magic != RDMA_REQ_MAGIC && magic != RDMA_REQW_MAGIC)) {
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

/* expo_reply -- answer request seq with status, in order of requests */
static int expo_reply(struct rpmem_rdma_expo *e, uint32_t seq, int status)
{
	size_t off = RDMA_SRV_REP_OFF(e->replies % RDMA_SRV_RECVS);
	uint8_t *r = e->msg + off;
	int ret;

	/* the slot's previous reply, RDMA_SRV_RECVS ago, has been sent */
	ret = expo_wait_send(e, RDMA_SRV_RECVS - 1);
	if (ret)
		return ret;
	le32_put(r, RDMA_REP_MAGIC);
	le32_put(r + 4, seq);
	le32_put(r + 8, (uint32_t)status);
	le32_put(r + 12, 0);
	/* signalled one in RDMA_REP_SIG: no wake-up for the others */
	ret = rpma_send(e->conn, e->msg_mr, off, RDMA_REP_LEN,
			e->replies % RDMA_REP_SIG == RDMA_REP_SIG - 1 ?
				RPMA_F_COMPLETION_ALWAYS :
				RPMA_F_COMPLETION_ON_ERROR,
			(void *)(uintptr_t)e->replies);
	if (ret) {
		rdma_fail("rpma_send", ret);
		return -EIO;
	}
	e->replies++;
	return 0;
}

/* expo_repost -- the receive of request slot `slot` posted again */
static int expo_repost(struct rpmem_rdma_expo *e, unsigned slot)
{
	int ret = rpma_recv(e->conn, e->msg_mr, RDMA_SRV_RECV_OFF(slot),
			    RDMA_REQ_SLOT, (void *)(uintptr_t)(slot + 1));

	if (ret) {
		rdma_fail("rpma_recv", ret);
		return -EIO;
	}
	return 0;
}

#ifdef RPMEM_RDMA_TEST_REORDER
#include "rdma_reorder.h"
#endif

/*
 * expo_request -- handle the request in receive slot `slot`: carry it out,
 * re-post the slot's receive, then reply (the initiator sends a request
 * only into a receive it knows is posted: at most RDMA_SRV_RECVS are
 * unanswered, and a reply is sent only once its slot is posted again)
 */
static int expo_request(struct rpmem_rdma_expo *e, unsigned slot,
			uint32_t byte_len)
{
	const uint8_t *p = e->msg + RDMA_SRV_RECV_OFF(slot);
	uint32_t seq = 0;
	int status, ret;

#ifdef RPMEM_RDMA_TEST_REORDER
	return reorder_request(e, slot, byte_len);
#endif
	status = expo_serve(e, p, byte_len, &seq);
	ret = expo_repost(e, slot);
	return ret ? ret : expo_reply(e, seq, status);
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
	int ev_fd, rcq_fd, peer_closed = 0, ret;

	(void)rpma_conn_get_event_fd(e->conn, &ev_fd);
	(void)rpma_cq_get_fd(e->rcq, &rcq_fd);
	for (;;) {
		struct pollfd p[] = {
			{ .fd = e->stop_fd, .events = POLLIN },
			{ .fd = ev_fd, .events = POLLIN },
			{ .fd = rcq_fd, .events = POLLIN },
		};

		ret = poll(p, sizeof(p) / sizeof(p[0]), -1);
		if (ret < 0 && errno == EINTR)
			continue;
		if (ret < 0 || p[0].revents)
			break;
		e->wakeups++;
		if (p[1].revents) {
			ret = rpma_conn_next_event(e->conn, &ev);
			if (ret == RPMA_E_NO_EVENT || ret == RPMA_E_UNKNOWN)
				continue;
			if (ret) {
				rdma_fail("rpma_conn_next_event", ret);
				break;
			}
			if (ev == RPMA_CONN_ESTABLISHED) {
				INFO("rdma: session connected (%s%s%s)",
				     e->apm ? "APM" : "GPSPM",
				     e->stage ? ", staging buffer" : "",
				     e->bound ? ", token bound to TLS" : "");
				continue;
			}
			INFO("rdma: session disconnected (%s) after %" PRIu64 " GPSPM flushes (%" PRIu64 " with inline data, %" PRIu64 " batches; %" PRIu64 " wake-ups)",
			     rpma_utils_conn_event_2str(ev), e->flushes,
			     e->inlined, e->batches, e->wakeups);
			peer_closed = 1;
			break;
		}
		/* the replies' completions are taken here, never waited for */
		if (p[2].revents && (expo_recv_all(e) || expo_reap_sends(e)))
			break;
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

/*
 * srv_find -- the waiting exposure with this token (constant time), or
 * NULL with the reason in why[wlen]; an expired one is retired on the way
 */
static struct rpmem_rdma_expo *srv_find(struct rpmem_rdma_srv *s,
					const uint8_t *token, char *why,
					size_t wlen)
{
	struct rpmem_rdma_expo *e, *found = NULL;
	uint64_t now = rpmem_now_ns();

	for (e = s->expos; e; e = e->next) {
		unsigned diff = 0;

		for (int i = 0; i < RPMEM_TOKEN_LEN; i++)
			diff |= e->token[i] ^ token[i];
		if (!diff)
			found = e;
	}
	if (!found) {
		snprintf(why, wlen, "unknown or wrong session token");
		return NULL;
	}
	if (found->state != EXPO_WAITING) {
		snprintf(why, wlen, "session token already used");
		return NULL;
	}
	if (now > found->expires_ns) {
		found->state = EXPO_DONE;
		snprintf(why, wlen,
			 "session token expired (no connection within %u s of the open)",
			 found->ttl_s);
		return NULL;
	}
	return found;
}

/* srv_accept -- take one connection request: accept a valid token only */
static void srv_accept(struct rpmem_rdma_srv *s)
{
	struct rpma_conn_req *req = NULL;
	struct rpma_conn_private_data pd = { 0 };
	struct rpmem_rdma_expo *e = NULL;
	char why[RPMEM_MSG_MAX] = "no session token";
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
		e = srv_find(s, p + 4, why, sizeof(why));
	if (!e) {
		pthread_mutex_unlock(&s->lock);
		WARN("rdma: rejected a connection on port %s: %s", s->port,
		     why);
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
		struct pollfd p[] = {
			{ .fd = s->stop_fd, .events = POLLIN },
			{ .fd = ep_fd, .events = POLLIN },
		};
		int r = poll(p, sizeof(p) / sizeof(p[0]), -1);

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
	ret = rpma_conn_cfg_set_sq_size(s->ccfg, RDMA_SRV_RECVS);
	if (!ret)
		ret = rpma_conn_cfg_set_cq_size(s->ccfg, RDMA_SRV_RECVS);
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
	char sz[RPMEM_SIZE_STR];
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
	if (cfg->stage) {
		saved = cfg->stage(cfg->arg, cfg->len);
		if (saved) {
			DBG("rdma: cannot register the pool mapping (%s%s%s); no staging buffer: %s",
			    rpma_err_2str(ret), rdma_last[0] ? ": " : "",
			    rdma_last, strerror(-saved));
			rdma_last[0] = '\0';
			return saved;
		}
	}

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
	e->cfg.tls = NULL; /* used here only, never kept */
	e->state = EXPO_WAITING;
	/* v1: the token itself; v2: the nonce the token is derived from */
	ret = rpmem_random(b.token, sizeof(b.token));
	if (ret) {
		ERR("rdma: getrandom: %s", strerror(-ret));
		goto err_free;
	}
	if (cfg->tls) {
		b.version = RDMA_BLOB_VERSION_TLS;
		e->bound = 1;
		ret = rdma_token_bind(cfg->tls, b.token, e->token);
		if (ret)
			goto err_free;
	} else {
		b.version = RDMA_BLOB_VERSION;
		memcpy(e->token, b.token, sizeof(e->token));
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
	b.flags = RDMA_BLOB_F_INLINE | RDMA_BLOB_F_BATCH |
		  (e->stage ? RDMA_BLOB_F_STAGING : 0);
	rpmem_strlcpy(b.port, srv->port, sizeof(b.port));
	b.size = cfg->len;
	b.desc_len = (uint16_t)dsize;
	ret = rdma_blob_encode(&b, blob, *blob_len, blob_len);
	if (ret) {
		ERR("rdma: transport parameters do not fit in %zu bytes",
		    *blob_len);
		goto err_mr;
	}
	pthread_mutex_lock(&srv->lock);
	e->ttl_s = rdma_env_uint("RPMEM_RDMA_TOKEN_TTL", RDMA_TOKEN_TTL_S, 1,
				 RDMA_TOKEN_TTL_MAX_S);
	e->expires_ns = rpmem_now_ns() + e->ttl_s * 1000000000ull;
	e->next = srv->expos;
	srv->expos = e;
	pthread_mutex_unlock(&srv->lock);
	explicit_bzero(&b, sizeof(b));
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
	explicit_bzero(e->token, sizeof(e->token));
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
#ifdef RPMEM_RDMA_TEST_REORDER
	if (e->ro && e->ro->n)
		WARN("rdma: TEST BUILD: %u answered requests dropped at the close, parts of them persisted",
		     e->ro->n);
	free(e->ro);
#endif
	free(e);
	*ep = NULL;
}

