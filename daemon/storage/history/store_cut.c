/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * store_cut.c -- versions of a live pool (docs/ARCHITECTURE.md,
 * "Versions of a live pool"): a cut at a drain boundary of the writer's
 * stream keeps the open live journal as a version, moves the pool to
 * the next generation and opens a new journal, so that the stream's
 * writes copy the blocks they overwrite aside first
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "backend.h"
#include "history_int.h"
#include "journal.h"
#include "log.h"
#include "store.h"
#include "undo.h"
#include "versions.h"

void rpmemd_pool_write_begin(struct rpmemd_pool *p)
{
	struct rpmemd_pool_history *h = history_of(p);

	pthread_mutex_lock(&h->cut_lock);
	h->since_drain = 1;
}

void rpmemd_pool_write_end(struct rpmemd_pool *p)
{
	struct rpmemd_pool_history *h = history_of(p);

	pthread_mutex_unlock(&h->cut_lock);
}

/* cut_meta -- the metadata at the next generation, still live; meta_lock */
static int cut_meta(struct rpmemd_pool *p)
{
	struct rpmemd_meta m = p->meta;
	int ret;

	m.generation++;
	m.last_sync = (uint64_t)time(NULL); /* when the cut image was current */
	ret = p->region->ops->write_meta(p, m.state, m.source, &m);
	if (!ret)
		p->meta = m;
	return ret;
}

/*
 * cut_locked -- the cut; cut_lock held (no WRITE half applied), undo_lock
 * and meta_lock taken. Order for a crash: the metadata at N + 1 first (a
 * journal of N beside it is stale and removed at the next open), then
 * the journal of N kept as version N, then the new journal of N + 1 (a
 * crash before it leaves the pool live without one: its next commit
 * keeps no journal, and so version N leaves the chain, as any commit
 * that keeps none does)
 */
static int cut_locked(struct rpmemd_pool *p, char *err, size_t errlen)
{
	struct rpmemd_meta was;
	int ret = 0;

	rpmemd_journal_lock(p);
	pthread_mutex_lock(&p->meta_lock);
	was = p->meta;
	if (p->meta.state != RPMEM_POOL_SYNCING ||
	    !rpmemd_source_live(p->meta.source)) {
		snprintf(err, errlen,
			 "pool '%s' is no longer live (it is %s): nothing was cut",
			 p->name, rpmem_state_str(p->meta.state));
		ret = -EINVAL;
		goto out;
	}
	rpmemd_undo_queue_drain(p);
	if ((ret = cut_meta(p))) {
		snprintf(err, errlen, "cannot write the metadata of pool '%s': %s",
			 p->name, strerror(-ret));
		goto out;
	}
	if (rpmemd_journal_undo(p) && (ret = rpmemd_version_keep(p, &was)))
		WARN("region '%s': pool '%s': cannot keep generation %llu as a version: %s",
		     p->region->cfg.name, p->name,
		     (unsigned long long)was.generation, strerror(-ret));
	ret = rpmemd_store_undo_renew(p);
	if (ret)
		snprintf(err, errlen,
			 "pool '%s': generation %llu cut, but its journal cannot be started (the version of this cut is lost): %s",
			 p->name, (unsigned long long)p->meta.generation,
			 strerror(-ret));
	else
		INFO("region '%s': pool '%s': cut at generation %llu (live, from %s)",
		     p->region->cfg.name, p->name,
		     (unsigned long long)p->meta.generation, p->meta.source);
out:
	history_of(p)->cut_gen = p->meta.generation;
	pthread_mutex_unlock(&p->meta_lock);
	rpmemd_journal_unlock(p);
	return ret;
}

void rpmemd_pool_drained(struct rpmemd_pool *p)
{
	struct rpmemd_pool_history *h = history_of(p);
	char err[RPMEM_STR_MAX + 1];

	pthread_mutex_lock(&h->cut_lock);
	h->since_drain = 0;
	if (h->cut_want) {
		h->cut_ret = cut_locked(p, err, sizeof(err));
		if (h->cut_ret)
			WARN("region '%s': %s", p->region->cfg.name, err);
		h->cut_want = 0;
		h->cuts++;
		pthread_cond_broadcast(&h->cut_cond);
	}
	pthread_mutex_unlock(&h->cut_lock);
}

