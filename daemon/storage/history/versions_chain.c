/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * versions_chain.c -- reading versions: open chains of version journals
 * (rpmemd_vchain_*), READ_AT's reads (their daemon-wide LRU:
 * versions_lru.c)
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guard.h"
#include "journal.h"
#include "log.h"
#include "undo.h"
#include "util.h"
#include "versions.h"
#include "versions_int.h"

void rpmemd_vchain_close(struct rpmemd_vchain **cp)
{
	struct rpmemd_vchain *c = cp ? *cp : NULL;
	if (!c)
		return;
	*cp = NULL;
	pthread_mutex_lock(&vc_reg.lock);
	if (c->loaded)
		vc_drop(c);
	pthread_mutex_unlock(&vc_reg.lock);
	free(c->u);
	free(c->tmp);
	pthread_mutex_destroy(&c->lk);
	free(c);
}

uint64_t rpmemd_vchain_gen(const struct rpmemd_vchain *c)
{
	return c->gen;
}

void rpmemd_vchain_cost(const struct rpmemd_vchain *c, uint64_t *loads,
			uint64_t *checked)
{
	pthread_mutex_lock(&vc_reg.lock);
	*loads = vc_reg.loads;
	pthread_mutex_unlock(&vc_reg.lock);
	*checked = c->checked;
}

int rpmemd_vchain_retarget(struct rpmemd_vchain *c, uint64_t gen)
{
	int ret = -ENOENT;

	/* u[] changes only under vc_reg.lock (and lk): read it under it */
	pthread_mutex_lock(&vc_reg.lock);
	if (c->loaded && gen == c->at) {
		c->use = 0;
		ret = 0;
	}
	for (size_t i = 0; c->loaded && ret && i < c->n; i++)
		if (rpmemd_undo_generation(c->u[i]) == gen) {
			c->use = i + 1;
			ret = 0;
		}
	if (!ret)
		c->gen = gen;
	pthread_mutex_unlock(&vc_reg.lock);
	return ret;
}

/*
 * vchain_load -- open into u[] the journals of l's restorable versions
 * >= c->gen, newest first; *n of them
 */
static int vchain_load(struct rpmemd_vchain *c, int metafd,
		       const struct rpmemd_meta *m, const struct vlist *l,
		       const uint8_t *ok, struct rpmemd_undo **u, size_t *n)
{
	char fn[RPMEM_NAME_MAX + 48];

	for (size_t i = l->n; i-- > 0 && l->v[i].gen >= c->gen;) {
		if (!ok[i])
			continue;
		ver_name(l->v[i].pool, l->v[i].gen, fn, sizeof(fn));
		/* a damaged one gives what checks, and -EIO for the rest */
		int ret = l->v[i].damaged ?
				  rpmemd_undo_load_salvage(metafd, fn, m->uuid,
							   m->size, l->v[i].gen,
							   &u[*n]) :
				  rpmemd_undo_load_file(metafd, fn, m->uuid,
							m->size, 0, &u[*n]);
		if (ret)
			return ret;
		(*n)++;
	}
	return 0;
}

/*
 * pool_pending -- p is pending at generation gen: an interrupted or
 * running sync's journal, bound to gen, holds every block it overwrote
 * as it was at gen (written before the block was), so the pool's image
 * with it overlaid is gen's. Not so for a dense sync into a new file, a
 * live pool, or RDMA writers (whose writes rpmemd does not journal).
 */
static int pool_pending(struct rpmemd_pool *p, const struct rpmemd_meta *m)
{
	struct rpmemd_undo *u;
	int ok;

	if (m->state != RPMEM_POOL_SYNCING || rpmemd_source_live(m->source))
		return 0;
	rpmemd_journal_lock(p);
	u = rpmemd_journal_undo(p);
	ok = u && rpmemd_undo_generation(u) == m->generation &&
	     !rpmemd_journal_swap(p) &&
	     !__atomic_load_n(&p->rdma_writers, __ATOMIC_ACQUIRE);
	rpmemd_journal_unlock(p);
	return ok;
}

