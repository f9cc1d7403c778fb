/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * versions_chain.c -- reading versions: open chains of version journals
 * (rpmemd_vchain_*), their daemon-wide LRU, READ_AT's reads
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "guard.h"
#include "journal.h"
#include "log.h"
#include "undo.h"
#include "util.h"
#include "versions.h"
#include "versions_int.h"

/*
 * The chains open in the daemon, most recently read first: together they
 * hold at most vc_reg.max journals open (a quarter of RLIMIT_NOFILE), and
 * the chains of one owner (a session) at most a quarter of that (its
 * share); a chain that would take its owner past its share closes that
 * owner's least recently read chains first, never another's, then the
 * least recently read of all are closed to make room for it; each is
 * reopened at its next read. A commit or a prune of a pool's version closes its pool's
 * chains (rpmemd_vchains_release), so no reader keeps a stale or pruned
 * version's file, and its space, alive. Locks: the region's ver_lock,
 * then vc_reg.lock, then a chain's lk.
 */
static struct {
	pthread_mutex_t lock;
	struct rpmemd_vchain *head; /* loaded chains, most recent first */
	size_t fds;		    /* journals they hold open */
	size_t max;		    /* 0: not known yet */
	uint64_t loads;		    /* journals loaded, since the start */
} vc_reg = { PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0, 0 };

struct rpmemd_vchain {
	struct rpmemd_vchain *prev, *next; /* in vc_reg, while loaded */
	const void *owner; /* the session reading it: its share is bounded */
	struct rpmemd_region *r;
	char pool[RPMEM_NAME_MAX + 1];
	uint64_t gen;	 /* the version */
	uint64_t at;	 /* the pool's generation it reads from */
	uint64_t loads;	 /* journals loaded, reloads included */
	uint64_t checked; /* bytes of records its last read checked */
	int pending;	  /* reads a pending pool: its journal overlaid too */
	pthread_mutex_t lk; /* held while u[] is read, or closed */
	int loaded;	    /* u[] open (changed under vc_reg.lock and lk) */
	struct rpmemd_undo **u; /* newest first */
	size_t n;
	size_t use; /* of u[], from u[0]: the versions >= gen */
	uint8_t *tmp; /* a record's data */
};

/* vc_max -- the journals all chains may hold open together */
static size_t vc_max(void)
{
	struct rlimit rl;

	if (!vc_reg.max) {
		rlim_t n = getrlimit(RLIMIT_NOFILE, &rl) ? 1024 : rl.rlim_cur;
		if (n == RLIM_INFINITY || n > (1u << 20))
			n = 1u << 20;
		vc_reg.max = n / 4 > 16 ? (size_t)(n / 4) : 16;
	}
	return vc_reg.max;
}

/* vc_share -- the journals the chains of one owner may hold open */
static size_t vc_share(void)
{
	size_t max = vc_max();

	return max / 4 > 16 ? max / 4 : (max < 16 ? max : 16);
}

/* vc_owner_fds -- the journals owner's chains hold open; vc_reg.lock */
static size_t vc_owner_fds(const void *owner)
{
	size_t n = 0;

	for (struct rpmemd_vchain *t = vc_reg.head; t; t = t->next)
		if (t->owner == owner)
			n += t->n;
	return n;
}

/* vc_unlink -- take c out of vc_reg's list; vc_reg.lock held */
static void vc_unlink(struct rpmemd_vchain *c)
{
	if (c->prev)
		c->prev->next = c->next;
	else if (vc_reg.head == c)
		vc_reg.head = c->next;
	if (c->next)
		c->next->prev = c->prev;
	c->prev = c->next = NULL;
}

/* vc_front -- c becomes the most recently read; vc_reg.lock held */
static void vc_front(struct rpmemd_vchain *c)
{
	vc_unlink(c);
	c->next = vc_reg.head;
	if (c->next)
		c->next->prev = c;
	vc_reg.head = c;
}

/* vc_drop -- close c's journals (reopened at its next read); vc_reg.lock */
static void vc_drop(struct rpmemd_vchain *c)
{
	pthread_mutex_lock(&c->lk); /* a read of it under way ends first */
	for (size_t i = 0; i < c->n; i++)
		rpmemd_undo_close(&c->u[i]);
	vc_reg.fds -= c->n;
	c->n = 0;
	c->use = 0;
	c->loaded = 0;
	pthread_mutex_unlock(&c->lk);
	vc_unlink(c);
}

/* vc_tail -- the least recently read chain; vc_reg.lock held */
static struct rpmemd_vchain *vc_tail(void)
{
	struct rpmemd_vchain *t = vc_reg.head;

	while (t && t->next)
		t = t->next;
	return t;
}

/*
 * vc_make_room -- room for need more journals of c: c's owner's least
 * recently read chains but c closed to keep it within its share, then
 * the least recently read of all but c for the daemon's bound
 */
static void vc_make_room(struct rpmemd_vchain *c, size_t need)
{
	size_t max = vc_max(), share = vc_share();
	size_t own = vc_owner_fds(c->owner);
	struct rpmemd_vchain *t, *prev;

	for (t = vc_tail(); t && own + need > share; t = prev) {
		prev = t->prev;
		if (t == c || t->owner != c->owner)
			continue;
		DBG("pool '%s': version %llu's chain closed (%zu journals): its session's chains hold %zu of its share of %zu",
		    t->pool, (unsigned long long)t->gen, t->n, own, share);
		own -= t->n;
		vc_drop(t);
	}
	for (t = vc_tail(); t && vc_reg.fds + need > max; t = prev) {
		prev = t->prev;
		if (t == c)
			continue;
		DBG("pool '%s': version %llu's chain closed (%zu journals): the chains hold %zu of %zu",
		    t->pool, (unsigned long long)t->gen, t->n, vc_reg.fds,
		    max);
		vc_drop(t);
	}
}

void rpmemd_vchains_release(int metafd, const char *pool)
{
	pthread_mutex_lock(&vc_reg.lock);
	for (struct rpmemd_vchain *c = vc_reg.head, *next; c; c = next) {
		next = c->next;
		if (c->r->metafd == metafd && !strcmp(c->pool, pool))
			vc_drop(c);
	}
	pthread_mutex_unlock(&vc_reg.lock);
}

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

/* vchain_has -- l has restorable version gen */
int vchain_has(const struct vlist *l, const uint8_t *ok, uint64_t gen)
{
	for (size_t i = 0; i < l->n; i++)
		if (ok[i] && l->v[i].gen == gen)
			return 1;
	return 0;
}

/* vchain_install -- c's journals are u[n]: in vc_reg, c->lk held after */
static void vchain_install(struct rpmemd_vchain *c, struct rpmemd_undo **u,
			   size_t n)
{
	pthread_mutex_lock(&vc_reg.lock);
	vc_make_room(c, n);
	pthread_mutex_lock(&c->lk);
	free(c->u);
	c->u = u;
	c->n = n;
	c->use = n;
	c->loaded = 1;
	c->loads += n;
	vc_reg.loads += n;
	vc_reg.fds += n;
	vc_front(c);
	pthread_mutex_unlock(&vc_reg.lock);
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
