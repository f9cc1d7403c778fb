/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tcp_initiator.c -- the TCP data plane of an initiator: WRITE/READ/FLUSH
 * frames on the control socket
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "client_pool.h"
#include "guard.h"
#include "net.h"
#include "util.h"

/* READ requests in flight at once, each of up to RPMEM_MAX_IO bytes */
#define TCP_READ_WINDOW 8
/* FLUSHes posted and not collected; one more first collects the oldest */
#define TCP_OWED_MAX 64

struct tcp_xport {
	struct rpmem_xport base; /* first: the generic handle points here */
	struct rpmemctl_session *s; /* not owned */
	uint32_t handle;
	/*
	 * FLUSHes posted (tcp_flush_post) whose OK is not collected yet:
	 * their request ids, oldest first (a ring from owed_head); each is
	 * owed on the session too (client_owe), where a read for another
	 * request, maybe another pool's on a shared session, keeps it
	 */
	uint32_t owed[TCP_OWED_MAX];
	unsigned owed_head, nowed;
};

static inline struct tcp_xport *tcp(struct rpmem_xport *x)
{
	return (struct tcp_xport *)x;
}

/* write_args -- one WRITE frame whose data comes from the local copy */
struct write_args {
	struct rpmemctl_session *s;
	const uint8_t *head;
	size_t hl;
	const uint8_t *data;
	size_t len;
};

/* send_write -- client_send of one WRITE (guarded) */
static int send_write(void *arg)
{
	struct write_args *a = arg;
	return client_send(a->s, RPMEM_MSG_WRITE, a->head, a->hl, a->data,
			   a->len, NULL);
}

/*
 * tcp_write -- WRITE frames of at most RPMEM_MAX_IO bytes, each sent with
 * one gathered write straight from src; no reply is awaited (a failure
 * on the target is reported by the next FLUSH)
 */
static int tcp_write(struct rpmem_xport *x, uint64_t off, const void *src,
		     size_t len)
{
	struct tcp_xport *t = tcp(x);
	const uint8_t *p = src;
	while (len) {
		uint32_t n = len < RPMEM_MAX_IO ? (uint32_t)len : RPMEM_MAX_IO;
		struct rpmem_msg_io io = { .handle = t->handle, .offset = off,
					   .len = n };
		uint8_t head[RPMEM_WRITE_HDR_SIZE];
		int hl = rpmem_io_encode(head, sizeof(head), &io);
		if (hl < 0)
			return hl;
		/*
		 * a local copy that shrank: send() says EFAULT (plaintext),
		 * TLS encryption reading it gets SIGBUS
		 */
		struct write_args a = { t->s, head, (size_t)hl, p, n };
		/* no reply: held until the next frame that awaits one */
		t->s->conn.more = 1;
		int ret = rpmem_guard_run(send_write, &a);
		t->s->conn.more = 0;
		if (ret == -EFAULT || ret == -EHWPOISON)
			return client_local_fault(t->s, ret,
						  "it was being sent");
		if (ret)
			return ret;
		p += n;
		off += n;
		len -= n;
	}
	return 0;
}

/* ranges up to this long go in gathered sends, longer ones on their own */
#define TCP_GATHER_MAX (64u << 10)

/* gather_args -- WRITE frames gathered into one send */
struct gather_args {
	struct rpmemctl_session *s;
	struct rpmem_frame *f;
	size_t n;
};

/* send_gathered -- client_send_frames of the gathered WRITEs (guarded) */
static int send_gathered(void *arg)
{
	struct gather_args *a = arg;
	return client_send_frames(a->s, a->f, a->n);
}

/*
 * tcp_write_ranges -- WRITE frames for n ranges of the local copy: short
 * ones (a fine pass's 4 KiB blocks) up to RPMEM_SEND_FRAMES_MAX in one
 * gathered send instead of one send each, long ones as tcp_write does
 */
