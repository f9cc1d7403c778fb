/* SPDX-License-Identifier: BSD-3-Clause */
/* pool.c -- remote pools: create, remove, open, I/O, hashes, state */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "client_pool.h"
#include "hash.h"
#include "log.h"
#include "util.h"
#include "wire.h"

/* HASH requests in flight at once in rpmemctl_pool_hash */
#define HASH_WINDOW 4
/*
 * rpmemctl_pool_open_or_create retries an open refused as busy this long,
 * every OPEN_BUSY_RETRY_NS: it absorbs the window in which the target has
 * not yet seen that the previous writer died
 */
#define OPEN_BUSY_WAIT_NS (2000ull * 1000000)
#define OPEN_BUSY_RETRY_NS (100 * 1000000L)

/* check_names -- valid region and pool names, else -EINVAL with a message */
static int check_names(struct rpmemctl_session *s, const char *region,
		       const char *pool)
{
	if (!region || !rpmem_name_valid(region)) {
		client_seterr(s, "invalid region name '%s' (" RPMEM_NAME_RULE ")",
			      region ? region : "(null)");
		return -EINVAL;
	}
	if (!pool || !rpmem_name_valid(pool)) {
		client_seterr(s, "invalid pool name '%s' (" RPMEM_NAME_RULE ")",
			      pool ? pool : "(null)");
		return -EINVAL;
	}
	return 0;
}

/* expect_ok -- the reply payload of an OK must be empty */
static int expect_ok(struct rpmemctl_session *s, uint16_t type,
		     const void *req, size_t len)
{
	size_t rlen;
	int ret = client_call(s, type, req, len, RPMEM_MSG_OK, &rlen);
	if (ret)
		return ret;
	return rlen ? client_bad_reply(s, RPMEM_MSG_OK) : 0;
}

/* pool_create -- CREATE pool in region with size bytes */
static int pool_create(struct rpmemctl_session *sess, const char *region,
		       const char *pool, uint64_t size)
{
	if (!sess)
		return -EINVAL;
	int ret = check_names(sess, region, pool);
	if (ret)
		return ret;
	if (size == 0) {
		client_seterr(sess, "pool '%s': size must not be zero", pool);
		return -EINVAL;
	}
	struct rpmem_msg_create m = { .size = size };
	rpmem_strlcpy(m.region, region, sizeof(m.region));
	rpmem_strlcpy(m.pool, pool, sizeof(m.pool));
	uint8_t buf[RPMEM_REQ_MAX];
	int len = rpmem_create_encode(buf, sizeof(buf), &m);
	if (len < 0)
		return len;
	return expect_ok(sess, RPMEM_MSG_CREATE, buf, (size_t)len);
}

/* pool_remove -- REMOVE a pool (FORCE: even if syncing) */
static int pool_remove(struct rpmemctl_session *sess, const char *region,
		       const char *pool, unsigned flags)
{
	if (!sess)
		return -EINVAL;
	int ret = check_names(sess, region, pool);
	if (ret)
		return ret;
	if (flags & ~RPMEMCTL_REMOVE_FORCE) {
		client_seterr(sess, "unknown remove flags 0x%x", flags);
		return -EINVAL;
	}
	struct rpmem_msg_remove m = {
		.flags = flags & RPMEMCTL_REMOVE_FORCE ? RPMEM_REMOVE_FORCE : 0,
	};
	rpmem_strlcpy(m.region, region, sizeof(m.region));
	rpmem_strlcpy(m.pool, pool, sizeof(m.pool));
	uint8_t buf[RPMEM_REQ_MAX];
	int len = rpmem_remove_encode(buf, sizeof(buf), &m);
	if (len < 0)
		return len;
	return expect_ok(sess, RPMEM_MSG_REMOVE, buf, (size_t)len);
}

/* send_close -- release a handle on the target */
static int send_close(struct rpmemctl_session *s, uint32_t handle)
{
	struct rpmem_msg_handle m = { .handle = handle };
	uint8_t buf[RPMEM_REQ_SMALL];
	int len = rpmem_handle_encode(buf, sizeof(buf), &m);
	if (len < 0)
		return len;
	return expect_ok(s, RPMEM_MSG_CLOSE, buf, (size_t)len);
}

