/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * undo_queue.c -- a pool's journal thread: the ranges a TCP writer
 * PRESERVEd are journaled while rpmemd receives the writes before them;
 * a WRITE waits only for its own blocks (store.h, rpmemd_pool_preserve)
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "guard.h"
#include "journal.h"
#include "journal_int.h"
#include "log.h"
#include "pool_int.h"
#include "store.h"
#include "undo.h"

/* most bytes journaled between two fdatasyncs, ranges queued at once */
#define CHUNK_BYTES (8ull << 20)
#define QUEUE_MAX 4096u

struct rpmemd_undo_queue {
	pthread_t thread;
	int stop;
	struct rpmem_preserve_range *v; /* queued: v[head .. n) */
	size_t head, n, cap;
	struct rpmem_preserve_range fly[RPMEM_MAX_PRESERVE_RANGES];
	uint32_t nfly; /* being journaled now, lock not held */
	int err; /* an fdatasync failed: records may not be durable */
};

/* overlaps -- [a, a + al) and [b, b + bl) share a byte */
static int overlaps(uint64_t a, uint64_t al, uint64_t b, uint64_t bl)
{
	return a < b + bl && b < a + al;
}

int rpmemd_undo_queue_holds(const struct rpmemd_undo_queue *q, uint64_t off,
			    uint64_t len)
{
	if (!q)
		return 0;
	for (uint32_t i = 0; i < q->nfly; i++)
		if (overlaps(off, len, q->fly[i].offset, q->fly[i].len))
			return 1;
	for (size_t i = q->head; i < q->n; i++)
		if (overlaps(off, len, q->v[i].offset, q->v[i].len))
			return 1;
	return 0;
}

/*
 * take_chunk -- move up to CHUNK_BYTES of the queue's front into fly (a
 * long range is split: its rest stays queued); undo_lock held
 */
static void take_chunk(struct rpmemd_undo_queue *q)
{
	uint64_t bytes = 0;

	while (q->head < q->n && q->nfly < RPMEM_MAX_PRESERVE_RANGES &&
	       bytes < CHUNK_BYTES) {
		struct rpmem_preserve_range *r = &q->v[q->head];
		uint64_t take = r->len < CHUNK_BYTES - bytes ? r->len :
							       CHUNK_BYTES - bytes;
		q->fly[q->nfly++] = (struct rpmem_preserve_range){ r->offset,
								   take };
		bytes += take;
		r->offset += take;
		r->len -= take;
		if (!r->len)
			q->head++;
	}
	if (q->head == q->n)
		q->head = q->n = 0;
}

/* the chunk in flight, for the guard */
struct fly_args {
	struct rpmemd_pool *p;
	struct rpmemd_undo_queue *q;
};

/* save_fly -- journal the chunk in flight (the guard's body) */
static int save_fly(void *arg)
{
	struct fly_args *a = arg;
	int ret = 0;
	for (uint32_t i = 0; i < a->q->nfly && !ret; i++)
		ret = rpmemd_undo_save(journal_of(a->p)->undo, a->p->addr,
				       a->q->fly[i].offset, a->q->fly[i].len);
	return ret;
}

/*
 * worker -- journal the queue chunk by chunk, each made durable before
 * the WRITEs waiting for it go on; a failure drops the queue (its WRITEs
 * then try themselves and are refused with the reason)
 */
