/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * atomic.c -- atomic syncs seen from the initiator: PRESERVE before
 * writing, and the rollback of an interrupted sync
 */
#include <errno.h>
#include <string.h>

#include "client.h"
#include "util.h"

/* preserve_one -- one PRESERVE request of n <= the maximum ranges */
static int preserve_one(struct rpmemctl_pool *pool,
			const struct rpmem_preserve_range *v, uint32_t n)
{
	struct rpmemctl_session *s = pool->sess;
	static __thread struct rpmem_msg_preserve m;
	uint8_t buf[8 + 16 * RPMEM_MAX_PRESERVE_RANGES];
	size_t rlen;

	m.handle = pool->handle;
	m.nranges = n;
	memcpy(m.ranges, v, n * sizeof(*v));
	int len = rpmem_preserve_encode(buf, sizeof(buf), &m);
	if (len < 0)
		return len;
	int ret = client_call(s, RPMEM_MSG_PRESERVE, buf, (size_t)len,
			      RPMEM_MSG_OK, &rlen);
	if (ret)
		return ret;
	return rlen ? client_bad_reply(s, RPMEM_MSG_OK) : 0;
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
		int ret = preserve_one(pool, v + i, (uint32_t)k);
		if (ret)
			return ret;
		i += k;
	}
	return 0;
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