/* send_open -- OPEN, decoded OPEN_OK into *ok */
static int send_open(struct rpmemctl_session *s, const char *region,
		     const char *pool, unsigned flags, uint8_t xport,
		     struct rpmem_msg_open_ok *ok)
{
	struct rpmem_msg_open m = {
		.mode = flags & RPMEMCTL_OPEN_RDWR ? RPMEM_OPEN_RW :
						     RPMEM_OPEN_RO,
		.xport = xport,
	};
	rpmem_strlcpy(m.region, region, sizeof(m.region));
	rpmem_strlcpy(m.pool, pool, sizeof(m.pool));
	uint8_t buf[RPMEM_REQ_MAX];
	int len = rpmem_open_encode(buf, sizeof(buf), &m);
	if (len < 0)
		return len;
	size_t rlen;
	int ret = client_call(s, RPMEM_MSG_OPEN, buf, (size_t)len,
			      RPMEM_MSG_OPEN_OK, &rlen);
	if (ret)
		return ret;
	if (rpmem_open_ok_decode(s->rbuf, rlen, ok))
		return client_bad_reply(s, RPMEM_MSG_OPEN_OK);
	return 0;
}

/*
 * pool_detach -- p's session is closing (its close hook): release the
 * data plane and forget the session
 */
static void pool_detach(struct client_close_hook *h)
{
	struct rpmemctl_pool *p =
		(struct rpmemctl_pool *)((char *)h -
					 offsetof(struct rpmemctl_pool, closing));

	if (p->xport) {
		p->xport->ops->close(p->xport);
		p->xport = NULL;
	}
	p->sess = NULL;
}

/* pool_open -- open a remote pool and its data plane */
static int pool_open(struct rpmemctl_session *sess, const char *region,
		     const char *pool, unsigned flags,
		     struct rpmemctl_pool **out)
{
	if (!sess || !out)
		return -EINVAL;
	int ret = check_names(sess, region, pool);
	if (ret)
		return ret;
	if (flags & ~RPMEMCTL_OPEN_RDWR) {
		client_seterr(sess, "unknown open flags 0x%x", flags);
		return -EINVAL;
	}
	ret = client_check(sess);
	if (ret)
		return ret;

	struct rpmemctl_pool *p = calloc(1, sizeof(*p));
	if (!p) {
		client_seterr(sess, "out of memory");
		return -ENOMEM;
	}
	uint8_t wanted = client_xport_wanted(sess, 0);
	struct rpmem_msg_open_ok ok;
	ret = send_open(sess, region, pool, flags, wanted, &ok);
	if (ret)
		goto err_free;
	ret = client_xport_open(sess, region, pool, wanted, &ok, &p->xport);
	if (ret == -EAGAIN) {
		/* AUTO got rdma that does not work from here: use tcp */
		wanted = client_xport_wanted(sess, 1);
		ret = send_close(sess, ok.handle);
		if (ret)
			goto err_free;
		ret = send_open(sess, region, pool, flags, wanted, &ok);
		if (ret)
			goto err_free;
		ret = client_xport_open(sess, region, pool, wanted, &ok,
					&p->xport);
	}
	if (ret)
		goto err_close;

	p->sess = sess;
	p->handle = ok.handle;
	p->flags = flags;
	rpmem_strlcpy(p->region, region, sizeof(p->region));
	rpmem_strlcpy(p->name, pool, sizeof(p->name));
	p->size = ok.size;
	p->state = ok.state;
	p->generation = ok.generation;
	memcpy(p->uuid, ok.uuid, sizeof(p->uuid));
	p->closing.fn = pool_detach;
	client_hook_add(sess, &p->closing);
	*out = p;
	return 0;

err_close:
	if (!sess->lost)
		send_close(sess, ok.handle); /* errmsg keeps the first error */
err_free:
	free(p);
	return ret;
}

