/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * atomic.c -- atomic syncs seen from the initiator: PRESERVE before
 * writing, and the rollback of an interrupted sync
 */
#include <errno.h>
#include <string.h>

#include "client_sync.h"
#include "util.h"

/*
 * preserve_send -- one PRESERVE request of n <= the maximum ranges sent;
 * its id to *id
 */
static int preserve_send(struct rpmemctl_pool *pool,
			 const struct rpmem_preserve_range *v, uint32_t n,
			 uint32_t *id)
{
	static __thread struct rpmem_msg_preserve m;
	uint8_t buf[8 + 16 * RPMEM_MAX_PRESERVE_RANGES];

	m.handle = pool->handle;
	m.nranges = n;
	memcpy(m.ranges, v, n * sizeof(*v));
	int len = rpmem_preserve_encode(buf, sizeof(buf), &m);
	if (len < 0)
		return len;
	return client_send(pool->sess, RPMEM_MSG_PRESERVE, buf, (size_t)len,
			   NULL, 0, id);
}

/* preserve_wait -- the OK of the PRESERVE request id */
static int preserve_wait(struct rpmemctl_pool *pool, uint32_t id)
{
	size_t rlen;
	int ret = client_recv(pool->sess, id, RPMEM_MSG_OK, &rlen);
	if (ret)
		return ret;
	return rlen ? client_bad_reply(pool->sess, RPMEM_MSG_OK) : 0;
}

int client_pool_preserve(struct rpmemctl_pool *pool,
			 const struct rpmem_preserve_range *v, size_t n)
{
	if (!(pool->sess->caps & RPMEM_CAP_UNDO))
		return 0;
	for (size_t i = 0; i < n;) {
		size_t k = n - i < RPMEM_MAX_PRESERVE_RANGES ?
				   n - i :
				   RPMEM_MAX_PRESERVE_RANGES;
		uint32_t id;
		int ret = preserve_send(pool, v + i, (uint32_t)k, &id);
		if (!ret)
			ret = preserve_wait(pool, id);
		if (ret)
			return ret;
		i += k;
	}
	return 0;
}

int client_pool_preserve_post(struct rpmemctl_pool *pool,
			      const struct rpmem_preserve_range *v, size_t n,
			      uint32_t *tok)
{
	*tok = 0;
	if (!pool->xport || !pool->xport->ops->in_band)
		return client_pool_preserve(pool, v, n);
	if (!(pool->sess->caps & RPMEM_CAP_UNDO))
		return 0;
	if (n > RPMEM_MAX_PRESERVE_RANGES)
		return -EINVAL;
	int ret = preserve_send(pool, v, (uint32_t)n, tok);
	if (!ret && !*tok) {
		/* 0 says "nothing to wait for": wait for this one now */
		ret = preserve_wait(pool, 0);
	}
	return ret;
}

int client_pool_preserve_wait(struct rpmemctl_pool *pool, uint32_t tok)
{
	return tok ? preserve_wait(pool, tok) : 0;
}

/* pool_rollback -- SET_STATE consistent with RPMEM_SET_STATE_ROLLBACK */
static int pool_rollback(struct rpmemctl_pool *pool)
{
	int ret = client_pool_usable(pool);
	if (ret)
		return ret;
	if (!(pool->flags & RPMEMCTL_OPEN_RDWR)) {
		client_seterr(pool->sess, "pool '%s' is open read-only; a rollback needs it open for writing",
			      pool->name);
		return -EROFS;
	}
	if (!(pool->sess->caps & RPMEM_CAP_UNDO)) {
		client_seterr(pool->sess, "%s:%s keeps no undo journal (an older rpmemd): nothing can be rolled back",
			      pool->sess->host, pool->sess->port);
		return -ENOTSUP;
	}
	return client_send_set_state(pool, RPMEM_POOL_CONSISTENT, "",
				     RPMEM_SET_STATE_ROLLBACK, 0);
}

/* rpmemctl_pool_rollback -- undo an interrupted sync on the target */
RPMEM_EXPORT int rpmemctl_pool_rollback(struct rpmemctl_pool *pool)
{
	client_pool_begin(pool);
	return client_pool_end(pool, pool_rollback(pool), "rolling back");
}