static int tcp_write_ranges(struct rpmem_xport *x, const uint8_t *base,
			    const struct rpmem_xrange *r, size_t n)
{
	struct tcp_xport *t = tcp(x);
	struct rpmem_frame f[RPMEM_SEND_FRAMES_MAX];
	uint8_t head[RPMEM_SEND_FRAMES_MAX][RPMEM_WRITE_HDR_SIZE];
	size_t nf = 0;
	int ret;

	for (size_t i = 0; i <= n; i++) {
		int big = i < n && r[i].len > TCP_GATHER_MAX;
		if (nf && (i == n || big || nf == RPMEM_SEND_FRAMES_MAX)) {
			struct gather_args a = { t->s, f, nf };
			ret = rpmem_guard_run(send_gathered, &a);
			if (ret == -EFAULT || ret == -EHWPOISON)
				return client_local_fault(t->s, ret,
							  "it was being sent");
			if (ret)
				return ret;
			nf = 0;
		}
		if (i == n)
			break;
		const uint8_t *src = rpmem_xrange_src(&r[i], base);
		if (big) {
			ret = tcp_write(x, r[i].off, src, (size_t)r[i].len);
			if (ret)
				return ret;
			continue;
		}
		struct rpmem_msg_io io = { .handle = t->handle,
					   .offset = r[i].off,
					   .len = (uint32_t)r[i].len };
		int hl = rpmem_io_encode(head[nf], sizeof(head[nf]), &io);
		if (hl < 0)
			return hl;
		f[nf] = (struct rpmem_frame){ RPMEM_MSG_WRITE, 0, head[nf],
					      (size_t)hl, src,
					      (size_t)r[i].len };
		nf++;
	}
	return 0;
}

/* recv_args -- DATA received into the local copy */
struct recv_args {
	struct rpmemctl_session *s;
	uint8_t *dst;
	size_t len;
};

/* recv_into -- rpmem_net_read_full into the local copy (guarded) */
static int recv_into(void *arg)
{
	struct recv_args *a = arg;
	return rpmem_net_read_full(&a->s->conn, a->dst, a->len);
}

struct read_req {
	uint32_t id;
	uint32_t len;
	uint8_t *dst;
	uint64_t off;
	uint32_t flags; /* RPMEM_READ_* it was sent with */
};

/* read_send -- a READ of r's range with flags; its id into r */
static int read_send(struct tcp_xport *t, struct read_req *r, uint32_t flags)
{
	struct rpmem_msg_io io = { .handle = t->handle, .offset = r->off,
				   .len = r->len };
	uint8_t req[RPMEM_WRITE_HDR_SIZE + 4];
	int rl = rpmem_read_encode(req, sizeof(req), &io, flags);

	if (rl < 0)
		return rl;
	r->flags = flags;
	return client_send(t->s, RPMEM_MSG_READ, req, (size_t)rl, NULL, 0,
			   &r->id);
}

/*
 * tcp_read -- pipelined READ requests, up to TCP_READ_WINDOW in flight;
 * each DATA reply is received straight into dst. After an ERROR reply
 * no new request is sent and the replies still in flight are drained,
 * so the stream stays in step. A READ refused as damaged data is sent
 * again asking for it if the session takes such data.
 */
static int tcp_read(struct rpmem_xport *x, uint64_t off, void *dst, size_t len)
{
	struct tcp_xport *t = tcp(x);
	struct rpmemctl_session *s = t->s;
	struct read_req ring[TCP_READ_WINDOW];
	unsigned head = 0, nout = 0;
	size_t sent = 0;
	int err = 0;

	while (nout || (!err && sent < len)) {
		while (!err && nout < TCP_READ_WINDOW && sent < len) {
			size_t left = len - sent;
			uint32_t n = left < RPMEM_MAX_IO ? (uint32_t)left :
							   RPMEM_MAX_IO;
			unsigned slot = (head + nout) % TCP_READ_WINDOW;
			struct read_req *r = &ring[slot];
			r->off = off + sent;
			r->len = n;
			r->dst = (uint8_t *)dst + sent;
			int ret = read_send(t, r, 0);
			if (ret)
				return ret;
			sent += n;
			nout++;
		}

		struct read_req *r = &ring[head];
		head = (head + 1) % TCP_READ_WINDOW;
		nout--;
		struct rpmem_hdr h;
		int ret = client_recv_hdr(s, r->id, RPMEM_MSG_DATA, &h);
		if (ret && !err && !r->flags && client_read_damaged(s, ret)) {
			/* the same range again, at the ring's tail */
			struct read_req *again =
				&ring[(head + nout) % TCP_READ_WINDOW];
			*again = *r;
			if ((ret = read_send(t, again, RPMEM_READ_DAMAGED)))
				return ret;
			nout++;
			continue;
		}
		if (ret) {
			if (s->lost)
				return ret;
			/* an ERROR reply: keep the first, drain the rest */
			if (!err)
				err = ret;
			continue;
		}
		if (h.len != r->len) {
			client_seterr(s,
				      "DATA reply of %u bytes from %s:%s for a "
				      "READ of %u bytes",
				      h.len, s->host, s->port, r->len);
			return client_lost(s, -EPROTO, "reading pool data");
		}
		if (err) {
			ret = rpmem_net_discard(&s->conn, h.len);
		} else {
			struct recv_args a = { s, r->dst, h.len };
			ret = rpmem_guard_run(recv_into, &a);
			if (ret == -EFAULT || ret == -EHWPOISON)
				return client_local_fault(s, ret,
							  "pool data was written into it");
		}
		if (ret)
			return client_lost(s, ret, "receiving pool data");
	}
	return err;
}