/* open_waiting -- rpmemctl_pool_open, retried while the pool is busy */
static int open_waiting(struct rpmemctl_session *s, const char *region,
			const char *pool, unsigned flags,
			struct rpmemctl_pool **out)
{
	const struct timespec ts = { 0, OPEN_BUSY_RETRY_NS };
	uint64_t deadline = rpmem_now_ns() + OPEN_BUSY_WAIT_NS;
	for (;;) {
		int ret = rpmemctl_pool_open(s, region, pool, flags, out);
		if (ret != -EBUSY || rpmem_now_ns() >= deadline)
			return ret;
		client_log(s, LOG_DEBUG, "pool '%s/%s' is busy, retrying: %s",
			   region, pool, s->errmsg);
		nanosleep(&ts, NULL);
	}
}

/*
 * open_or_create -- open, waiting out a busy pool; create a missing one
 * (CREATE); refuse one whose size is not size (if not 0)
 */
static int open_or_create(struct rpmemctl_session *sess, const char *region,
			  const char *pool, uint64_t size, unsigned flags,
			  struct rpmemctl_pool **out,
			  struct rpmemctl_open_info *info)
{
	if (!out)
		return -EINVAL;
	if (flags & ~(RPMEMCTL_OPEN_RDWR | RPMEMCTL_OPEN_CREATE)) {
		client_seterr(sess, "unknown open flags 0x%x", flags);
		return -EINVAL;
	}
	unsigned oflags = flags & RPMEMCTL_OPEN_RDWR;
	struct rpmemctl_pool *p = NULL;
	int ret = open_waiting(sess, region, pool, oflags, &p);
	if (ret == -ENOENT && (flags & RPMEMCTL_OPEN_CREATE)) {
		ret = rpmemctl_pool_create(sess, region, pool, size);
		info->created = ret == 0;
		info->create_failed = ret && ret != -EEXIST;
		/* -EEXIST: another initiator created it since our open */
		if (ret == 0 || ret == -EEXIST)
			ret = open_waiting(sess, region, pool, oflags, &p);
	}
	if (ret)
		return ret;
	info->size = p->size;
	if (size && p->size != size) {
		char a[RPMEM_SIZE_STR], b[RPMEM_SIZE_STR];
		rpmemctl_pool_close(&p);
		client_seterr(sess, "pool '%s' in region '%s' on %s:%s is %s "
			      "(%llu bytes), the local copy is %s (%llu "
			      "bytes)", pool, region, sess->host, sess->port,
			      rpmem_fmt_size(info->size, a, sizeof(a)),
			      (unsigned long long)info->size,
			      rpmem_fmt_size(size, b, sizeof(b)),
			      (unsigned long long)size);
		return -EINVAL;
	}
	*out = p;
	return 0;
}

/* rpmemctl_pool_open_or_create -- open_or_create, bracketed */
RPMEM_EXPORT int rpmemctl_pool_open_or_create(struct rpmemctl_session *sess,
					      const char *region,
					      const char *pool, uint64_t size,
					      unsigned flags,
					      struct rpmemctl_pool **out,
					      struct rpmemctl_open_info *info)
{
	struct rpmemctl_open_info dummy;
	int ret = -EINVAL;

	if (!info)
		info = &dummy;
	memset(info, 0, sizeof(*info));
	client_sess_begin(sess);
	if (sess)
		ret = open_or_create(sess, region, pool, size, flags, out,
				     info);
	return client_sess_end(sess, ret, "opening a pool");
}

/*
 * pool_close -- release the data plane and the handle; pending writes are
 * not flushed. The pool is freed even when the CLOSE fails.
 */
static int pool_close(struct rpmemctl_pool **pool)
{
	struct rpmemctl_pool *p = *pool;
	struct rpmemctl_session *s = p->sess;
	int ret = 0;
	if (p->xport)
		p->xport->ops->close(p->xport);
	if (s) {
		client_hook_del(s, &p->closing);
		/* a broken data plane: a short wait for the CLOSE reply */
		if (p->xport_broken && !s->lost)
			(void)client_set_timeout(s, CLIENT_TEARDOWN_TIMEOUT_S);
		ret = send_close(s, p->handle);
		if (p->xport_broken && !s->lost)
			(void)client_set_timeout(s, CLIENT_IO_TIMEOUT_S);
		if (s->err_pool == p)
			s->err_pool = NULL; /* p is going */
	}
	free(p);
	*pool = NULL;
	return ret;
}