static void *worker(void *arg)
{
	struct rpmemd_pool *p = arg;
	struct rpmemd_pool_journal *j = journal_of(p);
	struct rpmemd_undo_queue *q = j->uq;
	struct fly_args a = { p, q };

	pthread_mutex_lock(&j->undo_lock);
	for (;;) {
		while (!q->stop && q->head == q->n)
			pthread_cond_wait(&j->undo_cond, &j->undo_lock);
		if (q->stop)
			break;
		take_chunk(q);
		pthread_mutex_unlock(&j->undo_lock);
		int ret = rpmem_guard_run(save_fly, &a);
		/* versions give way to a sync's journal: the oldest first */
		while (ret == -ENOSPC && !rpmemd_journal_reclaim(p))
			ret = rpmem_guard_run(save_fly, &a);
		/* what a failed chunk did journal must be durable too */
		int sret = rpmemd_undo_sync(j->undo);
		ret = ret ? ret : sret;
		pthread_mutex_lock(&j->undo_lock);
		q->nfly = 0;
		if (sret && !q->err)
			q->err = sret;
		if (ret) {
			WARN("region '%s': pool '%s': the journal thread cannot keep PRESERVEd blocks: %s",
			     p->region->cfg.name, p->name, strerror(-ret));
			q->head = q->n = 0;
		}
		pthread_cond_broadcast(&j->undo_cond);
	}
	pthread_mutex_unlock(&j->undo_lock);
	return NULL;
}

/* queue_start -- the pool's queue and its thread; undo_lock held */
static int queue_start(struct rpmemd_pool *p)
{
	struct rpmemd_pool_journal *j = journal_of(p);
	struct rpmemd_undo_queue *q = calloc(1, sizeof(*q));
	int ret;

	if (!q)
		return -ENOMEM;
	j->uq = q;
	if ((ret = -pthread_create(&q->thread, NULL, worker, p))) {
		j->uq = NULL;
		free(q);
	}
	return ret;
}

/* queue_add -- append a range; undo_lock held */
static int queue_add(struct rpmemd_undo_queue *q,
		     const struct rpmem_preserve_range *r)
{
	if (q->n == q->cap) {
		size_t nc = q->cap ? 2 * q->cap : 256;
		void *nv = realloc(q->v, nc * sizeof(*q->v));
		if (!nv)
			return -ENOMEM;
		q->v = nv;
		q->cap = nc;
	}
	q->v[q->n++] = *r;
	return 0;
}

int rpmemd_pool_preserve_async(struct rpmemd_pool *p,
			       const struct rpmem_preserve_range *v,
			       uint32_t n)
{
	struct rpmemd_pool_journal *j = journal_of(p);
	int ret = 0;

	pthread_mutex_lock(&j->undo_lock);
	if (j->swap) {
		/* a dense sync into a new file: each WRITE prepares its own */
		pthread_mutex_unlock(&j->undo_lock);
		return 0;
	}
	if (j->undo && !j->uq)
		ret = queue_start(p);
	for (uint32_t i = 0; !ret && j->undo && i < n; i++) {
		/* bounded: wait for the thread to take some */
		while (j->uq->n - j->uq->head >= QUEUE_MAX)
			pthread_cond_wait(&j->undo_cond, &j->undo_lock);
		if (!rpmemd_undo_covered(j->undo, v[i].offset, v[i].len))
			ret = queue_add(j->uq, &v[i]);
	}
	pthread_cond_broadcast(&j->undo_cond);
	pthread_mutex_unlock(&j->undo_lock);
	/* not queued: each WRITE then keeps its own blocks */
	return ret == -ENOMEM ? 0 : ret;
}

int rpmemd_undo_queue_err(const struct rpmemd_undo_queue *q)
{
	return q ? q->err : 0;
}

void rpmemd_undo_queue_drain(struct rpmemd_pool *p)
{
	struct rpmemd_pool_journal *j = journal_of(p);
	struct rpmemd_undo_queue *q = j->uq;
	if (!q)
		return;
	q->head = q->n = 0;
	while (q->nfly)
		pthread_cond_wait(&j->undo_cond, &j->undo_lock);
	q->err = 0; /* the journal it concerned is done with */
}

void rpmemd_undo_queue_stop(struct rpmemd_pool *p)
{
	struct rpmemd_pool_journal *j = journal_of(p);
	struct rpmemd_undo_queue *q = j->uq;
	if (!q)
		return;
	pthread_mutex_lock(&j->undo_lock);
	q->stop = 1;
	pthread_cond_broadcast(&j->undo_cond);
	pthread_mutex_unlock(&j->undo_lock);
	pthread_join(q->thread, NULL);
	free(q->v);
	free(q);
	j->uq = NULL;
}