/* flush_req -- the payload of a FLUSH or BARRIER of [off, off + len) */
static int flush_req(const struct tcp_xport *t, uint64_t off, uint64_t len,
		     uint8_t req[RPMEM_REQ_SMALL])
{
	struct rpmem_msg_flush f = { .handle = t->handle, .offset = off,
				     .len = len };
	return rpmem_flush_encode(req, 32, &f);
}

/* tcp_flush -- FLUSH, then OK once the target has persisted the range */
static int tcp_flush(struct rpmem_xport *x, uint64_t off, uint64_t len)
{
	struct tcp_xport *t = tcp(x);
	uint8_t req[RPMEM_REQ_SMALL];
	int rl = flush_req(t, off, len, req);
	if (rl < 0)
		return rl;
	size_t rlen;
	int ret = client_call(t->s, RPMEM_MSG_FLUSH, req, (size_t)rl,
			      RPMEM_MSG_OK, &rlen);
	if (ret)
		return ret;
	if (rlen != 0)
		return client_bad_reply(t->s, RPMEM_MSG_OK);
	return 0;
}

/* owed_collect -- the OK of the oldest posted FLUSH, read or taken */
static int owed_collect(struct tcp_xport *t)
{
	struct rpmemctl_session *s = t->s;
	uint32_t id = t->owed[t->owed_head];
	int ret;

	t->owed_head = (t->owed_head + 1) % TCP_OWED_MAX;
	t->nowed--;
	/* read already by another call (of another pool sharing s) */
	if (client_owed_take(s, id, &ret))
		return ret;
	size_t len = 0;
	ret = client_recv(s, id, RPMEM_MSG_OK, &len);
	if (!ret && len)
		ret = client_bad_reply(s, RPMEM_MSG_OK);
	client_owed_done(s, id);
	return ret;
}

/*
 * tcp_flush_post -- a FLUSH sent, its OK owed (collected by
 * tcp_flush_collect); the oldest collected first if TCP_OWED_MAX are
 */
static int tcp_flush_post(struct rpmem_xport *x, uint64_t off, uint64_t len,
			  uint64_t *tok)
{
	struct tcp_xport *t = tcp(x);
	uint8_t req[RPMEM_REQ_SMALL];
	uint32_t id = 0;
	int ret = t->nowed == TCP_OWED_MAX ? owed_collect(t) : 0;
	if (ret)
		return ret;
	int rl = flush_req(t, off, len, req);
	if (rl < 0)
		return rl;
	ret = client_send(t->s, RPMEM_MSG_FLUSH, req, (size_t)rl, NULL, 0,
			  &id);
	if (!ret)
		ret = client_owe(t->s, id);
	if (ret)
		return ret;
	t->owed[(t->owed_head + t->nowed++) % TCP_OWED_MAX] = id;
	*tok = id;
	return 0;
}

/* owed_pos -- how far from the oldest the posted FLUSH id is, -1 if not */
static int owed_pos(const struct tcp_xport *t, uint32_t id)
{
	for (unsigned i = 0; i < t->nowed; i++)
		if (t->owed[(t->owed_head + i) % TCP_OWED_MAX] == id)
			return (int)i;
	return -1;
}

/*
 * tcp_flush_collect -- the OKs of the posted FLUSHes up to tok, in order
 * (the first failure returned); 1 once collected (or collected before).
 * Without wait: 1 where the oldest's reply is kept or bytes are waiting
 * on the socket (the target answers in order; read ahead at once by
 * rpmem_conn_ready, one call where a poll and then a recv took two),
 * else 0.
 */
static int tcp_flush_collect(struct rpmem_xport *x, uint64_t tok, int wait)
{
	struct tcp_xport *t = tcp(x);
	int at = owed_pos(t, (uint32_t)tok);
	if (at < 0)
		return 1;
	if (!wait)
		return client_owed_arrived(t->s, t->owed[t->owed_head]) ||
		       rpmem_conn_ready(&t->s->conn);
	for (int i = 0; i <= at; i++) {
		int ret = owed_collect(t);
		if (ret)
			return ret;
	}
	return 1;
}

/* tcp_wait_fd -- the control socket, where the OKs come */
static int tcp_wait_fd(struct rpmem_xport *x)
{
	return tcp(x)->s->conn.fd;
}