RPMEM_EXPORT uint64_t rpmemctl_pool_get_size(const struct rpmemctl_pool *pool)
{
	return pool ? pool->size : 0;
}

RPMEM_EXPORT enum rpmemctl_pool_state
rpmemctl_pool_get_state(const struct rpmemctl_pool *pool)
{
	return pool ? (enum rpmemctl_pool_state)pool->state :
		      RPMEMCTL_POOL_EMPTY;
}

RPMEM_EXPORT uint64_t
rpmemctl_pool_get_generation(const struct rpmemctl_pool *pool)
{
	return pool ? pool->generation : 0;
}

RPMEM_EXPORT const char *
rpmemctl_pool_get_transport(const struct rpmemctl_pool *pool)
{
	return pool && pool->xport ? pool->xport->ops->name : "none";
}

/* check_range -- [off, off + len) lies inside the pool */
static int check_range(struct rpmemctl_pool *p, const char *what,
		       uint64_t off, uint64_t len)
{
	if (rpmem_range_ok(off, len, p->size))
		return 0;
	client_pool_seterr(p,
		      "%s of %llu bytes at offset %llu is outside pool '%s' "
		      "in region '%s' (%llu bytes)",
		      what, (unsigned long long)len, (unsigned long long)off,
		      p->name, p->region, (unsigned long long)p->size);
	return -EINVAL;
}

/* check_writable -- the pool was opened for writing */
static int check_writable(struct rpmemctl_pool *p)
{
	if (p->flags & RPMEMCTL_OPEN_RDWR)
		return 0;
	client_pool_seterr(p, "pool '%s' in region '%s' is open read-only",
		      p->name, p->region);
	return -EROFS;
}

/*
 * xport_err -- give an error of the data plane a message if it has none:
 * the data plane's own account of it (what the RDMA completion or the
 * connection event said), else the errno's text
 */
static int xport_err(struct rpmemctl_pool *p, const char *what, int ret)
{
	if (ret == -ETIMEDOUT || ret == -ECONNRESET)
		p->xport_broken = 1;
	if (!ret || p->sess->errmsg[0])
		return ret;
	const char *why = p->xport->ops->errmsg ?
				  p->xport->ops->errmsg(p->xport) : "";
	client_pool_seterr(p, "%s on pool '%s' in region '%s' (%s) failed: %s",
		      what, p->name, p->region, p->xport->ops->name,
		      why[0] ? why : strerror(-ret));
	return ret;
}

/* pool_attach -- where the local copy of the pool is mapped */
static int pool_attach(struct rpmemctl_pool *pool, void *base, size_t len)
{
	int ret = client_pool_usable(pool);
	if (ret)
		return ret;
	if (!base || len != pool->size) {
		client_pool_seterr(pool,
			      "attach to pool '%s': the local copy must be "
			      "%llu bytes, got %zu", pool->name,
			      (unsigned long long)pool->size, len);
		return -EINVAL;
	}
	if (!pool->xport->ops->attach)
		return 0;
	ret = pool->xport->ops->attach(pool->xport, base, len);
	return xport_err(pool, "attaching the local copy", ret);
}

/*
 * write_checks -- what a write or persist of len bytes needs: 1 to go on,
 * 0 if there is nothing to send (len 0), or -errno
 */
static int write_checks(struct rpmemctl_pool *pool, const char *what,
			const void *src, uint64_t offset, size_t len)
{
	int ret = client_pool_usable(pool);
	if (ret)
		return ret;
	if ((ret = check_writable(pool)) ||
	    (ret = check_range(pool, what, offset, len)))
		return ret;
	if (len == 0)
		return 0;
	if (!src)
		return -EINVAL;
	return 1;
}