/* vchain_current -- the pool is as c was opened on: state, generation */
static int vchain_current(const struct rpmemd_vchain *c,
			  const struct rpmemd_meta *m)
{
	return m->generation == c->at &&
	       m->state == (c->pending ? RPMEM_POOL_SYNCING :
					 RPMEM_POOL_CONSISTENT);
}

/*
 * vchain_fill -- (re)open the journals of chain c of pool p: -EAGAIN if
 * the pool is not consistent (or, c->pending, pending) at c->at, -ENOENT
 * if version c->gen is not on its chain; else 0 with c->lk held
 */
static int vchain_fill(struct rpmemd_pool *p, struct rpmemd_vchain *c)
{
	struct rpmemd_region *r = p->region;
	struct rpmemd_undo **u = NULL;
	struct vlist l = { 0 };
	struct rpmemd_meta m;
	uint8_t *ok = NULL;
	size_t n = 0;
	int ret = 0;

	rpmemd_pool_get_meta(p, &m);
	if (!vchain_current(c, &m))
		return -EAGAIN;
	if (r->metafd < 0) {
		if (c->gen != m.generation)
			return -ENOENT;
		vchain_install(c, NULL, 0);
		return 0;
	}
	/* under ver_lock: no prune unlinks a file between list and open */
	pthread_mutex_lock(&r->ver_lock);
	ret = pool_versions(r, p->name, &m, &l, &ok);
	if (!ret && c->gen != m.generation && !vchain_has(&l, ok, c->gen))
		ret = -ENOENT;
	if (!ret && !(u = calloc(l.n + 1, sizeof(*u))))
		ret = -ENOMEM;
	if (!ret)
		ret = vchain_load(c, r->metafd, &m, &l, ok, u, &n);
	if (!ret)
		vchain_install(c, u, n);
	pthread_mutex_unlock(&r->ver_lock);
	if (ret) {
		for (size_t i = 0; i < n; i++)
			rpmemd_undo_close(&u[i]);
		free(u);
	}
	free(l.v);
	free(ok);
	return ret;
}

/* vchain_hold -- c's journals open, c->lk held; as vchain_fill */
static int vchain_hold(struct rpmemd_pool *p, struct rpmemd_vchain *c)
{
	pthread_mutex_lock(&vc_reg.lock);
	if (c->loaded) {
		vc_front(c);
		pthread_mutex_lock(&c->lk);
		pthread_mutex_unlock(&vc_reg.lock);
		return 0;
	}
	pthread_mutex_unlock(&vc_reg.lock);
	return vchain_fill(p, c);
}

int rpmemd_vchain_open(struct rpmemd_pool *p, uint64_t gen,
		       const void *owner, struct rpmemd_vchain **out,
		       char *err, size_t errlen)
{
	struct rpmemd_vchain *c = calloc(1, sizeof(*c));
	struct rpmemd_meta m;
	int ret = c && (c->tmp = malloc(RPMEMD_UNDO_REC_MAX)) ? 0 : -ENOMEM;

	*out = NULL;
	if (ret) {
		if (c)
			free(c);
		snprintf(err, errlen, "cannot open version %llu of pool '%s': %s",
			 (unsigned long long)gen, p->name, strerror(ENOMEM));
		return ret;
	}
	pthread_mutex_init(&c->lk, NULL);
	rpmemd_pool_get_meta(p, &m);
	c->owner = owner;
	c->r = p->region;
	rpmem_strlcpy(c->pool, p->name, sizeof(c->pool));
	c->gen = gen;
	c->at = m.generation;
	c->pending = pool_pending(p, &m);
	ret = vchain_fill(p, c);
	if (!ret)
		pthread_mutex_unlock(&c->lk);
	if (ret == -EAGAIN)
		snprintf(err, errlen, "pool '%s' is %s: its versions can be read once it is consistent again",
			 p->name, rpmem_state_str(m.state));
	else if (ret == -ENOENT)
		snprintf(err, errlen, "pool '%s' has no version %llu (see rpmemctl versions)",
			 p->name, (unsigned long long)gen);
	else if (ret)
		snprintf(err, errlen, "cannot open version %llu of pool '%s': %s",
			 (unsigned long long)gen, p->name, strerror(-ret));
	if (ret)
		rpmemd_vchain_close(&c);
	*out = c;
	return ret;
}