/*
 * tcp_barrier -- BARRIER: the FLUSH's payload, no reply awaited (a
 * failure on the target is reported by the next FLUSH)
 */
static int tcp_barrier(struct rpmem_xport *x, uint64_t off, uint64_t len)
{
	struct tcp_xport *t = tcp(x);
	uint8_t req[RPMEM_REQ_SMALL];
	int rl = flush_req(t, off, len, req);
	if (rl < 0)
		return rl;
	t->s->conn.more = 1; /* no reply: held like a WRITE */
	int ret = client_send(t->s, RPMEM_MSG_BARRIER, req, (size_t)rl, NULL,
			      0, NULL);
	t->s->conn.more = 0;
	return ret;
}

/* persist_args -- a WRITE and the FLUSH of its range, sent together */
enum { PERSIST_WRITE, PERSIST_FLUSH, PERSIST_FRAMES };
struct persist_args {
	struct rpmemctl_session *s;
	struct rpmem_frame f[PERSIST_FRAMES];
};

/* send_persist -- client_send_frames of the WRITE and FLUSH (guarded) */
static int send_persist(void *arg)
{
	struct persist_args *a = arg;
	return client_send_frames(a->s, a->f, PERSIST_FRAMES);
}

/*
 * tcp_persist -- a WRITE of at most RPMEM_MAX_IO bytes and the FLUSH of
 * its range in one gathered write: one segment, one wake-up of the
 * target, where a write and a flush would send two; then the FLUSH's OK.
 * Longer ranges are written, then flushed.
 */
static int tcp_persist(struct rpmem_xport *x, uint64_t off, const void *src,
		       size_t len)
{
	struct tcp_xport *t = tcp(x);
	if (len > RPMEM_MAX_IO) {
		int ret = tcp_write(x, off, src, len);
		return ret ? ret : tcp_flush(x, off, len);
	}
	struct rpmem_msg_io io = { .handle = t->handle, .offset = off,
				   .len = (uint32_t)len };
	struct rpmem_msg_flush fl = { .handle = t->handle, .offset = off,
				      .len = len };
	uint8_t head[RPMEM_WRITE_HDR_SIZE], req[RPMEM_REQ_SMALL];
	int hl = rpmem_io_encode(head, sizeof(head), &io);
	int rl = rpmem_flush_encode(req, sizeof(req), &fl);
	if (hl < 0)
		return hl;
	if (rl < 0)
		return rl;
	struct persist_args a = {
		t->s,
		{ { RPMEM_MSG_WRITE, 0, head, (size_t)hl, src, len },
		  { RPMEM_MSG_FLUSH, 0, req, (size_t)rl, NULL, 0 } },
	};
	int ret = rpmem_guard_run(send_persist, &a);
	if (ret == -EFAULT || ret == -EHWPOISON)
		return client_local_fault(t->s, ret, "it was being sent");
	if (ret)
		return ret;
	size_t rlen;
	ret = client_recv(t->s, a.f[PERSIST_FLUSH].id, RPMEM_MSG_OK, &rlen);
	if (ret)
		return ret;
	if (rlen != 0)
		return client_bad_reply(t->s, RPMEM_MSG_OK);
	return 0;
}

/*
 * tcp_close -- the control session stays open: the OKs of FLUSHes posted
 * and not collected are dropped as they come
 */
static void tcp_close(struct rpmem_xport *x)
{
	struct tcp_xport *t = tcp(x);
	for (unsigned i = 0; i < t->nowed; i++)
		client_owed_orphan(t->s,
				   t->owed[(t->owed_head + i) % TCP_OWED_MAX]);
	free(t);
}

static const struct rpmem_xport_ops tcp_ops = {
	.name = "tcp",
	.attach = NULL, /* frames are sent from and received into any buffer */
	.write = tcp_write,
	.write_ranges = tcp_write_ranges,
	.read = tcp_read,
	.flush = tcp_flush,
	.flush_post = tcp_flush_post,
	.flush_collect = tcp_flush_collect,
	.wait_fd = tcp_wait_fd,
	.barrier = tcp_barrier,
	.persist = tcp_persist,
	.close = tcp_close,
	.in_band = 1, /* WRITEs follow the requests on the one stream */
};

int rpmem_tcp_client_new(struct rpmemctl_session *s, uint32_t handle,
			 uint64_t pool_size, struct rpmem_xport **out)
{
	struct tcp_xport *t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->base.ops = &tcp_ops;
	t->s = s;
	t->handle = handle;
	(void)pool_size; /* range checks are done by the pool layer */
	*out = &t->base;
	return 0;
}