/* pool_write -- start a write through the data plane */
static int pool_write(struct rpmemctl_pool *pool, const void *src,
		      uint64_t offset, size_t len)
{
	int ret = write_checks(pool, "write", src, offset, len);
	if (ret <= 0)
		return ret;
	ret = pool->xport->ops->write(pool->xport, offset, src, len);
	return xport_err(pool, "write", ret);
}

int client_pool_write_ranges(struct rpmemctl_pool *pool, const void *base,
			     const struct rpmem_xrange *r, size_t n)
{
	client_pool_begin(pool);
	int ret = write_checks(pool, "write", base, 0, 0);
	for (size_t i = 0; !ret && i < n; i++)
		ret = check_range(pool, "write", r[i].off, r[i].len);
	if (!ret && !base)
		ret = -EINVAL;
	if (!ret && pool->xport->ops->write_ranges) {
		ret = pool->xport->ops->write_ranges(pool->xport, base, r, n);
		ret = xport_err(pool, "write", ret);
	} else {
		for (size_t i = 0; !ret && i < n; i++)
			ret = pool_write(pool, rpmem_xrange_src(&r[i], base),
					 r[i].off, (size_t)r[i].len);
	}
	return client_pool_end(pool, ret, "write");
}

/* pool_read -- read through the data plane */
static int pool_read(struct rpmemctl_pool *pool, void *dst,
		     uint64_t offset, size_t len)
{
	int ret = client_pool_usable(pool);
	if (ret)
		return ret;
	if ((ret = check_range(pool, "read", offset, len)))
		return ret;
	if (len == 0)
		return 0;
	if (!dst)
		return -EINVAL;
	if ((ret = client_read_check(pool, offset, len)))
		return ret;
	ret = pool->xport->ops->read(pool->xport, offset, dst, len);
	return xport_err(pool, "read", ret);
}

/* pool_flush -- FLUSH through the data plane */
static int pool_flush(struct rpmemctl_pool *pool, uint64_t offset,
		      uint64_t len)
{
	int ret = client_pool_usable(pool);
	if (ret)
		return ret;
	if ((ret = check_writable(pool)) ||
	    (ret = check_range(pool, "flush", offset, len)))
		return ret;
	ret = pool->xport->ops->flush(pool->xport, offset, len);
	return xport_err(pool, "flush", ret);
}

int client_pool_splits_flush(const struct rpmemctl_pool *pool)
{
	return pool->xport && !pool->xport_broken &&
	       pool->xport->ops->flush_post;
}

int client_pool_flush_serial(const struct rpmemctl_pool *pool)
{
	return client_pool_splits_flush(pool) &&
	       pool->xport->ops->flush_serial &&
	       pool->xport->ops->flush_serial(pool->xport);
}

int client_pool_flush_post(struct rpmemctl_pool *pool, uint64_t offset,
			   uint64_t len, uint64_t *tok)
{
	int ret = client_pool_usable(pool);
	if (ret)
		return ret;
	if (!client_pool_splits_flush(pool))
		return -ENOTSUP;
	if ((ret = check_writable(pool)) ||
	    (ret = check_range(pool, "flush", offset, len)))
		return ret;
	ret = pool->xport->ops->flush_post(pool->xport, offset, len, tok);
	return xport_err(pool, "flush", ret);
}

int client_pool_flush_collect(struct rpmemctl_pool *pool, uint64_t tok,
			      int wait)
{
	int ret = client_pool_usable(pool);
	if (ret)
		return ret;
	ret = pool->xport->ops->flush_collect(pool->xport, tok, wait);
	return ret < 0 ? xport_err(pool, "flush", ret) : ret;
}

int client_pool_wait_fd(struct rpmemctl_pool *pool)
{
	return pool->xport && pool->xport->ops->wait_fd ?
		       pool->xport->ops->wait_fd(pool->xport) : -1;
}

int client_pool_wait_edge(const struct rpmemctl_pool *pool)
{
	return pool->xport && pool->xport->ops->wait_edge;
}

/*
 * pool_barrier -- a BARRIER where the target and the data plane take
 * one (returns without waiting), else a FLUSH (returns once done)
 */