/* a read of the pool's mapping, for the guard */
struct copy_args {
	uint8_t *dst;
	const uint8_t *src;
	uint64_t len;
};

/* copy_out -- the copy (the guard's body) */
static int copy_out(void *arg)
{
	struct copy_args *a = arg;
	memcpy(a->dst, a->src, a->len);
	return 0;
}

/*
 * pending_base -- [off, off + len) of the image of generation c->at of
 * the pending pool p into buf: the pool read and its journal overlaid,
 * together under undo_lock (no record is appended, no rollback runs in
 * between; a block being written has its record already). -EAGAIN if the
 * journal is gone (committed, rolled back) or no longer bound to c->at.
 * Taken with no chain's lock held: a commit holds undo_lock while it
 * closes the chains.
 */
static int pending_base(struct rpmemd_pool *p, struct rpmemd_vchain *c,
			uint64_t off, uint64_t len, uint8_t *buf,
			uint64_t *bad)
{
	struct copy_args a = { buf, p->addr + off, len };
	struct rpmemd_undo *u;
	uint64_t *filled = calloc((off % RPMEMD_UNDO_BS + len +
				   64ull * RPMEMD_UNDO_BS - 1) /
					  (64ull * RPMEMD_UNDO_BS) + 1,
				  sizeof(*filled));
	int ret = filled ? -EAGAIN : -ENOMEM;

	rpmemd_journal_lock(p);
	u = rpmemd_journal_undo(p);
	if (filled && u && rpmemd_undo_generation(u) == c->at &&
	    !rpmemd_journal_swap(p) && !(ret = rpmem_guard_run(copy_out, &a)))
		ret = rpmemd_undo_overlay_older(u, off, len, buf, c->tmp,
						filled, &c->checked, bad);
	rpmemd_journal_unlock(p);
	free(filled);
	return ret;
}

int rpmemd_vchain_read(struct rpmemd_pool *p, struct rpmemd_vchain *c,
		       uint64_t off, uint64_t len, uint8_t *buf, uint64_t *bad)
{
	struct copy_args a = { buf, p->addr + off, len };
	uint64_t words = (off % RPMEMD_UNDO_BS + len + 64ull * RPMEMD_UNDO_BS - 1) /
			 (64ull * RPMEMD_UNDO_BS);
	uint64_t *filled = NULL;
	struct rpmemd_meta m;
	int ret;

	if (off > p->size || len > p->size - off)
		return -EINVAL;
	rpmemd_pool_get_meta(p, &m);
	if (!vchain_current(c, &m))
		return -EAGAIN;
	c->checked = 0;
	ret = c->pending ? pending_base(p, c, off, len, buf, bad) :
			   rpmem_guard_run(copy_out, &a);
	if (ret || (ret = vchain_hold(p, c)))
		return ret;
	if (!(filled = calloc(words ? words : 1, sizeof(*filled))))
		ret = -ENOMEM;
	/*
	 * oldest first: a block's oldest copy is its image at c->gen, and
	 * a newer version's record is read (and checked) only for blocks
	 * no older one holds: a 1-byte read checks one record, not one
	 * per version
	 */
	for (size_t i = c->use; !ret && i-- > 0;)
		ret = rpmemd_undo_overlay_older(c->u[i], off, len, buf, c->tmp,
						filled, &c->checked, bad);
	pthread_mutex_unlock(&c->lk);
	free(filled);
	if (ret)
		return ret;
	/*
	 * the pool's blocks read were not written meanwhile (a pending
	 * pool's were journaled first: its journal is still the same)
	 */
	rpmemd_pool_get_meta(p, &m);
	if (!vchain_current(c, &m))
		return -EAGAIN;
	return 0;
}
