/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * expose.c -- a session's open pool exposed over RDMA: registration, the
 * GPSPM persist callback and the daemon-wide budget of DRAM staging copies
 * (lib/rdma/rdma_target.c does the RDMA)
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
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
 * rdma_may_write -- the RDMA side may copy bytes into the pool's mapping
 * (inline data, a staging copy's range) only while it is syncing
 */
static int rdma_may_write(void *arg)
{
	struct rpmemd_handle *h = arg;

	if (h->mode != RPMEM_OPEN_RW)
		return -EROFS;
	return rpmemd_pool_state(h->pool) == RPMEM_POOL_SYNCING ? 0 : -EINVAL;
}

/* the bytes of DRAM staging copies of every exposure of this daemon */
static pthread_mutex_t staging_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t staging_used;

#define STAGING_AUTO_CAP (4ull << 30)

uint64_t rpmemd_staging_limit(const struct rpmemd_limits *lim)
{
	if (lim->rdma_staging_max != RPMEMD_STAGING_AUTO)
		return lim->rdma_staging_max;
	long pages = sysconf(_SC_PHYS_PAGES);
	long psize = sysconf(_SC_PAGESIZE);
	if (pages <= 0 || psize <= 0)
		return STAGING_AUTO_CAP;
	uint64_t half = (uint64_t)pages * (uint64_t)psize / 2;
	return half < STAGING_AUTO_CAP ? half : STAGING_AUTO_CAP;
}

/*
 * rdma_stage -- the staging callback of an exposure: a read-only open is
 * not served from a staging copy (it would be a snapshot that other
 * sessions' writes leave behind, read while hashes come from the
 * mapping); a read-write one takes len bytes of the daemon's budget
 */
static int rdma_stage(void *arg, size_t len)
{
	struct rpmemd_handle *h = arg;
	uint64_t max = rpmemd_staging_limit(&h->s->lim), used;
	char a[RPMEM_SIZE_STR], b[RPMEM_SIZE_STR], c[RPMEM_SIZE_STR];

	if (h->mode != RPMEM_OPEN_RW)
		return -EROFS;
	pthread_mutex_lock(&staging_lock);
	used = staging_used;
	if (len > max || used > max - len) {
		pthread_mutex_unlock(&staging_lock);
		return -EDQUOT;
	}
	staging_used += len;
	pthread_mutex_unlock(&staging_lock);
	h->staged = len;
	INFO("session %u: pool %s/%s: DRAM staging copy of %s (staging in use: %s of limits.rdma_staging_max %s)",
	     h->s->id, rpmemd_pool_region(h->pool)->cfg.name,
	     rpmemd_pool_name(h->pool), rpmem_fmt_size(len, a, sizeof(a)),
	     rpmem_fmt_size(used + len, b, sizeof(b)),
	     rpmem_fmt_size(max, c, sizeof(c)));
	return 0;
}

/* staging_put -- give back the staging bytes h holds, if any */
static void staging_put(struct rpmemd_handle *h)
{
	if (!h->staged)
		return;
	pthread_mutex_lock(&staging_lock);
	staging_used -= h->staged;
	pthread_mutex_unlock(&staging_lock);
	h->staged = 0;
}

/* staging_why -- why[] for an exposure refused by rdma_stage (ret) */
static void staging_why(struct rpmemd_handle *h, int ret, char *why,
			size_t wlen)
{
	struct rpmemd_pool *p = h->pool;
	uint64_t max = rpmemd_staging_limit(&h->s->lim), used;
	const char *type =
		rpmem_region_type_str(rpmemd_pool_region(p)->cfg.type);
	char a[RPMEM_SIZE_STR], b[RPMEM_SIZE_STR], c[RPMEM_SIZE_STR];

	if (ret == -EROFS) {
		snprintf(why, wlen,
			 "pool '%s' on %s %s region needs a DRAM staging copy on this RNIC (no on-demand paging); read-only opens use tcp: --transport auto or tcp",
			 rpmemd_pool_name(p), type[0] == 'd' ? "a" : "an",
			 type);
		return;
	}
	pthread_mutex_lock(&staging_lock);
	used = staging_used;
	pthread_mutex_unlock(&staging_lock);
	snprintf(why, wlen,
		 "pool '%s' on %s %s region needs a DRAM staging copy of %s on this RNIC (no on-demand paging): with %s in use that exceeds limits.rdma_staging_max (%s) in rpmemd.conf; use --transport auto or tcp, or raise the limit",
		 rpmemd_pool_name(p), type[0] == 'd' ? "a" : "an", type,
		 rpmem_fmt_size(rpmemd_pool_size(p), a, sizeof(a)),
		 rpmem_fmt_size(used, b, sizeof(b)),
		 rpmem_fmt_size(max, c, sizeof(c)));
}

void unexpose_pool(struct rpmemd_handle *h)
{
	rpmem_rdma_unexpose(&h->expo);
	staging_put(h);
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
		.addr = rpmemd_pool_addr(p),
		.len = (size_t)rpmemd_pool_size(p),
		.apm = rpmemd_pool_region(p)->cfg.direct_pmem &&
		       rpmemd_pool_is_pmem(p),
		.is_pmem = rpmemd_pool_is_pmem(p),
		/* READ_SRC only: the initiator can never RDMA-write it */
		.readonly = h->mode == RPMEM_OPEN_RO,
		/* the token is bound to this session's TLS (NULL: none) */
		.tls = s->conn.tls,
		.persist = rdma_persist,
		.arg = h,
		.stage = rdma_stage,
		.may_write = rdma_may_write,
	};
	unsigned long long lim;
	char sz[RPMEM_SIZE_STR];

	h->s = s;
	/* RDMA writes bypass rpmemd: no cached hash while they may come */
	if (h->mode == RPMEM_OPEN_RW &&
	    rpmemd_hcache_rdma_begin(rpmemd_pool_hcache(p))) {
		snprintf(why, wlen,
			 "pool '%s': its hash cache cannot be marked dirty (see rpmemd's log)",
			 rpmemd_pool_name(p));
		return -EIO;
	}
	int ret = rpmem_rdma_expose(s->rdma, &cfg, blob, blob_len, &h->expo);
	if (!ret) {
		/* no cut of a live pool while writes bypass rpmemd */
		if (h->mode == RPMEM_OPEN_RW)
			rpmemd_pool_rdma_writer(p, 1);
		return 0;
	}
	if (h->mode == RPMEM_OPEN_RW)
		rpmemd_hcache_rdma_end(rpmemd_pool_hcache(p));
	staging_put(h); /* taken before a later step failed */
	if (ret == -EROFS || ret == -EDQUOT)
		staging_why(h, ret, why, wlen);
	else if (ret == -ENOMEM && rpmem_memlock_limit(&lim))
		snprintf(why, wlen,
			 "registering pool '%s' (%s) for RDMA failed: the target's locked-memory limit is %llu bytes: raise RLIMIT_MEMLOCK: LimitMEMLOCK=infinity in rpmemd.service, or ulimit -l",
			 rpmemd_pool_name(p),
			 rpmem_fmt_size(rpmemd_pool_size(p), sz, sizeof(sz)),
			 lim);
	else
		snprintf(why, wlen,
			 "registering pool '%s' (%s) for RDMA failed: %s (see rpmemd's log)",
			 rpmemd_pool_name(p),
			 rpmem_fmt_size(rpmemd_pool_size(p), sz, sizeof(sz)),
			 strerror(-ret));
	return ret;
}