static int pool_barrier(struct rpmemctl_pool *pool, uint64_t offset,
			uint64_t len)
{
	int ret = client_pool_usable(pool);
	if (ret)
		return ret;
	if (!(pool->sess->caps & RPMEM_CAP_BARRIER) ||
	    !pool->xport->ops->barrier)
		return pool_flush(pool, offset, len);
	if ((ret = check_writable(pool)) ||
	    (ret = check_range(pool, "barrier", offset, len)))
		return ret;
	ret = pool->xport->ops->barrier(pool->xport, offset, len);
	return xport_err(pool, "barrier", ret);
}

/* pool_persist -- write and flush, in one step if the data plane can */
static int pool_persist(struct rpmemctl_pool *pool, const void *src,
			uint64_t offset, size_t len)
{
	int ret = write_checks(pool, "persist", src, offset, len);
	if (ret < 0)
		return ret;
	/* without a one-step persist (and for len 0): write, then FLUSH */
	if (ret == 0 || !pool->xport->ops->persist) {
		ret = pool_write(pool, src, offset, len);
		return ret ? ret : pool_flush(pool, offset, len);
	}
	ret = pool->xport->ops->persist(pool->xport, offset, src, len);
	return xport_err(pool, "persist", ret);
}

/* what rpmemctl_pool_hash asks for, and how much of it is asked already */
struct pool_hash {
	uint64_t offset;
	uint32_t bs;
	uint32_t count;
	uint32_t sent;
	uint64_t *hashes;
};

/* pool_hash_next -- the next RPMEM_MAX_HASHES blocks of rpmemctl_pool_hash */
static int pool_hash_next(void *arg, struct client_hreq *r, unsigned slot)
{
	struct pool_hash *h = arg;
	(void)slot;
	if (h->sent >= h->count)
		return 0;
	uint32_t n = h->count - h->sent;
	r->count = n < RPMEM_MAX_HASHES ? n : RPMEM_MAX_HASHES;
	r->bs = h->bs;
	r->one = (struct rpmem_hash_range){
		h->offset + (uint64_t)h->sent * h->bs, r->count };
	r->rv = &r->one;
	r->nr = 1;
	r->dst = h->hashes + h->sent;
	h->sent += r->count;
	return 1;
}

/* pool_hash -- the target's hashes of count blocks, a pipeline of HASH */
static int pool_hash(struct rpmemctl_pool *pool, uint64_t offset,
		     uint32_t block_size, uint32_t count, uint64_t *hashes)
{
	int ret = client_pool_usable(pool);
	if (ret)
		return ret;
	struct rpmemctl_session *s = pool->sess;
	uint32_t bs = block_size;
	if (!rpmem_bs_ok(bs, RPMEM_HASH_BS_MIN)) {
		client_seterr(s, "invalid hash block size %u: a power of two "
			      "from 512 to 64 MiB", bs);
		return -EINVAL;
	}
	if (count == 0)
		return 0;
	/* the last block may be short, but must start inside the pool */
	if (!hashes || offset >= pool->size ||
	    (uint64_t)(count - 1) > (pool->size - offset - 1) / bs) {
		client_pool_seterr(pool, "hash of %u blocks of %u bytes at offset %llu "
			      "is outside pool '%s' (%llu bytes)", count, bs,
			      (unsigned long long)offset, pool->name,
			      (unsigned long long)pool->size);
		return -EINVAL;
	}

	struct pool_hash h = { offset, bs, count, 0, hashes };
	static const struct client_hash_ops ops = { .next = pool_hash_next };
	return client_hash_pipeline(pool, HASH_WINDOW, &ops, &h, NULL);
}