/* cut_check -- a pool that may be cut: live, written over TCP */
static int cut_check(struct rpmemd_pool *p, char *err, size_t errlen)
{
	struct rpmemd_meta m;

	rpmemd_pool_get_meta(p, &m);
	if (rpmemd_store_undo_dir(p->region) < 0) {
		snprintf(err, errlen,
			 "pool '%s' is in a devdax region: it keeps no versions",
			 p->name);
		return -ENOTSUP;
	}
	if (!p->region->cfg.versions) {
		snprintf(err, errlen,
			 "region '%s' keeps no versions (versions in rpmemd.conf): nothing would be kept of a cut of pool '%s'",
			 p->region->cfg.name, p->name);
		return -EINVAL;
	}
	if (m.state != RPMEM_POOL_SYNCING || !rpmemd_source_live(m.source)) {
		snprintf(err, errlen,
			 "pool '%s' is not live (it is %s%s%s): only a pool a live replica writes (the preload library, the replica API) is cut; %s",
			 p->name, rpmem_state_str(m.state),
			 m.source[0] ? ", from " : "", m.source,
			 m.state == RPMEM_POOL_CONSISTENT ?
				 "a consistent pool's image is kept as a version by the next sync that changes it" :
			 m.state == RPMEM_POOL_SYNCING ?
				 "an interrupted sync is a mix of two images: roll it back or sync again" :
				 "an empty pool has no image");
		return -EINVAL;
	}
	if (__atomic_load_n(&p->rdma_writers, __ATOMIC_ACQUIRE)) {
		snprintf(err, errlen,
			 "pool '%s' is written over RDMA: the target cannot see those writes to copy the blocks they overwrite aside, so it cannot cut a version; replicate it over tcp to take versions",
			 p->name);
		return -EXDEV;
	}
	return 0;
}

/* deadline -- now + ms on CLOCK_REALTIME (pthread_cond_timedwait's) */
static struct timespec deadline(unsigned ms)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	t.tv_sec += ms / 1000;
	t.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (t.tv_nsec >= 1000000000L) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000L;
	}
	return t;
}

int rpmemd_pool_cut(struct rpmemd_pool *p, unsigned wait_ms, uint64_t *gen,
		    char *err, size_t errlen)
{
	struct rpmemd_pool_history *h = history_of(p);
	struct timespec until = deadline(wait_ms);
	uint64_t mine;
	int ret;

	if ((ret = cut_check(p, err, errlen)))
		return ret;
	/* a WRITE being received holds it: one that stalls is not waited */
	if ((ret = pthread_mutex_timedlock(&h->cut_lock, &until))) {
		snprintf(err, errlen,
			 "pool '%s': its writer's WRITE has been arriving for longer than %u ms: nothing was cut; try again",
			 p->name, wait_ms);
		return ret == ETIMEDOUT ? -EBUSY : -ret;
	}
	mine = h->cuts + 1;
	if (h->since_drain) {
		/* the writer's next FLUSH or BARRIER makes it */
		h->cut_want++;
		while (h->cuts < mine &&
		       pthread_cond_timedwait(&h->cut_cond, &h->cut_lock,
					      &until) != ETIMEDOUT)
			;
	}
	if (h->cuts >= mine) {
		ret = h->cut_ret;
		if (ret)
			snprintf(err, errlen, "pool '%s': the cut failed (see rpmemd's log)",
				 p->name);
	} else {
		/* no drain came (or no writer): a request boundary */
		ret = cut_locked(p, err, errlen);
		h->cut_want = 0;
		h->cut_ret = ret;
		h->cuts++;
		pthread_cond_broadcast(&h->cut_cond);
	}
	*gen = h->cut_gen;
	pthread_mutex_unlock(&h->cut_lock);
	return ret;
}
