/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * expose.c -- a session's open pool exposed over RDMA: registration and
 * the GPSPM persist callback (lib/rdma/rdma_target.c does the RDMA)
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "rdma.h"
#include "session_int.h"
#include "store.h"
#include "util.h"

/*
 * rdma_persist -- the persist callback of an RDMA exposure (GPSPM flush),
 * called from its connection thread: persist through the pool's path and
 * count the flushed bytes (RDMA writes themselves bypass this CPU)
 */
static int rdma_persist(void *arg, uint64_t off, uint64_t len)
{
	struct rpmemd_handle *h = arg;
	struct rpmemd_session *s = h->s;

	if (h->mode != RPMEM_OPEN_RW)
		return -EROFS;
	/* bytes change only while the pool is syncing (the writes are done) */
	if (rpmemd_pool_state(h->pool) != RPMEM_POOL_SYNCING)
		return -EINVAL;
	uint64_t t0 = rpmem_now_ns();
	int ret = rpmemd_pool_persist(h->pool, off, len);
	uint64_t dt = rpmem_now_ns() - t0;
	if (ret)
		return ret;
	rpmemd_pool_count(h->pool, len, 1);
	__atomic_add_fetch(&s->bytes_written, len, __ATOMIC_RELAXED);
	__atomic_add_fetch(&s->flushes, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&s->last_flush_ns, dt, __ATOMIC_RELAXED);
	return 0;
}

/*
 * expose_pool -- expose the pool of h to this session over RDMA; fills
 * blob[*blob_len] (in: capacity). On failure, why[] says why.
 */
int expose_pool(struct rpmemd_session *s, struct rpmemd_handle *h,
		       void *blob, size_t *blob_len, char *why, size_t wlen)
{
	struct rpmemd_pool *p = h->pool;
	struct rpmem_rdma_expo_cfg cfg = {
		.addr = p->addr,
		.len = (size_t)p->size,
		.apm = p->region->cfg.direct_pmem && p->is_pmem,
		.is_pmem = p->is_pmem,
		/* READ_SRC only: the initiator can never RDMA-write it */
		.readonly = h->mode == RPMEM_OPEN_RO,
		/* the token is bound to this session's TLS (NULL: none) */
		.tls = s->conn.tls,
		.persist = rdma_persist,
		.arg = h,
	};
	unsigned long long lim;
	char sz[32];

	h->s = s;
	/* RDMA writes bypass rpmemd: no cached hash while they may come */
	if (h->mode == RPMEM_OPEN_RW && rpmemd_hcache_rdma_begin(p->hc)) {
		snprintf(why, wlen,
			 "pool '%s': its hash cache cannot be marked dirty (see rpmemd's log)",
			 p->name);
		return -EIO;
	}
	int ret = rpmem_rdma_expose(s->rdma, &cfg, blob, blob_len, &h->expo);
	if (!ret)
		return 0;
	if (h->mode == RPMEM_OPEN_RW)
		rpmemd_hcache_rdma_end(p->hc);
	if (ret == -ENOMEM && rpmem_memlock_limit(&lim))
		snprintf(why, wlen,
			 "registering pool '%s' (%s) for RDMA failed: the target's locked-memory limit is %llu bytes: raise RLIMIT_MEMLOCK: LimitMEMLOCK=infinity in rpmemd.service, or ulimit -l",
			 p->name, rpmem_fmt_size(p->size, sz, sizeof(sz)),
			 lim);
	else
		snprintf(why, wlen,
			 "registering pool '%s' (%s) for RDMA failed: %s (see rpmemd's log)",
			 p->name, rpmem_fmt_size(p->size, sz, sizeof(sz)),
			 strerror(-ret));
	return ret;
}