int client_send_set_state(struct rpmemctl_pool *pool, uint8_t state,
			  const char *source, uint32_t flags, uint64_t change)
{
	struct rpmemctl_session *s = pool->sess;
	int says = !!(s->caps & RPMEM_CAP_STATE);
	int notes = says && (s->caps & RPMEM_CAP_NOTE);
	struct rpmem_msg_set_state m = {
		.handle = pool->handle,
		.state = state,
		.flags = (says ? RPMEM_SET_STATE_REPLY : 0) |
			 (notes ? RPMEM_SET_STATE_NOTE : 0) | flags,
	};
	/* an older target takes no change: its journal is checked as written */
	if (change && state == RPMEM_POOL_SYNCING &&
	    (s->caps & RPMEM_CAP_SYNC_SIZE)) {
		m.flags |= RPMEM_SET_STATE_CHANGE;
		m.change = change;
	}
	rpmem_strlcpy(m.source, source ? source : "", sizeof(m.source));
	uint8_t buf[RPMEM_STR_MAX + 16];
	int len = rpmem_set_state_encode(buf, sizeof(buf), &m);
	if (len < 0)
		return len;
	if (!says) {
		int ret = expect_ok(s, RPMEM_MSG_SET_STATE, buf, (size_t)len);
		if (ret)
			return ret;
		pool->state = state;
		if (state == RPMEM_POOL_CONSISTENT && !flags)
			pool->generation++;
		return 0;
	}
	size_t rlen;
	int ret = client_call(s, RPMEM_MSG_SET_STATE, buf, (size_t)len,
			      RPMEM_MSG_STATE, &rlen);
	if (ret)
		return ret;
	struct rpmem_msg_state rep;
	if (rpmem_state_decode(s->rbuf, rlen, &rep))
		return client_bad_reply(s, RPMEM_MSG_STATE);
	if (rep.state != state) {
		client_seterr(s, "STATE reply from %s:%s says %s after a "
			      "request for %s", s->host, s->port,
			      rpmem_state_str(rep.state),
			      rpmem_state_str(state));
		return client_lost(s, -EPROTO, "setting a pool's state");
	}
	pool->state = rep.state;
	pool->generation = rep.generation;
	if (rep.note[0]) {
		size_t n = strlen(pool->note);
		snprintf(pool->note + n, sizeof(pool->note) - n, "%s%s",
			 n ? "\n" : "", rep.note);
	}
	return 0;
}

/*
 * pool_set_state -- SET_STATE: syncing (a sync that will write change
 * bytes, 0: not said), or consistent (generation + 1)
 */
static int pool_set_state(struct rpmemctl_pool *pool,
			  enum rpmemctl_pool_state state, const char *source,
			  uint64_t change)
{
	int ret = client_pool_usable(pool);
	if (ret)
		return ret;
	if (state != RPMEMCTL_POOL_SYNCING &&
	    state != RPMEMCTL_POOL_CONSISTENT) {
		client_seterr(pool->sess, "invalid pool state %d", (int)state);
		return -EINVAL;
	}
	if ((ret = check_writable(pool)))
		return ret;
	return client_send_set_state(pool, (uint8_t)state, source, 0, change);
}

/* --- the public calls: each keeps its failure's message -------------- */

/* rpmemctl_pool_create -- create pool in region with size bytes */
RPMEM_EXPORT int rpmemctl_pool_create(struct rpmemctl_session *sess,
				      const char *region, const char *pool,
				      uint64_t size)
{
	client_sess_begin(sess);
	return client_sess_end(sess, pool_create(sess, region, pool, size),
			       "creating a pool");
}

/* rpmemctl_pool_remove -- remove a pool (FORCE: even if syncing) */
RPMEM_EXPORT int rpmemctl_pool_remove(struct rpmemctl_session *sess,
				      const char *region, const char *pool,
				      unsigned flags)
{
	client_sess_begin(sess);
	return client_sess_end(sess, pool_remove(sess, region, pool, flags),
			       "removing a pool");
}

/* rpmemctl_pool_open -- open a remote pool and its data plane */
RPMEM_EXPORT int rpmemctl_pool_open(struct rpmemctl_session *sess,
				    const char *region, const char *pool,
				    unsigned flags, struct rpmemctl_pool **out)
{
	client_sess_begin(sess);
	return client_sess_end(sess, pool_open(sess, region, pool, flags, out),
			       "opening a pool");
}

/*
 * rpmemctl_pool_close -- release the data plane and the handle; pending
 * writes are not flushed. The pool is freed even when the CLOSE fails;
 * the reason then stays in the session.
 */
RPMEM_EXPORT int rpmemctl_pool_close(struct rpmemctl_pool **pool)
{
	client_api_begin();
	if (!pool || !*pool)
		return 0;
	struct rpmemctl_session *s = (*pool)->sess;
	char what[RPMEM_NAME_MAX * 2 + 32];
	snprintf(what, sizeof(what), "closing pool '%s' in region '%s'",
		 (*pool)->name, (*pool)->region);
	client_sess_begin(s);
	int ret = pool_close(pool);
	return s ? client_sess_end(s, ret, what) : ret;
}

RPMEM_EXPORT const char *rpmemctl_pool_errmsg(const struct rpmemctl_pool *pool)
{
	return pool ? pool->errmsg : "no pool";
}

/* rpmemctl_pool_attach -- where the local copy of the pool is mapped */
RPMEM_EXPORT int rpmemctl_pool_attach(struct rpmemctl_pool *pool, void *base,
				      size_t len)
{
	client_pool_begin(pool);
	return client_pool_end(pool, pool_attach(pool, base, len),
			       "attaching the local copy");
}

RPMEM_EXPORT int rpmemctl_pool_write(struct rpmemctl_pool *pool,
				     const void *src, uint64_t offset,
				     size_t len)
{
	client_pool_begin(pool);
	return client_pool_end(pool, pool_write(pool, src, offset, len),
			       "write");
}

RPMEM_EXPORT int rpmemctl_pool_read(struct rpmemctl_pool *pool, void *dst,
				    uint64_t offset, size_t len)
{
	client_pool_begin(pool);
	return client_pool_end(pool, pool_read(pool, dst, offset, len),
			       "read");
}

RPMEM_EXPORT int rpmemctl_pool_flush(struct rpmemctl_pool *pool,
				     uint64_t offset, uint64_t len)
{
	client_pool_begin(pool);
	return client_pool_end(pool, pool_flush(pool, offset, len), "flush");
}

RPMEM_EXPORT int rpmemctl_pool_barrier(struct rpmemctl_pool *pool,
				       uint64_t offset, uint64_t len)
{
	client_pool_begin(pool);
	return client_pool_end(pool, pool_barrier(pool, offset, len),
			       "barrier");
}

RPMEM_EXPORT int rpmemctl_pool_persist(struct rpmemctl_pool *pool,
				       const void *src, uint64_t offset,
				       size_t len)
{
	client_pool_begin(pool);
	return client_pool_end(pool, pool_persist(pool, src, offset, len),
			       "persist");
}

/* rpmemctl_pool_hash -- the target's hashes of count blocks from offset */
RPMEM_EXPORT int rpmemctl_pool_hash(struct rpmemctl_pool *pool,
				    uint64_t offset, uint32_t block_size,
				    uint32_t count, uint64_t *hashes)
{
	client_pool_begin(pool);
	return client_pool_end(pool, pool_hash(pool, offset, block_size, count,
					       hashes), "hash");
}

/* rpmemctl_pool_set_state -- syncing, or consistent (generation + 1) */
RPMEM_EXPORT int rpmemctl_pool_set_state(struct rpmemctl_pool *pool,
					 enum rpmemctl_pool_state state,
					 const char *source)
{
	client_pool_begin(pool);
	return client_pool_end(pool, pool_set_state(pool, state, source, 0),
			       "setting the state");
}

int client_pool_set_syncing(struct rpmemctl_pool *pool, const char *source,
			    uint64_t change)
{
	client_pool_begin(pool);
	return client_pool_end(pool,
			       pool_set_state(pool, RPMEMCTL_POOL_SYNCING,
					      source, change),
			       "setting the state");
}

/* rpmemctl_hash_blocks -- the same block hash the target computes */
RPMEM_EXPORT void rpmemctl_hash_blocks(const void *buf, size_t len,
				       uint32_t block_size, uint64_t *hashes)
{
	/*
	 * no way to report a fault here (a file that shrank under buf): the
	 * process gets the SIGBUS it always got
	 */
	if (rpmem_hash_blocks(buf, len, block_size, hashes, 2))
		raise(SIGBUS);
}
